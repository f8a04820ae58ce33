"""Functional forms of the dense layers: linear, bilinear, dropout, embedding, normalisation,
distances and attention.

All are compositions of ember ops except `embedding` (a primitive in
`ember.ops.nn_ops`). Dropout draws its mask exactly as PyTorch's CPU kernel does
(`empty_like(x).bernoulli_(1 - p)`, then `div_(1 - p)`), so seeded runs match.
"""

from __future__ import annotations

import math
import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ..._view import broadcast_shapes
from ...amp.autocast_mode import autocast_op, cast_for
from ...ops import one_hot as one_hot_plain
from ...ops._arg_parser_text import need_int, need_tensor, need_tensors, touch_then_check
from ...ops._common import c_type_name, type_name
from ...ops.attention import attention_prim
from ...ops.batch_norm import batch_norm_stats, update_running
from ...ops.bernoulli import bernoulli_noise, dropout_mask
from ...ops.composite import pdist
from ...ops.group_norm import group_norm_prim
from ...ops.layer_norm import check_affine as check_layer_norm_affine
from ...ops.layer_norm import layer_norm_prim
from ...ops.matmul import addmm
from ...ops.nn_ops import expect_device
from ...ops.norm_plain import batch_norm_eval, batch_norm_eval_affine, normalized
from ...ops.norm_plain import group_norm as group_norm_plain
from ...ops.norm_plain import rms_norm as rms_norm_plain
from ...ops.registry import bind, rename_node, saves
from ...ops.views import view_, view_p
from ..attention import SDPBackend, choose_cpu_backend
from ..attention.bias import CausalBias
from .norm_checks import (
    check_affine_dtypes,
    check_batch_norm_dtypes,
    check_group_norm_affine,
    check_instance_norm_affine,
    check_norm_kernel_dtypes,
    check_rms_norm_inputs,
    normalized_shape_arg,
)

__all__ = [
    "linear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "one_hot", "layer_norm",
    "group_norm", "rms_norm", "batch_norm", "instance_norm", "normalize", "cosine_similarity",
    "pairwise_distance", "pdist", "scaled_dot_product_attention"
]


def _not_tensor(fname: str, *args, optional: tuple = ("bias",)) -> None:
    """PyTorch's argument-parser TypeError for the first (name, value) that is not a Tensor
    (None passes for the `optional` ones)."""
    need_tensors(fname, *((name, i + 1, v) for i, (name, v) in enumerate(args)),
                 optional=optional)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias (`addmm` for 2-D inputs with a bias)."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)) or \
            not (bias is None or isinstance(bias, Tensor)):
        _not_tensor("linear", ("input", input), ("weight", weight), ("bias", bias))
    input, weight, bias = cast_for("lower", input, weight, bias)
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if input.dim() > 0 and bias is not None and input.is_contiguous() and bias.is_contiguous():
        # As PyTorch: the leading dims fold into the rows of one addmm (a view each way; a
        # 1-D input is one row, so `model(x)` of one sample ends in ViewBackward0 too).
        # (the row count is explicit: -1 is ambiguous when the inner size is 0)
        # (views by their primitive: the sizes are ints already, the views exist)
        lead = tuple(input._shape[:-1])
        rows = math.prod(lead)
        out = addmm(bias, bind(view_p, input, fn=view_, size=(rows, input._shape[-1])),
                    weight.t())
        return bind(view_p, out, fn=view_, size=lead + tuple(out._shape[-1:]))
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


