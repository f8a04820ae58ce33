"""`mx.fast`: MLX's fused kernels (`rms_norm`, `layer_norm`, `rope`,
`scaled_dot_product_attention`, `cross_entropy`, `gated_delta_update`) as compositions of
ember.mlx ops; kernels from Metal / CUDA source are refused as MLX's CPU build refuses them. Values
follow MLX's (statistics accumulated in float32, results in the input's dtype);
gradients come from the composed ops."""

from __future__ import annotations

import math

import numpy as np

import ember as E

from .._listing import listing
from . import _dtypes as D
from . import _ops as ops
from ._array import _wrap, array
from ._attention_checks import SIGNATURE as _SDPA
from ._attention_checks import check_attention
from ._device import check_stream
from ._dtypes import float32, int64
from ._fast_binding import binds
from ._gated_delta import SIGNATURE as _GATED_DELTA
from ._gated_delta import gated_delta_update as _gated_delta_update
from ._info import finfo
from ._rope_checks import SIGNATURE as _ROPE
from ._rope_checks import check_rope
from ._source_kernels import cuda_kernel, metal_kernel, precompiled_cuda_kernel  # noqa: F401


def _f32(x: array) -> array:
    return x if x.dtype is float32 else x.astype(float32)


def _norm_type(name: str, x: array, params: tuple) -> D.Dtype:
    """The checks of MLX's fused norms, in its order, and the type they compute in: the
    promotion of x and its parameters (with a weight; x's own type without one)."""
    if x.ndim == 0:
        raise ValueError(f"[{name}] Input must have at least 1 dimension but got input with "
                         "0 dimensions.")
    for label, p in params:
        if p is None:
            continue
        if p.ndim != 1:
            raise ValueError(f"[{name}] {label} must have 1 dimension but has {p.ndim} "
                             "dimensions.")
        if p.size != x.shape[-1]:
            raise ValueError(f"[{name}] {label} must have the same size as the last "
                             f"dimension of x but has {p.size} elements.")
    out = x.dtype
    if params[0][1] is not None:
        for _, p in params:
            out = out if p is None else D.promote_types(out, p.dtype)
    if out.kind != "f":
        raise ValueError(f"[{name}] Received unsupported type {out.name}.")
    return out


@binds("rms_norm(x: array, weight: array | None, eps: float, *, stream: StreamOrDevice = None) "
       "-> array", {"x": "array", "weight": "array?", "eps": "float"})
def rms_norm(x: array, weight: array | None, eps: float, *, stream=None) -> array:
    """`x / sqrt(mean(x**2, -1) + eps) * weight` over the last axis: statistics in
    float32, the normalised x rounded to the result type before the weight scales it."""
    out = _norm_type("rms_norm", x, (("(*weight)", weight),))
    xf = _f32(x)
    y = xf * ops.rsqrt(ops.mean(ops.square(xf), axis=-1, keepdims=True) + eps)
    y = y.astype(out)
    return y if weight is None else (weight * y).astype(out)


@binds("layer_norm(x: array, weight: array | None, bias: array | None, eps: float, *, stream: "
       "StreamOrDevice = None) -> array",
       {"x": "array", "weight": "array?", "bias": "array?", "eps": "float"})
def layer_norm(x: array, weight: array | None, bias: array | None, eps: float, *,
               stream=None) -> array:
    """`(x - mean) / sqrt(var + eps) * weight + bias` over the last axis: statistics in
    float32, the normalised x rounded to the result type (see `_norm_type`) before the
    weight and bias apply, and the result in that type (a bias alone does not promote)."""
    out = _norm_type("layer_norm", x, (("weight", weight), ("bias", bias)))
    if out is float32 and all(p is None or p.dtype is float32 for p in (x, weight, bias)):
        # one op: ember's layer norm (float32 statistics, forward and backward fused)
        return _wrap(E.nn.functional.layer_norm(
            x._t, x.shape[-1:], None if weight is None else weight._t,
            None if bias is None else bias._t, eps), float32)
    xf = _f32(x)
    mean = ops.mean(xf, axis=-1, keepdims=True)
    var = ops.var(xf, axis=-1, keepdims=True)
    y = ((xf - mean) * ops.rsqrt(var + eps)).astype(out)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(out)


