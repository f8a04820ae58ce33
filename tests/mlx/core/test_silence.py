"""`_silence`: the MLX face gives none of ember's (PyTorch's) warnings, as MLX 0.32.4 gives
none: each expression, run with every warning an error, must come out as it does on
MLX, lazily and eagerly; warnings outside the face, and NumPy's own where MLX's user sees
them too, still show."""

import warnings

import numpy as np
import pytest

import ember
import ember.mlx.core as mx
from ember.mlx.core import _lazy
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_SETUP = ("z = mx.zeros((0,)); z2 = mx.zeros((2, 0)); zi = mx.zeros((0,), mx.int32);"
          "xb = mx.array([True, False, True])")

# (each warned on ember's face before: `var` with ddof >= n, an empty reduction, a cast
# of complex values to a real type through an update or `astype`, a kernel's NaN)
WARNED = [
    "mx.var(mx.array([1., 2]), ddof=2)",
    "mx.std(mx.array([1., 2]), ddof=5)",
    "mx.var(z)",
    "mx.std(z2, 1)",
    "mx.var(zi)",
    "mx.var(mx.zeros((2, 0, 0)), (2, 1))",
    "mx.mean(z)",
    "xb.at[mx.array([0, 1])].add(mx.array(1+2j))",
    "xb.at[mx.array([0, 1])].maximum(mx.array(1+2j))",
    "mx.array([1+2j, 3j]).astype(mx.float32)",
    "mx.array([1+2j]).astype(mx.int32)",
    "mx.array([1+2j]).astype(mx.bool_)",
    "mx.array([float('nan'), 1e20]).astype(mx.int8)",
    "mx.log(mx.array([-1.0, 0.0]))",
    "mx.sqrt(mx.array([-1.0]))",
    "mx.array([0.0]) / 0",
    "mx.isnan(mx.arccos(mx.array([2.0])))",
    "mx.std(mx.array([1.0]), ddof=1)",
    "mx.compile(lambda x: mx.var(x, ddof=5))(mx.array([1.0, 2.0]))",
    "mx.vmap(lambda x: mx.var(x, ddof=5))(mx.array([[1.0, 2.0]]))",
]


def _strictly(expr: str, module):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return outcome(expr, module, _SETUP)


@pytest.mark.parametrize("expr", WARNED)
def test_silent_where_mlx_is_silent(expr):
    assert _strictly(expr, mx) == outcome(expr, mlx, _SETUP), expr


@pytest.mark.parametrize("expr", WARNED[:8])
def test_silent_eagerly_too(expr):
    was, _lazy.enabled[0] = _lazy.enabled[0], False  # (each op runs its kernel at once)
    try:
        assert _strictly(expr, mx) == outcome(expr, mlx, _SETUP), expr
    finally:
        _lazy.enabled[0] = was


def test_warnings_outside_the_face_still_show():
    before = warnings.filters
    mx.eval(mx.var(mx.array([1.0]), ddof=3))
    assert warnings.filters is before  # (the process's filters are back)
    with pytest.warns(UserWarning):
        ember.tensor([1.0]).var(correction=3)


def test_numpys_own_warning_shows_as_with_mlx():
    # (NumPy casting the array it is given warns for MLX's array too)
    with pytest.warns(np.exceptions.ComplexWarning):
        np.array(mlx.array([1 + 2j]), dtype=np.float32)
    with pytest.warns(np.exceptions.ComplexWarning):
        np.array(mx.array([1 + 2j]), dtype=np.float32)
