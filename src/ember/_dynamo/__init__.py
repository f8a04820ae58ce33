"""ember._dynamo: `torch._dynamo`'s names that programs touch, over ember's graph layer
(`ember.graph`): config, reset, explain, list_backends, mark_dynamic, disable, graph_break."""

from __future__ import annotations

from ..graph.compiled import config, graph_break, is_compiling
from . import exc
from .backends import list_backends
from .eval_frame import OptimizedModule, disable, explain, mark_dynamic, mark_static, reset

__all__ = ["OptimizedModule", "config", "disable", "exc", "explain", "graph_break",
           "is_compiling", "list_backends", "mark_dynamic", "mark_static", "reset"]
