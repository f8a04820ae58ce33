"""MLX 0.32.4's argument binding for the convolutions, for `stream=` and for `mx.array`'s
methods (`_strict`, `_nb_types`, `_method_binding`): what nanobind converts is converted
(the results compared by value; every value is a small integer sum, exact in float32),
what it refuses is refused with MLX's exception type and message."""

import numpy as np  # noqa: F401  (the expressions use it)
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_SETUP = ("x = mx.arange(75, dtype=mx.float32).reshape(1, 5, 5, 3); w = mx.ones((2, 3, 3, 3));"
          "x1 = mx.arange(15, dtype=mx.float32).reshape(1, 5, 3); w1 = mx.ones((2, 3, 3));"
          "x3 = mx.ones((1, 4, 4, 4, 2)); w3 = mx.ones((2, 2, 2, 2, 2));"
          "a = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]); s = mx.arange(5); v = mx.ones(3)")

CONV = [
    # int | tuple[int, int]: an int, or any sequence of two ints (list, range, arrays)
    "mx.conv2d(x, w, stride=(1, 1))", "mx.conv2d(x, w, stride=[1, 2])",
    "mx.conv2d(x, w, stride=np.int64(2))", "mx.conv2d(x, w, stride=True)",
    "mx.conv2d(x, w, stride=(np.int64(1), True))", "mx.conv2d(x, w, stride=mx.array([1, 2]))",
    "mx.conv2d(x, w, stride=np.array([2, 1]))", "mx.conv2d(x, w, stride=range(1, 3))",
    "mx.conv2d(x, w, stride=(1,))", "mx.conv2d(x, w, stride=(1, 1, 1))",
    "mx.conv2d(x, w, stride=(1.0, 1))", "mx.conv2d(x, w, padding='1')",
    "mx.conv2d(x, w, 1, 1, 1, 1.0)", "mx.conv2d(x, w, stride=np.array([1.0, 1.0]))",
    "mx.conv1d(x1, w1, 1.0)", "mx.conv1d(x1, w1, groups=1.0)", "mx.conv1d(x1, w1, stride=(1,))",
    "mx.conv1d(x1.tolist(), w1)", "mx.conv1d(x1, w1, stride=np.int64(2))",
    "mx.conv1d(x1, w1, stride=True)", "mx.conv1d(x1, w1, dilation=None)",
    "mx.conv1d(x1, w1, padding=np.int32(1))", "mx.conv1d(x1, w1, foo=1)",
    "mx.conv3d(x3, w3, stride=(1, 1))", "mx.conv3d(x3, w3, stride=(1, 1, 2))",
    "mx.conv3d(x3, w3, padding=1.5)", "mx.conv3d(x3, w3, dilation=[1, 1, 1])",
    "mx.conv_general(x, w, flip=1)", "mx.conv_general(x, w, flip=np.True_)",
    "mx.conv_general(x, w, flip=True)", "mx.conv_general(x, w, stride=[1, 2])",
    "mx.conv_general(x, w, stride=(1, 1, 1))", "mx.conv_general(x, w, padding=([1, 1], [0, 0]))",
    "mx.conv_general(x, w, padding=((1, 0), (0, 1)))", "mx.conv_general(x, w, padding=1.0)",
    "mx.conv_general(x, w, padding=([1, 1], [0.0, 0]))",
    "mx.conv_general(x, w, stride=np.array([1, 1]))",
    "mx.conv_general(x, w, input_dilation=2.0)", "mx.conv_general(x, w, kernel_dilation=(2, 1))",
    "mx.convolve(s, v, mode=1)", "mx.convolve(s, v, 'same')", "mx.convolve([1, 2, 3], v)",
    "mx.convolve(s, v, mode='bad')", "mx.convolve(v, s)", "mx.convolve(v, s.astype(mx.int8))",
    "mx.convolve(v.astype(mx.float16), s.astype(mx.float32))",
    "mx.convolve(s.astype(mx.float32), v)",
    "mx.convolve(s.astype(mx.bool_), v)", "mx.convolve(s, v, None)", "mx.convolve(s, [1.0])",
    "mx.conv_transpose2d(x, w, output_padding=(1,))",
    "mx.conv_transpose1d(x1, w1, output_padding=1.0)",
    "mx.conv_transpose3d(x3, w3, stride=[1, 1, 1])", "mx.conv_transpose2d(x, w, stride=(2, 1))",
    "mx.conv_transpose1d(x1, w1, stride=np.int64(2))", "mx.conv_transpose2d(x, w, groups=True)",
]
STREAM = [
    "mx.conv1d(x1, w1, stream=3)", "mx.conv1d(x1, w1, stream=mx.cpu)",
    "mx.sum(a, stream=3)", "mx.sum(a, stream='cpu')", "mx.sum(a, axis=1, stream=3)",
    "mx.sum(a, stream=mx.cpu)", "mx.sum(a, stream=mx.default_stream(mx.cpu))",
    "mx.fft.fft(a, stream=3)", "mx.fft.fft(a, stream=mx.cpu)", "mx.reshape(a, (3, 2), stream=1.0)",
    "mx.linalg.norm(a, stream=3)", "mx.take(a, 1, stream=[])", "mx.transpose(a, stream=0.5)",
    "a.sum(stream=3)", "a.sum(stream=mx.cpu)", "a.reshape(-1, stream=3)",
    "a.reshape(6, stream=mx.cpu)", "a.astype(mx.int32, 3)", "a.astype(mx.int32, mx.cpu)",
    "a.diagonal(0, 0, 1, 3)", "a.exp(stream='cpu')", "a.transpose(stream=None)",
    "mx.exp(a, stream=3)", "mx.add(a, 1, stream=3)", "mx.maximum(a, 1, stream='x')",
    "mx.isnan(a, stream=3)", "mx.exp(a, stream=mx.cpu)", "mx.sigmoid(a, stream=3)",
]
METHODS = [
    "a.sum(axis=1.0)", "a.flatten(0.0)", "a.swapaxes(0, 1.0)", "a.split(2.0)",
    "a.astype('float32')", "a.reshape(6.0)", "a.transpose(1.0, 0)", "a.reshape((3, 2.0))",
    "a.reshape(3, 2)", "a.reshape([3, 2])", "a.reshape((3, np.int64(2)))",
    "a.reshape(np.int64(6))", "a.reshape(True, 6)", "a.reshape(3, [2])", "a.reshape('6')",
    "a.reshape(shape=(6,))", "a.reshape(range(1, 7))", "a.reshape(np.array([3, 2]))",
    "a.transpose()", "a.transpose([1, 0])", "a.transpose(None)", "a.transpose(np.int64(1), 0)",
    "a.sum(1)", "a.transpose(1, 0)", "a.astype(mx.int32)", "a.sum(axis=np.int64(1))",
    "a.split(np.int64(2))", "a.split([1])", "a.split((1,), 1)", "a.max(axis=1.0)",
    "a.mean(keepdims=1)", "a.mean(1, True)", "a.var(ddof=1.0)", "a.var(0, ddof=np.int64(1))",
    "a.squeeze(0.0)", "a.moveaxis(0, 1.0)", "a.argmax(axis=1.0)", "a.argmax(1, keepdims=True)",
    "a.cumsum(axis=1.0)", "a.cumsum(1, reverse=1)", "a.cumsum(1, reverse=True)",
    "a.diagonal(1.0)", "a.diag(k=1.0)", "a.logsumexp(axis=1.0)", "a.flatten(np.int64(0))",
    "a.round(1.5)", "a.round(decimals=1)", "a.exp(1)", "a.view('int32')", "a.view(mx.int32)",
    "a.sum(a=1)", "a.all(axis=[0, 1])", "a.logcumsumexp(axis='0')", "a.conj(1)",
]


@pytest.mark.parametrize("expr", CONV + STREAM + METHODS)
def test_binding_as_mlx(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr
