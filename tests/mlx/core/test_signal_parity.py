"""What examples/mlx/signal_processing.py found ember's MLX face doing otherwise than
MLX 0.32.4, each as a class: `isclose` / `allclose` / `isposinf` / `isneginf` of complex
arrays, `as_strided` of a slice (its offset counts from the slice's start) and with
negative strides, `convolve` of an empty input, and the `pad_width` types `pad`'s binding
refuses. Every case is compared with MLX in-process."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

# +-inf with and without an imaginary part, inf in the imaginary part, NaN in each part,
# and finite numbers
VALUES = ("complex(INF, 0), complex(INF, 1), complex(1, INF), complex(-INF, 0), "
          "complex(NAN, 0), complex(1, NAN), 0j, complex(1, 2), complex(1, 2.00001)")
SETUP = f"INF, NAN = float('inf'), float('nan'); V = mx.array([{VALUES}]); n = 9"


@pytest.mark.parametrize("call", [
    "mx.isinf(V)", "mx.isnan(V)", "mx.isfinite(V)", "mx.isposinf(V)", "mx.isneginf(V)",
    # every pair: magnitudes on both sides of the inequality, then the corrections for
    # +-inf (only +-inf+0j counts) and for NaN
    "mx.isclose(mx.repeat(V, n), mx.tile(V, n))",
    "mx.isclose(mx.repeat(V, n), mx.tile(V, n), equal_nan=True)",
    "mx.isclose(mx.repeat(V, n), mx.tile(V, n), rtol=0.0, atol=1e-5)",
    "mx.isclose(mx.array([-2j, 1 + 0j, 1e-7 + 0j]), mx.array([-2j, 1 + 0j, 1e-7 + 0j]) + 1e-7)",
    "mx.isclose(mx.array([1.0, 2.0]), mx.array([1 + 1e-7j, 2 + 1e-3j]))",  # real and complex
    "mx.allclose(mx.array([3 + 4j, -2j]), mx.array([3 + 4j, -2j]) + 1e-6)",
    "mx.array_equal(mx.array([complex(NAN, 1)]), mx.array([complex(NAN, 1)]), equal_nan=True)",
], ids=lambda c: c[:60])
def test_complex_closeness_and_infinities_are_mlxs(call):
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


@pytest.mark.parametrize("call", [
    "mx.as_strided(mx.arange(12)[2:], (2, 2), (3, 1))",           # from the slice's start
    "mx.as_strided(mx.arange(12)[3:], (3,), (2,), offset=1)",
    "mx.as_strided(mx.arange(24).reshape(4, 6)[1:, 2:], (2, 3), (1, 2))",  # copied first
    "mx.as_strided(mx.arange(6).reshape(2, 3).T, (3,), (1,))",
    "mx.as_strided(mx.arange(6), (3,), (-2,), offset=5)",          # negative strides
    "mx.as_strided(mx.arange(6), (2, 2), (-2, 1), offset=2)",
    "mx.as_strided(mx.arange(12)[4:], (2, 3), (-3, -1), offset=5)",
    "mx.as_strided(mx.arange(6.0), (0, 2), (-1, 1), offset=3)",
])
def test_as_strided_reads_the_array_as_mlx_does(call):
    assert outcome(call, mx) == outcome(call, mlx)


def test_as_strided_with_negative_strides_differentiates():
    # each element's gradient is 2x times the number of windows reading it (exact)
    def fn(m):
        return lambda x: (m.as_strided(x, (3, 2), (-1, 2), offset=3) ** 2).sum()
    x = np.arange(6, dtype=np.float32)
    ours = mx.grad(fn(mx))(mx.array(x))
    assert np.array(ours).tolist() == [0.0, 2.0, 4.0, 12.0, 8.0, 10.0]
    assert np.array(ours).tolist() == np.array(mlx.grad(fn(mlx))(mlx.array(x))).tolist()


def test_as_strided_out_of_the_array_refuses():
    with pytest.raises(ValueError, match="as_strided"):
        mx.as_strided(mx.arange(4), (3,), (-2,), offset=2)


@pytest.mark.parametrize("call", [
    "mx.convolve(mx.zeros((0,)), mx.ones(2))",
    "mx.convolve(mx.ones(2), mx.zeros((0,)), mode='same')",
    "mx.convolve(mx.zeros((0,)), mx.zeros((0,)), mode='nearest')",
    "mx.convolve(mx.zeros((0, 2)), mx.ones(2))",
])
def test_convolve_refuses_as_mlx_does(call):
    assert outcome(call, mx) == outcome(call, mlx)


@pytest.mark.parametrize("width", [
    "(1, 2, 3)", "[(1,), (2,)]", "[(1, 2, 3)]", "1.5", "(1.0, 2)", "[1, (1, 2)]", "None",
    "'ab'", "[(1, 2), 3]", "mx.array(1.0)",                      # refused by the binding
    "True", "np.int64(1)", "(np.int32(1), 2)", "mx.array([1, 2])", "[mx.array(1), 2]",
    "([1, 2],)", "[(True, 1)]", "range(2)", "((1, 2), [0, 1])", "()", "[]",  # taken
    "[(1, 1)] * 3",
])
@pytest.mark.parametrize("keyword", [False, True])
def test_pad_width_types_are_the_bindings(width, keyword):
    call = (f"mx.pad(mx.ones((2, 2)), pad_width={width})" if keyword
            else f"mx.pad(mx.ones((2, 2)), {width})")
    assert outcome(call, mx) == outcome(call, mlx)
