"""`_arithmetic` against MLX 0.32.4: integer `%` by zero, the arithmetic of two bools and
the bitwise functions' refusal of inexact operands. Integer and bool results are compared
bit for bit (value, dtype and shape, through the repr and the raw values)."""

import itertools

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", _INTS)
def test_integer_remainder_by_zero_leaves_the_dividend(dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -1000), min(info.max, 1000), size=37).astype(dtype)
    d = np.where(np.arange(37) % 3 == 0, 0, rng.integers(1, 9, size=37)).astype(dtype)
    if info.min < 0:
        d = np.where(np.arange(37) % 2 == 0, d, -d).astype(dtype)
    ours_scope = {"mx": mx, "x": mx.array(x), "d": mx.array(d)}
    theirs_scope = {"mx": mlx, "x": mlx.array(x), "d": mlx.array(d)}
    for expr in ("x % d", "mx.remainder(x, d)", "x % 0", "mx.remainder(x, mx.array(0, x.dtype))",
                 "x[::2] % d[::2]", "x.reshape(1, 37) % d.reshape(37, 1)", "5 % d",
                 "mx.divmod(x, d + (d == 0))"):
        ours, theirs = eval(expr, ours_scope), eval(expr, theirs_scope)
        assert repr(ours) == repr(theirs), expr
        got, want = np.array(ours), np.array(theirs)
        assert got.dtype == want.dtype and np.array_equal(got, want), expr


_BOOL_SETUP = "b = mx.array([True, False, True, False]); c = mx.array([True, True, False, False])"
# every pair of truth values, through each operator and function MLX takes two bools by
BOOL_OPS = [f"b {op} c" for op in ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<",
                                   ">>")]
BOOL_OPS += [f"{left} {op} {right}" for op in ("-", "%", "**", "<<", ">>")
             for left, right in (("b", "True"), ("True", "b"), ("b", "False"), ("b", "2"),
                                 ("b", "2.5"), ("b", "mx.array([3, -2, 0, 5])"))
             if not (op in ("<<", ">>") and left == "True")]
BOOL_OPS += [f"mx.{fn}(b, c)" for fn in ("add", "subtract", "multiply", "floor_divide",
                                          "remainder", "power", "left_shift", "right_shift",
                                          "maximum", "minimum", "bitwise_xor")]
BOOL_OPS += ["mx.negative(b)", "-b", "~b", "abs(b)", "mx.divmod(b, c)", "True & b", "3 | b",
             "1 ^ b", "b & True", "np.int32(3) & mx.array([3, -2, 0, 5])",
             "np.float32(2) * b", "np.array([1.0, 2.0, 3.0, 4.0]) + b"]


@pytest.mark.parametrize("expr", BOOL_OPS)
def test_bool_arithmetic_as_mlx(expr):
    assert outcome(expr, mx, _BOOL_SETUP) == outcome(expr, mlx, _BOOL_SETUP), expr


REFUSED = [f"mx.{fn}({a}, {b})" for fn, (a, b) in itertools.product(
    ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"),
    (("mx.array([1])", "2.5"), ("mx.array([1.5])", "2"), ("True", "1.0"),
     ("mx.array([1], mx.int8)", "mx.array([1.5], mx.float16)"), ("mx.array([1+1j])", "1"),
     ("mx.array([1.0])", "mx.array([1])"), ("mx.array([3])", "mx.array([1], mx.uint8)")))]
REFUSED += ["mx.remainder(mx.array([1+1j]), 2)", "mx.array([1.5+1j]) % mx.array(2+0j)",
            "mx.array([1.0]) & 1", "mx.array([1]) << 1.0"]


@pytest.mark.parametrize("expr", REFUSED)
def test_bitwise_and_complex_refusals_as_mlx(expr):
    assert outcome(expr, mx) == outcome(expr, mlx), expr


@pytest.mark.parametrize("expr", [
    "mx.floor(mx.array([1j]))", "mx.ceil(mx.array([1j]))", "mx.trunc(mx.array([1j]))",
    "mx.round(mx.array([1.5+2.5j]), 1)", "mx.round(mx.array([[1.5+2.5j, 0.5-0.5j]]))",
    # (each part rounded as it is: a NaN beside a number stays beside it)
    "mx.round(mx.array([complex(n, 0), complex(0, n), complex(-n, 1), complex(-0.0, -0.0),"
    " complex(0, -0.0), complex(inf, 0), complex(-inf, n), complex(1.5, -1.5)]))",
])
def test_rounding_complex_as_mlx(expr):
    setup = "n = float('nan'); inf = float('inf')"
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup), expr


@pytest.mark.parametrize("dtype", _INTS)
def test_integer_power_is_zero_for_negative_exponents(dtype):
    # MLX's integer kernel returns 0 for a negative exponent whatever the base (1 ** -1 too)
    # (NOTE: uint64 ** -1, the Python -1 wrapped to 2**64 - 1 by MLX, is still 0 here: the
    # operands of a uint64 array and a Python int reach the kernel as int64)
    unsigned = dtype.startswith("u")
    base = [253, 254, 255, 0, 1, 2, 3, 5, 7] if unsigned else [-3, -2, -1, 0, 1, 2, 3, 5, 7]
    exps = [2, 3, 4, 0, 1, 2, 3, 4, 4] if unsigned else [-3, -2, -1, 0, 1, 2, 3, -1, 4]
    scope = (f"b = mx.array(np.array({base}, dtype={dtype!r})); "
             f"e = mx.array(np.array({exps}, dtype={dtype!r}))")
    negative = () if dtype == "uint64" else ("b ** -1", "mx.power(b, -2)", "(-1) ** e")
    for expr in ("b ** e", "mx.power(b, e)", *negative,
                 "b.astype(mx.int32) ** e.astype(mx.int8)", "b[:, None] ** e[None, :3]",
                 "mx.power(b, e[::-1])", "b ** mx.array(-1)"):
        ours, theirs = outcome(expr, mx, scope), outcome(expr, mlx, scope)
        assert ours == theirs, expr


@pytest.mark.parametrize("expr", ["mx.power(mx.array([True, False]), -1)",
                                  "mx.array([True, False]) ** mx.array([True, False])",
                                  "mx.power(mx.array([1.0, -2.0]), mx.array([-1, -2]))",
                                  "mx.array([1, 2]) ** mx.array([-1.0, 0.5])"])
def test_power_of_bools_and_floats_with_negative_exponents(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)
