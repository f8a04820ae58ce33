"""mx.fast (ember.mlx.core.fast) against MLX's fused kernels: values and gradients."""

import numpy as np
import pytest

import ember.mlx.core as mx
from ember.mlx.core import fast

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 5, 8)).astype(np.float32)
W = RNG.standard_normal((8,)).astype(np.float32)
B = RNG.standard_normal((8,)).astype(np.float32)



CASES = {
    "rms_norm": (lambda m, x, w: m.fast.rms_norm(x, w, 1e-5), [X, W]),
    "rms_norm_no_weight": (lambda m, x: m.fast.rms_norm(x, None, 1e-5), [X]),
    "layer_norm": (lambda m, x, w, b: m.fast.layer_norm(x, w, b, 1e-5), [X, W, B]),
    "layer_norm_bare": (lambda m, x: m.fast.layer_norm(x, None, None, 1e-3), [X]),
    "rope": (lambda m, x: m.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0,
                                      offset=0), [X]),
    "rope_traditional_partial": (lambda m, x: m.fast.rope(
        x, 4, traditional=True, base=500.0, scale=0.5, offset=3), [X]),
    "sdpa": (lambda m, q, k, v: m.fast.scaled_dot_product_attention(q, k, v, scale=0.3),
             [X, X[:, :, ::-1].copy(), X * 2]),
    "sdpa_causal": (lambda m, q, k, v: m.fast.scaled_dot_product_attention(
        q, k, v, scale=0.3, mask="causal"), [X[:, :, :3].copy(), X, X * 2]),
    "sdpa_gqa_additive": (lambda m, q, k, v: m.fast.scaled_dot_product_attention(
        q[:, :, :4], k[:1], v[:1], scale=0.3, mask=m.array(np.triu(np.full((4, 4), -1e9,
                                                                            np.float32), 1))),
        [X.reshape(2, 3, 5, 8)[:, :, :4].reshape(1, 6, 4, 8).copy(), X[:1, :, :4].copy(),
         X[:1, :, :4].copy()]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fast_matches_mlx(mlx, close, name):
    f, args = CASES[name]

    def run(m):
        return m.value_and_grad(lambda *a: m.sum(m.sin(f(m, *a))),
                                argnums=list(range(len(args))) if len(args) > 1 else 0)(
            *[m.array(a) for a in args])

    ours_f = f(mx, *[mx.array(a) for a in args])
    theirs_f = f(mlx, *[mlx.array(a) for a in args])
    # NOTE: fused kernels sum in another order, and sin/cos/exp differ by ulps: atol 1e-5
    close(ours_f, theirs_f, rtol=1e-5, atol=1e-5)
    (_, g1), (_, g2) = run(mx), run(mlx)
    close(g1, g2, rtol=1e-4, atol=1e-5)


def test_rope_array_offset(mlx, close):
    ours = fast.rope(mx.array(X), 8, traditional=False, base=10000.0, scale=1.0,
                     offset=mx.array(4))
    theirs = mlx.fast.rope(mlx.array(X), 8, traditional=False, base=10000.0, scale=1.0,
                           offset=mlx.array(4))
    close(ours, theirs, atol=1e-5)


def test_rope_freqs(mlx, close):
    freqs = np.linspace(1, 30, 4).astype(np.float32)
    ours = fast.rope(mx.array(X), 8, traditional=True, base=None, scale=1.0, offset=0,
                     freqs=mx.array(freqs))
    theirs = mlx.fast.rope(mlx.array(X), 8, traditional=True, base=None, scale=1.0,
                           offset=0, freqs=mlx.array(freqs))
    close(ours, theirs, atol=1e-5)


def test_sdpa_boolean_mask(mlx, close):
    m = RNG.random((5, 5)) < 0.7
    np.fill_diagonal(m, True)
    ours = fast.scaled_dot_product_attention(mx.array(X), mx.array(X), mx.array(X),
                                             scale=1.0, mask=mx.array(m))
    theirs = mlx.fast.scaled_dot_product_attention(mlx.array(X), mlx.array(X),
                                                   mlx.array(X), scale=1.0, mask=mlx.array(m))
    close(ours, theirs, atol=1e-5)


def test_float16_keeps_dtype():
    x = mx.array(X).astype(mx.float16)
    assert fast.rms_norm(x, None, 1e-5).dtype == mx.float16
    assert fast.layer_norm(x, None, None, 1e-5).dtype == mx.float16


# -- cross_entropy ---------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "index_dtype"), [
    (shape, index) for shape in [(3, 5), (7,), (2, 3, 11), (4, 300), (64, 2000)]
    for index in ["int32", "uint8", "int64", "uint32"] if index != "uint8" or shape[-1] < 256])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cross_entropy_matches_mlx(mlx, shape, dtype, index_dtype):
    """MLX's CPU path: logsumexp and the picked logit in the logits' dtype, the difference
    cast to float32. MLX's logsumexp sums its own SIMD exp in its own order, so float32
    losses differ by a few ulps of the terms (up to ~16 ulps of a small loss): compared at
    1e-6 of the logits' scale; in float16 / bfloat16 at the type's epsilon."""
    rng = np.random.default_rng(shape[-1])
    logits = (rng.standard_normal(shape) * 4).astype(np.float32)
    targets = rng.integers(0, shape[-1], shape[:-1])
    ours = fast.cross_entropy(mx.array(logits).astype(getattr(mx, dtype)),
                              mx.array(targets).astype(getattr(mx, index_dtype)))
    theirs = mlx.fast.cross_entropy(mlx.array(logits).astype(getattr(mlx, dtype)),
                                    mlx.array(targets).astype(getattr(mlx, index_dtype)))
    assert repr(ours.dtype) == repr(theirs.dtype) == "mlx.core.float32"
    assert ours.shape == theirs.shape == shape[:-1]
    tol = {"float32": 1e-6, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]
    scale = max(1.0, float(np.abs(logits).max()))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=tol, atol=tol * scale)


