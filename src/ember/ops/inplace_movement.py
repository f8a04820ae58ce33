"""In-place view ops: `t_`, `transpose_`, `swapaxes_`, `swapdims_`, `squeeze_`, `unsqueeze_`,
`as_strided_`, `set_` (re-point a tensor at another storage) with its test `is_set_to`, and
`type_as`, the conversion named after another tensor.

An in-place view op writes no element: it binds the view op and then re-describes
`self` with the view's shape, strides and offset over the same storage, taking over
the view's history. PyTorch numbers the in-place overload after the out-of-place
ones, so the node is renamed to match (`a.t_()` has `TBackward1`, `squeeze_(d)`
`SqueezeBackward4`). As in PyTorch the
version counter moves and a leaf that requires grad refuses.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import movement
from ._arg_parser_text import invalid_combination, need_tensor
from ._common import c_type_name, type_name
from ._size_args import REQUIRED, dims_one_by_one
from .copy import to
from .registry import bump_version, check_inplace, rename_node

# The view node's name -> the in-place overload's (PyTorch's numbering).
_INPLACE_NODE = {
    "TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
    "SqueezeBackward0": "SqueezeBackward3", "SqueezeBackward1": "SqueezeBackward4",
    "SqueezeBackward2": "SqueezeBackward5", "UnsqueezeBackward0": "UnsqueezeBackward1",
    "AsStridedBackward0": "AsStridedBackward1",
}


def rename_inplace_node(node) -> None:
    """Give the fresh view node `node` the class named as PyTorch's in-place overload."""
    name = _INPLACE_NODE.get(type(node).__name__)
    if name is not None:
        rename_node(node, name)


def _adopt(self: Tensor, view: Tensor) -> Tensor:
    """`self`, re-described as `view` (a view of it), with the view's history."""
    if view._grad_fn is not None and view._grad_fn is not self._grad_fn:
        rename_inplace_node(view._grad_fn)
    self._storage = view._ensure_storage_obj()
    self._shape, self._stride, self._offset = view._shape, view.stride(), view._offset
    self._np = view._np
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        if self._ag is not None:  # (it was output k of its old node; it is output 0 now)
            self._ag.output_nr = 0
    bump_version(self)
    if view._grad_fn is not None and self._vc is not None:
        # (the node is current as of this write: PyTorch records `t_()` of a view as
        # TBackward1, not as a view of a base changed in place, AsStridedBackward0)
        view._grad_fn._vv = self._vc[0]
    return self


def t_(self: Tensor) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.t(self))


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.transpose(self, dim0, dim1))


def squeeze_(self: Tensor, dim=REQUIRED) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.squeeze_dims(self, dim, "squeeze_", True))


squeeze_ = dims_one_by_one(squeeze_)  # (a method only: several dims may come one by one)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.unsqueeze(self, dim))


def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.as_strided(self, size, stride, storage_offset))


_SET_SIGNATURES = (
    "()", "(torch.Storage source)",
    "(torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
    "(Tensor source)",
    "(Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)")


def _set_source(self: Tensor, source) -> tuple:
    """(Storage, its length in `self`'s elements) of a `set_` source storage."""
    from .._storage import Storage

    # (a legacy TypedStorage, told by its face: the class lives in the API layer above)
    if not isinstance(source, Storage) and hasattr(source, "untyped") and hasattr(source,
                                                                                  "dtype"):
        if source.dtype != self._dtype:
            raise RuntimeError(f"Expected a Storage of type {c_type_name(self._dtype)} or an "
                               f"UntypedStorage, but got type {type_name(source.dtype)} for "
                               "argument 1 'storage'")
        source = source.untyped()
    if not isinstance(source, Storage):
        return None, 0
    return source, source.nbytes() // self._dtype.itemsize


def set_(self: Tensor, source=None, storage_offset=None, size=None, stride=None) -> Tensor:
    """Point `self` at `source`'s memory: a tensor's storage with its size, stride and offset,
    or a storage with the given ones (default: all of it, 1-D). With no source, an empty
    storage. The storage grows when the geometry reaches past its end, as PyTorch's."""
    from .._storage import Storage
    from .._view import contiguous_strides, storage_extent

    check_inplace(self, aliased_ok=True)
    given = tuple(a for a in (source, storage_offset, size, stride) if a is not None)
    if source is None:
        storage = Storage(np.empty(0, self._dtype.np), 0, self._ensure_storage_obj().device)
        shape, strides, offset = (0,), (1,), 0
    elif isinstance(source, Tensor) and storage_offset is None and size is None:
        if source._dtype != self._dtype:
            raise RuntimeError(f"Could not set tensor of type {c_type_name(source._dtype)} to a "
                               f"tensor of type {c_type_name(self._dtype)}")
        storage = source._ensure_storage_obj()
        shape, strides, offset = tuple(source._shape), source.stride(), source._offset
    else:
        if isinstance(source, Tensor):
            storage, length = source._ensure_storage_obj(), None
            if source._dtype != self._dtype:
                raise RuntimeError(f"Could not set tensor of type {c_type_name(source._dtype)} "
                                   f"to a tensor of type {c_type_name(self._dtype)}")
        else:
            storage, length = _set_source(self, source)
        if storage is None or (storage_offset is None) != (size is None):
            raise invalid_combination("set_", _SET_SIGNATURES, given, {})
        if size is None:
            shape, strides, offset = (length,), (1,), 0
        else:
            offset, shape = int(storage_offset), tuple(int(n) for n in size)
            strides = contiguous_strides(shape) if stride is None else tuple(int(n) for n in stride)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    _grow(storage, storage_extent(shape, strides, offset) * self._dtype.itemsize)
    self._storage, self._np = storage, None
    self._shape, self._stride, self._offset = tuple(shape), tuple(strides), offset
    bump_version(self)
    return self


def _grow(storage, need: int) -> None:
    """Enlarge `storage` in place to `need` bytes (new bytes zero), as resize_ does.

    NOTE: other tensors over the storage keep their cached NumPy view of the old buffer
    (a Tensor-level cache this module cannot reach), so they stop seeing writes through
    `self`; in PyTorch every tensor follows the reallocated storage."""
    if need <= storage.nbytes():
        return
    if storage.data is not None:
        grown = np.zeros(need, np.uint8)
        grown[:storage.nbytes()] = storage.bytes[:storage.nbytes()]
        storage.data, storage._bytes = grown, grown
    storage._nbytes = need


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether `self` and `tensor` are the same memory: one storage, one offset, one shape
    and one stride (a view of the same elements through other strides is not)."""
    need_tensor(tensor, "is_set_to", "tensor", 2, method=True)
    return (self._ensure_storage_obj() is tensor._ensure_storage_obj()
            and self._offset == tensor._offset and tuple(self._shape) == tuple(tensor._shape)
            and self.stride() == tensor.stride())


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """`self` in `other`'s dtype and on its device (itself when both already match)."""
    need_tensor(other, "type_as", "other", 2, method=True)
    return to(self, other.device, other.dtype)


TENSOR_METHODS = {
    "t_": t_, "transpose_": transpose_, "swapaxes_": transpose_, "swapdims_": transpose_,
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "as_strided_": as_strided_,
    "type_as": type_as, "set_": set_, "is_set_to": is_set_to,
}

__all__: list = []
