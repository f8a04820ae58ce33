"""Process-level settings and compatibility names a CPU PyTorch program touches:
threads, matmul precision, `compile`, legacy tensor types, `typename`."""

from __future__ import annotations

import math
import os
import warnings

from . import _algorithms, _user_warnings
from . import _dtype as dt
from ._tensor import Tensor
from ._user_warnings import user_stacklevel
from .amp.autocast_mode import (
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
)

# The constants PyTorch re-exports (`torch.pi`, `x[:, torch.newaxis]`).
pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None

_threads = {"inter": os.cpu_count() or 1, "inter_set": False}
_matmul_precision = _algorithms.matmul_precision
_deterministic = _algorithms.deterministic


def set_flush_denormal(mode: bool) -> bool:
    """Flush denormal floats to zero (results and inputs) on the calling thread, as PyTorch
    sets the CPU's control word for it; True where the CPU has the switch (x86-64, AArch64)
    and a C compiler built it, else False (PyTorch's answer on a CPU without it). Like
    PyTorch's, it reaches only this thread: kernels run on pool threads keep IEEE denormals."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    from .native import fpu

    return fpu.set_flush_denormal(mode)


def set_num_threads(n: int) -> None:
    """Size ember's kernel thread pools (large elementwise kernels and matrix products are
    shared out over them, and the native kernels' pool); 1 runs every kernel on the calling
    thread. OpenBLAS's own pool,
    which NumPy sizes at start-up, is left as it is."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from . import native
    from .ops import _parallel

    _parallel.set_workers(n)
    native.set_num_threads(n)


def get_num_threads() -> int:
    from .ops import _parallel

    return _parallel.workers()


def set_num_interop_threads(n: int) -> None:
    """Size the inter-op pool, which PyTorch allows once a process, before any parallel work
    (ember runs no inter-op pool, so only a second call is refused, as PyTorch refuses it)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _threads["inter_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _threads["inter"], _threads["inter_set"] = n, True


def get_num_interop_threads() -> int:
    return _threads["inter"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision (ember's products are full float32 whatever it
    says). An unknown name warns and changes nothing, as PyTorch does."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=user_stacklevel())
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag; ember's CPU kernels are deterministic either way, but with it on
    `empty` and `resize_` fill the memory they hand out (`utils.deterministic`)."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic["on"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """`use_deterministic_algorithms` by level: 0 "default" off, 1 "warn", 2 "error"."""
    if not isinstance(debug_mode, int | str):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _deterministic["on"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    """Make the warnings PyTorch gives once per process fire every time (and back)."""
    _user_warnings.warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _user_warnings.warn_always[0]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """`autograd.set_detect_anomaly` without the context manager, as torch's binding."""
    from .autograd import anomaly

    anomaly.set_detect_anomaly(enabled, check_nan)


def is_anomaly_enabled() -> bool:
    from .autograd import anomaly

    return anomaly.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    from .autograd import anomaly

    return anomaly.is_anomaly_check_nan_enabled()


def get_default_device():
    """The device factory functions use when given none (`set_default_device`, or the
    innermost `with ember.device(...)` block)."""
    from ._device import default_device

    return default_device()


def set_default_device(device) -> None:
    """Make factories given no device create on `device` (None restores the CPU). A device
    this build lacks is refused now when it has no index (PyTorch asks the backend for its
    current one), and by the first factory when it has one ("cuda:0"), as PyTorch does."""
    from ._device import device as _device
    from ._device import set_default

    if device is not None and _device(device).type not in ("cpu", "meta") \
            and _device(device).index is None:
        from .backends import refuse_unavailable

        refuse_unavailable(_device(device), factory=True)
    set_default(device)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",
            mode=None, options=None, disable: bool = False):
    """Capture `model` (a function or an nn.Module) into graphs and run them compiled
    (`ember.graph`; see README "Compile"). Used bare or with arguments as a decorator. A
    module comes back wrapped as PyTorch wraps it (`OptimizedModule`, `_orig_mod`). Bad
    arguments raise what PyTorch raises (`_dynamo/backends.py`)."""
    backend = "inductor" if backend is None else backend
    if model is None:
        def decorate(m):
            if m is None:
                raise RuntimeError("Model can't be None")
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return decorate
    from ._dynamo.backends import check_arguments

    check_arguments(model, dynamic=dynamic, backend=backend, mode=mode, options=options,
                    disable=disable)
    if disable:
        return model
    _first_compile_patches()
    from .graph.compiled import Compiled
    from .nn import Module

    kw = {"fullgraph": fullgraph, "dynamic": dynamic, "backend": backend, "mode": mode,
          "options": options}
    if isinstance(model, Module):
        from ._dynamo.eval_frame import OptimizedModule

        return OptimizedModule(model, Compiled(model._call_uncompiled, **kw))
    return Compiled(model, **kw)


