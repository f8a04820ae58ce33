"""torch.func sweep of the neural-network primitives: convolution, pooling, grid sampling,
embedding, the losses (nll, ctc, the `pointwise_loss` family), attention, batch and layer
norm, and their fused derivative kernels (reached through a gradient inside the call):
jvp, vmap and vjp against torch."""

from __future__ import annotations

import numpy as np
import pytest
from tests.func.sweep import Case, make_tests

import ember


def _F(m):
    return m.nn.functional


def _i(m, *v):
    return m.tensor(list(v))


def _grad(m, f, *argnums):
    """The gradient of `f`'s sum wrt `argnums`: what reaches a fused backward kernel."""
    return m.func.grad(lambda *a: f(*a).sum(), argnums=argnums or 0)


def _ctc(m, x):
    lp = x.log_softmax(-1)  # (T=5, N=2, C=4)
    return _F(m).ctc_loss(lp, _i(m, [1, 2, 2], [3, 1, 0]), (5, 4), (3, 2), reduction="sum")


def _bn(m, x, w, b):
    rm, rv = m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype)
    return (_F(m).batch_norm(x, None, None, w, b, training=True),
            _F(m).batch_norm(x, rm, rv, w, b, training=False), _F(m).instance_norm(x))


def _sdpa(m, q, k, v):
    return (_F(m).scaled_dot_product_attention(q, k, v),
            _F(m).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3))


FLASH = ("torch has no forward-mode rule for its CPU flash attention (4-d inputs of one head "
         "size), which ember's fused primitive mirrors; the composed case below has both")

