"""A sparse gradient (an Embedding with sparse=True) given to each optimizer: refused in
PyTorch's words by the algorithms with no sparse update, stepped by the others."""

import warnings

import pytest
import torch

import ember

REFUSING = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adadelta", "ASGD",
            "Rprop"]


def _step(lib, name: str, foreach):
    lib.manual_seed(0)
    e = lib.nn.Embedding(4, 2, sparse=True)
    kw = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(lib.optim, name)(e.parameters(), lr=0.1, foreach=foreach, **kw)
    e(lib.tensor([1, 1, 2])).sum().backward()
    opt.step()
    return e.weight.detach()


@pytest.mark.parametrize("foreach", [None, True], ids=["default", "foreach"])
@pytest.mark.parametrize("name", REFUSING)
def test_an_algorithm_without_a_sparse_update_refuses_in_torchs_words(name, foreach):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            _step(lib, name, foreach)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_sgd_with_momentum_steps_on_a_sparse_gradient():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _step(ember, "SGD", None).tolist() == _step(torch, "SGD", None).tolist()