def _log(base: float) -> float:
    """The natural log of a rope base as C's `log` gives it: -inf at 0 and NaN below, so a
    base <= 0 gives NaN frequencies as in MLX rather than Python's math domain error."""
    if base > 0 or math.isnan(base):
        return math.log(base)
    return -math.inf if base == 0 else math.nan


@binds(_ROPE, {"a": "array", "dims": "int", "traditional": "bool", "base": "float?",
               "scale": "float", "freqs": "array?"})
def rope(a: array, dims: int, *, traditional: bool, base: float | None, scale: float,
         offset, freqs: array | None = None, stream=None) -> array:
    """Rotary positional encoding of the first `dims` features of `a` (B, ..., L, D), at
    positions `offset + arange(L)` times `scale`; an offset vector gives each of the B
    entries its own. `traditional` rotates consecutive pairs (x0, x1), (x2, x3), ...;
    otherwise the two halves of the `dims` features."""
    if isinstance(offset, np.generic | np.ndarray):  # (MLX's binding makes an array of it)
        offset = array(offset)
    check_rope(a, dims, traditional, base, scale, offset, freqs)
    L = a.shape[-2]
    half = dims // 2
    if freqs is None:
        inv = ops.exp(ops.arange(half, dtype=float32) * (-2.0 * _log(base) / dims))
    else:
        inv = ops.reciprocal(_f32(freqs))
    pos = ops.arange(L, dtype=float32)
    if isinstance(offset, int) and not -2**31 <= offset < 2**31:
        offset = array(offset)  # (int64, wrapped to int32 below as MLX wraps it)
    if isinstance(offset, array) and offset.dtype.size == 8:
        # NOTE: MLX keeps the positions of a 64-bit offset in int32: 2**32 + 5 (int64 or
        # uint64) rotates as 5 and 2**31 as -2**31; uint32 and narrower ones are exact
        offset = offset.astype(D.int32)
    if isinstance(offset, array) and offset.size > 1:
        # one offset per batch entry: positions (B, 1, ..., 1, L)
        pos = _f32(offset).reshape(-1, *[1] * (a.ndim - 2)) + pos
    else:
        pos = pos + (_f32(offset.reshape(())) if isinstance(offset, array) else offset)
    theta = ops.expand_dims(pos * scale, -1) * inv  # (L, half)
    # NOTE: MLX rounds the float32 cosines and sines to `a`'s dtype and rotates in that
    # dtype (each product and sum of a float16 input is a float16 op)
    cos, sin = ops.cos(theta).astype(a.dtype), ops.sin(theta).astype(a.dtype)
    rot, rest = a[..., :dims], a[..., dims:]
    if traditional:
        pairs = rot.reshape(*rot.shape[:-1], half, 2)
        x1, x2 = pairs[..., 0], pairs[..., 1]
        out = ops.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
        out = out.reshape(*rot.shape)
    else:
        x1, x2 = rot[..., :half], rot[..., half:]
        out = ops.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    if rest.shape[-1]:
        out = ops.concatenate([out, rest], axis=-1)
    return out.astype(a.dtype)


@binds(_SDPA, {"q": "array", "k": "array", "v": "array", "scale": "float", "sinks": "array?",
               "force_fused": "bool"})
