"""The words of PyTorch's C++ argument parser: the checks every op makes of its arguments'
types, one reader per printed type (`need_tensor`, `need_int`, `need_number`, `need_bool`,
`need_dtype`: "relu(): argument 'input' (position 1) must be Tensor, not str", a method's
positions counted after `self`), and the listing it prints when a call fits none of an op's
overloads.

torch's PythonArgParser prints "received an invalid combination of arguments - got (...),
but expected one of:" and the printed overloads. The keywords in "got" come out of a
libstdc++ `std::unordered_map`, so their order is that map's; under an overload whose
printed signature, split at its commas, has as many pieces as the call has arguments, it
adds why that overload failed, reading parameter names off the printed text (so a
keyword-only parameter is "named" by its default, and no keyword ever matches it). Where
only one overload is plausible by the number of arguments, it names the argument that
misfits it instead. The overloads ember knows are listed here (OVERLOADS,
OPERAND_OVERLOADS) and in generator_checks.py; an op refuses a call by `no_overload`, which
the wrapper that saw the call as written (`_aliases.with_aliases`) words again with its
keywords named, and which, after an op's TypeError, checks the call against the listed
overloads itself (`refuse_unfit`).
"""

from __future__ import annotations

import sys
import types

import numpy as np

from .. import _dtype as dt
from .. import _names
from .._device import device as _device_type
from .._layout import layout as _layout_type
from .._tensor import Tensor
from .._view import index_value

__all__ = ["tp_name", "not_tensor", "wrong_type", "need_tensor", "need_tensors", "need_int",
           "need_number", "need_float", "need_bool", "need_dtype", "need_dims", "is_int_arg",
           "is_dims_arg", "is_dtype_arg", "touch_then_check", "keyword_order",
           "invalid_combination", "no_overload", "as_called", "overloads_of", "refuse_unfit",
           "descriptor_error", "ABSENT"]


