"""A convolution's geometry arguments (stride, padding, dilation, output_padding, groups)
read as PyTorch's argument parser reads them, before any of the op's own checks.

The parser first checks each argument's type in signature order: an int list is one int
(a Python or NumPy integer, or a one-element integer tensor; never a bool) or a list or tuple
that is empty or starts with one; `groups` is such an int; `padding` may also be a string
under conv{1,2,3}d's second overload. A miss refuses the call: in the "invalid combination"
words for conv{1,2,3}d (two overloads), as "argument 'stride' must be tuple of ints, not
float" for conv_transpose{1,2,3}d (one; the words for a tuple name its first element).
Then it unpacks the lists, and the first element that is no int fails with its 1-based
position. What passes comes back as plain ints.
"""

from __future__ import annotations

from .._tensor import Tensor
from ._arg_parser_text import invalid_combination, tp_name
from ._size_args import _is_index, unpack_size


def _as_int(v) -> int:
    return int(v.item()) if isinstance(v, Tensor) else int(v)


def _list_fits(value) -> bool:
    if _is_index(value, bool_ok=False):
        return True
    if isinstance(value, (tuple, list)):
        return not value or _is_index(value[0], bool_ok=False)
    return False


def _plain(params: dict, str_padding: bool) -> bool:
    """Whether every parameter is already a Python int, a tuple of them, or a padding
    string where one is taken."""
    for arg, value in params.items():
        if type(value) is int:
            continue
        if arg == "groups":
            return False
        if type(value) is tuple and all(type(v) is int for v in value):
            continue
        if not (str_padding and arg == "padding" and type(value) is str):
            return False
    return True


def _first_misfit(params: dict, str_padding: bool):
    """The first parameter whose type the parser refuses (or None), with the type it wanted."""
    for arg, value in params.items():
        if arg == "groups":
            if not _is_index(value, bool_ok=False):
                return arg, "int"
        elif not (_list_fits(value) or str_padding and arg == "padding" and
                  isinstance(value, str)):
            return arg, "tuple of ints"
    return None


def given(args: tuple) -> tuple:
    """A convolution's positional arguments as the parser's "got" list prints them: all
    seven when a size is a tuple (as a module passes them), else without the trailing ones
    at their defaults, as a functional call spells them."""
    n = len(args)
    if not any(type(a) is tuple for a in args[3:6]):
        defaults = (None, 1, 0, 1, 1)
        while n > 2 and (args[n - 1] is defaults[n - 3] or (
                type(args[n - 1]) is int and args[n - 1] == defaults[n - 3])):
            n -= 1
    return args[:n]


def read_geometry(name: str, overloads: tuple | None, operands: tuple, params: dict) -> dict:
    """`params` (in the signature's order) checked and unpacked as torch's parser does for
    op `name`; `overloads` are the printed ones when the op has several.

    NOTE: torch's words depend on whether an argument came by position or by keyword, which
    a Python function cannot see: given a tuple, the call is taken as made by position (a
    module passes its sizes so, and `padding=k / 2` in a module is the usual mistake), else
    the sizes off their defaults as passed by keyword (`F.conv2d(x, w, stride=1.5)`)."""
    if _plain(params, overloads is not None):  # (the usual call: nothing to convert)
        return params
    misfit = _first_misfit(params, overloads is not None)
    if misfit is not None:
        arg, wanted = misfit
        if overloads is not None:
            # ("int groups" is a SymInt in the schema: the parser's note never finds it fits)
            if any(type(v) is tuple for k, v in params.items() if k != "groups"):
                args, kwargs = given(operands + tuple(params.values())), {}
            else:
                defaults = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}
                args = operands if operands[-1] is not None else operands[:-1]
                kwargs = {k: v for k, v in params.items()
                          if not (type(v) is int and v == defaults[k])}
            raise invalid_combination(name, overloads, args, kwargs, {"int": ()})
        value = params[arg]
        if type(value) is tuple and arg != "groups":
            position = 4 + list(params).index(arg)
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be "
                            f"{wanted}, but found element of type {tp_name(value[0])} at pos 0")
        raise TypeError(f"{name}(): argument '{arg}' must be {wanted}, not {tp_name(value)}")
    out = {}
    for arg, value in params.items():
        if isinstance(value, str) or arg == "groups":
            out[arg] = value if isinstance(value, str) else _as_int(value)
        elif isinstance(value, (tuple, list)):
            out[arg] = tuple(unpack_size(tuple(value), name, arg))
        else:
            out[arg] = _as_int(value)
    return out
