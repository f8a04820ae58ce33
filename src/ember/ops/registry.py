"""The op layer's entry to the core: `apply` (which is `bind`), in-place ops, and the rules
every in-place write obeys.

A primitive, its tables and `bind` live in `ember._core`; an op module defines a
`Primitive` with its NumPy kernel and meta rule, registers its VJP beside it with
`defvjp`, and calls `apply(prim, *args, **params)`. Non-tensor positional arguments
(Python scalars) are constants; keyword parameters (dims, flags) are static and stored on
the node. An in-place op `x.add_(y)` binds the derived primitive `inplace(add_p)`, whose
eager evaluation writes the kernel's result into `x`'s memory.
"""

from __future__ import annotations

import math
import re
import weakref

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import (  # re-exported: op modules import these from here
    BY_LOOP,
    MISSING,
    Family,
    Member,
    Primitive,
    VJPRule,
    batch_by_loop,
    bind,
    defbatch,
    defjvp,
    deflinear,
    deflower,
    defvjp,
    defvjp_joint,
    defvjp_variadic,
    derivative_not_defined,
    derivative_not_implemented,
    jvp_by_vjp,
    jvp_rules,
    kernels,
    nondifferentiable,
    vjp_rule,
    vjp_rules,
)
from .._core.dispatch import _FP_QUIET, _fp_reset, _fp_set, autograd, device_of, run_quiet
from .._tensor import Tensor, made_under_no_grad
from .._view import is_non_overlapping_and_dense, non_overlapping
from ._inplace_kernel import run_inplace

_grad_state = grad_mode.state
_cpu_kernels = kernels["cpu"]
_DT = {d.np: d for d in dt.ALL}

apply = bind  # every op's call into the core: `apply(prim, *args, **params)`

__all__ = ["BY_LOOP", "MISSING", "Family", "Member", "Primitive", "UpdatePrimitive", "VJPRule",
           "apply", "apply_", "batch_by_loop", "bind", "bump_version", "check_inplace",
           "check_overlap", "defbatch", "defjvp", "deflower", "deflinear", "defvjp", "defvjp_joint",
           "derivative_not_defined", "derivative_not_implemented",
           "defvjp_variadic", "inherit_view_mark", "inplace", "jvp_by_vjp", "jvp_rules",
           "keep_given",
           "mark_multi_output", "nondifferentiable", "overlapping", "rebase_error",
           "refuse_overlap", "rename_node", "saves", "shows", "ShownKept",
           "vjp_rule", "vjp_rules", "wrap_np_scalar", "write_into"]


def saves(out, *tensors):
    """`out`, made by a composite, with its node also guarding `tensors` (what PyTorch's
    one kernel for the op saves, `self` of avg_pool2d): an in-place op on one of them
    before backward then raises there, as in PyTorch. Returns `out`."""
    first = out[0] if out.__class__ is tuple else out
    if first._grad_fn is not None and autograd.keep is not None:
        autograd.keep(first, tensors)
    return out


def shows(out, name: str, **saved):
    """`out`, made by a composite, with its last node renamed `name` (PyTorch's one node for
    the op) and showing `saved` as PyTorch's node shows its `_saved_*` attributes (numbers
    as given; tensors also guarded as `saves` does, and gone after backward). Returns
    `out`."""
    first = out[0] if out.__class__ is tuple else out
    node = first._grad_fn
    if node is None:
        return out
    rename_node(node, name)
    saves(out, *(v for v in saved.values() if isinstance(v, Tensor)))
    # (a tensor shown as its place among the kept ones: released with them at backward)
    kept = [k[0] for k in node._kept or ()]
    node._shown = {k: ShownKept(next(i for i, t in enumerate(kept) if t is v))
                   if isinstance(v, Tensor) and any(t is v for t in kept) else v
                   for k, v in saved.items()}
    return out


class ShownKept(int):
    """A tensor `shows` displays: its index in its node's `_kept`."""

    __slots__ = ()


class _Undefined:
    """A tensor argument left out (None) that `shows` displays as PyTorch's node does: None,
    with the `_raw_saved_` slot of an undefined tensor beside it."""

    __slots__ = ()


UNDEFINED = _Undefined()


def keep_given(out, **args) -> None:
    """Keep on `out`'s graph node (`out` requires grad) its op's `args` as the caller gave
    them: PyTorch's node shows a dim as given (negative, a tuple in its order, None for
    every dim) where ember's params hold it normalised for the kernels and rules, so
    saved_attrs reads `_saved_dim` ... from here. Call it only when `out._grad_fn` is set:
    the common path then pays one test."""
    (out[0] if isinstance(out, tuple) else out)._grad_fn._given = args


_renamed: dict = {}