class _Absent:
    """The default of a parameter a caller may leave out but not pass as None: torch's
    overload has no None there (`x.max(None)`, `torch.eye(2, None)` are refused)."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


def tp_name(obj) -> str:
    """What CPython's tp_name, which torch prints, says of obj's type: `numpy.float32` for
    a C type outside builtins, the bare name for a class written in Python (Tensor)."""
    t = type(obj)
    if t in (dt.dtype, _layout_type, _device_type):
        return f"{_names.prefix}.{t.__name__}"
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def not_tensor(fname: str, arg: str, pos: int | None, x) -> TypeError:
    """The parser's error for a non-tensor `x` passed for Tensor parameter `arg` of `fname`
    ("relu(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"); a
    keyword-only parameter has no position."""
    return wrong_type(fname, arg, pos, "Tensor", x)


def wrong_type(fname: str, arg: str, pos: int | None, kind: str, x) -> TypeError:
    """The parser's error for `x` passed for parameter `arg` of printed type `kind`, at
    printed position `pos` (None: keyword-only, no position)."""
    where = "" if pos is None else f" (position {pos})"
    return TypeError(f"{fname}(): argument '{arg}'{where} must be {kind}, not {tp_name(x)}")


def _op_is_method(fname: str) -> bool:
    """Whether the op `fname`, refusing an argument now, runs as a Tensor method: a frame
    near the refusal runs the copy `as_method` binds onto Tensor, `Tensor.<fname>` (only
    ops marked `method_aware` have one). Read on the error path only."""
    frame, qualname = sys._getframe(2), f"Tensor.{fname}"
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_qualname == qualname:
            return True
        frame = frame.f_back
    return False


def _position(fname: str, pos: int | None, method: bool | None) -> int | None:
    """A parameter's position as the parser prints it: a method's count starts after
    `self` (`x.mm("s")` names mat2 "position 1", `torch.mm(x, "s")` "position 2")."""
    if pos is None or pos == 1:
        return pos
    if method is None:
        method = _op_is_method(fname)
    return pos - 1 if method else pos


def need_tensor(x, fname: str, arg: str = "input", pos: int | None = 1, *,
                method: bool | None = None) -> None:
    """Raises the parser's TypeError when `x`, passed for the Tensor parameter `arg` of
    `fname` (at function-form position `pos`; None for keyword-only), is not a tensor.
    `method`: whether the op runs as a Tensor method (None: found out when refusing; an
    unbound method given a non-tensor self gets CPython's `descriptor_error`). Hot callers
    test `x.__class__ is not Tensor` first, so a plain tensor costs one compare."""
    if not isinstance(x, Tensor):
        if pos == 1 and (_op_is_method(fname) if method is None else method):
            raise descriptor_error(fname, x)
        raise not_tensor(fname, arg, _position(fname, pos, method), x)


def descriptor_error(fname: str, x) -> TypeError:
    """CPython's error for an unbound Tensor method given `x`, no tensor, for self
    (`Tensor.exp("a")`), which torch's parser never sees."""
    return TypeError(f"descriptor '{fname}' for '{_names.prefix}._C.TensorBase' objects "
                     f"doesn't apply to a '{type(x).__name__}' object")


def need_tensors(fname: str, *args: tuple, optional: tuple = (),
                 method: bool | None = None) -> None:
    """need_tensor for each (name, position, value), in the order the parser reads them;
    None passes for the names in `optional`."""
    for name, pos, x in args:
        if not isinstance(x, Tensor) and not (x is None and name in optional):
            if pos == 1 and (_op_is_method(fname) if method is None else method):
                raise descriptor_error(fname, x)
            raise not_tensor(fname, name, _position(fname, pos, method), x)


def need_int(x, fname: str, arg: str, pos: int | None = None, *,
             method: bool | None = None) -> int:
    """An int argument as the parser reads it: an int (a bool is not one), anything with
    `__index__` (a NumPy integer, a one-element integer tensor); its TypeError otherwise
    ("topk(): argument 'k' (position 2) must be int, not float")."""
    if x.__class__ is int:
        return x
    if not isinstance(x, (bool, np.bool_)):
        v = index_value(x)
        if v is not None:
            return v
    raise wrong_type(fname, arg, _position(fname, pos, method), "int", x)


def need_number(x, fname: str, arg: str, pos: int | None = None, *,
                method: bool | None = None):
    """`x` when the parser takes it for a Number (a Python or NumPy number, a bool, a 0-d
    tensor); its TypeError otherwise ("full(): argument 'fill_value' (position 2) must be
    Number, not str")."""
    if isinstance(x, (int, float, complex, np.number, np.bool_)) or (
            isinstance(x, Tensor) and x.ndim == 0):
        return x
    raise wrong_type(fname, arg, _position(fname, pos, method), "Number", x)


def need_float(x, fname: str, arg: str, pos: int | None = None, *,
               method: bool | None = None):
    """`x` when the parser takes it for a float (a real Python or NumPy number, a bool, a
    one-element tensor); its TypeError otherwise ("allclose(): argument 'rtol' (position 3)
    must be float, not str")."""
    if isinstance(x, (int, float, np.integer, np.floating, np.bool_)) or (
            isinstance(x, Tensor) and x.numel() == 1):
        return x
    raise wrong_type(fname, arg, _position(fname, pos, method), "float", x)


def need_bool(x, fname: str, arg: str, pos: int | None = None, *,
              method: bool | None = None) -> bool:
    """`x` when it is a bool (the parser takes no int or NumPy bool for one); its TypeError
    otherwise ("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not
    str")."""
    if x.__class__ is bool:
        return x
    raise wrong_type(fname, arg, _position(fname, pos, method), "bool", x)


def need_dtype(dtype, fname: str):
    """A `dtype=` argument as the parser reads it: None, a dtype, or the dtype a Python
    scalar type names (`float` is float64); its TypeError for anything else ("zeros():
    argument 'dtype' must be torch.dtype, not str")."""
    if dtype is None or dtype.__class__ is dt.dtype:
        return dtype
    d = dt.as_dtype(dtype)
    if d.__class__ is not dt.dtype:
        raise wrong_type(fname, "dtype", None, f"{_names.prefix}.dtype", dtype)
    return d


def is_int_arg(x) -> bool:
    """Whether the parser reads `x` as an int: an int or anything with `__index__` (a NumPy
    integer, a one-element integer tensor), a bool not."""
    if x.__class__ is int:
        return True
    return not isinstance(x, (bool, np.bool_)) and index_value(x) is not None


def is_dims_arg(x, none: bool = True, head: bool = False) -> bool:
    """Whether `x` fits a "tuple of ints" parameter: an int, a list or tuple of ints (a bool
    is one there), or (`none`) None. `head`: of a sequence, only its first element counts,
    as when the parser picks an overload (a later one refused is worded apart, by
    `_aliases.wrong_dim`)."""
    if x is None:
        return none
    if isinstance(x, (list, tuple)):
        return all(e.__class__ is int or index_value(e) is not None
                   for e in (x[:1] if head else x))
    return is_int_arg(x)


def is_dtype_arg(dtype) -> bool:
    """Whether `dtype=` is one the parser takes: None, a dtype, a Python scalar type."""
    return dtype is None or dt.as_dtype(dtype).__class__ is dt.dtype


def need_dims(x, fname: str, arg: str = "dim", pos: int | None = 2, *, none: bool = True,
              method: bool | None = None):
    """`x` when it fits an op's one "tuple of ints" parameter (`is_dims_arg`); the parser's
    TypeError otherwise ("amax(): argument 'dim' (position 2) must be tuple of ints, not
    float", or of a list's first element that is no int, "but found element of type float
    at pos 0", see `_refused`)."""
    if is_dims_arg(x, none):
        return x
    where = _position(fname, pos, method)
    raise TypeError(_refused(fname, arg, "" if where is None else f" (position {where})",
                             "tuple of ints", x))


def touch_then_check(x, attr: str, fname: str, arg: str = "input", pos: int | None = 1) -> None:
    """What torch does with a non-tensor where its Python code calls `x.attr()` before the
    parser sees it (`mse_loss` reads `target.size()`): Python's own AttributeError (or, for
    a NumPy array, whose `.size` is an int, "'int' object is not callable")."""
    if not isinstance(x, Tensor):
        getattr(x, attr)()
        raise not_tensor(fname, arg, pos, x)


def _libstdcxx_hash(key: str) -> int:
    """std::hash<std::string> of libstdc++ (its _Hash_bytes, murmur2 on 64 bits)."""
    mask, mul = (1 << 64) - 1, (0xc6a4a793 << 32) + 0x5bd1e995
    data = key.encode()
    n, aligned = len(data), len(data) & ~7
    h = 0xc70f6907 ^ (n * mul) & mask
    for i in range(0, aligned, 8):
        word = int.from_bytes(data[i:i + 8], "little") * mul & mask
        h = (h ^ ((word ^ (word >> 47)) * mul & mask)) * mul & mask
    if n & 7:
        h = (h ^ int.from_bytes(data[aligned:], "little")) * mul & mask
    h = (h ^ (h >> 47)) * mul & mask
    return h ^ (h >> 47)


def keyword_order(keys) -> list:
    """The order a libstdc++ std::unordered_map of up to 13 keys (13 buckets) iterates
    them: torch's message lists the keywords from one. A key whose bucket is empty goes to
    the front of the list; one whose bucket is taken goes in front of that bucket's first."""
    order, first = [], {}
    for key in keys:
        bucket = _libstdcxx_hash(key) % 13
        order.insert(order.index(first[bucket]) if bucket in first else 0, key)
        first[bucket] = key
    return order


# which printed parameter types take an argument of which printed type
_ACCEPTS = {"Tensor": ("Tensor",), "int": ("int",), "float": ("float", "int"),
            "Number": ("float", "int", "bool"), "bool": ("bool",)}


def _described(arg) -> str:
    """An argument as the note names it: a list or tuple with its elements' types."""
    if type(arg) is list:
        return f"list of [{', '.join(tp_name(a) for a in arg)}]"
    if type(arg) is tuple:
        inner = ", ".join(tp_name(a) for a in arg) + ("," if len(arg) == 1 else "")
        return f"tuple of ({inner})"
    return tp_name(arg)


def _note(signature: str, args: tuple, kwargs: dict, accepts: dict,
          typed_by: str | None = None) -> str:
    """Why the call missed one printed overload, or "" when torch's parser says nothing.
    `typed_by` is the signature whose parameter types the arguments are checked against,
    when not the printed one (a method's: see `operand_error`)."""
    pieces = signature[1:-1].split(", ")
    if len(args) + len(kwargs) != len(pieces):
        return ""
    if kwargs:  # (named by the printed overload's own parameters)
        tail = [p.split(" ")[-1] for p in pieces][max(0, len(pieces) - len(kwargs)):]
        wrong = [k for k in keyword_order(kwargs) if k not in tail]
        return ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(wrong)}\n")
    typed = pieces if typed_by is None else typed_by[1:-1].split(", ")
    # NOTE: torch's note reads a printed piece's type as the text before its last space,
    # so a piece with a default ("Tensor min = None") has no type it knows and no argument
    # fits it: `x.clamp(t, "a")` marks both, "(!Tensor!, !str!)", while conv2d's call from
    # a module marks all but its input, "(Tensor, !Parameter!, !Parameter!, ...)"
    descs = []
    for arg, piece, kind in zip(args, pieces, typed):
        desc = tp_name(arg)
        fits = " = " not in piece and desc in accepts.get(kind.split(" ")[0], ())
        descs.append(desc if fits else f"!{_described(arg)}!")
    return ("      didn't match because some of the arguments have invalid types: "
            f"({', '.join(descs)})\n")