# --- dropout --------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _multiply(input: Tensor, noise: Tensor, inplace: bool) -> Tensor:
    return input.mul_(noise) if inplace else input * noise


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    """PyTorch's CPU dropout, step for step (so the generator is consumed identically)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return _multiply(input, E.zeros((), dtype=input.dtype), inplace)
    if not alpha and not input._dtype.is_complex:  # (complex: bernoulli_noise refuses it)
        # (the mask drawn already divided by 1 - p: one op, the same values)
        return _multiply(input, dropout_mask(input, p, feature=feature), inplace)
    # 1 with probability 1 - p, drawn as empty_like(input).bernoulli_(1 - p) draws it (inside
    # vmap: one mask per example or one shared, as vmap's randomness= says)
    noise = bernoulli_noise(input, 1 - p, feature=feature)
    with E.no_grad():
        a_const = 1.7580993408473766
        a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
        b = noise.add(-1).mul_(a_const * a).add_(a_const * a * p)
        noise.mul_(a)
    return _multiply(input, noise, inplace).add_(b)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""
    _check_p(p)
    if input.__class__ is not Tensor:
        need_tensor(input, "dropout")
    return _dropout_impl(input, p, training, inplace, False, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    _check_p(p)
    if input.__class__ is not Tensor:
        need_tensor(input, "alpha_dropout")
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    _check_p(p)
    if input.__class__ is not Tensor:
        need_tensor(input, "feature_alpha_dropout")
    return _dropout_impl(input, p, training, inplace, True, True)


def _feature_dropout(name: str, nd: int, input: Tensor, p: float, training: bool,
                     inplace: bool) -> Tensor:
    _check_p(p)
    batched = input.dim() == nd + 2
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a "
                           f"{input.dim()}D input. Note that {name} exists to provide channel-wise"
                           " dropout on inputs with 1 spatial dimension, a channel dimension, "
                           "and an optional batch dimension (i.e. 2D or 3D inputs).")
    x = input if batched else input.unsqueeze(0)
    out = _dropout_impl(x, p, training, False, True, False)
    out = out if batched else out.squeeze(0)
    if inplace:
        with E.no_grad():
            input.copy_(out)
        return input
    return out


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    return _feature_dropout("dropout1d", 1, input, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (dim 1) of (N, C, H, W) inputs; 3-D inputs are read as (N, C, L)."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
                      "or 4D inputs).", stacklevel=user_stacklevel())
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=user_stacklevel())
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    return _feature_dropout("dropout3d", 3, input, p, training, inplace)


# --- embedding ------------------------------------------------------------------------


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim (classes inferred as max + 1 when -1)."""
    need_tensor(tensor, "one_hot")
    num_classes = need_int(num_classes, "one_hot", "num_classes", 2)
    if tensor.dtype is not E.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes >= 0 and (tensor.device.type == "meta" or tensor._is_wrapper):
        # (as PyTorch: no value checks where the values cannot be read, meta or vmap)
        if tensor.device.type == "meta":
            return E.empty(tuple(tensor.shape) + (num_classes,), dtype=E.int64, device="meta")
        return (tensor.unsqueeze(-1) == E.arange(num_classes)).to(E.int64)
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return E.zeros(tuple(tensor.shape) + (num_classes,), dtype=E.int64,
                       device=tensor.device)
    flat = one_hot_plain.plain_values(tensor)
    lo, hi = (int(tensor.min()), int(tensor.max())) if flat is None else \
        (int(flat.min()), int(flat.max()))
    if lo < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = hi + 1
    elif hi >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    if flat is not None:
        return one_hot_plain.encode(flat, tensor.shape, num_classes)
    # Rows of the identity, gathered: one pass over a row-major result, as torch lays its
    # out (the compare with arange(num_classes) and its cast to int64 made two, laid out
    # as the input); where the classes outnumber the values, the identity would be the
    # larger: the compare, then row-major.
    if num_classes <= tensor.numel():
        return E.eye(num_classes, dtype=E.int64, device=tensor.device)[tensor]
    hot = (tensor.unsqueeze(-1) == E.arange(num_classes, device=tensor.device)).to(E.int64)
    return hot.contiguous()


# --- normalisation --------------------------------------------------------------------


def _low_precision(*tensors) -> bool:
    return any(t is not None and t.dtype in (E.float16, E.bfloat16) for t in tensors)