def rename_node(node, name: str) -> None:
    """Give graph node `node` the class PyTorch names `name`, for a node that ends what
    PyTorch runs as one op (every node class is a bare subclass of the node base: only the
    name changes)."""
    fn_cls = getattr(type(node), "_fn_cls", None)  # (a custom Function's node keeps it)
    cls = _renamed.get((name, fn_cls))
    if cls is None:
        # (`builtins` as node_class's classes; `_by_rename`: its inputs are the last inner
        # op's, not PyTorch's op's, so saved_attrs shows none of PyTorch's `_saved_*`)
        body = {"__slots__": (), "__module__": "builtins", "_by_rename": True}
        if fn_cls is not None:
            body = {"__slots__": (), "_fn_cls": fn_cls}
        cls = _renamed[name, fn_cls] = type(name, type(node).__bases__, body)
    node.__class__ = cls


def zero_missing(g: tuple, out: tuple) -> tuple:
    """A multi-output VJP's cotangents with each missing one (None: no path reached that
    output) replaced by zeros shaped as the saved output, for rules whose algebra wants
    every term."""
    from .creation import zeros_like

    return tuple(zeros_like(o) if gi is None else gi for gi, o in zip(g, out))


def wrap_np_scalar(value, dtype: dt.dtype):
    """A Python number as a NumPy scalar of `dtype`, wrapping integers as C would."""
    t = dtype.np.type
    try:
        return t(value)
    except OverflowError:
        return np.array(value).astype(dtype.np)[()]


# --- in-place ---------------------------------------------------------------

def check_not_inference(self: Tensor) -> None:
    """An inference tensor is written only inside inference mode (RuntimeError outside)."""
    if self._vc is None and not _grad_state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


def check_inplace(self: Tensor, *, aliased_ok: bool = False) -> None:
    """PyTorch's refusals to write into `self`, in its order: an inference tensor; with grad
    on, one of several views a single op returned (`unbind`, `split`), a view made under
    no_grad of a tensor that requires grad, a leaf that requires grad or a view of one; then
    (unless `aliased_ok`, for the writes whose result does not depend on their order) a
    tensor whose elements overlap in memory."""
    check_not_inference(self)
    check_grad_write(self)
    if not aliased_ok and overlapping(self):
        refuse_overlap()


def check_grad_write(self: Tensor) -> None:
    """The autograd refusals of an in-place write into `self` (PyTorch makes them before
    it looks at shapes, dtypes or overlap)."""
    if not _grad_state.enabled or self._is_wrapper:
        return
    base = self._base
    if base is not None:
        _check_view_write(self, base)
    elif self._requires_grad and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")


def _check_view_write(self: Tensor, base: Tensor) -> None:
    # (PyTorch's multi-output check comes first: a piece of a split of a leaf view counts)
    if self._requires_grad:
        err = rebase_error(self, indirect=False)
        if err is not None:
            raise err
    if not base._requires_grad:
        if self._requires_grad and self._grad_fn is None:  # a view made a leaf itself
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        return
    if not self._requires_grad and made_under_no_grad(self):
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is "
            "forbidden. You can clarify your code by moving both the view and the inplace "
            "either both inside the no_grad block (if you don't want the inplace to be "
            "tracked) or both outside (if you want the inplace to be tracked)."
        )
    if base._grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


# The views that one call returned several of (`unbind`, `split`), by id: (weak reference,
# the op's name as PyTorch's message gives it, output index, from a custom Function).
# PyTorch refuses to write them in place when they require grad, since one node cannot be
# rebased for a single output; nor a view a custom Function returned, whose own backward
# the rebase would override.
_multi_output: dict = {}


def mark_multi_output(views: tuple, name: str) -> tuple:
    """Record that `views` came from one call of `name` (only when they require grad)."""
    if not (_grad_state.enabled and views and views[0]._requires_grad):
        return views
    for i, v in enumerate(views):
        key = id(v)
        _multi_output[key] = (weakref.ref(v, lambda _, k=key: _multi_output.pop(k, None)),
                              name, i, False)
    return views


def inherit_view_mark(src: Tensor, view: Tensor) -> None:
    """Mark `view`, taken with grad on of `src`, a marked view, as PyTorch propagates the
    view's creation kind: writing it in place is refused as writing `src` is, the message
    naming `view`'s own node and output."""
    mark = _multi_output.get(id(src))
    if mark is None or mark[0]() is not src or view._grad_fn is None:
        return
    key = id(view)
    nr = view._ag.output_nr if view._ag is not None else 0
    name = type(view._grad_fn).__name__  # (as the message gives it: `View`, not ViewBackward0)
    _multi_output[key] = (weakref.ref(view, lambda _, k=key: _multi_output.pop(k, None)),
                          re.sub(r"Backward\d*$", "", name), nr, mark[3])


