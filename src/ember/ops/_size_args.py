"""A `size` argument read as PyTorch's argument parser reads an int list (`zeros(2, 3)`,
`zeros((2, 3))`, `zeros([2, 3])`, `zeros(torch.tensor(2))`), with its TypeErrors.

The parser decides in two steps. First it checks the argument's type: one int, or a
sequence whose *first* element is an int (a bool is refused here), or, given several
positional values, a first one that is an int (else the call has too many positional
arguments). Then it unpacks every element, where a bool passes as an int and anything else
fails with the element's 1-based position.
"""

from __future__ import annotations

import functools

import numpy as np

from .._tensor import Tensor


def _type_name(v) -> str:
    """The type name PyTorch's parser prints: `float`, `Tensor`, `numpy.float64`."""
    if isinstance(v, Tensor):
        return "Tensor"
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _is_index(v, *, bool_ok: bool) -> bool:
    """An int the parser takes: a Python or NumPy integer, or a one-element integer tensor."""
    if isinstance(v, (bool, np.bool_)):
        return bool_ok
    if isinstance(v, Tensor):
        return v.numel() == 1 and v.dtype._kind == 1
    return isinstance(v, (int, np.integer))


def size_values(size: tuple, name: str) -> tuple:
    """The elements of the varargs `size` of `name(*size)`, type-checked (not yet unpacked)."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    first = size[0]
    where = f"{name}(): argument 'size' (position 1) must be tuple of ints"
    if len(size) > 1:
        if not _is_index(first, bool_ok=False):
            raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
        return size
    if isinstance(first, (tuple, list)):
        if first and not _is_index(first[0], bool_ok=False):
            raise TypeError(f"{where}, but found element of type {_type_name(first[0])} at pos 0")
        return tuple(first)
    if _is_index(first, bool_ok=False):
        return (first,)
    if isinstance(first, Tensor) or isinstance(first, (str, bytes)) or \
            not hasattr(first, "__iter__"):
        raise TypeError(f"{where}, not {_type_name(first)}")
    return tuple(first)  # (another iterable: ember's own callers pass these)


def keyword_size(positional: tuple, keyword, name: str) -> tuple:
    """The varargs `name(*size)` stands for when the size came by keyword (`zeros(size=(2,
    3))`): a sequence only (a bare int is refused there), and not given twice."""
    if positional:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if _is_index(keyword, bool_ok=False) or isinstance(keyword, (Tensor, str, bytes)) or \
            not hasattr(keyword, "__iter__"):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                        f"{_type_name(keyword)}")
    return (keyword,)


def unpack_size(values: tuple, name: str) -> list[int]:
    """Each element as an int; TypeError naming the first that is not one."""
    out = []
    for i, v in enumerate(values):
        if not _is_index(v, bool_ok=True):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{_type_name(v)}\"")
        out.append(int(v.item()) if isinstance(v, Tensor) else int(v))
    return out


def dims_one_by_one(fn):
    """The method form of `fn(input, dim, ...)` that also takes several dims one by one
    (`x.squeeze(0, 1)` is `x.squeeze((0, 1))`), as PyTorch's parser allows for a method whose
    only positional argument is a dim list; the function form (`torch.squeeze`) does not."""
    @functools.wraps(fn)
    def method(self, *dims, **kwargs):
        if len(dims) > 1:
            return fn(self, dims, **kwargs)
        return fn(self, *dims, **kwargs)

    return method
