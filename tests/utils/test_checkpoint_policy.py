"""Selective activation checkpointing against torch: the policy sees each op of the block as
its `torch.ops.aten` overload, once, in the forward, with the op's output; an output the
policy keeps serves one backward only."""

import functools

import pytest
import torch

import ember

from helpers import assert_same


def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(8, 16), m.nn.GELU(), m.nn.LayerNorm(16),
                           m.nn.Linear(16, 8))


def _attention(m, q):
    s = q @ q.transpose(-1, -2) / 2.0
    return m.softmax(s, -1) @ q


def _seen(m, block, x):
    """What the policy was shown, and the gradient of the input."""
    cp = m.utils.checkpoint
    seen = []

    def policy(ctx, op, *args, **kwargs):
        out = ctx.op_output
        seen.append((str(op), ctx.is_recompute,
                     tuple(out.shape) if isinstance(out, m.Tensor) else type(out).__name__))
        return cp.CheckpointPolicy.MUST_SAVE if op is m.ops.aten.addmm.default else \
            cp.CheckpointPolicy.PREFER_RECOMPUTE

    x = x.detach().requires_grad_()
    y = cp.checkpoint(block, x, use_reentrant=False,
                      context_fn=functools.partial(cp.create_selective_checkpoint_contexts,
                                                   policy))
    y.pow(2).sum().backward()
    return seen, x.grad


def _pointwise(m, x):
    y = (x.exp() + x.abs().sqrt() - x.tanh() * x.sigmoid()).clamp(-1, 1)
    return y.mean(0).log_softmax(0).max() + (x ** 2).sum(1).mean()


def _losses(m, x):
    F = m.nn.functional
    return F.mse_loss(x, m.zeros(3, 4)) + F.l1_loss(x, m.ones(3, 4)) + \
        F.binary_cross_entropy_with_logits(x, m.ones(3, 4))


def _masks(m, x):
    keep = ((x > 0) & (x < 1)).to(x.dtype) * x + (x == x.detach()).float()
    return keep - x.std() + x.max() + m.where(x != 0, x.pow(2), x.neg()).sum(0) * x.mean()


def _blocks(m, case):
    if case == "masks":
        return functools.partial(_masks, m), m.linspace(-1, 2, 6)
    if case == "mlp":
        return _mlp(m), m.randn(4, 8)
    if case == "attention":
        return functools.partial(_attention, m), m.randn(2, 2, 5, 4)
    if case == "sdpa":
        return (lambda q: m.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True),
                m.randn(1, 2, 3, 4))
    return functools.partial(_pointwise if case == "pointwise" else _losses, m), m.randn(3, 4)


@pytest.mark.parametrize("case", ["mlp", "attention", "sdpa", "pointwise", "losses",
                                  "masks"])
def test_the_policy_sees_torchs_aten_ops(case):
    got = {}
    for m in (ember, torch):
        m.manual_seed(1)
        block, x = _blocks(m, case)
        got[m] = _seen(m, block, x)
    assert got[ember][0] == got[torch][0]
    # (float32 products and reductions in other orders: a few ulp apart)
    assert_same(got[ember][1], got[torch][1], rtol=1e-5, atol=1e-6)


def _twice(m, ops_named):
    """A block checkpointed with `ops_named`'s outputs kept, run backward twice."""
    cp = m.utils.checkpoint
    m.manual_seed(0)
    lin = m.nn.Linear(4, 4)
    x = m.randn(3, 4, requires_grad=True)
    ops = [] if ops_named is None else [getattr(m.ops.aten, ops_named).default]
    y = cp.checkpoint(lambda t: m.relu(lin(t)).sin(), x, use_reentrant=False,
                      context_fn=lambda: cp.create_selective_checkpoint_contexts(ops))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return x.grad


@pytest.mark.parametrize("ops_named", ["addmm", "relu", None])
def test_a_kept_output_serves_one_backward(ops_named):
    for m in (ember, torch):
        if ops_named is None:
            continue
        with pytest.raises(RuntimeError, match="^Trying to backward an extra time. You are "
                           "only allowed to backward once on any region computed under "
                           "selective activation checkpoint.$"):
            _twice(m, ops_named)
    if ops_named is None:  # nothing kept: each backward recomputes (float32, ulp apart)
        assert_same(_twice(ember, None), _twice(torch, None), rtol=1e-5, atol=1e-6)


def _bool_policy(m):
    cp = m.utils.checkpoint
    x = m.linspace(-1, 1, 5, requires_grad=True)

    def policy(ctx, op, *args, **kwargs):
        return op is m.ops.aten.sin.default  # True: keep (MUST_SAVE)

    y = cp.checkpoint(lambda t: t.sin().cos(), x, use_reentrant=False,
                      context_fn=lambda: cp.create_selective_checkpoint_contexts(policy))
    y.sum().backward(retain_graph=True)
    y.sum().backward()


def test_a_policy_may_answer_with_a_bool():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="backward an extra time"):
            _bool_policy(m)
