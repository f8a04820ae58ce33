"""The split family: split, split_with_sizes, chunk, unbind (and their `unsafe_` forms), and
tensor_split.

PyTorch records one call of split / chunk / unbind as ONE graph node with an output per piece
(`SplitBackward0`, `SplitWithSizesBackward0`, `UnbindBackward0` ...): every piece has it as
`grad_fn`, with `output_nr` 0, 1, 2 ..., its hooks see one gradient per piece (None for a
piece no path reached), and its backward puts each piece's gradient in its place, zeros
where none came (a `cat`, or a `stack` for unbind). Here the pieces are slice / select views
of the input; eagerly they are laid straight over its storage and one node is recorded for
them all. Under a transform (vmap, jvp, compile) each piece is its own view op, which the
transform's levels see, and its node is renamed as PyTorch's. tensor_split (hsplit, vsplit,
dsplit) is PyTorch's slices: one `SliceBackward0` per piece, written in place freely.

The `unsafe_` forms give pieces that share the input's memory but are not views of it (no
`_base`, a version counter of their own), as PyTorch's: writing one in place is allowed and
is not seen by the input's graph.
"""

from __future__ import annotations

import operator

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import dispatch
from .._core.primitive import VJPRule
from .._tensor import Tensor, _make, _view
from .._view import wrap_dim
from ._arg_parser_text import (
    is_dims_arg,
    is_int_arg,
    method_aware,
    need_int,
    no_overload,
    wrong_type,
)
from ._common import type_name
from .movement import V_SLICE, _is_int_arg, select, slice_dim, view_p
from .registry import bind, keep_given, mark_multi_output, rename_node

_grad_state = grad_mode.state


# --- the one node of a split ------------------------------------------------------------

class _PiecesOp:
    """What a split node's `prim` says of it: its name and number of outputs (not a
    registered primitive: only autograd sees it; a transform sees the pieces' views). Its
    `grad_name` is a function of the call, so autograd makes one node class per name, as
    PyTorch has, whatever the number of pieces."""

    __slots__ = ("name", "grad_name", "n_outputs", "__weakref__")

    def __init__(self, grad_name: str, n: int) -> None:
        self.name = "split"
        self.grad_name = lambda args, params: grad_name
        self.n_outputs = n


_ops: dict = {}  # (node name, number of pieces) -> its _PiecesOp


def _op(grad_name: str, n: int) -> _PiecesOp:
    op = _ops.get((grad_name, n))
    if op is None:
        op = _ops[grad_name, n] = _PiecesOp(grad_name, n)
    return op


def _pieces_vjp(g, out, x, *, in_shape, dim, sizes, unbind=False, **_):
    """The input's gradient: the pieces' gradients in their places along `dim`, zeros for a
    piece that got none (PyTorch's split_backward / unbind_backward)."""
    if g.__class__ is not tuple:
        g = (g,)
    ref = next((gi for gi in g if gi is not None), None)
    if ref is None:
        return None
    parts = []
    for gi, s in zip(g, sizes):
        if gi is None:
            shape = in_shape[:dim] + (() if unbind else (s,)) + in_shape[dim + 1:]
            gi = ref.new_zeros(shape)
        parts.append(gi)
    from .join import cat, stack

    if len(parts) == 1:
        return parts[0].unsqueeze(dim) if unbind else parts[0]
    return stack(parts, dim) if unbind else cat(parts, dim)


_RULE = VJPRule((_pieces_vjp,), ((),), False, in_shape=True)


def _eager(x: Tensor) -> bool:
    """Whether the pieces of `x` are made here, straight from the geometry: no interpreter
    on the stack (a profiler's too wants to see the view ops), a strided tensor that is
    not a captured graph's pending value."""
    return not dispatch._pushed[0] and x._strided and \
        (x.__class__ is Tensor or not x._is_lazy)


def _pieces(x: Tensor, d: int, sizes: list, name: str, params: dict, *, unbind: bool = False,
            unsafe: bool = False, given=None) -> tuple:
    """The pieces of `x` along dim `d` (`sizes` long each; with `unbind` each index selected),
    recorded as one call of `name` (its node `{name}Backward0`, with PyTorch's saved
    attributes in `params`, and the dim as the caller `given` it)."""
    grad = x._requires_grad and _grad_state.enabled
    if _eager(x):
        stride = x._stride if x._stride is not None else x._ensure_storage()
        shape, step, offset = x._shape, stride[d], x._offset
        out = []
        start = 0
        for s in sizes:
            if unbind:
                geom = (shape[:d] + shape[d + 1:], stride[:d] + stride[d + 1:])
            else:
                geom = (shape[:d] + (s,) + shape[d + 1:], stride)
            if unsafe:  # (not a view: no base, a version counter of its own)
                out.append(_make(x._ensure_storage_obj(), *geom, offset + start * step,
                                 x._dtype))
            else:
                out.append(_view(x, *geom, offset + start * step))
            start += s
        out = tuple(out)
    else:
        out, start = [], 0
        for i, s in enumerate(sizes):
            out.append(select(x, d, i) if unbind else
                       bind(view_p, x, fn=V_SLICE, dim=d, start=start, stop=start + s, step=1))
            start += s
        out = tuple(out)
        if grad and dispatch.transform_active():
            for piece in out:  # (one node per piece under a transform, named as PyTorch's)
                if piece._grad_fn is not None:
                    rename_node(piece._grad_fn, f"{name}Backward0")
            return out if unsafe else mark_multi_output(out, name)
    if grad:  # one node for all (under an observer, the profiler, it replaces the views')
        dispatch.autograd.record(_op(f"{name}Backward0", len(out)), _RULE, (x,),
                                 {**params, "dim": d, "sizes": tuple(sizes), "unbind": unbind},
                                 out)
        if out[0]._grad_fn is not None:
            keep_given(out, dim=d if given is None else given)
    return out if unsafe else mark_multi_output(out, name)


