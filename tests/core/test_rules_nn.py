"""Forward-mode (jvp) and vmap (batch) rules of the nn-kernel area: matmul and addmm, the
convolutions, pooling, batch and layer norm, attention, embedding, nll and CTC losses, the
pointwise-loss family, constant padding, grid sampling and the optimizer updates.

Each case runs a public call (or, for a backward primitive no public call binds under
no_grad, the primitive itself), records which of this area's primitives it binds (the
expected list is asserted, so a call that stops binding one is noticed), and checks each
one's rules on exactly the arguments it was bound with: the jvp against central finite
differences in float64, the batch rule against a loop over perturbed copies.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
import ember.nn.functional as F
from ember._core import (
    BY_LOOP,
    MISSING,
    NOT_DIFFERENTIABLE,
    ByParam,
    batch_rules,
    bind,
    jvp_rules,
    loop_reasons,
)
from ember.ops import (
    attention,
    batch_norm,
    conv,
    ctc_loss,
    layer_norm,
    loss_ops,
    matmul,
    nn_ops,
    pooling,
    sampling,
)
from ember.optim import adam, rmsprop, sgd

AREA = [
    matmul.matmul_p, matmul.addmm_p,
    conv.conv_p, conv.conv_input_grad_p, conv.conv_weight_grad_p,
    pooling.max_pool_p, pooling.max_pool_backward_p,
    batch_norm.batch_norm_p, batch_norm.batch_norm_backward_p,
    layer_norm.layer_norm_p, layer_norm.layer_norm_backward_p,
    attention.attention_p, attention.attention_backward_p,
    nn_ops.embedding_p, nn_ops.embedding_backward_p, nn_ops.row_scale_p,
    nn_ops.nll_loss_p, nn_ops.nll_loss_backward_p, nn_ops.constant_pad_p,
    ctc_loss.ctc_loss_p, ctc_loss.ctc_grad_p,
    loss_ops.pointwise_loss_p,
    sampling.grid_sampler_p, sampling.grid_sampler_backward_p,
    adam.adam_step_p, sgd.sgd_step_p, rmsprop.adadelta_step_p,
]
LOSSES = list(loss_ops.pointwise_loss_p.members.values())


def _r(*shape, seed: int = 0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=ember.float64)


def _prob(*shape, seed: int = 0):
    return ember.tensor(np.random.default_rng(seed).uniform(0.2, 0.8, shape),
                        dtype=ember.float64)


def _distinct(*shape, seed: int = 0):
    """Values all distinct and apart (no ties for max pooling, no kinks within eps)."""
    n = int(np.prod(shape))
    return ember.tensor(np.random.default_rng(seed).permutation(n).reshape(shape) / 7.0,
                        dtype=ember.float64)


def _check_area(fn, *args) -> list[str]:
    """Check the jvp and batch rules of each area primitive `fn(*args)` binds, on the
    arguments it bound; returns their names (a family's as `family(member)`)."""
    names = []
    for prim, pargs, params in primitive_calls(fn, *args):
        if prim not in AREA:
            continue
        fn_p = params.get("fn")
        names.append(prim.name if fn_p is None else f"{prim.name}({fn_p.name})")

        def one(*a, prim=prim, params=params):
            return bind(prim, *a, **params)

        check_jvp(one, *pargs)
        check_batch(one, *pargs)
        check_batch(one, *pargs, seed=1)  # other random batch axes
    return names


# --- the backward primitives, bound directly ----------------------------------------------

P2 = {"stride": (1, 2), "padding": ((1, 1), (0, 1)), "dilation": (1, 1), "groups": 2}


def _conv_input_grad(g, w):
    return bind(conv.conv_input_grad_p, g, w, x_shape=(2, 4, 5, 6), **P2)


def _conv_weight_grad(x, g):
    return bind(conv.conv_weight_grad_p, x, g, w_shape=(6, 2, 3, 3), **P2)


def _max_pool_backward(g):
    _, index = F.max_pool2d(_distinct(2, 3, 4, 4), 2, return_indices=True)
    return bind(pooling.max_pool_backward_p, g, index, shape=(2, 3, 4, 4), nd=2)


def _batch_norm_backward(g, x, w):
    _, xhat, mean, _, rstd = bind(batch_norm.batch_norm_p, x, None, None, eps=1e-5)
    return bind(batch_norm.batch_norm_backward_p, g, xhat, rstd, w, x, mean)


def _layer_norm_backward(g, x, w):
    _, xhat, rstd = bind(layer_norm.layer_norm_p, x, None, None, k=2, eps=1e-5)
    return bind(layer_norm.layer_norm_backward_p, g, xhat, rstd, w, k=2)


def _attention_backward(g, q, k, v):
    _, weights = bind(attention.attention_p, q, k, v, None, scale=0.3, causal=False)
    return bind(attention.attention_backward_p, g, None, q, k, v, weights, scale=0.3)


def _embedding_backward(g, idx, padding_idx, freq):
    return bind(nn_ops.embedding_backward_p, g, idx, num_weights=5, padding_idx=padding_idx,
                scale_grad_by_freq=freq)


def _row_scale(idx):
    return bind(nn_ops.row_scale_p, idx, num_weights=5, padding_idx=2, scale_grad_by_freq=True,
                dtype=ember.float64)


def _nll_backward(g, target, weight, reduction, shape):
    return bind(nn_ops.nll_loss_backward_p, g, target, weight, reduction=reduction,
                ignore_index=-100, in_shape=shape)


def _ctc_backward(g, lp):
    return bind(ctc_loss.ctc_grad_p, g, lp, ember.tensor([[1, 2], [3, 3]]), input_lengths=(6, 5),
                target_lengths=(2, 2), blank=0, zero_infinity=False)


def _grid_backward(g, x, grid, input_grad):
    return bind(sampling.grid_sampler_backward_p, g, x, grid, mode=0, padding=0, align=False,
                input_grad=input_grad)


IDX = ember.tensor([[0, 2, 1], [3, 2, 2]])
TARGET = ember.tensor([0, 2, -100, 1])
TARGET2 = ember.tensor([[0, 2], [1, 1]])
LOG_PROBS = _r(6, 2, 4, seed=5).log_softmax(-1)
GRID = ember.tensor(np.random.default_rng(3).uniform(-0.9, 0.9, (2, 3, 2, 2)))
GRID3 = ember.tensor(np.random.default_rng(4).uniform(-0.9, 0.9, (2, 3, 2, 1, 3)))

# id -> (call, args, the area primitives it binds, in order)
CASES = {
    "mm": (lambda a, b: a @ b, (_r(3, 4), _r(4, 2, seed=1)), ["matmul"]),
    "vector_matrix": (lambda a, b: a @ b, (_r(4), _r(4, 2, seed=1)), ["matmul"]),
    "mv": (ember.mv, (_r(3, 4), _r(4, seed=1)), ["matmul"]),
    "dot": (ember.dot, (_r(4), _r(4, seed=1)), ["matmul"]),
    "vdot": (ember.vdot, (_r(4), _r(4, seed=1)), ["matmul"]),
    "bmm": (ember.bmm, (_r(2, 3, 4), _r(2, 4, 5, seed=1)), ["matmul"]),
    "matmul_broadcast": (ember.matmul, (_r(2, 1, 3, 4), _r(3, 4, 2, seed=1)), ["matmul"]),
    "addmm": (lambda i, a, b: ember.addmm(i, a, b, beta=0.5, alpha=2.0),
              (_r(3, 2), _r(3, 4, seed=1), _r(4, 2, seed=2)), ["addmm"]),
    "addmm_bias_row": (ember.addmm, (_r(2), _r(3, 4, seed=1), _r(4, 2, seed=2)), ["addmm"]),
    "addmv": (lambda i, a, b: ember.addmv(i, a, b, beta=0.5),
              (_r(3), _r(3, 4, seed=1), _r(4, seed=2)), ["addmm"]),
    "baddbmm": (lambda i, a, b: ember.baddbmm(i, a, b, alpha=0.3),
                (_r(2, 3, 5), _r(2, 3, 4, seed=1), _r(2, 4, 5, seed=2)), ["addmm"]),
    "addbmm": (lambda i, a, b: ember.addbmm(i, a, b, beta=2.0),
               (_r(3, 5), _r(2, 3, 4, seed=1), _r(2, 4, 5, seed=2)), ["addmm"]),
    "addr": (lambda i, a, b: ember.addr(i, a, b, beta=2.0, alpha=0.5),
             (_r(3, 5), _r(3, seed=1), _r(5, seed=2)), ["addmm"]),
    "conv2d_grouped": (lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=1, groups=2),
                       (_r(2, 4, 5, 6), _r(6, 2, 3, 3, seed=1)), ["convolution"]),
    "conv1d": (F.conv1d, (_r(2, 3, 7), _r(4, 3, 2, seed=1)), ["convolution"]),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2),
                         (_r(2, 4, 3, 3), _r(4, 3, 2, 2, seed=1)),
                         ["convolution_backward_input"]),
    "conv_backward_input": (_conv_input_grad, (_r(2, 6, 5, 3), _r(6, 2, 3, 3, seed=1)),
                            ["convolution_backward_input"]),
    "conv_backward_weight": (_conv_weight_grad, (_r(2, 4, 5, 6), _r(2, 6, 5, 3, seed=1)),
                             ["convolution_backward_weight"]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2, stride=2, padding=1), (_distinct(2, 3, 5, 5),),
                   ["max_pool_with_indices"]),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, stride=2), (_distinct(3, 7),),
                   ["max_pool_with_indices"]),
    "max_pool_backward": (_max_pool_backward, (_r(2, 3, 2, 2),),
                          ["max_pool_with_indices", "max_pool_backward"]),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   (_r(4, 3, 2), _r(3, seed=1), _r(3, seed=2)), ["native_batch_norm"]),
    "batch_norm_2d_no_affine": (lambda x: F.batch_norm(x, None, None, training=True),
                                (_r(4, 3),), ["native_batch_norm"]),
    "batch_norm_backward": (_batch_norm_backward, (_r(4, 3, 2), _r(4, 3, 2, seed=1),
                                                   _r(3, seed=2)),
                            ["native_batch_norm", "native_batch_norm_backward"]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
                   (_r(2, 3, 4), _r(3, 4, seed=1), _r(3, 4, seed=2)), ["native_layer_norm"]),
    "layer_norm_no_affine": (lambda x: F.layer_norm(x, (4,)), (_r(2, 3, 4),),
                             ["native_layer_norm"]),
    "layer_norm_backward": (_layer_norm_backward, (_r(2, 3, 4), _r(2, 3, 4, seed=1),
                                                   _r(3, 4, seed=2)),
                            ["native_layer_norm", "native_layer_norm_backward"]),
    "attention": (F.scaled_dot_product_attention,
                  (_r(1, 2, 3, 4), _r(1, 2, 5, 4, seed=1), _r(1, 2, 5, 4, seed=2)),
                  ["scaled_dot_product_attention"]),
    "attention_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                         (_r(1, 2, 3, 4), _r(1, 2, 3, 4, seed=1), _r(1, 2, 3, 4, seed=2)),
                         ["scaled_dot_product_attention"]),
    "attention_float_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        (_r(1, 2, 3, 4), _r(1, 2, 5, 4, seed=1), _r(1, 2, 5, 4, seed=2), _r(3, 5, seed=3)),
        ["scaled_dot_product_attention"]),
    "attention_bool_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        (_r(1, 2, 3, 4), _r(1, 2, 5, 4, seed=1), _r(1, 2, 5, 4, seed=2),
         ember.tensor(np.random.default_rng(0).random((3, 5)) > 0.3)),
        ["scaled_dot_product_attention"]),
    "attention_backward": (_attention_backward, (_r(1, 2, 3, 3), _r(1, 2, 3, 4, seed=1),
                                                 _r(1, 2, 5, 4, seed=2), _r(1, 2, 5, 3, seed=3)),
                           ["scaled_dot_product_attention",
                            "scaled_dot_product_attention_backward"]),
    "embedding": (lambda w, i: F.embedding(i, w), (_r(5, 3), IDX), ["embedding"]),
    "embedding_padding": (lambda w, i: F.embedding(i, w, padding_idx=2), (_r(5, 3), IDX),
                          ["embedding"]),
    "embedding_backward": (lambda g, i: _embedding_backward(g, i, None, False),
                           (_r(2, 3, 3), IDX), ["embedding_backward"]),
    "embedding_backward_padding_freq": (lambda g, i: _embedding_backward(g, i, 2, True),
                                        (_r(2, 3, 3), IDX), ["embedding_backward"]),
    "embedding_row_scale": (_row_scale, (IDX,), ["embedding_row_scale"]),
    "constant_pad": (lambda x: F.pad(x, (1, -1, 2, 0), value=3.0), (_r(2, 3, 4),),
                     ["constant_pad_nd"]),
    "ctc_padded": (lambda lp: F.ctc_loss(lp, ember.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2],
                                         reduction="none"), (LOG_PROBS,), ["ctc_loss"]),
    "ctc_concatenated": (lambda lp: F.ctc_loss(lp, ember.tensor([1, 2, 3]), [6, 5], [2, 1],
                                               reduction="sum"), (LOG_PROBS,), ["ctc_loss"]),
    "ctc_zero_infinity": (lambda lp: F.ctc_loss(lp, ember.tensor([[1, 2], [3, 3]]), [6, 1],
                                                [2, 2], reduction="none", zero_infinity=True),
                          (LOG_PROBS,), ["ctc_loss"]),
    "ctc_backward": (_ctc_backward, (_r(2), LOG_PROBS), ["ctc_loss_backward"]),
    "grid_sample_2d": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                       (_r(2, 3, 4, 5), GRID), ["grid_sampler"]),
    "grid_sample_bicubic": (lambda x, g: F.grid_sample(x, g, mode="bicubic",
                                                       padding_mode="border",
                                                       align_corners=True),
                            (_r(2, 3, 4, 5), GRID), ["grid_sampler"]),
    "grid_sample_3d": (lambda x, g: F.grid_sample(x, g, padding_mode="reflection",
                                                  align_corners=True),
                       (_r(2, 3, 4, 5, 3), GRID3), ["grid_sampler"]),
    "grid_sampler_backward": (lambda g, x, grid: _grid_backward(g, x, grid, True),
                              (_r(2, 3, 3, 2), _r(2, 3, 4, 5, seed=1), GRID),
                              ["grid_sampler_backward"]),
    "grid_sampler_backward_grid_only": (lambda g, x, grid: _grid_backward(g, x, grid, False),
                                        (_r(2, 3, 3, 2), _r(2, 3, 4, 5, seed=1), GRID),
                                        ["grid_sampler_backward"]),
}
for _red in ("none", "sum", "mean"):
    CASES |= {
        f"nll_{_red}": (lambda x, t, red=_red: F.nll_loss(x, t, reduction=red),
                        (_r(4, 3), TARGET), ["nll_loss"]),
        f"nll_weighted_{_red}": (lambda x, t, w, red=_red: F.nll_loss(x, t, w, reduction=red),
                                 (_r(4, 3), TARGET, _prob(3)), ["nll_loss"]),
        f"nll_spatial_{_red}": (lambda x, t, w, red=_red: F.nll_loss(x, t, w, reduction=red),
                                (_r(2, 3, 2), TARGET2, _prob(3)), ["nll_loss"]),
        f"nll_one_sample_{_red}": (lambda x, t, red=_red: F.nll_loss(x, t, reduction=red),
                                   (_r(3), ember.tensor(1)), ["nll_loss"]),
        f"nll_backward_{_red}": (
            lambda g, t, w, red=_red: _nll_backward(g, t, w, red, (4, 3)),
            (_r(4) if _red == "none" else _r(), TARGET, _prob(3)), ["nll_loss_backward"]),
        f"nll_backward_spatial_{_red}": (
            lambda g, t, red=_red: _nll_backward(g, t, None, red, (2, 3, 2)),
            (_r(2, 2) if _red == "none" else _r(), TARGET2), ["nll_loss_backward"]),
    }
    for _name, _extra in (("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.7}),
                          ("huber_loss", {"delta": 0.6}), ("soft_margin_loss", {})):
        CASES[f"{_name}_{_red}"] = (
            lambda a, b, name=_name, red=_red, kw=_extra: getattr(F, name)(a, b, reduction=red,
                                                                           **kw),
            (_r(3, 4), _r(3, 4, seed=1)), [f"pointwise_loss({_name})"])
    CASES[f"binary_cross_entropy_{_red}"] = (
        lambda x, t, red=_red: F.binary_cross_entropy(x, t, reduction=red),
        (_prob(3, 4), _prob(3, 4, seed=1)), ["pointwise_loss(binary_cross_entropy)"])
CASES["mse_loss_broadcast"] = (F.mse_loss, (_r(4), _r(3, 4, seed=1)),
                               ["pointwise_loss(mse_loss)"])
CASES["bce_with_logits_member"] = (
    lambda x, t: loss_ops.pointwise_loss(loss_ops.bce_logits_p, x, t, "mean"),
    (_r(3, 4), _prob(3, 4, seed=1)), ["pointwise_loss(binary_cross_entropy_with_logits)"])


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("case", list(CASES))
def test_jvp_and_batch_rules_of_each_call(case):
    fn, args, expected = CASES[case]
    assert _check_area(fn, *args) == expected


def test_the_cases_reach_every_primitive_and_member_of_the_area():
    reached = {name for _, _, names in CASES.values() for name in names}
    # vmap loops over the optimizer steps and they have no derivative
    loops = {"adam_step", "sgd_step", "adadelta_step"}
    want = {p.name for p in AREA if p is not loss_ops.pointwise_loss_p} - loops
    want |= {f"pointwise_loss({m.name})" for m in LOSSES}
    assert reached == want


def test_every_primitive_and_member_of_the_area_has_jvp_and_batch_entries():
    assert len(AREA) == 27 and len(LOSSES) == 6
    for p in AREA:
        assert batch_rules.get(p, MISSING) is not MISSING, p.name
        rule = jvp_rules.get(p, MISSING)
        assert rule is not MISSING, p.name
        if rule.__class__ is ByParam:
            for m in LOSSES:
                assert rule.table.get(m, MISSING) not in (MISSING, NOT_DIFFERENTIABLE), m.name
    for p in (adam.adam_step_p, sgd.sgd_step_p, rmsprop.adadelta_step_p):
        assert batch_rules[p] is BY_LOOP and loop_reasons[p]
        assert jvp_rules[p] is NOT_DIFFERENTIABLE


def test_an_optimizer_step_is_looped_by_vmap_and_not_differentiable():
    p = ember.nn.Parameter(ember.ones(3))
    p.grad = ember.full((3,), 0.5)
    opt = ember.optim.SGD([p], lr=0.1)
    calls = primitive_calls(opt.step)
    assert [c[0] for c in calls] == [sgd.sgd_step_p]
    assert check_batch(opt.step) == 0 and check_jvp(opt.step) == 0
    np.testing.assert_allclose(p.detach().numpy(), 1 - 3 * 0.05)  # (three steps ran)


def test_the_vmap_of_a_batched_embedding_table_and_batched_indices():
    w = _r(3, 5, 2)  # three tables
    idx = ember.tensor([[0, 4], [1, 1], [3, 2]])
    out, dim = batch_rules[nn_ops.embedding_p]((w, idx), (0, 0), padding_idx=None,
                                               scale_grad_by_freq=False)
    want = np.stack([w.numpy()[b][idx.numpy()[b]] for b in range(3)])
    np.testing.assert_array_equal(np.moveaxis(out.numpy(), dim, 0), want)
