"""`torch._assert` (src/ember/_asserts.py) against torch: passes, refuses with the
message, and is recorded (not evaluated) on an fx Proxy."""

from __future__ import annotations

import pytest
import torch
import torch.fx

import ember
import ember.fx


@pytest.mark.parametrize("cond", [True, 1, "x", [0]])
def test_true_conditions_pass(cond):
    assert ember._assert(cond, "msg") is None is torch._assert(cond, "msg")


@pytest.mark.parametrize("make", [lambda L: False, lambda L: 0, lambda L: L.tensor(False),
                                  lambda L: L.tensor([0.0])])
def test_false_conditions_raise_the_message(make):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(AssertionError) as info:
            L._assert(make(L), "shape was wrong")
        msgs.append(str(info.value))
    assert msgs == ["shape was wrong"] * 2


def _checked(L):
    def f(x):
        L._assert(x.dim() == 2, "need a matrix")
        return x

    return f


def test_recorded_on_a_proxy():
    codes = [L.fx.symbolic_trace(_checked(L)).code for L in (torch, ember)]
    assert codes[0] == codes[1]
    assert "torch._assert(eq, 'need a matrix')" in codes[1]
