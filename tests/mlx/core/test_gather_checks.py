"""take, take_along_axis and put_along_axis check their axis, their indices' rank and type
and the broadcast of the other axes as MLX 0.32.4 does: the same exception and message
(before this, ember read float and boolean indices as integers and wrote along a wrapped
axis)."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


@pytest.mark.parametrize("expr", [
    "mx.take(mx.zeros((2, 3)), mx.zeros((2, 1)), axis=-1)",
    "mx.take(mx.zeros((2, 3)), mx.zeros((2,)))",
    "mx.take(mx.zeros((2, 3)), mx.array(1.5))",
    "mx.take(mx.zeros((2, 3)), mx.array([True]), axis=-1)",
    "mx.take(mx.zeros((2, 3)), mx.zeros((2, 1), mx.int32), axis=2)",
    "mx.take(mx.zeros((2, 3)), mx.zeros((2,)), axis=-3)",  # the axis before the type
    "mx.take(mx.zeros((2, 3)), mx.array([True]), axis=2)",
    "mx.take(mx.arange(6).reshape(2, 3), mx.array([2, 0], mx.uint8), axis=1)",
    "mx.take(mx.arange(6).reshape(2, 3), 1.5, axis=-1)",
])
def test_take(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((1,), mx.int32), axis=1)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.int32), axis=None)",
    "mx.take_along_axis(mx.arange(6).reshape(2, 3), mx.array([5, 0]), axis=None)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.int32), axis=2)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((1,)), axis=-3)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((3, 1), mx.int32), axis=1)",
    "mx.take_along_axis(mx.zeros((2, 3, 4)), mx.zeros((3, 1, 5), mx.int32), axis=1)",
    "mx.take_along_axis(mx.zeros((2, 3, 4)), mx.zeros((2, 7, 3)), axis=1)",
    "mx.take_along_axis(mx.zeros((2, 3, 4)), mx.zeros((1, 7, 4), mx.int32), axis=1).shape",
    "mx.take_along_axis(mx.arange(6).reshape(2, 3), mx.array([[2], [-1]]), axis=1)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.zeros((1,), mx.int32), mx.ones(1), axis=1)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.int32), mx.ones(1), axis=None)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.int32), mx.ones(1), axis=2)",
    "mx.put_along_axis(mx.zeros((2, 3, 4)), mx.zeros((2, 7, 3), mx.int32), mx.ones(1), axis=1)",
    "mx.put_along_axis(mx.zeros((2, 3, 4)), mx.zeros((2, 1, 4), mx.int32), mx.ones((5,)), axis=1)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.array([[2], [0]], mx.uint8), mx.ones(1), axis=1)",
])
def test_along_axis_shapes_and_axes(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1)), axis=-1)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.bool_), axis=-1)",
    "mx.take_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.float16), axis=-1)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1)), mx.ones((2, 1)), axis=-1)",
    "mx.put_along_axis(mx.zeros((2, 3)), mx.zeros((2, 1), mx.bool_), mx.ones((2,1)), axis=-1)",
])
def test_along_axis_refuses_non_integer_indices(expr):
    # NOTE: MLX raises this RuntimeError when the result is evaluated (its CPU kernel's
    # error); ember raises it at the call, so this compares the evaluated result
    assert outcome(f"({expr}).tolist()", mx) == outcome(f"({expr}).tolist()", mlx)


# NOTE: MLX takes an int index as a one-wide slice then a squeeze, so the slice's bound
# rules decide what is refused: -1 (its stop wraps to 0) and anything out of range end in
# the squeeze's error; an int that does not fit a C++ int fails nanobind's cast
TAKE_INT = [f"mx.take(x, {i}{axis})" for i in (0, 1, 2, 3, 5, 6, -1, -2, -3, -4, -6, -7)
            for axis in ("", ", axis=0", ", axis=1", ", axis=-1", ", axis=-2")]
TAKE_INT += [
    "mx.take(x, 0, axis=2)", "mx.take(x, 0, axis=-3)", "mx.take(x, True, axis=1)",
    "mx.take(x, 2**31, axis=0)", "mx.take(x, 2**31 - 1, axis=0)", "mx.take(x, -2**31 - 1)",
    "mx.take(x, -2**31)", "mx.take(mx.array(5), 0)", "mx.take(mx.array(5), -1)",
    "mx.take(mx.array(5), 0, axis=0)", "mx.take(mx.zeros((0,)), 0)",
    "mx.take(mx.zeros((2, 0)), 0, axis=0)", "mx.take(mx.zeros((0, 3)), 0, axis=1)",
    # array indices from an empty axis
    "mx.take(mx.zeros((0, 3)), mx.array([0]), axis=0)", "mx.take(mx.zeros((0,)), mx.array([1]))",
    "mx.take(mx.zeros((0, 3)), mx.array([], mx.int32), axis=0)",
    "mx.take(mx.zeros((0, 3)), mx.array([1]), axis=1)",
    # under transforms
    "mx.vmap(lambda v: mx.take(v, 1))(x)", "mx.vmap(lambda v: mx.take(v, -1))(x)",
    "mx.compile(lambda v: mx.take(v, 2, axis=1))(x)",
    "mx.grad(lambda v: mx.take(v, 1, axis=1).sum())(x.astype(mx.float32))",
]


@pytest.mark.parametrize("expr", TAKE_INT)
def test_take_int_index(expr):
    setup = "x = mx.arange(6).reshape(2, 3)"
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup)
