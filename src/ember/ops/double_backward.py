"""`double_backward`: an op's mark saying which inputs PyTorch's derivative op takes.

Where PyTorch differentiates an op with one derivative op that takes the op's input
(`avg_pool2d_backward(grad, self)`) but ember's rule computes the gradient from the
cotangent alone, the gradient under `create_graph=True` must still require grad when that
input does, under PyTorch's double-backward node (`autograd/double_nodes.py` makes it).
"""

from __future__ import annotations

from .._core.dispatch import autograd


def double_backward(out, *inputs, zero: bool = True, name: str | None = None):
    """`out` (a tensor or tuple), its node marked: under create_graph=True its gradients are
    PyTorch's double-backward node, which takes `inputs` (None entries skipped) and gives
    each zeros (`zero`) or no gradient (PyTorch's undefined one). The node is `name`, by
    default the marked node's own name as PyTorch derives it (`AvgPool2DBackward0` ->
    `AvgPool2DBackwardBackward0`); a 1-d pooling's `SqueezeBackward1` stays itself (PyTorch
    pools in 2-d: its gradient ends with that squeeze's derivative). Call it after any
    rename of the node."""
    link = autograd.link
    node = (out[0] if out.__class__ is tuple else out)._grad_fn
    if link is not None and node is not None:
        if name is None:
            name = type(node).__name__
            if name.endswith("Backward0"):
                name = name[:-len("Backward0")] + "BackwardBackward0"
        link(out, name, zero, inputs)
    return out
