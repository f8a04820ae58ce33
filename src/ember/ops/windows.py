"""Window functions for spectral analysis: hann, hamming, blackman, bartlett and kaiser.

Each is built as PyTorch's factories build it, step for step, so the roundings agree: an
`arange` in the window's dtype scaled by a constant, then its cosines (or, for bartlett, a
fold at the middle; for kaiser, i0 of the distance from the centre). A periodic window of
length N is the symmetric one of length N + 1 without its last sample.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _names
from .._device import device as _device_type
from .._layout import layout as _layout_type
from .._tensor import Tensor
from ._arg_parser_text import keyword_order, tp_name
from ._common import c_type_name, type_name
from .creation import arange, empty, ones

# --- the argument parser -------------------------------------------------------------------
# torch binds a window call against overloads (native_functions.yaml): `periodic`, `alpha`
# and `beta` are positional-or-keyword only in the overloads that list every argument before
# them, so `kaiser_window(4, beta=8.0)` matches none. Each overload lists its positional
# parameters; the factory keywords follow in all of them.

_OVERLOADS = {
    "hann_window": (("window_length",), ("window_length", "periodic")),
    "blackman_window": (("window_length",), ("window_length", "periodic")),
    "bartlett_window": (("window_length",), ("window_length", "periodic")),
    "hamming_window": (("window_length",), ("window_length", "periodic"),
                       ("window_length", "periodic", "alpha"),
                       ("window_length", "periodic", "alpha", "beta")),
    "kaiser_window": (("window_length",), ("window_length", "periodic"),
                      ("window_length", "periodic", "beta")),
}
_POSITIONAL = {"window_length": "int", "periodic": "bool", "alpha": "float", "beta": "float"}
_FACTORY = (("dtype", "dtype", "None"), ("layout", "layout", "None"),
            ("device", "device", "None"), ("pin_memory", "bool", "False"),
            ("requires_grad", "bool", "False"))
_REQUIRED = object()  # the default of a parameter without one; also "not passed"


def _is_int(obj) -> bool:
    if isinstance(obj, Tensor):  # a 0-d integer tensor converts, as torch's int parameter
        return (obj.dim() == 0 and not obj.requires_grad and not obj.dtype.is_floating_point
                and not obj.dtype.is_complex and obj.dtype is not dt.bool_)
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, bool)


def _is_float(obj) -> bool:
    if isinstance(obj, Tensor):
        return obj.dim() == 0 and not obj.requires_grad
    return isinstance(obj, (float, int, np.integer, np.floating, np.bool_))


_CHECKS = {
    "int": _is_int, "float": _is_float,
    "bool": lambda obj: isinstance(obj, bool),
    "dtype": lambda obj: isinstance(obj, dt.dtype),
    "layout": lambda obj: isinstance(obj, _layout_type),
    "device": lambda obj: isinstance(obj, (_device_type, str)) or _is_int(obj),
}


def _type_label(kind: str) -> str:
    return f"{_names.prefix}.{kind}" if kind in ("dtype", "layout", "device") else kind


def _params(positional):
    """(name, kind, default or _REQUIRED, keyword-only) for one overload."""
    return ([(n, _POSITIONAL[n], _REQUIRED, False) for n in positional]
            + [(n, kind, default, True) for n, kind, default in _FACTORY])


def _signature_text(positional) -> str:
    pos = [f"{_POSITIONAL[n]} {n}" for n in positional]
    kw = [f"{_type_label(kind)} {n} = {default}" for n, kind, default in _FACTORY]
    return "(" + ", ".join(pos + ["*"] + kw) + ")"


def _bind(name: str, positional, args, kwargs, raise_error: bool):
    """One overload's binding as torch's FunctionSignature::parse: the bound arguments, or
    None (or, with raise_error, the TypeError torch raises for this overload alone)."""
    if len(args) > len(positional):
        if not raise_error:
            return None
        if len(positional) == 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        raise TypeError(f"{name}() takes {len(positional)} positional arguments but "
                        f"{len(args)} were given")
    bound, used = {}, 0
    for i, (param, kind, default, _) in enumerate(_params(positional)):
        is_kwd = i >= len(args)
        obj = kwargs.get(param, _REQUIRED) if is_kwd else args[i]
        if obj is _REQUIRED:
            if default is _REQUIRED:
                if raise_error:
                    # NOTE: torch's message says "arguments" for one missing argument too.
                    raise TypeError(f'{name}() missing 1 required positional arguments: '
                                    f'"{param}"')
                return None
            bound[param] = None
            continue
        if is_kwd:
            used += 1
        if obj is None and default != _REQUIRED and (default == "None" or kind == "bool"):
            bound[param] = None  # (the factory booleans are `bool?` in torch's schema)
        elif _CHECKS[kind](obj):
            bound[param] = obj
        elif not raise_error:
            return None
        elif is_kwd:
            raise TypeError(f"{name}(): argument '{param}' must be {_type_label(kind)}, not "
                            f"{tp_name(obj)}")
        else:
            raise TypeError(f"{name}(): argument '{param}' (position {i + 1}) must be "
                            f"{_type_label(kind)}, not {tp_name(obj)}")
    if used < len(kwargs):
        if not raise_error:
            return None
        names = [p[0] for p in _params(positional)]
        for key in kwargs:
            if key not in names:
                raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
            if names.index(key) < len(args):
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
    return bound


def _mismatch_note(positional, args: tuple, kwargs: dict) -> str:
    """The line torch's message adds under an overload whose parameter list, as torch's
    message parser reads the printed signature, is as long as the call's arguments: the
    `*` counts as one, and a keyword-only one is named by its default (`= None`), so no
    keyword matches it and no argument matches the type it reads ("torch.dtype dtype =")."""
    names = list(positional) + ["*"] + [default for _, _, default in _FACTORY]
    if len(args) + len(kwargs) != len(names):
        return ""
    if kwargs:
        tail = names[max(0, len(names) - len(kwargs)):]
        wrong = [k for k in keyword_order(kwargs) if k not in tail]
        return ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(wrong)}\n")
    accepts = {"int": ("int",), "float": ("float", "int"), "bool": ("bool",)}
    descs = []
    for i, arg in enumerate(args):
        desc = tp_name(arg)
        if isinstance(arg, (tuple, list)):
            items = ", ".join(tp_name(x) for x in arg)
            desc += (f" of ({items}{',' if len(arg) == 1 else ''})" if isinstance(arg, tuple)
                     else f" of [{items}]")
        fits = i < len(positional) and desc in accepts[_POSITIONAL[positional[i]]]
        descs.append(desc if fits else f"!{desc}!")
    return ("      didn't match because some of the arguments have invalid types: "
            f"({', '.join(descs)})\n")


def _parse(name: str, args: tuple, kwargs: dict) -> dict:
    """Binds a window call as torch's PythonArgParser does: the first overload that takes
    the arguments; else, when only one overload could by its argument count, that
    overload's own error; else torch's "invalid combination of arguments"."""
    overloads = _OVERLOADS[name]
    for positional in overloads:
        bound = _bind(name, positional, args, kwargs, False)
        if bound is not None:
            return bound
    count = len(args) + len(kwargs)
    plausible = [p for p in overloads if len(p) <= count <= len(p) + len(_FACTORY)]
    if len(plausible) == 1:
        _bind(name, plausible[0], args, kwargs, True)
    got = [tp_name(a) for a in args]
    got += [f"{k}={tp_name(kwargs[k])}" for k in keyword_order(kwargs)]
    options = "".join(f" * {_signature_text(p)}\n{_mismatch_note(p, args, kwargs)}"
                      for p in overloads)
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one of:\n{options}")


def _make(name: str, args: tuple, kwargs: dict, symmetric) -> Tensor:
    """Parses the call, checks it as torch does, and builds the window from `symmetric(n,
    d, device, a)`, the symmetric window of n >= 2 samples (`a`: the bound arguments)."""
    a = _parse(name, args, kwargs)
    window_length = int(a["window_length"])
    periodic = True if a.get("periodic") is None else a["periodic"]
    device, requires_grad = a["device"], bool(a["requires_grad"])
    d = dt.get_default_dtype() if a["dtype"] is None else a["dtype"]
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{type_name(d)}'")
    if not d.is_floating_point:
        rg = "true" if requires_grad else "false (default)"
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={c_type_name(d)}, "
            f"device=cpu, layout=Strided (default), requires_grad={rg}, "
            "pinned_memory=false, memory_format=(nullopt))")
    if window_length == 0:
        w = empty(0, dtype=d, device=device)
    elif window_length == 1:
        w = ones(1, dtype=d, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        w = symmetric(n, d, device, a)
        w = w.narrow(0, 0, n - 1) if periodic else w
    return w.requires_grad_() if requires_grad else w


def _param(a: dict, name: str, default: float) -> float:
    return default if a.get(name) is None else float(a[name])


def hamming_window(*args, **kwargs) -> Tensor:
    """hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
    layout=None, device=None, pin_memory=False, requires_grad=False):
    alpha - beta cos(2 pi k / (N - 1)), k = 0 .. N-1."""
    def build(n, d, device, a):
        w = arange(n, dtype=d, device=device) * (math.pi * 2.0 / (n - 1))
        return w.cos() * -_param(a, "beta", 0.46) + _param(a, "alpha", 0.54)

    return _make("hamming_window", args, kwargs, build)


def hann_window(*args, **kwargs) -> Tensor:
    """hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False):
    0.5 - 0.5 cos(2 pi k / (N - 1)): a hamming window with alpha = beta = 0.5."""
    def build(n, d, device, a):
        w = arange(n, dtype=d, device=device) * (math.pi * 2.0 / (n - 1))
        return w.cos() * -0.5 + 0.5

    return _make("hann_window", args, kwargs, build)


def blackman_window(*args, **kwargs) -> Tensor:
    """blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False):
    0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    def build(n, d, device, a):
        w = arange(n, dtype=d, device=device) * (math.pi / (n - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42

    return _make("blackman_window", args, kwargs, build)


def bartlett_window(*args, **kwargs) -> Tensor:
    """bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False):
    the triangle 2k / (N - 1), folded to 2 - 2k / (N - 1) past the middle."""
    from .join import cat

    def build(n, d, device, a):
        w = arange(n, dtype=d, device=device) * (2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        return cat([w.narrow(0, 0, half), w.narrow(0, half, n - half) * -1 + 2])

    return _make("bartlett_window", args, kwargs, build)


def kaiser_window(*args, **kwargs) -> Tensor:
    """kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False):
    i0(beta sqrt(1 - ((k - c) / c)^2)) / i0(beta), c = (N - 1) / 2: computed in the
    window's dtype (i0, a series, is a transcendental: an ulp from torch's at most)."""
    from .creation import tensor
    from .special_ops import i0

    def build(n, d, device, a):
        beta = _param(a, "beta", 12.0)
        work = dt.float32 if d in (dt.float16, dt.bfloat16) else d  # (PyTorch's opmath)
        c = (n - 1) / 2.0
        k = arange(n, dtype=d, device=device).to(work)
        r = ((1 - ((k - c) / c) ** 2).abs()).sqrt()
        return (i0(r * beta) / i0(tensor(beta, dtype=work, device=device))).to(d)

    return _make("kaiser_window", args, kwargs, build)


TENSOR_METHODS: dict = {}

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]
