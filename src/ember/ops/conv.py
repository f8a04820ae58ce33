"""Convolutions (1-d, 2-d, 3-d, grouped, dilated, transposed) as three bilinear primitives.

`conv(x, w[, b])` is im2col through a strided view of the padded input followed by batched
BLAS products, chunk by chunk over the batch (`_conv_kernels` holds the NumPy kernels,
with direct paths for 1x1 and depthwise kernels). Its two adjoints are primitives too:
`conv_input_grad(g, w)` (col2im, which is also the transposed convolution) and
`conv_weight_grad(x, g)`. Each one's VJP is written with the other two, so
gradients of gradients work. Padding is a (low, high) pair per spatial dim, which
covers PyTorch's asymmetric 'same' padding.

A bias is the convolution's optional third operand, as in PyTorch's one
`ConvolutionBackward0` node (edges to input, weight and bias): the kernels add it while
the outputs are in cache, before a 16-bit result's one rounding (as PyTorch's kernels), and
its gradient is the output gradient summed over all but the channel dim.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _cpu, native
from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ..amp.autocast_mode import cast_for, in_region
from . import _conv_kernels as K
from . import _conv_native as N
from ._arg_parser_text import invalid_combination, not_tensor
from ._batching import batch_size, batched
from ._common import c_type_name, checked_type_name, type_name
from ._conv_args import _plain as plain_params
from ._conv_args import given, read_geometry
from ._parallel import workers  # (torch.get_num_threads())
from .double_backward import double_backward
from .reduce import sum_to_size
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp, defvjp_joint, rename_node

_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def _geometry(x_shape, w_shape, stride, padding, dilation):
    nd = len(x_shape) - 2
    return tuple(K.out_size(x_shape[2 + i], w_shape[2 + i], stride[i], dilation[i], *padding[i])
                 for i in range(nd))


def _compute(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype in _LOW else a


def _conv_kernel(x, w, b=None, *, stride, padding, dilation, groups):
    dtype = x.dtype
    x, w = _compute(x), _compute(w)
    geo = K.geometry(x.shape, w.shape[2:], stride, padding, dilation, groups)
    out = K.forward(x, w, geo)
    return (out if b is None else K.add_channel_bias(out, b)).astype(dtype, copy=False)


def _conv_meta(x, w, b=None, *, stride, padding, dilation, groups):
    out = _geometry(x._shape, w._shape, stride, padding, dilation)
    return (x._shape[0], w._shape[0]) + out, x._dtype


def _input_grad_kernel(g, w, b=None, *, stride, padding, dilation, groups, x_shape,
                       transposed=False):
    dtype = g.dtype
    g, w = _compute(g), _compute(w)
    geo = K.geometry(x_shape, w.shape[2:], stride, padding, dilation, groups)
    geo = K.Geometry(geo.k, geo.stride, geo.padding, geo.dilation, groups, g.shape[2:])
    out = K.input_grad(g, w, geo, x_shape)
    return (out if b is None else K.add_channel_bias(out, b)).astype(dtype, copy=False)


def _input_grad_meta(g, w, b=None, *, stride, padding, dilation, groups, x_shape,
                     transposed=False):
    return tuple(x_shape), g._dtype


def _weight_grad_kernel(x, g, *, stride, padding, dilation, groups, w_shape):
    dtype = x.dtype
    x, g = _compute(x), _compute(g)
    geo = K.geometry(x.shape, w_shape[2:], stride, padding, dilation, groups)
    geo = K.Geometry(geo.k, geo.stride, geo.padding, geo.dilation, groups, g.shape[2:])
    return K.weight_grad(x, g, geo, w_shape).astype(dtype, copy=False)


def _weight_grad_meta(x, g, *, stride, padding, dilation, groups, w_shape):
    return tuple(w_shape), x._dtype


conv_p = Primitive("convolution", _conv_kernel, _conv_meta)
# (the transposed convolution, `transposed=True`, is PyTorch's convolution node; the
# convolution's input gradient, in a gradient of gradients, its double-backward node)
conv_input_grad_p = Primitive(
    "convolution_backward_input", _input_grad_kernel, _input_grad_meta,
    grad_name=lambda args, params: "ConvolutionBackward0" if params.get("transposed")
    else "ConvolutionBackwardBackward0")
conv_weight_grad_p = Primitive("convolution_backward_weight", _weight_grad_kernel,
                               _weight_grad_meta, grad_name="ConvolutionBackwardBackward0")
native.register(conv_p, "conv", N.conv_native)
native.register(conv_input_grad_p, "conv", N.input_grad_native)
native.register(conv_weight_grad_p, "conv", N.weight_grad_native)

def bias_grad(g: Tensor) -> Tensor:
    """A channel bias's gradient: g (N, C, ...) summed over all dims but C."""
    c = g._shape[1]
    return sum_to_size(g, (c,) + (1,) * (g.ndim - 2)).reshape(c)


