"""The op registry: what a primitive is, the per-transform rule tables, and dispatch.

A `Primitive` is a named op with a kernel (backend arrays in, a fresh backend
array out) and a meta rule (input metadata in, output shape/dtype out, no data).
Its derivative is registered beside it, in the same file, with `defvjp`; later
transforms add tables of their own (`jvp_rules`, `vmap_rules`, ...).

`apply(prim, *args, **params)` runs a primitive on tensors: it picks the
kernel for the inputs' device (or the meta rule on `meta`), wraps the result,
and, when grad mode is on and an input requires grad, records a graph node.
Non-tensor positional arguments (Python scalars) are constants; keyword
parameters (dims, flags) are static and stored on the node.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _meta, _wrap
from .._view import non_overlapping
from ..autograd import grad_mode
from ..autograd.graph import MISSING, Node, record, vjp_rules
from ._inplace_kernel import run_inplace

_grad_state = grad_mode.state
_DT = {d.np: d for d in dt.ALL}


class Primitive:
    """A primitive op. Its VJP lives in `vjp_rules`, registered next to it."""

    __slots__ = ("name", "kernel", "meta", "node_class", "n_outputs", "cuda_kernel",
                 "__weakref__")

    def __init__(self, name: str, kernel: Callable, meta: Callable | None = None, *,
                 grad_name: str | None = None, n_outputs: int = 1) -> None:
        self.name = name
        self.kernel = kernel
        self.meta = meta
        self.n_outputs = n_outputs
        self.cuda_kernel = None
        node_name = grad_name or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        # A node class per primitive, so `type(y.grad_fn).__name__` reads as in PyTorch.
        self.node_class = type(node_name, (Node,), {"__slots__": ()})

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class VJPRule:
    """The derivative of a primitive: one function per input, and what they read.

    Each function is called as `rule(g, out, *inputs, **params)` and returns the
    gradient for its input; `reads[i]` lists the input positions rule i uses, so a
    node saves only those (and `out` only when `save_output`).
    """

    __slots__ = ("fns", "reads", "save_output", "wanted", "joint")

    def __init__(self, fns, reads, save_output: bool, joint: Callable | None = None) -> None:
        self.fns = fns
        self.reads = reads
        self.save_output = save_output
        self.wanted: dict = {}  # which inputs are needed -> the positions to save (a cache)
        self.joint = joint  # one function for all inputs (see defvjp_joint), or None


# `vjp_rules` (Primitive -> VJPRule, or None when not differentiable) is the dict the
# autograd graph reads; it is created in autograd.graph and filled here by `defvjp`.
jvp_rules: dict[Primitive, Callable] = {}


def defvjp(prim: Primitive, *fns: Callable | None, reads=None, save_output: bool = False):
    """Register the VJP of `prim`: `fns[i](g, out, *inputs, **params)` is input i's gradient.

    A None entry marks an input that is not differentiable. `reads` (a tuple per
    input of input positions) limits what is saved; by default every rule may read
    every input.
    """
    n = len(fns)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    vjp_rules[prim] = VJPRule(fns, tuple(tuple(r) for r in reads), save_output)


def defvjp_joint(prim: Primitive, fn: Callable, differentiable, *, reads=None,
                 save_output: bool = False) -> None:
    """Register a VJP computing every input's gradient in one call, for a fused kernel whose
    gradients share work: `fn(g, out, *inputs, needs=..., **params)` returns one gradient
    (or None) per input; `needs[i]` says whether input i wants one. `differentiable[i]`
    False marks an input with no derivative."""
    n = len(differentiable)
    fns = tuple(fn if d else None for d in differentiable)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    vjp_rules[prim] = VJPRule(fns, tuple(tuple(r) for r in reads), save_output, joint=fn)


def nondifferentiable(prim: Primitive) -> None:
    """Mark `prim` as having no derivative (comparisons, integer ops, argmax ...)."""
    vjp_rules[prim] = None


def _device_of(args) -> object:
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            d = "cpu" if s is None else s.device.type
            if dev is None:
                dev = d
                first = a
            elif d != dev:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {first.device} and {a.device}!"
                )
    return dev


def apply(prim: Primitive, *args, **params):
    """Run `prim` on `args` (tensors and constants) and record the graph node if needed."""
    # NOTE: the hot path: one pass over the arguments for the CPU case.
    arrays = []
    grad = False
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            if s is not None and s.device.type != "cpu":
                return _apply_off_cpu(prim, args, params)
            arr = a._np
            arrays.append(arr if arr is not None else a._array())
            if a._requires_grad:
                grad = True
        else:
            arrays.append(a)
    res = prim.kernel(*arrays, **params)
    out = _wrap(res) if prim.n_outputs == 1 else tuple(_wrap(r) for r in res)
    if grad and _grad_state.enabled:
        record(prim, vjp_rules.get(prim, MISSING), args, params, out)
    return out


def _apply_off_cpu(prim: Primitive, args, params):
    """`apply` when a tensor is on the meta device or a non-CPU backend (or devices mix)."""
    dev = _device_of(args)
    if dev == "meta":
        if prim.meta is None:
            raise NotImplementedError(f"{prim.name} has no meta rule: it cannot run on 'meta'")
        res = prim.meta(*args, **params)
        out = _meta(*res) if prim.n_outputs == 1 else tuple(_meta(*r) for r in res)
    else:
        out = _apply_other_backend(prim, dev, args, params)
    if _grad_state.enabled:
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                record(prim, vjp_rules.get(prim, MISSING), args, params, out)
                break
    return out


def _apply_other_backend(prim, dev, args, params):
    from ..backends import get_backend

    return get_backend(dev).run(prim, args, params)


def wrap_np_scalar(value, dtype: dt.dtype):
    """A Python number as a NumPy scalar of `dtype`, wrapping integers as C would."""
    t = dtype.np.type
    try:
        return t(value)
    except OverflowError:
        return np.array(value).astype(dtype.np)[()]


# --- in-place ---------------------------------------------------------------

def check_inplace(self: Tensor) -> None:
    """PyTorch's refusals to write into `self`: a leaf that requires grad (or a view of one),
    a view made under no_grad of a tensor that requires grad, an inference tensor, and a
    tensor whose elements overlap in memory."""
    if self._vc is None and not _grad_state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")
    base = self._base
    if base is not None:
        _check_overlap(self)
    if not _grad_state.enabled:
        return
    if self._requires_grad and self._grad_fn is None:
        raise RuntimeError(
            ("a view of a leaf Variable" if base is not None else "a leaf Variable")
            + " that requires grad is being used in an in-place operation."
        )
    if base is not None and base._requires_grad and base._grad_fn is None:
        if not self._requires_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                "enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace "
                "either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked)."
            )
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def _check_overlap(self: Tensor) -> None:
    stride = self._stride if self._stride is not None else self._ensure_storage()
    if not non_overlapping(self._shape, stride):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


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
    np.copyto(dst, value, casting="unsafe")


def apply_(prim: Primitive, self: Tensor, *args, **params) -> Tensor:
    """`prim(self, *args)` written into `self`; graph rewritten when grad is recorded."""
    check_inplace(self)
    if _grad_state.enabled and (self._requires_grad or any(
            isinstance(a, Tensor) and a._requires_grad for a in args)):
        from ..autograd.inplace import inplace_with_grad

        return inplace_with_grad(prim, self, args, params)
    dev = self.device.type
    if dev == "meta":
        _device_of((self,) + args)
        res = prim.meta(self, *args, **params)
        from .._view import broadcast_shapes

        if broadcast_shapes(res[0], self._shape) != self._shape:
            raise RuntimeError(
                f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                f"{list(res[0])}"
            )
        return self
    _device_of((self,) + args)
    dst = self._array()
    arrays = [a._np if a.__class__ is Tensor and a._np is not None
              else (a._array() if isinstance(a, Tensor) else a) for a in args]
    run_inplace(prim, self, dst, arrays, params, _check_out_shape)
    bump_version(self)
    return self


def _check_out_shape(prim, self, arrays) -> None:
    for a in arrays:
        shape = np.shape(a)
        if len(shape) > self.ndim or any(
                s not in (1, d) for s, d in zip(shape[::-1], self._shape[::-1])):
            from .._view import broadcast_shapes

            try:
                full = broadcast_shapes(self._shape, shape)
            except RuntimeError:
                full = shape
            raise RuntimeError(
                f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                f"{list(full)}"
            )
