"""`x[mask] = values` with a boolean array as the index, against MLX 0.32.4: the mask
over x's leading axes, values broadcast to x or taken in order as rows, cast to x's
dtype; MLX's errors for a mask of another shape, values of the wrong shape, and too few
values."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("x = mx.zeros((3, 3)); y = mx.zeros((3,), mx.int32); z = mx.zeros((2, 2, 2));"
         "B = mx.array([True, False, True]);"
         "M = mx.array([[True, False, True], [False, False, True], [True, True, False]])")


@pytest.mark.parametrize("stmt", [
    "x[B] = 1", "x[B] = 1.5", "y[B] = 2.7", "x[M] = 2", "x[mx.array(True)] = 4",
    "x[B] = mx.array([5., 6., 7.])",  # broadcast to x, then taken in order
    "y[B] = mx.array([1, 2, 3])",
    "x[M] = mx.array([1., 2., 3., 4., 5.])", "x[M] = mx.arange(1, 8)",  # extra values unused
    "x[B] = mx.array([[5., 6., 7.], [1, 2, 3]])", "x[B] = mx.arange(9).reshape(3, 3)",
    "x[B] = mx.arange(2).reshape(2, 1)",
    "z[mx.array([[True, False], [False, True]])] = mx.array([7, 8])",
    # errors
    "x[B[None]] = 3", "x[mx.array([True, False])] = 1", "x[mx.zeros((3, 3, 3), mx.bool_)] = 1",
    "x[M] = mx.arange(9).reshape(3, 3)", "x[M] = mx.array([[1.]])", "x[B] = mx.array([1, 2])",
    "x[M] = mx.array([1., 2., 3.])", "x[B] = mx.array([[1., 2., 3.]])",
])
def test_masked_writes(stmt):
    # (MLX raises "not enough elements" when the result is evaluated; ember at the write:
    # compared here after both)
    setup = (f"{SETUP}\ntry:\n    {stmt}\n    r = (x.tolist(), y.tolist(), z.tolist())\n"
             "except Exception as e:\n    r = (type(e).__name__, str(e))")
    assert outcome("r", mx, setup) == outcome("r", mlx, setup)
