"""Custom differentiable ops: `ember.autograd.Function`, written as in PyTorch.

A subclass gives `forward` and `backward` (static methods). Either
`forward(ctx, *args)` saves what it needs on `ctx` itself, or (the newer form,
the one that works with function transforms) `forward(*args)` is pure and
`setup_context(ctx, inputs, output)` fills `ctx` afterwards. `Fn.apply(*args)`
runs forward under no_grad and, when an input requires grad, records one graph
node per call: the same kind of node a primitive records, whose VJP is the
user's `backward(ctx, *grad_outputs)`. That node *is* `ctx`, so attributes set
on `ctx` in forward are there in backward.
"""

from __future__ import annotations

import functools

from .. import _tensor as T
from .._core import Primitive, bind
from .._user_warnings import warn_at_user
from . import grad_mode
from . import saved_hooks as _saved_hooks
from .graph import Node, _anomaly, _anomaly_trace, _seq, edge_of, take_node
from .saved_hooks import Packed

# ember.func's reverse transforms (grad, vjp, jacrev, ...) running now: it counts them here,
# where `Function.apply` can see them without importing up a layer
reverse_transforms_open = [0]

# PyTorch's words for a Function written the old way (forward(ctx, ...)) inside a transform
NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
    "jacrev, ...), it must override the setup_context staticmethod. For more details, please "
    "see https://pytorch.org/docs/main/notes/extending.func.html")


class FunctionCtx:
    """The `ctx` methods PyTorch documents; mixed into each Function's node class."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep `tensors` (or None) for backward; in-place changes to them are caught."""
        for i, t in enumerate(tensors):  # (by position: `index` would compare tensors)
            if t is not None and not isinstance(t, T.Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self._to_save_fwd = tensors

    def mark_dirty(self, *tensors) -> None:
        """These inputs were modified in place by forward (and are returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs get no gradient (they do not require grad)."""
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward sees zeros (True, the default) or None for unused outputs."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            from .engine import retain_graph_error

            raise retain_graph_error()
        from .engine import version_error

        out = []
        for i, (t, v) in enumerate(zip(saved, self._versions)):
            if t is None:
                out.append(None)
                continue
            if t.__class__ is Packed:  # (PyTorch checks no version of a packed tensor)
                t, v = t.get(), None
            if v is not None and t._vc[0] != v:
                fn = self if i in self._saved_outputs else t._grad_fn
                raise version_error(t, v, fn, t.output_nr if fn is not None else 0)
            if i in self._saved_outputs and grad_mode.state.enabled:
                t = T._alias(t)
                take_node(t, self, self._saved_outputs[i])
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors


class FunctionNode(Node, FunctionCtx):
    """The node (and ctx) of one `Function.apply` call."""

    _fn_cls = None
    _to_save = ()
    _to_save_fwd = ()
    _dirty = ()
    _non_diff = ()
    _materialize = True
    _saved_outputs: dict = {}
    _out_meta = ()
    needs_input_grad: tuple = ()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        # (PyTorch makes the node class inside torch.autograd.function: its default repr)
        from .. import _names

        return (f"<{_names.prefix}.autograd.function.{type(self).__name__} object at "
                f"{hex(id(self))}>")

    @property
    def next_functions(self) -> tuple:
        return tuple(e for e, need in zip(self._edges, self._needs) if need is not None)

    @property
    def n_outputs(self) -> int:
        return len(self._out_meta)

    def _release(self) -> None:
        self._saved = None

    def apply(self, grads: list, create_graph: bool) -> list:
        """Run the user's backward on the output gradients and check what it returns."""
        if self._materialize:
            from ..ops.creation import zeros

            grads = [g if g is not None or m is None else zeros(m[0], dtype=m[1], device=m[2])
                     for g, m in zip(grads, self._out_meta)]
        cls = self._fn_cls
        res = cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self._needs)
        if len(res) != n and not (len(res) > n and all(r is None for r in res[n:])):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n}, got {len(res)})"
            )
        from .engine import fit

        result = []
        for i, need in enumerate(self._needs):
            g = res[i]
            if need is None and g is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
            if not need or g is None:
                result.append(None)
                continue
            if not isinstance(g, T.Tensor):  # (PyTorch's words: a RuntimeError)
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            shape, dtype = self._in_meta[i]
            if g._shape != shape:
                try:
                    g = g.sum_to_size(shape)
                except RuntimeError:
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - got "
                        f"{list(g._shape)} but expected shape compatible with {list(shape)}"
                    ) from None
            result.append(fit(g, shape, dtype))
        return result


