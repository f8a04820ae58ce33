"""mx.fft against MLX 0.32.4: reprs (dtype and six significant digits) or exceptions.

Both sides transform in single precision, but with different FFT codes (pocketfft in MLX,
NumPy's pocketfft in double precision in ember, then rounded), so values are compared with
`assert_allclose` at rtol 1e-5 / atol 1e-5 (float32 round-off on sums of a few terms);
dtypes, shapes and errors are exact.
"""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("x = mx.array([1.0, 2.0, -1.0, 0.5, 3.0]);"
         "m = mx.arange(12.0).reshape(3, 4) * 0.5 - 1;"
         "c = mx.array([1 + 2j, -1j, 0.5, 2 - 1j]);"
         "k = mx.arange(24).reshape(2, 3, 4)")


def _run(expr: str, module):
    return outcome(expr, module, SETUP, show=None)


VALUES = [
    "mx.fft.fft(x)",
    "mx.fft.fft(x, n=8)",
    "mx.fft.fft(x, n=3)",
    "mx.fft.fft(m, axis=0)",
    "mx.fft.fft(k)",
    "mx.fft.fft(c, norm='ortho')",
    "mx.fft.ifft(c)",
    "mx.fft.ifft(c, norm='forward')",
    "mx.fft.rfft(x)",
    "mx.fft.rfft(x, n=4, norm='forward')",
    "mx.fft.rfft(c)",
    "mx.fft.irfft(mx.fft.rfft(x))",
    "mx.fft.irfft(mx.fft.rfft(x), n=5)",
    "mx.fft.irfft(c, norm='ortho')",
    "mx.fft.fft2(m)",
    "mx.fft.fft2(m, s=(2, 6))",
    "mx.fft.ifft2(m, axes=(0, 1), norm='ortho')",
    "mx.fft.rfft2(m)",
    "mx.fft.irfft2(mx.fft.rfft2(m))",
    "mx.fft.irfft2(mx.fft.rfft2(m), s=(3, 4))",
    "mx.fft.fftn(k)",
    "mx.fft.fftn(k, axes=[0, 2])",
    "mx.fft.fftn(k, s=[4, 2], axes=[2, 0])",
    "mx.fft.ifftn(k.astype(mx.complex64), norm='forward')",
    "mx.fft.rfftn(k)",
    "mx.fft.rfftn(k, axes=[1])",
    "mx.fft.irfftn(mx.fft.rfftn(k))",
    "mx.fft.fft(x.astype(mx.float64))",
    "mx.fft.fftn(x, axes=[])",
    "mx.fft.fft(x, stream=mx.cpu)",
]

EXACT = [
    "mx.fft.fftshift(mx.arange(5))",
    "mx.fft.fftshift(m)",
    "mx.fft.fftshift(k, axes=1)",
    "mx.fft.ifftshift(k, axes=[0, -1])",
    "mx.fft.ifftshift(mx.arange(6))",
    "mx.fft.fftshift(mx.array(3))",
    "mx.fft.fftshift(k, axes=3)",
    "mx.fft.ifftshift(k, axes=[-4])",
    "mx.fft.fftfreq(5)",
    "mx.fft.fftfreq(8, 0.1)",
    "mx.fft.rfftfreq(7, 2.0)",
    "mx.fft.fftfreq(0)",
    "mx.fft.rfftfreq(3, 0.0)",
    "mx.fft.fft(mx.array(1.0))",
    "mx.fft.fft(x, n=0)",
    "mx.fft.fft(x, axis=1)",
    "mx.fft.fftn(k, axes=[0, 0])",
    "mx.fft.fftn(k, s=[2, 2], axes=[0])",
    "mx.fft.fftn(k, s=[2])",
    "mx.fft.fft2(k, s=[2, 2], axes=None)",
    "mx.fft.fft(x, norm='none')",
    "mx.fft.fft(x, stream=mx.gpu)",
]


@pytest.mark.parametrize("expr", VALUES)
def test_transforms_close_to_mlx(expr):
    (k1, ours), (k2, theirs) = _run(expr, mx), _run(expr, mlx)
    assert k1 == k2 == "ok", (ours, theirs)
    assert (ours.shape, repr(ours.dtype)) == (theirs.shape, repr(theirs.dtype))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expr", EXACT)
def test_same_as_mlx(expr):
    got = [_run(expr, m) for m in (mx, mlx)]
    assert [(k, repr(v)) for k, v in got][0] == [(k, repr(v)) for k, v in got][1], expr


GRADS = [
    ("lambda x: mx.abs(mx.fft.rfft(x)).sum()", "mx.array([1.0, 2.0, -1.0, 0.5])"),
    ("lambda x: mx.real(mx.fft.fft(x, n=6)).sum()", "mx.array([1.0, 2.0, -1.0, 0.5])"),
    ("lambda x: (mx.fft.irfft(x.astype(mx.complex64)) ** 2).sum()",
     "mx.array([1.0, 2.0, -1.0])"),
]


@pytest.mark.parametrize(("fn", "arg"), GRADS)
def test_grads_close_to_mlx(fn, arg):
    got = [np.array(m.grad(eval(fn, {"mx": m}))(eval(arg, {"mx": m}))) for m in (mx, mlx)]
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-5)
