"""Reading and writing with indices MLX 0.32.4 refuses: float arrays and lists (a gather
or scatter error, by which one the index is for), booleans among several indices, float
scalars and NumPy arrays. The same exception and message as MLX's."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "x = mx.zeros((3, 3)); B = mx.array([True, False, True])"


@pytest.mark.parametrize("expr", [
    "x[mx.zeros((2,))]", "x[mx.zeros((2,), mx.float16)]", "x[mx.zeros((2,), mx.complex64)]",
    "x[mx.zeros((2,)), 0]", "x[0, mx.zeros((2,))]", "x[:, mx.zeros((2,))]", "x[[0.0, 1.0]]",
    "x[B]", "x[B, ]", "x[B, 0]", "x[0, B]", "x[mx.zeros((2,)), B]",
    "x[1.5]", "x[np.zeros(2)]", "x[np.zeros(2, np.int64)]",
    "x[mx.array([0, 2], mx.uint8)]", "x[mx.array([0, 1], mx.int8), 1]",
    # the parts' types, then one Ellipsis at most, then no more indices than axes
    "x[0, 'a']", "x[(0, 1), 0]", "x[0, True]", "x[True]", "x['a']", "x[..., 0, ...]",
    "x[0, 0, ..., ...]", "x[0, 0, 0]", "x[:, :, :]", "x[None, 0, 0, 0]",
    "x[0, 0, 0, B]", "x[np.int64(1), 0]", "mx.array(1)[0]", "mx.array(1)[:]",
    "mx.array(1)[0, ]", "mx.array(1)[...]", "mx.array(1)[None]",
])
def test_reads(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "x.at[mx.zeros((2,))].add(1)", "x.at[mx.zeros((2,)), ].multiply(2)",
    "x.at[mx.zeros((2,))].maximum(1)", "x.at[mx.zeros((2,))].set(1)", "x.at[[0.0]].add(1)",
    "x.at[1.5].add(1)", "x.at[np.zeros(2)].add(1)", "x.at[mx.array([0, 0])].add(1)",
])
def test_scatters(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("stmt", [
    "x[mx.zeros(2)] = 1", "x[[0.5]] = 1", "x[1.5] = 1", "x[np.zeros(2)] = 1", "x[B] = 1",
    "x[mx.array([2])] = 1", "x[0, 0, 0] = 1", "x[..., ...] = 1", "x['a'] = 1",
    "x[(0, 1), ] = 1", "x[True] = 2", "x[0, True] = 2",
])
def test_writes(stmt):
    assert outcome("x", mx, f"{SETUP}\ntry:\n    {stmt}\nexcept ValueError as e:\n    x = str(e)") \
        == outcome("x", mlx, f"{SETUP}\ntry:\n    {stmt}\nexcept ValueError as e:\n    x = str(e)")
