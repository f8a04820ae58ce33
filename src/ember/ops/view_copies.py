"""Fresh tensors made from a view: narrow_copy, and the out-of-place writes into a view
slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter; and slice_inverse, the
view of a tensor's storage with another tensor's geometry.

narrow_copy is narrow's view copied into a new contiguous tensor. Each scatter returns a
copy of `input` whose slice / selected row / diagonal holds `src` (cast to `input`'s
dtype). All compose clone, a view and (for the scatters) an in-place copy, so autograd gives
`input` the gradient outside the view and `src` the gradient inside it; the graph node
takes PyTorch's name for the op.
"""

from __future__ import annotations

from collections.abc import Callable

from .._layout import contiguous_format
from .._tensor import Tensor
from .._view import is_non_overlapping_and_dense, wrap_dim
from ._arg_parser_text import need_tensors
from .creation import empty_strided
from .inplace_view import copy_slices_geom, geometry
from .movement import _is_int_arg, _narrow, layout_own
from .registry import rename_node


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A new contiguous tensor holding `input.narrow(dim, start, length)`."""
    if input.__class__ is not Tensor and (own := layout_own(input, "narrow_copy")) is not None:
        return own(input, dim, start, length)
    return _narrow_copy(input, dim, start, length, 2)


def _narrow_copy_method(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    return _narrow_copy(self, dim, start, length, 1)  # (its parser does not count `self`)


def _narrow_copy(input: Tensor, dim, start, length, first_pos: int) -> Tensor:
    args = (("dim", dim), ("start", start), ("length", length))
    for pos, (pname, v) in enumerate(args, first_pos):
        if not _is_int_arg(v):
            raise TypeError(f"narrow_copy(): argument '{pname}' (position {pos}) must be int, "
                            f"not {type(v).__name__}")
    dim, start, length = int(dim), int(start), int(length)
    if input.ndim and not dim < input.ndim:  # (PyTorch's kernel asserts this before wrapping)
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    out = _narrow(input, dim, start, length).clone(memory_format=contiguous_format)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "NarrowCopyBackward0")
    return out


def _check_tensors(name: str, input, src) -> None:
    need_tensors(name, ("input", 1, input), ("src", 2, src))


def _scatter_into(input: Tensor, src: Tensor, view: Callable[[Tensor], Tensor],
                  node_name: str) -> Tensor:
    """A clone of `input` with `view(clone)` overwritten by `src`."""
    out = input.clone()
    target = view(out)
    if target.shape != src.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, node_name)
    return out


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """`input` with `input[..., start:end:step, ...]` (along `dim`) replaced by `src`."""
    _check_tensors("slice_scatter", input, src)
    d = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[key], "SliceScatterBackward0")


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """`input` with `input.select(dim, index)` replaced by `src`."""
    _check_tensors("select_scatter", input, src)
    return _scatter_into(input, src, lambda t: t.select(dim, index), "SelectScatterBackward0")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """`input` with `input.diagonal(offset, dim1, dim2)` replaced by `src`."""
    _check_tensors("diagonal_scatter", input, src)
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2),
                         "DiagonalScatterBackward0")


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of `input` whose elements `input.as_strided(size, stride, storage_offset)`
    addresses hold `src`. As PyTorch's, the geometry is over `input`'s whole storage (an
    offset of None means `input`'s own): elements it reaches outside `input` are written to
    the copy's storage but are not part of the result."""
    _check_tensors("as_strided_scatter", input, src)
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    target = input.detach().as_strided(size, stride, offset)  # (PyTorch's bounds checks)
    if target.shape != src.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target.shape)}")
    out = copy_slices_geom(input, src.to(input.dtype), geometry(input), geometry(target))
    if not input.is_contiguous() and is_non_overlapping_and_dense(input.shape, input.stride()):
        # (PyTorch copies the whole storage: the result keeps a dense input's strides)
        out = empty_strided(input.shape, input.stride(), dtype=out.dtype,
                            device=out.device).copy_(out)
    if out.grad_fn is not None:
        # NOTE: PyTorch 2.13's AsStridedScatterBackward0 gives `input` the gradient inside
        # the scattered region and zero outside; ember gives the derivative (zero inside).
        rename_node(out.grad_fn, "AsStridedScatterBackward0")
    return out


def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """The view of `input`'s storage with `src`'s size, stride and offset: the inverse of
    `src.slice(dim, start, end, step)` for functionalization (`dim`, `start`, `end`, `step`
    only name the slice it undoes; the geometry comes from `src`)."""
    _check_tensors("slice_inverse", input, src)
    out = input.as_strided(src.shape, src.stride(), src.storage_offset())
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "SliceInverseBackward0")
    return out


TENSOR_METHODS = {
    "narrow_copy": _narrow_copy_method,
    "slice_scatter": slice_scatter, "select_scatter": select_scatter,
    "diagonal_scatter": diagonal_scatter, "as_strided_scatter": as_strided_scatter,
    "slice_inverse": slice_inverse,
}

__all__ = ["narrow_copy", "slice_scatter", "select_scatter", "diagonal_scatter",
           "as_strided_scatter", "slice_inverse"]
