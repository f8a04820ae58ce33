"""csrc/casts.c (`ops/_half_casts.cast`): float32 <-> float16 and float32 -> bfloat16 in C,
against NumPy's and ml_dtypes' casts bit for bit: every float16 pattern, float32 patterns
from every exponent range with the rounding ties, the overflow and subnormal edges and
every NaN class, at sizes around the gate and past a thread's share, on one and two
threads; and the 16-bit add / sub / mul / div computed through it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember
from ember import native
from ember.ops import _half_casts
from ember.ops._half_casts import cast
from native._differential import threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
EDGES = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000,
         0x7F802000, 0x7F801FFF, 0x7FBFFFFF, 0xFFFFFFFF,  # NaNs: quiet, signalling, payloads
         0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F7F8000,  # float16 / bf16 max
         0x38800000, 0x387FFFFF, 0x33000000, 0x33000001, 0x32FFFFFF, 0x00000001,  # subnormal
         0x3F808000, 0x3F818000, 0x3F808001, 0x3F801000, 0x3F803000, 0x3F801001]  # ties


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def _floats(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    u[: len(EDGES)] = EDGES
    return u.view(np.float32)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_casts_are_numpys_bits(n_threads):
    x = _floats(300_001)
    halves = np.concatenate([np.arange(65536, dtype=np.uint16)] * 2).view(np.float16)
    with threads(n_threads), np.errstate(all="ignore"):
        for d in (F16, BF16):
            for n in (0, 1, 4095, 4096, 4103, x.size):  # (the gate, its tail, two shares)
                np.testing.assert_array_equal(_bits(cast(x[:n], d)), _bits(x[:n].astype(d)))
        np.testing.assert_array_equal(_bits(cast(halves, F32)),
                                      _bits(halves.astype(F32)))


def test_other_layouts_and_pairs_are_numpys_cast():
    x = _floats(20_000).reshape(100, 200)
    with np.errstate(all="ignore"):
        for a, d in ((x.T, F16), (x[:, ::2], BF16), (x.astype(np.float64), F16),
                     (x.astype(BF16), F32)):
            got = cast(a, d)
            want = a.astype(d, order="K")
            assert got.strides == want.strides
            np.testing.assert_array_equal(_bits(got), _bits(want))
        with native.use("numpy"):
            np.testing.assert_array_equal(_bits(cast(x, F16)), _bits(x.astype(F16)))


def test_without_f16c_float16_stays_on_numpy(monkeypatch):
    monkeypatch.setitem(_half_casts._state, "half", False)
    x = _floats(5000)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(cast(x, F16)), _bits(x.astype(F16)))
    assert _half_casts._kernel("half_from_float_f32") is None
    assert _half_casts._kernel("bfloat_from_float_f32") is not None


@pytest.mark.parametrize("d", [F16, BF16], ids=["float16", "bfloat16"])
def test_16_bit_arithmetic_through_float32_is_numpys(d):
    rng = np.random.default_rng(1)
    big = float(ml_dtypes.finfo(d).max)
    a = (rng.standard_normal((256, 300)) * 100).astype(d)
    b = (rng.standard_normal((256, 300)) * 0.01).astype(d)
    a.flat[:7] = [np.nan, np.inf, -np.inf, 0.0, -0.0, big, 1e-7]
    b.flat[:7] = [1.0, -np.inf, -np.inf, -0.0, -0.0, big, 3.0]
    ea, eb = ember.tensor(a), ember.tensor(b)
    with np.errstate(all="ignore"):
        for name, ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                            ("div", np.true_divide)):
            got, want = getattr(ember, name)(ea, eb).numpy(), ufunc(a, b)
            nan = np.isnan(want.astype(F32))
            assert (np.isnan(got.astype(F32)) == nan).all(), name
            np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan], err_msg=name)
