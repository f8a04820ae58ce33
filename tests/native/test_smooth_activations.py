"""csrc/activation.c's sigmoid and SiLU, and the fused derivatives of sigmoid, tanh and SiLU,
against their NumPy twins (ops/activation.py, ops/activation_backward.py).

sigmoid_backward and tanh_backward are products and differences in one order on both sides:
bit for bit. sigmoid, SiLU and silu_backward take e^-x from ember_math.h (<= 1 ulp) where
the NumPy kernels take NumPy's exp: each a few ulps from the exact value (the C one within
2 in float32, as torch's), within 5 of each other, 3 of the larger term for silu_backward
(its sum 1 + x (1 - s) passes the exp's error on), and the same +-0, infinities and NaN."""

from __future__ import annotations

import numpy as np
import pytest

from ember import native
from ember.ops import activation_backward as ab
from ember.ops.activation import silu_p
from ember.ops.unary import sigmoid_p
from native._differential import (
    ONE_VALUES,
    assert_bits,
    layouts,
    one_value,
    threads,
    ulps,
    with_specials,
)

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

SHAPES = [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)]


def _values(shape, dtype, seed=0, scale=6.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * scale
    if x.size > 8:  # (where e^-x overflows in float32 and in float64, and at its edge)
        x.reshape(-1)[4:8] = [-100.0, 100.0, -750.0, -88.72283935546875]
    return with_specials(x.astype(dtype))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("member", [sigmoid_p, silu_p], ids=["sigmoid", "silu"])
def test_forward_within_two_ulps_of_numpy(member, shape, dtype, n_threads):
    numpy_kernel, native_kernel = native.twins(member)
    x0 = _values(shape, dtype)
    with np.errstate(all="ignore"):
        want = numpy_kernel(x0)
    for x in layouts(x0).values():
        with threads(n_threads):
            got = native_kernel(native.library("activation"), x)
        assert got.dtype == x0.dtype and got.shape == x0.shape
        # (each kernel a few ulps from the exact value: NumPy's float32 exp up to 3 here,
        # ember_math.h's <= 2, as torch's; in float64 both within 1)
        assert ulps(got, want).max(initial=0) <= 5
        with np.errstate(all="ignore"):
            exact = member.kernel.numpy(x0.astype(np.float64)).astype(dtype)
        if dtype == np.float32:  # (where e^-x stays finite in float: beyond it both give 0)
            inside = np.abs(x0) < 88
            assert ulps(got, exact)[inside].max(initial=0) <= 2
        special = ~np.isfinite(want) | (want == 0)  # (NaN, infinities and zeros: the same)
        assert_bits(got[special], want[special])


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["sigmoid_backward", "tanh_backward", "silu_backward"])
def test_derivatives_against_numpy(name, shape, dtype, n_threads):
    member = getattr(ab, f"{name}_p")
    numpy_kernel, native_kernel = native.twins(member)
    if name == "silu_backward":
        y0 = _values(shape, dtype)
    else:  # (an output of sigmoid / tanh, with the specials)
        y0 = with_specials(np.tanh(_values(shape, np.float64)).astype(dtype))
    g0 = with_specials(_values(shape, dtype, seed=1, scale=2.0))[::-1].copy()
    with np.errstate(all="ignore"):
        want = numpy_kernel(g0, y0)
    for g in layouts(g0).values():  # (a broadcast gradient, as a sum's, is copied first)
        with threads(n_threads), np.errstate(all="ignore"):
            got = native_kernel(native.library("activation"), g, y0)
        if name == "silu_backward":
            finite = np.isfinite(want)
            assert_bits(got[~finite], want[~finite])
            # (in ulps of g (1 + |x|), the size of the terms, where 1 + x (1 - s) cancels)
            scale = (np.abs(g0) * (1 + np.abs(y0))).astype(dtype)
            gap = np.abs(got.astype(np.float64) - want)[finite]
            assert (gap <= 3 * np.spacing(scale[finite])).all()
        else:
            assert_bits(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (255,), (257,), (3, 1000), (4, 65, 257)], ids=str)
@pytest.mark.parametrize("name", ["sigmoid_backward", "tanh_backward", "silu_backward"])
def test_one_value_gradient_is_read_in_place(name, shape, dtype, n_threads):
    """A gradient broadcast from one value (a sum's, a mean's) is not written out first:
    the C kernel reads it in place and gives the bits it gives the written-out gradient
    (blocks of 256 copies inside: the sizes around one block, and thread splits)."""
    _, native_kernel = native.twins(getattr(ab, f"{name}_p"))
    y0 = _values(shape, dtype) if name == "silu_backward" else \
        with_specials(np.tanh(_values(shape, np.float64)).astype(dtype))
    lib = native.library("activation")
    for value in ONE_VALUES:
        g = one_value(value, shape, dtype)
        with threads(n_threads), np.errstate(all="ignore"):
            want = native_kernel(lib, g.copy(), y0)
            got = native_kernel(lib, g, y0)
        assert_bits(got, want)


def test_mixed_dtypes_and_shapes_go_to_numpy():
    lib = native.library("activation")
    _, native_kernel = native.twins(ab.sigmoid_backward_p)
    y = np.full(5, 0.25, np.float32)
    assert native_kernel(lib, y.astype(np.float64), y) is NotImplemented
    assert native_kernel(lib, np.ones((2, 5), np.float32), y) is NotImplemented
    assert native_kernel(lib, y.astype(np.float16), y.astype(np.float16)) is NotImplemented
