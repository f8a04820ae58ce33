"""MLX's CPU kernels where their arithmetic is not a correctly rounded one, so that ember
gives MLX's numbers rather than better ones.

- `erf`: MLX evaluates Abramowitz & Stegun 7.1.26 (absolute error up to 1.5e-7) on its
  own exp, in float32 whatever the dtype. Near erf = -1 that error is all there is of
  1 + erf, which is why MLX's exact GELU gives -4.65e-07 at x = -5.2 where x * Phi(x) is
  -5.0e-07, and erf of a float16 below 1e-6 in magnitude is 0 (float16 goes to 6e-8).
- In float16 / bfloat16, `logaddexp` and `rsqrt` round to the half type after each of
  their steps (MLX's scalar half type does: a half minus a half is a half), which moves
  the result by a whole half-precision unit where one rounding would not. So does
  `softmax` over the last axis without `precise=True`: x - max, its exp, the running sum
  along the row (one element at a time), 1 / sum and each product are all halves. Over
  other axes MLX composes `softmax` and `logsumexp` from half ops (exp(x - max), a half
  sum, a division or log plus max), each rounded.

- Their derivatives in float16 / bfloat16 are MLX's VJPs run as half ops, each step
  rounded (logaddexp, rsqrt and logsumexp as custom functions, the last-axis softmax in
  its primitive's rule): see the NOTE above `_half_logaddexp`.
- `logaddexp` in float32 / float64 is MLX's kernel (max + log1p of its float32 exp) as a
  member of the MLX face's pointwise family, with MLX's derivative: sigmoid(a - b) and
  1 - sigmoid(a - b), whose smaller side is exactly 0 where the sigmoid rounds to 1;
  `tanh` is ember's kernel with MLX's derivative, g / cosh(x)^2.

MLX's sigmoid and its saturating exp are `_saturating`'s (`mlx_exp` here is that exp on
float32 values, within 2 ulps of MLX's). erf is a member of ember's unary family and the
last-axis half softmax a primitive of its own, so gradients (the usual derivatives, as
MLX's VJPs are), vmap and the lazy graph treat them as any other op; vmap of the half
softmax with the batch on the last axis composes half ops, as MLX's vmap rule does.
Each public function here replaces `_ops`' / `_reductions`' one of its name in `mx`.
"""

from __future__ import annotations

import math

import numpy as np

from ember.ops._pointwise import shaped, tangent_sum
from ember.ops.registry import Primitive, apply, defbatch, defjvp, deflower, defvjp
from ember.ops.softmax import _along_batch
from ember.ops.unary import defjvp1, lowp, unary, unary_p

from . import _dtypes as D
from . import _extremes
from . import _ops as O
from . import _reductions as R
from . import _saturating as S
from . import _threefry as _tf
from ._array import _wrap, array, as_array, operands
from ._custom import custom_function
from ._reductions import _float
from ._shapes import broadcast_arrays

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


mlx_exp = S.mlx_exp
def _erf_kernel(a: np.ndarray) -> np.ndarray:
    v = np.asarray(a, dtype=_F32, order="C").reshape(-1)
    core = S.native_map("mlx_erf_abs_map", v)  # (erf of |v|; the sign given here)
    out = _tf._erff(v) if core is None else np.where(v > 0, core, -core)
    return out.reshape(a.shape).astype(a.dtype)


def _exp(t):
    return S.exp(t)


_SQRT_PI_2 = 2 / math.sqrt(math.pi)
erf_fn = unary("mlx_cpu_erf", _erf_kernel, grad_name="ErfBackward0")
defvjp(erf_fn, lambda g, out, x: g * _SQRT_PI_2 * (-x * x).exp())
defjvp1(erf_fn, lambda t, out, x: t * _SQRT_PI_2 * (-x * x).exp())


def _float_map(member, fallback, complex_ok: bool, float64_to_fallback: bool = False):
    """`member` over real floats; complex values (and, with `float64_to_fallback`, float64
    ones, which MLX takes through the C library's double functions) go to `fallback`."""
    def op(a, /, *, stream=None) -> array:
        a = _float(as_array(a))
        if a._dtype.kind == "c" or (float64_to_fallback and a._dtype == D.float64):
            if a._dtype.kind == "c" and not complex_ok:
                raise ValueError(f"[{fallback.__name__}] Not supported for {a._dtype.name}.")
            return fallback(a)
        return _wrap(apply(unary_p, a._t, fn=member), a._dtype)
    op.__name__ = fallback.__name__
    op.__doc__ = f"{fallback.__name__} as MLX's CPU kernel computes it (see the module)."
    return op