def _broadcast(g: Tensor) -> bool:
    """Whether g repeats values along a dim by a zero stride (`y.sum()`'s gradient)."""
    strides = g._stride  # (None: contiguous)
    return strides is not None and any(s == 0 and n > 1 for s, n in zip(strides, g._shape))


def _conv_vjp(g, out, x, w, b=None, *, needs, **p):
    # A broadcast gradient is made contiguous once for both products, not once in each
    # kernel (as PyTorch's convolution_backward does).
    if needs[0] and needs[1] and _broadcast(g):
        g = g.contiguous()
    return (apply(conv_input_grad_p, g, w, x_shape=x._shape, **p) if needs[0] else None,
            apply(conv_weight_grad_p, x, g, w_shape=w._shape, **p) if needs[1] else None,
            bias_grad(g) if len(needs) > 2 and needs[2] else None)


# conv is bilinear in (x, w); with <g, conv(x, w)> = <x, input_grad(g, w)> = <w, weight_grad(x, g)>
# each primitive's VJP is one of the other two. (As PyTorch's node, it keeps x and w whatever
# needs a gradient, the bias alone included, and never the bias.)
defvjp_joint(conv_p, _conv_vjp, (True, True, True), reads=((0, 1), (0, 1), (0, 1)), optional=1)
def _conv_like(x, w, like, p, transposed=False):
    """conv(x, w) cut to the shape of `like`: where a transposed convolution's output
    padding exceeds its stride (dilation allows it), x has rows no window of `like` reads.
    As the gradient of a transposed convolution's input, PyTorch's node for it is its
    double-backward node."""
    out = apply(conv_p, x, w, **p)
    if transposed and out.grad_fn is not None:
        rename_node(out.grad_fn, "ConvolutionBackwardBackward0")
    if out._shape[2:] != like._shape[2:]:
        out = out[(slice(None), slice(None)) + tuple(slice(0, n) for n in like._shape[2:])]
    return out


defvjp(conv_input_grad_p,
       lambda h, out, g, w, b=None, *, x_shape, transposed=False, **p: _conv_like(
           h, w, g, p, transposed),
       lambda h, out, g, w, b=None, *, x_shape, transposed=False, **p: apply(
           conv_weight_grad_p, h, g, w_shape=w._shape, **p),
       lambda h, out, g, w, b, **p: bias_grad(h),
       reads=((0, 1), (0, 1), (0, 1)), optional=1)
defvjp(conv_weight_grad_p,
       lambda h, out, x, g, *, w_shape, **p: apply(conv_input_grad_p, g, h, x_shape=x._shape,
                                                   **p),
       lambda h, out, x, g, *, w_shape, **p: _conv_like(x, h, g, p))


# --- forward mode: all three are bilinear --------------------------------------------------

def _bilinear_jvp(prim):
    """d f(a, b) = f(da, b) + f(a, db) for a primitive linear in each operand."""
    def jvp(primals, tangents, out, **params):
        (a, b), (ta, tb) = primals, tangents
        t = None if ta is None else bind(prim, ta, b, **params)
        if tb is not None:
            u = bind(prim, a, tb, **params)
            t = u if t is None else t + u
        return t

    return jvp


def _with_bias_jvp(bilinear):
    """The bilinear part, plus the bias's tangent along the channels where there is one."""
    def jvp(primals, tangents, out, **params):
        t = bilinear(primals[:2], tangents[:2], out, **params)
        tb = tangents[2] if len(tangents) > 2 else None
        if tb is None:
            return t
        tb = tb.reshape((-1,) + (1,) * (out.ndim - 2))
        return tb.expand(out._shape) if t is None else t + tb

    return jvp


for _p in (conv_p, conv_input_grad_p):
    defjvp(_p, _with_bias_jvp(_bilinear_jvp(_p)))
defjvp(conv_weight_grad_p, _bilinear_jvp(conv_weight_grad_p))


# --- vmap: the batch folded into N, or into the channel groups -------------------------------

def _into_n(x: Tensor, d, size: int) -> Tensor:
    """(B, N, C, ...) as (B N, C, ...)."""
    x = batched(x, d, size)
    return x.reshape((-1,) + tuple(x._shape[2:]))


