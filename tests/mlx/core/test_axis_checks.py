"""The shape functions' argument checks (`_axis_checks`) against MLX 0.32.4: broadcast_to
and full (negative sizes, shapes that do not broadcast or would widen the target),
moveaxis / swapaxes, expand_dims and squeeze (axes out of range, given twice, not of size
1), flatten's clipped axes, unflatten, tril / triu, eye and the creation functions'
negative sizes. The same result, or the same exception and message, as MLX's."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "x = mx.ones((2, 3)); v = mx.ones((3,)); s = mx.array(1.0)"


@pytest.mark.parametrize("expr", [
    "mx.broadcast_to(x, (3, 3))", "mx.broadcast_to(x, (3,))", "mx.broadcast_to(x, ())",
    "mx.broadcast_to(x, (2, 4))", "mx.broadcast_to(x, (-1,))", "mx.broadcast_to(v, (2, -1))",
    "mx.broadcast_to(v, (2, 0))", "mx.broadcast_to(mx.ones((1, 3)), (3, 1))",
    "mx.broadcast_to(x, (4, 2, 3))", "mx.broadcast_to(s, (2, 0))",
    "mx.full((2, 2), mx.array([1, 2, 3]))", "mx.full((2,), mx.ones((2, 2)))",
    "mx.full((2, -1), 3)", "mx.full((2, 2, -1), mx.array([1, 2, 3]))",
    "mx.zeros((2, -1))", "mx.ones(-3, dtype=mx.int32)", "mx.full((2, 3), v)",
])
def test_broadcast_and_full(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.moveaxis(x, 0, 4)", "mx.moveaxis(x, 5, 9)", "mx.moveaxis(x, -3, 0)",
    "mx.moveaxis(x, 0, -3)", "mx.moveaxis(s, 0, 0)", "mx.moveaxis(x, -1, 0)",
    "mx.swapaxes(x, 5, 4)", "mx.swapaxes(x, 0, -3)", "mx.swapaxes(x, -1, 0)",
])
def test_moved_axes(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.expand_dims(x, 3)", "mx.expand_dims(x, 2)", "mx.expand_dims(x, -4)",
    "mx.expand_dims(x, -3)", "mx.expand_dims(x, (0, 5))", "mx.expand_dims(x, (0, -4))",
    "mx.expand_dims(x, (0, 0, 9))", "mx.expand_dims(x, (3, 0, -1))", "mx.expand_dims(s, (0, -1))",
    "mx.squeeze(mx.ones((1, 3)), 5)", "mx.squeeze(mx.ones((1, 3)), -3)",
    "mx.squeeze(x, -2)", "mx.squeeze(mx.ones((1, 3)), (0, 0))",
    "mx.squeeze(mx.ones((1, 3)), (0, -2))", "mx.squeeze(mx.ones((1, 3)), (1, 7))",
    "mx.squeeze(mx.ones((1, 3)), (7, 1))", "mx.squeeze(mx.ones((1, 3)), (0, 0, 1))",
    "mx.squeeze(s, 0)", "mx.squeeze(mx.ones((1, 1, 3)), (-3, 1))",
])
def test_expand_and_squeeze(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.flatten(mx.ones((2, 3, 4)), 2, 1)", "mx.flatten(mx.ones((2, 3, 4)), 0, 3).shape",
    "mx.flatten(mx.ones((2, 3, 4)), 3, 3)", "mx.flatten(mx.ones((2, 3, 4)), -4, 1).shape",
    "mx.flatten(mx.ones((2, 3, 4)), -5, -4)", "mx.flatten(mx.ones((2, 3, 4)), -9, 9).shape",
    "mx.flatten(mx.ones((2, 3, 4)), 1, -3)", "mx.flatten(s, 0, 5)",
    "mx.unflatten(x, 1, (4, -1))", "mx.unflatten(x, -1, (4, 5))", "mx.unflatten(x, 1, (-1, -1))",
    "mx.unflatten(x, 2, (3, 1))", "mx.unflatten(x, -3, (3, 1))", "mx.unflatten(x, 7, ())",
    "mx.unflatten(s, 0, (1,))", "mx.unflatten(x, -1, (3, -1)).shape",
])
def test_flatten_and_unflatten(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.tril(v)", "mx.triu(s)", "mx.tril(x, k=-9)", "mx.eye(-1)", "mx.eye(2, -1)",
    "mx.identity(-2)", "mx.eye(0)", "mx.eye(2, 3, k=9)",
])
def test_matrices(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.diag(mx.ones((2, 2, 2)))", "mx.diag(s)", "mx.diagonal(v)", "mx.diagonal(s)",
    "mx.diagonal(x, 0, 0, 0)", "mx.diagonal(x, 0, 0, 5)", "mx.diagonal(x, 0, -3, 0)",
    "mx.diagonal(x, 0, 0, -2)", "mx.diagonal(x, 1, -1, 0)", "mx.trace(v)", "mx.trace(s)",
    "mx.trace(x, 0, 0, 0)", "mx.trace(x, 0, 5, 0)", "mx.trace(x, 0, 0, 5)",
    "mx.trace(x, 1, -1, -2)",
])
def test_diagonals(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.repeat(v, -1)", "mx.repeat(v, 2, axis=1)", "mx.repeat(v, 2, axis=-2)",
    "mx.repeat(s, 2, axis=0)", "mx.repeat(s, 2)", "mx.repeat(v, -1, axis=5)",
    "mx.repeat(x, 2, axis=-1)", "mx.tile(v, -1)", "mx.tile(v, (2, -1))", "mx.tile(v, ())",
])
def test_repeat_and_tile(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("expr", [
    "mx.slice(x, mx.array([[0.5]]), axes=(0,), slice_size=(1, 3))",
    "mx.slice(x, mx.array([0.5, 1]), axes=(0,), slice_size=(1,))",
    "mx.slice(x, mx.array([0.5]), axes=(7,), slice_size=(1,))",
    "mx.slice(x, mx.array([True]), axes=(0,), slice_size=(1, 3))",
    "mx.slice(x, mx.array([0]), axes=(7,), slice_size=(9, 3))",
    "mx.slice(x, mx.array([0]), axes=(-3,), slice_size=(2, 2))",
    "mx.slice(x, mx.array([0, 0]), axes=(0, -2), slice_size=(2, 2))",
    "mx.slice(x, mx.array([0]), axes=(0,), slice_size=(1,))",
    "mx.slice(x, mx.array([0]), axes=(0,), slice_size=(3, 3))",
    "mx.slice(x, mx.array(0), axes=(0,), slice_size=(1, 3))",
    "mx.slice(x, mx.array([1], mx.uint8), axes=(-1,), slice_size=(2, 2))",
    "mx.slice(mx.arange(6).reshape(2, 3), mx.array([1, 1]), axes=[1, 0], slice_size=[1, 2])",
])
def test_slice(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
