"""ember.compiler: `torch.compiler`'s public face over ember's graph layer."""

from __future__ import annotations

from ._dynamo.backends import list_backends
from ._dynamo.eval_frame import disable, reset
from ._runtime import compile
from .graph.compiled import is_compiling, set_stance


def is_dynamo_compiling() -> bool:
    return is_compiling()


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)


__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "list_backends", "reset",
           "set_stance"]
