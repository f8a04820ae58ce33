"""The fused attention kernels' own derivatives (the public scaled_dot_product_attention is
tested in tests/nn; its forward-mode and vmap rules in tests/core/test_rules_nn.py and
against torch.func in tests/func/test_sweep_nn.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops.attention import attention_backward_p
from ember.ops.registry import bind

from helpers import check_grads


def _weighted_sum(outs, seed: int):
    """One number from several outputs, each weighted elementwise at random."""
    r = np.random.default_rng(seed)
    return sum((o * ember.tensor(r.standard_normal(tuple(o.shape)))).sum() for o in outs)


@pytest.mark.parametrize("with_weight_grad", [True, False])
def test_the_fused_backward_kernel_has_a_gradient_in_each_input(with_weight_grad):
    # forward over reverse (jvp(grad(f))) runs the fused kernel, so it has derivatives;
    # the weights are taken as an input of their own (row-normalised, as softmax gives them)
    rng = np.random.default_rng(0)
    g, gw = rng.standard_normal((1, 2, 3, 2)), rng.standard_normal((1, 2, 3, 5))
    q, k, v = (rng.standard_normal(s) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 2)))
    w = rng.uniform(0.1, 1, (1, 2, 3, 5))
    w /= w.sum(-1, keepdims=True)
    if with_weight_grad:
        check_grads(lambda *a: _weighted_sum(bind(attention_backward_p, *a, scale=0.3), 1),
                    g, gw, q, k, v, w)
    else:
        check_grads(lambda g, *a: _weighted_sum(
            bind(attention_backward_p, g, None, *a, scale=0.3), 2), g, q, k, v, w)
