"""Graph nodes: what an op records so that backward can run its VJP later.

A `Node` (`grad_fn`) keeps the primitive, its static parameters, the tensors
its VJP reads (with their versions, to catch in-place changes), and one edge
per input pointing at the node that produced that input. Leaves that require
grad end in an `AccumulateGrad` node, which deposits the gradient on `.grad`.

`record` is on the hot path of every op that needs a node, so it builds a node
with a handful of slot writes; rarely used state (hooks, metadata, the
anomaly traceback) lives in class-level defaults until first set.
"""

from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

from .. import _tensor as T
from .._core import MISSING, Family, rule_params, set_autograd
from . import grad_mode
from . import saved_attrs as _saved_attrs
from . import saved_hooks as _saved_hooks
from .saved_attrs import Metadata
from .saved_hooks import (  # noqa: F401  (torch.autograd.graph's names)
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)

_seq = itertools.count()
_grad_state = grad_mode.state
_new = object.__new__

# Nodes of ops whose PyTorch overload takes `Tensor other`: a Python number there is
# wrapped into a tensor, so it shows up in `next_functions` as `(None, 0)`.
# A `Tensor? min` / `Tensor? max` left out (clamp's) shows the same way.
_WRAPS_SCALARS = frozenset({"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0",
                            "WhereBackward0", "NativeLayerNormBackward0", "ClampBackward0",
                            "NativeBatchNormBackward0"})


SAME_DTYPE = object()  # a leaf's default grad_dtype: its own dtype


class AutogradMeta:
    """Rarely used per-tensor autograd state, allocated on first need."""

    __slots__ = ("retains_grad", "hooks", "post_acc_hooks", "grad_acc", "output_nr",
                 "grad_dtype", "__weakref__")

    def __init__(self) -> None:
        self.retains_grad = False
        self.hooks = None
        self.post_acc_hooks = None
        self.grad_acc = None
        self.output_nr = 0
        # a leaf's `grad_dtype` when set: a dtype its gradients are cast to, or None (any
        # dtype); SAME_DTYPE (the default) is the leaf's own dtype
        self.grad_dtype = SAME_DTYPE


def ag_meta(t) -> AutogradMeta:
    m = t._ag
    if m is None:
        m = t._ag = AutogradMeta()
    return m


class RemovableHandle:
    """Returned by every `register_*hook`; `remove()` takes the hook out of `hooks_dict` (and
    the same id out of `extra_dict`, one dict or a list of them). The one handle class of
    ember: tensor, node, module and optimizer hooks all return it, as PyTorch's
    `torch.utils.hooks.RemovableHandle`, which is where ember exports it too. It holds the
    dicts strongly (PyTorch holds weak references; plain dicts cannot be weakly referenced)."""

    __module__ = "ember.utils.hooks"  # (where PyTorch defines it, and programs print it)
    next_id: int = 0
    # A callable run after `remove()` (module hooks refresh their module's "has hooks"
    # flag with it): the owner's bookkeeping without a subclass, so every handle's type is
    # RemovableHandle, as in PyTorch. Not pickled.
    _on_remove = None

    def __init__(self, hooks_dict: dict, *, extra_dict: dict | list | None = None) -> None:
        self.hooks_dict = hooks_dict
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            self.extra_dicts: tuple = (extra_dict,)
        else:
            self.extra_dicts = tuple(extra_dict or ())

    def remove(self) -> None:
        for d in (self.hooks_dict, *self.extra_dicts):
            if d is not None:
                d.pop(self.id, None)
        if self._on_remove is not None:
            self._on_remove()

    def __getstate__(self):
        return (self.hooks_dict, self.id, self.extra_dicts)

    def __setstate__(self, state) -> None:
        self.hooks_dict = {} if state[0] is None else state[0]
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dicts = tuple(state[2]) if len(state) > 2 and state[2] is not None else ()

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _add_hook(hooks: dict, value) -> RemovableHandle:
    h = RemovableHandle(hooks)
    hooks[h.id] = value
    return h


# Nodes PyTorch implements in C++ by hand: `name()` gives their C++ name
_CPP_NODES = frozenset({"CopySlices", "CopyBackwards", "NotImplemented"})


