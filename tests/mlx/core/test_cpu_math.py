"""MLX's CPU kernel arithmetic (`_cpu_math`, and `fast.rope`'s half-precision rotation)
against mlx 0.32.4 in-process: bit for bit, since both sides run the same float32 /
half-precision steps (its erf polynomial, its exp, its sigmoid formula, half rounding
after every step), no vector path involved. Gradients, which both take from the usual
derivative in float32 ops, compare within a few ulps."""

import math

import numpy as np
import pytest

import ember.mlx.core as ex
import ember.mlx.nn as enn

mx = pytest.importorskip("mlx.core")
mnn = pytest.importorskip("mlx.nn")

_BITS = np.arange(65536, dtype=np.uint16)
HALF_VALUES = {  # every float16 and every bfloat16, as float32
    "float16": _BITS.view(np.float16).astype(np.float32),
    "bfloat16": (_BITS.astype(np.uint32) << 16).view(np.float32),
}
_RNG = np.random.default_rng(0)
F32_VALUES = np.concatenate(
    [_RNG.standard_normal(20000).astype(np.float32) * s for s in (1e-3, 1, 5, 50)]
    + [np.array([0, -0.0, np.inf, -np.inf, np.nan, 88, -88, 88.5, -88.5, -87.9, 1e-30, -1e-30,
                 1e-40], np.float32)])