def scaled_dot_product_attention(q: array, k: array, v: array, *, scale: float,
                                 mask=None, sinks: array | None = None,
                                 force_fused: bool = False, stream=None) -> array:
    """softmax(q @ k.T * scale + mask) @ v over (B, heads, L, D) inputs, in the type q, k
    and v promote to; `k` / `v` may have fewer heads (grouped-query attention: each serves
    heads/kv_heads queries). `mask` is None, "causal" (query i sees keys up to i + S - L),
    a boolean array (True = attend) or an additive array."""
    dt = check_attention(q, k, v, scale, mask, sinks, force_fused)
    q, k, v = (x if x.dtype is dt else x.astype(dt) for x in (q, k, v))
    B, n_q, L, D = q.shape
    n_kv, S = k.shape[1], k.shape[2]
    causal = isinstance(mask, str) and mask == "causal"
    if n_q == n_kv and sinks is None and (mask is None or (causal and L == S)) \
            and q.dtype.kind == "f" and q.dtype is k.dtype is v.dtype:
        # one op: ember's fused attention (the same softmax(q k^T scale) v, forward and
        # backward; a causal mask of equal lengths is its is_causal)
        return _wrap(E.nn.functional.scaled_dot_product_attention(
            q._t, k._t, v._t, is_causal=causal, scale=scale), q.dtype)
    if n_q != n_kv:
        k = ops.repeat(k, n_q // n_kv, axis=1)
        v = ops.repeat(v, n_q // n_kv, axis=1)
    scores = (q * scale) @ ops.swapaxes(k, -1, -2)
    if isinstance(mask, str):
        qi = ops.expand_dims(ops.arange(L), -1) + (S - L)
        mask = qi >= ops.arange(S)
    if mask is not None:
        if mask.dtype.name == "bool":
            # NOTE: the type's lowest finite value, not -inf, as MLX fills: a row that
            # attends to nothing gets uniform weights, not NaN
            lowest = array(finfo(scores.dtype).min, scores.dtype)
            scores = ops.where(mask, scores, lowest)
        else:
            scores = scores + mask.astype(scores.dtype)
    if sinks is not None:
        sink = ops.broadcast_to(ops.reshape(sinks.astype(scores.dtype), (1, -1, 1, 1)),
                                (*scores.shape[:-1], 1))
        scores = ops.concatenate([sink, scores], axis=-1)
        probs = ops.softmax(scores, axis=-1, precise=True)[..., 1:]
    else:
        probs = ops.softmax(scores, axis=-1, precise=True)
    return probs @ v


def _shape(s) -> str:
    """A shape as MLX's messages print it: `(3,5)`."""
    return "(" + ",".join(str(d) for d in s) + ")"


@binds("cross_entropy(logits: array, targets: array, *, stream: StreamOrDevice = None) -> "
       "array", {"logits": "array", "targets": "array"})
def cross_entropy(logits: array, targets: array, *, stream=None) -> array:
    """`logsumexp(logits, -1) - logits[..., targets]`: the loss of each row of `logits`
    against its class index in `targets` (shape `logits.shape[:-1]`), as float32.

    MLX's CPU path (its fused kernel is Metal / CUDA only): both terms in the logits'
    dtype, then the difference cast to float32. The values agree with MLX's to the
    round-off of its logsumexp (which sums its own exp in its own order: a few float32
    ulps of the terms). A negative index counts from the end, as MLX's gather reads it."""
    if logits.ndim < 1:
        raise ValueError("[cross_entropy] logits must have at least 1 dimension but got input "
                         f"with {logits.ndim} dimensions.")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"[cross_entropy] targets shape {_shape(targets.shape)} does not "
                         f"match logits shape {_shape(logits.shape)} with the last axis removed.")
    if logits.dtype.kind != "f":
        raise ValueError(f"[cross_entropy] Received unsupported logits type {logits.dtype.name}.")
    if targets.dtype.kind not in "iu":
        raise ValueError("[cross_entropy] targets must be integer class indices but got "
                         f"{targets.dtype.name}.")
    if logits.size == 0:
        raise ValueError("[logsumexp] Received empty array.")
    index = targets.astype(int64)
    index = ops.where(index < 0, index + logits.shape[-1], index)
    picked = ops.take_along_axis(logits, ops.expand_dims(index, -1), axis=-1)
    loss = ops.logsumexp(logits, axis=-1) - ops.squeeze(picked, -1)
    return loss.astype(float32)


@binds(_GATED_DELTA, {"q": "array", "k": "array", "v": "array", "gamma": "array",
                      "beta": "array", "initial_state": "array?", "mask": "array?"})
def gated_delta_update(q: array, k: array, v: array, gamma: array, beta: array,
                       initial_state: array | None = None, mask: array | None = None,
                       stream=None) -> list[array]:
    """The gated delta rule over a (B, T, heads, dims) sequence: `[outputs, final state]`
    (see `_gated_delta`)."""
    check_stream(stream)  # NOTE: unlike the other kernels, MLX names the stream first here
    return _gated_delta_update(q, k, v, gamma, beta, initial_state, mask)


__dir__ = listing(globals(), ("cuda_kernel", "metal_kernel", "precompiled_cuda_kernel"))