# --- unbind, split, chunk -----------------------------------------------------------------

@method_aware
def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of `x` at each index of `dim`, as one UnbindBackward0 node's outputs."""
    if dim.__class__ is not int:
        dim = need_int(dim, "unbind", "dim", 2)
    if x.ndim == 0:
        d = wrap_dim(dim, 1)  # (as PyTorch wraps a dim of a 0-d tensor, then reads its size)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    if not x._strided:  # (a sparse tensor's own select)
        return tuple(select(x, d, i) for i in range(x._shape[d]))
    return _pieces(x, d, [1] * x._shape[d], "Unbind", {}, unbind=True, given=dim)


def _need_dims(x: Tensor, name: str) -> None:
    if x.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")


def _size_list(sizes) -> list:
    """`split_with_sizes`' sizes as a list, refused as PyTorch's parser words it unless they
    are a list or tuple."""
    if not isinstance(sizes, list | tuple):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type(sizes).__name__}")
    return list(sizes)


def _split_sizes(sizes, n: int, dim: int) -> list[int]:
    """`split_with_sizes`' sizes: a sequence of ints, non-negative, summing to `n`."""
    sizes = _size_list(sizes)
    for i, s in enumerate(sizes):
        if not _is_int_arg(s):
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' failed to unpack the "
                            f"object at pos {i + 1} with error \"type must be tuple of ints,but "
                            f"got {type(s).__name__}\"")
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {dim}), but got split_sizes={sizes}"
        )
    return sizes


def _split(x: Tensor, split_size_or_sections, dim: int, name: str) -> tuple[Tensor, ...]:
    """The pieces of `x` along `dim`, recorded as one call of `name` (its node's name)."""
    _need_dims(x, "split")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if not isinstance(split_size_or_sections, Tensor) and _is_int_arg(split_size_or_sections):
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        # NOTE: always at least one piece, as in PyTorch: a size-0 dim splits into one empty
        # piece, and the last piece holds the remainder.
        count = max(-(-n // size), 1) if size else 1
        sizes = [size] * (count - 1) + [n - size * (count - 1)]
        params = {"split_size": size}
    else:
        sizes = _split_sizes(split_size_or_sections, n, dim)
        name += "WithSizes"
        params = {"split_sizes": tuple(sizes)}
    return _pieces(x, d, sizes, name, params, unsafe=name.startswith("Unsafe"), given=dim)


def split(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
    if not isinstance(x, Tensor):  # (torch's Python split calls the object's own split)
        return x.split(split_size_or_sections, dim)
    if dim.__class__ is not int and not is_int_arg(dim):
        # (torch's Python split passes dim by position to split or split_with_sizes)
        if _is_int_arg(split_size_or_sections):
            raise no_overload("split", (x, split_size_or_sections, dim), method=False)
        raise wrong_type("split_with_sizes", "dim", 3, "int", dim)
    return _split(x, split_size_or_sections, dim, "Split")


def unsafe_split(x: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """`split` by one size (PyTorch's variant whose pieces are not views: no view checks)."""
    return _split(x, _whole_size(split_size, "unsafe_split", "split_size"), dim, "UnsafeSplit")


def split_with_sizes(x: Tensor, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:
    return _split(x, _size_list(split_sizes), dim, "Split")


def unsafe_split_with_sizes(x: Tensor, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:
    return _split(x, _size_list(split_sizes), dim, "UnsafeSplit")


def _whole_size(v, fname: str, argname: str) -> int:
    return need_int(v, fname, argname, 2)


def _chunk(x: Tensor, chunks: int, dim: int, name: str) -> tuple[Tensor, ...]:
    _need_dims(x, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x._shape[wrap_dim(dim, x.ndim)]
    if n == 0:  # `chunks` empty pieces: PyTorch calls split_with_sizes with zeros
        return _split(x, [0] * chunks, dim, name)
    return _split(x, -(-n // chunks), dim, name)


@method_aware
def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    return _chunk(x, need_int(chunks, "chunk", "chunks", 2), dim, "Split")


def unsafe_chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    return _chunk(x, _whole_size(chunks, "unsafe_chunk", "chunks"), dim, "UnsafeSplit")


# --- tensor_split: plain slices ------------------------------------------------------------

@method_aware
def tensor_split(x: Tensor, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
    if not (isinstance(indices_or_sections, Tensor) or is_dims_arg(indices_or_sections, False)):
        raise no_overload("tensor_split", (x, indices_or_sections))
    if not isinstance(indices_or_sections, (Tensor, list, tuple)):
        indices_or_sections = operator.index(indices_or_sections)
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections._dtype is not dt.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {type_name(indices_or_sections._dtype)}")
        if indices_or_sections.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {indices_or_sections.ndim} dims")
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [min(max(int(i) + (n if int(i) < 0 else 0), 0), n)
                        for i in indices_or_sections] + [n]
    return tuple(slice_dim(x, d, bounds[i], max(bounds[i], bounds[i + 1]))
                 for i in range(len(bounds) - 1))


TENSOR_METHODS = {
    "unbind": unbind, "split": split, "chunk": chunk, "tensor_split": tensor_split,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_chunk": unsafe_chunk, "unsafe_split_with_sizes": unsafe_split_with_sizes,
}

__all__ = ["unbind", "split", "chunk", "tensor_split", "split_with_sizes", "unsafe_split",
           "unsafe_chunk", "unsafe_split_with_sizes"]