def _into_channels(x: Tensor, d, size: int) -> Tensor:
    """(B, N, C, ...) as (N, B C, ...): each element's channels a group of their own."""
    x = batched(x, d, size).movedim(0, 1)
    return x.reshape((x._shape[0], -1) + tuple(x._shape[3:]))


def _out_of_channels(out: Tensor, size: int) -> Tensor:
    """(N, B C, ...) back to (N, B, C, ...)."""
    return out.reshape((out._shape[0], size, -1) + tuple(out._shape[2:]))


def _stacked_weight(w: Tensor, d, size: int) -> Tensor:
    """(B, O, C/g, ...) as (B O, C/g, ...)."""
    w = batched(w, d, size)
    return w.reshape((-1,) + tuple(w._shape[2:]))


def _conv_batch(args, dims, *, groups, **p):
    """An unbatched weight: the batch is more samples (folded into N). A batched weight:
    B convolutions side by side as one grouped convolution with B groups times as many.
    A bias is added after, batched or not."""
    if len(args) == 3:
        return _biased_batch(conv_p, _conv_batch, args, dims, dict(p, groups=groups))
    x, w = args
    size = batch_size(args, dims)
    if dims[1] is None:
        out = bind(conv_p, _into_n(x, dims[0], size), w, groups=groups, **p)
        return out.reshape((size, -1) + tuple(out._shape[1:])), 0
    out = bind(conv_p, _into_channels(x, dims[0], size), _stacked_weight(w, dims[1], size),
               groups=groups * size, **p)
    return _out_of_channels(out, size), 1


def _biased_batch(prim, rule, args, dims, p: dict):
    """`prim`'s batch rule for a call with a bias: `rule` (or `prim` itself, where only the
    bias is batched) without it, then the bias added along the channels."""
    x, w, b = args
    if dims[0] is None and dims[1] is None:
        out, d = bind(prim, x, w, **p), None
    else:
        out, d = rule((x, w), dims[:2], **p)
    spatial = (1,) * (x.ndim - (2 if dims[0] is None else 3))
    if dims[2] is None:
        return out + b.reshape((-1,) + spatial), d
    size = batch_size(args, dims)
    b = batched(b, dims[2], size)  # (B, C)
    if d is None:  # the bias alone is batched: B results of the one convolution
        return out + b.reshape((size, 1, -1) + spatial), 0
    lead = (size, 1) if d == 0 else (1, size)
    return out + b.reshape(lead + (-1,) + spatial), d


def _input_grad_batch(args, dims, *, groups, x_shape, **p):
    if len(args) == 3:
        return _biased_batch(conv_input_grad_p, _input_grad_batch, args, dims,
                             dict(p, groups=groups, x_shape=x_shape))
    g, w = args
    size = batch_size(args, dims)
    if dims[1] is None:
        out = bind(conv_input_grad_p, _into_n(g, dims[0], size), w, groups=groups,
                   x_shape=(size * x_shape[0],) + tuple(x_shape[1:]), **p)
        return out.reshape((size, -1) + tuple(out._shape[1:])), 0
    out = bind(conv_input_grad_p, _into_channels(g, dims[0], size),
               _stacked_weight(w, dims[1], size), groups=groups * size,
               x_shape=(x_shape[0], size * x_shape[1]) + tuple(x_shape[2:]), **p)
    return _out_of_channels(out, size), 1


def _weight_grad_batch(args, dims, *, groups, w_shape, **p):
    """The weight gradient sums over N, so the batch always goes into the groups."""
    x, g = args
    size = batch_size(args, dims)
    out = bind(conv_weight_grad_p, _into_channels(x, dims[0], size),
               _into_channels(g, dims[1], size), groups=groups * size,
               w_shape=(size * w_shape[0],) + tuple(w_shape[1:]), **p)
    return out.reshape((size, -1) + tuple(out._shape[1:])), 0


defbatch(conv_p, _conv_batch)
defbatch(conv_input_grad_p, _input_grad_batch)
defbatch(conv_weight_grad_p, _weight_grad_batch)


# --- memory format of the outputs ---------------------------------------------------------

def row_major_only(t: Tensor) -> bool:
    """Whether `t` is row-major and does not also read as channels-last: a kernel
    allocating in its suggested format lays the result out row-major (a plain path's plan
    may then write it so)."""
    return t.is_contiguous() and not channels_last_like(t)


