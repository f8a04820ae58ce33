"""Average pooling, plain and adaptive, as PyTorch computes it: each window's sum taken in
order from zero, then divided by the window's divisor.

A window's sum is a depthwise convolution with a kernel of ones over the input's planes
(batch and channels as one): its kernels, native and NumPy, add the taps one after another
from zero as PyTorch's pooling loops do and never read the padding, so the sums are
PyTorch's to the bit, a NaN or inf reaches only the windows that hold it, and the gradient
(the convolution's input gradient) only each window's inputs. No primitive of its own:
forward, gradient, forward mode and vmap are the convolution's and the division's (plain
eager calls of row-major float inputs run those kernels directly, under one eager-only node
where grad is wanted: see "the planned path" below).

The divisors are PyTorch's: the window's size, counting padding or not (or
`divisor_override`); adaptive pooling divides by each dim's bin length in turn. Adaptive
bins that do not tile a dim evenly (15 -> 7) are still averaged by products with per-dim
matrices of bin means: laying them out evenly for the convolution (a gather, and its
scatter for the gradient) measured 5-15x slower than those products; a NaN or inf there
reaches every output of its row and column, and values may differ in the last bit.
float16 and bfloat16 are summed and divided in float32 (PyTorch's accumulating type) and
rounded once, but in their own type for 3-d adaptive pooling, as PyTorch's kernel does;
int64 is summed exactly and divided with truncation.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import dispatch
from .._core.primitive import primitives
from .._tensor import Tensor, _wrap
from ..amp.autocast_mode import autocast_op
from ._arg_parser_text import need_tensor, touch_then_check
from ._call_plans import Plans, window_key
from ._common import type_name
from ._pool_shapes import (
    adaptive_1d_size,
    adaptive_checks,
    adaptive_sizes,
    bins,
    pool_out,
    window_args,
)
from .conv import (
    _layout_of,
    as_channels_last,
    channels_last_like,
    conv_input_grad_p,
    conv_p,
    row_major_only,
)
from .double_backward import double_backward
from .nn_ops import keep_channels_last
from .one_node import one_node, plain_call, records
from .registry import Primitive, apply, defvjp, rename_node, saves, shows

_LOW = (dt.float16, dt.bfloat16)


def _const(values: np.ndarray, like: Tensor) -> Tensor:
    """A constant of `like`'s dtype and device."""
    from .creation import tensor

    return tensor(values, dtype=like.dtype, device=like.device)


def _empty(x: Tensor, shape: tuple) -> Tensor:
    """An output with no elements, still on `x`'s graph."""
    return x.flatten()[:0].reshape(shape)


def _window_sums(x: Tensor, kernel: tuple, stride: tuple, pads: tuple) -> Tensor:
    """Each window's sum over `x`'s last len(kernel) dims, `pads` ((before, after) per dim)
    never read: a depthwise convolution with ones over the planes of the leading dims."""
    nd = len(kernel)
    lead, sp = x.shape[:-nd], x.shape[-nd:]
    planes = math.prod(lead)
    xr = x.reshape((1, planes) + tuple(sp))
    if planes == 1:  # (one plane is no depthwise convolution: a second one, ignored)
        xr = xr.expand((1, 2) + tuple(sp))
    ones = _const(np.ones((xr.shape[1], 1) + tuple(kernel)), x)
    out = apply(conv_p, xr, ones, stride=tuple(stride), padding=tuple(pads),
                dilation=(1,) * nd, groups=xr.shape[1])
    return out[:, :planes].reshape(tuple(lead) + tuple(out.shape[2:]))