def test_cross_entropy_float64_logits(mlx, close):
    """float64 logits give float32 losses in both; MLX's float64 exp on the CPU is good to
    about 1e-7 relative (ember's to the last bit), so the values are compared at 1e-6."""
    rng = np.random.default_rng(21)
    logits = rng.standard_normal((6, 9)) * 4
    targets = rng.integers(0, 9, 6).astype(np.int32)
    ours = fast.cross_entropy(mx.array(logits, mx.float64), mx.array(targets))
    theirs = mlx.fast.cross_entropy(mlx.array(logits, mlx.float64), mlx.array(targets))
    assert repr(ours.dtype) == repr(theirs.dtype)
    close(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("expr", [
    "mx.fast.cross_entropy(mx.array([[-math.inf, -math.inf], [math.nan, 1.0], [1e38, 1e38],"
    " [math.inf, 1.0], [-math.inf, 1.0]]), mx.array([0, 0, 1, 0, 0]))",
    "mx.fast.cross_entropy(mx.array([1.0, 2.0, 3.0]), mx.array(1))",
    "mx.fast.cross_entropy(mx.arange(6.0).reshape(2, 3), mx.array([-3, -1]))",
    "mx.fast.cross_entropy(mx.arange(6.0).reshape(2, 3), mx.array([2, 0], mx.int8))",
    "mx.fast.cross_entropy(mx.arange(6.0).reshape(3, 2).T, mx.array([2, 0]))",
    "mx.fast.cross_entropy(mx.zeros((0, 3)), mx.zeros((0,), mx.int32))",
    "mx.fast.cross_entropy(mx.zeros((3, 0)), mx.zeros((3,), mx.int32))",
    "mx.fast.cross_entropy(mx.array(1.0), mx.array(1))",
    "mx.fast.cross_entropy(mx.ones((2, 3)), mx.array([1, 2, 0]))",
    "mx.fast.cross_entropy(mx.ones((2, 3)), mx.array([[1, 2]]))",
    "mx.fast.cross_entropy(mx.ones((2, 3)), mx.array(1))",
    "mx.fast.cross_entropy(mx.ones((2, 3), mx.int32), mx.array([1, 2]))",
    "mx.fast.cross_entropy(mx.ones((2, 3), mx.complex64), mx.array([1, 2]))",
    "mx.fast.cross_entropy(mx.ones((2, 3), mx.complex64), mx.array([1, 2, 0]))",
    "mx.fast.cross_entropy(mx.ones((2, 3), mx.int32), mx.array([1.0, 2.0]))",
    "mx.fast.cross_entropy(mx.ones((2, 3)), mx.array([1.0, 2.0]))",
    "mx.fast.cross_entropy(mx.ones((2, 3)), mx.array([True, False]))",
])
def test_cross_entropy_same_as_mlx(mlx, expr):
    from mlx_oracle import outcome

    setup = "import math"
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup), expr


