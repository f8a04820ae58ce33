"""In-place view ops: `t_`, `transpose_`, `swapaxes_`, `swapdims_`, `squeeze_`, `unsqueeze_`,
`as_strided_`, and `type_as`, the conversion named after another tensor.

An in-place view op writes no element: it binds the view op and then re-describes
`self` with the view's shape, strides and offset over the same storage, taking over
the view's history. PyTorch numbers the in-place overload after the out-of-place
ones, so the node is renamed to match (`a.t_()` has `TBackward1`, `squeeze_(d)`
`SqueezeBackward4`). As in PyTorch the
version counter moves and a leaf that requires grad refuses.
"""

from __future__ import annotations

from .._tensor import Tensor
from . import movement
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
    return self


def t_(self: Tensor) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.t(self))


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.transpose(self, dim0, dim1))


def squeeze_(self: Tensor, dim=None) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.squeeze(self, dim))


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.unsqueeze(self, dim))


def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    check_inplace(self, aliased_ok=True)
    return _adopt(self, movement.as_strided(self, size, stride, storage_offset))


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """`self` in `other`'s dtype and on its device (itself when both already match)."""
    if not isinstance(other, Tensor):
        raise TypeError("type_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return to(self, other.device, other.dtype)


TENSOR_METHODS = {
    "t_": t_, "transpose_": transpose_, "swapaxes_": transpose_, "swapdims_": transpose_,
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "as_strided_": as_strided_,
    "type_as": type_as,
}

__all__: list = []