def _params(signature: str) -> list[tuple[str, str, str | None, bool]]:
    """(printed type, name, printed default or None, keyword-only) of each parameter of a
    printed signature."""
    out, keyword_only = [], False
    for piece in signature[1:-1].split(", "):
        if piece in ("*", ""):
            keyword_only = keyword_only or piece == "*"
            continue
        head, eq, default = piece.partition(" = ")
        kind, _, pname = head.rpartition(" ")
        out.append((kind, pname, default if eq else None, keyword_only))
    return out


def _plausible(signature: str, n: int) -> bool:
    """Whether torch's parser takes an overload as plausible for `n` arguments: as many as
    its required parameters, at most as many as all of them."""
    params = _params(signature)
    return sum(p[2] is None for p in params) <= n <= len(params)


# the "tuple of ints" parameters that take one int too (the others, sizes, take none)
_ONE_INT_FITS = ("dim", "dims", "source", "destination", "shifts")


def _fits_kind(value, kind: str, default: str | None, pname: str = "dim") -> bool:
    """Whether the parser takes `value` for a parameter `pname` of printed type `kind` and
    printed `default` (None where it has none; a None value fits a None default); a kind
    not known here fits."""
    if value is None:
        return default == "None"
    # (a sequence's first element only, as the parser picks an overload: a later one that
    # is no int is refused once the overload is chosen, in other words)
    if kind == "tuple of ints" and pname not in _ONE_INT_FITS:
        return isinstance(value, (list, tuple)) and is_dims_arg(value, False, head=True)
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "int":
        return is_int_arg(value)
    if kind == "tuple of ints":
        return is_dims_arg(value, False, head=True)
    if kind == "bool":
        return value.__class__ is bool
    if kind == "str":
        return isinstance(value, str)
    if kind == f"{_names.prefix}.dtype" or kind == "torch.dtype":
        return is_dtype_arg(value)
    if kind in ("Number", "float"):
        return (isinstance(value, (int, float, np.integer, np.floating, np.bool_)) or
                kind == "Number" and isinstance(value, (complex, np.complexfloating))) or (
            isinstance(value, Tensor) and value.numel() == 1)
    return True


