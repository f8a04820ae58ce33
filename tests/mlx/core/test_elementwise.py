"""The elementwise functions of `_elementwise` against MLX 0.32.4: reprs (dtype and six
significant digits) or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, outcome

mlx = pytest.importorskip("mlx.core")

def _run(expr: str, module):
    return outcome(expr, module, SMALL)


CASES = [
    "mx.trunc(f)",
    "mx.trunc(a)",
    "mx.trunc(mx.array([-0.5, 2.7], mx.float16))",
    "mx.real(a)",
    "mx.imag(a)",
    "mx.real(mx.array([1 + 2j, -3j]))",
    "mx.imag(mx.array([1 + 2j, -3j]))",
    "mx.conj(mx.array([1 + 2j]))",
    "mx.conjugate(a)",
    "mx.positive(a)",
    "mx.isposinf(f)",
    "mx.isposinf(a)",
    "mx.isneginf(f)",
    "mx.logical_xor(a, 0)",
    "mx.logical_xor(mx.array([True, False]), mx.array([True, True]))",
    "mx.nan_to_num(f)",
    "mx.nan_to_num(f, 1.0, 2.0, -3.0)",
    "mx.nan_to_num(f.astype(mx.float16), 1.0, 2.0)",
    "mx.nan_to_num(f.astype(mx.bfloat16))",
    "mx.nan_to_num(a)",
    "mx.nan_to_num(mx.array([1 + 1j]))",
    "mx.divmod(a, 4)",
    "mx.divmod(mx.array([7.5, -7.5, 3.0]), 2)",
    "mx.divmod(7, mx.array([2, -3]))",
    "mx.bitwise_invert(a)",
    "mx.bitwise_invert(a.astype(mx.uint8))",
    "mx.bitwise_invert(x)",
    "mx.bitwise_invert(mx.array([True, False]))",
    "mx.pow(a, 2)",
    "mx.acos(mx.array([0.5]))",
    "mx.acosh(mx.array([2.0]))",
    "mx.asin(mx.array([0.5]))",
    "mx.asinh(x)",
    "mx.atan(x)",
    "mx.atanh(mx.array([0.5]))",
    "mx.atan2(x, 2.0)",
    "mx.bitwise_left_shift(a, 2)",
    "mx.bitwise_right_shift(a, 1)",
    "mx.array([1, 2]).real",
    "mx.array([1 + 2j]).imag",
    "mx.array([1 + 2j]).real",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


# objects with `__mlx_array__` (MLX's ArrayLike) where MLX's elementwise functions take them
_LIKE = ("class W:\n"
         "    def __init__(self, a): self.a = a\n"
         "    def __mlx_array__(self): return self.a\n"
         "w = W(mx.array([0.5, -1.0, float('inf')])); wi = W(mx.array([1, -2]))\n")


@pytest.mark.parametrize("expr", [
    "mx.conj(w)", "mx.imag(w)", "mx.real(w)", "mx.nan_to_num(w)", "mx.isposinf(w)",
    "mx.isneginf(w)", "mx.logical_xor(w, w)", "mx.acos(W(mx.array([0.5, -1.0])))",
    "mx.bitwise_invert(wi)",
    "mx.logical_xor(w, mx.array([True, False, False]))",
])
def test_array_likes_as_mlx(expr):
    assert outcome(expr, mx, _LIKE) == outcome(expr, mlx, _LIKE), expr


# round to decimals != 0 as MLX computes it (scale, round, unscale, in the float type;
# integers through float32), and floor division as floor(a / b) in the type
ROUNDING = [
    "mx.round(mx.array([15, 25, 35, 45, -25, -35]), -1)",
    "mx.round(mx.array([15, 25, -15, 144, 155], mx.int8), -1)",
    "mx.round(mx.array([15, 25, 144, 155], mx.uint32), -1)",
    "mx.round(mx.array([1234567891], mx.int32), -3)",
    "mx.round(mx.array([2**31 - 1], mx.int32), -1)",
    "mx.round(mx.array([True, True]), -1)",
    "mx.round(mx.array([1.25, 2.35], mx.float16), 1)",
    "mx.round(mx.array([1.25, 2.35], mx.bfloat16), 1)",
    "mx.round(mx.array([1.25 + 2.35j]), 1)",
    "mx.round(mx.array([1.5 + 2.5j]))",
    "mx.round(mx.array([0.125, 0.375, 2.675, 3.14159]), 2).tolist()",
    "mx.round(mx.array([0.1, 0.35, 2.675], mx.float16), 2).tolist()",
    "mx.array(7., mx.float16) // 0.035",
    "mx.array(7., mx.bfloat16) // 0.035",
    "mx.array(7., mx.float32) // 0.035",
    "mx.array([0.3, 0.7, 1.0]) // 0.1",
    "mx.array([7., -7., 1.], mx.bfloat16) // mx.array(0.1, mx.bfloat16)",
    "mx.floor_divide(mx.array([float('inf'), -float('inf')]), 2.0)",
    "mx.array(-5.0) // float('inf')",
    "mx.array(float('inf'), mx.float16) // 2.0",
    "mx.array([7, -7, 0], mx.int32) // 0",
    "mx.array([1 + 1j, 3 - 2j]) // (1 + 1j)",
    "mx.floor_divide(mx.array([True, False]), mx.array([True, True]))",
    "7.0 // mx.array([2, -2, 0])",
]


@pytest.mark.parametrize("expr", ROUNDING)
def test_rounding_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr
