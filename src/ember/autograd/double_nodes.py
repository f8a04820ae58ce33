"""PyTorch's double-backward nodes for ops whose gradient does not read their input.

PyTorch differentiates many ops with one derivative op that takes the forward's input
(`convolution_backward(grad, input, weight)`, `avg_pool2d_backward(grad, self)`,
`nll_loss_backward(grad, self, target)` ...), so under `create_graph=True` their gradient
requires grad whenever that input does, even where its value does not depend on it.
ember's rules compute such a gradient from the cotangent alone, so an op marks its node
with `link` at forward time (the edges of the inputs PyTorch's derivative takes), and the
engine hands each gradient of a marked node to `tie`: the gradient itself (an alias),
under a node named as PyTorch's (`ConvolutionBackwardBackward0`) whose edges reach the
cotangent's node and those inputs. Differentiating through it gives the cotangent its
gradient unchanged and each linked input zeros (`zero=True`, what PyTorch's pooling, padding
and loss derivatives give) or no gradient at all (`zero=False`: PyTorch's convolution and
grid_sample derivatives leave it undefined, so `autograd.grad` asks for `allow_unused`).
Nothing of this runs unless create_graph is True.
"""

from __future__ import annotations

from .. import _tensor as T
from .._core import VJPRule
from .._core.dispatch import autograd, transform_active
from .graph import _finish, _new, edge_of, node_class

_NO_EDGE = (None, 0)


def link(out, name: str, zero: bool, tensors: tuple) -> None:
    """Mark the node that made `out` (a tensor or tuple): its gradients under
    create_graph=True are PyTorch's node `name`, which also takes `tensors` (those of them
    requiring grad)."""
    first = out[0] if out.__class__ is tuple else out
    node = first._grad_fn
    if node is None:
        return
    edges = tuple((edge_of(t), (t._shape, t._dtype)) for t in tensors
                  if t is not None and t._requires_grad)
    if edges:
        node._tie = (name, zero, edges)


class _Link:
    """What a tie node records as its op: not a primitive (nothing binds it; the engine
    makes the node directly, as it reattaches saved outputs)."""

    name = "double_backward_link"
    n_outputs = 1
    grad_name = staticmethod(lambda args, params: params["name"])


_LINK = _Link()


def _tie_vjp(v, out, *inputs, needs, name, zero, metas):
    # the cotangent's gradient is v; each linked input's is zeros, or none (undefined)
    return [v if needs[0] else None] + [
        v.new_zeros(shape, dtype=dtype) if zero and need else None
        for need, (shape, dtype) in zip(needs[1:], metas)]


_rules: dict = {}  # number of inputs -> the tie's VJPRule


def _rule(n: int) -> VJPRule:
    rule = _rules.get(n)
    if rule is None:
        rule = _rules[n] = VJPRule((_tie_vjp,) * n, ((),) * n, False, joint=_tie_vjp)
    return rule


def tie(node, grads: list) -> list:
    """`grads` (the gradients `node`'s rule gave, one per input) with each tied to the
    inputs `link` recorded on `node` (see the module docstring)."""
    if transform_active():
        # (a transform's wrapped or lazy gradient, or one carrying a tangent, is not aliased:
        # the tie is left out there, as it was before ties)
        return grads
    name, zero, linked = node.__dict__["_tie"]
    Tensor = T.Tensor
    out = []
    for g in grads:
        if g is None or g.__class__ is not Tensor or (g._requires_grad and not zero) or not (
                g._dtype.is_floating_point or g._dtype.is_complex):
            out.append(g)  # (with zero=False, a tie adds nothing a gradient has already)
            continue
        t = T._alias(g)
        edges = (edge_of(g) if g._requires_grad else _NO_EDGE,) + tuple(e for e, _ in linked)
        needs = (g._requires_grad,) + (True,) * len(linked)
        in_meta = ((g._shape, g._dtype) if g._requires_grad else None,) + tuple(
            m for _, m in linked)
        args = (g,) + (None,) * len(linked)
        params = {"name": name, "zero": zero, "metas": in_meta[1:]}
        n = len(args)
        tie_node = _new(node_class(_LINK, args, params))
        tie_node.prim = _LINK
        tie_node._rule = _rule(n)
        _finish(tie_node, _LINK, tie_node._rule, args, t, edges, needs, params, in_meta)
        out.append(t)
    return out


autograd.link = link
