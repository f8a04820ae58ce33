"""Autocast: inside `with autocast("cpu")`, matmul-like ops run in bfloat16 and the
precision-sensitive ones (losses, reductions) in float32, as PyTorch's CPU policy does.

Ops opt in by calling `cast_for(policy, *tensors)` on their inputs: "lower" for the
matmul/conv/attention family, "fp32" for losses and other ops that need range, "promote"
for ops that take several floating inputs and must agree on one dtype (cat, stack).
`CPU_POLICY` lists, by PyTorch op name, the policy PyTorch 2.13's CPU autocast gives each op.

The state is PyTorch's, thread-local: per device type an enabled flag and a dtype, a nesting
depth counted by every region entered, and the weight cache: while a region is open, the
lower-precision copy of each float32 leaf that requires grad (a parameter) is made once and
reused, until the outermost region exits (`clear_autocast_cache`).
"""

from __future__ import annotations

import collections.abc
import functools
import threading
import warnings

from .. import _dtype as dt
from .._device import device as _device
from .._tensor import Tensor
from .._user_warnings import user_stacklevel

# PyTorch's default autocast dtype per device type it can autocast (others raise).
_DEFAULT_DTYPES = {
    "cpu": dt.bfloat16, "cuda": dt.float16, "xpu": dt.float16, "mps": dt.float16,
    "hpu": dt.bfloat16, "mtia": dt.float16, "maia": dt.bfloat16, "xla": dt.bfloat16,
    "ipu": dt.float16, "privateuseone": dt.float16, "hip": dt.float16,
}
_UNAVAILABLE = {"hip"}  # has a dtype slot but no autocast dispatch key
_UNKNOWN = "unknown device type for autocast in get_autocast_dispatch_key_from_device_type"

# What PyTorch 2.13's CPU autocast does to each op's floating inputs (the CPU lists of its
# autocast_mode.cpp, checked op by op against torch): "lower" casts to the region's dtype,
# "fp32" to float32, "promote" to the widest floating input. Ops not named run in their
# inputs' dtype. NOTE: nn.LSTM is not named, yet runs in the low dtype on the CPU: torch
# routes it through `mkldnn_rnn_layer`, which is (RNN and GRU follow from the linear layers
# they decompose into).
CPU_POLICY = {
    **dict.fromkeys((
        "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm",
        "_addmm_activation", "addbmm", "linear", "matmul", "conv_tbc", "mkldnn_rnn_layer",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
        "scaled_dot_product_attention", "_native_multi_head_attention"), "lower"),
    **dict.fromkeys((
        "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
        "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky",
        "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
        "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss",
        "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
        "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
        "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
        "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft",
        "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
        "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky",
        "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
        "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve",
        "fake_quantize_per_tensor_affine", "geqrf",
        "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
        "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
        "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
        "linalg_lstsq", "linalg_inv_ex"), "fp32"),
    **dict.fromkeys(("stack", "cat", "index_copy"), "promote"),
}


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = False  # CPU's flag and dtype, read on every op
        self.dtype = dt.bfloat16
        self.other: dict = {}  # device type -> [enabled, dtype] for the others
        self.nesting = 0
        self.cache_enabled = True
        self.cache: dict = {}  # id(leaf) -> (leaf, its low-precision copy)


_state = _State()


def _device_type(device_type: str) -> str:
    """PyTorch's parse: the type of a device string, raising its error for unknown ones."""
    if not isinstance(device_type, str):
        raise TypeError(f"expected a device type string, got {type(device_type).__name__}")
    return _device(device_type).type


def _slot(device_type: str, unknown: str = _UNKNOWN) -> list:
    kind = _device_type(device_type)
    if kind not in _DEFAULT_DTYPES or kind in _UNAVAILABLE:
        raise RuntimeError(unknown)
    return _state.other.setdefault(kind, [False, _DEFAULT_DTYPES[kind]])


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is active for `device_type` (no argument means CUDA)."""
    if device_type is None or device_type == "cuda":
        return _state.other.get("cuda", (False,))[0]
    if device_type == "cpu":
        return _state.enabled
    return _slot(device_type)[0]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """`set_autocast_enabled(device_type, enabled)`; the one-argument form is CUDA's."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if _device_type(device_type) == "cpu":
        _state.enabled = bool(enabled)
    else:
        _slot(device_type)[0] = bool(enabled)


def get_autocast_dtype(device_type: str) -> dt.dtype:
    if device_type == "cpu":
        return _state.dtype
    kind = _device_type(device_type)
    if kind not in _DEFAULT_DTYPES:
        raise RuntimeError("unsupported scalarType")
    return _state.other.get(kind, (False, _DEFAULT_DTYPES[kind]))[1]


def set_autocast_dtype(device_type: str, dtype: dt.dtype) -> None:
    if _device_type(device_type) == "cpu":
        _state.dtype = dtype
    else:
        _slot(device_type)[1] = dtype


def is_any_autocast_enabled() -> bool:
    """Whether autocast is on for any device type (`torch._C._is_any_autocast_enabled`)."""
    return _state.enabled or any(slot[0] for slot in _state.other.values())


def is_autocast_cpu_enabled() -> bool:
    return _state.enabled


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _state.enabled = bool(enabled)


def get_autocast_cpu_dtype() -> dt.dtype:
    return _state.dtype


def set_autocast_cpu_dtype(dtype: dt.dtype) -> None:
    _state.dtype = dtype


def _device_accessors(kind: str):
    return (lambda: is_autocast_enabled(kind), lambda enabled: set_autocast_enabled(kind, enabled),
            lambda: get_autocast_dtype(kind), lambda dtype: set_autocast_dtype(kind, dtype))


