"""Graph nodes: what an op records so that backward can run its VJP later.

A `Node` (`grad_fn`) keeps the primitive, its static parameters, the tensors
its VJP reads (with their versions, to catch in-place changes), and one edge
per input pointing at the node that produced that input. Leaves that require
grad end in an `AccumulateGrad` node, which deposits the gradient on `.grad`.
"""

from __future__ import annotations

import itertools
import weakref

from .. import _tensor as T
from . import grad_mode

_seq = itertools.count()
_grad_state = grad_mode.state


class AutogradMeta:
    """Rarely used per-tensor autograd state, allocated on first need."""

    __slots__ = ("retains_grad", "hooks", "post_acc_hooks", "grad_acc", "output_nr", "view_fn",
                 "__weakref__")

    def __init__(self) -> None:
        self.retains_grad = False
        self.hooks = None
        self.post_acc_hooks = None
        self.grad_acc = None
        self.output_nr = 0
        self.view_fn = None


def ag_meta(t) -> AutogradMeta:
    m = t._ag
    if m is None:
        m = t._ag = AutogradMeta()
    return m


class RemovableHandle:
    """Returned by `register_*hook`; `remove()` takes the hook out again."""

    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self.hooks_ref = weakref.ref(hooks) if hooks is not None else None
        self.id = next(RemovableHandle._ids)
        self._store = hooks

    def remove(self) -> None:
        store = self._store
        if store is not None:
            store.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class Node:
    """One recorded op: edges to its inputs' nodes, saved values, and its VJP."""

    __slots__ = ("prim", "_edges", "_needs", "_saved", "_versions", "_out", "_params",
                 "_in_meta", "_seq", "_pre_hooks", "_post_hooks", "_retained", "_freed",
                 "_anomaly", "metadata", "__weakref__")

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        return tuple(e for e, n in zip(self._edges, self._needs) if n is not None)

    @property
    def n_outputs(self) -> int:
        return self.prim.n_outputs

    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        h = RemovableHandle(self._post_hooks)
        self._post_hooks[h.id] = fn
        return h

    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = ("node", fn)
        return h

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = (output_nr, fn)
        return h

    @property
    def _saved_tensors(self):
        return tuple(s for s in (self._saved or ()) if s is not None)

    def apply(self, grads: list, create_graph: bool) -> list:
        from .engine import run_vjp

        return run_vjp(self, grads, create_graph)


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        self.prim = None
        self.variable = variable
        self._edges = ()
        self._needs = ()
        self._saved = None
        self._seq = -1  # runs last among ready nodes, as in PyTorch
        self._pre_hooks = None
        self._post_hooks = None
        self._retained = None
        self._freed = False
        self._anomaly = None
        self.metadata = {}

    @property
    def n_outputs(self) -> int:
        return 1

    def apply(self, grads: list, create_graph: bool) -> list:
        from .engine import accumulate

        accumulate(self.variable, grads[0], create_graph)
        return []


def accumulate_node(t) -> AccumulateGrad:
    """The (cached) AccumulateGrad node of leaf `t`."""
    m = ag_meta(t)
    ref = m.grad_acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        m.grad_acc = weakref.ref(node)
    return node


def edge_of(t) -> tuple:
    fn = t._grad_fn
    if fn is None:
        return (accumulate_node(t), 0)
    ag = t._ag
    return (fn, 0 if ag is None else ag.output_nr)


MISSING = object()  # no rule registered: backward through the node raises


def record(prim, rule, args, params, out) -> None:
    """Attach a new node for `prim` (derivative `rule`) to `out`, a tensor or tuple of them."""
    if rule is None:  # not differentiable: outputs simply don't require grad
        return
    Tensor = T.Tensor
    node = prim.node_class.__new__(prim.node_class)
    node.prim = prim
    edges = []
    needs = []
    in_meta = []
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                edges.append(edge_of(a))
                needs.append(True)
                in_meta.append((a._shape, a._dtype))
            else:
                edges.append((None, 0))
                needs.append(False)
                in_meta.append(None)
        else:
            edges.append((None, 0))
            needs.append(None)
            in_meta.append(None)
    if rule is MISSING:
        saved = None
        node._out = None
        node._versions = None
    else:
        fns = rule.fns
        if len(fns) != len(args):
            raise RuntimeError(
                f"the VJP of {prim.name} covers {len(fns)} inputs but it was called with "
                f"{len(args)}"
            )
        want = set()
        for i, need in enumerate(needs):
            if need:
                if fns[i] is None:
                    raise RuntimeError(
                        f"the derivative for input {i} of '{prim.name}' is not implemented"
                    )
                want.update(rule.reads[i])
        saved = tuple(
            a if (i in want or not isinstance(a, Tensor)) else None for i, a in enumerate(args)
        )
        versions = []
        for a in saved:
            if isinstance(a, Tensor):
                if a._vc is None:
                    raise RuntimeError(
                        "Inference tensors cannot be saved for backward. To work around you "
                        "can make a clone to get a normal tensor and use it in autograd."
                    )
                versions.append(a._vc[0])
            else:
                versions.append(None)
        if rule.save_output:
            alias = T._alias
            node._out = tuple(alias(o) for o in out) if isinstance(out, tuple) else alias(out)
            for o in out if isinstance(out, tuple) else (out,):
                versions.append(o._vc[0] if o._vc is not None else None)
        else:
            node._out = None
        node._versions = tuple(versions)
    node._edges = tuple(edges)
    node._needs = tuple(needs)
    node._saved = saved
    node._params = params
    node._in_meta = tuple(in_meta)
    node._seq = next(_seq)
    node._pre_hooks = None
    node._post_hooks = None
    node._retained = None
    node._freed = False
    node._anomaly = _anomaly_trace() if _anomaly.enabled else None
    node.metadata = {}
    if isinstance(out, tuple):
        for i, o in enumerate(out):
            if o._dtype.is_floating_point or o._dtype.is_complex:
                o._grad_fn = node
                o._requires_grad = True
                if i:
                    ag_meta(o).output_nr = i
    else:
        out._grad_fn = node
        out._requires_grad = True


class _Anomaly:
    enabled = False
    check_nan = True


_anomaly = _Anomaly()


def _anomaly_trace() -> str:
    import traceback

    return "".join(traceback.format_stack()[:-3])


def retain_grad(t) -> None:
    if t._grad_fn is None:
        if not t._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    m = ag_meta(t)
    if m.retains_grad:
        return
    m.retains_grad = True
    node = t._grad_fn
    if node._retained is None:
        node._retained = []
    node._retained.append((m.output_nr, weakref.ref(t)))


def register_tensor_hook(t, hook) -> RemovableHandle:
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is not None:
        return t._grad_fn._register_tensor_hook(t.output_nr, hook)
    m = ag_meta(t)
    if m.hooks is None:
        m.hooks = {}
    h = RemovableHandle(m.hooks)
    m.hooks[h.id] = hook
    return h


def register_post_accumulate_grad_hook(t, hook) -> RemovableHandle:
    if t._grad_fn is not None:
        raise RuntimeError(
            "post accumulate grad hooks cannot be registered on non-leaf tensors"
        )
    if not t._requires_grad:
        raise RuntimeError(
            "cannot register a hook on a tensor that doesn't require gradient"
        )
    m = ag_meta(t)
    if m.post_acc_hooks is None:
        m.post_acc_hooks = {}
    h = RemovableHandle(m.post_acc_hooks)
    m.post_acc_hooks[h.id] = hook
    return h
