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
