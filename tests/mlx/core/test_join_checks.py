"""mx.concatenate and mx.stack check their arguments as MLX 0.32.4 does (no arrays, axis,
ranks and shapes, in MLX's order and with its messages); the empty-sequence failure of
an RNN over zero steps is the same stack error."""

import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")
mlx_nn = pytest.importorskip("mlx.nn")

SETUP = "z = lambda *shape: mx.zeros(shape)"


@pytest.mark.parametrize("call", [
    "mx.concatenate([])",
    "mx.concatenate([], axis=None)",
    "mx.concatenate([z(2, 3)], axis=5)",                  # one array: handed back unchecked
    "mx.concatenate([z(2, 3), z(2, 3)], axis=-3)",
    "mx.concatenate([z(2), z(3, 1)])",
    "mx.concatenate([z(), z()])",
    "mx.concatenate([z(2, 3), z(3, 4), z(2, 4)], axis=1)",
    "mx.concatenate([z(2, 3), z(2, 4)], axis=None).shape",
    "mx.concatenate([z(2), mx.zeros(2, mx.int8), mx.zeros(2, mx.float16)]).dtype",
    "mx.stack([])",
    "mx.stack([], axis=1)",
    "mx.stack([z(2), z(3)], axis=7)",                      # shapes before the axis
    "mx.stack([z(2)], axis=2)",
    "mx.stack([z(2, 3)], axis=-4)",
    "mx.stack([z(), mx.zeros((), mx.int8)], axis=-1)",
])
def test_errors_and_results_are_mlxs(call):
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_a_recurrent_layer_over_no_steps_fails_as_mlxs(name):
    def run(m, nn_):
        try:
            getattr(nn_, name)(3, 4)(m.zeros((2, 0, 3)))
            return "ok"
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            return type(e).__name__, str(e)

    assert run(mx, nn) == run(mlx, mlx_nn)
