"""The `stream=` of the `mx.fast` functions, against MLX 0.32.4: None is the default
stream, a GPU is refused (after MLX's own checks of the other arguments), a CPU index past
the one device is MLX's range error, and a stream of the wrong type the binding's
TypeError."""

import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")
from mlx_oracle import outcome  # noqa: E402

SETUP = ("x = mx.ones((1, 2, 3, 4)) * 0.5; t = mx.zeros((1, 2, 3), mx.int32);"
         "sdpa = mx.fast.scaled_dot_product_attention")
CALLS = [
    "mx.fast.rms_norm(x, None, 1e-5, {s})",
    "mx.fast.layer_norm(x, None, None, 1e-5, {s})",
    "mx.fast.rope(x, 4, traditional=False, base=1e4, scale=1.0, offset=0, {s})",
    "sdpa(x, x, x, scale=1.0, {s})",
    "mx.fast.cross_entropy(x, t, {s})",
    "mx.fast.gated_delta_update(x, x, x, x[..., 0], x[..., 0], {s})",
]
BAD_ARGS = [
    "mx.fast.rms_norm(x, mx.ones(7), 1e-5, {s})",
    "mx.fast.layer_norm(x.astype(mx.int32), None, None, 1e-5, {s})",
    "mx.fast.rope(x, 3, traditional=False, base=1e4, scale=1.0, offset=0, {s})",
    "sdpa(x, x[..., :3], x, scale=1.0, {s})",
    "mx.fast.cross_entropy(x, x, {s})",
    "mx.fast.gated_delta_update(x[0], x, x, x, x, {s})",
]
STREAMS = ["stream=None", "stream=mx.cpu", "stream=mx.new_stream(mx.cpu)",
           "stream=mx.gpu", "stream=mx.Device(mx.gpu, 2)", "stream=mx.Device(mx.cpu, 7)",
           "stream=3"]


def _shape(out):
    return [o.shape for o in out] if isinstance(out, list) else out.shape


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("call", CALLS + BAD_ARGS)
def test_fast_stream_as_mlx(call, stream):
    expr = call.format(s=stream)
    assert outcome(expr, mx, SETUP, _shape) == outcome(expr, mlx, SETUP, _shape)
