"""ember.compiler: `torch.compiler`'s queries, answered for an eager framework."""

from __future__ import annotations

from ._runtime import compile


def is_compiling() -> bool:
    """False: ember never traces a program, so code always runs eagerly."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def disable(fn=None, recursive: bool = True):
    """A decorator that keeps `fn` eager (it already is)."""
    return (lambda f: f) if fn is None else fn


def reset() -> None:
    """Drops compiled caches; ember keeps none."""


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)


__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "disable", "reset"]
