"""NumPy's keyword spellings that PyTorch's argument parser also accepts.

PyTorch's natively parsed functions and Tensor methods take `axis=` for `dim=` and
`keepdims=` for `keepdim=` (and `x=`, `a=`, `x1=` for `input=`, `x2=` for `other=`), so
notebooks write `counts.sum(1, keepdims=True)`. ember accepts them in this one place:
`with_aliases` wraps each op function that has a `dim` or `keepdim` parameter where it is
bound into `ember` and onto `Tensor`; the ops themselves keep PyTorch's canonical names.
The functions PyTorch writes in Python (`split`, `norm`, `unique` ...) take no alias
there, and take none here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input",
           "x2": "other"}

# NOTE: PyTorch defines these in Python (torch/functional.py, torch/_tensor.py), outside
# the parser that knows the aliases, so `torch.split(t, 2, axis=0)` is a TypeError there.
PYTHON_LEVEL_FUNCTIONS = frozenset({"split", "norm", "unique", "unique_consecutive"})
PYTHON_LEVEL_METHODS = frozenset({"split", "norm", "unique", "unique_consecutive", "unflatten"})


def _renamed(name: str, kwargs: dict, rename: dict) -> dict:
    """`kwargs` with each alias in `rename` replaced by the parameter it spells."""
    out = {}
    for key, value in kwargs.items():
        if key in rename:
            canonical = rename[key]
            if canonical in kwargs or canonical in out:
                raise TypeError(f"{name}() got an unexpected keyword argument '{key}': it "
                                f"spells '{canonical}', which is given too")
            key = canonical
        out[key] = value
    return out


def _renames(params, method: bool) -> dict:
    """alias -> parameter name, for the aliases this signature can take."""
    names = list(params)
    rename = {k: v for k, v in ALIASES.items() if v in params and v != "input"}
    # The tensor operand is `input` in PyTorch; some ember ops call it `x`. A method's
    # operand is `self`, which PyTorch lets no keyword name.
    operand = "input" if "input" in params else ("x" if names[:1] == ["x"] else None)
    if operand is not None and not method:
        rename.update({k: operand for k in ("input", "x", "a", "x1") if k != operand})
    return rename


def with_aliases(fn: Callable, name: str, *, method: bool = False, module: str = "ember",
                 python_level: frozenset | None = None) -> Callable:
    """`fn`, accepting PyTorch's keyword aliases when it takes `dim` or `keepdim`.

    `module` is the namespace it is bound into (`ember.linalg` ...), and `python_level`
    the names there that PyTorch writes in Python (default: those of `torch` / `Tensor`).
    Calls that spell no alias go straight through: one frame and a set test, and the
    keyword dict is rebuilt only when an alias is present.
    """
    if python_level is None:
        python_level = PYTHON_LEVEL_METHODS if method else PYTHON_LEVEL_FUNCTIONS
    if name in python_level or not callable(fn) or getattr(fn, "_takes_aliases", False):
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    # (the reductions' wrapper also turns a non-tensor operand's AttributeError into
    # PyTorch's TypeError: free, as it costs nothing until something raises)
    guard = not method and module == "ember" and next(iter(params), None) in ("input", "x")
    if "dim" not in params and "keepdim" not in params:
        return _guarded(fn, name) if guard and fn.__module__ not in _PARSED \
            and name not in SHARED_WITH_FUNCTIONAL else fn
    rename = _renames(params, method)
    spelled = frozenset(rename)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs and not spelled.isdisjoint(kwargs):
            kwargs = _renamed(name, kwargs, rename)
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            if guard:
                refuse_non_tensor(name, args, kwargs)
            raise
        except TypeError as e:
            if guard and _binding_error(e):
                refuse_non_tensor(name, args, kwargs)
            raise

    # Pickle finds a function by module and qualified name: point both at the wrapper.
    call._takes_aliases = True
    call.__module__ = "ember._tensor" if method else module
    call.__qualname__ = f"Tensor.{name}" if method else name
    return call


# PyTorch's overloads of the functions whose parser lists them all on a bad operand
_REDUCE_ANY = ("(Tensor input, *, Tensor out = None)",
               "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, "
               "Tensor out = None)",
               "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)")
_SPREAD = ("(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, "
           "Tensor out = None)",
           "(Tensor input, tuple of ints dim = None, *, Number correction = None, "
           "bool keepdim = False, Tensor out = None)",
           "(Tensor input, bool unbiased = True)")
_OVERLOADS = {"any": _REDUCE_ANY, "all": _REDUCE_ANY, "std": _SPREAD, "var": _SPREAD}


_MISSING = object()


def refuse_non_tensor(name: str, args: tuple, kwargs: dict) -> None:
    """PyTorch's parser error for a function given no tensor as its operand (a list, a
    number): raised where ember's op met the non-tensor (an AttributeError, or a missing
    argument, which PyTorch's parser reports after the operand)."""
    from .ops._arg_parser_text import tp_name

    x = args[0] if args else kwargs.get("input", kwargs.get("x", _MISSING))
    if x is _MISSING or hasattr(type(x), "_is_wrapper"):  # (no operand given, or a Tensor)
        return
    if name in _OVERLOADS:
        got = [tp_name(a) for a in args] + [f"{k}={tp_name(v)}" for k, v in kwargs.items()]
        listing = "".join(f" * {sig}\n" for sig in _OVERLOADS[name])
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n{listing}") from None
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                    f"{tp_name(x)}") from None


# modules whose functions refuse a non-tensor operand themselves, in the parser's words
# (hot ones: a guard would be one more frame on every `torch.add(a, b)`)
_PARSED = frozenset({"ember.ops.unary", "ember.ops.binary", "ember.ops._binary_api",
                     "ember.ops.activation", "ember.ops.ternary", "ember.ops.conv",
                     "ember.ops.matmul"})


# torch's functions that are the same object in `torch.nn.functional` (`F.conv_tbc is
# torch.conv_tbc`): bound unwrapped, so ember keeps that identity
SHARED_WITH_FUNCTIONAL = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "channel_shuffle", "conv1d",
    "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_similarity", "hardshrink", "native_channel_shuffle", "pairwise_distance", "pdist",
    "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_", "selu_", "threshold_"})


def _guarded(fn: Callable, name: str) -> Callable:
    """`fn` with a non-tensor operand refused in PyTorch's words (`refuse_non_tensor`), for
    a function that takes no alias (`torch.reshape([1, 2], ...)` is a TypeError there)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            refuse_non_tensor(name, args, kwargs)
            raise
        except TypeError as e:
            if _binding_error(e):
                refuse_non_tensor(name, args, kwargs)
            raise

    call._takes_aliases = True
    call.__module__ = "ember"
    call.__qualname__ = name
    return call


def _binding_error(e: TypeError) -> bool:
    """Whether `e` is Python's complaint about the call's arguments (a missing one)."""
    return "required positional argument" in str(e)


def dim_or_axis(name: str, dim, axis):
    """`axis` as the `dim` of a hot method that spells it inline (`Tensor.size`,
    `Tensor.stride`: a wrapper would double their cost); both given is a TypeError."""
    if dim is not None:
        raise TypeError(f"{name}() got an unexpected keyword argument 'axis': it spells "
                        "'dim', which is given too")
    return axis