def _fits_signature(signature: str, args: tuple, kwargs: dict) -> bool:
    """Whether a call fits a printed overload: its arguments' count, keywords and types."""
    params = _params(signature)
    positional = [p for p in params if not p[3]]
    if len(args) > len(positional):
        return False
    by_name = {p[1]: p for p in params[len(args):]}
    if any(k not in by_name for k in kwargs):
        return False
    if any(p[2] is None and p[1] not in kwargs for p in params[len(args):]):
        return False  # (a required parameter not given)
    return all(_fits_kind(v, p[0], p[2], p[1]) for v, p in zip(args, positional)) and all(
        _fits_kind(v, by_name[k][0], by_name[k][2], k) for k, v in kwargs.items())


def refuse_unfit(name: str, args: tuple, kwargs: dict, method: bool) -> None:
    """Raise the parser's TypeError (`invalid_combination`) when a call of the listed op
    `name` (OVERLOADS, OPERAND_OVERLOADS; `args` starting with self for a method) fits none
    of its overloads; return where one fits (the error the op raised stands). For the
    wrapper that saw the call (`_aliases.with_aliases`), after the op raised a TypeError."""
    sigs = overloads_of(name)
    if sigs is None:
        return
    shown = [m for m in map(_as_method, sigs) if m is not None] if method else sigs
    if not any(_fits_signature(s, args[1:] if method else args, kwargs) for s in shown):
        raise _listed(name, sigs, args, kwargs, method) from None


