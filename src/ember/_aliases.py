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
    torch_name = _parser_name(name, module)
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY,
                                                             p.POSITIONAL_OR_KEYWORD)]
    # where `dim` sits among the positional parameters (-1: keyword-only; None: no parser
    # check of `dim` to stand in for)
    dim_at = next((i for i, p in enumerate(positional) if p.name == "dim"), -1)
    if "dim" not in params or torch_name is None or (
            torch_name in _OVERLOADED_DIM and torch_name not in _OVERLOADED_LIST_DIM):
        dim_at = None

    listed = torch_name is not None and _listed(torch_name)
    # where `keepdim` sits among the positional parameters (-1: keyword-only or none), and
    # whether the parser's check that it is a bool is made here (not for a function PyTorch
    # writes in Python)
    keep_at = next((i for i, p in enumerate(positional) if p.name == "keepdim"), -1)
    keep_checked = "keepdim" in params and torch_name is not None and (
        listed or torch_name not in _OVERLOADED_DIM)  # (else the op's own overloads check it)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs and not spelled.isdisjoint(kwargs):
            kwargs = _renamed(name, kwargs, rename)
        if keep_checked and (0 <= keep_at < len(args) and args[keep_at].__class__ is not bool
                             or kwargs and kwargs.get("keepdim", False).__class__ is not bool):
            _wrong_keepdim(torch_name, args, kwargs, keep_at, method, listed)
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            if method:
                _refuse_self(name, args)
            if guard:
                refuse_non_tensor(name, args, kwargs)
            if dim_at is not None:
                wrong_dim(torch_name, args, kwargs, dim_at, method, None)
            raise
        except TypeError as e:
            if method:
                _refuse_self(name, args)
            if hasattr(e, "overloads"):  # (no_overload's: its "got" as the call was written)
                raise _as_called(e, args, kwargs, method) from None
            if listed and not str(e).startswith(f"{torch_name}() "):
                # (a call that fits none of the overloads torch lists, which the op has not
                # refused in the parser's or Python's words already: "sort() received ...")
                _refuse_unfit(torch_name, args, kwargs, method)
            if _binding_error(e):
                if guard:
                    refuse_non_tensor(name, args, kwargs)
                if torch_name is not None:
                    missing_arguments(e, fn, torch_name, args, kwargs)
            elif dim_at is not None:
                wrong_dim(torch_name, args, kwargs, dim_at, method, e)
            raise

    # Pickle finds a function by module and qualified name: point both at the wrapper.
    call._takes_aliases = True
    call.__module__ = "ember._tensor" if method else module
    call.__qualname__ = f"Tensor.{name}" if method else name
    return call


_MISSING = object()