def mark_custom_function_view(view: Tensor, name: str, nr: int) -> None:
    """Record that output `nr` of custom Function `name` is a view (made in its forward, or
    an input returned as-is): writing it in place is refused."""
    key = id(view)
    _multi_output[key] = (weakref.ref(view, lambda _, k=key: _multi_output.pop(k, None)),
                          name, nr, True)


def rebase_error(view: Tensor, indirect: bool) -> RuntimeError | None:
    """PyTorch's refusal to rebase `view`, one of several views a single op returned (or a
    view a custom Function returned), onto an in-place write: of the view itself, or
    (`indirect`) of its base or another view of it, which PyTorch raises when the view's
    grad_fn is next asked for. None for any other view."""
    mark = _multi_output.get(id(view))
    if mark is None or mark[0]() is not view:
        return None
    what = "its base or another view of its base has been" if indirect else "is being"
    head = f"Output {mark[2]} of {mark[1]} is a view and {what} modified inplace."
    if mark[3]:
        return RuntimeError(
            f"{head} This view was created inside a custom Function (or because an input was "
            "returned as-is) and the autograd logic to handle view+inplace would override the "
            "custom backward associated with the custom Function, leading to incorrect "
            "gradients. This behavior is forbidden. You can fix this by cloning the output of "
            "the custom Function.")
    return RuntimeError(
        f"{head} This view is the output of a function that returns multiple views. Such "
        "functions do not allow the output views to be modified inplace. You should replace "
        "the inplace operation by an out-of-place one.")


def check_overlap(self: Tensor) -> None:
    """PyTorch's first check of any in-place op, before shapes and dtypes: refuse a view
    whose elements overlap in memory (an expanded view), after the autograd refusals."""
    check_grad_write(self)
    if overlapping(self):
        refuse_overlap()


def overlapping(self: Tensor) -> bool:
    """Whether two elements of `self` share memory (only a view can: an expanded one)."""
    if self._base is None:
        return False
    stride = self._stride if self._stride is not None else self._ensure_storage()
    return not non_overlapping(self._shape, stride)


def refuse_overlap():
    raise RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location. Please clone() the tensor before performing the operation."
    )


# The families whose in-place forms PyTorch runs through its elementwise iterator, which
# refuses an operand that partly overlaps the tensor it writes (`x[1:] += x[:-1]`): the
# result would depend on the order the elements are visited.
_POINTWISE = frozenset({"unary", "binary", "ternary", "compare"})


def check_partial_overlap(self: Tensor, args: tuple) -> None:
    """Refuse, as PyTorch does, a tensor operand sharing memory with `self` that is neither
    `self`'s exact memory (same start, end and strides) nor apart from it. PyTorch decides
    only when both are dense (covering a block once); otherwise it does not check."""
    st = self._storage
    if st is None:
        return
    for a in args:
        if a.__class__ is not Tensor or a is self or a._storage is not st:
            continue
        if _overlap_status(self, a) == "partial":
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")


def _overlap_status(a: Tensor, b: Tensor) -> str:
    """PyTorch's memory-overlap status of two views of one storage: 'full', 'partial', 'no'
    or 'too_hard' (one of them is not dense)."""
    a0, b0 = a._offset * a._dtype.itemsize, b._offset * b._dtype.itemsize
    a1 = a0 + math.prod(a._shape) * a._dtype.itemsize  # (an empty one meets nothing)
    b1 = b0 + math.prod(b._shape) * b._dtype.itemsize
    if not (a0 < b1 and b0 < a1):
        # (apart, for dense views; a view that is not dense is "too_hard", which refuses
        # nothing either: so the density test is left for views whose spans meet)
        return "no"
    if not (is_non_overlapping_and_dense(a._shape, a._stride)
            and is_non_overlapping_and_dense(b._shape, b._stride)):
        return "too_hard"
    if (a0, a1) == (b0, b1):
        return "full" if a._stride == b._stride else "partial"
    return "partial"


def bump_version(self: Tensor) -> None:
    vc = self._vc
    if vc is not None:
        vc[0] += 1


def write_into(self: Tensor, value) -> None:
    """Copy an array (or a tensor's data) into `self`'s memory, casting to its dtype."""
    dst = self._array()
    if isinstance(value, Tensor):
        value = value._array()
    if dst.dtype != getattr(value, "dtype", None) and np.iscomplexobj(value) \
            and not np.iscomplexobj(dst):
        value = value.real
    run_quiet(np.copyto, dst, value, casting="unsafe")


class InplacePrimitive(Primitive):
    """`base` written into its first input: `x.add_(y)` binds `inplace(add_p)`.

    An interpreter that does not know in-place ops can treat one as its functional op
    followed by a write-back; eager evaluation writes the kernel's result into place.
    """

    __slots__ = ("base",)

    def __init__(self, base: Primitive) -> None:  # (derived: not added to the primitive list)
        self.name = base.name + "_"
        self.grad_name = base.grad_name
        self.n_outputs = 1
        self.base = base
        self.impl = _eval_inplace