def _tap_sums(x: Tensor, kernel: tuple, stride: tuple, pads: tuple, out: tuple) -> Tensor:
    """`_window_sums` in `x`'s own dtype (int64's, exact; float16's where PyTorch's kernel
    adds in it): the taps' strided views added in order, from zero."""
    from .nn_ops import constant_pad_nd

    nd = len(kernel)
    xp = constant_pad_nd(x, [p for pair in reversed(pads) for p in pair])
    total = 0
    for taps in itertools.product(*(range(k) for k in kernel)):
        view = xp
        for i, t in enumerate(taps):
            dim = x.ndim - nd + i
            view = view.narrow(dim, t, (out[i] - 1) * stride[i] + 1)[
                (slice(None),) * dim + (slice(None, None, stride[i]),)]
        total = total + view
    return total


def _counts(size: int, k: int, s: int, p: int, n: int, count_include_pad: bool) -> list:
    """PyTorch's divisor of each of the n windows along one dim (it multiplies them)."""
    counts = []
    for o in range(n):
        start = o * s - p
        end = min(start + k, size + p)
        counts.append(end - start if count_include_pad else min(end, size) - max(start, 0))
    return counts


def _avg_pool_size_check(input: Tensor, kernel, stride, padding, ceil_mode: bool) -> None:
    """PyTorch's refusal of a window larger than the (padded) input, in its kernels' words:
    the 3-d kernel compares the sizes, the 2-d one (which also runs 1-d) the output's."""
    nd = len(kernel)
    sp = input.shape[-nd:]
    if nd == 3:
        if any(sp[i] + 2 * padding[i] < kernel[i] for i in range(3)):
            raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than "
                               f"kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
        return
    out = [pool_out(sp[i], kernel[i], stride[i], padding[i], 1, ceil_mode) for i in range(nd)]
    if any(o <= 0 for o in out):
        c = input.shape[-nd - 1]
        shown_in = "x".join(str(v) for v in (c,) + (1,) * (2 - nd) + tuple(sp))
        shown_out = "x".join(str(v) for v in [c] + [1] * (2 - nd) + out)
        raise RuntimeError(f"Given input size: ({shown_in}). Calculated output size: "
                           f"({shown_out}). Output size is too small")


def _check_dtype(nd: int, input: Tensor) -> None:
    """PyTorch's avg_pool kernels: floating dtypes and int64 (3-d: float32/float64, int64)."""
    d = input.dtype
    ok = d == dt.int64 or (d.is_floating_point and not d.is_complex
                           and (nd < 3 or d not in _LOW))
    if not ok:
        kname = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"
        raise NotImplementedError(f'"{kname}" not implemented for \'{type_name(d)}\'')


