"""csrc/binary_math.c (fmod, remainder, floor division, hypot, nextafter of float32 / float64)
against its NumPy twins, np.fmod, `binary_math._remainder_kernel` (np.remainder with
PyTorch's zero), np.floor_divide, np.hypot and np.nextafter: bit for bit, since fmod and
nextafter are exact (any correct one gives their bits), the C kernel takes NumPy's
npy_divmod steps in the operands' dtype, and float32 hypot is glibc's hypotf's arithmetic
(double squares, one square root, one rounding to float). The inputs reach every path:
quotients that fit the vector loop, quotients too large for it (the C library's fmod lane
by lane), divisors 0, inf and NaN, subnormals, exact multiples and their neighbours (where
the rounded quotient overshoots), overflowing squares, random bit patterns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import _binary_math_native as modulo
from ember.ops.binary import _trunc_div_kernel, div_floor_fn, div_trunc_fn, floor_divide_fn
from ember.ops.binary_math import (
    _remainder_kernel,
    fmod_fn,
    hypot_fn,
    remainder_fn,
    remainder_scalar_fn,
)
from ember.ops.float_parts import nextafter_fn
from native._differential import assert_bits, layouts, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
OPS = [(modulo.modulo_native(modulo.FMOD), np.fmod),
       (modulo.modulo_native(modulo.REMAINDER), _remainder_kernel),
       (modulo.modulo_native(modulo.FLOOR_DIVIDE), np.floor_divide),
       (modulo.pair_native("hypot"), np.hypot), (modulo.pair_native("nextafter"), np.nextafter)]


def _pairs(dtype, n=8000):
    """(a, b) tables of one dtype covering the kernel's paths."""
    rng = np.random.default_rng(0)
    fi = np.finfo(dtype)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -3.0, 2.5, 0.1, 7.0,
                   fi.tiny, -fi.smallest_subnormal, fi.max, -fi.max, 1e-30], dtype)
    yield np.repeat(sp, sp.size), np.tile(sp, sp.size)
    for sa, sb in [(1, 1), (1e6, 1), (1e9, 1), (1, 1e-6), (1e30, 1e-30)]:
        yield ((rng.standard_normal(n) * sa).astype(dtype),
               (rng.standard_normal(n) * sb).astype(dtype))
    b = rng.standard_normal(n).astype(dtype)
    k = rng.integers(-1000, 1000, n)
    multiple = (b * k).astype(dtype)
    for a in (multiple, (b * (k + 0.5)).astype(dtype), np.nextafter(multiple, np.inf),
              np.nextafter(multiple, -np.inf)):
        yield a, b
    ints = np.uint64 if dtype == np.float64 else np.uint32
    top = 2 ** (8 * np.dtype(dtype).itemsize - 1)
    a = rng.integers(0, top, n, dtype=ints).view(dtype) * np.where(rng.random(n) < .5, -1, 1)
    yield a.astype(dtype), rng.integers(0, top, n, dtype=ints).view(dtype)
    yield a.astype(dtype), (a * np.exp2(-rng.uniform(0, 60, n))).astype(dtype)


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):  # (as ember's ops never warn)
        yield


def test_each_kernel_is_numpys_bit_for_bit_on_every_path():
    lib = native.library("binary_math")
    for dtype in (np.float32, np.float64):
        for n_threads in (1, 2):
            with threads(n_threads):
                for a, b in _pairs(dtype):
                    for run, ref in OPS:
                        assert_bits(run(lib, a, b), ref(a, b))


def test_sizes_layouts_and_numbers():
    """Sizes 0, 1 and odd; transposed, broadcast and negative-stride operands; a number
    (float, int, NumPy scalar) on the right, one element broadcast on either side."""
    lib = native.library("binary_math")
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        for shape in [(0,), (1,), (7, 9), (33, 65)]:
            a0 = (rng.standard_normal(shape) * 10).astype(dtype)
            b0 = rng.standard_normal(shape).astype(dtype)
            for run, ref in OPS:
                for a in layouts(a0).values():
                    for b in layouts(b0).values():
                        assert_bits(run(lib, a, b), ref(a0, b0))
                for num in (1.5, -3, dtype(0.7)):
                    assert_bits(run(lib, a0, num), ref(a0, num))
                one = np.full((1,) * len(shape), 2.5, dtype)
                assert_bits(run(lib, a0, one), ref(a0, one))
                assert_bits(run(lib, one, b0), ref(one, b0))
                if a0.ndim == 2 and a0.size:
                    assert_bits(run(lib, a0, b0[:1]), ref(a0, b0[:1]))  # (a row, copied)
                assert run(lib, a0.astype(np.float16), b0.astype(np.float16)) is NotImplemented
                assert run(lib, a0, b0.astype(np.float16)) is NotImplemented
                assert run(lib, a0, 1 << 30) is NotImplemented  # (not exact in float32)