_inplace: dict = {}


def inplace(prim: Primitive) -> InplacePrimitive:
    """The in-place form of `prim` (made once, then cached)."""
    p = _inplace.get(prim)
    if p is None:
        p = _inplace[prim] = InplacePrimitive(prim)
    return p


def apply_(prim: Primitive, self: Tensor, *args, **params) -> Tensor:
    """`prim(self, *args)` written into `self`; graph rewritten when grad is recorded."""
    p = _inplace.get(prim)
    return bind(p if p is not None else inplace(prim), self, *args, **params)


def apply_given_(given: dict, prim: Primitive, self: Tensor, *args, **params) -> Tensor:
    """`apply_` for an in-place op whose node shows its arguments as the caller gave them
    (`keep_given`, as the out-of-place op's does): kept when this call recorded a node on
    `self`, and `self` is no view (a view's node is rebuilt over its base)."""
    before = self._grad_fn
    apply_(prim, self, *args, **params)
    node = self._grad_fn
    if node is not None and node is not before and self._base is None:
        node._given = given
    return self


def _eval_inplace(iprim: InplacePrimitive, args: tuple, params: dict) -> Tensor:
    """Eager evaluation of an in-place op."""
    prim = iprim.base
    self, args = args[0], args[1:]
    check_inplace(self)
    if prim.name in _POINTWISE:
        check_partial_overlap(self, args)
    base = self._base  # a view taken before its base joined the graph is written with grad
    if _grad_state.enabled and (self._requires_grad or any(
            isinstance(a, Tensor) and a._requires_grad for a in args) or (
            base is not None and base._requires_grad)):
        return autograd.inplace(prim, self, args, params)
    dev = self.device.type
    if dev == "meta":
        device_of((self,) + args)
        res = prim.meta(self, *args, **params)
        from .._view import broadcast_shapes

        if broadcast_shapes(res[0], self._shape) != self._shape:
            raise RuntimeError(
                f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                f"{list(res[0])}"
            )
        return self
    device_of((self,) + args)
    dst = self._array()
    arrays = [a._np if a.__class__ is Tensor and a._np is not None
              else (a._array() if isinstance(a, Tensor) else a) for a in args]
    run_quiet(run_inplace, prim, self, dst, arrays, params, _check_out_shape)
    bump_version(self)
    return self


class UpdatePrimitive(Primitive):
    """A fused in-place update of several tensors (an optimizer step): the kernel writes
    into the inputs at positions `writes` (their versions move) and `silent` (they do not:
    a running statistic, as PyTorch's kernel writes it) and returns nothing. Not
    differentiable; run on CPU float tensors of one dtype (the caller checks), otherwise
    composed from ops. The kernel is elementwise: a 0-d tensor reaches it as a one-element
    1-d array."""

    __slots__ = ("writes", "silent")

    def __init__(self, name: str, kernel, writes: tuple[int, ...],
                 silent: tuple[int, ...] = ()) -> None:
        super().__init__(name, kernel, lambda *args, **params: None)
        self.writes = writes
        self.silent = silent
        self.impl = _eval_update
        nondifferentiable(self)


def _eval_update(prim: UpdatePrimitive, args: tuple, params: dict) -> None:
    arrays = []
    for a in args:
        if isinstance(a, Tensor):
            arr = a._np
            a = arr if arr is not None else a._array()
            if not a.ndim:
                # A ufunc on 0-d operands returns a NumPy scalar, which a kernel's later
                # `out=` into that temporary refuses: a 1-d view of the same element
                # (`a[None]`: a third of reshape's cost, and Adam's step count is 0-d)
                a = a[None]
        arrays.append(a)
    token = _fp_set(_FP_QUIET)  # run_quiet, inline (as eval_kernel): every optimizer update
    try:
        _cpu_kernels[prim](*arrays, **params)
    finally:
        _fp_reset(token)
    for i in prim.writes:
        vc = getattr(args[i], "_vc", None)
        if vc is not None:
            vc[0] += 1


def _check_out_shape(prim, self, arrays) -> None:
    for a in arrays:
        shape = np.shape(a)
        if len(shape) > self.ndim or any(
                s not in (1, d) for s, d in zip(shape[::-1], self._shape[::-1])):
            from .._view import broadcast_shapes

            # shapes that do not broadcast at all fail as the out-of-place op would
            # ("The size of tensor a ..."); only a broadcast result larger than `self`
            # is the in-place op's own error
            full = broadcast_shapes(self._shape, shape)
            raise RuntimeError(
                f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                f"{list(full)}"
            )