def test_cross_entropy_needs_arrays(mlx):
    messages = []
    for module in (mx, mlx):
        with pytest.raises(TypeError) as info:
            module.fast.cross_entropy([[1.0, 2.0]], module.array([1]))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cross_entropy_gradient(mlx, close, dtype):
    """softmax - one-hot, weighted: ember's logsumexp derivative rounds differently from
    MLX's exp(x - lse), so gradients agree to float32 (float16) round-off."""
    rng = np.random.default_rng(22)
    logits = (rng.standard_normal((4, 7)) * 3).astype(np.float32)
    targets = rng.integers(0, 7, 4).astype(np.int32)
    weights = np.arange(1.0, 5.0, dtype=np.float32)

    def grad(m):
        def loss(x):
            return (m.fast.cross_entropy(x, m.array(targets)) * m.array(weights)).sum()
        return m.grad(loss)(m.array(logits).astype(getattr(m, dtype)))

    ours, theirs = grad(mx), grad(mlx)
    assert repr(ours.dtype) == repr(theirs.dtype)
    tol = 1e-6 if dtype == "float32" else 4e-3
    close(ours.astype(mx.float32), theirs.astype(mlx.float32), rtol=tol, atol=tol)


@pytest.mark.parametrize("expr", [
    "mx.fast.layer_norm(mx.ones(()), None, None, 1e-5)",
    "mx.fast.layer_norm(mx.ones((2, 5)), mx.ones((6,)), None, 1e-5)",
    "mx.fast.layer_norm(mx.ones((2, 5)), None, mx.ones((6,)), 1e-5)",
    "mx.fast.layer_norm(mx.ones((2, 5)), mx.ones((5, 1)), None, 1e-5)",
    "mx.fast.layer_norm(mx.ones((2, 5)), None, mx.ones((1, 5)), 1e-5)",
    "mx.fast.layer_norm(mx.ones((2, 5), mx.int32), None, None, 1e-5)",
    "mx.fast.rms_norm(mx.ones(()), None, 1e-5)",
    "mx.fast.rms_norm(mx.ones((2, 5)), mx.ones((6,)), 1e-5)",
    "mx.fast.rms_norm(mx.ones((2, 5)), mx.ones((1, 5)), 1e-5)",
    "mx.fast.rms_norm(mx.ones((2, 5), mx.int32), None, 1e-5)",
    "mx.fast.rms_norm(mx.ones((2, 5), mx.int32), mx.ones((5,), mx.int8), 1e-5)",
])
def test_norm_errors_are_mlxs(mlx, expr):
    from mlx_oracle import outcome

    assert outcome(expr, mx) == outcome(expr, mlx)


X3 = "mx.array([[1.0, 2.1, 3.3], [0.5, -4.0, 2.0]], mx.{})"
P3 = "mx.array([0.3, 1.7, 2.9], mx.{})"


@pytest.mark.parametrize("expr", [
    # the result type: x with its weight (and bias); a bias alone does not promote
    f"mx.fast.layer_norm({X3.format('float16')}, None, {P3.format('float32')}, 1e-5)",
    f"mx.fast.layer_norm({X3.format('float16')}, {P3.format('float32')}, None, 1e-5)",
    f"mx.fast.layer_norm({X3.format('float16')}, {P3.format('float32')},"
    f" {P3.format('float32')}, 1e-5)",
    f"mx.fast.layer_norm({X3.format('int32')}, {P3.format('float32')}, None, 1e-5)",
    f"mx.fast.layer_norm({X3.format('float32')}, None, {P3.format('int32')}, 1e-5)",
    f"mx.fast.rms_norm({X3.format('float16')}, {P3.format('float32')}, 1e-5)",
    f"mx.fast.rms_norm({X3.format('int32')}, {P3.format('float32')}, 1e-5)",
    f"mx.fast.rms_norm({X3.format('bfloat16')}, {P3.format('float16')}, 1e-5)",
])
def test_norm_types_are_mlxs(mlx, expr):
    ours, theirs = eval(expr, {"mx": mx}), eval(expr, {"mx": mlx})
    assert repr(ours.dtype) == repr(theirs.dtype)
    # NOTE: the mean and variance are float32 sums taken in another order than MLX's;
    # the normalised values are rounded to 16 bits where the result type has them
    tol = 1e-5 if ours.dtype == mx.float32 else 4e-3
    np.testing.assert_allclose(np.array(ours.astype(mx.float32)),
                               np.array(theirs.astype(mlx.float32)), rtol=tol, atol=tol)


@pytest.mark.parametrize("expr", [
    "mx.fast.rope(mx.ones((1, 3, 3)), 3, traditional=False, base=10000.0, scale=1.0, offset=0)",
    "mx.fast.rope(mx.ones((1, 3, 6)), 5, traditional=True, base=10.0, scale=1.0, offset=0)",
])
def test_rope_refuses_odd_dims_as_mlx(mlx, expr):
    from mlx_oracle import outcome

    assert outcome(expr, mx) == outcome(expr, mlx)
