"""`torch.fx`: symbolic tracing of Modules and functions into a Graph a person can read
and edit, the GraphModule that runs the code generated from it, and the Interpreter /
Transformer that run a graph node by node.

Importing this package leaves the `__torch_function__` protocol off; tracing switches it
on for the duration of the trace (see `_symbolic_trace`)."""

from . import immutable_collections
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "PH", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "map_arg", "has_side_effect", "replace_pattern",
           "immutable_collections"]


def __getattr__(name: str):
    # (`torch.fx.passes`, `torch.fx.experimental` without importing them first)
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