# PyTorch's older per-device names (gpu means CUDA)
(_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype) = _device_accessors("cuda")
(is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype,
 set_autocast_ipu_dtype) = _device_accessors("ipu")
(is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype,
 set_autocast_xla_dtype) = _device_accessors("xla")


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _state.cache.clear()


def is_autocast_available(device_type: str) -> bool:
    kind = _device_type(device_type)
    return kind in _DEFAULT_DTYPES and kind not in _UNAVAILABLE


def _cast_one(t: Tensor, to: dt.dtype) -> Tensor:
    """`t.to(to)`, through the weight cache when PyTorch's rule says so: a float32 leaf that
    requires grad, not a view, cast to the region's own dtype, with the cache enabled."""
    if (to is _state.dtype and t._dtype is dt.float32 and t._requires_grad
            and t._grad_fn is None and t._base is None and _state.cache_enabled):
        hit = _state.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        low = t.to(to)
        _state.cache[id(t)] = (t, low)  # holding `t` keeps its id from being reused
        return low
    return t.to(to)


def _eligible(t) -> bool:
    d = getattr(t, "_dtype", None)
    return d is not None and d.is_floating_point and d is not dt.float64 and \
        t.device.type == "cpu"


def in_region() -> bool:
    """Whether an autocast region is on (an op that keeps its checks' results by the
    operands' dtypes takes every check inside one)."""
    return _state.enabled


def cast_for(policy: str, *tensors):
    """The inputs as an autocast region wants them for an op of this policy.

    "lower": floating tensors other than float64 go to the region's dtype (bfloat16 on
    the CPU by default); "fp32": float16/bfloat16 tensors go to float32; "promote": all
    floating tensors other than float64 go to float32 if any is float32, else to the
    region's dtype. Anything else (None, numbers, integer tensors) passes through. Outside
    a region this returns `tensors` untouched, so ops can call it unconditionally.
    """
    if not _state.enabled:
        return tensors
    if policy not in ("lower", "fp32", "promote"):
        raise ValueError(f"unknown autocast policy {policy!r}")
    return _cast_call(policy, tensors, {})[0]


def cast_op(name: str, *tensors):
    """`cast_for` with the policy `CPU_POLICY` gives op `name` (PyTorch's op name)."""
    if not _state.enabled:
        return tensors
    policy = CPU_POLICY.get(name)
    return tensors if policy is None else cast_for(policy, *tensors)


def _cast_call(policy: str, args: tuple, kwargs: dict):
    """`args` and `kwargs` with their tensors (also those inside lists and tuples) cast by
    `policy`, the target chosen over all of them (so "promote" sees every input)."""
    tensors = [v for a in (*args, *kwargs.values())
               for v in (a if isinstance(a, (list, tuple)) else (a,)) if _eligible(v)]
    if policy == "lower":
        to = _state.dtype
    elif policy == "fp32":
        to = dt.float32
    else:
        to = dt.float32 if any(t._dtype is dt.float32 for t in tensors) else _state.dtype
    if all(t._dtype is to for t in tensors):
        return args, kwargs

    def cast(a):
        if isinstance(a, (list, tuple)) and any(_eligible(v) for v in a):
            return type(a)(cast(v) for v in a)
        return _cast_one(a, to) if _eligible(a) and a._dtype is not to else a

    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


def autocast_op(name: str):
    """Decorator for the function of PyTorch op `name` (a key of `CPU_POLICY`): inside a CPU
    autocast region, its floating tensor arguments are cast by the op's policy and its body
    runs with autocast off, as PyTorch's autocast kernel redispatches below autocast (so a
    float32 op built from matmuls keeps its matmuls in float32). A call with `out=` is
    another PyTorch overload, on no list: it runs as it is."""
    policy = CPU_POLICY[name]

    def decorate(fn):
        @functools.wraps(fn)
        def autocast_wrapper(*args, **kwargs):
            if not _state.enabled or kwargs.get("out") is not None:
                return fn(*args, **kwargs)
            args, kwargs = _cast_call(policy, args, kwargs)
            _state.enabled = False
            try:
                return fn(*args, **kwargs)
            finally:
                _state.enabled = True

        return autocast_wrapper

    return decorate


class autocast:
    """`with autocast("cpu", dtype=bfloat16)`; also usable as a decorator."""

    def __init__(self, device_type: str, dtype: dt.dtype | None = None,
                 enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        if device_type == "privateuseone":
            raise AssertionError(
                "Tried to use AMP with the `privateuseone` backend, but the backend has not "
                "registered a module or  the module miss some necessary funcs. The backend "
                "should register a module by `torch._register_device_module`, and the module "
                "must have these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        if enabled:
            if device_type == "cuda":
                from ..backends.cuda import is_available

                if not is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=user_stacklevel())
                    enabled = False
            elif self.fast_dtype not in (dt.bfloat16, dt.float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              f"{dt.bfloat16}, {dt.float16} currently.",
                              stacklevel=user_stacklevel())
                enabled = False
        self._enabled = enabled

    @property
    def device_type(self) -> str:  # ember's earlier name for `device`
        return self.device

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _cast(value, device_type: str, dtype: dt.dtype):
    """`value` with its floating tensors (not float64) on `device_type` cast to `dtype`,
    through lists, tuples, dicts and other iterables (PyTorch's `custom_fwd` helper)."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and \
            value.dtype is not dt.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: dt.dtype | None = None):
    """Decorator for a custom Function's `forward(ctx, ...)`. With `cast_inputs`, inside an
    autocast region for `device_type` the floating inputs are cast to it and `forward` runs
    with autocast disabled; `custom_bwd` then runs `backward` under the same state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not in_region:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom Function's `backward`: runs it with the autocast state its
    `custom_fwd` forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