def avg_pool_nd(nd: int, input: Tensor, kernel_size, stride=None, padding=0,
                ceil_mode: bool = False, count_include_pad: bool = True,
                divisor_override=None) -> Tensor:
    key = None
    if input.__class__ is not Tensor:
        need_tensor(input, f"avg_pool{nd}d")
    elif divisor_override is None:
        key = _plain_key(nd, input, (kernel_size, stride, padding),
                         (ceil_mode, count_include_pad), graph=True)
        plan = _plans.get(key) if key is not None else None
        if plan:  # (the checks of a call like this one passed)
            out = _from_plan(nd, input, plan, f"AvgPool{nd}DBackward0")
            if out is not None:
                return out
    given_stride = stride
    kernel, stride, padding, _ = window_args("avg", nd, input, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _avg_pool_size_check(input, kernel, stride, padding, ceil_mode)
    _check_dtype(nd, input)
    if nd == 1:  # (PyTorch's 1-d pooling is its 2-d kernel's with a window of height one)
        shown = {"kernel_size": (1,) + kernel, "stride": (1,) + stride,
                 "padding": (0,) + padding}
    else:
        shown = {"kernel_size": _as_given(kernel_size, nd), "stride": _as_given(given_stride, nd),
                 "padding": _as_given(padding, nd)}
    shown.update(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                 divisor_override=divisor_override)
    if key is not None and key not in _plans:
        plan = _plans[key] = _plan(nd, input, kernel, stride, padding, ceil_mode,
                                   count_include_pad)
        if plan:
            plan.shown = shown
            out = _from_plan(nd, input, plan, f"AvgPool{nd}DBackward0")
            if out is not None:
                return out
    return _one_pool(nd, input, lambda x: _avg_pool(nd, x, kernel, stride, padding, ceil_mode,
                                                    count_include_pad, divisor_override),
                     "AvgPool", **shown)


# --- the planned path -----------------------------------------------------------------------
# In plain eager mode (no interpreter on the stack) a float32 / float64 row-major input's
# pooling runs the composite's two kernels, the window sums (a depthwise convolution of ones)
# and the division(s), on its arrays: the same kernels on the same arrays as `_window_sums`
# and the division, so the same bits, without the dozen ops around them. Where grad is
# wanted, that is one eager-only node, `_planned_p`, whose VJP is the composite's, the
# division's then the convolution's input gradient, in ember ops (differentiable again). A
# plan (the checked geometry, the kernel of ones, the divisors) is kept by what the checks
# read (`_plain_key`): a call like one seen before takes no check again.

_plans = Plans()  # key -> _Plan, or False for a call the composite runs
_FAST = (dt.float32, dt.float64)


class _Plan:
    """A pooling's window sums over `planes` planes of size `sp` (the input's `in_shape`)
    into `shape`, then divided by each of `divisors` (arrays or numbers) in turn."""

    __slots__ = ("planes", "sp", "ones", "conv", "shape", "divisors", "in_shape", "shown",
                 "_grad_consts")

    def __init__(self, input: Tensor, kernel: tuple, stride: tuple, pads: tuple, shape: tuple,
                 divisors: tuple) -> None:
        nd = len(kernel)
        self.in_shape = input._shape
        self.sp = tuple(input._shape[-nd:])
        self.planes = math.prod(input._shape[:-nd])
        width = max(self.planes, 2)  # (as `_window_sums`: one plane is no depthwise conv)
        # (one kernel of ones seen `width` times: the plan holds no per-plane memory)
        self.ones = np.broadcast_to(np.ones((1, 1) + kernel, input._dtype.np),
                                    (width, 1) + kernel)
        self.conv = {"stride": stride, "padding": pads, "dilation": (1,) * nd, "groups": width}
        self.shape, self.divisors = shape, divisors
        self.shown = None  # (what the call's node shows, for a plan kept by the call's key)
        self._grad_consts = None

    def grad_consts(self) -> tuple:
        """The kernel of ones and the divisors as the composite's gradient takes them:
        tensors (numbers stay numbers), made once."""
        if self._grad_consts is None:
            from .creation import tensor

            self._grad_consts = tuple(
                tensor(v) if isinstance(v, np.ndarray) else v
                for v in (self.ones,) + self.divisors)
        return self._grad_consts


def _plain_key(nd: int, input: Tensor, sizes: tuple, flags: tuple,
               graph: bool = False) -> tuple | None:
    """What a call's checks and plan depend on: the input's shape, dtype and layout, the
    window sizes (ints, or tuples of them; None) and the flags; None where the call takes
    the composite (an interpreter on the stack, another dtype or device, arguments of other
    types; grad wanted, unless `graph`: the composite's own body asks, inside its node)."""
    if input._dtype not in _FAST or not plain_call(input, graph=graph):
        return None
    key = window_key(nd, input, sizes, flags)
    layout = None if key is None else _layout_of(input)
    return None if layout is None else key + (layout,)


def _plan(nd: int, input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
          ceil_mode: bool, count_include_pad: bool):
    """Average pooling's `_Plan` for these checked arguments, or False where the composite
    runs the call (a layout other than row-major, an empty output)."""
    sp = tuple(input._shape[-nd:])
    out = tuple(pool_out(sp[i], kernel[i], stride[i], padding[i], 1, ceil_mode)
                for i in range(nd))
    shape = tuple(input._shape[:-nd]) + out
    if not _plannable(input, shape):
        return False
    pads = tuple((padding[i], max((out[i] - 1) * stride[i] + kernel[i] - sp[i] - padding[i],
                                  padding[i])) for i in range(nd))
    counts = [_counts(sp[i], kernel[i], stride[i], padding[i], out[i], count_include_pad)
              for i in range(nd)]
    grid = np.asarray(counts[0], np.int64)
    for c in counts[1:]:
        grid = np.multiply.outer(grid, np.asarray(c, np.int64))
    return _Plan(input, kernel, stride, pads, shape, (grid.astype(input._dtype.np),))


def _plannable(input: Tensor, shape: tuple) -> bool:
    return math.prod(shape) > 0 and row_major_only(input)


def _from_plan(nd: int, input: Tensor, plan: _Plan, node: str) -> Tensor | None:
    """A call's pooling from its plan: with no graph to record, the kernels on the arrays;
    else PyTorch's one node, `node` showing what the call's does (the plan's `_planned_p`
    node, renamed); None where the composite's one node is needed (1-d pooling's node sits
    between an unsqueeze and a squeeze; saved-tensor hooks)."""
    if not (input._requires_grad and grad_mode.state.enabled):
        return _run_plan(input, plan)
    if nd == 1 or not records(input):
        return None
    out = dispatch.bind(_planned_p, input, plan=plan)
    shows(out, node, self=input, **plan.shown)
    return double_backward(out, input)


def _planned(input: Tensor, plan: _Plan) -> Tensor:
    """The pooling `plan` describes, of `input`: its node recorded where grad is wanted."""
    if grad_mode.state.enabled and input._requires_grad:
        return dispatch.bind(_planned_p, input, plan=plan)
    return _run_plan(input, plan)


def _run_plan(input: Tensor, plan: _Plan) -> Tensor:
    """The pooling's result from its plan: the composite's window sums (the convolution's
    kernel on the same arrays) and its correctly rounded division(s)."""
    planes, sp = plan.planes, plan.sp
    x = input._np if input._np is not None else input._array()
    x = x.reshape((1, planes) + sp)
    if planes == 1:
        x = np.broadcast_to(x, (1, 2) + sp)
    return _wrap(dispatch.run_quiet(_sums_divided, x, plan))


def _sums_divided(x: np.ndarray, plan: _Plan) -> np.ndarray:
    out = dispatch._cpu[conv_p](x, plan.ones, **plan.conv)[:, :plan.planes].reshape(plan.shape)
    for d in plan.divisors:
        out = np.divide(out, d)
    return out


def _eval_planned(prim, args: tuple, params: dict) -> Tensor:
    (x,) = args
    out = _run_plan(x, params["plan"])
    if grad_mode.state.enabled and x._requires_grad:
        dispatch.autograd.record(prim, dispatch.vjp_rules[prim], args, params, out)
    return out


def _planned_vjp(g: Tensor, out, x, *, plan: _Plan) -> Tensor:
    """The composite's gradient, op for op: through each division in reverse order, then
    the window sums' convolution (its input gradient, the second plane of a single one
    summed back as `expand`'s gradient does)."""
    ones, *divisors = plan.grad_consts()
    for d in reversed(divisors):
        g = g / d
    nd = len(plan.sp)
    g = g.reshape((1, plan.planes) + tuple(g.shape[-nd:]))
    width = plan.conv["groups"]
    if width != plan.planes:  # (the single plane's twin: `[:, :1]`'s gradient, zeros)
        from .join import cat

        g = cat([g, g.new_zeros(g.shape)], 1)
    dx = apply(conv_input_grad_p, g, ones, x_shape=(1, width) + plan.sp, **plan.conv)
    if width != plan.planes:
        dx = dx.sum(1, keepdim=True)
    return dx.reshape(plan.in_shape)


# (eager only, as one_node's: no interpreter sees it, so it is no primitive transforms know)
_planned_p = Primitive("avg_pool_planned", None, impl=_eval_planned)
primitives.remove(_planned_p)
defvjp(_planned_p, _planned_vjp, reads=((),))


def _as_given(v, nd: int) -> tuple:
    """A window argument as PyTorch's node shows it: an int once per dim, a sequence as
    given, None (a stride left to the kernel's) as ()."""
    return () if v is None else (int(v),) * nd if isinstance(v, int) else tuple(map(int, v))


def _one_pool(nd: int, input: Tensor, pool, kernel: str, **shown) -> Tensor:
    """`pool(input)` under PyTorch's one node for it, `{kernel}{nd}DBackward0` showing
    `shown` (ops/one_node.py); 1-d pooling as PyTorch's: the 2-d kernel's node between an
    unsqueeze and a squeeze of dim -2. The node keeps the input, as PyTorch's (its
    double-backward node takes it)."""
    if not records(input):
        return pool(input)
    if nd > 1:
        name = f"{kernel}{nd}DBackward0"
        return shows(one_node(name, pool, input, linear=True, kept=(True,)), name, self=input,
                     **shown)
    name, x = f"{kernel}2DBackward0", input.unsqueeze(-2)
    out = one_node(name, lambda x2: pool(x2.squeeze(-2)).unsqueeze(-2), x, linear=True,
                   kept=(True,))
    return shows(out, name, self=x, **shown).squeeze(-2)


def _avg_pool(nd: int, input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
              ceil_mode: bool, count_include_pad: bool, divisor_override) -> Tensor:
    """The average pooling composite, on checked arguments."""
    sp = input.shape[-nd:]
    out = tuple(pool_out(sp[i], kernel[i], stride[i], padding[i], 1, ceil_mode)
                for i in range(nd))
    shape = tuple(input.shape[:-nd]) + out
    if math.prod(shape) == 0:
        return _empty(input, shape)
    # a window that ceil_mode lets run past the end: zeros after the input's padding
    if divisor_override is None:
        key = _plain_key(nd, input, (kernel, stride, padding),
                         (bool(ceil_mode), bool(count_include_pad)), graph=True)
        plan = _plans.get(key) if key is not None else None
        if plan is None and key is not None:
            plan = _plans[key] = _plan(nd, input, kernel, stride, padding, ceil_mode,
                                       count_include_pad)
        if plan:
            res = _named(saves(_planned(input, plan), input), f"AvgPool{nd}D", input)
            return _keep_channels_last(nd, input, res, "AvgPool2DBackward0")
    pads = tuple((padding[i], max((out[i] - 1) * stride[i] + kernel[i] - sp[i] - padding[i],
                                  padding[i])) for i in range(nd))
    if input.dtype == dt.int64:
        sums = _tap_sums(input, kernel, stride, pads, out)
    else:
        work = input.float() if input.dtype in _LOW else input
        sums = _window_sums(work, kernel, stride, pads)
    if divisor_override is not None:
        divisor = divisor_override
    else:
        counts = [_counts(sp[i], kernel[i], stride[i], padding[i], out[i], count_include_pad)
                  for i in range(nd)]
        grid = np.asarray(counts[0], np.int64)
        for c in counts[1:]:
            grid = np.multiply.outer(grid, np.asarray(c, np.int64))
        divisor = _const(grid, sums)
    if input.dtype == dt.int64:
        from .binary import div

        pooled = div(sums, divisor, rounding_mode="trunc")
    else:
        pooled = (sums / divisor).to(input.dtype)
    # (PyTorch's avg_pool kernels save their input: an in-place op on it refuses backward)
    res = _named(saves(pooled, input), f"AvgPool{nd}D", input)
    return _keep_channels_last(nd, input, res, "AvgPool2DBackward0")


def _keep_channels_last(nd: int, input: Tensor, out: Tensor, node: str) -> Tensor:
    # NOTE: PyTorch's CPU 2-d average pooling (plain and adaptive) allocates its result in
    # `input.suggest_memory_format()`, so a channels-last image stays channels-last; its
    # 3-d kernels return row-major results whatever the input's layout. 1-d pooling is the
    # 2-d kernel's on the input unsqueezed, then squeezed (see `channels_last_1d`).
    if nd == 1:
        return as_channels_last(out, "SqueezeBackward1") if channels_last_1d(input) else out
    return keep_channels_last(input, out, node) if nd == 2 else out


def channels_last_1d(input: Tensor) -> bool:
    """Whether PyTorch's 1-d pooling of `input` comes back with its channel dim innermost:
    it runs the 2-d kernel on `input.unsqueeze(-2)`, whose result keeps that 4-d tensor's
    format, so an (N, C, L) transposed from (N, L, C) pools to (N, C, L') of strides
    (L'C, 1, C)."""
    if input.ndim != 3 or input._is_wrapper:  # (inside vmap the batch keeps its layout)
        return False
    return channels_last_like(input.detach().unsqueeze(-2))


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return avg_pool_nd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    return avg_pool_nd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


@autocast_op("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    return avg_pool_nd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


# --- adaptive ---------------------------------------------------------------------------

def _named(out: Tensor, kernel: str, input: Tensor) -> Tensor:
    """`out` with PyTorch's node name: its 2-d / 3-d kernel's, and for 1-d the squeeze its
    1-d pooling ends with (it pools the input unsqueezed to 2-d). PyTorch's derivative
    kernel takes the input, so a create_graph gradient requires grad where it does (and
    gives it zeros)."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "SqueezeBackward1" if kernel.endswith("1D")
                    else kernel + "Backward0")
        double_backward(out, input)
    return out


def _separable_means(x: Tensor, sizes: tuple) -> Tensor:
    """Uneven adaptive bins: each dim contracted with its (out, in) matrix of bin means.
    Fast, but not PyTorch's sums: a NaN or inf reaches every output its row or column
    meets, and values may differ in the last bit (see the module's note)."""
    from .creation import tensor

    nd = len(sizes)
    for i, out in enumerate(sizes):
        size = x.shape[x.ndim - nd + i]
        m = np.zeros((out, size))
        for o, (start, end) in enumerate(bins(size, out)):
            m[o, start:end] = 1.0 / (end - start)
        dim = x.ndim - nd + i
        mt = tensor(m, dtype=x.dtype, device=x.device)
        x = (x.movedim(dim, -1) @ mt.t()).movedim(-1, dim)
    return x


def adaptive_avg_pool(nd: int, input: Tensor, sizes: tuple) -> Tensor:
    """Adaptive average pooling of `input`'s last nd dims to `sizes` (checked, all known):
    where the bins tile each dim evenly, window sums divided by each dim's bin length in
    turn, as PyTorch's kernel divides; else `_separable_means`."""
    shape = tuple(input.shape[:-nd]) + tuple(sizes)
    if math.prod(shape) == 0:
        return _empty(input, shape)
    sp = input.shape[-nd:]
    node = f"AdaptiveAvgPool{nd}D"
    key = _plain_key(nd, input, (tuple(sizes),), (), graph=True)
    plan = _plans.get(key) if key is not None else None
    if plan is None and key is not None:
        plan = _plans[key] = _adaptive_plan(input, sizes)
    if plan:
        res = _named(saves(_planned(input, plan), input), node, input)
        return _keep_channels_last(nd, input, res, node + "Backward0")
    if any(sp[i] % sizes[i] for i in range(nd)):
        res = _named(saves(_separable_means(input, sizes), input), node, input)
        return _keep_channels_last(nd, input, res, node + "Backward0")
    own = nd == 3 and input.dtype in _LOW  # (PyTorch's 3-d kernel adds and divides in them)
    x = input.float() if input.dtype in _LOW and not own else input
    kernel = tuple(sp[i] // sizes[i] for i in range(nd))
    out = _tap_sums(x, kernel, kernel, ((0, 0),) * nd, sizes) if own else \
        _window_sums(x, kernel, kernel, ((0, 0),) * nd)
    for k in kernel:  # (each dim's bin length in turn, as PyTorch's kernel divides)
        out = out / k
    # (PyTorch's kernel saves its input)
    res = _named(saves(out.to(input.dtype), input), node, input)
    return _keep_channels_last(nd, input, res, node + "Backward0")


def _adaptive_avg_pool(nd: int, input: Tensor, sizes: tuple) -> Tensor:
    """`adaptive_avg_pool` under PyTorch's one node for it."""
    return _one_pool(nd, input, lambda x: adaptive_avg_pool(nd, x, sizes), "AdaptiveAvgPool")


def adaptive_avg_pool_nd(nd: int, input: Tensor, output_size) -> Tensor:
    key = None
    if input.__class__ is not Tensor:  # (torch's Python reads input.size() for 2-d and up)
        touch_then_check(input, "size", f"adaptive_avg_pool{nd}d") if nd > 1 else \
            need_tensor(input, "adaptive_avg_pool1d")
    else:
        key = _plain_key(nd, input, (output_size,), (), graph=True)
        plan = _plans.get(key) if key is not None else None
        if plan:  # (the checks of a call like this one passed)
            out = _from_plan(nd, input, plan, f"AdaptiveAvgPool{nd}DBackward0")
            if out is not None:
                return out
    if nd == 1:
        sizes = (adaptive_1d_size("avg", input, output_size),)
    else:
        sizes = adaptive_sizes(nd, input, output_size)
    if nd == 1 and sizes[0] == 1:  # (the 2-d shortcut below, on the input unsqueezed)
        return adaptive_avg_pool_nd(2, input.unsqueeze(-2), 1).squeeze(-2)
    if all(s == 1 for s in sizes) and len(sizes) == nd:
        # one cell per plane is the mean, as PyTorch computes it before any check of the
        # input (its grad_fn, its dtype errors, nan over an empty plane, any number of dims;
        # it saves nothing); a channels-last (-3d) input gets the mean restrided in place to
        # that format (node AsStridedBackward1)
        out = input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)  # (torch's order)
        if nd > 1 and input.ndim == nd + 2 and channels_last_like(input):
            n, c = input.shape[:2]
            out.as_strided_(out.shape, (c, 1) + (c,) * nd)
        return out
    if nd > 1:
        adaptive_checks("avg", nd, input, sizes)
    elif sizes[0] < 0 or input.shape[-1] == 0:  # (the 2-d kernel's refusals: it runs that)
        if sizes[0] < 0:
            raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater "
                               f"than or equal to 0 but received {{1, {sizes[0]}}}")
        shape = list(input.shape[:-1]) + [1, 0]
        raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {shape} with dimension "
                           f"{input.ndim} being empty")
    if not input.dtype.is_floating_point or input.dtype.is_complex:
        kname = "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d" + (
            "_channels_last" if channels_last_like(input) else "")  # (its kernel's name)
        raise NotImplementedError(f'"{kname}" not implemented for \'{type_name(input.dtype)}\'')
    if key is not None and key not in _plans:
        plan = _plans[key] = _adaptive_plan(input, sizes)
        if plan:
            plan.shown = {}
            out = _from_plan(nd, input, plan, f"AdaptiveAvgPool{nd}DBackward0")
            if out is not None:
                return out
    return _adaptive_avg_pool(nd, input, sizes)


def _adaptive_plan(input: Tensor, sizes: tuple):
    """`adaptive_avg_pool`'s plan where its bins tile each dim evenly: the window sums,
    divided by each dim's bin length in turn; False where the composite runs the call."""
    nd = len(sizes)
    sp = tuple(input._shape[-nd:])
    shape = tuple(input._shape[:-nd]) + tuple(sizes)
    if not _plannable(input, shape) or any(sp[i] % sizes[i] for i in range(nd)):
        return False
    kernel = tuple(sp[i] // sizes[i] for i in range(nd))
    return _Plan(input, kernel, kernel, ((0, 0),) * nd, shape, kernel)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    return adaptive_avg_pool_nd(1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    return adaptive_avg_pool_nd(2, input, output_size)


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed (D', H', W')."""
    return adaptive_avg_pool_nd(3, input, output_size)
