"""Batch norm in training against PyTorch's kernels: the running statistics it leaves, the
channels-last row kernel, 16-bit inputs beside float or 16-bit parameters, and the backward.

PyTorch updates a running mean as m * mean + (1 - m) * old in the buffer's dtype, and a
running variance from the rounded sum of squared deviations: (sum / (count - 1)) rounded,
times m, plus the rounded (1 - m) * old, that sum in double (in float for a 16-bit input).
These are scalar loops, the same on every CPU; the batch statistics under them are sums in
double (or per-thread float32 rows, added in double), which only a change of order in a
double sum could move by a float32 ulp: bitwise where torch runs its vectorised kernels, a
stated ulp bound otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import TORCH_VECTOR_KERNELS, assert_ulp, rand_array


def _modules(c: int, dims: int, momentum: float, dtype: str = "float32"):
    cls = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d", 5: "BatchNorm3d"}[dims]
    tm = getattr(torch.nn, cls)(c, momentum=momentum).to(getattr(torch, dtype))
    em = getattr(ember.nn, cls)(c, momentum=momentum).to(getattr(ember, dtype))
    with torch.no_grad(), ember.no_grad():  # the same non-trivial buffers and parameters
        for name, seed in (("running_mean", 1), ("running_var", 2), ("weight", 3),
                           ("bias", 4)):
            v = rand_array((c,), seed=seed, low=0.5, high=1.5)
            getattr(tm, name).copy_(torch.tensor(v))
            getattr(em, name).copy_(ember.tensor(v))
    return tm, em


def _same(got, want, why: str, ulps: int = 2) -> None:
    got, want = got.detach().float().numpy(), want.detach().float().numpy()
    if TORCH_VECTOR_KERNELS:
        np.testing.assert_array_equal(got, want)
    else:
        assert_ulp(got, want, ulps, why)


def _steps(tm, em, shape, dtype="float32", channels_last=False, steps=3):
    """`steps` training batches through both modules; the last outputs."""
    for i in range(steps):
        x = rand_array(shape, seed=10 + i, low=-2, high=4)
        xt, xe = torch.tensor(x).to(getattr(torch, dtype)), ember.tensor(x).to(
            getattr(ember, dtype))
        if channels_last:
            fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
            xt = xt.contiguous(memory_format=fmt)
            xe = xe.contiguous(memory_format=getattr(ember, str(fmt).split(".")[1]))
        want, got = tm(xt), em(xe)
    return got, want


@pytest.mark.parametrize("momentum", [0.1, 0.37])
@pytest.mark.parametrize("shape", [(16, 12, 5, 5), (32, 7, 9), (2, 3, 4, 4, 4)], ids=str)
def test_running_statistics_are_torchs_bits(shape, momentum):
    tm, em = _modules(shape[1], len(shape), momentum)
    _steps(tm, em, shape)
    why = "torch's scalar build may sum the batch statistics in another double order"
    _same(em.running_mean, tm.running_mean, why)
    _same(em.running_var, tm.running_var, why)
    assert int(em.num_batches_tracked) == int(tm.num_batches_tracked) == 3


@pytest.mark.parametrize("threads", [1, 2])
def test_running_statistics_of_rows_are_torchs_bits_at_the_same_thread_count(threads):
    tm, em = _modules(33, 2, 0.1)
    old = torch.get_num_threads(), ember.get_num_threads()
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    try:
        _steps(tm, em, (64, 33))
    finally:
        torch.set_num_threads(old[0])
        ember.set_num_threads(old[1])
    why = "torch's scalar build rounds the squares' multiply-adds twice"
    _same(em.running_mean, tm.running_mean, why)
    _same(em.running_var, tm.running_var, why)


def test_cumulative_average_momentum_none_is_torchs_bits():
    tm, em = _modules(6, 4, 0.1)
    tm.momentum = em.momentum = None
    _steps(tm, em, (8, 6, 3, 3), steps=4)
    why = "torch's scalar build may sum the batch statistics in another double order"
    _same(em.running_mean, tm.running_mean, why)
    _same(em.running_var, tm.running_var, why)


@pytest.mark.parametrize("shape", [(8, 12, 5, 5), (4, 5, 3, 4, 6)], ids=str)
def test_channels_last_input_takes_torchs_row_kernel_and_layout(shape):
    """PyTorch normalises a channels-last input over (N * H * W, C) rows (the (N, C)
    kernel: per-thread float32 row sums added in double) and returns channels-last."""
    tm, em = _modules(shape[1], len(shape), 0.1)
    got, want = _steps(tm, em, shape, channels_last=True)
    assert got.stride() == want.stride()
    why = "torch's scalar build rounds the multiply-adds twice"
    _same(got, want, why, ulps=8)
    _same(em.running_mean, tm.running_mean, why)
    _same(em.running_var, tm.running_var, why)
    (got.square().sum()).backward()
    (want.square().sum()).backward()
    assert_ulp(em.weight.grad.numpy(), tm.weight.grad.numpy(), 64,
               "the gradient sums run in another order than torch's")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(64, 40), (16, 24, 5, 5)], ids=str)
def test_16_bit_input_beside_float_parameters_keeps_float_statistics(shape, dtype):
    """A 16-bit input into a float32 module (autocast's convolutions feed batch norm so):
    PyTorch keeps the batch statistics in float, so the running buffers move by float
    amounts, not by 16-bit-rounded ones; the output is rounded once to the input's type."""
    tm, em = _modules(shape[1], len(shape), 0.1)
    got, want = _steps(tm, em, shape, dtype=dtype)
    assert got.dtype == getattr(ember, dtype) and em.running_mean.dtype == ember.float32
    if dtype == "float16":  # a few elements sit on a rounding boundary of torch's rstd
        assert_ulp(got.detach().numpy(), want.detach().numpy(), 1,
                   "PyTorch's float16 batch statistics round once more than ember's")
    else:
        np.testing.assert_array_equal(got.detach().float().numpy(),
                                      want.detach().float().numpy())
    # the batch sums of a 16-bit input run in float in torch's vectorised kernel (its order
    # depends on the vector width); ember sums in double: within a float32 ulp or two
    assert_ulp(em.running_mean.numpy(), tm.running_mean.numpy(), 2,
               "torch sums 16-bit inputs in float lanes")
    assert_ulp(em.running_var.numpy(), tm.running_var.numpy(), 2,
               "torch sums 16-bit inputs in float lanes")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(64, 40), (16, 24, 5, 5), (8, 3, 33)], ids=str)
