"""A speech front end's ops against MLX 0.32.4 (examples/mlx/speech_encoder_decoder.py):
framing by `as_strided` (offsets, zero and negative strides, what its binding refuses, no
vmap rule), `rfft` / `irfft` with n= and axis=, strided / padded / grouped `conv1d`, the
additive causal mask in each float dtype, and the conv layers taking their arguments as
MLX's layer code takes them (reprs or exceptions).

Values: float32 FFTs and convolutions sum in another order than MLX's (rtol / atol 1e-5,
a few ulps of these sums of at most 24 terms); shapes, dtypes, integer values, exceptions
(type and message) and the masks (exact: 0 and the dtype's lowest value) compare exactly.
"""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")
mlx_nn = pytest.importorskip("mlx.nn")

SETUP = ("x = mx.arange(10, dtype=mx.float32) * 0.5 - 1;"
         "m = mx.sin(mx.arange(24, dtype=mx.float32)).reshape(4, 6);"
         "c = mx.fft.rfft(m);"
         "u = mx.sin(mx.arange(40, dtype=mx.float32)).reshape(2, 5, 4);"
         "w = mx.cos(mx.arange(24, dtype=mx.float32)).reshape(3, 2, 4)")


def _run(expr: str, module) -> tuple:
    return outcome(expr, module, SETUP, show=None)


CLOSE = [
    "mx.as_strided(x, (3, 4), (2, 1))",
    "mx.as_strided(x, (3, 4), (2, 1), 1)",
    "mx.as_strided(x, (3, 4), (2, 1), offset=2)",
    "mx.as_strided(x, (3, 4), (0, 1))",
    "mx.as_strided(x, (4,), (-2,), offset=8)",
    "mx.as_strided(m.T, (5, 4), (4, 1))",
    "mx.as_strided(m[1:], (3, 6), (6, 1))",
    "mx.as_strided(x, (0, 3), (1, 1))",
    "mx.fft.rfft(m, n=4)",
    "mx.fft.rfft(m, n=9)",
    "mx.fft.rfft(m, n=7, axis=0)",
    "mx.fft.rfft(m, axis=-2)",
    "mx.fft.rfft(m.T, axis=0)",
    "mx.fft.rfft(m[:, ::2])",
    "mx.fft.rfft(mx.arange(6).astype(mx.float16))",
    "mx.fft.irfft(c, n=5)",
    "mx.fft.irfft(c, n=11)",
    "mx.fft.irfft(c, n=5, axis=0)",
    "mx.fft.irfft(c.T, axis=0)",
    "mx.fft.irfft(c, 6, 1, 'ortho')",
    "mx.fft.irfft(m, n=4, axis=0)",
    "mx.conv1d(u, w, stride=2)",
    "mx.conv1d(u, w, stride=3, padding=2)",
    "mx.conv1d(u, w[:, :1], stride=2, dilation=2, padding=1)",
    "mx.conv1d(u, mx.ones((4, 2, 2)), groups=2)",
    "mx.conv1d(u, mx.ones((4, 3, 1)), groups=4)",  # (MLX takes a weight too wide)
    "mx.conv1d(u[:, ::2], w)",
    "mx.conv_general(u, w, stride=2, padding=([1], [2]))",
]

EXACT = [
    "mx.as_strided(x, (3, 4), (2, 1), offset=-1)",  # (the offset binds as size_t)
    "mx.as_strided(x, (3, 4), (2, 1), -1)",
    "mx.as_strided(x, (3, -4), (2, 1))",
    "mx.as_strided(x, (3, 4), (2.0, 1))",
    "mx.vmap(lambda r: mx.as_strided(r, (2, 2), (2, 1)))(m)",
    "mx.vmap(lambda r: mx.as_strided(m, (2, 2), (2, 1)) + r[:2])(m)",  # (m is not batched)
    "mx.fft.rfft(m, n=0)",
    "mx.fft.irfft(c, n=0)",
    "mx.fft.rfft(m, axis=2)",
    "mx.conv1d(u, mx.ones((6, 2, 1)), groups=4)",
    "mx.conv1d(u, mx.ones((3, 2, 2)), groups=2)",
    "mx.conv1d(u, w, stride=0)",
    "mx.conv1d(u.transpose(0, 2, 1), w)",
    "mx.conv1d(u, mx.ones((3, 2, 4), dtype=mx.float16)).dtype",
]

MASKS = ["float32", "float16", "bfloat16", "float64"]


@pytest.mark.parametrize("expr", CLOSE)
def test_values_close_to_mlx(expr):
    (k1, ours), (k2, theirs) = _run(expr, mx), _run(expr, mlx)
    assert k1 == k2 == "ok", (ours, theirs)
    assert (ours.shape, repr(ours.dtype)) == (theirs.shape, repr(theirs.dtype))
    np.testing.assert_allclose(np.array(ours.astype(mx.complex64)),
                               np.array(theirs.astype(mlx.complex64)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expr", EXACT)
def test_same_as_mlx(expr):
    got = [_run(expr, m) for m in (mx, mlx)]
    assert [(k, repr(v)) for k, v in got][0] == [(k, repr(v)) for k, v in got][1], expr


@pytest.mark.parametrize("dtype", MASKS)
def test_causal_mask_like_mlx(dtype):
    ours = nn.MultiHeadAttention.create_additive_causal_mask(4, getattr(mx, dtype))
    theirs = mlx_nn.MultiHeadAttention.create_additive_causal_mask(4, getattr(mlx, dtype))
    assert repr(ours.dtype) == repr(theirs.dtype)
    assert repr(ours) == repr(theirs)


LAYERS = [
    "nn.Conv1d(4, 6, (3,))",  # (a tuple kernel fails in the fan-in's arithmetic, as in MLX)
    "nn.Conv1d(4, 6, 3.0)",
    "nn.Conv1d(4, 6, np.int64(3))",
    "nn.Conv1d(4, 6, 3, stride=(2,))(u)",
    "nn.Conv1d(4, 6, 3, padding=2.0)(u)",
    "nn.Conv1d(4, 6, 3, padding=1, stride=2, dilation=2)(u).shape",
    "nn.Conv2d(4, 6, (3,))",
    "nn.Conv2d(4, 6, (3, 1), stride=(2, 1), padding=(1, 0))",
    "nn.Conv3d(4, 6, 3, stride=2)",
    "nn.Conv1d(4, 6, 3, groups=3)",
    "nn.ConvTranspose1d(4, 6, (3,))",
    "nn.ConvTranspose1d(4, 6, 3, stride=(2,))(u)",
    "nn.ConvTranspose2d(4, 6, (3,))",
    "nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1)",
]


@pytest.mark.parametrize("expr", LAYERS)
def test_conv_layers_take_what_mlx_takes(expr):
    got = []
    for core, layers in ((mx, nn), (mlx, mlx_nn)):
        scope = {"mx": core, "nn": layers, "np": np}
        exec(SETUP, scope)
        try:
            got.append(("ok", repr(eval(expr, scope))))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1], expr
