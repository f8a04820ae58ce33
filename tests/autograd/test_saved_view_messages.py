"""The in-place error for a saved view names the view's node as PyTorch reads it then.

A view saved for backward whose base is later written in place has, by then, a
regenerated node (`AsStridedBackward0`), so torch's message says "output 0 of AsStrided",
whether or not the program looked at the view's `grad_fn` in between.
"""

import pytest
import torch

import ember


def _message(lib, op, peek):
    x = lib.randn(4, requires_grad=True)
    Z = lib.zeros(3, 4)
    Z[0] = x
    view = Z[0]
    y = op(view)
    Z[1] = x * 2  # the base changes: the saved view is now stale
    if peek:
        _ = view.grad_fn
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(" Hint")[0]
    return None


@pytest.mark.parametrize("peek", [False, True])
@pytest.mark.parametrize("name", ["sin", "pow", "abs", "clamp"])
def test_a_stale_saved_view_is_named_as_strided(name, peek):
    ops = {"sin": lambda t: t.sin(), "pow": lambda t: t**2, "abs": lambda t: t.abs(),
           "clamp": lambda t: t.clamp(-0.5, 0.5)}
    ours = _message(ember, ops[name], peek)
    theirs = _message(torch, ops[name], peek)
    assert ours is not None and "output 0 of AsStrided," in ours
    assert ours == theirs


def test_a_saved_view_of_a_base_without_grad_keeps_its_node():
    # the base never required grad before the write: nothing is regenerated
    msgs = []
    for lib in (ember, torch):
        a = lib.randn(3, 4, requires_grad=True) * 1
        v = a[0]
        y = v.exp() * v.sin()
        v.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            msgs.append(str(e).split(" Hint")[0])
    assert msgs[0] == msgs[1]
