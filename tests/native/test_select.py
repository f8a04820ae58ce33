"""csrc/select.c (np.where on the operands' bits, `ops/_select_native.py`) against
np.where: the same bits for every dtype 4 or 8 bytes wide, NaN payloads and -0.0 kept,
either side one element, sizes 0, 1, odd and past a thread's share, one and two threads;
the layouts it does not take answered None; `_common.select` equal to np.where either way."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.ops import _common
from ember.ops._select_native import select_native
from native._differential import threads

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32, np.complex64]
SIZES = [0, 1, 7, 33, 1023, 70_001, 200_003]  # (the last two: more than one thread's share)


def _values(rng, n: int, dtype) -> np.ndarray:
    bits = rng.integers(0, 2**63, n, dtype=np.uint64)  # (every pattern: NaN payloads, -0.0)
    width = np.dtype(dtype).itemsize
    return bits.view(np.uint8)[: n * width].view(dtype).copy() if width < 8 \
        else bits.view(dtype).copy()


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    width = got.dtype.itemsize
    assert np.array_equal(got.view(np.uint8).reshape(-1, width),
                          want.view(np.uint8).reshape(-1, width))


@needs_native
def test_select_native_gives_np_where_bits_for_every_side_and_size():
    rng = np.random.default_rng(0)
    for n_threads in (1, 2):
        with threads(n_threads):
            for dtype in DTYPES:
                for n in SIZES:
                    cond = rng.random(n) < 0.5
                    a, b = _values(rng, n, dtype), _values(rng, n, dtype)
                    one_a, one_b = _values(rng, 1, dtype), _values(rng, 1, dtype)[0:1].reshape(())
                    for x, y in ((a, b), (one_a, b), (a, one_b), (one_a, one_b)):
                        got = select_native(cond, x, y)
                        assert got is not None, (dtype, n, x.shape, y.shape)
                        _same_bits(got, np.where(cond, x, y))


@needs_native
def test_select_native_keeps_shapes_and_zero_signs():
    cond = np.array([[True, False, True], [False, True, False]])
    a = np.full((2, 3), -0.0, np.float32)
    b = np.array([[np.nan, 0.0, np.inf], [-np.inf, 1.5, -0.0]], np.float32)
    got = select_native(cond, a, b)
    assert got.shape == (2, 3) and got.flags.c_contiguous
    assert np.signbit(got).tolist() == [[True, False, True], [True, True, True]]
    assert np.isnan(got[0, 1]) is np.False_ and got[0, 1] == 0.0 and got[1, 1] == -0.0


@needs_native
def test_select_native_declines_what_it_does_not_take():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 6)).astype(np.float32)
    cond = a > 0
    declined = {
        "transposed side": (cond, a.T.copy().T, a),
        "strided condition": (np.asfortranarray(cond), a, a),
        "broadcast row": (cond, a, a[:1]),
        "smaller condition": (cond[:1], a, a),
        "2-byte dtype": (cond, a.astype(np.float16), a.astype(np.float16)),
        "uint8 condition": (cond.view(np.uint8), a, a),
    }
    for name, args in declined.items():
        assert select_native(*args) is None, name
    with native.use("numpy"):
        assert select_native(cond, a, a) is None


def test_common_select_equals_np_where_on_every_path():
    rng = np.random.default_rng(2)
    for n in (10, 2_000, 50_000):  # np.where, the C blend, the C blend past the bit masks' gate
        x = rng.standard_normal((n // 10, 10)).astype(np.float32)
        x.flat[:3] = [np.nan, -0.0, np.inf]
        cond = x > 0
        cases = [(x, 0.0), (0.5, x), (x, x[::-1].copy()), (x.T.copy().T, x), (x, x[:1]),
                 (x.astype(np.float64), x), (x.astype(np.float16), np.float16(2))]
        # (a condition per row or per column, smaller than the result: spread first)
        rows, cols = cond[:, :1], cond[:1]
        for mode in ("numpy",) + (("native",) if native.available() else ()):
            with native.use(mode):  # (NumPy's line of make test loads no native code)
                for c, (a, b) in [(cond, case) for case in cases] + [
                        (rows, (0.0, x)), (cols, (x, x[::-1].copy())), (rows[:1, :1], (x, 0.0))]:
                    want = np.where(c, a, b)
                    _same_bits(_common.select(c, a, b), want)


def test_where_and_masked_fill_take_the_blend():
    import torch

    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 50)).astype(np.float32)
    x[0, :4] = [np.nan, -0.0, np.inf, -np.inf]
    e, t = ember.tensor(x), torch.tensor(x)
    np.testing.assert_array_equal(ember.where(e > 0, e, -e).numpy(),
                                  torch.where(t > 0, t, -t).numpy())
    np.testing.assert_array_equal(e.masked_fill(e < 0, 0.25).numpy(),
                                  t.masked_fill(t < 0, 0.25).numpy())
    np.testing.assert_array_equal(
        np.signbit(ember.where(e > 0, e, -0.0).numpy()),
        np.signbit(torch.where(t > 0, t, -0.0).numpy()))
