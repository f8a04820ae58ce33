"""A sparse gradient (an Embedding with sparse=True) given to each optimizer: refused in
PyTorch's words by the algorithms with no sparse update, stepped by the others."""

import warnings

import pytest
import torch

import ember

from helpers import assert_ulp, torch_sqrt_off

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


def _adagrad(lib, **kw):
    lib.manual_seed(0)
    e = lib.nn.Embedding(4, 2, sparse=True)
    opt = lib.optim.Adagrad(e.parameters(), lr=0.1, **kw)
    for _ in range(3):
        opt.zero_grad()
        e(lib.tensor([1, 1, 2])).pow(2).sum().backward()
        opt.step()
    return e.weight.detach(), opt.state[e.weight]["sum"]


@pytest.mark.parametrize("kw", [{}, {"lr_decay": 0.01}, {"maximize": True}],
                         ids=["plain", "lr_decay", "maximize"])
def test_adagrad_steps_only_the_rows_a_sparse_gradient_holds(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (we, se), (wt, st) = _adagrad(ember, **kw), _adagrad(torch, **kw)
    # exact: the same elementwise operations in the same order on the same rows, where
    # torch's vectorised sqrt is IEEE's (else an ulp a step where it is not)
    assert se.tolist() == st.tolist()
    if torch_sqrt_off("float32") < 0.01:
        assert we.tolist() == wt.tolist()
    else:
        assert_ulp(we, wt, 4, "torch's vectorised sqrt, off IEEE's on this CPU")


def test_adagrad_refuses_weight_decay_with_a_sparse_gradient():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _adagrad(lib, weight_decay=0.1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
