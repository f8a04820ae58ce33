"""Int-list and int arguments read as PyTorch's argument parser reads them, with its
TypeErrors: a factory's `size` (`zeros(2, 3)`, `zeros((2, 3))`, `zeros(torch.tensor(2))`),
the shape ops' lists (`view`'s size, `permute`'s dims, `roll`'s shifts) and the dims of
`transpose` / `movedim`.

The parser decides in two steps. First it checks the argument's type: one int, or a
sequence whose *first* element is an int (a bool is refused here), or, given several
positional values, a first one that is an int (else the call has too many positional
arguments). Then it unpacks every element, where a bool passes as an int and anything else
fails with the element's 1-based position. Ints one by one are taken by a method whose only
positional parameter is the list (`x.view(2, 3)`), never by a function form
(`torch.reshape(x, 6)` is refused), and a position counts `self` on the function form only.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from .._tensor import Tensor
from ._arg_parser_text import _described as described
from ._arg_parser_text import invalid_combination, tp_name, wrong_type


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


def unpack_size(values: tuple, name: str, arg: str = "size") -> list[int]:
    """Each element as an int; TypeError naming the first that is not one."""
    out = []
    for i, v in enumerate(values):
        if not _is_index(v, bool_ok=True):
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{_type_name(v)}\"")
        out.append(int(v.item()) if isinstance(v, Tensor) else int(v))
    return out


def starts_with_int(value) -> bool:
    """Whether the parser's type check takes `value` as an int list: an int (no bool) or a
    sequence that is empty or whose first element is one."""
    if isinstance(value, (tuple, list)):
        return not value or _is_index(value[0], bool_ok=False)
    return _is_index(value, bool_ok=False)


def int_list(args: tuple, name: str, arg: str, position: int, *, method: bool,
             varargs: bool = False, lone_int: bool = False) -> tuple[int, ...]:
    """The int list `arg` of `name` (`permute`'s dims, `reshape`'s shape) given as `args`
    (one sequence; ints one by one where `varargs`; one int where `varargs` or `lone_int`),
    read as PyTorch's parser reads it (see the module docstring), with its TypeErrors.
    `position` is the argument's 1-based place in the form called; `method` says which form
    that was (the function form counts the tensor among its positional arguments)."""
    where = f"{name}(): argument '{arg}' (position {position}) must be tuple of ints"
    if len(args) > 1:
        if not varargs or not _is_index(args[0], bool_ok=False):
            if method:
                raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were "
                                "given")
            raise TypeError(f"{name}() takes {position} positional arguments but "
                            f"{position - 1 + len(args)} were given")
        return tuple(unpack_size(args, name, arg))
    value = args[0]
    if _is_index(value, bool_ok=False):
        if not (varargs or lone_int):
            raise TypeError(f"{where}, not {tp_name(value)}")
        return tuple(unpack_size((value,), name, arg))
    if isinstance(value, (tuple, list)):
        if value and not _is_index(value[0], bool_ok=False):
            raise TypeError(f"{where}, but found element of type {tp_name(value[0])} at pos 0")
        return tuple(unpack_size(value, name, arg))
    if isinstance(value, (Tensor, str, bytes, range)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{where}, not {tp_name(value)}")
    return tuple(unpack_size(tuple(value), name, arg))  # (ember's own callers pass these)


def keyword_list(positional: tuple, kwargs: dict, name: str, arg: str) -> tuple:
    """The positional values an int list given by keyword stands for (`x.permute(dims=(1,
    0))` is `x.permute((1, 0))`), refused in the parser's words when given twice, by another
    keyword, or not a sequence of ints (a bad first element refuses the whole sequence)."""
    if arg not in kwargs:
        if positional:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    if positional:
        raise TypeError(f"{name}() got multiple values for argument '{arg}'")
    if len(kwargs) > 1:
        other = next(k for k in kwargs if k != arg)
        raise TypeError(f"{name}() got an unexpected keyword argument '{other}'")
    value = kwargs[arg]
    if not isinstance(value, (tuple, list)) or value and not _is_index(value[0], bool_ok=False):
        raise wrong_type(name, arg, None, "tuple of ints", value)
    return (value,)


def shape_args(shape: tuple, name: str = "view", arg: str = "size",
                method: bool | None = None) -> tuple[int, ...]:
    """The int list an op such as `view(*shape)` received (one sequence, or ints one by one)
    as a tuple of ints; anything else refused in the words of PyTorch's parser, which depend
    on the form called (`method` None: read off the calling op's code, see `as_method`)."""
    if not shape:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    values = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    ints = True
    for v in values:
        if type(v) is not int:
            ints = False
            break
    if ints and (values is not shape or method is not None or name == "view"):
        return tuple(values)
    if name == "view":  # (a method only: there is no torch.view)
        method = True
    elif method is None:
        method = sys._getframe(1).f_code.co_qualname.startswith("Tensor.")
    if ints and method:
        return values
    if name == "view" and not starts_with_int(shape[0]):
        # NOTE: view's dtype overload makes the parser list both overloads instead
        raise invalid_combination("view", ("(torch.dtype dtype)", "(tuple of ints size)"),
                                  shape, {})
    return int_list(shape, name, arg, 1 if method else 2, method=method, varargs=method)


class _Required:
    """The default of a required parameter whose absence PyTorch's parser words itself (a
    method bound with `as_method` would otherwise name itself `Tensor.<name>`)."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED = _Required()


def int_args(values: tuple, names: tuple, fname: str, first: int) -> tuple[int, ...]:
    """Int parameters (`transpose`'s dim0, dim1) as ints, or TypeError in the parser's words
    for the first that is not one (a bool is not); `first` is the first one's position."""
    missing = [f'"{n}"' for v, n in zip(values, names) if v is REQUIRED]
    if missing:  # (the parser's words: "arguments" for one, "argument" for several)
        s = "s" if len(missing) == 1 else ""
        raise TypeError(f"{fname}() missing {len(missing)} required positional argument{s}: "
                        f"{', '.join(missing)}")
    for i, (v, name) in enumerate(zip(values, names)):
        if not _is_index(v, bool_ok=False):
            raise TypeError(f"{fname}(): argument '{name}' (position {first + i}) must be int, "
                            f"not {tp_name(v)}")
    return tuple(int(v.item()) if isinstance(v, Tensor) else int(v) for v in values)


def movedim_args(x: Tensor, source, destination, name: str, method: bool) -> tuple:
    """movedim's (source, destination): two ints or two int lists, as its two overloads take
    them; anything else listed against both, as the parser does."""
    pair = tuple(v for v in (source, destination) if v is not REQUIRED)
    if len(pair) == 2 and all(_is_index(v, bool_ok=False) for v in pair):
        return int_args(pair, ("source", "destination"), name, 0)
    if len(pair) == 2 and all(isinstance(v, (tuple, list)) and starts_with_int(v) for v in pair):
        return tuple(unpack_size(v, name, arg) for v, arg in zip(pair, ("source", "destination")))
    sigs = ("(int source, int destination)", "(tuple of ints source, tuple of ints destination)")
    if method:
        raise invalid_combination(name, sigs, pair, {})
    sigs = tuple(f"(Tensor input, {s[1:]}" for s in sigs)
    raise invalid_combination(name, sigs, (x,) + pair, {})


def squeeze_dim(x: Tensor, dim, name: str, method: bool):
    """squeeze's `dim` (an int or an int list) as its three overloads read it; anything
    else listed against them all, as the parser does (None included: it is no overload's)."""
    if _is_index(dim, bool_ok=False):
        return int_args((dim,), ("dim",), name, 1)[0]
    if isinstance(dim, (tuple, list)) and starts_with_int(dim):
        return tuple(unpack_size(dim, name, "dim"))
    if method:
        raise invalid_combination(name, ("()", "(int dim)", "(tuple of ints dim)"), (dim,), {})
    raise invalid_combination(name, ("(Tensor input)", "(Tensor input, int dim)",
                                     "(Tensor input, tuple of ints dim)"), (x, dim), {})


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


def view_keyword(shape: tuple, kwargs: dict) -> tuple:
    """`x.view(size=(2, 3))` as `x.view((2, 3))`; else the parser's listing of both overloads."""
    sigs = ("(torch.dtype dtype)", "(tuple of ints size)")
    if set(kwargs) != {"size"} or shape:
        raise invalid_combination("view", sigs, shape, kwargs)
    size = kwargs["size"]
    if isinstance(size, (tuple, list)) and starts_with_int(size):
        return (size,)
    raise TypeError(f"view() received an invalid combination of arguments - got (size="
                    f"{tp_name(size)}, ), but expected one of:\n * {sigs[0]}\n      didn't "
                    f"match because some of the keywords were incorrect: size\n * {sigs[1]}\n"
                    "      didn't match because some of the arguments have invalid types: "
                    f"(!size={described(size)}!, )\n")