def _same(a, b) -> bool:
    """Equal bits up to NaN's payload (zeros' signs count)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | ((a == b) & (np.signbit(a) == np.signbit(b)))))


def _pair(values, dtype):
    return (mx.array(values).astype(getattr(mx, dtype)),
            ex.array(values).astype(getattr(ex, dtype)))


def _np(module, a):
    return np.array(a.astype(module.float64))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["erf", "sigmoid", "rsqrt"])
def test_unary_kernels_on_every_half_value(op, dtype):
    # e.g. float16 sigmoid(0.000977) is 0.5 on MLX (exp rounded to half first), and erf of
    # a float16 below 1e-6 is 0 (the polynomial's absolute error)
    xm, xe = _pair(HALF_VALUES[dtype], dtype)
    assert _same(_np(mx, getattr(mx, op)(xm)), _np(ex, getattr(ex, op)(xe)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["erf", "sigmoid", "rsqrt"])
def test_unary_kernels_in_float32_and_float64(op, dtype):
    # float64 erf / sigmoid are float32 computations on MLX too
    xm, xe = _pair(F32_VALUES, dtype)
    assert _same(_np(mx, getattr(mx, op)(xm)), _np(ex, getattr(ex, op)(xe)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rsqrt_method_and_logaddexp_round_each_half_step(dtype):
    xm, xe = _pair(HALF_VALUES[dtype], dtype)
    assert _same(_np(mx, xm.rsqrt()), _np(ex, xe.rsqrt()))
    for other in (0.7, -3.0, float("inf"), float("-inf")):
        om, oe = _pair(np.float32(other), dtype)
        assert _same(_np(mx, mx.logaddexp(xm, om)), _np(ex, ex.logaddexp(xe, oe)))
        assert _same(_np(mx, mx.logaddexp(om, xm)), _np(ex, ex.logaddexp(oe, xe)))


def test_integer_inputs_become_float32_and_values_stay_mlx_s():
    for op in ("erf", "sigmoid", "rsqrt"):
        a, b = getattr(mx, op)(mx.array([0, 1, -3])), getattr(ex, op)(ex.array([0, 1, -3]))
        assert repr(a) == repr(b)
    assert repr(mx.erf(mx.array(0.0))) == repr(ex.erf(ex.array(0.0)))


_SOFTMAX_CASES = [((4, 7), {}), ((4, 7), {"axis": -1}), ((4, 7), {"axis": 1}),
                  ((4, 7), {"axis": 0}), ((3, 200), {}), ((3, 200), {"axis": [0, 1]}),
                  ((2, 3, 50), {"axis": 2}), ((2, 3, 50), {"axis": (0, 2)}),
                  ((1, 1, 9), {}), ((5,), {}), ((4, 7), {"axis": -1, "precise": True})]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape, kwargs", _SOFTMAX_CASES)
def test_half_softmax_is_mlx_s_kernel(shape, kwargs, dtype):
    # over the last axis MLX sums the row in the half type one element at a time
    values = (np.random.default_rng(1).standard_normal(shape) * 20).astype(np.float32)
    xm, xe = _pair(values, dtype)
    ym, ye = mx.softmax(xm, **kwargs), ex.softmax(xe, **kwargs)
    assert repr(ye.dtype).split(".")[-1] == repr(ym.dtype).split(".")[-1]
    assert _same(_np(mx, ym), _np(ex, ye))
    assert _same(_np(mx, mnn.softmax(xm)), _np(ex, enn.softmax(xe)))


def test_half_softmax_gradient_vmap_and_jvp():
    values = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    xm, xe = _pair(values, "float16")
    wm, we = _pair(np.linspace(-1, 2, 6, dtype=np.float32), "float16")
    gm = mx.grad(lambda x: (mx.softmax(x, axis=-1) * wm).sum())(xm)
    ge = ex.grad(lambda x: (ex.softmax(x, axis=-1) * we).sum())(xe)
    # the backward is float16 arithmetic on both sides, in its own order: a unit or two
    np.testing.assert_allclose(_np(ex, ge), _np(mx, gm), rtol=2e-3, atol=2e-4)
    for axis in (0, 1):  # (MLX's vmap along the last axis composes half ops instead)
        vm = mx.vmap(lambda x: mx.softmax(x, axis=-1), in_axes=axis)(xm)
        ve = ex.vmap(lambda x: ex.softmax(x, axis=-1), in_axes=axis)(xe)
        assert _same(_np(mx, vm), _np(ex, ve))
    tm = mx.jvp(lambda x: mx.softmax(x), [xm[0]], [wm])[1][0]
    te = ex.jvp(lambda x: ex.softmax(x), [xe[0]], [we])[1][0]
    np.testing.assert_allclose(_np(ex, te), _np(mx, tm), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("op", ["erf", "sigmoid"])
def test_gradients_are_the_usual_derivatives(op):
    values = np.linspace(-4, 4, 17, dtype=np.float32)
    xm, xe = _pair(values, "float32")
    gm = mx.grad(lambda x: getattr(mx, op)(x).sum())(xm)
    ge = ex.grad(lambda x: getattr(ex, op)(x).sum())(xe)
    # both are exp(-x^2) * 2/sqrt(pi) or y (1 - y) in float32, MLX on its exp: a few ulps
    np.testing.assert_allclose(_np(ex, ge), _np(mx, gm), rtol=1e-6, atol=1e-7)
    if op == "erf":
        np.testing.assert_allclose(_np(ex, ge), 2 / math.sqrt(math.pi) * np.exp(-values ** 2),
                                   rtol=1e-6)
    fm = mx.compile(lambda x: getattr(mx, op)(x) * 2)(xm)
    fe = ex.compile(lambda x: getattr(ex, op)(x) * 2)(xe)
    assert _same(_np(mx, fm), _np(ex, fe))


def test_exact_gelu_keeps_mlx_s_tail():
    # 1 + erf(x / sqrt 2) is all polynomial error at x = -5.2: MLX gives -4.65478e-07
    values = np.array([-5.20629, -4.0, -1.5, 0.3, 2.0, 9.0], np.float32)
    for dtype in ("float32", "float16", "bfloat16"):
        xm, xe = _pair(values, dtype)
        assert _same(_np(mx, mnn.gelu(xm)), _np(ex, enn.gelu(xe)))
        assert _same(_np(mx, mnn.GELU()(xm)), _np(ex, enn.GELU()(xe)))
        assert _same(_np(mx, mnn.silu(xm)), _np(ex, enn.silu(xe)))
        if dtype != "float32":  # (float32 logaddexp: MLX's exp and ember's differ by an ulp)
            assert _same(_np(mx, mnn.log_sigmoid(xm)), _np(ex, enn.log_sigmoid(xe)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kwargs", [
    dict(dims=8, traditional=False, base=10000.0, scale=1.0, offset=0),
    dict(dims=10, traditional=True, base=500.0, scale=0.5, offset=3),
    dict(dims=6, traditional=True, base=100.0, scale=1.0, offset="vector"),
])
def test_half_rope_rotates_in_the_half_type(kwargs, dtype):
    values = np.random.default_rng(3).standard_normal((2, 3, 7, 10)).astype(np.float32)
    outs = []
    for m in (mx, ex):
        k = dict(kwargs)
        if k["offset"] == "vector":
            k["offset"] = m.array([2, 5])
        x = m.array(values).astype(getattr(m, dtype))
        outs.append(_np(m, m.fast.rope(x, **k)))
    assert _same(*outs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("axis, keepdims", [(0, False), (0, True), (None, False), ((0, 2), True),
                                            (-1, False), (1, True)])
def test_half_logsumexp_composes_half_ops_off_the_last_axis(axis, keepdims, dtype):
    values = (np.random.default_rng(4).standard_normal((5, 3, 6)) * 4).astype(np.float32)
    values[1, 2] = -np.inf
    values[2, :, 1] = -np.inf  # (a column all -inf: the max itself comes back)
    xm, xe = _pair(values, dtype)
    ym = mx.logsumexp(xm, axis=axis, keepdims=keepdims)
    ye = ex.logsumexp(xe, axis=axis, keepdims=keepdims)
    assert ye.shape == ym.shape
    assert _same(_np(mx, ym), _np(ex, ye))
    assert _same(_np(mx, xm.logsumexp(axis, keepdims)), _np(ex, xe.logsumexp(axis, keepdims)))
    assert _same(_np(mx, mnn.log_softmax(xm, axis=0)), _np(ex, enn.log_softmax(xe, axis=0)))


def test_refusals_stay_mlx_s():
    from mlx_oracle import outcome

    for expr in ["mx.logsumexp(mx.zeros((0, 2), dtype=mx.float16), axis=0)",
                 "mx.logsumexp(mx.ones((2, 2), dtype=mx.float16), axis=3)",
                 "mx.softmax(mx.ones((2, 2), dtype=mx.bfloat16), axis=(0, 5))",
                 "mx.softmax(mx.array(1.0, dtype=mx.float16), axis=0)",
                 "mx.logaddexp(mx.ones(2, dtype=mx.float16), mx.ones(3, dtype=mx.float16))",
                 "mx.erf(mx.array([1 + 2j]))", "mx.sigmoid(mx.array([1 + 2j]))",
                 "mx.sigmoid(mx.array([1.0]), stream=mx.gpu)"]:
        assert outcome(expr, ex) == outcome(expr, mx), expr


def test_mlx_exp_is_mlx_s_float32_exp_bit_for_bit():
    # (the kernel every step above builds on: 0 below -88 and for 2**ipart under 2**-126)
    from ember.mlx.core._cpu_math import mlx_exp

    edges = np.array([-87.9, -87.7, -87.5, 88.0, 88.01, 1.0, 0.0], np.float32)
    for values in (F32_VALUES, edges, np.float32(2.5)):
        assert _same(np.array(mx.exp(mx.array(values))), mlx_exp(values))


_LAE_A = [0.0, 0.0, 0.0, 2.0, 1e-3, 30.0, -30.0, 100.0, math.inf, -math.inf, 5.0, 17.0, 1e-8]
_LAE_B = [0.0, -30.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -math.inf, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp_values_and_derivatives_are_mlx_s(dtype):
    # MLX's derivative is sigmoid(a - b) and 1 - sigmoid(a - b): the smaller side's is
    # exactly 0 once the sigmoid rounds to 1 (exp(b - out) was 9.4e-14 at (0, -30)), and
    # at a tie the second derivative is sigmoid'(0) = 0.25; float64 exp is MLX's float32 one
    def run(m):
        a, b = (m.array(v).astype(getattr(m, dtype)) for v in (_LAE_A, _LAE_B))
        grads = m.grad(lambda a, b: m.logaddexp(a, b).sum(), argnums=[0, 1])(a, b)
        hess = [m.grad(lambda a: m.grad(lambda a: m.logaddexp(a, b).sum())(a).sum())(a),
                m.grad(lambda b: m.grad(lambda b: m.logaddexp(a, b).sum())(b).sum())(b)]
        return [np.array(x) for x in (m.logaddexp(a, b), m.logaddexp(b, a), *grads, *hess)]

    for ours, theirs in zip(run(ex), run(mx)):
        assert _same(ours, theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_logaddexp_splits_a_tie_as_mlx(dtype):
    # (maximum / minimum sent the whole gradient at a tie to the second argument)
    def run(m):
        a = m.array([0.0, 1.5, -2.0]).astype(getattr(m, dtype))
        return np.array(m.grad(lambda a: m.logaddexp(a, a * 1.0).sum())(a).astype(m.float32))

    assert _same(run(ex), run(mx))


def test_bce_with_logits_gradient_saturates_as_mlx():
    # nn.losses.binary_cross_entropy(with_logits=True) is logaddexp(0, x) - x * t
    def run(m, nn):
        logits = m.array([2.0, -30.0, 40.0, 0.0, -0.5])
        targets = m.array([0.9, 0.0, 1.0, 0.5, 0.1])
        loss = lambda x: nn.losses.binary_cross_entropy(x, targets, reduction="sum")  # noqa: E731
        return np.array(m.grad(loss)(logits))

    # NOTE: MLX's sigmoid against ember's port of it, then a subtraction: 1 ulp
    np.testing.assert_array_max_ulp(run(ex, enn), run(mx, mnn), maxulp=1)
    assert run(ex, enn)[1] == 0.0 and run(ex, enn)[2] == 0.0


def test_logaddexp_under_vmap_jvp_and_compile():
    a, b = np.array([[0.0, 1.0, -3.0], [2.0, 2.0, 30.0]], np.float32), np.float32(0.5)

    def run(m):
        x = m.array(a)
        f = lambda x: m.logaddexp(x, m.array(b))  # noqa: E731
        return [np.array(v) for v in (
            m.vmap(f)(x), m.jvp(f, [x], [m.ones_like(x)])[1][0],
            m.compile(m.grad(lambda x: f(x).sum()))(x))]

    for ours, theirs in zip(run(ex), run(mx)):
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_tanh_derivative_is_mlx_s_past_saturation(dtype):
    # MLX's derivative is g / cosh(x)^2: 3.5e-26 at x = 30 where 1 - tanh(x)^2 is 0 (and
    # 1.2e-7, a float32 unit, where tanh rounds to just below 1)
    def run(m):
        x = m.array([0.0, 0.5, -2.0, 9.0, 12.0, 30.0, -30.0, 100.0]).astype(getattr(m, dtype))
        f = lambda x: m.tanh(x).sum()  # noqa: E731
        return [np.array(v.astype(m.float32)) for v in (
            m.tanh(x), m.grad(f)(x), m.jvp(m.tanh, [x], [m.ones_like(x)])[1][0],
            m.grad(lambda x: m.grad(f)(x).sum())(x))]

    # NOTE: ember's cosh and MLX's round otherwise by up to 2 ulps (4 in the second
    # derivative's product)
    for ours, theirs in zip(run(ex), run(mx)):
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=4)
    if dtype != "float16":  # (cosh(30)^2 overflows float16: 0 on both)
        assert run(ex)[1][5] > 0.0


# (name, function of the differentiated half array `z` and a second half array `w`)
_HALF_GRADS = [
    ("logaddexp", lambda m, z, w: m.logaddexp(z, w)),
    ("logaddexp scalar", lambda m, z, w: m.logaddexp(0.0, z)),
    ("logaddexp broadcast", lambda m, z, w: m.logaddexp(z, w[:1])),
    ("rsqrt", lambda m, z, w: m.rsqrt(m.abs(z) + 0.01)),
    ("logsumexp", lambda m, z, w: m.logsumexp(z, axis=-1)),
    ("logsumexp keepdims", lambda m, z, w: m.logsumexp(z, axis=-1, keepdims=True)),
    ("logsumexp all", lambda m, z, w: m.logsumexp(z[:1], axis=(0, 1))),
    ("softmax", lambda m, z, w: m.softmax(z * 4, axis=-1)),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,fn", _HALF_GRADS, ids=[c[0] for c in _HALF_GRADS])
def test_half_derivatives_are_mlx_s_vjps_in_half_ops(dtype, name, fn):
    """MLX's VJPs of logaddexp (g * sigmoid(a - b), g * (1 - sigmoid(a - b))), rsqrt
    ((-0.5 * g) * (out / x)), logsumexp (g * precise softmax) and softmax (s * g -
    s * sum(s * g)) run as half ops, each rounded to the half type: bit for bit, as each
    step is one correctly rounded op (or MLX's sigmoid / exp, matched bit for bit)."""
    rng = np.random.default_rng(3)
    z0 = (rng.standard_normal((6, 40)) * 3).astype(np.float32)
    w0 = (rng.standard_normal((6, 40)) * 3).astype(np.float32)
    cot = rng.standard_normal((6, 40)).astype(np.float32)

    def run(m):
        z, w = (m.array(a).astype(getattr(m, dtype)) for a in (z0, w0))

        def loss(z):
            out = fn(m, z, w)
            c = m.array(cot.reshape(-1)[:out.size].reshape(out.shape)).astype(out.dtype)
            return (out * c).sum()

        g = m.grad(loss)(z)
        t = m.jvp(lambda z: fn(m, z, w), [z], [m.array(cot).astype(z.dtype)])[1][0]
        return [np.array(v.astype(m.float32)) for v in (g, t)]

    (g, t), (g_mlx, t_mlx) = run(ex), run(mx)
    assert _same(g, g_mlx)
    # NOTE: the jvps' sums (logsumexp's over the row, and the softmax's) accumulate in
    # float32 in another order than MLX's: within a unit of the half type's last place
    unit = 2.0 ** (-10 if dtype == "float16" else -7)
    np.testing.assert_allclose(t, t_mlx, rtol=unit, atol=unit * np.abs(t_mlx).max())


# erfinv's domain: uniforms in (-1, 1), values next to +-1 (its tail polynomial), the edges
_ERFINV_VALUES = np.concatenate([_RNG.uniform(-1, 1, 20000).astype(np.float32),
                                 np.nextafter(np.float32(1), np.float32(0)) - np.arange(
                                     2000, dtype=np.float32) * np.float32(6e-8),
                                 np.array([-1, 1, 0, -0.0, np.nan, 2], np.float32)])


@pytest.mark.parametrize("op", ["log", "log1p", "erfinv"])
def test_log_log1p_erfinv_are_mlx_s_c_library_and_polynomial(op):
    # MLX's float32 log / log1p are glibc's logf / log1pf (not correctly rounded: NumPy's
    # differ in about 8% / 4% of values) and erfinv its fma polynomial: bit for bit, in
    # float32 and through float32 in the half types, as functions and as methods
    f32 = _ERFINV_VALUES if op == "erfinv" else np.abs(F32_VALUES)
    for dtype, values in (("float32", f32), ("float16", HALF_VALUES["float16"]),
                          ("bfloat16", HALF_VALUES["bfloat16"])):
        xm, xe = _pair(values, dtype)
        assert _same(_np(mx, getattr(mx, op)(xm)), _np(ex, getattr(ex, op)(xe))), (op, dtype)
        if op != "erfinv":
            assert _same(_np(mx, getattr(xm, op)()), _np(ex, getattr(xe, op)())), (op, dtype)
    inside = np.linspace(-0.9, 0.9, 13, dtype=np.float32) if op == "erfinv" else \
        np.linspace(0.1, 4, 13, dtype=np.float32)
    xm, xe = _pair(inside, "float32")
    gm = mx.grad(lambda x: getattr(mx, op)(x).sum())(xm)
    ge = ex.grad(lambda x: getattr(ex, op)(x).sum())(xe)
    # (the same derivative in float32 ops; erfinv's through MLX's exp: a few ulps)
    np.testing.assert_allclose(_np(ex, ge), _np(mx, gm), rtol=1e-6)
    fm = mx.compile(lambda x: getattr(mx, op)(x) * 2)(xm)
    fe = ex.compile(lambda x: getattr(ex, op)(x) * 2)(xe)
    assert _same(_np(mx, fm), _np(ex, fe))
