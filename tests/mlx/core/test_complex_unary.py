"""Unary ops on complex arrays against MLX 0.32.4: MLX's error where its kernel has no
complex case (expm1, erfinv), and MLX's complex formulas where they differ from the real
one (sign = z / |z|, reciprocal as the complex division 1 / z, degrees / radians scaled,
softmax as exp(z - max) / sum).
The inputs are chosen so both sides round alike (single correctly rounded operations), so
reprs compare exactly, signed zeros and the inf / nan of 1 / 0 included."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "c = mx.array([1 + 2j, -0.5j, 3.0, 0j, -4 + 0j])"


@pytest.mark.parametrize("op", ["expm1", "erfinv"])
def test_refused(op):
    expr = f"mx.{op}(c)"
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
    assert outcome(expr, mx, SETUP)[0] == "ValueError"


@pytest.mark.parametrize("expr", [
    "mx.sign(c)", "mx.reciprocal(c)", "mx.degrees(c)", "mx.radians(c)",
    "mx.sign(mx.array([-2, 0, 3]))", "mx.reciprocal(mx.array([2, 4]))",
    "mx.expm1(mx.array([0.0, 1e-8]))", "mx.radians(mx.array([180, 90]))",
])
def test_complex_formulas(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


# MLX's complex softmax is exp(x - max) / sum over the axes (max by MLX's complex order);
# exp and the complex division round otherwise than MLX's by an ulp here and there, so
# the values compare within 4 float32 ulps of the largest, the dtype and shape exactly
@pytest.mark.parametrize("args", ["", ", axis=0", ", axis=1", ", axis=(0, 1)", ", precise=True"])
def test_complex_softmax(args):
    setup = "z = mx.array([[1 + 2j, -0.5j], [3.0, 0.25 - 1j]])"
    expr = f"mx.softmax(z{args})"
    ours = outcome(expr, mx, setup, show=None)[1]
    theirs = outcome(expr, mlx, setup, show=None)[1]
    assert (ours.dtype, ours.shape) == (mx.complex64, theirs.shape)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=0, atol=5e-7)
