"""torch.utils.checkpoint against torch: argument checks, the selective-checkpoint names, and the
reentrant form replaying its block under the autocast state it first ran with."""

import functools
import warnings

import pytest
import torch

import ember

from helpers import assert_same, same_message


def _block(x):
    return x.sin() * 2


@pytest.mark.parametrize("kwargs, message", [
    ({"use_reentrant": False, "determinism_check": "strict"},
     "determinism_check should be one of ['default', 'none'], but got strict"),
    ({"use_reentrant": True, "context_fn": lambda: None},
     "Passing `context_fn` or `debug` is only supported when use_reentrant=False."),
    ({"use_reentrant": True, "debug": True},
     "Passing `context_fn` or `debug` is only supported when use_reentrant=False."),
    ({"use_reentrant": True, "foo": 1}, "Unexpected keyword arguments: foo"),
    ({"use_reentrant": False, "debug": True, "context_fn": lambda: None},
     "debug=True is incompatible with non-default context_fn"),
])
def test_argument_checks_match_torch(kwargs, message):
    msg = same_message(lambda m: m.utils.checkpoint.checkpoint(
        _block, m.ones(3, requires_grad=True), **kwargs), ValueError)
    assert msg == message


def _selective(m, policy_or_list):
    cp = m.utils.checkpoint
    x = m.linspace(-1, 1, 6, requires_grad=True)
    ctx_fn = functools.partial(cp.create_selective_checkpoint_contexts, policy_or_list)
    y = cp.checkpoint(_block, x, use_reentrant=False, context_fn=ctx_fn)
    y.sum().backward()
    return y, x.grad


@pytest.mark.parametrize("save", [True, False])
def test_selective_checkpoint_gives_the_plain_results(save):
    def policy(m):
        pick = m.utils.checkpoint.CheckpointPolicy
        return lambda ctx, op, *a, **k: pick.MUST_SAVE if save else pick.PREFER_RECOMPUTE

    for got, want in zip(_selective(ember, policy(ember)), _selective(torch, policy(torch))):
        assert_same(got, want)
    for got, want in zip(_selective(ember, []), _selective(torch, [])):
        assert_same(got, want)


def test_checkpoint_names_behave_as_torchs():
    for m in (ember, torch):
        cp = m.utils.checkpoint
        assert issubclass(cp.CheckpointError, RuntimeError)
        assert [p.name for p in cp.CheckpointPolicy] == [
            "MUST_SAVE", "PREFER_SAVE", "MUST_RECOMPUTE", "PREFER_RECOMPUTE", "MUST_CPU_OFFLOAD",
            "PREFER_CPU_OFFLOAD"]
        fwd, rec = cp.noop_context_fn()
        with fwd, rec:
            pass
        with cp.set_checkpoint_early_stop(False), cp.set_checkpoint_debug_enabled(None):
            x = m.ones(2, requires_grad=True)
            cp.checkpoint(_block, x, use_reentrant=False).sum().backward()
        with pytest.raises(TypeError, match="policy_fn_or_list must be either a function"):
            cp.create_selective_checkpoint_contexts(3)
        detached = cp.detach_variable((x, 1))
        assert detached[0].requires_grad and detached[0].grad_fn is None and detached[1] == 1
    same_message(lambda m: m.utils.checkpoint.detach_variable([1]))


def test_reentrant_warns_when_no_input_requires_grad():
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.utils.checkpoint.checkpoint(_block, m.ones(2), use_reentrant=True)
        assert [str(w.message) for w in caught] == [
            "None of the inputs have requires_grad=True. Gradients will be None"]


def _autocast_replay(m):
    m.manual_seed(0)
    lin = m.nn.Linear(4, 4)
    x = m.randn(2, 4, requires_grad=True)
    with m.autocast("cpu"):
        out = m.utils.checkpoint.checkpoint(lin, x, use_reentrant=True)
    out.float().sum().backward()
    return out, x.grad, lin.weight.grad


def test_reentrant_backward_replays_under_the_forward_autocast_state():
    for got, want in zip(_autocast_replay(ember), _autocast_replay(torch)):
        assert_same(got, want, 1e-2, 1e-2)
