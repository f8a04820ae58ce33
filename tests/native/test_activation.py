"""csrc/activation.c (ReLU and threshold_backward, its derivative) against the NumPy twins
of ops/activation.py and ops/activation_backward.py and against torch: selects, no
arithmetic, so bit for bit (ReLU passes NaN and -0.0; NaN x keeps g; a dropped gradient is
+0.0, whatever its sign or NaN-ness)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import activation, activation_backward
from ember.ops.activation import relu_p, threshold_backward_p
from native._differential import (
    ONE_VALUES,
    assert_bits,
    layouts,
    one_value,
    threads,
    with_specials,
)

from helpers import rand_array

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
TWINS = native.twins(threshold_backward_p)


@pytest.fixture(autouse=True)
def _small_arrays_native_too(monkeypatch):
    """Eager calls send arrays under `_NATIVE_MIN` elements to NumPy; here the C kernel
    takes every size."""
    monkeypatch.setattr(activation, "_NATIVE_MIN", 0)
    monkeypatch.setattr(activation, "_PIECEWISE_MIN", 0)
    monkeypatch.setattr(activation_backward, "_NATIVE_MIN", 0)


def _run(g, x, threshold):
    out = TWINS[1](native.library("activation"), g, x, threshold=threshold)
    return TWINS[0](g, x, threshold=threshold) if out is NotImplemented else out


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("threshold", [0, 0.1, -1.5, 3], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)], ids=str)
def test_threshold_backward_is_numpys_bit_for_bit(shape, dtype, threshold, n_threads):
    # (x near the thresholds: 0.1 rounds differently in float32 and float64)
    x0 = with_specials(np.round(rand_array(shape, np.float64, low=-3, high=3), 1).astype(dtype))
    g0 = with_specials(rand_array(shape, np.float64, seed=1).astype(dtype))[::-1].copy()
    want = TWINS[0](g0, x0, threshold=threshold)
    assert TWINS[1](native.library("activation"), g0, x0, threshold=threshold) \
        is not NotImplemented
    for g in layouts(g0).values():
        with threads(n_threads):
            got = _run(g, x0, threshold)
        assert_bits(got, want)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (255,), (257,), (3, 1000), (4, 65, 257)], ids=str)
def test_threshold_backward_of_one_value_broadcast_is_read_in_place(shape, dtype, n_threads):
    """The gradient of a sum or a mean (one value, every stride 0) goes to the C kernel as
    it is, and gives the bits of the same gradient written out."""
    x0 = with_specials(np.round(rand_array(shape, np.float64, low=-3, high=3), 1).astype(dtype))
    for value in ONE_VALUES:
        g = one_value(value, shape, dtype)
        want = TWINS[0](g.copy(), x0, threshold=0)
        with threads(n_threads):
            got = TWINS[1](native.library("activation"), g, x0, threshold=0)
        assert got is not NotImplemented
        assert_bits(got, want)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7, 9), (4, 65, 257)], ids=str)
def test_relu_is_numpys_bit_for_bit(shape, dtype, n_threads):
    numpy_k, native_k = native.twins(relu_p)
    x0 = with_specials(rand_array(shape, np.float64, low=-3, high=3).astype(dtype))
    x0.reshape(-1)[4:6] = [0.0, -0.0][: max(x0.size - 4, 0)]
    want = numpy_k(x0)
    with threads(n_threads):
        got = native_k(native.library("activation"), x0)
    assert_bits(got, want)
    for x in layouts(x0).values():  # (other layouts: NumPy's, through the chooser)
        with threads(n_threads):
            assert_bits(relu_p.kernel(x), want)


@needs_native
def test_other_shapes_and_dtypes_stay_on_numpy():
    lib = native.library("activation")
    g = rand_array((4, 5))
    assert TWINS[1](lib, g, rand_array((1, 5)), threshold=0) is NotImplemented  # broadcast
    assert TWINS[1](lib, g.astype(np.float16), g.astype(np.float16), threshold=0) \
        is NotImplemented
    assert TWINS[1](lib, g.T, g.T, threshold=0) is NotImplemented  # not C-contiguous
    relu_native = native.twins(relu_p)[1]
    assert relu_native(lib, np.arange(-5, 5)) is NotImplemented  # (integers)
    assert relu_native(lib, g.T) is NotImplemented


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=str)
def test_relu_and_its_grad_as_torch(dtype, mode):
    x = with_specials(rand_array((8, 300), np.float64, low=-2, high=2))
    x[1, :5] = 0.0
    w = rand_array((8, 300), np.float64, seed=2)
    tdt = torch.float32 if dtype == ember.float32 else torch.float64
    xt = torch.tensor(x, dtype=tdt, requires_grad=True)
    (torch.relu(xt) * torch.tensor(w, dtype=tdt)).sum().backward()
    with native.use(mode):
        xe = ember.tensor(x, dtype=dtype, requires_grad=True)
        ye = ember.relu(xe)
        (ye * ember.tensor(w, dtype=dtype)).sum().backward()
        inplace = ember.tensor(x, dtype=dtype)
        ember.nn.functional.relu(inplace, inplace=True)
    assert_bits(xe.grad.numpy(), xt.grad.numpy())
    assert_bits(ye.detach().numpy(), torch.relu(xt).detach().numpy())
    assert_bits(inplace.numpy(), torch.relu(xt).detach().numpy())


_PIECEWISE = [  # (member, params): activation.c's `piecewise` kinds
    (activation.leaky_relu_p, {"negative_slope": 0.01}),
    (activation.leaky_relu_p, {"negative_slope": -2.5}),
    (activation.threshold_p, {"threshold": 0.1, "value": -0.0}),
    (activation.threshold_p, {"threshold": -1, "value": float("nan")}),
    (activation.hardtanh_p, {"min_val": -1.0, "max_val": 1.0}),
    (activation.hardtanh_p, {"min_val": 0.0, "max_val": 6.0}),
    (activation.hardtanh_p, {"min_val": -0.3, "max_val": 0.1}),
    (activation.hardsigmoid_p, {}),
    (activation.hardswish_p, {}),
]


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
def test_piecewise_activations_are_numpys_bit_for_bit(n_threads):
    """Each kind against its NumPy twin: sizes 0, 1, odd and past a thread's share, every
    layout (the others through the chooser), NaN / inf / -0.0 and the kinks (0, +-3, 6)."""
    lib = native.library("activation")
    for shape in [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)]:
        for dtype in (np.float32, np.float64):
            x0 = with_specials(np.round(rand_array(shape, np.float64, low=-8, high=8), 1))
            x0.reshape(-1)[4:10] = [0.0, -3.0, 3.0, 6.0, 0.1, -1.0][: max(x0.size - 4, 0)]
            x0 = x0.astype(dtype)
            for prim, params in _PIECEWISE:
                numpy_k, native_k = native.twins(prim)
                with np.errstate(all="ignore"):  # (hardswish at -inf: -inf * 0, as eager)
                    want = numpy_k(x0, **params)
                with threads(n_threads):
                    got = native_k(lib, x0, **params)
                    assert got is not NotImplemented
                    assert_bits(got, want)
                    for x in layouts(x0).values():
                        with np.errstate(all="ignore"):
                            assert_bits(prim.kernel(x, **params), want)


@needs_native
def test_piecewise_other_dtypes_and_layouts_stay_on_numpy():
    lib = native.library("activation")
    g = rand_array((4, 5))
    for prim, params in _PIECEWISE:
        native_k = native.twins(prim)[1]
        assert native_k(lib, g.T, **params) is NotImplemented
        assert native_k(lib, g.astype(np.float16), **params) is NotImplemented
    assert native.twins(activation.hardtanh_p)[1](lib, np.arange(-5, 5), min_val=-1,
                                                  max_val=1) is NotImplemented


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (7, 9), (3, 1000), (4, 65, 257)], ids=str)
def test_clamp_by_numbers_is_numpys_bit_for_bit(shape, dtype, n_threads):
    """clamp / clamp_min / clamp_max by Python numbers take hardtanh's C kernel: the
    bound-first compares (x kept on a tie, so clamp(-0.0, 0) is -0.0; NaN x kept), bounds
    rounded to the input's type, min > max giving max, as the NumPy kernel and torch."""
    from ember.ops.ternary import clamp_fn, clamp_max_fn, clamp_min_fn

    x0 = with_specials(np.round(rand_array(shape, np.float64, low=-3, high=3), 1).astype(dtype))
    x0.reshape(-1)[4:6] = [0.0, -0.0][: max(x0.size - 4, 0)]
    cases = [(clamp_fn, (-1, 1)), (clamp_fn, (0, 0.1)), (clamp_fn, (-0.0, np.inf)),
             (clamp_fn, (2.5, -1.5)), (clamp_min_fn, (0.0, None)), (clamp_max_fn, (None, 0.3)),
             (clamp_fn, (-np.inf, 1e30))]
    lib = native.library("activation")
    for fn, (lo, hi) in cases:
        numpy_k, native_k = native.twins(fn)
        with threads(n_threads):
            got = native_k(lib, x0, lo, hi)
        assert got is not NotImplemented, (fn.name, lo, hi)
        assert_bits(got, numpy_k(x0, lo, hi))
        if x0.size > 1000:  # (and torch's)
            t = torch.tensor(x0)
            want = t.clamp(lo, hi) if fn is clamp_fn else (
                t.clamp_min(lo) if fn is clamp_min_fn else t.clamp_max(hi))
            assert_bits(got, want.numpy())


@needs_native
def test_clamp_bounds_the_c_kernel_does_not_take_go_to_numpy():
    from ember.ops.ternary import clamp_fn

    _, native_k = native.twins(clamp_fn)
    lib = native.library("activation")
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    for lo, hi in [(np.nan, 1.0), (np.float64(0.5), 1.0), (-1, 2**60), (0.0, 1j)]:
        assert native_k(lib, x, lo, hi) is NotImplemented, (lo, hi)
    assert native_k(lib, x[::2], -1.0, 1.0) is NotImplemented
    assert native_k(lib, x.astype(np.float16), -1.0, 1.0) is NotImplemented