def refuse_non_tensor(name: str, args: tuple, kwargs: dict) -> None:
    """PyTorch's parser error for a function given no tensor as its operand (a list, a
    number): raised where ember's op met the non-tensor (an AttributeError, or a missing
    argument, which PyTorch's parser reports after the operand)."""
    from .ops._arg_parser_text import invalid_combination, not_tensor, overloads_of

    x = args[0] if args else kwargs.get("input", kwargs.get("x", _MISSING))
    if x is _MISSING or hasattr(type(x), "_is_wrapper"):  # (no operand given, or a Tensor)
        return
    sigs = overloads_of(name)
    if sigs is not None:
        raise invalid_combination(name, sigs, args, kwargs) from None
    raise not_tensor(name, "input", 1, x) from None


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
    listed = _listed(name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            refuse_non_tensor(name, args, kwargs)
            raise
        except TypeError as e:
            if hasattr(e, "overloads"):
                raise _as_called(e, args, kwargs, False) from None
            if listed and not str(e).startswith(f"{name}() "):
                _refuse_unfit(name, args, kwargs, False)
            if _binding_error(e):
                refuse_non_tensor(name, args, kwargs)
                missing_arguments(e, fn, name, args, kwargs)
            raise

    call._takes_aliases = True
    call.__module__ = "ember"
    call.__qualname__ = name
    return call


def _listed(name: str) -> bool:
    """Whether the function `name`'s overloads are listed (`_arg_parser_text.OVERLOADS`)."""
    from .ops._arg_parser_text import overloads_of

    return overloads_of(name) is not None


def _wrong_keepdim(name: str, args: tuple, kwargs: dict, at: int, method: bool,
                   listed: bool) -> None:
    """The parser's TypeError for a `keepdim` that is no bool (`x.sum(0, 1)`): its words
    for the argument, or, for an op whose overloads it lists, those (`refuse_unfit`)."""
    from .ops._arg_parser_text import refuse_unfit, wrong_type

    if listed:
        refuse_unfit(name, args, kwargs, method)
    if "keepdim" in kwargs:
        raise wrong_type(name, "keepdim", None, "bool", kwargs["keepdim"])
    raise wrong_type(name, "keepdim", at + (0 if method else 1), "bool", args[at])


def _refuse_self(name: str, args: tuple) -> None:
    """CPython's error for an unbound method given no tensor for self (`Tensor.sum("a")`)."""
    if args and not hasattr(type(args[0]), "_is_wrapper"):
        from .ops._arg_parser_text import descriptor_error

        raise descriptor_error(name, args[0]) from None


def _refuse_unfit(name: str, args: tuple, kwargs: dict, method: bool) -> None:
    from .ops._arg_parser_text import refuse_unfit

    refuse_unfit(name, args, kwargs, method)


def _as_called(e: TypeError, args: tuple, kwargs: dict, method: bool) -> TypeError:
    from .ops._arg_parser_text import as_called

    return as_called(e, args, kwargs, method)


def _binding_error(e: TypeError) -> bool:
    """Whether `e` is Python's complaint about the call's arguments (a missing one)."""
    return "required positional argument" in str(e)


# the functions PyTorch writes in Python (torch/functional.py): Python words their errors
_PYTHON_FUNCTIONS = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu",
    "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unique",
    "unique_consecutive", "unravel_index", "lobpcg"})
# the namespaces whose ATen names the parser prints with a prefix (`special_logsumexp()`)
_PREFIXES = {"ember": "", "ember.special": "special_"}


def _parser_name(name: str, module: str) -> str | None:
    """The name PyTorch's argument parser gives `name` of `module` in its messages, or None
    for a function PyTorch writes in Python (or a namespace not handled here)."""
    if module not in _PREFIXES or name in _PYTHON_FUNCTIONS:
        return None
    return _PREFIXES[module] + name


def missing_arguments(e: TypeError, fn: Callable, name: str, args: tuple,
                      kwargs: dict) -> None:
    """Raise PyTorch's parser error for a call of `fn` that left out required arguments
    (`logsumexp() missing 1 required positional arguments: "dim"`), when `e` is Python's
    complaint about that call itself rather than one raised inside `fn`.

    NOTE: the parser's words are its own: it pluralises "arguments" for one missing
    argument and not for several, and quotes each name in double quotes.
    """
    # Raised by the call itself: the traceback holds the wrapper's frame and one per
    # decorator layer over the op (`__wrapped__`), and Python names the op it could not call.
    inner, layers = fn, 0
    while hasattr(inner, "__wrapped__"):
        inner, layers = inner.__wrapped__, layers + 1
    tb, depth = e.__traceback__, 0
    while tb is not None:
        tb, depth = tb.tb_next, depth + 1
    if depth != 1 + layers or not str(e).startswith(f"{inner.__qualname__}() missing"):
        return
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    missing = [p.name for i, p in enumerate(positional)
               if p.default is p.empty and i >= len(args) and p.name not in kwargs]
    if not missing:
        return
    # (ember names some operands `x`: PyTorch's parser calls them `input`)
    missing = ["input" if (m == "x" and positional[0].name == "x") else m for m in missing]
    quoted = ", ".join(f'"{m}"' for m in missing)
    plural = "s" if len(missing) == 1 else ""
    raise TypeError(f"{name}() missing {len(missing)} required positional argument{plural}: "
                    f"{quoted}") from None


