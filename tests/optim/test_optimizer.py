"""Argument checks every optimizer shares (optim/optimizer.py's `one_element_lr`) and Adam's
betas, against torch: the same exception type and message, in torch's order."""

import pytest
import torch

import ember

ALL = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta",
       "Rprop", "ASGD", "SparseAdam", "LBFGS"]


def _message(L, name, **kw):
    try:
        getattr(L.optim, name)([L.nn.Parameter(L.ones(2))], **kw)
    except Exception as e:  # noqa: BLE001 - compared with torch's below
        return type(e).__name__, str(e)
    return None


def _to_ember(v):
    if isinstance(v, torch.Tensor):
        return ember.tensor(v.tolist())
    return tuple(_to_ember(x) for x in v) if isinstance(v, tuple) else v


def same(name, **kw):
    kw_e = {k: _to_ember(v) for k, v in kw.items()}
    got, want = _message(ember, name, **kw_e), _message(torch, name, **kw)
    assert got == want


@pytest.mark.parametrize("name", ALL)
def test_a_tensor_learning_rate_must_hold_one_number(name):
    # checked first (ember used to compare the tensor with 0 and raise "Boolean value of
    # Tensor with more than one value is ambiguous")
    same(name, lr=torch.tensor([0.1, 0.2]))
    same(name, lr=torch.tensor([[]]))


@pytest.mark.parametrize("name", ALL)
def test_a_one_element_tensor_learning_rate_is_accepted(name):
    if name == "SparseAdam":
        pytest.skip("(SparseAdam refuses dense parameters in both: not the lr's business)")
    assert _message(ember, name, lr=ember.tensor([0.1])) == \
        _message(torch, name, lr=torch.tensor([0.1]))


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("betas", [
    (torch.tensor(0.9), 0.99), (0.9, torch.tensor(0.99)), (0, 0.99), (0.9, 1),
    (torch.tensor([0.9, 0.8]), torch.tensor(0.99)), (torch.tensor(0.9), torch.ones(2)),
], ids=["tensor_float", "float_tensor", "int_first", "int_second", "long_first",
        "long_second"])
def test_adam_betas_both_floats_or_both_one_element_tensors(name, betas):
    same(name, betas=betas)


def test_adam_tensor_betas_with_foreach_refused():
    same("Adam", betas=(torch.tensor(0.9), torch.tensor(0.99)), foreach=True)
    same("Adam", betas=(torch.tensor(0.9), torch.tensor(0.99)), foreach=True, capturable=True)
