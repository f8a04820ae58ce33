"""The autograd node of a `torch._foreach_*` list op: one node for the whole list.

PyTorch records an out-of-place list op as a single node with one output per tensor,
named for the overload called (`ForeachMulBackward1Scalar` for a number,
`ForeachMulBackward0List` for a tensor list ...), whose `next_functions` are every tensor
input in order: the `self` list, then each further list (or the one 0-dim tensor). Here
each tensor's result is computed by its per-tensor op, whose graph the list node keeps;
its derivative is that graph's, run backward for the outputs that got a gradient, so the
values (and double backward) are the per-tensor ops' own. The `_` forms are recorded per
tensor, as PyTorch records them, with the Scalar overload's names (`MulBackward1`).
"""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._core import dispatch
from .._core.primitive import VJPRule, _Each
from .registry import rename_node

_grad_state = grad_mode.state

# PyTorch's node names, by op and overload ("list", "scalar", "scalars", "tensor")
_NAMES = {
    "add": {"list": "0List", "scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor"},
    "sub": {"list": "0List", "scalar": "1Scalar", "scalars": "1ScalarList"},
    "mul": {"list": "0List", "scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor"},
    "div": {"list": "0", "scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor"},
    "clamp_min": {"list": "1List", "scalar": "0Scalar", "scalars": "0ScalarList"},
    "clamp_max": {"list": "1List", "scalar": "0Scalar", "scalars": "0ScalarList"},
    "maximum": {"list": "0List", "scalar": "0", "scalars": "1"},
    "minimum": {"list": "0List", "scalar": "0", "scalars": "1"},
    "pow": {"list": "0", "scalar": "0Scalar", "scalars": "1", "number_first": "2"},
    "lerp": {"list": "1List", "scalar": "0Scalar", "scalars": "0ScalarList"},
    "addcmul": {"scalar": "0Scalar", "scalars": "0ScalarList"},
    "addcdiv": {"scalar": "0Scalar", "scalars": "0ScalarList"},
    "max": {"": "1"},
}
# the in-place forms' per-tensor nodes where PyTorch runs the Scalar overload
_INPLACE_SCALAR = {"add": "AddBackward1", "sub": "SubBackward1", "mul": "MulBackward1",
                   "div": "DivBackward1"}


def node_name(op: str, kind: str = "") -> str:
    """`ForeachMulBackward1Scalar`: PyTorch's name of the node of `op` called with the
    overload `kind` (one-list ops: `Foreach<Op>Backward0`; a packed tensor of values:
    PyTorch has no derivative, `NotImplemented`)."""
    if op == "powsum" or op in ("addcmul", "addcdiv") and kind == "tensor":
        return "NotImplemented"
    camel = "".join(p.capitalize() for p in op.split("_")).replace("Log1p", "Log1P")
    return f"Foreach{camel}Backward{_NAMES.get(op, {}).get(kind, '0')}"


def wants_graph(tensors) -> bool:
    """Whether an out-of-place list op over `tensors` (every tensor input) records a node.
    Not under a transform (`func.jvp`, `vmap`, forward-mode duals, compile): the results
    keep the per-tensor ops' nodes there, which the transform's levels have seen."""
    if not _grad_state.enabled:
        return False
    for t in tensors:
        if t._requires_grad:
            return not dispatch._pushed[0] or not dispatch.transform_active()
    return False


class _ListOp:
    """What a list node's `prim` says of it: its name and number of outputs (not a
    registered primitive: no transform other than autograd sees it)."""

    __slots__ = ("name", "grad_name", "n_outputs", "__weakref__")

    def __init__(self, grad_name: str, n: int) -> None:
        self.name = "foreach"
        self.grad_name = grad_name
        self.n_outputs = n


_ops: dict = {}


def _node_class(prim: _ListOp) -> None:
    """Register the node class of `prim`: one that, when backward frees what it saved, also
    frees the per-tensor graphs it ran (so a second backward raises as PyTorch's does)."""
    # (the node base is autograd's, a layer up: imported when the first list node is made)
    from ..autograd.graph import Node, _node_classes

    def _release(self) -> None:
        for r in self._params.get("inner", ()):
            fn = r._grad_fn
            if fn is not None:
                fn._release()
        Node._release(self)

    _node_classes[prim] = type(prim.grad_name, (Node,), {"__slots__": (),
                                                        "_release": _release})


def _joint(g, out, *saved, needs, inner, inputs):
    """Every input's gradient, from the per-tensor graphs of the outputs given one."""
    from ..autograd.entry_points import grad  # (the engine is a layer up: a nested backward)

    if g.__class__ is not tuple:
        g = (g,)
    outs, grads = [], []
    for r, gi in zip(inner, g):
        if gi is not None and r._requires_grad:
            outs.append(r)
            grads.append(gi)
    result = [None] * len(needs)
    # a tensor given twice (`addcmul(a, a, b)`) gets its whole gradient on its first edge
    first = {}
    for i, (x, need) in enumerate(zip(inputs, needs)):
        if need and id(x) not in first:
            first[id(x)] = i
    if not outs or not first:
        return result
    wanted = [inputs[i] for i in first.values()]
    found = grad(outs, wanted, grads, retain_graph=True, create_graph=_grad_state.enabled,
                 allow_unused=True)
    for i, gi in zip(first.values(), found):
        result[i] = gi
    return result


_RULE = VJPRule(_Each(_joint), _Each(()), False, joint=_joint)
_missing: dict = {}


def _not_implemented(aten: str) -> VJPRule:
    """The rule of a list op PyTorch gives no derivative: backward through it raises."""
    rule = _missing.get(aten)
    if rule is None:
        def joint(g, out, *saved, needs, **params):
            raise RuntimeError(f"derivative for aten::{aten} is not implemented")

        rule = _missing[aten] = VJPRule(_Each(joint), _Each(()), False, joint=joint)
    return rule


def list_node(name: str, inputs: list, results: list, aten: str = "") -> tuple:
    """The results of a list op as one node's outputs: `inputs` every tensor input in
    PyTorch's order, `results` the per-tensor ops' results (with their own graphs). A node
    named `NotImplemented` raises on backward, naming the op `aten`."""
    key = (name, len(results))
    prim = _ops.get(key)
    if prim is None:
        prim = _ops[key] = _ListOp(name, len(results))
        _node_class(prim)
    out = tuple(r.detach() for r in results)
    if name == "NotImplemented":
        rule, params = _not_implemented(aten), {}
    else:
        rule, params = _RULE, {"inner": tuple(results), "inputs": tuple(inputs)}
    dispatch.autograd.record(prim, rule, tuple(inputs), params, out)
    return out


def rename_inplace(op: str, kind: str, results: list) -> None:
    """The `_` form of `op` with a number (or one per tensor): PyTorch records its
    per-tensor Scalar overload (`MulBackward1`, an edge to `self` only)."""
    name = _INPLACE_SCALAR.get(op)
    if name is None or kind not in ("scalar", "scalars") or not _grad_state.enabled:
        return
    for r in results:
        fn = r._grad_fn
        if fn is not None and type(fn).__name__ in ("AddBackward0", "SubBackward0",
                                                    "MulBackward0", "DivBackward0"):
            rename_node(fn, name)