_PATCHED: list = []


def _first_compile_patches() -> None:
    """NOTE: PyTorch's first `torch.compile` of anything (not `disable=True`) turns the
    distributions' default argument and sample validation off for the rest of the process
    (torch._dynamo's `TorchPatcher.patch`, run once); ember does the same, so a program
    that compiles its policy and later builds `Normal(0.0, -1.0)` or scores a value out of
    the support behaves as under torch (no ValueError unless `validate_args=True`)."""
    if _PATCHED:
        return
    _PATCHED.append(True)
    from .distributions import Distribution

    Distribution.set_default_validate_args(False)


def typename(obj) -> str:
    if isinstance(obj, Tensor):
        from .ops._common import type_name

        return f"torch.{type_name(obj.dtype)}Tensor"
    module = type(obj).__module__
    return f"{module}.{type(obj).__qualname__}" if module != "builtins" else \
        type(obj).__qualname__


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> bool:
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_inference(input: Tensor) -> bool:
    """Whether `input` was made under `inference_mode` (it then has no version counter)."""
    from .ops._arg_parser_text import need_tensor

    need_tensor(input, "is_inference")
    return input.is_inference()


_WARNED_TENSOR_TYPE: list = []


def set_default_tensor_type(t) -> None:
    if not _WARNED_TENSOR_TYPE:  # (PyTorch warns once a process)
        _WARNED_TENSOR_TYPE.append(True)
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=user_stacklevel())
    d = getattr(t, "_ember_dtype", None)
    if d is None:
        from .ops.legacy_constructors import legacy_type_dtype

        d = legacy_type_dtype(t) if isinstance(t, str) else None
    if d is None or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dt.set_default_dtype(d)


class _LegacyType(type):
    """`isinstance(t, FloatTensor)` checks the dtype; `FloatTensor(...)` constructs."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._ember_dtype and \
            obj.device.type == "cpu"

    def __call__(cls, *args, device=None):
        from .ops.legacy_constructors import legacy_new

        return legacy_new(cls._ember_dtype, *args, device=device)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _legacy(name: str, d: dt.dtype):
    return _LegacyType(name, (), {"_ember_dtype": d, "dtype": d, "is_cuda": False})


FloatTensor = _legacy("FloatTensor", dt.float32)
DoubleTensor = _legacy("DoubleTensor", dt.float64)
HalfTensor = _legacy("HalfTensor", dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dt.bfloat16)
LongTensor = _legacy("LongTensor", dt.int64)
IntTensor = _legacy("IntTensor", dt.int32)
ShortTensor = _legacy("ShortTensor", dt.int16)
CharTensor = _legacy("CharTensor", dt.int8)
ByteTensor = _legacy("ByteTensor", dt.uint8)
BoolTensor = _legacy("BoolTensor", dt.bool_)

__all__ = [
    "pi", "e", "inf", "nan", "newaxis",
    "set_num_threads", "get_num_threads", "set_flush_denormal", "set_num_interop_threads",
    "get_num_interop_threads",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "compile", "typename",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_warn_always", "is_warn_always_enabled",
    "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "is_autocast_enabled",
    "is_autocast_cpu_enabled", "get_autocast_dtype", "get_autocast_cpu_dtype",
    "get_default_device", "set_default_device",
    "is_floating_point", "is_complex", "is_nonzero", "is_inference", "set_default_tensor_type",
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
]
