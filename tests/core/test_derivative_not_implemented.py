"""Ops PyTorch has no derivative formula for (`derivative_not_implemented`): their float
outputs still require grad under a `NotImplemented` node with one edge per input requiring
grad, the backward through it raises PyTorch's RuntimeError, and forward-mode AD refuses the
op. Compared with torch: the node, its edges, the printed tensor and both errors."""

import re

import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")

OPS = {
    "heaviside": lambda m, w: m.heaviside(w, w.detach()[:1].expand(4)),
    "heaviside both": lambda m, w: m.heaviside(w, w),
    "histogram": lambda m, w: m.histogram(w, bins=3)[0],
    "histogram bin_edges": lambda m, w: m.histogram(w, bins=3)[1],
    "histogram weight": lambda m, w: m.histogram(w.detach(), bins=2, weight=w)[0],
    "number % tensor": lambda m, w: 3.0 % w,
    "bincount weights": lambda m, w: m.bincount(m.tensor([0, 1, 1, 3]), weights=w),
    "floor_divide": lambda m, w: m.floor_divide(w, 2.0),
    "tensor // tensor": lambda m, w: w // (w.detach() + 5),
    # in-place forms: PyTorch's refusal names the in-place overload (aten::floor_divide_)
    "floor_divide_": lambda m, w: w.clone().floor_divide_(2.0),
    "heaviside_": lambda m, w: w.clone().heaviside_(w.detach()),
    "fmod_ via //=": lambda m, w: _ifloordiv(w.clone(), 3.0),
    # scatter's deprecated reduce= overloads (aten::scatter.reduce / .value_reduce)
    "scatter reduce=add": lambda m, w: w.clone().scatter(0, m.tensor([0, 0]), w[1:3],
                                                         reduce="add"),
    "scatter_ reduce=multiply": lambda m, w: w.clone().scatter_(0, m.tensor([1, 3]), 2.0,
                                                                reduce="multiply"),
}


def _ifloordiv(t, v):
    t //= v
    return t


def _node(m, op):
    w = m.tensor([0.25, -1.0, 0.0, 2.5], requires_grad=True)
    y = op(m, w)
    node = y.grad_fn
    edges = [type(f).__name__ if f is not None else None for f, _ in node.next_functions]
    printed = re.sub(" at 0x[0-9a-f]+", "", repr(y))
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    return (type(node).__name__, node.name(), edges, y.requires_grad, printed, str(err.value))


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_node_edges_and_backward_error_match_torch(op):
    assert _node(ember, op) == _node(torch, op)


def _forward_ad_refusal(m, op, values) -> str:
    """The NotImplementedError forward mode raises for `op` on a dual tensor of `values`."""
    fwd = m.autograd.forward_ad
    with fwd.dual_level(), pytest.raises(NotImplementedError) as err:
        op(m, fwd.make_dual(m.tensor(values), m.ones(len(values))))
    return str(err.value)


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_forward_ad_refuses_like_torch(op):
    values = [0.25, -1.0, 0.0, 2.5]
    assert _forward_ad_refusal(ember, op, values) == _forward_ad_refusal(torch, op, values)


def test_without_grad_nothing_is_recorded():
    for m in (ember, torch):
        w = m.tensor([0.25, -1.0, 0.0, 2.5], requires_grad=True)
        with m.no_grad():
            assert m.heaviside(w, w).grad_fn is None
        assert not m.histogram(w.detach(), bins=2)[0].requires_grad


# unique and unique_consecutive: PyTorch names the node after the ATen op and both modes
# raise NotImplementedError ("the derivative for '_unique2' is not implemented.")
UNDEFINED = {
    "unique": lambda m, w: m.unique(w),
    "unique counts": lambda m, w: m.unique(w, return_inverse=True, return_counts=True)[0],
    "unique dim": lambda m, w: m.unique(w.reshape(2, 2), dim=1),
    "unique_consecutive": lambda m, w: m.unique_consecutive(w),
    "unique_consecutive dim": lambda m, w: m.unique_consecutive(w.reshape(2, 2), dim=0),
    "method": lambda m, w: w.unique(sorted=False),
}


def _undefined(m, op):
    w = m.tensor([0.25, -1.0, 0.25, 2.5], requires_grad=True)
    y = op(m, w)
    printed = re.sub(" at 0x[0-9a-f]+", "", repr(y))
    with pytest.raises(NotImplementedError) as err:
        y.sum().backward()
    return type(y.grad_fn).__name__, y.grad_fn.name(), printed, str(err.value)


@pytest.mark.parametrize("op", UNDEFINED.values(), ids=UNDEFINED.keys())
def test_unique_records_torchs_node_and_refuses_both_modes(op):
    assert _undefined(ember, op) == _undefined(torch, op)
    values = [0.25, -1.0, 0.25, 2.5]
    assert _forward_ad_refusal(ember, op, values) == _forward_ad_refusal(torch, op, values)


def test_unique_of_integers_or_without_grad_records_nothing():
    for m in (ember, torch):
        assert not m.unique(m.tensor([3, 1, 3])).requires_grad
        with m.no_grad():
            assert m.unique(m.ones(3, requires_grad=True)).grad_fn is None