def channels_last_like(t: Tensor) -> bool:
    """Whether PyTorch's `suggest_memory_format()` of a 4-d (5-d) tensor is channels-last
    (-3d): c10's `is_channels_last_strides_2d/3d`, ambiguous layouts read as contiguous.
    A tensor that is also contiguous counts by its strides too, as there: an (N, C, 1, 1)
    one with strides (C, 1, C, C) or an (N, 1, H, W) one with (HW, 1, W, 1) is
    channels-last, and a kernel allocating in its format lays a larger result out so."""
    shape = t._shape
    if len(shape) not in (4, 5):
        return False
    stride = t.stride()
    if stride[1] == 0:
        return False
    low = 0
    for d in (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0):
        if shape[d] == 0 or stride[d] < low or (d == 0 and low == stride[1]):
            return False
        low = stride[d] * max(shape[d], 1)
    return True


def _writes_channels_last(x: Tensor, w: Tensor, stride, dilation, groups: int,
                          big_output_padding: bool = False) -> bool:
    """Whether PyTorch's CPU convolution of batched `x` by `w` returns channels-last: 2-d
    ones whenever the input or the weight is (oneDNN's and the slow kernels alike); 3-d ones
    only where oneDNN runs (its `use_mkldnn` test: float32, not the cases ATen's own kernel
    is faster for), the slow 3-d kernels writing contiguous results."""
    if not (channels_last_like(x) or channels_last_like(w)):
        return False
    if x.ndim == 4:
        return True
    return x._dtype is dt.float32 and _runs_onednn(x, w, stride, dilation, groups,
                                                   big_output_padding)


def as_channels_last(out: Tensor, name: str | None = None) -> Tensor:
    """`out` laid out channels-last (its channel dim innermost), as PyTorch's kernels write
    the result of a channels-last input; a copy whose node is named `name` (the op's own),
    not a view, so in-place ops on it read as on PyTorch's result."""
    if out._is_wrapper:  # (one example inside vmap: its layout is the batch's to keep)
        return out
    shape = out._shape
    rest = math.prod(shape[2:])
    # (strides of (N, C, *S) stored as (N, *S, C); PyTorch's channels-last strides keep
    # the C stride 1 and the N stride the full size even where a dim is 1)
    want = (rest * shape[1], 1) + tuple(
        math.prod(shape[3 + i:]) * shape[1] for i in range(len(shape) - 2))
    if out.stride() == want:
        return out
    from .creation import empty_strided

    res = empty_strided(shape, want, dtype=out._dtype, device=out.device).copy_(out)
    if name is not None and res.grad_fn is not None:
        rename_node(res.grad_fn, name)
    return res


# --- public functions ---------------------------------------------------------------------

def _tuple(v, nd: int, name: str) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got {name}={list(v)}")
    return v


