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