class Node:
    """One recorded op: edges to its inputs' nodes, saved values, and its VJP."""

    __slots__ = ("prim", "_rule", "_edges", "_needs", "_saved", "_versions", "_out", "_params",
                 "_in_meta", "_seq", "_vv", "__dict__", "__weakref__")

    # Rarely used state: class-level defaults, set per node only when needed.
    _pre_hooks = None  # node pre-hooks: fn(grad_outputs)
    _tensor_hooks = None  # tensor hooks on this node's outputs: (output_nr, fn)
    _post_hooks = None  # fn(grad_inputs, grad_outputs)
    _retained = None  # [(output_nr, weakref to a tensor that retains its grad)]
    _anomaly = None  # the forward traceback, when anomaly mode was on
    _metadata = None
    _packed = False  # whether saved_tensors_hooks packed what it saved (saved_hooks.py)
    _left = None  # what `_saved_*` still reads after backward freed `_saved` (saved_attrs)
    _kept_freed = 0  # how many `_kept` tensors backward freed
    _compiled = None  # the compiled function whose capture recorded this node (ember.graph)
    _kept = None  # ((tensor, version, output nr), ...) what PyTorch's kernel saves (`keep`)
    # {name: value}: the op's arguments as the caller gave them, where the params hold them
    # normalised (a negative dim); `_saved_dim` ... shows these (ops.registry.keep_given)
    _given = None
    # how many leading outputs are differentiable, when some are not (max(dim)'s indices):
    # PyTorch's node has only those outputs, so its hooks see only their gradients
    _n_diff = None

    def __getattr__(self, name: str):
        # (reached only for a name found nowhere else: PyTorch's `_saved_self`, `_saved_dim`
        # ..., looked up in saved_attrs' table; any other name is an AttributeError)
        return _saved_attrs.saved_attribute(self, name)

    def __dir__(self) -> list:
        return _saved_attrs.node_dir(self)

    def name(self) -> str:
        name = type(self).__name__
        return f"torch::autograd::{name}" if name in _CPP_NODES else name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        """One (node, output_nr) per differentiable input, (None, 0) where none flows."""
        if type(self).__name__ == "CopySlices":
            return self._copy_slices_next()
        rule = getattr(self, "_rule", None)  # (nodes not made by `record` have none)
        fns = rule.fns if rule is not None and rule is not MISSING else None
        wraps = type(self).__name__ in _WRAPS_SCALARS
        if type(self).__name__ == "NotImplemented":
            # (PyTorch's node for an op with no derivative has an edge per input that
            # requires grad, and no others)
            return tuple(e for e, need in zip(self._edges, self._needs) if need)
        out = []
        for i, (e, need) in enumerate(zip(self._edges, self._needs)):
            if fns is not None and (fns.__class__ is not tuple or i < len(fns)) \
                    and fns[i] is None:
                continue
            if need is not None or wraps:
                out.append(e)
        if fns.__class__ is tuple and len(fns) > len(self._edges):
            out += [_NO_EDGE] * (len(fns) - len(self._edges))  # (an optional input left out)
        return tuple(out)

    def _copy_slices_next(self) -> tuple:
        """PyTorch's CopySlices holds the in-place op's node inside it and shows the base's
        edge, then that node's edges past its first (the view's): ours records the op's
        node as its second input, and shows its edges the same way."""
        base, inner = self._edges[0], self._edges[1] if len(self._edges) > 1 else _NO_EDGE
        if inner[0] is None or self._needs[1] is None:
            return (base,) + ((inner,) if len(self._edges) > 1 else ())
        return (base,) + tuple(inner[0].next_functions[1:])

    @property
    def metadata(self) -> dict:
        m = self._metadata
        if m is None:
            m = self._metadata = {}
        return m

    @property
    def n_outputs(self) -> int:
        return self.prim.n_outputs

    def _sequence_nr(self) -> int:
        return self._seq

    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return _add_hook(self._post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return _add_hook(self._tensor_hooks, (output_nr, fn))

    @property
    def _saved_tensors(self):
        saved = self._saved
        if saved is None:
            from .engine import retain_graph_error

            raise retain_graph_error()
        return tuple(s for s in saved if isinstance(s, T.Tensor))

    def _release(self) -> None:
        """Drop what this node saved (a later backward through it then raises)."""
        rule = getattr(self, "_rule", None)
        if rule is not None and rule is not MISSING and not rule.save_output \
                and not rule.wanted.get(self._needs, 1) and self._kept is None:
            return  # it saved nothing (add, views, sum ...): nothing to free, as in PyTorch
        saved, kept = self._saved, self._kept
        self._saved = None
        self._out = None
        self._kept = None
        if saved:
            tensor = T.Tensor
            for s in saved:
                if s.__class__ is not tensor:
                    self._left = _left_after_release(saved)
                    break
            else:  # (only tensors: their shapes matter where one needed no gradient)
                if None in (self._in_meta or ()):
                    self._left = _left_after_release(saved)
        if kept is not None:
            self._kept_freed = len(kept)

    def apply(self, grads: list, create_graph: bool) -> list:
        return _engine.run_vjp(self, grads, create_graph)

    def __call__(self, *grads):
        """Run this node's VJP directly on output gradients (as `grad_fn(g)` does in PyTorch):
        one gradient per differentiable output (None for none); one per input edge back, a
        bare tensor when there is one edge."""
        n = self._n_diff if self._n_diff is not None else self.n_outputs
        if len(grads) != n:
            raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
        out = tuple(self.apply(list(grads) + [None] * (self.n_outputs - n),
                               _grad_state.enabled))
        return out[0] if len(out) == 1 else out


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into `variable.grad`."""

    __module__ = "builtins"  # (PyTorch's C++ class: `type(node)` prints <class 'AccumulateGrad'>)

    def __init__(self, variable) -> None:
        self.prim = None
        self.variable = variable
        self._edges = ()
        self._needs = ()
        self._saved = ()
        # NOTE: PyTorch gives AccumulateGrad the largest sequence number, so a leaf's
        # gradient is deposited as soon as it is complete.
        self._seq = float("inf")
        self._vv = None

    @property
    def next_functions(self) -> tuple:
        return ()

    @property
    def n_outputs(self) -> int:
        return 1

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # (PyTorch's C++ name, which it prints)

    def _release(self) -> None:
        pass

    def apply(self, grads: list, create_graph: bool) -> list:
        _engine.accumulate(self.variable, grads[0], create_graph)
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
    """(node, output_nr) that gradients for `t` flow into."""
    fn = t._grad_fn
    if fn is None:
        return (accumulate_node(t), 0)
    if t._base is not None and t._vc is not None and fn._vv != t._vc[0]:
        fn = refresh_view(t)
        if fn is None:
            return (accumulate_node(t), 0)
    ag = t._ag
    return (fn, 0 if ag is None else ag.output_nr)


def current_grad_fn(t):
    """`t.grad_fn`, rebuilt first if `t` is a view whose base changed in place since."""
    fn = t._grad_fn
    if fn is not None and t._base is not None and t._vc is not None and fn._vv != t._vc[0]:
        fn = refresh_view(t)
    return fn


def refresh_view(view):
    """Give `view` a fresh grad_fn as a strided view of its (rewritten) base.

    Its old node describes the view taken before the base was changed in place;
    PyTorch regenerates it the same way (AsStridedBackward0).
    """
    from ..ops.dtype_views import view_as_real
    from ..ops.movement import as_strided
    from ..ops.registry import rebase_error

    # (one of several views one op returned: PyTorch refuses to regenerate its node)
    err = rebase_error(view, indirect=True) if view._grad_fn is not None else None
    if err is not None:
        raise err
    base = view._base
    if not base._requires_grad:
        return view._grad_fn
    with grad_mode.enable_grad():
        # (a real view of a complex base counts in real elements: `rebase_view`)
        whole = base if view._dtype is base._dtype else view_as_real(base)
        fresh = as_strided(whole, view._shape, view.stride(), view._offset)
    take_node(view, fresh._grad_fn, 0)
    return view._grad_fn


def take_node(t, node, output_nr: int) -> None:
    """Make `t` output `output_nr` of `node` (moving a retain_grad over with it)."""
    t._grad_fn = node
    t._requires_grad = True
    ag = t._ag
    if output_nr or ag is not None:
        ag = ag_meta(t)
        ag.output_nr = output_nr
        if ag.retains_grad:
            ag.retains_grad = False
            retain_grad(t)


_node_classes: dict = {}


def node_class(prim, args: tuple = (), params: dict | None = None) -> type:
    """The Node subclass of `prim`'s nodes, named as PyTorch names it (`MulBackward0`).

    A primitive whose PyTorch name depends on the call (`PowBackward0` for a number
    exponent, `PowBackward1` for a tensor one) has a function as its `grad_name`; its
    classes are cached per name."""
    name = prim.grad_name
    key = prim
    if name.__class__ is not str:
        key = name = name(args, params or {})  # (classes of call-named nodes: one per name)
    cls = _node_classes.get(key)
    if cls is None:
        # (`builtins`, as PyTorch's generated classes: `type(y.grad_fn)` prints
        # <class 'MulBackward0'>)
        cls = _node_classes[key] = type(name, (Node,), {"__slots__": (),
                                                        "__module__": "builtins"})
    return cls


def record(prim, rule, args, params, out) -> None:
    """Attach a new node for `prim` (derivative `rule`) to `out`, a tensor or tuple of them."""
    if rule is None:  # not differentiable: outputs simply don't require grad
        return
    if out.__class__ is not tuple and not (out._dtype.is_floating_point
                                           or out._dtype.is_complex):
        return  # an integer or bool result never requires grad (`x.int()`), as in PyTorch
    Tensor = T.Tensor
    member = None
    if prim.__class__ is Family:  # the member's class, cached by member
        fn = member = params["fn"]
        cls = _node_classes.get(fn)
        if cls is None:
            cls = _node_classes[fn] = node_class(prim, args, params)
        # what the member's rule is called with: the params less `fn` (rule_params)
        params = _NO_PARAMS if len(params) == 1 else rule_params(prim, params)
    else:
        cls = _node_classes.get(prim)
        if cls is None:
            name = prim.grad_name
            # (a name that depends on the call: the class is cached per name, found inline)
            cls = node_class(prim, args, params) if name.__class__ is str else \
                _node_classes.get(name(args, params)) or node_class(prim, args, params)
    node = _new(cls)
    node.prim = prim
    node._rule = rule
    edges = []
    needs = []
    in_meta = []
    normal = False  # (a tensor input that is not an inference tensor)
    for a in args:
        if isinstance(a, Tensor):
            if a._vc is not None:
                normal = True
            if a._requires_grad:
                fn = a._grad_fn
                if fn is not None and a._base is None and a._ag is None:
                    edges.append((fn, 0))  # the common case of edge_of, inline
                else:
                    edges.append(edge_of(a))
                needs.append(True)
                in_meta.append((a._shape, a._dtype))
            else:
                edges.append(_NO_EDGE)
                needs.append(False)
                in_meta.append(None)
        else:
            edges.append(_NO_EDGE)
            needs.append(None)
            in_meta.append(None)
    if not normal and not _wrapped_number(prim, member, args):
        # PyTorch's inference tensors carry no autograd dispatch key: an op that sees no
        # other tensor records nothing, though an input requires grad (outside inference
        # mode; inside, grad mode is off).
        return
    _finish(node, prim, rule, args, out, tuple(edges), tuple(needs), params, tuple(in_meta))


def _finish(node, prim, rule, args, out, edges, needs, params, in_meta) -> None:
    """Save what the rule reads, fill in the node and make it `out`'s grad_fn."""
    multi = out.__class__ is tuple
    if rule is MISSING:
        node._saved = ()
        node._out = None
        node._versions = ()
    else:
        _save(node, prim, rule, args, needs, out, multi)
    node._edges = edges
    node._needs = needs
    node._params = params
    node._in_meta = in_meta
    node._seq = next(_seq)
    if _anomaly.enabled:
        node._anomaly = _anomaly_trace()
    _attach(node, out, multi)


def statics(node) -> tuple:
    """What of `node` another call of the same op with inputs requiring grad in the same
    places would repeat (`record_like`): its class, op, rule, params, needs and inputs'
    metadata."""
    return (node.__class__, node.prim, node._rule, node._params, node._needs, node._in_meta)


def record_like(like: tuple, args, out) -> bool:
    """`record` for an op that repeats one recorded before (`like`, its `statics`): only
    the edges, saved tensors and versions are found anew. False (nothing done) where the
    inputs requiring grad are not the same ones, or one is an inference tensor."""
    cls, prim, rule, params, needs, in_meta = like
    Tensor = T.Tensor
    edges = []
    for a, need in zip(args, needs):
        if need:
            if a._vc is None or not a._requires_grad:
                return False
            fn = a._grad_fn
            if fn is not None and a._base is None and a._ag is None:
                edges.append((fn, 0))
            else:
                edges.append(edge_of(a))
        else:
            if need is not None and (a._requires_grad or a._vc is None) or \
                    need is None and isinstance(a, Tensor):
                return False
            edges.append(_NO_EDGE)
    node = _new(cls)
    node.prim = prim
    node._rule = rule
    _finish(node, prim, rule, args, out, tuple(edges), needs, params, in_meta)
    return True


def _attach(node, out, multi: bool) -> None:
    """Make `node` the grad_fn of `out` (a tensor, or a tuple: its float outputs)."""
    if multi:
        first = out[0]
        node._vv = first._vc[0] if first._vc is not None else None
        n_diff = 0
        for i, o in enumerate(out):
            if o._dtype.is_floating_point or o._dtype.is_complex:
                o._grad_fn = node
                o._requires_grad = True
                if i:
                    ag_meta(o).output_nr = i
                if n_diff == i:
                    n_diff += 1
        if n_diff < len(out):
            node._n_diff = n_diff
    else:
        vc = out._vc
        node._vv = vc[0] if vc is not None else None
        out._grad_fn = node
        out._requires_grad = True


def _wrapped_number(prim, member, args) -> bool:
    """Whether PyTorch passes a number operand of this op (a family `member`) as a tensor
    (`a + 1`: add's `other` is a Tensor, the number a wrapped one), which, being no
    inference tensor, brings the autograd key an op on inference tensors alone lacks."""
    return member is not None and prim.name == "binary" \
        and member.name in _WRAPPED_NUMBER_OPS and any(not isinstance(a, T.Tensor) for a in args)


_WRAPPED_NUMBER_OPS = frozenset(("add", "sub", "add_alpha", "sub_alpha", "rsub_scalar", "mul",
                                 "div", "div_floor",
                                 "div_trunc", "remainder_scalar"))
_NO_EDGE = (None, 0)
_NO_PARAMS: dict = {}  # (shared, never written: a rule's **params makes its own dict)


class Freed:
    """A saved tensor backward freed: reading it raises; its shape stays (PyTorch keeps an
    operand's sizes apart from the operand: `_saved_mat1_sym_sizes`)."""

    __slots__ = ("shape",)

    def __init__(self, shape) -> None:
        self.shape = shape


_NUMBERS = (bool, int, float, complex)


def _left_after_release(saved: tuple) -> tuple:
    """What PyTorch's node still shows once backward freed it: its Scalar arguments, and
    None for the tensors it never saved; each freed tensor is `Freed`."""
    left = []
    for s in saved:
        if s is not None and s.__class__ not in _NUMBERS:
            s = None if s.__class__ is Metadata else Freed(getattr(s, "_shape", None))
        left.append(s)
    return tuple(left)


def _save(node, prim, rule, args, needs, out, multi) -> None:
    """Keep the inputs (and output) the VJP reads, with their current versions."""
    want = rule.wanted.get(needs)
    if want is None:
        want = rule.wanted[needs] = _wanted(prim, rule, args, needs)
    Tensor = T.Tensor
    saved = list(args)
    versions = []
    shapes_only = rule.metadata and _metadata_wanted(rule, needs)
    for i, a in enumerate(args):
        if a.__class__ is Tensor or isinstance(a, Tensor):
            if i in want:
                vc = a._vc
                if vc is None:
                    raise _inference_save_error()
                versions.append(vc[0])
            else:
                saved[i] = Metadata(a) if shapes_only and i in shapes_only else None
                versions.append(None)
        else:
            versions.append(None)
    keep = rule.save_output
    if keep:
        alias = T._alias
        kept = []
        for j, o in enumerate(out if multi else (out,)):
            if keep is True or j in keep:
                if o._vc is None:
                    raise _inference_save_error()
                versions.append(o._vc[0])
                kept.append(alias(o, storage=False))
            else:  # an output the rule never reads: an in-place op may overwrite it
                versions.append(None)
                kept.append(None)
        node._out = tuple(kept) if multi else kept[0]
    else:
        node._out = None
    node._saved = tuple(saved)
    node._versions = tuple(versions)
    if _saved_hooks._stack:
        _pack_saved(node, out, multi)


def _pack_saved(node, out, multi) -> None:
    """Hand what the node saved to the active pack hook (the outputs themselves, not the
    aliases kept of them). An output kept only as a shortcut (`cache_output`) is dropped
    instead: PyTorch's node does not save it, so its hooks never see it."""
    node._saved = _saved_hooks.pack(node._saved)
    kept = node._out
    if kept is not None and node._rule.cache_output:
        kept = node._out = None
    if kept is not None:
        outs = out if multi else (out,)
        kept = kept if multi else (kept,)
        packed = tuple(None if k is None else _saved_hooks.pack((o,))[0]
                       for o, k in zip(outs, kept))
        node._out = packed if multi else packed[0]
    node._packed = True


def _metadata_wanted(rule, needs) -> frozenset:
    key = ("metadata", needs)
    got = rule.wanted.get(key)
    if got is None:
        got = rule.wanted[key] = frozenset(
            j for i, need in enumerate(needs) if need for j in rule.metadata[i])
    return got


def _wanted(prim, rule, args, needs) -> frozenset:
    fns = rule.fns
    if fns.__class__ is tuple and not (  # (not a variadic rule's)
            len(fns) - rule.optional <= len(args) <= len(fns)):
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
    return frozenset(want)


def _inference_save_error() -> RuntimeError:
    return RuntimeError(
        "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
        "inference mode in computation tracked by autograd. To work around this, you can make "
        "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
        "instead of `torch.inference_mode()`."
    )


class _Anomaly:
    """Anomaly-mode flags; process-wide, as in PyTorch."""

    enabled = False
    check_nan = True


_anomaly = _Anomaly()


def _anomaly_trace() -> str:
    import traceback

    stack = traceback.extract_stack()
    # Drop the frames inside ember itself so the trace ends at the user's call.
    here = __file__.rsplit("/", 2)[0]
    while stack and stack[-1].filename.startswith(here):
        stack.pop()
    return "".join(traceback.format_list(stack))


# --- per-tensor hooks and retain_grad ---------------------------------------------------

def retain_grad(t) -> None:
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node = current_grad_fn(t)
    if node is None:
        return
    m = ag_meta(t)
    if m.retains_grad:
        return
    m.retains_grad = True
    if node._retained is None:
        node._retained = []
    node._retained.append((m.output_nr, weakref.ref(t)))


def register_tensor_hook(t, hook) -> RemovableHandle:
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = current_grad_fn(t)
    if node is not None:
        return node._register_tensor_hook(t.output_nr, hook)
    m = ag_meta(t)
    if m.hooks is None:
        m.hooks = {}
    return _add_hook(m.hooks, hook)


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
    return _add_hook(m.post_acc_hooks, hook)


def keep(out, tensors) -> None:
    """Have the node that made `out` (the last op of a composite) also check, at backward,
    that none of `tensors` was modified in place since: what PyTorch's single kernel saves
    for its derivative (avg_pool2d its input, copysign its result) and ember's composite,
    whose pieces read something else, does not. An in-place op on one of them then makes
    backward raise as in PyTorch; nothing is read from them."""
    node = out._grad_fn
    if node is None or getattr(node, "_rule", None) is None or node._saved is None:
        return
    Tensor = T.Tensor
    # (each with its output number when it is an output of this node: an error names the
    # node then, as for a saved output, and otherwise the tensor's grad_fn at that time)
    kept = tuple((t, t._vc[0], t.output_nr if t._grad_fn is node else None)
                 for t in tensors if isinstance(t, Tensor) and t._vc is not None)
    if kept:
        node._kept = kept if node._kept is None else node._kept + kept


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor arrives in the graph: a node and its input number
    (`autograd.grad` accepts one in place of the tensor)."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The GradientEdge through which `tensor`'s gradient flows (its AccumulateGrad node for
    a leaf)."""
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = edge_of(tensor)
    return GradientEdge(node, nr)


def increment_version(t) -> None:
    """Bump `t`'s version counter, as an in-place op would (torch.autograd.graph's helper)."""
    if t._vc is not None:
        t._vc[0] += 1


__all__ = ["Node", "RemovableHandle", "GradientEdge", "get_gradient_edge", "increment_version",
           "allow_mutation_on_saved_tensors"]

# The engine imports this module; bound last, so either may be imported first.
from . import engine as _engine  # noqa: E402
from .inplace import inplace_with_grad  # noqa: E402

set_autograd(record, inplace_with_grad, keep)


from .multi_grad_hook import register_multi_grad_hook  # noqa: E402, F401  (torch's home for it)
