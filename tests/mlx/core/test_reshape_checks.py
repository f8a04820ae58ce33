"""mx.reshape (and the array method) infer one -1 and fail as MLX 0.32.4 does: its
messages, the inferred size shown in them, and its unsigned count of the known sizes."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


@pytest.mark.parametrize("call", [
    "mx.zeros((2, 4, 5)).reshape(2, -1, 3)",                  # the inferred 6 in the message
    "mx.reshape(mx.zeros((40,)), (2, -1, 3, 1))",
    "mx.reshape(mx.zeros((40,)), (-1, -1))",
    "mx.reshape(mx.zeros((40,)), (3, 7))",
    "mx.reshape(mx.zeros((0,)), (0, -1))",
    "mx.reshape(mx.zeros((6,)), (0, -1))",
    "mx.reshape(mx.zeros((40,)), (-2, 20))",
    "mx.reshape(mx.zeros((40,)), (-1, 80))",
    "mx.reshape(mx.zeros((40,)), (-2, -1))",
    "mx.reshape(mx.zeros((0, 3)), (3, 0))",
    "mx.reshape(mx.arange(6), (-1, 2))",
    "mx.reshape(mx.arange(6), [3, -1])",
    "mx.arange(6).reshape(())",
    "mx.array(5).reshape(-1)",
])
def test_reshape_is_mlxs(call):
    assert outcome(call, mx) == outcome(call, mlx)