def _pairs(padding, k, dilation, nd: int, stride) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        total = [dilation[i] * (k[i] - 1) for i in range(nd)]
        if any(t % 2 for t in total):  # (PyTorch's TORCH_WARN_ONCE)
            warn_at_user("Using padding='same' with even kernel lengths and odd dilation may "
                         "require a zero-padded copy of the input be created", once=True)
        return tuple((t // 2, t - t // 2) for t in total)
    p = _tuple(padding, nd, "padding")
    return tuple((i, i) for i in p)


def _per_dim_words(nd: int, opad: tuple, stride: tuple, dilation: tuple) -> str:
    """`output_padding_height: 1 output_padding_width: 0 stride_height: ...` as PyTorch's
    check prints them (a 1-d convolution runs as 2-d with a height of one)."""
    names = ("depth", "height", "width") if nd == 3 else ("height", "width")
    lead = len(names) - nd
    parts = []
    for word, vals, one in (("output_padding", opad, 0), ("stride", stride, 1),
                            ("dilation", dilation, 1)):
        full = (one,) * lead + tuple(vals)
        parts += [f"{word}_{n}: {v}" for n, v in zip(names, full)]
    return " ".join(parts)


def _padding_string_check(padding, stride, nd: int) -> None:
    """A string padding's checks (PyTorch's `_convolution_mode`, right after the ranks)."""
    if not isinstance(padding, str):
        return
    if padding not in ("valid", "same"):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if padding == "same" and any(s != 1 for s in _tuple(stride, nd, "stride")):
        raise RuntimeError("padding='same' is not supported for strided convolutions")


def _check(x: Tensor, w: Tensor, nd: int, groups: int, transposed: bool,
           bias: Tensor | None = None, padding=0, stride=1, dilation=1,
           output_padding=0) -> None:
    """PyTorch's checks of a convolution's operands, in its order: ranks, the bias's dtype
    (not for transposed ones), the signs of the geometry, channels, the bias's size. The
    weight's dtype comes after the size checks (`_check_dtypes`)."""
    if x.ndim not in (nd + 1, nd + 2):
        name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x.shape)}")
    if w.ndim != nd + 2:
        _weight_rank_error(x, w, nd, transposed, padding, stride, dilation, output_padding)
    _padding_string_check(padding, stride, nd)
    if bias is not None and not transposed and bias.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({c_type_name(x.dtype)}) and bias type "
                           f"({c_type_name(bias.dtype)}) should be the same")
    _check_signs(nd, padding, output_padding, stride, dilation)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(w.shape)} instead")
    if w.shape[0] % groups:  # (PyTorch's message prints the sizes in double brackets)
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(w.shape)}] instead")
    c = x.shape[-nd - 1]
    if not transposed and c != w.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input"
            f"{list(x.shape if x.ndim == nd + 2 else (1,) + tuple(x.shape))} to have "
            f"{w.shape[1] * groups} channels, but got {c} channels instead")
    if transposed and c != w.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(w.shape)}, expected input"
            f"{list(x.shape if x.ndim == nd + 2 else (1,) + tuple(x.shape))} to have "
            f"{w.shape[0]} channels, but got {c} channels instead")
    if bias is not None:
        n = w.shape[1] * groups if transposed else w.shape[0]
        if bias.ndim != 1 or bias.shape[0] != n:
            raise RuntimeError(
                f"Given {'transposed=1, ' if transposed else ''}weight of size "
                f"{list(w.shape)}, expected bias to be 1-dimensional with {n} elements, but "
                f"got bias of size {list(bias.shape)} instead")


def _weight_rank_error(x: Tensor, w: Tensor, nd: int, transposed: bool, padding, stride,
                       dilation, output_padding) -> None:
    """A weight of the wrong rank, refused as ATen does: its parameters are expanded to the
    weight's spatial rank first (so a list of another length fails there, in the order
    stride, padding, dilation, output padding, which is zeros for a plain convolution),
    then the input's rank is compared. A string padding takes another path: 'same' expands
    nothing first, 'valid' only the stride and dilation."""
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = w.ndim - 2
    params = [("stride", stride), ("padding", padding), ("dilation", dilation),
              ("output_padding", output_padding)]
    if padding == "valid":
        params = [params[0], params[2]]
    for name, v in params if padding != "same" else ():
        values = [int(v)] * nd if isinstance(v, int) else [int(i) for i in v]
        if len(values) not in (1, k):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} "
                               "values to match the convolution dimensions, but got "
                               f"{name}={values}")
    shape = list(x.shape) if x.ndim == nd + 2 else [1] + list(x.shape)
    space = "" if padding == "same" else " "  # (as PyTorch's two messages print it)
    raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight"
                       f"{space}{list(w.shape)}, but got {len(shape)}-dimensional input of "
                       f"size {shape} instead")


def _check_signs(nd: int, padding, output_padding, stride, dilation) -> None:
    """ATen's geometry checks (`check_shape_forward`): no negative padding or output padding,
    strides positive, no negative dilation (a zero one is refused later, `_zero_dilation`)."""
    if not isinstance(padding, str) and min(_tuple(padding, nd, "padding")) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(_tuple(output_padding, nd, "output_padding")) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(_tuple(stride, nd, "stride")) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(_tuple(dilation, nd, "dilation")) < 0:
        raise RuntimeError("dilation should be greater than zero")


def _zero_dilation(nd: int, dilation: tuple, transposed: bool) -> None:
    """A zero dilation, refused by the kernel in its words (a 1-d convolution runs as 2-d
    with a height of one)."""
    if min(dilation) > 0:
        return
    full = (1,) * max(0, 2 - nd) + tuple(dilation)
    if not transposed:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(full)}")
    names = ("depth", "height", "width") if nd == 3 else ("height", "width")
    words = ", ".join(f"dilation_{n}: {d}" for n, d in zip(names, full))
    raise RuntimeError(f"dilation should be greater than zero, but got {words}")


