"""jit.py: the TorchScript names eager model code touches exist and do what torch's do when
not scripting: Final is typing's (a class-level annotation, evaluated when the class is
made), annotate returns its value, script_if_tracing returns the function."""

import typing  # (no `from __future__ import annotations`: the class annotation must run)

import pytest

import ember

torch = pytest.importorskip("torch")


def test_final_is_typings_and_annotates_a_module_constant():
    assert ember.jit.Final is torch.jit.Final is typing.Final

    class Attention(ember.nn.Module):
        fused_attn: ember.jit.Final[bool]  # (timm's idiom: evaluated right here)

        def __init__(self):
            super().__init__()
            self.fused_attn = True

    assert Attention.__annotations__["fused_attn"] == typing.Final[bool]
    assert Attention().fused_attn is True


def test_annotate_and_script_if_tracing_are_pass_throughs():
    d = {}
    assert ember.jit.annotate(dict[str, int], d) is d
    assert torch.jit.annotate(dict[str, int], d) is d
    assert ember.jit.script_if_tracing(len) is len  # (torch's wraps it; the same when eager)
    assert ember.jit.script_if_tracing(len)([1, 2]) == torch.jit.script_if_tracing(len)([1, 2])
