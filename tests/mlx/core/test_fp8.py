"""mx.to_fp8 / mx.from_fp8 against MLX 0.32.4: bytes and decoded bits equal (every float16
and bfloat16 value, a million float32 ones, every byte), dtypes and shapes equal, errors of
the same type and message."""

import ml_dtypes
import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

HALF_BITS = np.arange(1 << 16, dtype=np.uint16)


def _bytes(module, x):
    out = module.to_fp8(x)
    assert repr(out.dtype).endswith("uint8") and out.shape == x.shape
    return np.array(out)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_to_fp8_every_half_precision_value(dtype):
    ours = _bytes(mx, mx.array(HALF_BITS).view(getattr(mx, dtype)))
    theirs = _bytes(mlx, mlx.array(HALF_BITS).view(getattr(mlx, dtype)))
    np.testing.assert_array_equal(ours, theirs)


def _float32_bits() -> np.ndarray:
    """Random bit patterns (NaNs with payloads, infinities, subnormals), every 97th pattern
    from 2^-11 to 512 (the rounding boundaries and ties), and the same with the sign set."""
    rng = np.random.default_rng(8)
    random = rng.integers(0, 1 << 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    dense = np.arange(0x3A000000, 0x44000000, 97, dtype=np.uint32)
    edges = np.array([0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x43E00000, 0x43E80000,
                      0x43E7FFFF, 0x43E80001, 0x43F00000, 0x3C800000, 0x3C7FFFFF, 0x3B000000,
                      0x3A800000, 0x3A800001, 0x3AC00000, 0x1], dtype=np.uint32)
    bits = np.concatenate([random, dense, edges])
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


def test_to_fp8_float32_bit_patterns():
    bits = _float32_bits()
    ours = _bytes(mx, mx.array(bits).view(mx.float32))
    theirs = _bytes(mlx, mlx.array(bits).view(mlx.float32))
    np.testing.assert_array_equal(ours, theirs)


_VIEW = {"float32": "uint32", "float16": "uint16", "bfloat16": "uint16"}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_from_fp8_every_byte_bit_for_bit(dtype):
    """The decoded bits, NaN payloads of 0x7f / 0xff included."""
    ours = mx.from_fp8(mx.arange(256).astype(mx.uint8), getattr(mx, dtype))
    theirs = mlx.from_fp8(mlx.arange(256).astype(mlx.uint8), getattr(mlx, dtype))
    assert repr(ours.dtype) == repr(theirs.dtype) and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.array(ours.view(getattr(mx, _VIEW[dtype]))),
                                  np.array(theirs.view(getattr(mlx, _VIEW[dtype]))))


def test_from_fp8_defaults_to_bfloat16_and_keeps_shapes():
    codes = np.random.default_rng(9).integers(0, 256, (3, 4, 5)).astype(np.uint8)
    for module in (mx, mlx):
        assert repr(module.from_fp8(module.array(codes)).dtype) == "mlx.core.bfloat16"
    ours = mx.from_fp8(mx.array(codes).transpose(2, 0, 1), mx.float32)
    theirs = mlx.from_fp8(mlx.array(codes).transpose(2, 0, 1), mlx.float32)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.array(ours), np.array(theirs))


SETUP = "x = mx.array([[0.5, -1.0, 300.0], [1e-3, 448.0, -500.0]]); b = mx.to_fp8(x)"


@pytest.mark.parametrize("expr", [
    "mx.to_fp8(x)", "mx.to_fp8(x.T)", "mx.to_fp8(x[:, 1:])", "mx.to_fp8(mx.array(3.0))",
    "mx.to_fp8(mx.zeros((2, 0, 3)))", "mx.to_fp8(x.astype(mx.float16))",
    "mx.to_fp8(x.astype(mx.bfloat16))",
    "mx.from_fp8(b, mx.float32)", "mx.from_fp8(b.T, mx.float16)", "mx.from_fp8(b[0, 0])",
    "mx.from_fp8(mx.zeros((0, 2), mx.uint8), mx.float32)",
    "mx.from_fp8(mx.to_fp8(x), dtype=mx.float32)",
    # errors
    "mx.to_fp8(mx.array([1, 2]))", "mx.to_fp8(mx.array([True]))",
    "mx.to_fp8(mx.array([1 + 2j]))", "mx.to_fp8(mx.array([1], mx.uint8))", "mx.to_fp8(3.0)",
    "mx.from_fp8(3)", "mx.from_fp8(mx.array([1, 2]))", "mx.from_fp8(x)",
    "mx.from_fp8(mx.array([1], mx.int8))", "mx.from_fp8(mx.array([1], mx.uint16))",
    "mx.from_fp8(b, mx.int32)", "mx.from_fp8(b, mx.complex64)", "mx.from_fp8(b, mx.uint8)",
    "mx.from_fp8(mx.array([1], mx.int32), mx.int32)",
])
def test_same_as_mlx(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP), expr


def test_float64_goes_through_float32():
    """MLX's CPU kernels read float64 buffers as float32 (bytes of no meaning): ember rounds
    to float32 first, so its bytes are MLX's for the float32 values; decoding to float64
    gives the float32 decoding's values."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal(2000) * rng.choice([1e-3, 1.0, 300.0], 2000)
    ours = _bytes(mx, mx.array(x, mx.float64))
    np.testing.assert_array_equal(ours, _bytes(mlx, mlx.array(x.astype(np.float32))))
    codes = np.arange(256, dtype=np.uint8)
    wide = np.array(mx.from_fp8(mx.array(codes), mx.float64))
    np.testing.assert_array_equal(wide, np.array(mlx.from_fp8(mlx.array(codes), mlx.float32)))


def test_vmap_maps_where_mlx_refuses():
    """MLX has no vmap rule for either conversion (it raises); ember's ops map."""
    x = (np.random.default_rng(11).standard_normal((4, 6)) * 100).astype(np.float32)
    with pytest.raises(ValueError, match="Not implemented for ToFP8"):
        mlx.vmap(mlx.to_fp8)(mlx.array(x))
    np.testing.assert_array_equal(np.array(mx.vmap(mx.to_fp8)(mx.array(x))),
                                  np.array(mlx.to_fp8(mlx.array(x))))


def test_ml_dtypes_rounds_like_mlx_below_464_only():
    """Why ml_dtypes' float8_e4m3fn is not used: the same format and round-to-nearest-even
    below 464, but it encodes larger magnitudes, infinities and NaN as NaN (0x7f), where MLX
    saturates to 448 (0x7e)."""
    x = np.random.default_rng(12).standard_normal(20000) * 50
    x = np.concatenate([x, [463.9, -463.9, 0.0, 2.0 ** -10]])
    x = x.astype(np.float32)
    small = np.abs(x) < 464
    ml = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    theirs = _bytes(mlx, mlx.array(x))
    np.testing.assert_array_equal(ml[small], theirs[small])
    big = np.array([465.0, 1e6, np.inf, np.nan], np.float32)
    assert (big.astype(ml_dtypes.float8_e4m3fn).view(np.uint8) & 0x7F == 0x7F).all()
    assert (_bytes(mlx, mlx.array(big)) == 0x7E).all()
    np.testing.assert_array_equal(_bytes(mx, mx.array(big)), _bytes(mlx, mlx.array(big)))
