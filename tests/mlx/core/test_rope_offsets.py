"""`mx.fast.rope` (and `nn.RoPE`) at offsets past int32: MLX keeps the positions of a
64-bit offset (a Python int past int32, an int64 or uint64 array, scalar or one per batch
entry) in int32, so 2**32 + 5 rotates as 5 and 2**31 as -2**31, while uint32 and narrower
offsets are exact; ember gives the same, against MLX 0.32.4."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

mlx = pytest.importorskip("mlx.core")
mlx_nn = pytest.importorskip("mlx.nn")

X = np.random.default_rng(5).standard_normal((2, 3, 4, 8)).astype(np.float32)


def _same(ours, theirs):
    # NOTE: the angles reach 2**31 radians, where an ulp of the float32 angle is 256 rad
    # and cos/sin range reduction is each library's own: values agree to ~1e-4 (a wrong
    # position is off by O(1))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-3, atol=1e-3)


def _offset(m, value, dtype):
    return value if dtype is None else m.array(value, getattr(m, dtype))


@pytest.mark.parametrize("value, dtype", [
    (2**40, None), (2**32 + 5, None), (2**31, None), (2**31 - 1, None), (-2**31 - 3, None),
    (2**40, "int64"), (2**32 + 5, "int64"), (-2**63, "int64"), (-1, "int64"),
    (2**33 + 7, "uint64"), (2**32 - 1, "uint64"), (3_000_000_000, "uint32"),
    (70000, "uint32"), (5, "int8"), (200, "uint8"), (-3, "int32"),
    ([2**32 + 1, 3], "int64"), ([2**32 - 1, 2**31], "uint64"), ([3_000_000_000, 1], "uint32"),
])
@pytest.mark.parametrize("traditional", [False, True])
def test_rope_wide_offsets_as_mlx(value, dtype, traditional):
    def run(m):
        return m.fast.rope(m.array(X), 6, traditional=traditional, base=10000.0, scale=1.0,
                           offset=_offset(m, value, dtype))

    _same(run(mx), run(mlx))


def test_rope_int64_offset_wraps_like_int32():
    """2**32 + 5 as an int64 offset rotates exactly as 5 does (worked by hand: the low
    32 bits)."""
    def run(offset):
        return np.array(mx.fast.rope(mx.array(X), 8, traditional=False, base=10000.0,
                                     scale=1.0, offset=offset))

    np.testing.assert_array_equal(run(mx.array(2**32 + 5, mx.int64)), run(5))
    np.testing.assert_array_equal(run(2**31), run(-2**31))


def test_rope_layer_wide_offset_as_mlx():
    ours = nn.RoPE(8)(mx.array(X), offset=mx.array([2**32 + 2, 4], mx.int64))
    theirs = mlx_nn.RoPE(8)(mlx.array(X), offset=mlx.array([2**32 + 2, 4], mlx.int64))
    _same(ours, theirs)
