"""ember's core errors leave every mx function as MLX's exception types."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


@pytest.mark.parametrize("expr", [
    "mx.ones((2, 3)) + mx.ones((3, 2))", "mx.ones(6).reshape(4, 2)",
    "mx.ones((2, 3)) @ mx.ones((2, 3))", "mx.concatenate([mx.ones((2, 3)), mx.ones((3, 2))])",
    "mx.zeros((-1,))", "mx.ones((2, 3)).transpose(0, 0)", "mx.stack([mx.ones(2), mx.ones(3)])",
    "mx.broadcast_to(mx.ones(3), (2, 4))", "mx.ones(3).reshape(-1, -1)",
    "mx.sum(mx.ones(3), axis=3)", "mx.moveaxis(mx.ones(3), 0, 2)",
])
def test_bad_arguments_raise_mlxs_exception_types(expr):
    # (ember's core raises PyTorch's RuntimeError where MLX raises ValueError: every mx
    # function turns it into MLX's type, the message kept)
    assert outcome(expr, mx)[0] == outcome(expr, mlx)[0]


@pytest.mark.parametrize("expr", [
    "mx.ones((2, 3)) + mx.ones((3, 2))", "mx.zeros((2, 1)) * mx.zeros((3,))",
    "mx.maximum(mx.zeros(6), mx.zeros(5))", "mx.minimum(mx.zeros(6, mx.int32), mx.zeros(5))",
    "mx.remainder(mx.zeros(6, mx.int32), mx.zeros(5, mx.int32))",
    "mx.zeros(6, mx.bool_) - mx.zeros(5, mx.bool_)", "mx.arctan2(mx.zeros(6), mx.zeros(5))",
    "mx.less(mx.zeros(6, mx.complex64), mx.zeros(5, mx.complex64))",
    "mx.where(mx.zeros(6, mx.bool_), mx.zeros(5), mx.zeros(4))",
    "mx.where(mx.zeros(6, mx.bool_), mx.zeros((2, 1)), mx.zeros(4))",
    "mx.where(mx.zeros((3, 1), mx.bool_), mx.zeros((1, 5)), mx.zeros((4, 1, 1)))",
    "mx.where(mx.zeros(6, mx.bool_), 1, mx.zeros(5))",
])
def test_shapes_that_do_not_broadcast_give_mlxs_message(expr):
    assert outcome(expr, mx) == outcome(expr, mlx), expr
