"""`mlx.core` on ember: arrays, MLX's functions and dtype rules, transforms, files."""

import math as _math

from . import (
    _conv,
    _cpu_math,
    _creation,
    _elementwise,
    _fp8,
    _lazy,
    _methods,
    _ops,
    _padding,
    _products,
    _quantize,
    _reductions,
    _sequences,
    _shapes,
    _sorting,
    distributed,
    fast,
    fft,
    linalg,
    random,
)
from ._array import ArrayAt, ArrayIterator, ArrayLike, array
from ._buffers import from_dlpack, get_array_buffer_size
from ._compile import async_eval, compile, disable_compile, enable_compile, eval
from ._creation import can_cast, isdtype, result_type
from ._custom import checkpoint, custom_function
from ._device import (
    Device,
    DeviceType,
    Stream,
    StreamContext,
    ThreadLocalStream,
    clear_streams,
    cpu,
    cuda,
    default_device,
    default_stream,
    device_count,
    device_info,
    gpu,
    is_available,
    metal,
    new_stream,
    new_thread_local_stream,
    new_thread_unsafe_stream,
    set_default_device,
    set_default_stream,
    stream,
    synchronize,
)
from ._device import check_stream as _check_stream
from ._dtypes import (
    Dtype,
    DtypeCategory,
    bfloat16,
    bool_,
    complex64,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    issubdtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._einsum import einsum_path
from ._export import FunctionExporter, export_function, exporter, import_function
from ._graph import depends, export_to_dot
from ._info import (
    clear_cache,
    finfo,
    get_active_memory,
    get_cache_memory,
    get_memory_limit,
    get_peak_memory,
    iinfo,
    reset_peak_memory,
    set_cache_limit,
    set_memory_limit,
    set_wired_limit,
)
from ._io import load, save, save_gguf, save_safetensors, savez, savez_compressed
from ._lazy import graph_size
from ._printing import PrintOptions, get_printoptions, printoptions, set_printoptions
from ._strict import strict as _binding_check
from ._transforms import grad, jvp, value_and_grad, vjp, vmap

_methods.install()


def _on_cpu(fn):
    """`fn`, recorded lazily (`_lazy`), refusing `stream=mx.gpu` as MLX's CPU build does
    and what MLX's binding refuses where it takes arrays only (`_strict`)."""
    return _lazy.lazy(_binding_check(getattr(fn, "__wrapped__", fn)), _check_stream)


for _module in (_ops, _reductions, _cpu_math, _elementwise, _shapes, _sequences, _products,
                _creation, _quantize, _fp8, _sorting, _padding):
    for _name in _module.__all__:
        globals()[_name] = _on_cpu(getattr(_module, _name))
for _name in ("conv1d", "conv2d", "conv3d", "conv_general", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d"):
    globals()[_name] = _on_cpu(getattr(_conv, _name))
divide = _on_cpu(_ops.divide_)
for _module in (linalg, fft):
    for _name in _module.__all__:
        setattr(_module, _name, _on_cpu(getattr(_module, _name)))

complexfloating = DtypeCategory.complexfloating
floating = DtypeCategory.floating
inexact = DtypeCategory.inexact
signedinteger = DtypeCategory.signedinteger
unsignedinteger = DtypeCategory.unsignedinteger
integer = DtypeCategory.integer
number = DtypeCategory.number
generic = DtypeCategory.generic

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
newaxis = None
matrix_norm = linalg.norm  # (MLX exports linalg.norm at the top level under this name too)
