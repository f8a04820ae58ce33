"""randint's argument parsing as torch's parser does it: one or two int bounds, then a size,
by position or keyword; a call that fits none of its four overloads is refused in the
parser's words (`invalid_combination`: the one two-argument overload names its misfitting
argument)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor

_RANDINT_TAIL = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                 "torch.device device = None, bool pin_memory = False, bool requires_grad = "
                 "False)")
_RANDINT_OVERLOADS = tuple(
    f"({bounds}, tuple of ints size, *, {gen}{_RANDINT_TAIL}"
    for bounds in ("int high", "int low, int high")
    for gen in ("torch.Generator generator, ", ""))


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) or (
        isinstance(v, Tensor) and v.numel() == 1 and v._dtype._kind < 2)


def check_randint(args: tuple, size, low, high, generator) -> None:
    """PyTorch's parser refusing a call of `randint` that fits none of its overloads: one
    or two int bounds, then a size (a sequence of ints), by position or keyword, and a
    generator that is a Generator (or None)."""
    given = list(args)
    shape = size
    if shape is None and given and isinstance(given[-1], (tuple, list, Tensor)) and \
            not _is_int(given[-1]):
        shape = given.pop()
    bounds = given + [b for b in (low, high) if b is not None]
    from ..random import Generator

    if shape is not None and _is_size(shape) and 1 <= len(bounds) <= 2 and \
            all(_is_int(b) for b in bounds) and (generator is None or
                                                 isinstance(generator, Generator)):
        return
    from ._arg_parser_text import invalid_combination

    kwargs = {k: v for k, v in (("low", low), ("high", high), ("size", size),
                                ("generator", generator)) if v is not None}
    # (where one overload is plausible by count, (high, size), torch names what misfits)
    raise invalid_combination("randint", _RANDINT_OVERLOADS, args, kwargs)


def _is_size(v) -> bool:
    return isinstance(v, (tuple, list)) and all(_is_int(n) for n in v) or (
        isinstance(v, Tensor) and v.ndim == 1 and v._dtype._kind == 1)
