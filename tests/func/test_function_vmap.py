"""Custom autograd.Functions under torch.func, against torch: `generate_vmap_rule` runs
forward once on the batch, a `vmap` staticmethod is called with the batch as it is laid
out, and Functions that are not written for transforms are refused in PyTorch's words."""

from __future__ import annotations

import warnings

import pytest
import torch

import ember


def _classes(m, calls):
    """Cube (generated rule), Scale (own vmap rule), NoRule and Old (no setup_context), for
    torch or ember; `calls` records what forward and vmap saw."""

    class Cube(m.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            calls.append(("forward", tuple(x.shape)))
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    class Scale(m.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def vmap(info, in_dims, x, k):
            calls.append(("vmap", info.batch_size, info.randomness, in_dims, tuple(x.shape)))
            return (x * k).movedim(in_dims[0], 0), 0

    class NoRule(Scale):
        vmap = m.autograd.Function.vmap

    class Old(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Both(Scale):
        generate_vmap_rule = True

    return Cube, Scale, NoRule, Old, Both


def _run(m, body):
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (neither warns about a missing batching rule)
        out = body(m, *_classes(m, calls))
    return out, calls


def _x(m):
    return m.tensor([[1.0, 2.0, -1.0], [3.0, -1.0, 0.5]])


def _same(body):
    (o_e, c_e), (o_t, c_t) = _run(ember, body), _run(torch, body)
    assert c_e == c_t
    assert [t.tolist() for t in o_e] == [t.tolist() for t in o_t]


def test_a_generated_rule_runs_forward_once_on_the_batch():
    _same(lambda m, Cube, *_: [m.func.vmap(Cube.apply)(_x(m))])


def test_an_own_rule_sees_the_batch_as_laid_out():
    _same(lambda m, _, Scale, *rest: [
        m.func.vmap(Scale.apply, in_dims=(1, None), randomness="same")(_x(m), 2.0),
        m.func.vmap(Scale.apply, in_dims=(0, None))(_x(m), -1.5)])


def test_grad_under_vmap_uses_the_backward():
    def body(m, Cube, Scale, *_):
        return [m.func.vmap(m.func.grad(lambda t: Cube.apply(t).sum()))(_x(m)),
                m.func.vmap(m.func.grad(lambda t: Scale.apply(t, 4.0).sum()))(_x(m))]

    # NOTE: values only: while the call records a graph node ember runs the Function once
    # per example (forward sees one example; its vmap rule is not called), where PyTorch
    # vmaps forward, setup_context and backward as one
    (o_e, _), (o_t, _) = _run(ember, body), _run(torch, body)
    assert [t.tolist() for t in o_e] == [t.tolist() for t in o_t]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", [
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.vmap(NoRule.apply)(_x(m), 2.0),
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.vmap(Both.apply)(_x(m), 2.0),
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.vmap(Old.apply)(_x(m)),
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.grad(lambda t: Old.apply(t).sum())(
        _x(m)[0]),
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.vjp(Old.apply, _x(m)),
    lambda m, Cube, Scale, NoRule, Old, Both: m.func.vmap(
        lambda t: NoRule.apply(m.ones(3), 2.0) + t)(_x(m)),
], ids=["no-vmap-support", "both-rules", "old-style-vmap", "old-style-grad",
        "old-style-vjp", "unbatched-inputs"])
def test_refusals_match_torch(case):
    assert _run(ember, lambda m, *cls: _error(lambda: case(m, *cls)))[0] == \
        _run(torch, lambda m, *cls: _error(lambda: case(m, *cls)))[0]


def test_an_old_style_function_outside_transforms_still_runs():
    def body(m, Cube, Scale, NoRule, Old, Both):
        x = _x(m).requires_grad_()
        Old.apply(x).sum().backward()
        return [x.grad, m.autograd.functional.jacobian(Old.apply, _x(m)[0])]

    _same(body)
