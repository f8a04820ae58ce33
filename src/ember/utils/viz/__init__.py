"""ember.utils.viz: drawings of the autograd graph, with torchviz's `make_dot`.

Under `python -m ember.run`, `import torchviz` gives this module.
"""

from .digraph import Digraph
from .dot import make_dot, make_dot_from_trace

__all__ = ["Digraph", "make_dot", "make_dot_from_trace"]