CASES = [
    Case("convolution", lambda m, x, w, b: (
        _F(m).conv2d(x, w, b, padding=1), _F(m).conv2d(x, w, None, stride=2, dilation=1),
        _F(m).conv1d(x[:, :, 0], w[:, :, 0], b, padding=2)),
         [(2, 2, 5, 5), (3, 2, 3, 3), (3,)], slack=10),
    Case("conv_groups_transpose", lambda m, x, w: (
        _F(m).conv2d(x, w, groups=2, padding=(1, 0)),
        _F(m).conv_transpose2d(x, w, stride=2)),
         [(1, 4, 4, 4), (4, 2, 3, 3)], slack=10),
    Case("convolution_backward", lambda m, x, w: _grad(m, lambda a, b: _F(m).conv2d(
        a, b, padding=1) ** 2, 0, 1)(x, w), [(1, 2, 4, 4), (3, 2, 3, 3)], slack=10),
    Case("max_pool_with_indices", lambda m, x: (
        _F(m).max_pool2d(x, 2), _F(m).max_pool2d(x, 3, 1, 1, return_indices=True)[1],
        _F(m).max_pool1d(x[0], 2, 1), _F(m).adaptive_max_pool2d(x, 2))
         , [(1, 2, 4, 4)]),
    Case("adaptive_max_pool_with_indices", lambda m, x: (  # (uneven, overlapping bins)
        _F(m).adaptive_max_pool2d(x, 3), _F(m).adaptive_max_pool2d(x, (2, 3), True)[1]),
         [(1, 2, 4, 5)]),
    Case("max_pool_backward", lambda m, x: _grad(m, lambda a: _F(m).max_pool2d(a, 2) ** 2)(x),
         [(1, 2, 4, 4)]),
    Case("avg_pool", lambda m, x: (_F(m).avg_pool2d(x, 2), _F(m).adaptive_avg_pool2d(x, 3),
                                  _F(m).avg_pool1d(x[0], 3, 1, 1)), [(1, 2, 4, 4)]),
    Case("grid_sampler", lambda m, x, g: (
        _F(m).grid_sample(x, g.tanh(), align_corners=False),
        _F(m).grid_sample(x, g.tanh(), mode="nearest", padding_mode="border",
                          align_corners=True)), [(1, 2, 4, 4), (1, 3, 3, 2)],
         jvp="torch has no forward-mode rule for grid_sampler_2d (NotImplementedError)"),
    Case("grid_sampler_backward", lambda m, x, g: _grad(m, lambda a, b: _F(m).grid_sample(
        a, b.tanh(), align_corners=False) ** 2, 0, 1)(x, g), [(1, 2, 4, 4), (1, 3, 3, 2)],
         jvp="torch has no forward-mode rule for grid_sampler_2d_backward"),
    Case("embedding", lambda m, w: (_F(m).embedding(_i(m, [0, 2], [3, 0]), w),
                                    _F(m).embedding(_i(m, 1, 0, 1), w, padding_idx=1)),
         [(4, 3)], nested=False),
    Case("embedding_backward", lambda m, w: _grad(m, lambda a: _F(m).embedding(
        _i(m, [0, 2], [3, 0]), a) ** 2)(w), [(4, 3)]),
    # (class weights detached: torch gives them no derivative (vjp refuses, jvp is zero)
    # while ember's jvp differentiates the weighted mean; see the report)
    Case("nll_loss", lambda m, x, w: (
        _F(m).nll_loss(x, _i(m, 2, 0, 1)), _F(m).nll_loss(x, _i(m, 2, 0, 1), reduction="none"),
        _F(m).cross_entropy(x, _i(m, 2, 0, 1), w.detach().abs() + 0.1, ignore_index=0),
        _F(m).cross_entropy(x, _i(m, 2, 0, 1), label_smoothing=0.2)),
         [(3, 4), (4,)]),
    Case("nll_loss_backward", lambda m, x: _grad(m, lambda a: _F(m).nll_loss(
        a, _i(m, 2, 0, 1), reduction="sum"))(x * x), [(3, 4)]),
    Case("ctc_loss", _ctc, [(5, 2, 4)],
         jvp="torch has no forward-mode rule for ctc_loss (NotImplementedError)",
         vmap="torch's vmap has no batching rule for ctc_loss (it refuses the fallback)"),
    # (4-d inputs of one head size: the fused primitive; others: the composed ops)
    Case("scaled_dot_product_attention", _sdpa, [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)],
         slack=10, jvp=FLASH),
    Case("attention_composed", _sdpa, [(2, 3, 4), (2, 5, 4), (2, 5, 3)], slack=10),
    Case("scaled_dot_product_attention_backward", lambda m, q, k, v: _grad(
        m, lambda a, b, c: _sdpa(m, a, b, c)[0] ** 2, 0, 1, 2)(q, k, v),
         [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], slack=10, jvp=FLASH,
         vjp="torch has no derivative of its flash attention backward (double backward)"),
    Case("native_batch_norm", _bn, [(4, 3, 2), (3,), (3,)], slack=10, nested=False),
    Case("native_batch_norm_backward", lambda m, x, w, b: _grad(
        m, lambda *a: _bn(m, *a)[0] ** 2, 0, 1, 2)(x, w, b), [(4, 3, 2), (3,), (3,)],
         slack=10, nested=False),
    Case("native_layer_norm_backward", lambda m, x, w, b: _grad(
        m, lambda a, c, d: _F(m).layer_norm(a, (4,), c, d) ** 2, 0, 1, 2)(x, w, b),
         [(3, 4), (4,), (4,)], slack=10),
    Case("native_group_norm_backward", lambda m, x, w, b: _grad(
        m, lambda a, c, d: _F(m).group_norm(a, 2, c, d) ** 2, 0, 1, 2)(x, w, b),
         [(2, 4, 3), (4,), (4,)], slack=10),
    Case("native_layer_norm", lambda m, x, w, b: (
        _F(m).layer_norm(x, (4,), w, b), _F(m).layer_norm(x, (3, 4)),
        _F(m).group_norm(x.unsqueeze(0), 3)), [(3, 4), (4,), (4,)], slack=10),
    Case("mse_loss", lambda m, x, y: (_F(m).mse_loss(x, y), _F(m).mse_loss(
        x, y, reduction="none"), _F(m).mse_loss(x, y, reduction="sum")), [(3, 4), (3, 4)]),
    Case("smooth_l1_loss", lambda m, x, y: (_F(m).smooth_l1_loss(x, y, beta=0.5),
                                            _F(m).l1_loss(x, y)), [(3, 4), (3, 4)]),
    Case("huber_loss", lambda m, x, y: _F(m).huber_loss(x, y, reduction="none", delta=0.7),
         [(3, 4), (3, 4)]),
    Case("binary_cross_entropy", lambda m, x, y: _F(m).binary_cross_entropy(
        x, y), [(3, 4), (3, 4)], "prob"),
    # (pos_weight detached: neither framework differentiates with respect to it)
    Case("binary_cross_entropy_with_logits", lambda m, x, y: (
        _F(m).binary_cross_entropy_with_logits(x, y.sigmoid()),
        _F(m).binary_cross_entropy_with_logits(x, y.sigmoid(),
                                               pos_weight=y[0].detach().abs())),
         [(3, 4), (3, 4)]),
    # (the target detached: neither framework differentiates soft_margin_loss wrt it)
    Case("soft_margin_loss", lambda m, x, y: _F(m).soft_margin_loss(x, y.detach().sign()),
         [(3, 4), (3, 4)]),
    Case("other_losses", lambda m, x, y: (
        _F(m).kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"),
        _F(m).cosine_similarity(x, y), _F(m).pairwise_distance(x, y),
        _F(m).poisson_nll_loss(x, y.abs())), [(3, 4), (3, 4)]),
    Case("gaussian_nll_loss", lambda m, x, y: _F(m).gaussian_nll_loss(x, y, y.abs() + 0.5),
         [(3, 4), (3, 4)], vmap="torch's gaussian_nll_loss branches on any(var < 0): "
         "data-dependent control flow, refused by vmap in both frameworks"),
    Case("pixel_shuffle_fold", lambda m, x: (
        _F(m).pixel_shuffle(x, 2), _F(m).unfold(x, 2), _F(m).fold(x.reshape(1, 4, 6), (3, 4), 2),
        _F(m).interpolate(x, scale_factor=2),
        _F(m).interpolate(x, size=(3, 5), mode="bilinear")), [(1, 4, 2, 3)]),
    Case("native_channel_shuffle", lambda m, x: (_F(m).native_channel_shuffle(x, 2),
                                                 _F(m).channel_shuffle(x, 2)), [(2, 4, 3)],
         jvp="torch has no derivative for native_channel_shuffle",
         vjp="torch has no derivative for native_channel_shuffle"),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)


