"""The convolution's backward given a broadcast output gradient (`y.sum()`, `y.mean()`, a
weighting broadcast over the batch): both products read one contiguous copy of it, made
once, and the gradients are PyTorch's."""

import numpy as np
import pytest
import torch

import ember
from ember.ops import conv as C

rng = np.random.default_rng(7)


def _grads(lib, x, w, b, reduce):
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    y = lib.nn.functional.conv2d(xt, wt, bt, padding=1)
    reduce(lib, y).backward()
    return [t.grad.numpy() for t in (xt, wt, bt) if t is not None]


REDUCTIONS = {
    "sum": lambda lib, y: y.sum(),
    "mean": lambda lib, y: y.mean(),
    "over the batch": lambda lib, y: (y * lib.arange(y.shape[1] * y.shape[2] * y.shape[3],
                                                     dtype=y.dtype).reshape(y.shape[1:])).sum(),
}


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("k", [1, 3])
def test_broadcast_gradient_matches_torch(reduce, bias, k):
    x = rng.standard_normal((3, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 4, k, k)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32) if bias else None
    got = _grads(ember, x, w, b, REDUCTIONS[reduce])
    want = _grads(torch, x, w, b, REDUCTIONS[reduce])
    for g, t in zip(got, want):
        # (float32 BLAS products on each side, summed in other orders: a few units of the
        # largest term's last place, which cancellation can leave on a small entry)
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-5 * np.abs(t).max())


def test_both_products_read_one_contiguous_copy(monkeypatch):
    seen = []
    real = C.apply

    def spy(prim, *args, **params):
        if prim in (C.conv_input_grad_p, C.conv_weight_grad_p):
            g = args[0] if prim is C.conv_input_grad_p else args[1]
            seen.append((g.is_contiguous(), g.untyped_storage().data_ptr()))
        return real(prim, *args, **params)

    monkeypatch.setattr(C, "apply", spy)
    x = ember.randn(2, 3, 5, 5, requires_grad=True)
    w = ember.randn(4, 3, 1, 1, requires_grad=True)
    ember.nn.functional.conv2d(x, w).sum().backward()
    assert len(seen) == 2 and all(c for c, _ in seen) and seen[0][1] == seen[1][1]


def test_double_backward_when_one_operand_needs_grad():
    # PyTorch's convolution_backward takes the input and the weight, so a create_graph
    # gradient requires grad when either does (ConvolutionBackwardBackward0); differentiated
    # again it leaves the other undefined: None with allow_unused, as torch
    from helpers import check_double_backward

    rs = np.random.RandomState(3)
    cases = []
    for nd in (1, 2, 3):
        w, wt = rs.standard_normal((2, 3) + (2,) * nd), rs.standard_normal((3, 2) + (2,) * nd)
        x, b = rs.standard_normal((1, 3) + (4,) * nd), rs.standard_normal(2)
        conv = f"conv{nd}d"
        convt = f"conv_transpose{nd}d"
        cases += [
            (f"{conv} input", lambda M, v, w=w, f=conv, s=1 + (nd > 1): getattr(
                M.nn.functional, f)(v, M.tensor(w), stride=s), (1, 3) + (5,) * nd, True),
            (f"{conv} weight", lambda M, v, x=x, f=conv: getattr(M.nn.functional, f)(
                M.tensor(x), v, padding=1), (2, 3) + (2,) * nd, True),
            (f"{conv} input, bias", lambda M, v, w=w, b=b, f=conv: getattr(
                M.nn.functional, f)(v, M.tensor(w), M.tensor(b)), (1, 3) + (4,) * nd, True),
            (f"{convt} input", lambda M, v, w=wt, f=convt: getattr(M.nn.functional, f)(
                v, M.tensor(w), stride=2), (1, 3) + (3,) * nd, True),
            (f"{convt} weight", lambda M, v, x=x, f=convt: getattr(M.nn.functional, f)(
                M.tensor(x), v), (3, 2) + (2,) * nd, True),
        ]
    check_double_backward(cases)


def test_double_backward_unused_input_and_first_order_graph():
    # the second gradient is undefined: without allow_unused autograd.grad refuses, with
    # backward() x.grad stays None; without create_graph nothing is tied
    w = np.random.RandomState(0).standard_normal((2, 3, 3, 3))
    for M in (torch, ember):
        x = M.ones(1, 3, 5, 5, dtype=M.float64, requires_grad=True)
        g, = M.autograd.grad(M.nn.functional.conv2d(x, M.tensor(w)).sum(), x,
                             create_graph=True)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            M.autograd.grad(g.sum(), x, retain_graph=True)
        g.sum().backward()
        assert x.grad is None
        g, = M.autograd.grad(M.nn.functional.conv2d(x, M.tensor(w)).sum(), x)
        assert not g.requires_grad and g.grad_fn is None