def test_integer_division_is_numpys():
    """int32 / int64 fmod, remainder, floor and truncating division (one C pass each, serial)
    against the NumPy kernels: every pair of INT_MIN, INT_MAX, -1, 0 ... (INT_MIN / -1
    wraps to INT_MIN, as NumPy's), random values, numbers, sizes 0 and 1, other layouts; a
    zero divisor leaves it to the NumPy kernel (which raises)."""
    lib = native.library("binary_math")
    rng = np.random.default_rng(3)
    kernels = [(modulo.modulo_native(op), ref) for op, ref in (
        (modulo.FMOD, np.fmod), (modulo.REMAINDER, _remainder_kernel),
        (modulo.FLOOR_DIVIDE, np.floor_divide), (modulo.TRUNC_DIVIDE, _trunc_div_kernel))]
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        sp = np.array([info.min, info.min + 1, info.max, -1, 1, 2, -2, 7, -7, 0], dtype)
        a, b = np.repeat(sp, sp.size), np.tile(sp, sp.size)
        pairs = [(a[b != 0], b[b != 0]),
                 (rng.integers(info.min, info.max, 3000, dtype=dtype),
                  rng.integers(1, 60, 3000, dtype=dtype) * rng.choice([-1, 1], 3000).astype(dtype)),
                 (np.zeros(0, dtype), np.ones(0, dtype)), (np.array([-9], dtype), sp[3:4])]
        for run, ref in kernels:
            for x, y in pairs:
                got, want = run(lib, x, y), ref(x, y)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
                for num in (7, -1, info.min):
                    np.testing.assert_array_equal(run(lib, x, num), ref(x, num))
            m = pairs[1][0].reshape(50, 60)
            d = pairs[1][1].reshape(50, 60)
            for view in layouts(m).values():
                np.testing.assert_array_equal(run(lib, view, d.T.copy().T), ref(m, d))
            assert run(lib, sp, sp) is NotImplemented  # (a zero divisor)
            assert run(lib, sp.astype(np.int16), sp.astype(np.int16)) is NotImplemented
            assert run(lib, sp, 1 << 40 if dtype == np.int32 else 1 << 70) is NotImplemented
    assert modulo.modulo_native(modulo.TRUNC_DIVIDE)(lib, np.ones(3), np.ones(3)) is \
        NotImplemented  # (floats: NumPy's trunc(a / b))


def test_registered_kernels_choose_it_and_match_torch():
    """The ops run the C kernel (above the size gate) and give PyTorch's bits: its fmod is
    exact too and its remainder / floor division take the same IEEE steps."""
    for fn in (fmod_fn, remainder_fn, remainder_scalar_fn, div_floor_fn, floor_divide_fn,
               div_trunc_fn, hypot_fn, nextafter_fn):
        assert native.twins(fn) is not None, fn.name
    rng = np.random.default_rng(2)
    for dtype in ("float32", "float64"):
        a = (rng.standard_normal((40, 70)) * 100).astype(dtype)
        b = rng.standard_normal((40, 70)).astype(dtype)
        a.reshape(-1)[:6] = [np.nan, np.inf, -0.0, 0.0, 5.0, -5.0]
        b.reshape(-1)[:8] = [1.0, 2.0, 3.0, -1.0, 0.0, -0.0, np.inf, np.nan]
        ea, eb, ta, tb = ember.tensor(a), ember.tensor(b), torch.tensor(a), torch.tensor(b)
        pairs = [(ember.fmod(ea, eb), torch.fmod(ta, tb)), (ea % eb, ta % tb),
                 (ea // eb, ta // tb), (ember.fmod(ea, 0.3), torch.fmod(ta, 0.3)),
                 (ea % -0.3, ta % -0.3), (ember.div(ea, eb, rounding_mode="floor"),
                                          torch.div(ta, tb, rounding_mode="floor")),
                 (ember.nextafter(ea, eb), torch.nextafter(ta, tb))]
        for got, want in pairs:
            assert_bits(got.numpy(), want.numpy())
        ia, ib = (a * 10).astype(np.int64), np.where(b == 0, 3, b * 10).astype(np.int64)
        ia, ib = ia.clip(-10**6, 10**6), np.where(np.isfinite(b) & (ib != 0), ib, 5)
        for op in (lambda L, x, y: x % y, lambda L, x, y: x // y, lambda L, x, y: L.fmod(x, y),
                   lambda L, x, y: L.div(x, y, rounding_mode="trunc")):
            np.testing.assert_array_equal(op(ember, ember.tensor(ia), ember.tensor(ib)).numpy(),
                                          op(torch, torch.tensor(ia), torch.tensor(ib)).numpy())
        # (PyTorch's vectorised hypot is not the C library's: within an ulp of it)
        got, want = ember.hypot(ea, eb).numpy(), torch.hypot(ta, tb).numpy()
        np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dtype).eps, atol=0)
