"""MLX's `exp` saturates, and so do the ops its CPU kernels build on it.

MLX's CPU `exp` (mlx/backend/cpu/simd/math.h) computes in float32 whatever the float dtype
(float64 too) and makes 2**k from exponent bits, so it gives no subnormal results: it is 0
where `x * log2(e)` (in float32) is below -126.5, i.e. x below about -87.683, and inf for every
x above 88, where NumPy's exp is still finite up to 88.72 and subnormal down to -103.9; in
between, its polynomial is up to 64 ulps from the true exp near |x| = 88. `mlx_exp` is that
exp bit for bit (in C where native kernels run, csrc/mlx_math.c, else a NumPy port), so what
MLX prints, ember prints:

- `exp`: a member of ember's unary family; its VJP is the cotangent times the output, as
  MLX's (so inf above 88, 0 below the cut).
- `sigmoid`: MLX's `1 / (1 + exp(|x|))` reflected for x >= 0 (its exp rounded to the
  input's dtype), so 0 for x below -88 (complex refused, as MLX).
- `softmax`: MLX's kernel takes exp(x - max), 0 below the cut; `mask_softmax_input` sets
  those entries to -inf first, so their probabilities and gradients are exactly 0.
- `logaddexp`: MLX's `max + log1p(exp(min - max))` is the max below the cut.

Complex inputs keep NumPy's exp (MLX's complex exp is the C library's).
"""

from __future__ import annotations

import numpy as np

import ember as E

from ... import native
from ...native import calls
from ...ops.registry import apply, defvjp
from ...ops.unary import cj, defjvp1, unary, unary_p
from . import _threefry as _tf

_F32 = np.dtype(np.float32)
_LOG2E = np.float32(1.442695)
_HIGH = np.float32(88.0)


def below_cut(x: np.ndarray) -> np.ndarray:
    """Where MLX's exp of the float32 values `x` is 0 (no subnormal results)."""
    return x * _LOG2E < np.float32(-126.5)


NATIVE_MIN = {"elements": 4096}  # (below it the NumPy port is as quick as a native call)


def native_map(name: str, x: np.ndarray) -> np.ndarray | None:
    """csrc/mlx_math.c's `name` over the contiguous float32 array `x`, or None where native
    kernels are off, unavailable, or `x` is small."""
    if x.size < NATIVE_MIN["elements"]:
        return None
    lib = native.library("mlx_math")
    if lib is None:
        return None
    out = np.empty_like(x)
    calls.entry(lib, f"{name}_f32", [calls.P, calls.P, calls.I64])(
        calls.ptr(x), calls.ptr(out), x.size)
    return out


def mlx_exp(x) -> np.ndarray:
    """MLX's float32 exp of float32 values, bit for bit: in C (csrc/mlx_math.c) where
    native kernels run, else `_threefry`'s NumPy port (the reference; 30-100x slower)."""
    x = np.asarray(x, dtype=_F32, order="C")
    flat = x.reshape(-1)
    out = native_map("mlx_exp_map", flat)
    return (_tf._expf(flat) if out is None else out).reshape(x.shape)


def _in_f32(kernel):
    """Run `kernel` on float32 values and give the input's float dtype back (MLX computes
    its exp in float32 for float16, bfloat16 and float64 alike); complex inputs take
    NumPy's exp."""
    def run(a: np.ndarray) -> np.ndarray:
        if a.dtype.kind == "c":
            return np.exp(a)
        out = kernel(np.asarray(a, dtype=_F32))
        return out if a.dtype == _F32 else out.astype(a.dtype)
    run.__name__ = kernel.__name__
    return run


exp_p = unary("mlx_exp", _in_f32(mlx_exp), grad_name="ExpBackward0")
defvjp(exp_p, lambda g, out, x: g * cj(out), reads=((),), save_output=True)
defjvp1(exp_p, lambda t, out, x: t * out)

def _sigmoid_kernel(a: np.ndarray) -> np.ndarray:
    """MLX's sigmoid: 1 / (1 + exp(|x|)), reflected as 1 - y for x >= 0, with the exp
    rounded to the input's dtype first (so sigmoid(0.000977) is 0.5 in float16) and the
    steps after it in float32 (float64 for float64)."""
    work = np.dtype(np.float64) if a.dtype == np.float64 else _F32
    e = mlx_exp(np.abs(a)).astype(a.dtype).astype(work)
    with np.errstate(all="ignore"):
        y = work.type(1) / (work.type(1) + e)
        return np.where(a < 0, y, work.type(1) - y).astype(a.dtype)


sigmoid_p = unary("mlx_sigmoid", _sigmoid_kernel, grad_name="SigmoidBackward0")
defvjp(sigmoid_p, lambda g, out, x: g * cj(out * (1 - out)), reads=((),), save_output=True)
defjvp1(sigmoid_p, lambda t, out, x: t * (out * (1 - out)))


def exp(t):
    """MLX's exp of the float tensor `t` (inf above 88, no subnormal results)."""
    return apply(unary_p, t, fn=exp_p)


def sigmoid(t):
    """MLX's sigmoid of the float tensor `t` (see `_sigmoid_kernel`; MLX has no complex
    sigmoid)."""
    if t.is_complex():
        raise ValueError("[sigmoid] Not supported for complex64.")
    return apply(unary_p, t, fn=sigmoid_p)


def _cut_mask(diff):
    """A bool tensor: where MLX's exp of the real tensor `diff` is 0."""
    return (diff.detach().float() * float(_LOG2E)) < -126.5


def mask_softmax_input(t, dims: tuple):
    """`t` with -inf where MLX's softmax over `dims` takes exp(t - max) as 0."""
    if t.is_complex() or t.numel() == 0:
        return t
    with E.no_grad():
        cut = _cut_mask(t - E.amax(t.detach(), dim=dims, keepdim=True))
    return E.where(cut, float("-inf"), t)


def saturate_logaddexp(a, b, out):
    """`out` (= logaddexp(a, b)) set to max(a, b) where MLX's exp(min - max) is 0."""
    if out.is_complex():
        return out
    with E.no_grad():
        cut = _cut_mask(E.minimum(a, b) - E.maximum(a, b))
    return E.where(cut, E.maximum(a, b).to(out.dtype), out)