def _runs_onednn(x: Tensor, w: Tensor, stride, dilation, groups: int,
                 big_output_padding: bool = False) -> bool:
    """PyTorch's `use_mkldnn` on this CPU for batched `x`: half and bfloat16 where the CPU
    has oneDNN's instructions for them, float32 unless ATen's own kernel is the faster one
    (a 1-d convolution counts as 2-d, height 1)."""
    if x._dtype in (dt.float16, dt.bfloat16) and not big_output_padding and (
            _cpu.onednn_fp16() if x._dtype is dt.float16 else _cpu.onednn_bf16()):
        return True
    k = (1,) * max(0, 4 - w.ndim) + tuple(w._shape[2:])
    xs = tuple(x._shape[:2]) + (1,) * max(0, 4 - x.ndim) + tuple(x._shape[2:])
    return x._dtype is dt.float32 and not big_output_padding and (
        any(s != 1 for s in stride) or any(d != 1 for d in dilation) or xs[0] >= 16
        or k[-1] != 1 or k[-2] != 1 or workers() > 1) and (
        groups > 1 or (k[-1] > 3 and k[-2] > 3) or xs[0] > 1 or math.prod(xs[:4]) > 20480)


def _check_dtypes(x: Tensor, w: Tensor, bias, nd: int, transposed: bool, onednn: bool) -> None:
    """The weight's (and a transposed convolution's bias's) dtype, checked after the sizes, in
    the words of the kernel PyTorch picks: oneDNN's operand check, the complex path's, or
    the ATen kernel's scalar-type check."""
    others = (w,) if bias is None or not transposed else (w, bias)
    for name, other in zip(("weight", "bias"), others):
        if other.dtype is x.dtype:
            continue
        words = (f"Input type ({checked_type_name(x)}) and {name} type "
                 f"({checked_type_name(other)}) should be the same")
        if onednn:
            raise RuntimeError(f"{words} or input should be a MKLDNN tensor and {name} is a "
                               "dense tensor")
        if x.dtype.is_complex:
            raise RuntimeError(words)
        if name == "weight" or nd == 3:  # (the 1-d and 2-d slow kernels cast the bias)
            raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                               f"{type_name(other.dtype)}")


_CONV_OVERLOADS = tuple(
    f"(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, {pad}, "
    "tuple of ints dilation = 1, int groups = 1)"
    for pad in ("tuple of ints padding = 0", 'str padding = "valid"'))


def _refuse_operands(nd: int, args: tuple) -> None:
    """The parser's TypeError for a convolution given a non-tensor operand, listing the
    arguments given (`given`)."""
    if isinstance(args[0], Tensor) and isinstance(args[1], Tensor) and \
            (args[2] is None or isinstance(args[2], Tensor)):
        return
    # ("int groups" is a SymInt in the schema, which the parser's note never finds a fit for)
    raise invalid_combination(f"conv{nd}d", _CONV_OVERLOADS, given(args), {}, {"int": ()})


_checked: dict = {}  # a call's checked geometry, by all its checks read (`_checked_key`)


def _checked_key(nd: int, x: Tensor, w: Tensor, bias, params: dict) -> tuple | None:
    """What a convolution's checks and geometry depend on, for a call whose checks one like
    it has passed: plain tensors with a layout, parameters already ints (or a padding
    string), no autocast; None where the call takes every check."""
    if x.__class__ is not Tensor or w.__class__ is not Tensor or in_region() or \
            not plain_params(params, True):
        return None
    xl, wl = _layout_of(x), _layout_of(w)
    if xl is None or wl is None:
        return None
    if bias is None:
        b = None
    elif bias.__class__ is Tensor:
        b = (bias._shape, bias._dtype)
    else:
        return None
    return (nd, x._shape, x._dtype, xl, w._shape, w._dtype, wl, b, tuple(params.values()),
            workers())


def _layout_of(t: Tensor) -> tuple | None:
    """`t`'s strides, or a fresh kernel result's array strides (asking for its strides
    would give it a Storage, and the dispatch's fast path reads fresh results as such)."""
    if t._stride is not None:
        return t._stride
    return None if t._np is None else ("bytes",) + t._np.strides