class Function:
    """Base class for custom autograd ops (subclass it; call `YourFn.apply(...)`)."""

    _node_cls: type = FunctionNode
    # vmap runs forward (and backward) on batched tensors as it runs any function; else
    # the class gives its own `vmap` rule, or vmap refuses it
    generate_vmap_rule: bool = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._node_cls = type(cls.__name__ + "Backward", (FunctionNode,), {"_fn_cls": cls})
        cls._prim = FunctionPrimitive(cls)

    def __init__(self, *args, **kwargs) -> None:
        warn_at_user(f"{self.__class__} should not be instantiated. Methods on autograd "
                     "functions are all static, so you should invoke them on the class itself. "
                     "Instantiating an autograd function will raise an error in a future "
                     "version of PyTorch.", DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batched form of forward: `(output, out_dims)` for inputs batched along
        `in_dims` (None: not batched); `info.batch_size`, `info.randomness` describe the
        vmap."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward (under no_grad) and record a node when an input requires grad: one
        primitive of its own, bound like any op (so an interpreter sees `cls` by name)."""
        if reverse_transforms_open[0] and cls.setup_context is Function.setup_context:
            raise RuntimeError(NEEDS_SETUP_CONTEXT)
        return bind(cls._prim, *args, **kwargs)


class FunctionPrimitive(Primitive):
    """A user's `autograd.Function` subclass as a primitive. It is the user's op, not part
    of ember's catalogue, so it is not added to the primitive list."""

    __slots__ = ("fn_cls",)

    def __init__(self, cls: type) -> None:
        self.name = cls.__name__
        self.grad_name = cls.__name__ + "Backward"
        self.n_outputs = 1
        self.fn_cls = cls
        self.impl = _eval_function


def _eval_function(prim: FunctionPrimitive, args: tuple, kwargs: dict):
    """Eager evaluation of a custom Function: its forward under no_grad, then its node."""
    cls = prim.fn_cls
    if cls.backward is Function.backward and cls.vjp is not Function.vjp:
        cls.backward = cls.vjp
    node = cls._node_cls.__new__(cls._node_cls)
    node._saved = ()
    node._versions = ()
    tensors = [a for a in args if isinstance(a, T.Tensor)]
    record = grad_mode.state.enabled and any(t._requires_grad for t in tensors)
    node.needs_input_grad = tuple(
        isinstance(a, T.Tensor) and a._requires_grad and record for a in args)
    custom_setup = cls.setup_context is not Function.setup_context
    with grad_mode.no_grad():
        if custom_setup:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args, **kwargs)
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    if not record:
        outputs = _fresh_outputs(node, args, outputs)
        return outputs[0] if single else outputs
    outputs = _attach(node, args, outputs)
    return outputs[0] if single else outputs


def _as_is_output(src):
    """A new tensor over an input `forward` returned unchanged: with grad mode on, a view of
    it (of its base, for a view), as PyTorch makes it; under no_grad a plain alias."""
    o = T._alias(src)
    if grad_mode.state.enabled:
        o._base = src if src._base is None else src._base
    return o


def _fresh_outputs(node: FunctionNode, args, outputs) -> tuple:
    """With no graph to record, still never hand back an input object itself (only one
    marked dirty): each input returned as-is becomes a new tensor over it."""
    inputs = {id(a) for a in args if isinstance(a, T.Tensor)}
    if not inputs:
        return outputs
    dirty = {id(t) for t in node._dirty}
    return tuple(_as_is_output(o) if isinstance(o, T.Tensor) and id(o) in inputs
                 and id(o) not in dirty else o for o in outputs)


