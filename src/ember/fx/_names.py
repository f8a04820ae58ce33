"""How a graph names the functions it calls: the qualified name torch.fx prints for an
ember function (`torch.relu`, `torch._C._nn.gelu`, `torch.Tensor.add`), the argument form
torch's Python functions record (`_torch_tables`), and `torch_globals`, the object the
generated code reaches those names through."""

from __future__ import annotations

import builtins
import importlib
import inspect
import sys
import types
from typing import Any

from .. import _torch_function as _tf
from . import _torch_tables as tables

_NAMESPACES = ("ember", "ember.nn.functional", "ember.linalg", "ember.special", "ember.fft")
_index: dict[int, tuple[str, str]] = {}  # id(function) -> (namespace, public name)
# torch's qualified name -> the path the function has in ember's public API
_REVERSE = {v: k for k, v in tables.QUALIFIED.items()}


def torch_module(module: str) -> str:
    """`ember.nn.functional` as a program importing torch sees it."""
    if module == "ember" or module.startswith("ember."):
        return "torch" + module[len("ember"):]
    return module


def _build_index() -> None:
    for ns in _NAMESPACES:
        module = importlib.import_module(ns)
        names = list(getattr(module, "__all__", ())) + [n for n in vars(module) if n[:2] != "__"]
        for name in names:
            fn = module.__dict__.get(name)
            if fn is None or not callable(fn):
                continue
            for f in (fn, getattr(fn, "_torch_function_wrapped", None)):
                if f is not None:
                    _index.setdefault(id(f), (ns, name))


def public_path(target: Any) -> tuple[str, str] | None:
    """The (namespace, name) an ember public function is reached by, or None."""
    if isinstance(target, _tf.PublicFunction):
        return target.__module__, target._public
    if not _index:
        _build_index()
    found = _index.get(id(target))
    if found is None:
        inner = getattr(target, "_torch_function_wrapped", None)
        found = _index.get(id(inner)) if inner is not None else None
    return found


def qualified_name(target: Any) -> str:
    """The dotted name torch.fx prints for a call_function target."""
    name = getattr(target, "__name__", None)
    if name is not None and getattr(builtins, name, None) is target:
        return name
    found = public_path(target)
    if found is not None:
        ns, pub = found
        path = f"{torch_module(ns)}.{pub}"
        return tables.QUALIFIED.get(path, path)
    from .._tensor import Tensor

    # (after the namespaces: ember binds many functions as Tensor methods unchanged)
    if name is not None and _is_tensor_method(target, Tensor):
        return f"torch.Tensor.{name}"
    if isinstance(target, type):
        return f"{torch_module(target.__module__)}.{target.__qualname__}"
    if name == "<lambda>":
        try:
            name = inspect.getsource(target).split("=")[0].strip()
        except Exception as e:
            raise RuntimeError("Unable to represent lambda") from e
    module = getattr(target, "__module__", None)
    if module is None:
        raise RuntimeError(f"cannot find module for {target}")
    return f"{torch_module(module)}.{name}"


def _is_tensor_method(target: Any, tensor: type) -> bool:
    name = target.__name__
    held = tensor.__dict__.get(name)
    if held is None:
        return False
    return held is target or getattr(held, "_torch_function_wrapped", None) is target \
        or getattr(target, "_torch_function_wrapped", 0) is held


def call_name(target: Any) -> str:
    """The base of the node name a call of `target` gets (`gelu`, `log_sigmoid`)."""
    return qualified_name(target).rsplit(".", 1)[-1]


def handover(target: Any, args: tuple, kwargs: dict) -> tuple[str, Any, tuple, dict]:
    """How torch records a call of `target`: (op, target, args, kwargs), with the
    arguments in the form torch's Python function hands them over."""
    qual = qualified_name(target)
    method = tables.METHOD_FORMS.get(qual)
    if method is not None:
        return "call_method", method, args, kwargs
    form = tables.HANDOVER.get(qual)
    if form is None:
        return "call_function", target, args, kwargs
    fn = getattr(target, "_torch_function_wrapped", target)
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return "call_function", target, args, kwargs
    bound.apply_defaults()
    given = bound.arguments
    positional, keywords = form
    if any(p not in given for p in positional + keywords):
        # (ember names a parameter differently: match torch's by position)
        names = list(given)
        if len(names) != len(positional) + len(keywords):
            return "call_function", target, args, kwargs
        given = dict(zip(positional + keywords, given.values()))
    return ("call_function", target, tuple(given[p] for p in positional),
            {k: given[k] for k in keywords})


class _TorchPath:
    """`torch` (and `torch.nn.functional`, `torch._C._nn`, ...) in generated code: each
    attribute is the ember object of that torch name, looked up when the code runs (not
    cached: tracing and the `__torch_function__` protocol swap ember's functions)."""

    def __init__(self, path: str, module: types.ModuleType | None) -> None:
        self.__dict__["_path"] = path
        self.__dict__["_module"] = module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self._path}.{name}"
        if full in _REVERSE:
            return _resolve(_REVERSE[full])
        module = self._module
        value = getattr(module, name, _MISSING) if module is not None else _MISSING
        if value is _MISSING:
            sub = _TorchPath(full, sys.modules.get("ember" + full[len("torch"):]))
        elif isinstance(value, types.ModuleType):
            sub = _TorchPath(full, value)
        else:
            return value
        self.__dict__[name] = sub  # (namespaces are cached; what they hold is not)
        return sub

    def __repr__(self) -> str:
        return f"<module '{self._path}'>"


_MISSING = object()


def _resolve(public: str) -> Any:
    """The ember object at torch path `public` (`torch.nn.functional.gelu`)."""
    module_path, _, name = ("ember" + public[len("torch"):]).rpartition(".")
    return getattr(importlib.import_module(module_path), name)


def torch_globals() -> dict[str, Any]:
    """The globals generated code runs with (`torch` names ember's objects)."""
    import ember

    return {"torch": _TorchPath("torch", ember), "inf": float("inf"), "nan": float("nan"),
            "NoneType": type(None)}
