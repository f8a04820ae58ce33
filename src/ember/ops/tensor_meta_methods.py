"""Plain Tensor methods about layout and identity that PyTorch defines in Python:
`dim_order`, `const_data_ptr`, `as_subclass`, and the deprecated out-of-place `resize` /
`resize_as` (autograd's Resize: a reshape that keeps the element count)."""

from __future__ import annotations

import math
import warnings

from .._layout import memory_format as _memory_format
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from .movement import alias
from .registry import rename_node

__all__: list[str] = []


def _resize(self: Tensor, sizes: tuple) -> Tensor:
    n = math.prod(sizes)
    if self.numel() != n:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} "
            f"({self.numel()} elements). autograd's resize can only change the shape of a "
            f"given tensor, while preserving the number of elements. ")
    out = self.contiguous().view(*sizes)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "ResizeBackward")
    return out


def resize(self: Tensor, *sizes) -> Tensor:
    """Deprecated: this tensor's elements in shape `sizes` (same count), sharing storage
    when contiguous."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=user_stacklevel())
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return _resize(self, tuple(sizes))


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: `resize` to `tensor`'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=user_stacklevel())
    return _resize(self, tuple(tensor.shape))


def _should_swap(strides, shape, a: int, b: int) -> int:
    """PyTorch's comparison of two dims for the physical order (-1 keep, 1 swap, 0 tie)."""
    def ge(x, y):
        return True if y == 0 else False if x == 0 else (x >= y or x % y == 0)

    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    return -1 if ge(sb, sa) else 1


def _physical_perm(t: Tensor) -> tuple[list[int], bool]:
    """The dims from outermost to innermost in memory, and whether that order is ambiguous."""
    nd = t.dim()
    if nd <= 1:
        return list(range(nd)), False
    from .._layout import channels_last, channels_last_3d

    cl = {4: channels_last, 5: channels_last_3d}.get(nd)
    contiguous = t.is_contiguous()
    last = cl is not None and t.is_contiguous(memory_format=cl)
    if contiguous and not last:
        return list(range(nd)), False
    if last and not contiguous:
        return [0, *range(2, nd), 1], False
    strides, shape = t.stride(), t.shape
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        j = i
        for k in reversed(range(i)):
            c = _should_swap(strides, shape, perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    ambiguous = any(_should_swap(strides, shape, perm[i], perm[i + 1]) != -1
                    for i in range(nd - 1))
    return list(reversed(perm)), ambiguous


def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (channels-last 4-d: (0, 2, 3, 1));
    with `ambiguity_check`, RuntimeError where size-1 dims or equal strides leave it open
    (a list of memory formats: unless exactly one of them fits)."""
    if getattr(self, "is_sparse", False):
        raise AttributeError(f"Can't get dim order on sparse type: {self.type()} Use "
                             f"Tensor.to_dense() to convert to a dense tensor first.")
    words = "The ambiguity_check argument must be a bool or a list of memory formats."
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
                isinstance(f, _memory_format) for f in ambiguity_check):
            raise TypeError(words)
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    strides = self.stride()
    several = any(a == b for a, b in zip(strides, strides[1:])) or 1 in tuple(self.shape)
    if check and several and sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    perm, ambiguous = _physical_perm(self)
    if ambiguous and ambiguity_check:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


def const_data_ptr(self: Tensor) -> int:
    """The address of the first element, for reading (the same as data_ptr())."""
    return self.data_ptr()


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """This tensor as an instance of Tensor subclass `cls`: an alias (a view, in the
    graph when this tensor is)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = alias(self)
    out.__class__ = cls  # (a subclass adds no slots: Tensor's own include __dict__)
    return out


TENSOR_METHODS = {"resize": resize, "resize_as": resize_as, "dim_order": dim_order,
                  "const_data_ptr": const_data_ptr, "as_subclass": as_subclass}
