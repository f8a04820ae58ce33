"""LazyTensor: a tensor whose value a captured graph has not computed yet.

It carries everything a tensor's metadata says (shape, dtype, strides, autograd slots),
so Python code, meta rules and autograd's recorder work on it as on any tensor, and a
`Value` of the graph that will compute it. Reading its data (`.item()`, `.numpy()`,
printing, `bool(t)`, a kernel that is not captured) runs the pending graph first: that is
a graph break. Once the graph has run, the object *becomes* an ordinary `Tensor` (its
class is switched), so nothing of this module stays on its path afterwards.
"""

from __future__ import annotations

import numpy as np

from .. import _grad_mode as grad_mode
from .._tensor import Tensor, _alias
from ..native.calls import ptr

_new = object.__new__
_grad_state = grad_mode.state


class LazyTensor(Tensor):
    """A pending result of a captured graph (see the module docstring)."""

    __slots__ = ()
    _is_lazy = True
    _is_pending = False

    # Everything that reads data goes through one of these: run the graph, then read.
    def _force(self, reason: str) -> Tensor:
        self._lazy_session.flush(reason)
        return self

    def _lazy_alias(self, storage: bool) -> Tensor:
        """`_alias` of a pending value: another lazy tensor of the same value (same data
        once computed, same version counter), or, when its storage is wanted, the alias of
        the computed tensor."""
        if storage:
            return _alias(self._force("alias"))
        session = self.__dict__["_lazy_session"]
        return session.alias(self)

    def _ensure_storage(self):
        return Tensor._ensure_storage(self._force("storage"))

    def _array(self) -> np.ndarray:
        return Tensor._array(self._force("data read"))

    def item(self):
        return Tensor.item(self._force(".item()"))

    def tolist(self):
        return Tensor.tolist(self._force(".tolist()"))

    def numpy(self, *, force: bool = False):
        return Tensor.numpy(self._force(".numpy()"), force=force)

    def __bool__(self) -> bool:
        return Tensor.__bool__(self._force("bool()"))

    def __repr__(self) -> str:
        return Tensor.__repr__(self._force("print"))

    def __str__(self) -> str:
        return Tensor.__str__(self._force("print"))

    def __format__(self, spec: str) -> str:
        return Tensor.__format__(self._force("print"), spec)


def make_lazy(session, value, dtype, base: Tensor | None, vc) -> LazyTensor:
    """A new lazy tensor for graph value `value` (laid out as its strides say)."""
    t = _new(LazyTensor)
    t._storage = None
    t._np = None
    t._shape = value.shape
    t._stride = value.stride
    t._offset = 0
    t._dtype = dtype
    t._vc = vc if vc is not None else ([0] if _grad_state.inference is False else None)
    t._base = base
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._ag = None
    t.__dict__["_lazy_session"] = session
    t.__dict__["_lazy_value"] = value
    return t


def become(t: LazyTensor, arr: np.ndarray) -> None:
    """Turn lazy `t` into an ordinary tensor holding `arr` (a kernel's result), or, for a
    view, a view of its base's storage at `arr`'s place in it."""
    # (a NumPy kernel of 0-d operands may give a NumPy scalar: a tensor holds an ndarray)
    arr = np.asarray(arr)
    base = t._base
    t.__dict__.pop("_lazy_session", None)
    t.__dict__.pop("_lazy_value", None)
    t.__class__ = Tensor
    t._shape = arr.shape
    if base is not None and base.__class__ is Tensor:
        storage = base._ensure_storage_obj()
        where = _place(storage.data, arr)
        if where is not None:
            t._storage = storage
            t._np = arr
            t._offset, t._stride = where
            return
        t._base = None  # its base's memory moved (a copy): an independent tensor now
    t._storage = None
    t._stride = None
    t._offset = 0
    t._np = arr


def _place(flat: np.ndarray | None, arr: np.ndarray):
    """(offset, strides) in elements of `arr` inside the 1-d buffer `flat`, or None when
    `arr` does not view that buffer."""
    if flat is None or arr.dtype != flat.dtype:
        return None
    item = arr.itemsize
    start, at = ptr(flat), ptr(arr)
    if arr.size == 0:
        return 0, tuple(s // item for s in arr.strides)
    lo = hi = at
    for n, s in zip(arr.shape, arr.strides):
        (lo, hi) = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    if lo < start or hi + item > start + flat.nbytes or (at - start) % item:
        return None
    return (at - start) // item, tuple(s // item for s in arr.strides)


class Pending:
    """Mixed into a real tensor's class while a captured node that writes into it waits to
    run: reading its data runs the graph first (then its own class comes back)."""

    __slots__ = ()
    _is_pending = True

    def _array(self):
        _Writes(self).flush("data read")
        return self._array()

    def item(self):
        _Writes(self).flush(".item()")
        return self.item()

    def tolist(self):
        _Writes(self).flush(".tolist()")
        return self.tolist()

    def numpy(self, *, force: bool = False):
        _Writes(self).flush(".numpy()")
        return self.numpy(force=force)

    def __repr__(self) -> str:
        _Writes(self).flush("print")
        return repr(self)

    def __bool__(self) -> bool:
        _Writes(self).flush("bool()")
        return bool(self)


_pending_classes: dict = {}


def pending_class(cls: type) -> type:
    """`cls` with `Pending` mixed in (made once per class; same layout, so an object's class
    may be switched to it and back)."""
    p = _pending_classes.get(cls)
    if p is None:
        p = _pending_classes[cls] = type(cls.__name__, (Pending, cls), {"__slots__": ()})
        p.__qualname__ = cls.__qualname__
        p.__module__ = cls.__module__
    return p


class _Writes:
    """The flush of the session whose node writes into a pending tensor."""

    def __init__(self, t) -> None:
        self.t = t

    def flush(self, reason: str) -> None:
        self.t.__dict__["_pending_session"].flush(reason)
