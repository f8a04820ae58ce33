"""Shape helpers PyTorch took from NumPy: atleast_1d/2d/3d, hsplit / vsplit / dsplit,
unravel_index and diagflat, each built from other ops.
"""

from __future__ import annotations

import math

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import wrong_type
from .join import tensor_args


def _atleast(name: str, shape_of, tensors):
    """One tensor gives one tensor; several, or one list or tuple of them, give a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_reshaped(shape_of, t) for t in tensor_args(tensors[0]))
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        kind = type(tensors[0]).__name__  # (neither overload matched: PyTorch lists both)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({kind}), "
                        f"but expected one of:\n * (Tensor input)\n      didn't match because "
                        f"some of the arguments have invalid types: (!{kind}!)\n * (tuple of "
                        f"Tensors tensors)\n      didn't match because some of the arguments "
                        f"have invalid types: (!{kind}!)\n")
    out = tuple(_reshaped(shape_of, t) for t in tensor_args(tensors))
    return out[0] if len(out) == 1 else out


def _reshaped(shape_of, t: Tensor) -> Tensor:
    """`t` raised to the rank `shape_of` gives, as PyTorch's kernels do it: a 0-d tensor is
    reshaped, a 1-d or 2-d one unsqueezed (so its node is UnsqueezeBackward0)."""
    want = shape_of(t)
    if t.ndim >= len(want) and t.shape == want:
        return t
    if t.ndim == 0:
        return t.reshape(want)
    if t.ndim == 1:
        t = t.unsqueeze(0)
    return t if t.ndim == len(want) else t.unsqueeze(-1)


def atleast_1d(*tensors):
    return _atleast("atleast_1d", lambda t: t.shape if t.ndim >= 1 else (1,), tensors)


def atleast_2d(*tensors):
    return _atleast("atleast_2d", lambda t: t.shape if t.ndim >= 2 else
                    (1,) * (2 - t.ndim) + tuple(t.shape), tensors)


def atleast_3d(*tensors):
    def shape(t):
        s = tuple(t.shape)
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(t.ndim, s)

    return _atleast("atleast_3d", shape, tensors)


def _split_along(name: str, x: Tensor, sections, dim: int, min_dims: int):
    from .splitting import tensor_split

    if x.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or x.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {x.shape[dim]} is not divisible by the split_size "
                           f"{sections}!")
    return tensor_split(x, sections, dim)


def hsplit(input: Tensor, indices_or_sections):
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections):
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections):
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def unravel_index(indices: Tensor, shape) -> tuple[Tensor, ...]:
    """The coordinates in a C-ordered array of `shape` of each flat index."""
    if isinstance(shape, int):
        shape = (shape,)
    if indices.dtype._kind != 1:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = math.prod(shape)
    # NOTE: as in PyTorch, indices wrap around the array's size (no range check).
    rest = indices.to(dt.int64) % max(total, 1)
    coords = []
    for size in reversed(tuple(shape)):
        coords.append(rest % size)
        rest = rest.div(size, rounding_mode="floor")
    return tuple(reversed(coords))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    if not isinstance(offset, int):
        raise wrong_type("diagflat", "offset", None, "int", offset)
    from .linalg_ops import diag

    return diag(input.reshape(-1), offset)


TENSOR_METHODS = {"hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "diagflat": diagflat}

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hsplit", "vsplit", "dsplit",
           "unravel_index", "diagflat"]