def _one_plausible(name: str, signature: str, args: tuple, kwargs: dict) -> str | None:
    """The parser's words for the first argument (positional ones first, then keywords,
    in the parameters' order) that does not fit `signature`, or None where all fit."""
    params = _params(signature)
    positional = [p for p in params if not p[3]]
    for i, value in enumerate(args[:len(positional)]):
        kind, pname, default, _ = positional[i]
        if not _parses(value, kind, default, pname):
            return _refused(name, pname, f" (position {i + 1})", kind, value)
    for kind, pname, default, _ in params:
        if pname in kwargs and not _parses(kwargs[pname], kind, default, pname):
            return _refused(name, pname, "", kind, kwargs[pname])
    return None


def _parses(value, kind: str, default: str | None, pname: str) -> bool:
    """`_fits_kind`, every element of a "tuple of ints" sequence counted: what the parser
    checks once it has chosen the overload."""
    if kind == "tuple of ints" and isinstance(value, (list, tuple)) and \
            not is_dims_arg(value, False):
        return False
    return _fits_kind(value, kind, default, pname)


def _refused(name: str, pname: str, where: str, kind: str, value) -> str:
    """The parser's words for `value` refused for parameter `pname` of printed type `kind`
    (of a sequence for "tuple of ints", its first element that is no int: the first and a
    later one are worded apart)."""
    if kind == "tuple of ints" and isinstance(value, (list, tuple)):
        i, bad = next((i, e) for i, e in enumerate(value) if not is_int_arg(e) and
                      not isinstance(e, bool))
        if i:
            return (f"{name}(): argument '{pname}' failed to unpack the object at pos {i + 1} "
                    f"with error \"type must be tuple of ints,but got {tp_name(bad)}\"")
        return (f"{name}(): argument '{pname}'{where} must be tuple of ints, but found element "
                f"of type {tp_name(bad)} at pos 0")
    return f"{name}(): argument '{pname}'{where} must be {kind}, not {tp_name(value)}"


def invalid_combination(name: str, signatures, args: tuple, kwargs: dict,
                        accepts: dict | None = None, typed_by=None) -> TypeError:
    """The TypeError torch raises when `name(*args, **kwargs)` fits none of `signatures`
    (its printed overloads, "(Tensor y, *, int dim = -1)", in torch's order). `accepts`
    overrides which Python types the note takes as fitting each printed type. As torch's
    parser, where only one overload is plausible by the number of arguments, its words
    for the first argument that does not fit it instead (`_one_plausible`)."""
    plausible = [sig for sig in signatures if _plausible(sig, len(args) + len(kwargs))]
    if len(plausible) == 1:
        named = _one_plausible(name, plausible[0], args, kwargs)
        if named is not None:
            return TypeError(named)
    got = [tp_name(a) for a in args] + [f"{k}={tp_name(kwargs[k])}" for k in keyword_order(kwargs)]
    accepts = _ACCEPTS if accepts is None else {**_ACCEPTS, **accepts}
    typed_by = typed_by or (None,) * len(signatures)
    listing = "".join(f" * {sig}\n{_note(sig, args, kwargs, accepts, typed)}"
                      for sig, typed in zip(signatures, typed_by))
    # (with keywords only, torch leaves a separator after the last)
    got_text = ", ".join(got) + (", " if kwargs and not args else "")
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({got_text}), but expected one of:\n{listing}")


# --- an operand of the wrong type ------------------------------------------------------------

_OUT = ", *, Tensor out = None)"
_TWO = (f"(Tensor input, Tensor other{_OUT}", f"(Tensor input, Number other{_OUT}")
_TWO_NO_OUT = (f"(Tensor input, Tensor other{_OUT}", "(Tensor input, Number other)")
_NUMBER_SELF = (f"(Tensor input, Tensor other{_OUT}", "(Number self, Tensor other)",
                f"(Tensor input, Number other{_OUT}")
_POW = (f"(Tensor input, Tensor exponent{_OUT}", f"(Number self, Tensor exponent{_OUT}",
        f"(Tensor input, Number exponent{_OUT}")