# --- forward over reverse through the fused derivative kernels, against finite differences --
# (torch has no forward-mode rule for attention's and grid_sampler's, so the oracle is the
# gradient's own central difference: jvp(grad f)(x; t) = (grad f(x + e t) - grad f(x - e t))
# / 2e)

def _attention_4d(q, k, v):
    return (ember.nn.functional.scaled_dot_product_attention(q, k, v) ** 2).sum()


def _grid(x, g):
    return (ember.nn.functional.grid_sample(x, g, align_corners=False) ** 2).sum()


def _layer_norm(x, w, b):
    return (ember.nn.functional.layer_norm(x, (4,), w, b) ** 3).sum()


@pytest.mark.parametrize("fn, shapes", [
    pytest.param(_attention_4d, [(1, 2, 3, 4)] * 3, id="attention"),
    pytest.param(_grid, [(1, 2, 4, 4), (1, 3, 3, 2)], id="grid_sampler"),
    pytest.param(_layer_norm, [(3, 4), (4,), (4,)], id="layer_norm"),
])
def test_forward_over_reverse_through_a_fused_backward(fn, shapes):
    rng = np.random.default_rng(0)
    xs = [ember.tensor(rng.uniform(-0.9, 0.9, s)) for s in shapes]
    ts = [ember.tensor(rng.standard_normal(s)) for s in shapes]
    argnums = tuple(range(len(xs)))
    grad = ember.func.grad(fn, argnums=argnums)
    got = ember.func.jvp(grad, tuple(xs), tuple(ts))[1]
    eps = 1e-6
    hi = grad(*[x + eps * t for x, t in zip(xs, ts)])
    lo = grad(*[x - eps * t for x, t in zip(xs, ts)])
    for g, h, lw in zip(got, hi, lo):
        np.testing.assert_allclose(g.numpy(), ((h - lw) / (2 * eps)).numpy(), rtol=1e-5,
                                   atol=1e-7)