def _attach(node: FunctionNode, args, outputs) -> tuple:
    """Wire `node` into the graph: edges from `args`, outputs made its results, saves kept."""
    edges, needs, in_meta = [], [], []
    for a in args:
        if isinstance(a, T.Tensor):
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
    node.prim = None
    node._edges = tuple(edges)
    node._needs = tuple(needs)
    node._in_meta = tuple(in_meta)
    node._params = None
    node._out = None
    node._seq = next(_seq)
    if _anomaly.enabled:
        node._anomaly = _anomaly_trace()
    dirty = {id(t) for t in node._dirty}
    non_diff = {id(t) for t in node._non_diff}
    inputs = {id(a) for a in args if isinstance(a, T.Tensor)}
    if any(id(t) not in inputs for t in node._dirty):
        warn_at_user("ctx.mark_dirty() received a tensor that was not an input. Only input "
                     "Tensors that have been mutated should be passed to ctx.mark_dirty().")
    node._vv = None
    out_list, out_meta = [], []
    for nr, o in enumerate(outputs):
        if not isinstance(o, T.Tensor):
            out_list.append(o)
            out_meta.append(None)
            continue
        if id(o) in inputs and id(o) not in dirty:
            o = _as_is_output(o)
        out_meta.append((o._shape, o._dtype, o.device))
        differentiable = (o._dtype.is_floating_point or o._dtype.is_complex) and \
            id(o) not in non_diff
        if id(o) in dirty:
            _check_dirty(o)
            if o._vc is not None:
                o._vc[0] += 1  # PyTorch counts mark_dirty as a write of its own
        if differentiable:
            _make_output(node, o, nr, id(o) in dirty)
        elif id(o) in dirty:
            o._grad_fn = None
            o._requires_grad = False
        out_list.append(o)
    node._out_meta = tuple(out_meta)
    _keep_saved(node, outputs, out_list)
    return tuple(out_list)


def _check_dirty(t) -> None:
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )


def _make_output(node: FunctionNode, o, nr: int, dirty: bool) -> None:
    if dirty and o._base is not None:
        # A view modified in place (mark_dirty): its base's history is rewritten.
        from .inplace import rebase_view

        holder = T._alias(o)
        take_node(holder, node, nr)
        rebase_view(o, holder)
        return
    take_node(o, node, nr)
    if o._base is not None and o._vc is not None:
        node._vv = o._vc[0]  # a view output: it is current as of this version
        from ..ops.registry import mark_custom_function_view

        mark_custom_function_view(o, type(node)._fn_cls.__name__, nr)


def _keep_saved(node: FunctionNode, raw_outputs, outputs) -> None:
    """Store what forward saved, with versions; outputs are kept without their node."""
    saved, versions, as_output = [], [], {}
    ids = {id(r): i for i, r in enumerate(raw_outputs) if isinstance(r, T.Tensor)}
    for i, t in enumerate(node._to_save):
        if t is None:
            saved.append(None)
            versions.append(None)
            continue
        if t._vc is None:
            from .graph import _inference_save_error

            raise _inference_save_error()
        nr = ids.get(id(t))
        if nr is not None:
            out = outputs[nr]
            as_output[i] = nr
            t = T._alias(out)
        saved.append(t)
        versions.append(t._vc[0])
    node._saved = _saved_hooks.pack(tuple(saved)) if _saved_hooks._stack else tuple(saved)
    node._versions = tuple(versions)
    if as_output:
        node._saved_outputs = as_output
    node._to_save = ()


# --- once_differentiable ------------------------------------------------------------

class _DelayedError(Node):
    """Stands in for a backward that cannot itself be differentiated."""

    def __init__(self, msg: str, edges) -> None:
        self.prim = None
        self._msg = msg
        self._edges = tuple(edges)
        self._needs = tuple(True for _ in edges)
        self._saved = ()
        self._seq = next(_seq)
        self._vv = None

    @property
    def next_functions(self) -> tuple:
        return self._edges

    @property
    def n_outputs(self) -> int:
        return 1

    def _release(self) -> None:
        pass

    def apply(self, grads: list, create_graph: bool) -> list:
        raise RuntimeError(self._msg)


# torch's name for this node: `type(t.grad_fn).__name__` prints "Error"
_DelayedError.__name__ = _DelayedError.__qualname__ = "Error"


def once_differentiable(fn):
    """Decorate a `backward` that is not itself differentiable: it runs under no_grad, and
    a backward pass that reaches its result raises instead of silently giving zeros.

    NOTE: as in torch, the error node's edges lead to fresh leaves (detached copies of the
    outputs), not to the grad outputs: `autograd.grad(..., inputs=x)` only runs nodes on a
    path to `x`, so it skips the error node and leaves that term out, while `.backward()`
    runs every reachable node and raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.enabled:
            return outputs
        if not any(isinstance(a, T.Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        diff = [isinstance(o, T.Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex)
                for o in outs]
        leaves = [o.detach().requires_grad_(True) for o, d in zip(outs, diff) if d]
        err = _DelayedError(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable", [edge_of(leaf) for leaf in leaves])
        wrapped = []
        for o, d in zip(outs, diff):
            if d:
                o = T._alias(o)
                take_node(o, err, 0)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class InplaceFunction(Function):
    """A Function that may work in place (`inplace` flag), kept for compatibility."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable"]