_CLAMP = (f"(Tensor input, Tensor min = None, Tensor max = None{_OUT}",
          f"(Tensor input, Number min = None, Number max = None{_OUT}")

# What torch's parser prints when a pointwise op's function form gets an operand no overload
# takes: the overloads it lists, or (a str) the one signature whose argument it names.
OPERAND_OVERLOADS: dict[str, str | tuple[str, ...]] = {
    "add": "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
    "sub": "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
    "mul": f"(Tensor input, Tensor other{_OUT}",
    "div": f"(Tensor input, Tensor other{_OUT}",
    "div_rounded": (f"(Tensor input, Tensor other{_OUT}",
                    "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
                    "(Tensor input, Number other, *, str rounding_mode)"),
    "true_divide": _TWO_NO_OUT, "floor_divide": _TWO_NO_OUT,
    "pow": _POW, "float_power": _POW,
    "remainder": (f"(Tensor input, Tensor other{_OUT}", "(Number self, Tensor other)",
                  f"(Tensor input, Number other{_OUT}"),
    "fmod": _TWO, "copysign": _TWO,
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge"), _TWO),
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                     "bitwise_right_shift"), _NUMBER_SELF),
    "xlogy": (f"(Tensor input, Tensor other{_OUT}", f"(Number self, Tensor other{_OUT}",
              f"(Tensor input, Number other{_OUT}"),
    "clamp": _CLAMP, "clip": _CLAMP,
    "clamp_min": (f"(Tensor input, Tensor min{_OUT}", f"(Tensor input, Number min{_OUT}"),
    "clamp_max": (f"(Tensor input, Tensor max{_OUT}", f"(Tensor input, Number max{_OUT}"),
    "lerp": (f"(Tensor input, Tensor end, Tensor weight{_OUT}",
             f"(Tensor input, Tensor end, Number weight{_OUT}"),
    "masked_fill": ("(Tensor input, Tensor mask, Tensor value)",
                    "(Tensor input, Tensor mask, Number value)"),
    "fill": ("(Tensor input, Tensor value)", "(Tensor input, Number value)"),
    "where": ("(Tensor condition)", f"(Tensor condition, Tensor input, Tensor other{_OUT}",
              "(Tensor condition, Number self, Tensor other)",
              "(Tensor condition, Tensor input, Number other)",
              "(Tensor condition, Number self, Number other)"),
}


def _fits(value, kind: str) -> bool:
    if kind == "Tensor":
        return isinstance(value, Tensor)
    return tp_name(value) in _ACCEPTS.get(kind, ()) or (
        isinstance(value, Tensor) and kind == "Number" and value.ndim == 0)


def _one_signature(name: str, signature: str, args: tuple, kwargs: dict) -> str:
    """The parser's words for the first argument that does not fit an op's only printed
    overload (the ops listed so take a number for a Tensor too, by overloads it hides)."""
    pieces = [p for p in signature[1:-1].split(", ") if p not in ("*", "")]
    params = [(p.split(" ")[0], p.split(" = ")[0].split(" ")[-1]) for p in pieces]
    for i, (value, (kind, pname)) in enumerate(zip(args, params)):
        if not (_fits(value, kind) or kind == "Tensor" and _fits(value, "Number")):
            return (f"{name}(): argument '{pname}' (position {i + 1}) must be {kind}, not "
                    f"{tp_name(value)}")
    kinds = {pname: kind for kind, pname in params}
    for key in keyword_order(kwargs):
        if key in kinds and not _fits(kwargs[key], kinds[key]):
            return f"{name}(): argument '{key}' must be {kinds[key]}, not {tp_name(kwargs[key])}"
    return f"{name}(): an argument is of a type it does not take"


def _as_method(signature: str) -> str | None:
    """An overload as the Tensor method prints it: without `self` and `out=`; None where the
    overload's first parameter is no Tensor (no method has it)."""
    pieces = signature[1:-1].split(", ")
    if not pieces[0].startswith("Tensor "):
        return None
    rest = [p for p in pieces[1:] if not p.endswith(" out = None")]
    return "(" + ", ".join(rest[:-1] if rest and rest[-1] == "*" else rest) + ")"