erf = _float_map(erf_fn, O.erf, complex_ok=False)


def _float32_kernel(fn):
    """A float32 map of MLX's CPU (`_threefry`'s, in C where native kernels run) over an
    array of float32 or 16-bit values (computed in float32, rounded once, as MLX's kernels
    do)."""
    def kernel(a: np.ndarray) -> np.ndarray:
        v = np.asarray(a, dtype=_F32, order="C")
        return fn(v.reshape(-1)).reshape(a.shape).astype(a.dtype, copy=False)
    return kernel


# NOTE: MLX's float32 log and log1p are the C library's logf / log1pf (glibc's: within an
# ulp, not correctly rounded) and its erfinv a polynomial of its own built on fma; NumPy's
# differ from them in about 8%, 4% and half of float32 values. Their derivatives are
# MLX's VJPs: g / x, g / (1 + x) and g * sqrt(pi) / 2 * exp(erfinv(x)^2)
log_fn = unary("mlx_cpu_log", _float32_kernel(_tf.log_f32), grad_name="LogBackward0")
defvjp(log_fn, lambda g, out, x: g / x)
defjvp1(log_fn, lambda t, out, x: t / x)
log1p_fn = unary("mlx_cpu_log1p", _float32_kernel(_tf.log1p_f32), grad_name="Log1PBackward0")
defvjp(log1p_fn, lambda g, out, x: g / (x + 1.0))
defjvp1(log1p_fn, lambda t, out, x: t / (x + 1.0))
erfinv_fn = unary("mlx_cpu_erfinv", _float32_kernel(_tf.erfinv_f32),
                  grad_name="ErfinvBackward0")
_SQRT_PI_HALF = math.sqrt(math.pi) / 2
defvjp(erfinv_fn, lambda g, out, x: g * _SQRT_PI_HALF * out.square().exp(), reads=((),),
       save_output=True)
defjvp1(erfinv_fn, lambda t, out, x: t * _SQRT_PI_HALF * out.square().exp())
log = _float_map(log_fn, O.log, complex_ok=True, float64_to_fallback=True)
log1p = _float_map(log1p_fn, O.log1p, complex_ok=True, float64_to_fallback=True)
erfinv = _float_map(erfinv_fn, O.erfinv, complex_ok=False, float64_to_fallback=True)

# NOTE: MLX's derivative of tanh (Tanh::vjp) is g / cosh(x)^2, not g * (1 - tanh(x)^2):
# where tanh rounds to +-1 (|x| above 9 in float32) the latter is 0 or a float32 unit
# while MLX's goes on falling (3.5e-26 at x = 30), and it differs by ulps elsewhere
tanh_fn = unary("mlx_tanh", lowp(np.tanh), grad_name="TanhBackward0")
deflower(tanh_fn, "ember_tanh_t({0})", ulps=3)
defvjp(tanh_fn, lambda g, out, x: g / x.cosh().square())
defjvp1(tanh_fn, lambda t, out, x: t / x.cosh().square())
tanh = _float_map(tanh_fn, O.tanh, complex_ok=True)
_HALF = (D.float16, D.bfloat16)