def test_16_bit_module_rounds_its_statistics_as_torch(shape, dtype):
    """A 16-bit module. bfloat16: PyTorch holds mean, variance sum and 1/std in bfloat16 and
    forms the scale and shift from those, in float (the shift not fused). float16: it keeps
    the batch mean and variance sum in float (the running buffers move by float amounts,
    1/std comes from the float variance) and normalises with the mean and 1/std rounded to
    float16; ember rounded float16's variance sum first (a third of a (2, 3, 9, 9) batch's
    outputs an ulp off, the running buffers moved by float16-rounded products)."""
    d = getattr(ember, dtype)
    tm, em = _modules(shape[1], len(shape), 0.1, dtype)
    got, want = _steps(tm, em, shape, dtype=dtype)
    assert got.dtype == em.running_var.dtype == d
    _same(got, want, "torch's scalar build rounds the multiply-add twice")
    np.testing.assert_array_equal(em.running_mean.float().numpy(),
                                  tm.running_mean.float().numpy())
    np.testing.assert_array_equal(em.running_var.float().numpy(),
                                  tm.running_var.float().numpy())
    g = rand_array(shape, seed=7)
    xs = [lib.tensor(rand_array(shape, seed=8)).to(getattr(lib, dtype)).requires_grad_()
          for lib in (torch, ember)]
    for m, x, lib in ((tm, xs[0], torch), (em, xs[1], ember)):
        m(x).backward(lib.tensor(g).to(getattr(lib, dtype)))
    _same(xs[1].grad, xs[0].grad, "torch's scalar build rounds the multiply-add twice")


def _backward_both(shape, affine: bool, channels_last: bool = False):
    c = shape[1]
    x, g = rand_array(shape, seed=1, low=-2, high=4), rand_array(shape, seed=2)
    w, b = rand_array((c,), seed=3, low=0.5, high=1.5), rand_array((c,), seed=4)
    res = []
    for m in (torch, ember):
        xt = m.tensor(x)
        gt = m.tensor(g)
        if channels_last:
            xt = xt.contiguous(memory_format=m.channels_last)
            gt = gt.contiguous(memory_format=m.channels_last)
        xt.requires_grad_()
        wt, bt = (m.tensor(w, requires_grad=True), m.tensor(b, requires_grad=True)) if affine \
            else (None, None)
        m.nn.functional.batch_norm(xt, None, None, wt, bt, training=True).backward(gt)
        res.append([xt.grad] + ([wt.grad, bt.grad] if affine else []))
    return res


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("shape", [(16, 12, 5, 5), (8, 3, 32, 32), (4, 6, 2, 2), (6, 7, 9),
                                   (3, 5, 2, 3, 4), (2, 4, 8, 8)], ids=str)
def test_backward_is_torchs_bits(shape, affine):
    """Planes: each (sample, channel) plane reduced in 8 float lanes (a last partial vector
    fused into its lanes), the planes added in double, dx = fma(-(x - mean), k, dy - gm)
    times rstd, times w. Against ember's previous kernel (double lanes of xhat) about half
    of dx differed in its last bit."""
    want, got = _backward_both(shape, affine)
    for a, b in zip(got, want):
        _same(a, b, "torch's scalar build reduces in another order", ulps=16)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,channels_last", [((64, 40), False), ((37, 9), False),
                                                 ((8, 13, 3, 3), True), ((4, 5, 3, 3), True)],
                         ids=str)
def test_backward_of_rows_is_torchs_bits_at_the_same_thread_count(shape, channels_last,
                                                                  threads):
    """(N, C) and channels-last inputs: per thread chunk, sums and fused products row after
    row, chunks added in double; dx fused on the channels that fill whole 8-lane vectors."""
    old = torch.get_num_threads(), ember.get_num_threads()
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    try:
        want, got = _backward_both(shape, True, channels_last)
    finally:
        torch.set_num_threads(old[0])
        ember.set_num_threads(old[1])
    assert got[0].stride() == want[0].stride()
    for a, b in zip(got, want):
        _same(a, b, "torch's scalar build reduces in another order", ulps=16)