def _conv_nd(nd: int, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    if input.__class__ is not Tensor or weight.__class__ is not Tensor:
        _refuse_operands(nd, (input, weight, bias, stride, padding, dilation, groups))
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    key = _checked_key(nd, input, weight, bias, params)
    seen = _checked.get(key) if key is not None else None
    if seen is not None:  # (the checks of a call like this one passed: its geometry)
        stride, pads, dilation, unbatched, last = seen
        return _run_conv(input.unsqueeze(0) if unbatched else input, weight, bias, stride,
                         pads, dilation, groups, unbatched, last)
    g = read_geometry(f"conv{nd}d", _CONV_OVERLOADS, (input, weight, bias), params)
    stride, padding, dilation, groups = g["stride"], g["padding"], g["dilation"], g["groups"]
    input, weight, bias = cast_for("lower", input, weight, bias)
    _check(input, weight, nd, groups, False, bias, padding, stride, dilation)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    pads = _pairs(padding, weight.shape[2:], dilation, nd, stride)
    reach = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(nd)]  # (dilated)
    for i in range(nd):
        if x.shape[2 + i] + sum(pads[i]) < reach[i]:
            raise RuntimeError(
                f"Calculated padded input size per channel: "
                f"({' x '.join(str(x.shape[2 + j] + sum(pads[j])) for j in range(nd))}). "
                f"Kernel size: ({' x '.join(str(s) for s in reach)}). Kernel size "
                "can't be greater than actual input size")
    _zero_dilation(nd, dilation, False)
    onednn = _runs_onednn(x, weight, stride, dilation, groups)
    _check_dtypes(x, weight, bias, nd, False, onednn)
    if max(dilation) > 1 and not x.dtype.is_complex:  # (the dilated kernel: shapes first)
        _zero_kernel(x, weight, nd, dilation, False, onednn)
    _refuse_kernel_dtype(x, nd, dilation)
    if x.dtype.is_complex:  # (an unbatched input: batched first, as PyTorch)
        out = _complex_conv(lambda i, k, b: _conv_nd(nd, i, k, b, stride, padding, dilation,
                                                     groups), x, weight, bias)
        return out.squeeze(0) if unbatched else out
    _zero_kernel(x, weight, nd, dilation, False, onednn)
    last = not unbatched and _writes_channels_last(x, weight, stride, dilation, groups)
    if key is not None:
        if len(_checked) >= 1024:
            _checked.clear()
        _checked[key] = (stride, pads, dilation, unbatched, last)
    return _run_conv(x, weight, bias, stride, pads, dilation, groups, unbatched, last)


