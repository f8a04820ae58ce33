"""`mx.fft`'s argument types against MLX 0.32.4: what its nanobind bindings refuse (a
list or NumPy array for an array, a float for an int or a size, None or bytes for `norm`,
a wrong keyword, a missing argument) with MLX's TypeError naming the signature, and what
they convert (NumPy and MLX integers, ranges and integer arrays for sizes and axes)."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "x = mx.ones((2, 2)); v = mx.arange(4.0)"


@pytest.mark.parametrize("expr", [
    # refused
    "mx.fft.rfft(v, n=4.0)", "mx.fft.rfft(v, axis=0.0)", "mx.fft.rfft([1.0, 2.0])",
    "mx.fft.fft(3.0)", "mx.fft.fft(np.ones(4))", "mx.fft.fft2(x, s=(2.0, 2))",
    "mx.fft.fft2(x, axes=(0.0, 1))", "mx.fft.fft2(x, axes=0)", "mx.fft.fft(x, n=np.float64(2))",
    "mx.fft.fft(x, norm=b'ortho')", "mx.fft.fft(x, norm=None)", "mx.fft.fftshift(x, axes=0.0)",
    "mx.fft.fftfreq(4.0)", "mx.fft.fft()", "mx.fft.fft(x, s=2)", "mx.fft.fft(x, m=2)",
    "mx.fft.fft(x, 2, 0, 'ortho', mx.cpu, 1)", "mx.fft.irfftn([[1.0]])",
    "mx.fft.stft(mx.ones(16), 8, 2.0)", "mx.fft.stft(mx.ones(16), n_fft=8.0)",
    "mx.fft.stft(mx.ones(16), n_fft=8, window=[1.0] * 8)",
    "mx.fft.stft(mx.ones(16), n_fft=8, center=1)", "mx.fft.stft(mx.ones(16), n_fft=8, pad_mode=3)",
    "mx.fft.stft([1.0] * 16, n_fft=8)",
    "mx.fft.istft(mx.fft.stft(mx.ones(16), n_fft=8), n_fft=8, length=16.0)",
    # converted
    "mx.fft.fft2(x, s=[2, 2])", "mx.fft.fft2(x, s=np.array([2, 2]))",
    "mx.fft.fft2(x, s=mx.array([2, 2]))", "mx.fft.fft2(x, s=range(2, 4))",
    "mx.fft.fft2(x, axes=np.array([0, 1]))", "mx.fft.fft(x, 2, 0, 'ortho')",
    "mx.fft.fft(x, 2, 0, 'ortho', mx.cpu)", "mx.fft.fft(a=x)", "mx.fft.fft(x, axis=True)",
    "mx.fft.fft(x, n=mx.array(2))", "mx.fft.fft(x, n=np.int64(3))",
    "mx.fft.fftshift(v, axes=(0,))", "mx.fft.ifftshift(v, 0)", "mx.fft.fftfreq(4, d=1)",
    "mx.fft.fftfreq(4, d=mx.array(2.0))", "mx.fft.fftfreq(np.int64(4))",
    "mx.fft.rfftfreq(5, 0.5)", "mx.fft.fft2(x, (2, 2), (0, 1), 'ortho')",
    "mx.fft.stft(mx.ones(16), n_fft=8, onesided=None).shape",
    "mx.fft.istft(mx.fft.stft(mx.ones(16), n_fft=8), n_fft=8, hop_length=True).shape",
    # MLX's own checks still come after the binding's
    "mx.fft.irfft2(x, s=(2,))", "mx.fft.fftn(x, s=[2, 2, 2])",
])
def test_binding_types(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


def test_transforms_still_trace():
    expr = "mx.grad(lambda x: mx.fft.rfft(x, n=6).real.sum())(v)"
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
    expr = "mx.vmap(lambda x: mx.fft.rfft(x, n=6))(mx.arange(8.0).reshape(2, 4))"
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
