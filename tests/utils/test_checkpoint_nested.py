"""Non-reentrant checkpoints nested inside one another, against torch: when an outer block is
replayed in backward, the inner checkpoint runs again as a fresh checkpoint whose input and
output require grad as they did in the forward, and the inner frames of the forward replay
from inputs that the outer frame gives back. What each block sees, how many tensors the
user's saved_tensors_hooks pack and unpack, gradients, the RNG stream, early stop, kwargs,
non-tensor outputs, the determinism check and context_fn."""

import contextlib
import functools

import pytest
import torch

import ember

from helpers import assert_same

# float64 throughout: sin/tanh agree to a few ulps whatever order the CPU's vector path takes
TOL = dict(rtol=1e-12, atol=1e-14)


def _nested(m, depth=2, early=True, hooks=True, dropout=False, passes=1, kw=False,
            extra=False):
    """`depth` checkpoints, each block calling the next inside it. Returns the log of what
    each block saw (level, input requires_grad / inner output requires_grad), the user hook
    counts after the forward and after each backward, the gradients and the next random
    number after the backward."""
    cp = m.utils.checkpoint
    log, packs, unpacks = [], [], []
    m.manual_seed(0)

    def make(level):
        def block(t, scale=1.0):
            log.append((level, t.requires_grad))
            u = (t * scale).sin()
            if dropout:
                u = m.nn.functional.dropout(u, 0.5, training=True)
            if level + 1 < depth:
                u = cp.checkpoint(make(level + 1), u, use_reentrant=False,
                                  **({"scale": 2.0} if kw else {}))
                u = u[0] if extra else u
            log.append((level, "u", u.requires_grad))
            v = (u * u).tanh()
            # a tuple with a non-tensor and a tensor that needs no grad
            return (v, 3, v.detach() * 2) if extra else v
        return block

    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=True)
    hooked = m.autograd.graph.saved_tensors_hooks(
        lambda t: packs.append(tuple(t.shape)) or t,
        lambda t: unpacks.append(1) or t) if hooks else contextlib.nullcontext()
    with cp.set_checkpoint_early_stop(early):
        with hooked:
            y = cp.checkpoint(make(0), x * 1, use_reentrant=False)
        y = y[0] if extra else y
        counts, grads = [(list(log), len(packs))], []
        for i in range(passes):
            y.sum().backward(retain_graph=i < passes - 1)
            counts.append((list(log), len(packs), len(unpacks)))
            grads.append(x.grad.clone())
    return counts, grads, m.rand(2)


@pytest.mark.parametrize("depth, early, hooks, dropout, passes, kw, extra", [
    (2, True, True, False, 1, False, False),
    (2, False, False, True, 2, True, False),
    (2, True, True, False, 1, False, True),
    (3, True, True, True, 1, True, False),
    (3, False, True, False, 2, False, True),
    (3, True, False, True, 2, False, False),
])
def test_nested_checkpoints_replay_like_torch(depth, early, hooks, dropout, passes, kw, extra):
    args = (depth, early, hooks, dropout, passes, kw, extra)
    got, want = _nested(ember, *args), _nested(torch, *args)
    assert got[0] == want[0]
    assert_same(got[1], want[1], **TOL)
    assert_same(got[2], want[2])  # (the RNG stream continues where the forward left it)


def test_nested_gradients_equal_the_plain_run():
    def run(m, ckpt):
        m.manual_seed(0)
        lin1, lin2 = m.nn.Linear(3, 3).double(), m.nn.Linear(3, 3).double()
        c = functools.partial(m.utils.checkpoint.checkpoint, use_reentrant=False) if ckpt \
            else (lambda f, *a: f(*a))
        x = m.linspace(-1, 1, 6, dtype=m.float64).reshape(2, 3).requires_grad_()
        y = c(lambda h: lin2(c(lambda g: lin1(g).relu(), h)).tanh(), x)
        y.sum().backward()
        return [x.grad, lin1.weight.grad, lin1.bias.grad, lin2.weight.grad]

    plain = run(torch, False)
    assert_same(run(ember, True), plain, **TOL)
    assert_same(run(ember, False), plain, **TOL)


def _detaching_hooks(m):
    """A user pack hook that detaches: the block's input comes back detached, and the replay
    must still treat it as requiring grad (PyTorch's saved variables keep requires_grad)."""
    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = m.utils.checkpoint.checkpoint(lambda t: (t * t).sin(), x * 1, use_reentrant=False)
    y.sum().backward()
    return x.grad


def test_input_unpacked_detached_still_requires_grad_in_the_replay():
    assert_same(_detaching_hooks(ember), _detaching_hooks(torch), **TOL)


def _hooks_inside_inner(m):
    """Hooks entered inside the innermost block see its saves in the forward and in every
    replay of it (the outer replay runs the inner block again, then the inner frame does)."""
    seen = []

    def inner(t):
        with m.autograd.graph.saved_tensors_hooks(lambda u: seen.append(u.shape) or u,
                                                  lambda u: u):
            return (t * t).tanh()

    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=True)
    y = m.utils.checkpoint.checkpoint(
        lambda t: m.utils.checkpoint.checkpoint(inner, t.exp(), use_reentrant=False).sin(),
        x, use_reentrant=False)
    n_forward = len(seen)
    y.sum().backward()
    return n_forward, len(seen), x.grad


def test_hooks_inside_the_inner_block():
    got, want = _hooks_inside_inner(ember), _hooks_inside_inner(torch)
    assert got[:2] == want[:2]
    assert_same(got[2], want[2], **TOL)


def _flaky_inner(m, check: str):
    calls = [0]

    def inner(t):
        calls[0] += 1
        return t.sin() if calls[0] == 1 else t.float().sin().double()

    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=True)
    y = m.utils.checkpoint.checkpoint(
        lambda t: m.utils.checkpoint.checkpoint(inner, t * 2, use_reentrant=False,
                                                determinism_check=check).exp(),
        x, use_reentrant=False, determinism_check=check)
    try:
        y.sum().backward()
    except m.utils.checkpoint.CheckpointError as e:
        lines = str(e).splitlines()
        return lines[:lines.index("")]
    return x.grad


def test_determinism_check_of_a_nested_block():
    got, want = _flaky_inner(ember, "default"), _flaky_inner(torch, "default")
    assert [line.replace("ember.", "torch.") for line in got] == want
    # unchecked, the float32 sin of the replay gives the gradient (its last bits are the CPU's)
    assert_same(_flaky_inner(ember, "none"), _flaky_inner(torch, "none"), rtol=1e-6,
                atol=1e-7)


def _selective_nested(m):
    cp = m.utils.checkpoint
    entered = []

    def ctx_fn(name):
        fwd, rec = cp.create_selective_checkpoint_contexts([m.ops.aten.sin.default])

        @contextlib.contextmanager
        def note(kind, inner):
            entered.append((name, kind))
            with inner:
                yield
        return note("forward", fwd), note("recompute", rec)

    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=True)
    y = cp.checkpoint(
        lambda t: cp.checkpoint(lambda u: (u.sin() * u).tanh(), t.cos(), use_reentrant=False,
                                context_fn=functools.partial(ctx_fn, "inner")).exp(),
        x, use_reentrant=False, context_fn=functools.partial(ctx_fn, "outer"))
    y.sum().backward()
    return entered, x.grad


def test_context_fn_of_nested_checkpoints():
    got, want = _selective_nested(ember), _selective_nested(torch)
    assert got[0] == want[0]
    assert_same(got[1], want[1], **TOL)