# the functions whose parser reads `dim` as a list of ints (the others read one int) ...
_LIST_DIM = frozenset({"amax", "amin", "frobenius_norm", "hash_tensor", "logsumexp", "nanmean",
                       "nansum", "special_logsumexp"})
# ... and those whose parser, given a `dim` no overload takes, lists all their overloads
# ("received an invalid combination of arguments"): left to the op's own words
_OVERLOADED_DIM = frozenset({
    "all", "any", "argsort", "count_nonzero", "cumulative_trapezoid", "gradient", "index_fill",
    "index_fill_", "max", "mean", "min", "nanquantile", "narrow", "nuclear_norm", "prod",
    "quantile", "repeat_interleave", "scatter", "scatter_", "sort", "squeeze", "squeeze_",
    "squeeze_copy", "std", "std_mean", "sum", "tensor_split", "trapezoid", "trapz", "var",
    "var_mean"})
# (of those, the ones with a list-of-ints `dim`, where a tuple whose later element is no int
# gets the same words from every overload)
_OVERLOADED_LIST_DIM = frozenset({
    "all", "any", "count_nonzero", "gradient", "mean", "nuclear_norm", "squeeze", "squeeze_",
    "squeeze_copy", "std", "std_mean", "sum", "var", "var_mean"})


def _parses_as_int(v) -> bool:
    """Whether PyTorch's parser takes `v` for an int: an int-like but no bool (a tensor is
    left to the op, which reads a 0-d integer one)."""
    return hasattr(type(v), "__index__") and not isinstance(v, bool) or hasattr(
        type(v), "_is_wrapper")


def wrong_dim(name: str, args: tuple, kwargs: dict, at: int, method: bool,
              error: TypeError | None) -> None:
    """Raise PyTorch's parser TypeError when the call's `dim` (positional parameter `at`,
    or the keyword) is of a type the parser refuses (`logsumexp(x, 0.5)`), where ember's op
    met it with an AttributeError or a TypeError of its own (`error`; a None `dim` only
    where that error was about it, as None is a valid `dim` of many ops). Positions count
    from 1 after `self` for a method and from the tensor for a function, as the parser's."""
    if "dim" in kwargs:
        value, where = kwargs["dim"], ""
    elif 0 <= at < len(args):
        value, where = args[at], f" (position {at + (0 if method else 1)})"
    else:
        return
    if _parses_as_int(value) or value is None and "NoneType" not in str(error):
        return
    from .ops._arg_parser_text import tp_name

    overloaded = name in _OVERLOADED_DIM
    kind = "tuple of ints" if name in _LIST_DIM or overloaded else "int"
    if kind == "int" or not isinstance(value, (tuple, list)):
        if overloaded:
            return  # (the overload listing: the op's to word)
        raise TypeError(f"{name}(): argument 'dim'{where} must be {kind}, not "
                        f"{tp_name(value)}") from None
    for i, v in enumerate(value):
        if _parses_as_int(v):
            continue
        # NOTE: the parser words a bad first element and a later one differently (and a
        # bad first one by keyword as if the whole sequence were refused)
        if i == 0 and overloaded:
            return
        if i == 0:
            detail = (f"not {tp_name(value)}" if not where else
                      f"but found element of type {tp_name(v)} at pos 0")
            raise TypeError(f"{name}(): argument 'dim'{where} must be tuple of ints, "
                            f"{detail}") from None
        raise TypeError(f"{name}(): argument 'dim' failed to unpack the object at pos "
                        f"{i + 1} with error \"type must be tuple of ints,but got "
                        f"{tp_name(v)}\"") from None


def dim_or_axis(name: str, dim, axis):
    """`axis` as the `dim` of a hot method that spells it inline (`Tensor.size`,
    `Tensor.stride`: a wrapper would double their cost); both given is a TypeError."""
    if dim is not None:
        raise TypeError(f"{name}() got an unexpected keyword argument 'axis': it spells "
                        "'dim', which is given too")
    return axis