def operand_error(name: str, args: tuple, kwargs: dict | None = None,
                  table_name: str | None = None, method: bool | None = None) -> TypeError:
    """The TypeError (a plain one) torch's parser raises for `name(*args, **kwargs)` (an op of
    OPERAND_OVERLOADS, `table_name` when it is listed under another) when an operand is
    neither a Tensor nor a number it takes. Keywords given as None are left out: the parser
    lists only those passed. `method` says whether the op was called as a Tensor method
    (`args` then starts with self); by default, whether the calling op's code is the copy
    `bind_methods` makes for Tensor (named `Tensor.<name>`)."""
    if method is None:
        method = sys._getframe(1).f_code.co_qualname.startswith("Tensor.")
    if method and args and not isinstance(args[0], Tensor):
        return descriptor_error(name, args[0])
    kwargs = {k: v for k, v in (kwargs or {}).items() if v is not None}
    sigs = OPERAND_OVERLOADS[table_name or name.rstrip("_")]
    if isinstance(sigs, str):
        if method:
            args, sigs = args[1:], _as_method(sigs)
        return TypeError(_one_signature(name, sigs, args, kwargs))
    return _listed(name, sigs, args, kwargs, method)


def _listed(name: str, sigs, args: tuple, kwargs: dict, method: bool) -> TypeError:
    """invalid_combination over an op's function-form overloads `sigs`, in its method form
    when `method` (`args` then starts with self)."""
    if not method:
        return invalid_combination(name, sigs, args, kwargs)
    # A method's note checks its arguments against the function's parameters from the first
    # (`self`'s) on: one place early, as torch's parser does.
    kept = [s for s in sigs if _as_method(s) is not None]
    return invalid_combination(name, [_as_method(s) for s in kept], args[1:], kwargs,
                               typed_by=kept)


_DIM_REDUCE = ", bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)"
_EXTREME = ("(Tensor input, *, Tensor out = None)", f"(Tensor input, Tensor other{_OUT}",
            "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")
_TRUTH = ("(Tensor input, *, Tensor out = None)",
          "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)",
          "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)")
_FACTORY = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
            "torch.device device = None, bool pin_memory = False, bool requires_grad = False)")
_SPACED = tuple(f"({a} start, {b} end, int steps, {{}}{_FACTORY}"
                for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                             ("Number", "Number")))

# The printed overloads of ops whose dims, counts or bounds can fit none of them (function
# form, torch's order), for `no_overload`.
OVERLOADS: dict[str, tuple[str, ...]] = {
    "sum": ("(Tensor input, *, torch.dtype dtype = None)",
            f"(Tensor input, tuple of ints dim{_DIM_REDUCE}"),
    "mean": ("(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
             f"(Tensor input, tuple of ints dim{_DIM_REDUCE}"),
    "prod": ("(Tensor input, *, torch.dtype dtype = None)", f"(Tensor input, int dim{_DIM_REDUCE}"),
    "max": _EXTREME, "min": _EXTREME, "all": _TRUTH, "any": _TRUTH,
    "eye": (f"(int n, {_FACTORY}", f"(int n, int m, {_FACTORY}"),
    "linspace": tuple(s.format("") for s in _SPACED),
    "logspace": tuple(s.format("float base = 10.0, ") for s in _SPACED),
    "round": (f"(Tensor input{_OUT}", "(Tensor input, *, int decimals, Tensor out = None)"),
    **{name: (f"(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False{o})",
              "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool "
              f"keepdim = False{', Tensor out = None' if o else ''})",
              "(Tensor input, bool unbiased = True)")
       for name, o in (("var", _OUT[:-1]), ("std", _OUT[:-1]), ("var_mean", ""),
                       ("std_mean", ""))},
    "sort": ("(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of "
             "Tensors out = None)",
             "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = "
             "None)"),
    "narrow": ("(Tensor input, int dim, Tensor start, int length)",
               "(Tensor input, int dim, int start, int length)"),
    "movedim": ("(Tensor input, int source, int destination)",
                "(Tensor input, tuple of ints source, tuple of ints destination)"),
    **{name: tuple(f"(Tensor input, int dim, Tensor index, {v}, *, {r}Tensor out = None)"
                   for v in ("Tensor src", "Number value") for r in ("", "str reduce, "))
       for name in ("scatter", "scatter_")},
    "count_nonzero": ("(Tensor input, int dim = None)", "(Tensor input, tuple of ints dim)"),
    "argsort": ("(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor "
                "out = None)", "(Tensor input, int dim = -1, bool descending = False)"),
    "split": ("(Tensor input, int split_size, int dim = 0)",
              "(Tensor input, tuple of ints split_size, int dim = 0)"),
    "repeat_interleave": (
        "(Tensor input, Tensor repeats, int dim = None, *, int output_size = None)",
        "(Tensor repeats, *, int output_size = None)",
        "(Tensor input, int repeats, int dim = None, *, int output_size = None)"),
    "tensor_split": ("(Tensor input, tuple of ints indices, int dim = 0)",
                     "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
                     "(Tensor input, int sections, int dim = 0)"),
}


