"""Non-reentrant checkpoint replays its block during backward, as PyTorch's recomputation
does: module hooks and other side effects of the block happen again when the backward
reaches it, once per backward pass, and never for a block that saved nothing. Counts and
gradients against torch."""

import pytest
import torch

import ember

from helpers import assert_same


def _run(m, block_kind: str, passes: int = 1, ckpt: bool = True):
    m.manual_seed(0)
    lin = m.nn.Linear(3, 3)
    calls = {"pre": 0, "fwd": 0}
    lin.register_forward_pre_hook(lambda mod, args: calls.__setitem__("pre", calls["pre"] + 1))
    lin.register_forward_hook(lambda mod, args, out: calls.__setitem__("fwd", calls["fwd"] + 1))
    blocks = {
        "linear relu": lambda x: lin(x).relu(),
        "dropout": lambda x: m.nn.functional.dropout(lin(x), 0.5, training=True).tanh(),
        "kwargs": lambda x, scale=1.0: lin(x * scale).sigmoid(),
        "saves nothing": lambda x: x + 1,
    }
    block = blocks[block_kind]
    x = m.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
    args = {"scale": 2.0} if block_kind == "kwargs" else {}
    if ckpt:
        y = m.utils.checkpoint.checkpoint(block, x, use_reentrant=False, **args)
    else:
        y = block(x, **args)
    seen = [dict(calls)]
    for i in range(passes):
        y.sum().backward(retain_graph=i < passes - 1)
        seen.append(dict(calls))
    return seen, y, x.grad, lin.weight.grad


@pytest.mark.parametrize("kind, passes", [("linear relu", 2), ("dropout", 1), ("kwargs", 1),
                                          ("saves nothing", 2)])
def test_hooks_fire_again_in_backward_like_torch(kind, passes):
    got, want = _run(ember, kind, passes), _run(torch, kind, passes)
    assert got[0] == want[0]
    for e, t in zip(got[1:], want[1:]):
        assert_same(e, t)


def _counted_linear(m):
    lin, n = m.nn.Linear(2, 2), []
    lin.register_forward_hook(lambda *a: n.append(1))
    return lin, n


def test_no_replay_without_checkpoint_and_under_no_grad():
    assert _run(ember, "linear relu", ckpt=False)[0] == _run(torch, "linear relu", ckpt=False)[0]
    for m in (ember, torch):
        lin, n = _counted_linear(m)
        with m.no_grad():
            m.utils.checkpoint.checkpoint(lin, m.ones(1, 2), use_reentrant=False)
        assert len(n) == 1


def test_autograd_grad_replays_too():
    counts = []
    for m in (ember, torch):
        lin, n = _counted_linear(m)
        x = m.ones(1, 2, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda v, f=lin: f(v).exp(), x, use_reentrant=False)
        m.autograd.grad(y.sum(), x)
        counts.append(len(n))
    assert counts[0] == counts[1] == 2
