"""Winograd F(2x2, 3x3) convolutions: the forward, the input gradient (a forward of the
flipped kernel) and the weight gradient against torch, over odd sizes, paddings, float
types, batch chunks and threads; a case worked by hand; non-finite inputs; and gradients
of gradients by finite differences."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import native
from ember.ops import _conv_kernels, _parallel, _winograd
from ember.ops import conv as C

from helpers import check_op, rand_array

TOL = {"rtol": 1e-4, "atol": 1e-4}


@pytest.fixture(params=["channels last", "channels first"])
def calls(monkeypatch, request):
    """Route every 3x3 stride-1 convolution of 4 or more channels through the NumPy
    kernels' Winograd, in each layout, and count the forwards and weight gradients it
    computes (native kernels off: these are the NumPy kernels' tests)."""
    monkeypatch.setattr(_winograd, "MIN_MEAN_CHANNELS", 4)
    monkeypatch.setattr(_winograd, "FIRST_MIN_TILES",
                        1 if request.param == "channels first" else 10**9)
    seen = {"forward": 0, "weight_grad": 0}
    for name in seen:
        def spy(*args, _fn=getattr(_winograd, name), _name=name):
            seen[_name] += 1
            return _fn(*args)
        monkeypatch.setattr(_winograd, name, spy)
    with native.use("numpy"):
        yield seen


@pytest.mark.parametrize("x_shape, w_shape, padding, dtype, forwards", [
    ((2, 4, 8, 8), (6, 4, 3, 3), 1, np.float32, 2),  # even output: whole tiles
    ((3, 5, 7, 9), (4, 5, 3, 3), 1, np.float32, 2),  # odd output: a half tile dropped
    ((2, 6, 9, 6), (5, 6, 3, 3), 0, np.float32, 2),  # valid: dx pads gy by 2
    ((2, 4, 5, 6), (4, 4, 3, 3), 2, np.float64, 2),  # padding past the kernel's reach
    ((1, 4, 1, 1), (4, 4, 3, 3), 1, np.float32, 2),  # one pixel: one tile, 3/4 dropped
], ids=str)
def test_matches_torch(calls, x_shape, w_shape, padding, dtype, forwards):
    """`forwards`: the forward, and the input gradient where it is a full convolution."""
    check_op(lambda x, w: C.conv2d(x, w, padding=padding),
             lambda x, w: TF.conv2d(x, w, padding=padding),
             rand_array(x_shape, dtype=dtype), rand_array(w_shape, seed=1, dtype=dtype),
             **TOL)
    assert calls == {"forward": forwards, "weight_grad": 1}


@pytest.mark.parametrize("padding", [((2, 1), (0, 1)), ((0, 2), (1, 0))], ids=str)
def test_asymmetric_padding_matches_torch(calls, padding):
    """Unequal padding before and after (as the input gradient's full convolution has),
    against torch on the input padded beforehand."""
    x, w = rand_array((3, 4, 6, 7)), rand_array((5, 4, 3, 3), seed=1)
    geo = _conv_kernels.geometry(x.shape, (3, 3), (1, 1), padding, (1, 1), 1)
    xt = torch.tensor(np.pad(x, ((0, 0), (0, 0)) + padding), requires_grad=True)
    y = TF.conv2d(xt, wt := torch.tensor(w, requires_grad=True))
    gy = rand_array(tuple(y.shape), seed=2)
    y.backward(torch.tensor(gy))
    np.testing.assert_allclose(_conv_kernels.forward(x, w, geo), y.detach().numpy(), **TOL)
    np.testing.assert_allclose(_conv_kernels.weight_grad(x, gy, geo, w.shape),
                               wt.grad.numpy(), **TOL)
    assert calls == {"forward": 1, "weight_grad": 1}


@pytest.mark.parametrize("chunk_bytes", [1, 1 << 16])
def test_batch_chunks_and_threads_match_torch(calls, monkeypatch, chunk_bytes):
    """One-sample and larger chunks, shared out to two kernel threads; the weight
    gradient's per-thread partial sums are added."""
    monkeypatch.setattr(_parallel, "BATCH_CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(_parallel, "SMALL_PRODUCT", 0)
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        check_op(lambda x, w: C.conv2d(x, w, padding=1),
                 lambda x, w: TF.conv2d(x, w, padding=1),
                 rand_array((9, 8, 10, 6)), rand_array((12, 8, 3, 3), seed=1), **TOL)
    finally:
        ember.set_num_threads(threads)
    assert calls["weight_grad"] == 1


def test_worked_by_hand(calls):
    """Ones over ones: each output of a valid 3x3 convolution sums 9 taps over C channels,
    and each weight's gradient sums the 2x2 outputs' unit gradients times ones over the
    batch: 4 N."""
    x = ember.ones(3, 4, 4, 4)
    w = ember.ones(5, 4, 3, 3, requires_grad=True)
    y = C.conv2d(x, w)
    y.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), np.full((3, 5, 2, 2), 36.0, np.float32))
    np.testing.assert_array_equal(w.grad.numpy(), np.full((5, 4, 3, 3), 12.0, np.float32))
    assert calls == {"forward": 1, "weight_grad": 1}


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_non_finite_input_matches_torch(calls, value):
    """A tile's transform mixes its inputs, so inf - inf would give NaN where the direct
    sum gives inf: such a result is redone by the direct path."""
    x = rand_array((2, 4, 6, 6))
    x[1, 2, 3, 1] = value
    w = rand_array((4, 4, 3, 3), seed=1)
    got = C.conv2d(ember.tensor(x), ember.tensor(w), padding=1).numpy()
    want = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(got, want, **TOL)  # (NaN and inf where torch has them)
    assert calls["forward"] == 1


def test_gradients_of_gradients(calls):
    """Double backward runs the transposed and weight-gradient convolutions through the
    same path: the gradients of x's gradient, in float64, against torch's."""
    x, w = rand_array((2, 4, 5, 5), dtype=np.float64), rand_array((4, 4, 3, 3), seed=1,
                                                                  dtype=np.float64)
    r = rand_array((2, 4, 5, 5), seed=2, dtype=np.float64)
    grads = []
    for lib, conv in ((ember, C.conv2d), (torch, TF.conv2d)):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        (gx,) = lib.autograd.grad(conv(xs, ws, padding=1).square().sum(), xs,
                                  create_graph=True)
        (gx * lib.tensor(r)).sum().backward()
        grads.append([xs.grad.numpy(), ws.grad.numpy()])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert calls["weight_grad"] >= 2
