"""Gradients that never arrive ("undefined" in PyTorch, None here) flow as torch's do.

A custom Function whose backward returns None for a differentiable input sends no gradient
on. torch still runs what lies behind it: a custom Function's backward (with zeros, or None
when it turned materialized grads off), tensor hooks and node hooks (they see None); the
built-in derivatives pass None on, so leaves keep `.grad` None. Every case runs the same
program under ember and under torch and compares what it records.
"""

import pytest
import torch

import ember

from helpers import gradient_killer


def _fns(lib):
    Kill = gradient_killer(lib)

    class Double(lib.autograd.Function):
        log = []

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Double.log.append(g.tolist())
            return g * 2

    class Lazy(lib.autograd.Function):
        log = []

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Lazy.log.append(None if g is None else g.tolist())
            return None if g is None else g * 2

    class Two(lib.autograd.Function):
        log = []

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            Two.log.append((g1.tolist(), g2.tolist()))
            return 2 * g1 + 3 * g2

    return Kill, Double, Lazy, Two


def _show(g):
    return None if g is None else g.tolist()


def _case(lib, name):
    Kill, Double, Lazy, Two = _fns(lib)
    log = []
    x = lib.ones(3, requires_grad=True)
    if name == "materialized_function_runs":
        Kill.apply(Double.apply(x)).sum().backward()
        log += [Double.log, _show(x.grad)]
    elif name == "unmaterialized_function_sees_none":
        Kill.apply(Lazy.apply(x)).sum().backward()
        log += [Lazy.log, _show(x.grad)]
    elif name == "builtin_passes_none":
        log.append(lib.autograd.grad(Kill.apply(x.exp() * 3).sum(), x, allow_unused=True))
        log[-1] = [_show(g) for g in log[-1]]
    elif name == "hooks_see_none":
        h = x.exp()
        h.register_hook(lambda g: log.append(("tensor", _show(g))))
        h.grad_fn.register_prehook(lambda go: log.append(("pre", [_show(g) for g in go])))
        h.grad_fn.register_hook(
            lambda gi, go: log.append(("post", [_show(g) for g in gi], [_show(g) for g in go])))
        x.register_hook(lambda g: log.append(("leaf", _show(g))))
        Kill.apply(h).sum().backward()
        log.append(_show(x.grad))
    elif name == "unused_split_piece_hook":
        a, b = x.split([2, 1])
        b.register_hook(lambda g: log.append(("b", _show(g))))
        (a * 2).sum().backward()
        log.append(_show(x.grad))
    elif name == "hook_cannot_invent_a_gradient":
        h = x.exp()
        h.register_hook(lambda g: lib.ones(3) if g is None else g)
        try:
            Kill.apply(h).sum().backward()
        except RuntimeError as e:
            log.append(str(e))
    elif name == "partial_multi_output":
        p, q = Two.apply(x)
        (Kill.apply(p) + q).sum().backward()
        log += [Two.log, _show(x.grad)]
    elif name == "materialize_grads_flag":
        r = lib.autograd.grad(Kill.apply(x.exp()).sum(), x, allow_unused=True,
                              materialize_grads=True)
        log.append([_show(g) for g in r])
    elif name == "retained_grad_stays_none":
        h = x * 3
        h.retain_grad()
        Kill.apply(h).sum().backward()
        log.append(_show(h.grad))
    return log


@pytest.mark.parametrize("name", [
    "materialized_function_runs", "unmaterialized_function_sees_none", "builtin_passes_none",
    "hooks_see_none", "unused_split_piece_hook", "hook_cannot_invent_a_gradient",
    "partial_multi_output", "materialize_grads_flag", "retained_grad_stays_none",
])
def test_undefined_gradients_flow_as_torchs(name):
    assert _case(ember, name) == _case(torch, name)


def test_a_node_reached_by_no_gradient_still_runs_once():
    # the materialized backward runs exactly once, on zeros, and its zero result reaches
    # the leaf: .grad becomes zeros (not None), as under torch
    for lib in (ember, torch):
        log = _case(lib, "materialized_function_runs")
        assert log == [[[0.0, 0.0, 0.0]], [0.0, 0.0, 0.0]]