def _logaddexp_kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MLX's float32 / float64 kernel: max + log1p(exp(min - max)), its exp taken in
    float32 (MLX's, which is 0 below about -87.3), the max where either is infinite."""
    with np.errstate(all="ignore"):
        hi, lo = np.maximum(a, b), np.minimum(a, b)
        out = hi + np.log1p(mlx_exp((lo - hi).astype(_F32)).astype(hi.dtype))
        return np.where((lo == -np.inf) | (hi == np.inf), hi, out)


def _logaddexp_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    s = S.sigmoid(a - b)
    return shaped(tangent_sum(None if ta is None else ta * s,
                              None if tb is None else tb * (1.0 - s)), out)


# NOTE: MLX's derivative (LogAddExp::vjp) is sigmoid(a - b) and 1 - sigmoid(a - b), not
# exp(x - out): the smaller side's is exactly 0 once MLX's sigmoid rounds to 1 (at a - b
# above about 17 in float32), where exp(b - out) would still be 4e-8 and less
logaddexp_fn = _extremes.member("mlx_logaddexp", _logaddexp_kernel)
defvjp(logaddexp_fn, lambda g, out, a, b: g * S.sigmoid(a - b),
       lambda g, out, a, b: g * (1.0 - S.sigmoid(a - b)), reads=((0, 1), (0, 1)))
defjvp(logaddexp_fn, _logaddexp_jvp)


def logaddexp(a, b, /, *, stream=None) -> array:
    """log(exp(a) + exp(b)) as max + log1p(exp(min - max)) with MLX's derivative (see
    `logaddexp_fn`); in float16 / bfloat16 each step is a half-precision op, as in MLX's
    kernel."""
    ta, tb, dt = operands(a, b, floating=True)
    if dt.kind == "c":
        return O.logaddexp(a, b)
    if dt not in _HALF:
        return _wrap(apply(_extremes.binary_p, ta, tb, fn=logaddexp_fn), dt)
    x, y = broadcast_arrays(_wrap(ta, dt), _wrap(tb, dt))
    return _half_logaddexp(x, y)


def _half_logaddexp_steps(x: array, y: array) -> array:
    # (picked by one comparison: at a tie maximum / minimum would send the whole
    # gradient to one side, where MLX's is sigmoid(0) = 0.5 to each)
    first = O.greater_equal(x, y)
    hi, lo = O.where(first, x, y), O.where(first, y, x)
    out = hi + O.log1p(_wrap(_exp((lo - hi)._t), x._dtype))
    # (MLX's maximum where either is infinite, and NaN where either is: the comparison
    # above sends a NaN to `lo`)
    special = O.logical_or(O.logical_or(lo == -math.inf, hi == math.inf), O.isnan(hi + lo))
    return O.where(special, O.maximum(x, y), out)


# NOTE: in float16 / bfloat16 the derivatives below are MLX's VJPs run as half ops, each
# rounded to the half type (a whole half-precision unit away from the steps' own chain
# rule, or from one float32 formula rounded once, in about one element in ten):
# logaddexp's is g * s and g * (1 - s) with s = sigmoid(a - b) (LogAddExp::vjp), rsqrt's
# (-0.5 * g) * (out / x) (Sqrt::vjp), logsumexp's g * softmax(x, precise=True)
# (LogSumExp::vjp). Their inputs are broadcast first, as MLX's ops broadcast theirs, so the
# sums over broadcast axes stay with `broadcast_to`'s own derivative.
_half_logaddexp = custom_function(_half_logaddexp_steps)


@_half_logaddexp.vjp
def _half_logaddexp_vjp(primals, cotangent, output):
    a, b = primals
    s = O.sigmoid(a - b)
    return cotangent * s, cotangent * (1.0 - s)


@_half_logaddexp.jvp
def _half_logaddexp_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    s = O.sigmoid(a - b)
    return ta * s + tb * (1.0 - s)


def rsqrt(a, /, *, stream=None) -> array:
    """1 / sqrt(a); in float16 / bfloat16 the square root is rounded to the half type
    before the division, as in MLX's kernel (and MLX's derivative, see above)."""
    a = _float(as_array(a))
    if a._dtype in _HALF:
        return _half_rsqrt(a)
    return O.rsqrt(a)


def _half_rsqrt_steps(a: array) -> array:
    return O.reciprocal(O.sqrt(a))


_half_rsqrt = custom_function(_half_rsqrt_steps)


@_half_rsqrt.vjp
def _half_rsqrt_vjp(x, cotangent, output):
    return (-0.5 * cotangent) * (output / x)


@_half_rsqrt.jvp
def _half_rsqrt_jvp(x, tangent):
    return (-0.5 * tangent) * (_half_rsqrt_steps(x) / x)



def _half_softmax_kernel(x: np.ndarray, *, dim: int) -> np.ndarray:
    d = x.dtype
    rows = np.moveaxis(x, dim, -1)
    with np.errstate(all="ignore"):
        shifted = (rows.astype(_F32) - rows.max(axis=-1, keepdims=True).astype(_F32)).astype(d)
        e = mlx_exp(shifted.astype(_F32)).astype(d)
        # (MLX's row loop: a half sum, rounded at each step, as NumPy's half add rounds)
        total = np.add.accumulate(e, axis=-1)[..., -1] if e.shape[-1] else \
            np.zeros(e.shape[:-1], d)
        scale = (np.float32(1) / total.astype(_F32)).astype(d)
        out = (e.astype(_F32) * scale[..., None].astype(_F32)).astype(d)
    return np.moveaxis(out, -1, dim)


half_softmax_p = Primitive("mlx_half_softmax", _half_softmax_kernel,
                           lambda x, *, dim: (x._shape, x._dtype), grad_name="SoftmaxBackward0")


def _half_softmax_vjp(g, s, dim: int):
    """MLX's Softmax::vjp in half ops, each rounded: s * g - s * sum(s * g) (the sum
    accumulated in float32, as MLX's half sums are)."""
    sv = s * g
    return sv - s * sv.sum(dim, keepdim=True)


defvjp(half_softmax_p, lambda g, out, x, *, dim: _half_softmax_vjp(g, out, dim),
       reads=((),), save_output=True)
defjvp(half_softmax_p, lambda primals, tangents, out, *, dim: None if tangents[0] is None
       else _half_softmax_vjp(tangents[0], out, dim))
_batch_rows = _along_batch(half_softmax_p)


def _half_softmax_batch(args, dims, *, dim):
    """vmap as MLX's: with the batch axis last, the rows are no longer the last axis and
    MLX composes exp(x - max) / sum over the other axis from half ops."""
    x, d = args[0], dims[0]
    if d is None or d != x.ndim - 1 or x.ndim < 2:
        return _batch_rows(args, dims, dim=dim)
    e = _exp(x - x.detach().amax(dim=-2, keepdim=True))
    return e / e.sum(dim=-2, keepdim=True), d


defbatch(half_softmax_p, _half_softmax_batch)


def softmax(a, /, axis=None, *, precise: bool = False, stream=None) -> array:
    """MLX's softmax; in float16 / bfloat16 without `precise`, MLX's half-precision kernel
    over the last axis (see the module) and its composition of half ops over other axes,
    else `_reductions.softmax`."""
    x, axes = _half_axes(a, axis)
    if precise or axes is None:
        return R.softmax(a, axis, precise=precise)
    if _last_only(x, axes):
        return _wrap(apply(half_softmax_p, x._t, dim=x.ndim - 1), x._dtype)
    e = _shifted_exp(x, axes)
    return e / O.sum(e, axes, keepdims=True)


def logsumexp(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    """MLX's logsumexp; over other than the last axis of a float16 / bfloat16 array, its
    composition of half ops (see the module), else `_reductions.logsumexp`."""
    x, axes = _half_axes(a, axis)
    if axes is None:
        return R.logsumexp(a, axis, keepdims)
    if _last_only(x, axes):
        return _half_logsumexp(x, tuple(axes), keepdims)
    top = O.stop_gradient(O.max(x, axes, keepdims=True))
    out = O.log(O.sum(_shifted_exp(x, axes), axes, keepdims=keepdims))
    out = out + top.reshape(out.shape)
    top = top if keepdims else O.squeeze(top, axes)
    return O.where(O.isinf(top), top, out)


def _half_logsumexp_steps(x: array, axes: tuple, keepdims: bool) -> array:
    return R.logsumexp(x, list(axes), keepdims)


_half_logsumexp = custom_function(_half_logsumexp_steps)


@_half_logsumexp.vjp
def _half_logsumexp_vjp(primals, cotangent, output):
    x, axes, keepdims = primals
    g = cotangent if keepdims else O.expand_dims(cotangent, list(axes))
    # (the axes are the last one after axes of length 1: the softmax of that last one)
    return (g * R.softmax(x, -1, precise=True),)


@_half_logsumexp.jvp
def _half_logsumexp_jvp(primals, tangents):
    x, axes, keepdims = primals
    return O.sum(tangents[0] * R.softmax(x, -1, precise=True), list(axes), keepdims=keepdims)


def _half_axes(a, axis):
    """`(a, its axes as a list)` for a non-empty float16 / bfloat16 array and valid axes;
    `(a, None)` for everything `_reductions` is to take (and refuse)."""
    x = as_array(a)
    n = x.ndim
    axes = list(range(n)) if axis is None else list(R._axes(axis, n))
    if x._dtype not in _HALF or x.size == 0 or not axes or not all(
            -n <= ax < n for ax in axes):
        return x, None
    return x, axes


def _last_only(x: array, axes: list) -> bool:
    """Whether MLX runs its one-pass kernel: the last axis, after only length-1 axes."""
    return axes[-1] in (x.ndim - 1, -1) and all(
        axes[i] + 1 == axes[i + 1] and x.shape[axes[i]] == 1 for i in range(len(axes) - 1))


def _shifted_exp(x: array, axes: list) -> array:
    return _wrap(_exp((x - O.stop_gradient(O.max(x, axes, keepdims=True)))._t), x._dtype)


__all__ = ["erf", "erfinv", "log", "log1p", "logaddexp", "logsumexp", "rsqrt", "softmax", "tanh"]