def _in_float32(fn):
    """Run a normalisation in float32 for float16 / bfloat16 inputs and round once at the end,
    as PyTorch's CPU kernels do."""
    def wrapper(input, *args, **kwargs):
        if not _low_precision(input):
            return fn(input, *args, **kwargs)
        cast = [a.float() if isinstance(a, Tensor) and a.dtype.is_floating_point else a
                for a in args]
        return fn(input.float(), *cast, **kwargs).to(input.dtype)

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` dims, then scale and shift."""
    if input.__class__ is not Tensor or not (weight is None or weight.__class__ is Tensor) or \
            not (bias is None or bias.__class__ is Tensor):
        need_tensors("layer_norm", ("input", 1, input), ("weight", 3, weight),
                      ("bias", 4, bias), optional=("weight", "bias"))
    shape = normalized_shape_arg("layer_norm", normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.dim() - k:]) != shape or k > input.dim():
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    check_affine_dtypes(input, weight, bias)
    check_layer_norm_affine(input, weight, bias, k)
    check_norm_kernel_dtypes(input, "LayerNormKernelImpl", weight, bias)
    return _layer_norm(input, weight, bias, k, eps)


def _layer_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, k: int,
                eps: float) -> Tensor:
    return layer_norm_prim(input, weight, bias, k, eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing dims (eps defaults to the dtype's eps),
    times `weight`; the result has the input's dtype, whatever the weight's."""
    if input.__class__ is not Tensor or not (weight is None or weight.__class__ is Tensor):
        need_tensors("rms_norm", ("input", 1, input), ("weight", 3, weight),
                      optional=("weight",))
    shape = normalized_shape_arg("rms_norm", normalized_shape)
    check_rms_norm_inputs(input, shape, weight)
    out = rms_norm_plain(input, len(shape), weight, E.finfo(input.dtype).eps if eps is None
                         and input.dtype.is_floating_point else eps)  # (its kernels)
    if out is not None:
        return out
    # (PyTorch's composite returns its result made contiguous: a clone, in the graph too,
    # for an input in another layout)
    return _rms_norm(input, shape, weight, eps).contiguous()


@_in_float32
def _rms_norm(input: Tensor, shape: tuple[int, ...], weight: Tensor | None,
              eps: float | None) -> Tensor:
    if eps is None:
        eps = E.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is None:
        return out
    out = out * weight
    # (PyTorch computes in the promoted dtype, then casts back to the input's)
    return out if out.dtype is input.dtype else out.to(input.dtype)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over groups of channels (and all spatial positions) per sample."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[:2]
    # (F.group_norm's own check, before the kernel's: one value a group and sample)
    size = [n * c // num_groups, num_groups, *input.shape[2:]]
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    check_group_norm_affine(input, weight, bias)
    check_affine_dtypes(input, weight, bias)
    check_norm_kernel_dtypes(input, "GroupNormKernelImpl", weight, bias)
    out = group_norm_plain(input, num_groups, weight, bias, eps)  # (its kernels: same bits)
    return _group_norm(input, num_groups, weight, bias, eps) if out is None else out


@_in_float32
def _group_norm(input: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
                eps: float) -> Tensor:
    if math.prod(input.shape[2:]) == 1:
        out = _group_norm_rows(input, num_groups, weight, bias, eps)
    else:
        # (one fused node, ops/group_norm.py: the statistics and the affine in one kernel
        # each way, where layer norm's node and a mul and an add took three passes)
        out = group_norm_prim(input, weight, bias, num_groups, eps)
    fmt = _suggested_format(input)  # (PyTorch's result: row-major or channels-last only)
    if not out.is_contiguous(memory_format=fmt):
        out = out.contiguous(memory_format=fmt)
    if out._grad_fn is not None:  # PyTorch runs this as its one group-norm kernel
        rename_node(out._grad_fn, "NativeGroupNormBackward0")
    return saves(out, input, weight)  # (PyTorch's native_group_norm node keeps these)


def _group_norm_rows(input: Tensor, num_groups: int, weight: Tensor | None,
                     bias: Tensor | None, eps: float) -> Tensor:
    """Group norm of one value per channel and sample (an (N, C) input): each group a row
    of layer norm's node, then * weight and + bias per channel. (The fused kernel's
    per-channel backward sums would be one value each: 1.3x slower on 256 x 512 here.)"""
    n, c = input.shape[:2]
    out = layer_norm_prim(input.reshape(n, num_groups, c // num_groups), None, None, 1,
                          eps).reshape(input.shape)
    view = (-1,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(view)
    if bias is not None:
        out = out + bias.reshape(view)
    return out


def _batch_norm_checks(input, running_mean, running_var, weight, bias, training) -> None:
    """PyTorch's checks of batch_norm's operands, in its order and words."""
    n = input.shape[1] if input.dim() > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is None:
            if not training and name.startswith("running"):
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif t.numel() != n:
            raise RuntimeError(f"{name} should contain {n} elements not {t.numel()}")
    if E.is_grad_enabled():  # (the statistics are not differentiable inputs of the kernel)
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t.requires_grad:
                raise RuntimeError(f"The function 'native_batch_norm' is not differentiable "
                                   f"with respect to argument '{name}'. This input cannot "
                                   "have requires_grad True.")
    expect_device(input, weight, bias, running_mean, running_var)  # (its kernel's check)
    if not input.dtype.is_floating_point:  # (complex inputs included)
        raise NotImplementedError(f"\"batch_norm\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    check_batch_norm_dtypes(input, weight, bias, running_mean, running_var, training)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training) or running ones (eval).

    In training the running buffers are updated in place: mean with the biased batch mean,
    var with the unbiased batch variance, each as momentum * new + (1 - momentum) * old.
    """
    if input.__class__ is not Tensor:  # (torch's Python reads input.size() when training)
        touch_then_check(input, "size", "batch_norm") if training else \
            need_tensor(input, "batch_norm")
    if training:
        size = input.numel() // max(input.shape[1], 1)
        if size == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    need_tensors("batch_norm", ("weight", 2, weight), ("bias", 3, bias),
                  ("running_mean", 4, running_mean), ("running_var", 5, running_var),
                  optional=("weight", "bias", "running_mean", "running_var"))
    _batch_norm_checks(input, running_mean, running_var, weight, bias, training)
    if input.numel() == 0:
        # as PyTorch: no statistics of nothing, running buffers untouched; the affine's first
        # entries keep weight and bias in the graph (their gradients are zeros)
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        return out if bias is None else out + bias[0]
    view = (1, -1) + (1,) * (input.dim() - 2)
    if training:
        # a 16-bit input beside float parameters or buffers: PyTorch's mixed kernel
        low = input.dtype in (E.float16, E.bfloat16)
        mixed = low and any(t is not None and t.dtype == E.float32
                            for t in (weight, bias, running_mean, running_var))
        out, mean, var_sum = batch_norm_stats(input, weight, bias, eps, mixed)
        with E.no_grad():
            if running_mean is not None:
                update_running(running_mean, momentum, mean.detach())
            if running_var is not None:
                update_running(running_var, momentum, var_sum.detach(), count=size,
                               wide=not low)
        # (PyTorch's node saves the running buffers too, in training as in evaluation)
        return saves(out, running_mean, running_var)
    # Running statistics: one scale and one shift per channel, each a fused multiply-add as
    # PyTorch's kernel: shift = fma(-mean, scale, bias), out = fma(input, scale, shift).
    # (where nothing could see these ops, they run as kernels on arrays: the same bits)
    out = batch_norm_eval(input, running_mean, running_var, weight, bias, eps)
    if out is not None:
        return out
    consts = batch_norm_eval_affine(input, running_mean, running_var, weight, bias, eps)
    if consts is None:
        scale = (running_var + eps).rsqrt()
        if weight is not None:
            scale = scale * weight
        shift = -running_mean * scale if bias is None else \
            E.addcmul(bias, running_mean, scale, value=-1)
        consts = shift.reshape(view), scale.reshape(view)
    out = E.addcmul(consts[0], input, consts[1])
    fmt = _suggested_format(input)  # (PyTorch's result: row-major or channels-last only)
    if not out.is_contiguous(memory_format=fmt):
        out = out.contiguous(memory_format=fmt)
    if out.dtype != input.dtype:  # (16-bit input, float32 statistics: computed in float32,
        out = out.to(input.dtype)  # rounded once to the input's dtype, as PyTorch's kernel)
    if out._grad_fn is not None:  # PyTorch runs this as its one batch-norm kernel
        rename_node(out._grad_fn, "NativeBatchNormBackward0")
    # (what PyTorch's native_batch_norm saves: an in-place op on one refuses backward)
    return saves(out, input, weight, running_mean, running_var)


def _suggested_format(x: Tensor):
    """PyTorch's `suggest_memory_format`: channels-last for a 4-d (5-d) tensor laid out so
    (and not also row-major), else row-major."""
    fmt = {4: E.channels_last, 5: E.channels_last_3d}.get(x.dim())
    if fmt is not None and not x.is_contiguous() and x.is_contiguous(memory_format=fmt):
        return fmt
    return E.contiguous_format


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) plane over its spatial positions."""
    if input.__class__ is not Tensor:  # (torch's Python reads input.size() for input stats)
        touch_then_check(input, "size", "instance_norm") if use_input_stats else \
            need_tensor(input, "instance_norm")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if use_input_stats and math.prod(input.shape[2:]) <= 1:
        raise ValueError("Expected more than 1 spatial element when training, got input "
                         f"size {input.shape}")
    check_instance_norm_affine(input, weight, bias, repeated=False)
    n, c = input.shape[:2]
    # NOTE: as PyTorch, one batch_norm over (1, N * C, ...) with the statistics and the
    # affine repeated per sample: its checks, its mixed 16-bit / float32 kernel (one
    # rounding), and its node under the final view. The repeated statistics take the
    # weight's dtype (the input's without one), so theirs is never refused.
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    stats_dtype = input.dtype if weight is None else weight.dtype
    rm, rv = (t.repeat(n).to(stats_dtype) if t is not None else None
              for t in (running_mean, running_var))
    w, b = (t.repeat(n) if t is not None else None for t in (weight, bias))
    out = batch_norm(x, rm, rv, w, b, use_input_stats, momentum, eps).reshape(input.shape)
    if running_mean is not None and use_input_stats:
        with E.no_grad():
            running_mean.copy_(rm.reshape(n, c).mean(0))
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    if input.__class__ is not Tensor:
        touch_then_check(input, "norm", "normalize")  # (torch's Python calls input.norm first)
    norm = _norm(input, p, dim, True)
    res = normalized(input, norm, eps) if out is None else None  # (its kernels: same bits)
    if res is not None:
        return res
    res = input / norm.clamp_min(eps).expand_as(input)
    if out is not None:
        out.copy_(res)
        return out
    return res


def _norm(x: Tensor, p: float, dim, keepdim: bool) -> Tensor:
    if hasattr(E, "linalg") and hasattr(E.linalg, "vector_norm"):
        return E.linalg.vector_norm(x, p, dim=dim, keepdim=keepdim)
    if p == 2:
        return (x * x).sum(dim, keepdim=keepdim).sqrt()
    if p == 1:
        return x.abs().sum(dim, keepdim=keepdim)
    if p == math.inf:
        return x.abs().amax(dim, keepdim=keepdim)
    return x.abs().pow(p).sum(dim, keepdim=keepdim).pow(1.0 / p)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between x1 and x2 along `dim` (each normalised first, as in ATen)."""
    if x1.__class__ is not Tensor or x2.__class__ is not Tensor:
        need_tensors("cosine_similarity", ("x1", 1, x1), ("x2", 2, x2))
    # NOTE: ATen promotes the pair first and refuses a common dtype that is not a real
    # floating type (so a long tensor with a float one works, two long tensors do not)
    common = E.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{type_name(common)}")
    x1, x2 = E.broadcast_tensors(x1.to(common), x2.to(common))
    n1 = _norm(x1, 2, dim, True)
    n2 = _norm(x2, 2, dim, True)
    n1 = E.where(n1 < eps, eps, n1) if n1.requires_grad else n1.clamp_min(eps)
    n2 = E.where(n2 < eps, eps, n2) if n2.requires_grad else n2.clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim."""
    if x1.__class__ is not Tensor or x2.__class__ is not Tensor:
        need_tensors("pairwise_distance", ("x1", 1, x1), ("x2", 2, x2))
    dim = max(x1.dim(), x2.dim()) - 1
    out = _norm(x1 - x2 + eps, p, dim, keepdim)
    if out.grad_fn is not None:
        # NOTE: PyTorch computes this with at::norm (not linalg.vector_norm): its node is
        # NormBackward1
        rename_node(out.grad_fn, "NormBackward1")
    return out


# --- attention ------------------------------------------------------------------------


def _check_attention_inputs(query: Tensor, key: Tensor, value: Tensor,
                            attn_mask: Tensor | None) -> None:
    """PyTorch's checks on dtypes, devices, ranks and the mask's dtype, in its order and
    words."""
    q, k, v = query.dtype, key.dtype, value.dtype
    if not (q is k is v):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {c_type_name(q)} key.dtype: {c_type_name(k)} and "
                           f"value.dtype: {c_type_name(v)} instead.")
    if not query.device == key.device == value.device:
        raise RuntimeError("Expected query, key, and value to have the same device type, but "
                           f"got query.device: {query.device} key.device: {key.device} and "
                           f"value.device: {value.device} instead.")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.dim()} key.dim: {key.dim()} and "
                           f"value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (E.bool, E.float32, q):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {c_type_name(attn_mask.dtype)} "
                           f"and  query.dtype: {c_type_name(q)} instead.")


def _check_mask_broadcast(scores: tuple, mask: Tensor) -> None:
    """The mask is added in place to the scores, so it must broadcast to their shape."""
    full = broadcast_shapes(scores, tuple(mask.shape))
    if full != scores:
        raise RuntimeError(f"output with shape {list(scores)} doesn't match the broadcast shape "
                           f"{list(full)}")


def _flash_mask(mask: Tensor | None, query: Tensor, key: Tensor) -> bool:
    """Whether the fused kernel takes this mask: (L or 1, S or 1) in its last two dims, and
    2-D or 4-D with a batch and a head dim of 1 or the inputs' (PyTorch's rule)."""
    if mask is None:
        return True
    if mask.requires_grad and E.is_grad_enabled():
        return False
    if mask.size(-2) not in (query.shape[2], 1) or mask.size(-1) not in (key.shape[2], 1):
        return False
    return mask.dim() == 2 or (mask.dim() == 4 and mask.shape[0] in (1, query.shape[0])
                               and mask.shape[1] in (1, query.shape[1]))


_FLASH_DTYPES = (E.float32, E.float64, E.float16, E.bfloat16)


def _takes_flash(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                 dropout_p: float, enable_gqa: bool) -> bool:
    """Whether PyTorch's CPU build runs this call on its fused (flash) kernel: floating
    4-D inputs without dropout (a negative dropout_p passes, and the kernel refuses it)."""
    if dropout_p > 0.0 or not query.dim() == key.dim() == value.dim() == 4 or \
            query.dtype not in _FLASH_DTYPES:
        return False
    # NOTE: PyTorch's kernel does not check that keys and values have the same length (it
    # reads past the shorter): such calls take the composite here, which refuses them as
    # PyTorch's does under sdpa_kernel(MATH)
    if key.shape[-2] != value.shape[-2]:
        return False
    heads, k_heads = query.shape[1], key.shape[1]
    if not (heads == k_heads or enable_gqa and heads % k_heads == 0) or \
            k_heads != value.shape[1] or not query.shape[0] == key.shape[0] == value.shape[0]:
        return False
    return query.shape[-1] == key.shape[-1] == value.shape[-1] and \
        _flash_mask(attn_mask, query, key)


def _group_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Keys and values repeated so that each query head has its own (grouped-query)."""
    heads, k_heads, v_heads = query.size(-3), key.size(-3), value.size(-3)
    if heads % k_heads or heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    if heads != k_heads:
        key = key.repeat_interleave(heads // k_heads, -3)
    if heads != v_heads:
        value = value.repeat_interleave(heads // v_heads, -3)
    return key, value


def _reduced_flash(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                   scale: float, is_causal: bool) -> Tensor:
    """PyTorch's CPU flash kernel for float16/bfloat16: scores, softmax and sums in float32,
    the unnormalised weights rounded to the input dtype for the product with the values,
    and one rounding of (weights @ v) * (1 / sum) at the end."""
    dtype = query.dtype
    scores = query.float().matmul(key.float().transpose(-2, -1)) * scale
    if is_causal:
        keep = E.ones(query.shape[-2], key.shape[-2], dtype=E.bool).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None and attn_mask.dtype is E.bool:
        scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    elif attn_mask is not None:
        scores = scores + attn_mask.float()
    top = scores.amax(-1, keepdim=True)
    masked = top == float("-inf")  # every score of the row masked: zero weights, zero output
    exp = (scores - top.masked_fill(masked, 0.0)).exp()
    total = exp.sum(-1, keepdim=True)
    inverse = total.reciprocal().masked_fill(masked, 0.0)
    return (exp.to(dtype).float().matmul(value.float()) * inverse).to(dtype)


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim, with zeros (and zero gradients) for a row whose every
    score is -inf, where a softmax would give NaN: PyTorch's composite attention does so
    (its `_safe_softmax`)."""
    masked = (scores == float("-inf")).all(-1, keepdim=True)
    # (the masked rows are given finite scores first, so that no NaN reaches the backward;
    # no branch on `masked.any()`, which vmap could not follow)
    return scores.masked_fill(masked, 0.0).softmax(-1).masked_fill(masked, 0.0)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(Q K^T * scale + mask) V, with a causal and/or boolean/additive mask, dropout
    and grouped-query heads.

    # NOTE: as PyTorch's CPU build, 4-D inputs without dropout whose key and value heads
    # match (and the query's, or divide them under enable_gqa) take the fused (flash)
    # kernel, float16/bfloat16 ones with float32 inner sums, where the causal flag and a mask
    # both apply; the others the composite, which computes float16/bfloat16 in float32 and
    # rounds once, and takes only one of the two.
    """
    if query.__class__ is not Tensor or key.__class__ is not Tensor or \
            value.__class__ is not Tensor:
        need_tensors("scaled_dot_product_attention", ("query", 1, query), ("key", 2, key),
                      ("value", 3, value))
    _check_attention_inputs(query, key, value, attn_mask)
    if is_causal and isinstance(attn_mask, CausalBias):
        raise ValueError("CausalBias should not be used with causal=True")
    if query.numel() == 0 or key.numel() == 0 or value.numel() == 0:
        # NOTE: PyTorch answers empty inputs before its other checks and its choice of kernel:
        # zeros of the output's shape, tied to the inputs by a sum times zero (AddBackward0)
        zeros = E.zeros(tuple(query.shape[:-1]) + (value.shape[-1],), dtype=query.dtype)
        return zeros + (query.sum() + key.sum() + value.sum()) * 0
    L, S = query.shape[-2], key.shape[-2]
    factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    reduced = query.dtype in (E.float16, E.bfloat16)
    fits = _takes_flash(query, key, value, attn_mask, dropout_p, enable_gqa)
    if choose_cpu_backend(fits) is SDPBackend.FLASH_ATTENTION:  # (sdpa_kernel's choice)
        if dropout_p != 0.0:
            raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                               "support dropout > 0")
        if attn_mask is not None:
            _check_mask_broadcast(tuple(query.shape[:-1]) + (S,), attn_mask)
        if enable_gqa:
            key, value = _group_heads(query, key, value)
        if reduced:
            out = _reduced_flash(query, key, value, attn_mask, factor, is_causal)
            if out.grad_fn is not None:
                rename_node(out.grad_fn, "ScaledDotProductFlashAttentionForCpuBackward0")
            return out
        return attention_prim(query, key, value, attn_mask, factor, is_causal)
    if enable_gqa:
        key, value = _group_heads(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    dtype = query.dtype
    if reduced:
        query, key, value = query.float(), key.float(), value.float()
    root = math.sqrt(abs(factor))
    q = query * (root if factor >= 0 else -root)
    scores = q.matmul(key.transpose(-2, -1) * root)
    if is_causal:
        keep = E.ones(L, S, dtype=E.bool).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    elif attn_mask is not None:
        _check_mask_broadcast(tuple(scores.shape), attn_mask)
        if attn_mask.dtype is E.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)
    attn = _safe_softmax(scores)
    if dropout_p > 0.0:
        if dropout_p > 1.0:  # (the aten op's check: a RuntimeError, F.dropout's a ValueError)
            raise RuntimeError("dropout probability has to be between 0 and 1, but got "
                               f"{dropout_p}")
        attn = dropout(attn, dropout_p, True)
    out = attn.matmul(value)
    return out.to(dtype) if reduced else out