def overloads_of(name: str) -> tuple[str, ...] | None:
    """The printed overloads of the function `name` where they are listed (OVERLOADS,
    OPERAND_OVERLOADS, the random ops' in generator_checks.py), or None."""
    from .generator_checks import OVERLOADS as RANDOM_OVERLOADS

    sigs = OVERLOADS.get(name) or OPERAND_OVERLOADS.get(name) or RANDOM_OVERLOADS.get(name)
    return sigs if isinstance(sigs, tuple) else None


def no_overload(name: str, args: tuple, kwargs: dict | None = None, *,
                method: bool | None = None, signatures: tuple | None = None) -> TypeError:
    """The TypeError torch's parser raises when `name(*args, **kwargs)` fits none of the
    op's overloads: its first line as torch prints it ("sum() received an invalid
    combination of arguments - got (Tensor, str), but expected one of:"), then the overloads
    `signatures` (else those of OVERLOADS / OPERAND_OVERLOADS), or none for an op listed in
    neither (a shorter listing than torch's). The op passes its arguments, keyword-only
    ones (not None) as keywords; it cannot tell a positional-or-keyword argument passed by
    keyword, which torch's "got" names ("got (Tensor, dim=float)"): the wrapper that saw the
    call, where there is one (`_aliases.with_aliases`), words it again (`as_called`).
    `method`: whether the op runs as a Tensor method (`args` then starts with self; None:
    found out, see `_op_is_method`)."""
    kwargs = {k: v for k, v in (kwargs or {}).items() if v is not None}
    if method is None:
        method = _op_is_method(name)
    sigs = signatures or overloads_of(name) or ()
    error = _no_overload_error(name, sigs, args, kwargs, method)
    error.overloads = (name, sigs)  # (see `as_called`)
    return error


def _no_overload_error(name: str, sigs: tuple, args: tuple, kwargs: dict,
                       method: bool) -> TypeError:
    if sigs:
        return _listed(name, sigs, args, kwargs, method)
    return invalid_combination(name, (), args[1:] if method else args, kwargs)


def as_called(error: TypeError, args: tuple, kwargs: dict, method: bool) -> TypeError | None:
    """A `no_overload` error worded again over the call's own `args` and `kwargs` (self
    first for a method), for the wrapper that saw the call as written
    (`_aliases.with_aliases`), which names the arguments passed by keyword; None for any
    other error, or one already worded so (the innermost wrapper's call is the one
    refused)."""
    spec = getattr(error, "overloads", None)
    if spec is None:
        return None
    return _no_overload_error(*spec, args, kwargs, method)


def called_as_method() -> bool:
    """Whether the op calling this runs as a Tensor method (see `operand_error`)."""
    return sys._getframe(1).f_code.co_qualname.startswith("Tensor.")


def as_method(fn):
    """`fn` as bound onto Tensor: the same function over a copy of its code named
    `Tensor.<name>`, so that `operand_error` can tell the method form from the function
    form at no cost to either call."""
    code = fn.__code__.replace(co_qualname=f"Tensor.{fn.__name__}")
    method = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                fn.__closure__)
    method.__kwdefaults__ = fn.__kwdefaults__
    method.__doc__, method.__qualname__ = fn.__doc__, f"Tensor.{fn.__name__}"
    method.__dict__.update(fn.__dict__)
    return method


def method_aware(fn):
    """Marks an op whose operand errors depend on its form (`operand_error`): Tensor gets
    `as_method(fn)` for it. No wrapper: the op runs as written."""
    fn._method_aware = True
    return fn
