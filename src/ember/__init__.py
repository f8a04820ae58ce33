"""ember: a deep-learning framework you can read end to end, with PyTorch's API as its face.

`import ember as torch` runs ordinary PyTorch code: strided tensors over flat
storages, broadcasting, a tape-based autograd engine, and nn / optim / data on top.
"""

from . import _dtype, _public_names
from ._device import device
from ._dtype import (
    can_cast,
    dtype,
    finfo,
    get_default_dtype,
    iinfo,
    promote_types,
    set_default_dtype,
)
from ._layout import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._tensor import Size, Tensor, is_tensor

bool = _dtype.bool_
uint8 = _dtype.uint8
int8 = _dtype.int8
int16 = _dtype.int16
int32 = _dtype.int32
int64 = _dtype.int64
float16 = _dtype.float16
bfloat16 = _dtype.bfloat16
float32 = _dtype.float32
float64 = _dtype.float64
complex64 = _dtype.complex64
complex128 = _dtype.complex128
float8_e4m3fn = _dtype.float8_e4m3fn
float8_e5m2 = _dtype.float8_e5m2
uint16 = _dtype.uint16
uint32 = _dtype.uint32
uint64 = _dtype.uint64
float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128

from . import autograd  # noqa: E402
from .autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ._aliases import with_aliases as _with_aliases  # noqa: E402
from .ops import MODULES as _OP_MODULES  # noqa: E402

for _m in _OP_MODULES:
    for _name in _m.__all__:
        globals()[_name] = _with_aliases(getattr(_m, _name), _name)
del _m, _name

from ._bind import bind_methods as _bind_methods  # noqa: E402

_bind_methods()

from .ops import function_forms as _function_forms  # noqa: E402

globals().update(_function_forms.install())

from . import cuda, random  # noqa: E402
from . import fft, linalg  # noqa: E402
from .linalg.lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from . import nn  # noqa: E402
from .nn import _aten_forms  # noqa: E402

for _name in _aten_forms.__all__:  # (torch.embedding, torch.bilinear, ...: ATen signatures)
    globals()[_name] = _with_aliases(getattr(_aten_forms, _name), _name)
del _name
from .nn._sync_kernels import *  # noqa: E402,F403  (torch.batch_norm_stats ...)
from ._higher_order_ops import cond, while_loop  # noqa: E402
from . import func  # noqa: E402
from .func import vmap  # noqa: E402
from . import distributions  # noqa: E402
from .distributions.gamma import _sample_dirichlet, _standard_gamma  # noqa: E402
from . import optim  # noqa: E402
from . import utils  # noqa: E402
from . import _dynamo, accelerator, amp, backends, compiler, distributed, jit, onnx  # noqa: E402
from . import _C, overrides  # noqa: E402  (the __torch_function__ protocol)
from . import quasirandom  # noqa: E402
from . import storage  # noqa: E402
from . import __future__  # noqa: E402  (torch.__future__'s module-conversion switches)
from .storage import *  # noqa: E402,F403
from .storage import FloatStorage as Storage  # noqa: E402  (PyTorch's alias)
from ._runtime import *  # noqa: E402
from .ops import creation as _creation  # noqa: E402
from .ops.creation import frombuffer  # noqa: E402
globals()["scalar_tensor"] = _with_aliases(_creation.scalar_tensor_api, "scalar_tensor")
from ._spectral import istft, stft  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_gpu_dtype,
    get_autocast_ipu_dtype,
    get_autocast_xla_dtype,
    is_autocast_cache_enabled,
    is_autocast_ipu_enabled,
    is_autocast_xla_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
    set_autocast_ipu_dtype,
    set_autocast_ipu_enabled,
    set_autocast_xla_dtype,
    set_autocast_xla_enabled,
)
from .random import (  # noqa: E402
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .serialization import load, save  # noqa: E402
from ._errors import OutOfMemoryError  # noqa: E402
from ._asserts import _assert  # noqa: E402
from .utils.dlpack import to_dlpack  # noqa: E402
from ._device_module import get_device_module  # noqa: E402


def result_type(tensor1, tensor2) -> dtype:
    """The dtype an elementwise op on these two operands produces (PyTorch's rules)."""
    return _dtype.result_type(tensor1, tensor2)


def numel(input: Tensor) -> int:
    if not isinstance(input, Tensor):
        from .ops._arg_parser_text import not_tensor

        raise not_tensor("numel", "input", 1, input)
    return input.numel()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    from ._printing import set_printoptions as _set

    _set(precision, threshold, edgeitems, linewidth, profile, sci_mode)


def __getattr__(name: str):
    from .compat import submodule_or_missing

    return submodule_or_missing(__name__, name)


__version__ = "0.1.0"

from .functional import chain_matmul  # noqa: E402  (torch.functional's own: deprecated, kept)

# (last: from here on, `range` in this module is torch.range, not the builtin)
globals()["range"] = _with_aliases(_creation.range_, "range")
_public_names.name_as_published(globals(), {"to_dlpack": "_to_dlpack"})
_public_names.name_as_published(Tensor)