def _run_conv(x: Tensor, weight: Tensor, bias, stride: tuple, pads: tuple, dilation: tuple,
              groups: int, unbatched: bool, last: bool) -> Tensor:
    """The checked convolution of batched `x`: PyTorch's result (and its node)."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    out = apply(conv_p, *operands, stride=stride, padding=pads, dilation=dilation,
                groups=groups)
    double_backward(out, x, weight, zero=False)
    if unbatched:
        return out.squeeze(0)
    return as_channels_last(out, "ConvolutionBackward0") if last else out


def _complex_conv(conv, x: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """A complex convolution from three real ones (Gauss's trick), as PyTorch computes it:
    with a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi, wr + wi, br + bi), the
    result is a - b + i (c - a - b) (so its node is AddBackward0)."""
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    if bias is None:
        a, b = conv(xr, wr, None), conv(xi, wi, None)
        c = conv(xr + xi, wr + wi, None)
    else:
        a, b = conv(xr, wr, bias.real), conv(xi, wi, None)
        c = conv(xr + xi, wr + wi, bias.real + bias.imag)
    return a - b + 1j * (c - a - b)


def _refuse_kernel_dtype(x: Tensor, nd: int, dilation: tuple) -> None:
    """ATen's CPU convolution kernels by dtype: a dilated one exists for floating, complex and
    int64 only, the undilated ones for every dtype but bool; an empty input runs none."""
    kind = x.dtype._kind
    if kind > 1 or x.numel() == 0 or (kind == 1 and (x.dtype is dt.int64 or max(dilation) == 1)):
        return
    kernel = ("slow_conv_dilated<>" if max(dilation) > 1 else
              "compute_columns3d" if nd == 3 else "slow_conv2d_cpu")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(x.dtype)}\'')


def _zero_kernel(x: Tensor, w: Tensor, nd: int, dilation: tuple, transposed: bool,
                 onednn: bool) -> None:
    """A kernel with a zero-length side refused by the kernel PyTorch would run, in its
    words (a 1-d convolution runs as a 2-d one of height one)."""
    k = tuple(w.shape[2:])
    if min(k) > 0 or x.numel() == 0:
        return
    if onednn:
        kind = "deconvolution" if transposed else "convolution"
        raise RuntimeError(f"could not create a primitive descriptor for the {kind} forward "
                           "propagation primitive. Run workload with environment variable "
                           "ONEDNN_VERBOSE=all to get additional diagnostic information.")
    if transposed and nd == 3:
        raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                           "kernel_height x kernel_width) tensor expected for weight, but got: "
                           f"{list(w.shape)}")
    k = (1,) * (nd == 1) + k
    if max(dilation) > 1 and not transposed:
        raise RuntimeError(f"kernel size should be greater than zero, but got {list(k)}")
    if nd == 3:
        raise RuntimeError("kernel size should be greater than zero, but got: "
                           f"{' x '.join(map(str, k))} (TxHxW)")
    raise RuntimeError("kernel size should be greater than zero, but got kernel_height: "
                       f"{k[0]} kernel_width: {k[1]}")


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-d cross-correlation over (N, C, L) inputs."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-d cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-d cross-correlation over (N, C, D, H, W) inputs."""
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(nd: int, input, weight, bias, stride, padding, output_padding, groups,
                       dilation) -> Tensor:
    for pos, (arg, x) in enumerate((("input", input), ("weight", weight), ("bias", bias))):
        if not isinstance(x, Tensor) and not (x is None and arg == "bias"):
            raise not_tensor(f"conv_transpose{nd}d", arg, pos + 1, x)
    g = read_geometry(f"conv_transpose{nd}d", None, (input, weight, bias),
                      dict(stride=stride, padding=padding, output_padding=output_padding,
                           groups=groups, dilation=dilation))
    stride, padding, output_padding = g["stride"], g["padding"], g["output_padding"]
    groups, dilation = g["groups"], g["dilation"]
    input, weight, bias = cast_for("lower", input, weight, bias)
    _check(input, weight, nd, groups, True, bias, padding, stride, dilation, output_padding)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    pad = _tuple(padding, nd, "padding")
    opad = _tuple(output_padding, nd, "output_padding")
    _zero_dilation(nd, dilation, True)
    if any(opad[i] >= stride[i] and opad[i] >= dilation[i] for i in range(nd)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got {_per_dim_words(nd, opad, stride, dilation)}")
    k = weight.shape[2:]
    size = tuple((x.shape[2 + i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (k[i] - 1)
                 + opad[i] + 1 for i in range(nd))
    if min(size) < 1:  # (in 2-d words for a 1-d input: a height of one)
        lead = (1,) * max(0, 2 - nd)
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, lead + x.shape[2:]))}). "
            f"Calculated output size per channel: ({' x '.join(map(str, lead + size))}). "
            "Output size is too small")
    big_opad = any(opad[i] >= stride[i] for i in range(nd))
    onednn = _runs_onednn(x, weight, stride, dilation, groups, big_opad)
    _check_dtypes(x, weight, bias, nd, True, onednn)
    if x.dtype.is_complex:
        out = _complex_conv(lambda i, k, b: _conv_transpose_nd(
            nd, i, k, b, stride, padding, output_padding, groups, dilation), x, weight, bias)
        return out.squeeze(0) if unbatched else out
    _zero_kernel(x, weight, nd, dilation, True, onednn)  # (checked before the dtype)
    if x.dtype._kind <= 1 and x.dtype is not dt.int64 and x.numel():  # (empty: no kernel)
        # (ATen's transposed kernels are built for floating, complex and int64 only)
        raise NotImplementedError(f'"slow_conv_transpose{max(nd, 2)}d_out_cpu" not '
                                  f"implemented for '{type_name(x.dtype)}'")
    if bias is not None and bias.dtype is not input.dtype:
        bias = bias.to(input.dtype)  # (PyTorch's 1-d and 2-d kernels take it in the input's)
    x_shape = (x.shape[0], weight.shape[1] * groups) + size
    # The transposed convolution is the input-gradient of the convolution it transposes.
    operands = (x, weight) if bias is None else (x, weight, bias)
    out = apply(conv_input_grad_p, *operands, stride=stride,
                padding=tuple((p, p) for p in pad), dilation=dilation, groups=groups,
                x_shape=x_shape, transposed=True)
    double_backward(out, x, weight, zero=False)
    if unbatched:
        return out.squeeze(0)
    if _writes_channels_last(x, weight, stride, dilation, groups,
                             any(opad[i] >= stride[i] for i in range(nd))):
        return as_channels_last(out, "ConvolutionBackward0")
    return out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_transpose_nd(3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """PyTorch's generic entry point: dispatches on the weight's rank and `transposed`."""
    nd = weight.ndim - 2
    if transposed:
        return _conv_transpose_nd(nd, input, weight, bias, stride, padding, output_padding,
                                  groups, dilation)
    return _conv_nd(nd, input, weight, bias, stride, padding, dilation, groups)


TENSOR_METHODS: dict = {}

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "convolution"]
