"""MLX's exp saturates (inf above 88, 0 with no subnormals below about -87.683, computed in
float32 for every float dtype), and so do sigmoid, softmax and logaddexp, which its CPU
kernels build on it: ember's MLX face against MLX 0.32.4 in-process.

Where MLX gives exactly 0 or inf, ember must too; elsewhere the values may differ by the 2
float32 ulps between MLX's exp polynomial and ember's exp2 of the same rounded product, so
they are compared with a relative 4e-7 (float32; an absolute 3e-45, two steps, for the
subnormal results), or one unit of the last place for the half types."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_EDGE = np.concatenate([
    np.float32(-87.683) + np.arange(-300, 300, dtype=np.float32) * np.float32(1e-5),
    np.float32(88.0) + np.arange(-50, 50, dtype=np.float32) * np.float32(2e-6),
    np.array([-103.9, -104.0, -100.0, -88.0, -87.0, 0.0, 1.0, 88.72, 88.73, 89.0,
              np.inf, -np.inf], dtype=np.float32),
])


def _both(fn, x: np.ndarray, dtype: str = "float32"):
    """`fn(mx_module, array)` on ember and on MLX, as float64 NumPy arrays."""
    ours = fn(mx, mx.array(x).astype(getattr(mx, dtype)))
    theirs = fn(mlx, mlx.array(x).astype(getattr(mlx, dtype)))
    return (np.array(ours.astype(mx.float32)).astype(np.float64),
            np.array(theirs.astype(mlx.float32)).astype(np.float64))


def _same_saturation(ours: np.ndarray, theirs: np.ndarray, rtol: float) -> None:
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=3e-45)


@pytest.mark.parametrize("dtype, rtol", [("float32", 4e-7), ("float64", 4e-7),
                                         ("bfloat16", 2 ** -7), ("float16", 2 ** -10)])
def test_exp_is_zero_and_inf_where_mlx_is(dtype, rtol):
    _same_saturation(*_both(lambda m, a: m.exp(a), _EDGE, dtype), rtol)


def test_float64_exp_has_float32_precision_as_mlx():
    # (MLX's CPU exp converts to float32: exp(88.0000001) is exp(88.0) there)
    ours, theirs = _both(lambda m, a: m.exp(a), np.array([88.0, 88.0000001, 1.0]), "float64")
    assert ours[0] == ours[1] and theirs[0] == theirs[1]
    np.testing.assert_allclose(ours, theirs, rtol=4e-7)


def test_sigmoid_is_zero_where_mlx_is():
    _same_saturation(*_both(lambda m, a: m.sigmoid(a), np.concatenate([_EDGE, -_EDGE])), 4e-7)


def test_softmax_zeroes_what_mlx_zeroes():
    rows = np.stack([np.array([0.0, -87.6, -87.7, -88.5, -100.0, 1.0], np.float32),
                     np.array([5.0, -82.6, -82.7, 3.0, -200.0, -np.inf], np.float32)])
    for axis in (-1, None, (0, 1)):
        ours, theirs = _both(lambda m, a, axis=axis: m.softmax(a, axis=axis), rows)
        _same_saturation(ours, theirs, 4e-6)  # (a sum of 6 terms in another order)
    ours, theirs = _both(lambda m, a: m.softmax(a, axis=0), rows.T.copy())
    _same_saturation(ours, theirs, 4e-6)


def test_logaddexp_is_the_maximum_where_mlx_takes_it():
    lo = np.concatenate([_EDGE[:600], [-np.inf, 3.0]]).astype(np.float32)
    ours = np.array(mx.logaddexp(mx.array(lo), mx.array(0.0)))
    theirs = np.array(mlx.logaddexp(mlx.array(lo), mlx.array(0.0)))
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    # (just above the cut the results are subnormal: log1p(exp(d)) with NumPy's exp there,
    # up to 23 steps of 1.4e-45 from MLX's)
    np.testing.assert_allclose(ours, theirs, rtol=4e-7, atol=5e-44)


@pytest.mark.parametrize("fn", [
    "lambda x: mx.exp(x).sum()",
    "lambda x: mx.sigmoid(x).sum()",
    "lambda x: (mx.softmax(x) * mx.arange(4)).sum()",
    "lambda x: mx.logaddexp(x, mx.array(0.0)).sum()",
])
def test_gradients_saturate_as_mlx(fn):
    x = np.array([-100.0, -88.3, 1.0, 89.0], np.float32)
    ours = np.array(mx.grad(eval(fn, {"mx": mx}))(mx.array(x)))
    theirs = np.array(mlx.grad(eval(fn, {"mx": mlx}))(mlx.array(x)))
    _same_saturation(np.abs(ours), np.abs(theirs), 4e-7)


@pytest.mark.parametrize("expr", [
    "mx.jvp(mx.exp, [mx.array([89.0, -100.0, 0.5])], [mx.array([1.0, 1.0, 1.0])])[1]",
    "mx.vmap(mx.exp)(mx.array([[89.0, -100.0], [-87.0, 0.0]]))",
    "mx.vmap(mx.sigmoid, in_axes=1)(mx.array([[-89.0, -100.0], [0.0, 88.5]]))",
    "mx.compile(lambda x: mx.exp(x) * 2)(mx.array([89.0, -100.0, 0.0]))",
    "mx.compile(lambda x: mx.softmax(x, axis=-1))(mx.array([[0.0, -100.0, 0.0]]))",
    "mx.exp(mx.array([1 + 1j, -100 + 0j]))",
    "mx.sigmoid(mx.array([1 + 1j]))",
    "mx.sigmoid(mx.array([-100, 100], dtype=mx.int8))",
    "mx.exp(mx.array([True, False]))",
    "mx.array([-100.0, 89.0]).exp()",
    "mx.softmax(mx.array([0.0, -float('inf'), float('nan')]))",
    "mx.logaddexp(mx.array([-float('inf'), float('inf'), float('nan')]), "
    "mx.array([-float('inf'), 1.0, 0.0]))",
])
def test_transforms_and_edge_inputs_match_mlx(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


def test_softmax_of_a_row_of_minus_inf_is_nan_as_mlx():
    # (-inf - -inf is NaN on both; its sign bit is the CPU path's, so only NaN is compared)
    ours = np.array(mx.softmax(mx.array([-float("inf"), -float("inf")])))
    theirs = np.array(mlx.softmax(mlx.array([-float("inf"), -float("inf")])))
    assert ours.dtype == theirs.dtype and np.isnan(ours).all() and np.isnan(theirs).all()


@pytest.mark.parametrize("name", ["mlx_exp_map", "mlx_erf_abs_map"])
def test_native_twin_is_the_numpy_port_bit_for_bit(name):
    # csrc/mlx_math.c against its NumPy ports over odd sizes (block and vector tails),
    # every edge value and a wide sweep: the same float32 steps, so the same bits
    from ember import native
    from ember.mlx.core import _saturating, _threefry

    if native.library("mlx_math") is None:
        pytest.skip("no native kernels here")
    port = {"mlx_exp_map": _threefry._expf,
            "mlx_erf_abs_map": lambda v: np.abs(_threefry._erff(v))}  # (erf of |v|)
    rng = np.random.default_rng(3)
    edges = np.array([0, -0.0, np.inf, -np.inf, np.nan, 88, -88, 88.5, -88.5, -87.68, -87.69,
                      -87.9, 1e-30, -1e-30, 1e-45, 3.4e38, -3.4e38, 127.9, -130.0], np.float32)
    wide = (rng.standard_normal(300_001) * rng.choice([1e-3, 1, 10, 60, 1e4], 300_001))
    for x in (np.concatenate([edges, wide.astype(np.float32)]), edges[:5], wide[:4097]):
        x = np.ascontiguousarray(x, np.float32)
        old = _saturating.NATIVE_MIN["elements"]
        _saturating.NATIVE_MIN["elements"] = 0
        try:
            got = _saturating.native_map(name, x)
        finally:
            _saturating.NATIVE_MIN["elements"] = old
        want = port[name](x)
        nan = np.isnan(want)  # (a NaN's sign bit is the CPU path's)
        assert np.array_equal(np.isnan(got), nan)
        assert got[~nan].view(np.uint32).tolist() == want[~nan].view(np.uint32).tolist()
