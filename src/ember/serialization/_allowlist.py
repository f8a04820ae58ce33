"""The allowlist: which globals a checkpoint's pickle may name and what each resolves
to (`_find_global`: a stand-in from `_standins.py`, a dtype, a marker, or a refusal),
what the unpickler may call, BUILD or NEWOBJ (`_call`, `_build`, `_newobj`), and the
user's own additions (PyTorch's `add_safe_globals`, `get_safe_globals`,
`clear_safe_globals` and the `safe_globals` context manager).

An `nn.Module` class is never called: modules are rebuilt as pickle rebuilds them,
`object.__new__` plus their saved state (`__setstate__`), so a file cannot make a
constructor allocate whatever sizes it names.
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import inspect
import sys
from collections import OrderedDict

import numpy as np

from .. import _dtype as dt
from . import _numpy
from ._dtypes import _STORAGE_CLASSES, _UNSUPPORTED_DTYPES, _V3_NUMPY, _dtype_named
from ._limits import describe
from ._standins import (
    _PARAMETER_TYPE,
    _TENSOR_TYPE,
    _bytearray,
    _bytes_empty,
    _collection,
    _complex,
    _counter,
    _device_of,
    _encode,
    _get_layout,
    _ordered_dict,
    _rebuild_from_type_v2,
    _rebuild_meta_tensor_no_storage,
    _rebuild_parameter,
    _rebuild_parameter_with_state,
    _rebuild_tensor_v2,
    _rebuild_tensor_v3,
    _size,
    _StorageType,
)
from ._unpickler import UnpicklingError

_CALLABLE = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "collections.OrderedDict": _ordered_dict,
    "collections.Counter": _counter,
    "builtins.set": _collection(set),
    "builtins.complex": _complex,
    "builtins.bytearray": _bytearray,
    "builtins.bytes": _bytes_empty,
    "_codecs.encode": _encode,
    "torch.Size": _size,
    "torch.device": _device_of,
    "torch.serialization._get_layout": _get_layout,
}
_CALLABLES = set(map(id, _CALLABLE.values())) | set(map(id, _numpy.CALLABLES))
_KNOWN_UNSUPPORTED = {
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "tensors rebuilt from NumPy",
    "torch._utils._rebuild_xla_tensor": "XLA tensors",
    "torch._tensor._rebuild_from_type": "tensor subclasses",
}
_NEVER = ("os", "posix", "nt", "sys", "subprocess", "importlib", "runpy", "shutil", "socket",
          "pty", "ctypes", "code", "pickle", "marshal", "types")
_NEVER_BUILTINS = {"eval", "exec", "compile", "getattr", "setattr", "delattr", "__import__",
                   "open", "input", "globals", "locals", "vars", "breakpoint", "apply",
                   "execfile", "memoryview", "type", "object", "super", "classmethod"}
_safe: dict[str, object] = {}


def _find_global(module: str, name: str):
    if len(module) + len(name) > 256:
        raise UnpicklingError(f"refusing global {describe(module)}.{describe(name)}: a name "
                              "that long is no global a checkpoint names")
    # Python 2's names, which protocol-2 pickles use (`__builtin__.xrange` is `range`), read
    # as pickle reads them.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    else:
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    full = f"{module}.{name}"
    top = module.split(".")[0]
    if top in _NEVER or module == "builtins" and name in _NEVER_BUILTINS:
        raise UnpicklingError(f"refusing global {full}: a checkpoint never needs it")
    if full in _CALLABLE:
        return _CALLABLE[full]
    if module in ("torch", "torch.storage", "torch.cuda"):
        if name in _STORAGE_CLASSES:
            return _StorageType(_STORAGE_CLASSES[name])
        if name == "UntypedStorage":
            return _StorageType(None)
        if name in dt.BY_NAME or name in _V3_NUMPY:
            return _dtype_named(name)
        if name in _UNSUPPORTED_DTYPES:
            raise UnpicklingError(f"dtype torch.{name} is not supported by ember")
    if full in ("torch.Tensor", "torch._tensor.Tensor"):
        return _TENSOR_TYPE
    if full == "torch.nn.parameter.Parameter":
        return _PARAMETER_TYPE
    if full in _KNOWN_UNSUPPORTED:
        raise UnpicklingError(f"{_KNOWN_UNSUPPORTED[full]} ({full}) are not supported by "
                              "ember.load")
    if full in _safe:
        return _safe[full]
    if _whole_models[0] and full in _numpy.GLOBALS:  # torch loads these unless weights_only
        return _numpy.GLOBALS[full]
    if _whole_models[0] and full == "collections.defaultdict":  # (an optimizer's state)
        _safe[full] = _defaultdict
        return _defaultdict
    if _whole_models[0] and module == "builtins" and name in _PLAIN_TYPES:
        return _PLAIN_TYPES[name]  # (a defaultdict's factory)
    if _whole_models[0] and (cls := _imported_module_class(module, name)) is not None:
        _safe[full] = cls  # for this load only (load() restores the allowlist)
        return cls
    if _whole_models[0]:
        raise UnpicklingError(
            f"refusing global {full}: ember.load builds only tensors, containers, numbers "
            "and strings. If you trust this file and the class, allow it with "
            "ember.serialization.add_safe_globals([...])")
    raise UnpicklingError(_WEIGHTS_ONLY_REFUSAL.format(full=full))


# NOTE: torch's words for a global that `weights_only` loading does not allow (programs
# print them), including its bold ANSI span.
_WEIGHTS_ONLY_REFUSAL = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In "
    "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
    "check the recommended steps in the following error message.\n\tWeightsUnpickler error: "
    "Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
    "`torch.serialization.add_safe_globals([{full}])` or the "
    "`torch.serialization.safe_globals([{full}])` context manager to allowlist this global if "
    "you trust this class/function.\n\nCheck the documentation of torch.load to learn more "
    "about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html.")


_whole_models = [False]


_PLAIN_TYPES = {t.__name__: t for t in (dict, list, set, tuple, int, float)}


def _defaultdict(factory=None):
    """collections.defaultdict as a whole-object checkpoint names it (an optimizer's state),
    with a container or number type as its factory, never a function from the file."""
    from collections import defaultdict

    if factory not in (None, dict, list, set, tuple, int, float, OrderedDict):
        raise UnpicklingError(f"refusing defaultdict with factory {_name_of(factory)}")
    return defaultdict(factory)


def _imported_module_class(module: str, name: str):
    """The nn.Module subclass `module.name` if the program has already imported it, else None.

    `load(..., weights_only=False)` of a whole pickled model (or optimizer, or scheduler)
    names its classes; they are code the program itself loaded, so rebuilding them runs
    nothing from the file.
    """
    obj = sys.modules.get(module)
    for part in name.split("."):
        # NOTE: static lookup: no module __getattr__ (lazy imports) or property runs.
        obj = inspect.getattr_static(obj, part, None)
    return obj if _is_module_class(obj) else None


def _name_of(x) -> str:
    """A global's dotted name if it is a class or function, else a short description."""
    if isinstance(x, type) or callable(x) and hasattr(x, "__qualname__"):
        return f"{getattr(x, '__module__', '?')}.{x.__qualname__}"[:200]
    return describe(x)


def _is_module_class(obj) -> bool:
    """A class a whole-object checkpoint rebuilds from saved state: a module, an optimizer
    or a learning-rate scheduler (torch.save of a training run's objects), or one of the
    hook objects `nn.utils` leaves in a module's hook dicts (a pruning method, weight norm,
    spectral norm and its state-dict hooks), which a pickled model carries with it."""
    if not isinstance(obj, type):
        return False
    from ..nn.modules.module import Module
    from ..nn.utils.prune import BasePruningMethod
    from ..nn.utils.spectral_norm import (
        SpectralNorm,
        SpectralNormLoadStateDictPreHook,
        SpectralNormStateDictHook,
    )
    from ..nn.utils.weight_norm import WeightNorm
    from ..optim.lr_scheduler_base import LRScheduler
    from ..optim.optimizer import Optimizer

    return issubclass(obj, (Module, Optimizer, LRScheduler, BasePruningMethod, WeightNorm,
                            SpectralNorm, SpectralNormLoadStateDictPreHook,
                            SpectralNormStateDictHook))


def _call(fn, args):
    if _is_module_class(fn):
        raise UnpicklingError(
            f"refusing to call the constructor of {fn.__module__}.{fn.__qualname__}: "
            "ember.load rebuilds a module from its saved state (NEWOBJ + BUILD, as pickle "
            "writes it), never by running its constructor with arguments from the file")
    if id(fn) in _CALLABLES or any(fn is v for v in _safe.values()):
        try:
            return fn(*args)
        except UnpicklingError:
            raise
        except (TypeError, ValueError) as e:
            raise UnpicklingError(f"bad arguments in checkpoint: {str(e)[:200]}") from None
    if isinstance(fn, _StorageType):
        raise UnpicklingError("refusing to call a storage class: storages come only from "
                              "the file's storage records")
    raise UnpicklingError(f"refusing to call {_name_of(fn)}: only the rebuild functions and "
                          "containers a checkpoint needs (and allowlisted globals) are called")


def _build(obj, state) -> None:
    if type(obj) is OrderedDict and isinstance(state, dict) and set(state) <= {"_metadata"}:
        for k, v in state.items():
            setattr(obj, k, v)
        return
    if any(type(obj) is v for v in _safe.values()):
        # As pickle does: the class's own __setstate__ if it has one, else the instance dict.
        setstate = getattr(obj, "__setstate__", None)
        if isinstance(state, dict) and any(type(k) is not str for k in state):
            raise UnpicklingError(f"cannot restore state of {type(obj).__name__}: attribute "
                                  "names must be strings")
        if setstate is not None:
            setstate(state)
        elif isinstance(state, dict):
            obj.__dict__.update(state)
        else:
            raise UnpicklingError(f"cannot restore state of {type(obj).__name__}")
        return
    if _whole_models[0] and type(obj) is np.ndarray:  # made by `_numpy._reconstruct`
        return _numpy.set_array_state(obj, state)
    if _whole_models[0] and isinstance(obj, np.dtype):  # made by `_numpy._dtype`: a copy
        return _numpy.set_dtype_state(obj, state)
    raise UnpicklingError(f"refusing BUILD on a {type(obj).__name__}: only an OrderedDict's "
                          "_metadata may be restored that way")


def _newobj(cls, args):
    if isinstance(cls, type) and any(cls is v for v in _safe.values()):
        if _is_module_class(cls):
            if args:
                raise UnpicklingError(
                    f"refusing NEWOBJ of {cls.__module__}.{cls.__qualname__} with arguments: "
                    "a module is rebuilt from its saved state, never by a constructor or "
                    "__new__ given values from the file")
            return object.__new__(cls)
        return cls.__new__(cls, *args)
    raise UnpicklingError(f"refusing NEWOBJ of {_name_of(cls)}: only classes allowlisted with "
                          "ember.serialization.add_safe_globals may be instantiated")


# --- user allowlist (PyTorch's add_safe_globals) -----------------------------------------------

def add_safe_globals(safe_globals) -> None:
    """Allow checkpoints to name these classes or functions (objects, or (object, "module.name")
    pairs). ember.load will call them with the file's arguments: list only what you trust."""
    for item in safe_globals:
        obj, name = item if isinstance(item, tuple) else (item, None)
        name = name or f"{obj.__module__}.{obj.__qualname__}"
        module, _, short = name.rpartition(".")
        if module.split(".")[0] in _NEVER or module == "builtins" and short in _NEVER_BUILTINS:
            raise ValueError(f"{name} can never be allowed in a checkpoint")
        _safe[name] = obj


def get_safe_globals() -> list:
    return list(_safe.values())


def clear_safe_globals() -> None:
    _safe.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    """Allow these globals inside the `with` block only."""
    saved = dict(_safe)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _safe.clear()
        _safe.update(saved)
