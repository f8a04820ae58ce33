"""ember.jit: TorchScript entry points as pass-throughs (ember runs eagerly)."""

from __future__ import annotations

# (torch.jit.Final is typing's: model code annotates constants with it at class level,
# `fused_attn: torch.jit.Final[bool]`, so it must exist)
from typing import Final  # noqa: F401


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns `obj` unchanged: the eager module or function behaves the same."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """Returns `func` unchanged (tracing would record the same eager computation)."""
    return func


def script_if_tracing(fn):
    """Returns `fn` unchanged (it is scripted only while tracing, which ember never does)."""
    return fn


def annotate(the_type, the_value):
    """Returns `the_value`: a type hint for the TorchScript compiler, a no-op when eager."""
    return the_value


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def save(m, f, _extra_files=None) -> None:
    raise NotImplementedError("torch.jit.save is not implemented in ember; use ember.save on "
                              "the state_dict")


def load(f, map_location=None, _extra_files=None):
    raise NotImplementedError("torch.jit.load is not implemented in ember")


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
