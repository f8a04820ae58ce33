"""`mx.set_printoptions`, `get_printoptions` and `printoptions` against MLX 0.32.4: the
reprs they give, their scoping (global, copy, context manager) and their errors."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

NAN, INF = float("nan"), float("inf")
ARRAYS = [  # (values, dtype name)
    ([1.23456789, 100.5, 1e-5, 123456789.0, -0.0, 2.0, 0.125], "float32"),
    ([NAN, -NAN, INF, -INF, 1e20, 2.5, 0.125], "float32"),
    ([[1.5, 2.0], [3.0, 4.0]], "float32"),
    (3.14159265, "float32"),
    ([1.5, 2.5, -0.25], "float16"),
    ([1.234567], "bfloat16"),
    ([1.23456789], "float64"),
    ([1 + 2.5j, 1 - 2.5j, -1 + 0.25j], "complex64"),
    # (NaN's sign and -0 in each part: MLX writes "+" before an imaginary part that is not
    # below zero, so `0+-0j`, `1+-nanj`)
    ([complex(NAN, 0), complex(0, NAN), complex(-NAN, 0), complex(0, -NAN)], "complex64"),
    ([complex(-0.0, -0.0), complex(0, -0.0), complex(-NAN, -NAN), complex(1, -1)], "complex64"),
    (complex(NAN, -0.0), "complex64"),
    ([1, 2], "int32"),
    ([True, False], "bool_"),
]


@pytest.fixture(autouse=True)
def _default_options():
    """Each test starts and ends with the default options on both sides."""
    mx.set_printoptions()
    mlx.set_printoptions()
    yield
    mx.set_printoptions()
    mlx.set_printoptions()


def _reprs(m) -> list:
    return [repr(m.array(v, getattr(m, d))) for v, d in ARRAYS]


@pytest.mark.parametrize("precision", [-1, 0, 1, 3, 8, 12, -5])
def test_reprs_at_each_precision_match_mlx(precision):
    mx.set_printoptions(precision=precision)
    mlx.set_printoptions(precision=precision)
    assert mx.get_printoptions().precision == mlx.get_printoptions().precision == precision
    assert _reprs(mx) == _reprs(mlx)


def test_context_manager_scopes_and_restores_like_mlx():
    for m in (mx, mlx):
        m.set_printoptions(precision=4)
        ctx = m.printoptions(precision=1)
        assert m.get_printoptions().precision == 4  # nothing happens before entering
        with ctx:
            assert m.get_printoptions().precision == 1
            with m.printoptions():
                assert m.get_printoptions().precision == -1
            assert m.get_printoptions().precision == 1
        assert m.get_printoptions().precision == 4
        with pytest.raises(KeyError), m.printoptions(precision=2):
            raise KeyError
        assert m.get_printoptions().precision == 4
    with mx.printoptions(precision=2), mlx.printoptions(precision=2):
        assert _reprs(mx) == _reprs(mlx)


def test_get_printoptions_is_a_copy():
    for m in (mx, mlx):
        options = m.get_printoptions()
        options.precision = 5
        assert m.get_printoptions().precision == -1
        assert m.PrintOptions().precision == -1
        assert type(options).__name__ == "PrintOptions"
        assert type(options).__module__ == "mlx.core"


def test_accepted_precisions():
    for value, expected in [(True, 1), (np.int64(3), 3), (-(2**31), -(2**31))]:
        for m in (mx, mlx):
            m.set_printoptions(precision=value)
            assert m.get_printoptions().precision == expected


@pytest.mark.parametrize("call", [
    lambda m: m.set_printoptions(precision="a"),
    lambda m: m.set_printoptions(precision=2.5),
    lambda m: m.set_printoptions(precision=None),
    lambda m: m.set_printoptions(precision=2**31),
    lambda m: m.printoptions(precision="a"),
])
def test_type_errors_match_mlx(call):
    with pytest.raises(TypeError) as ours:
        call(mx)
    with pytest.raises(TypeError) as theirs:
        call(mlx)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("expr", [
    'f"{mx.array(3.5)}"', 'f"{mx.array(3.5):.3f}"', 'f"{mx.array(7):>5}"',
    'f"{mx.array([1.5, 2])}"', 'f"{mx.array([2.25]):.3f}"', '"{}".format(mx.array(True))',
    'f"{mx.array(3.5, mx.float16)}"', 'f"{mx.array(1e-8)}"', 'f"{mx.array(2.0, mx.bfloat16):.2f}"',
    'f"{mx.array(1 + 2j)}"', 'f"{mx.array([1, 2]).sum()}"',
    'f"loss {mx.mean(mx.array([1.0, 2.0])):.4f}"',
])
def test_format_matches_mlx(expr):
    """A 0-d array formats as its item (`f"{loss}"` in a training loop), others as their
    repr; a format spec on those is refused."""
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "-mx.array([0j, 1+0j])",
    "mx.conj(mx.array([0j, 1+0j, complex(1, float('nan'))]))",
    "mx.array([1, 0, -1]).astype(mx.complex64) * -1",
    "mx.array([0j]) / 0",
    "mx.array([1j, -1j]) * mx.array([1j, 1j])",
    "mx.array([1.0, -0.0, float('nan'), -float('nan')]).astype(mx.complex64)",
    "mx.exp(mx.array([complex(float('inf'), float('inf'))]))",
])
def test_complex_signs_print_as_mlx(expr):
    assert outcome(expr, mx) == outcome(expr, mlx), expr


@pytest.mark.parametrize("expr", [
    "mx.array([-float('nan'), float('nan')]).astype(mx.bfloat16)",
    "-mx.array([float('nan'), 1.5], dtype=mx.bfloat16)",
    "mx.log(mx.array([-1.0], dtype=mx.bfloat16))",
    "mx.array([0.0, 1.0], dtype=mx.bfloat16) / 0",
    "mx.array([7.0, -7.0], dtype=mx.bfloat16) % 0",
    "mx.array([0.0], dtype=mx.float16) / 0",
    "-mx.array([float('nan')], dtype=mx.float16)",
])
def test_nan_signs_print_as_mlx(expr):
    # (MLX's bfloat16 NaN is always positive; float16's and float32's keep their sign)
    assert outcome(expr, mx) == outcome(expr, mlx), expr
