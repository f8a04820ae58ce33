"""Reductions, scans, argmax/argmin and inner against MLX 0.32.4: the repr (dtype and six
significant digits) and the NumPy dtype of the values held (an int32 result must be
stored as int32, so it wraps as MLX's does), or exception type and message, must be
equal."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, outcome

mlx = pytest.importorskip("mlx.core")


def _shown(v):
    """repr and, for a non-empty array not in bfloat16 (which NumPy cannot take from
    MLX), the dtype NumPy reads its values in."""
    if isinstance(v, list | tuple):
        return [_shown(x) for x in v]
    if hasattr(v, "dtype") and hasattr(v, "size") and v.size and "bfloat16" not in repr(v.dtype):
        return repr(v), str(np.array(v).dtype)
    return repr(v)


def _run(expr: str, module):
    return outcome(expr, module, SMALL, show=_shown)


BIG = "mx.array([2**30] * 4, dtype=mx.int32)"

REDUCTIONS = [
    # integer sums and products in the result's type, wrapping round
    f"mx.sum({BIG})",
    "mx.sum(mx.array([1, 2], dtype=mx.int8))",
    "mx.sum(mx.array([100, 100], dtype=mx.int8))",
    "mx.sum(mx.array([True, False, True]))",
    "mx.sum(mx.array([[1, 2], [3, 4]], mx.int16), axis=1)",
    "mx.sum(mx.array([[1, 2], [3, 4]], mx.uint16), axis=0, keepdims=True)",
    "mx.sum(mx.array([2**32 - 1, 1], mx.uint32))",
    "mx.sum(mx.array([255, 1], mx.uint8))",
    "mx.sum(mx.array([2**62, 2**62]))",
    "mx.prod(mx.array([2**16, 2**16], dtype=mx.int32))",
    "mx.prod(mx.array([1, 2], dtype=mx.int16))",
    "mx.prod(mx.array([True, True]))",
    "mx.count_nonzero(mx.array([1, 0, 2]))",
    "mx.count_nonzero(mx.array([[1, 0], [2, 0]]), axis=0)",
    "mx.trace(mx.array([[1, 2], [3, 4]], mx.int8))",
    "mx.trace(mx.array([[2**30, 2], [3, 2**30 * 3]]))",
    "mx.trace(mx.array([[True, False], [True, True]]))",
    # the mean of integers: their (wrapping) sum times 1/n in float32
    f"mx.mean({BIG})",
    "mx.mean(mx.array([1, 2], mx.int8))",
    "mx.mean(mx.array([[1, 2], [3, 5]], mx.int16), axis=1, keepdims=True)",
    "mx.mean(mx.array([2**32 - 1, 1], mx.uint32))",
    "mx.mean(mx.array([True, False, True]))",
    "mx.mean(mx.zeros((2, 0), mx.int32), axis=1)",
    "mx.mean(mx.array([1, 2, 3]), axis=1)",
    "mx.mean(a, axis=0)",
    # the mean of floats: their sum times 1/n rounded to their dtype (1/0: inf); the
    # variance: the squared deviations summed, times 1/n or over max(n - ddof, 0), real
    # (float32) for complex arrays
    "mx.mean(mx.array([1, 2, 4], mx.float16))",
    "mx.mean(mx.array([1, 2, 4, 8, 16], mx.bfloat16))",
    "mx.mean(mx.array([1 + 2j, 3 - 1j, -2 + 0.5j]))",
    "mx.mean(mx.zeros((0,)))",
    "mx.mean(mx.zeros((2, 0), mx.float16), axis=1)",
    "mx.var(mx.array([1 + 2j, 3 - 1j, -2 + 0.5j]))",
    "mx.std(mx.array([1 + 2j, 3 - 1j]), ddof=1)",
    "mx.var(mx.array([1.0, 2.5, 4.0, 5.5, 9.0], mx.float16))",
    "mx.var(mx.array([1, 2, 4]), ddof=5)",
    # `correction=` (keyword only) replaces ddof when given, in the function and the method
    "mx.var(mx.array([[1.0, 2, 3], [4, 5, 7]]), correction=1)",
    "mx.var(mx.array([[1.0, 2, 3], [4, 5, 7]]), 0, False, 1, correction=0)",
    "mx.std(mx.array([[1.0, 2, 3], [4, 5, 7]]), axis=1, keepdims=True, correction=1)",
    "mx.var(mx.array([1.0, 2]), correction=True)",
    "mx.var(mx.array([1.0, 2]), correction=None, ddof=1)",
    "mx.var(mx.array([1.0, 2]), correction=1.5)",
    "mx.array([[1.0, 2, 3], [4, 5, 7]]).var(1, correction=1)",
    "mx.array([[1.0, 2, 3], [4, 5, 7]]).std(ddof=1, correction=0)",
    "mx.array([1.0, 2]).var(correction=1.5)",
    "mx.var(mx.array([[1, 2], [4, 7]], mx.int8), axis=0, ddof=1, keepdims=True)",
    "mx.var(mx.zeros((0,)))",
    "mx.var(mx.zeros((3, 0)), axis=1, ddof=1)",
    "mx.std(x, axis=(0, 1))",
    # 0-d arrays
    "mx.sum(mx.array(3, mx.uint8))",
    "mx.sum(mx.array(True))",
    "mx.prod(mx.array(3, mx.int8))",
    "mx.mean(mx.array(3, mx.uint8))",
    "mx.var(mx.array(3.0))",
    "mx.std(mx.array(3.0))",
    "mx.var(mx.array(3.0), ddof=1)",
    "mx.max(mx.array(3, mx.uint8))",
    "mx.logsumexp(mx.array(3.0))",
    "mx.argmin(mx.array(3.0))",
    "mx.count_nonzero(mx.array(3.0))",
    "mx.sum(mx.array(3.0), axis=0)",
]

ARG = [
    "mx.argmax(mx.array([False, True, True]))",
    "mx.argmin(mx.array([True, False]))",
    "mx.argmax(mx.array([[True, False], [False, True]]), axis=1)",
    "mx.argmax(mx.array([[1, 5], [7, 2]]), keepdims=True)",
    "mx.argmin(mx.array([[1, 5], [7, 2]]), keepdims=True)",
    "mx.argmax(mx.array([[[1, 5], [7, 2]]]), keepdims=True)",
    "mx.argmax(mx.array([[1, 5], [7, 2]]), axis=0, keepdims=True)",
    "mx.argmax(mx.array(3.0), keepdims=True)",
    "mx.argmax(a, axis=2)",
]

SCANS = [
    "mx.cumsum(mx.array([True, False, True]))",
    "mx.cumsum(mx.array([True, False, True]), inclusive=False, reverse=True)",
    f"mx.cumsum({BIG})",
    "mx.cumsum(mx.array([100, 100], dtype=mx.int8))",
    "mx.cumprod(mx.array([2**16, 2**16], dtype=mx.int32))",
    "mx.cumprod(mx.array([1, 2], dtype=mx.int16))",
    # exclusive scans start from the operation's identity
    "mx.cumsum(mx.array([1.0, 2.0, 3.0]), inclusive=False)",
    "mx.cumprod(mx.array([1.0, 2.0, 3.0]), inclusive=False, reverse=True)",
    "mx.cummax(mx.array([-1.0, -2.0, 3.0]), inclusive=False)",
    "mx.cummin(mx.array([1.0, 2.0, 3.0]), inclusive=False, reverse=True)",
    "mx.cummax(mx.array([1, 2, 3]), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3]), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3], mx.uint8), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3], mx.uint32), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3], mx.uint64), inclusive=False)",
    "mx.cummax(mx.array([1, 2, 3], mx.int8), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3], mx.int64), inclusive=False)",
    "mx.cummax(mx.array([1, 2, 3], mx.int64), inclusive=False)",
    "mx.cummin(mx.array([True, False]), inclusive=False)",
    "mx.cummax(mx.array([1, 2, 3], mx.float16), inclusive=False)",
    "mx.cummin(mx.array([1, 2, 3], mx.bfloat16), inclusive=False)",
    "mx.cumprod(mx.array([[1, 2], [3, 4]]), axis=1, inclusive=False, reverse=True)",
    # an empty axis stays empty
    "mx.cumsum(mx.zeros((2, 0)), axis=1, inclusive=False)",
    "mx.cumsum(mx.zeros((0,)), inclusive=False)",
    "mx.cummax(mx.zeros((0, 3)), axis=0, inclusive=False)",
]

INNER = [
    "mx.inner(mx.array(2.0), mx.array([1.0, 2.0]))",
    "mx.inner(mx.array([1.0, 2.0]), mx.array(3.0))",
    "mx.inner(mx.array(2), mx.array(3))",
    "mx.inner(mx.array(2, mx.int8), mx.array(3, mx.uint8))",
    "mx.inner(mx.ones((2, 3)), mx.ones((4, 3)))",
    "mx.inner(mx.ones((2, 5, 3)), mx.ones((4, 3)))",
    "mx.inner(mx.ones((2, 3, 4)), mx.ones((5, 2, 4)))",
    "mx.inner(x, mx.array([[1.0, -1.0, 0.5], [0.5, 2.0, 3.0]]))",
    "mx.inner(mx.ones((2, 3)), mx.ones((2,)))",
    "mx.inner(a, a)",
    "mx.inner(mx.array([True, False]), mx.array([True, True]))",
    "mx.inner(mx.zeros((0, 3)), mx.ones((2, 3)))",
    "mx.inner(mx.ones((2, 0)), mx.ones((3, 0)))",
    "mx.inner(mx.ones((2, 3), mx.bfloat16), mx.ones((3,), mx.float16))",
]


@pytest.mark.parametrize("expr", REDUCTIONS + ARG + SCANS + INNER)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


@pytest.mark.parametrize("n", [3, 6, 7, 13])
def test_float_means_multiply_the_sum_by_the_rounded_inverse_bit_for_bit(n):
    # eighths sum exactly in any order, so only the last step rounds: MLX multiplies by
    # float32(1/n) where a division would round otherwise (a third of these cases)
    rows = np.random.default_rng(n).integers(-40, 40, (20, n)).astype(np.float32) / 8
    ours = np.array(mx.mean(mx.array(rows), axis=1))
    theirs = np.array(mlx.mean(mlx.array(rows), axis=1))
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16", "complex64"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_carry_their_own_dtype_bit_for_bit_as_mlx(op, dtype):
    # MLX rounds the running value to the array's dtype at every step (PyTorch's scans,
    # ember's own, carry float32 in float64 and float16 in float32): 3,000 steps make the
    # two differ in most places
    x = np.random.default_rng(0).standard_normal(3000).astype(np.float32)
    x = 1 + x * 1e-3 if op == "cumprod" else x
    outs = []
    for lib in (mx, mlx):
        a = getattr(lib, op)(lib.array(x).astype(getattr(lib, dtype)), reverse=True)
        outs.append(np.array(a.astype(lib.complex64 if dtype == "complex64" else
                                      lib.float32)))
    np.testing.assert_array_equal(*outs)


# `dtype=` of cumsum / cumprod casts the input before the scan (so a narrow type wraps and
# booleans cast to bool still sum as int32); the array methods take no dtype
SCAN_DTYPE = [
    "mx.cumsum(a, dtype=mx.float32)", "mx.cumprod(a, 1, dtype=mx.int64)",
    "mx.cumsum(mx.ones(300, mx.uint8), dtype=mx.int32)[-1]",
    "mx.cumsum(mx.full(3, 100, mx.int32), dtype=mx.int8)",
    "mx.cumsum(mx.array([0.6, 0.6, 0.6]), dtype=mx.int32)",
    "mx.cumprod(mx.array([True, True]), dtype=mx.bool_)",
    "mx.cumsum(a, reverse=True, dtype=mx.bool_)", "mx.cumsum(mx.array([True]), dtype=mx.float16)",
    "mx.cumsum(mx.array([1, 2]), dtype=mx.complex64)", "mx.cumsum(a, dtype=None)",
    "mx.cumsum(x, axis=1, inclusive=False, dtype=mx.float16)",
    "mx.grad(lambda v: mx.cumsum(v, dtype=mx.float16).astype(mx.float32).sum())(x)",
    "mx.cummax(x, dtype=mx.int32)", "mx.cumsum(a, dtype='float32')",
]


@pytest.mark.parametrize("expr", SCAN_DTYPE)
def test_scan_dtype_as_mlx(expr):
    assert outcome(expr, mx, SMALL, _shown) == outcome(expr, mlx, SMALL, _shown)
