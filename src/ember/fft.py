"""`ember.fft`: PyTorch's `torch.fft` namespace (discrete Fourier transforms and helpers).

One primitive, `fft`, does the transforms, over a tuple of dims (`dim`) whose sizes are
already what the transform needs (the public functions trim or zero-pad with ember ops
first, so that part differentiates by itself); its `kind` is one of PyTorch's three ops,
whose node names it keeps (FftC2CBackward0 ...):
  c2c  complex -> complex, forward (e^-) or inverse (e^+)
  r2c  real -> complex, the last dim keeps n // 2 + 1 entries (onesided)
  c2r  complex (onesided) -> real, the last dim grows to `last`
Each carries a `scale` ("none", "n" for 1/n, "sqrt" for 1/sqrt(n)), the factor applied
to the sum; `norm=` of the public functions picks it by direction as PyTorch does. The
VJPs are the adjoint transforms with the same scale:
  c2c  the other direction
  r2c  zero-pad the onesided gradient to full length, c2c inverse, real part
  c2r  r2c of the gradient, with the entries that stand for two (conjugate) bins doubled
Every kind is linear over the reals, so a tangent is the transform of the tangent.
float32 computes and returns complex64, float64 complex128; integers go to the default
dtype; float16 / bfloat16 are refused as on PyTorch's CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _dtype as dt
from ._tensor import Tensor
from ._view import wrap_dim
from .amp.autocast_mode import cast_for
from .ops._arg_parser_text import need_tensor
from .ops._common import type_name, write_out
from .ops.creation import zeros
from .ops.join import cat, roll
from .ops.nn_ops import constant_pad_nd
from .ops.registry import Primitive, apply, defbatch, deflinear, defvjp, saves

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]

# NumPy's `norm=` that applies `scale` in each direction.
_NP_NORM = {
    (True, "none"): "backward", (True, "n"): "forward", (True, "sqrt"): "ortho",
    (False, "none"): "forward", (False, "n"): "backward", (False, "sqrt"): "ortho",
}


def _replace(shape, dim: int, size: int) -> tuple[int, ...]:
    shape = list(shape)
    shape[dim] = size
    return tuple(shape)


# --- the primitive -----------------------------------------------------------------------

def _c2c_kernel(a, *, dim, forward, scale):
    fn = np.fft.fftn if forward else np.fft.ifftn
    if not dim:
        return np.array(a, dtype=a.dtype)
    return fn(a, axes=dim, norm=_NP_NORM[forward, scale]).astype(a.dtype, copy=False)


def _r2c_kernel(a, *, dim, scale, onesided=True):
    out = np.fft.rfftn(a, axes=dim, norm=_NP_NORM[True, scale])
    out = out.astype(np.complex64 if a.dtype == np.float32 else np.complex128, copy=False)
    return out if onesided else _conjugate_fill(out, a.shape[dim[-1]], dim[-1])


def _conjugate_fill(half, n: int, d: int):
    """A two-sided transform of a real signal from its one-sided half: X[k] = conj(X[n-k])
    above the middle, as PyTorch fills it (so a zero there is -0 in its imaginary part)."""
    m = half.shape[d]
    upper = np.conj(np.flip(np.take(half, np.arange(1, n - m + 1), axis=d), axis=d))
    return np.concatenate([half, upper], axis=d)


def _c2r_kernel(a, *, dim, last, scale):
    s = [a.shape[d] for d in dim[:-1]] + [last]
    out = np.fft.irfftn(a, s=s, axes=dim, norm=_NP_NORM[False, scale])
    return out.astype(np.float32 if a.dtype == np.complex64 else np.float64, copy=False)


_KERNELS = {"c2c": _c2c_kernel, "r2c": _r2c_kernel, "c2r": _c2r_kernel}


def _dense_order(strides, dims) -> list[int]:
    """The dims of a transform's result from outermost to innermost, as PyTorch's CPU
    `_exec_fft` lays it out: the untransformed (batch) dims by decreasing input stride,
    then the transformed dims in the order they are executed."""
    batch = [d for d in range(len(strides)) if d not in dims]
    return sorted(batch, key=lambda d: -strides[d]) + list(dims)


def _dense_strides(shape, order) -> list[int]:
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return strides


def _fft_kernel(a, *, kind, dim, **params):
    # NOTE: PyTorch's CPU transforms return a dense result in the order `_dense_order`
    # gives, not in the input's layout nor always row-major (a channels-last image's
    # rfft2 is row-major, its fft over the last dim is not). A multi-dim c2r runs as a c2c
    # over the leading dims, then a 1-d c2r over the last, each laid out that way.
    out = _KERNELS[kind](a, dim=dim, **params)
    if out.ndim <= 1 or not dim:
        return out
    if kind == "c2r" and len(dim) > 1:
        order = _dense_order(a.strides, dim[:-1])
        order = _dense_order(_dense_strides(a.shape, order), dim[-1:])
    else:
        order = _dense_order(a.strides, dim)
    if order == list(range(out.ndim)) and out.flags.c_contiguous:
        return out
    res = np.empty([out.shape[d] for d in order], out.dtype).transpose(np.argsort(order))
    res[...] = out
    return res


def _write_result(result: Tensor, out: Tensor | None, name: str) -> Tensor:
    """`result` into `out=`, which must be complex for a complex result and floating for a
    real one (PyTorch's check, with the name of the n-d transform a 2-d one runs)."""
    if out is not None:
        if result._dtype.is_complex and not out._dtype.is_complex:
            raise RuntimeError(f"{name} expects a complex output tensor, but got "
                               f"{type_name(out._dtype)}")
        if not result._dtype.is_complex and not out._dtype.is_floating_point:
            raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                               f"{type_name(out._dtype)}")
    return write_out(result, out)


def _fft_meta(x, *, kind, dim, scale, forward=True, last=0, **params):
    if kind == "c2c":
        return x._shape, x._dtype
    if kind == "r2c":
        n = x._shape[dim[-1]] // 2 + 1 if params.get("onesided", True) else x._shape[dim[-1]]
        return _replace(x._shape, dim[-1], n), x._dtype.to_complex()
    return _replace(x._shape, dim[-1], last), x._dtype.to_real()


def _c2c_vjp(g, in_shape, *, dim, forward, scale):
    return apply(fft_p, g, kind="c2c", dim=dim, forward=not forward, scale=scale)


def _r2c_vjp(g, in_shape, *, dim, scale, onesided=True):
    last = dim[-1]
    n, m = in_shape[last], g._shape[last]
    if n > m:
        g = cat([g, zeros(_replace(g._shape, last, n - m), dtype=g._dtype, device=g.device)],
                last)
    return apply(fft_p, g, kind="c2c", dim=dim, forward=False, scale=scale).real


def _c2r_vjp(g, in_shape, *, dim, last, scale):
    gx = apply(fft_p, g, kind="r2c", dim=dim, scale=scale)
    m = last // 2 + 1
    doubled = last - m  # bins 1..doubled stand for themselves and their mirror images
    if doubled > 0:
        w = np.ones(m, g._dtype.np)
        w[1:1 + doubled] = 2
        shape = [1] * g.ndim
        shape[dim[-1]] = m
        from .ops.creation import tensor

        gx = gx * tensor(w.reshape(shape), device=g.device)
    return gx


_VJPS = {"c2c": _c2c_vjp, "r2c": _r2c_vjp, "c2r": _c2r_vjp}


def _fft_vjp(g, out, x, *, kind, in_shape, **params):
    return _VJPS[kind](g, in_shape, **params)


def _fft_batch(args, dims, *, kind, dim, **params):
    x = args[0].movedim(dims[0], 0)
    return apply(fft_p, x, kind=kind, dim=tuple(d + 1 for d in dim), **params), 0


# One transform primitive; `kind` says which (c2c, r2c, c2r), and PyTorch names the node
# after it (FftC2CBackward0 ...). Every kind is linear (over the reals), so its tangent is
# the transform of the tangent.
fft_p = Primitive("fft", _fft_kernel, _fft_meta,
                  grad_name=lambda args, params: f"Fft{params['kind'].upper()}Backward0")
defvjp(fft_p, _fft_vjp, reads=((),), in_shape=True)  # r2c: the input's length
deflinear(fft_p)
defbatch(fft_p, _fft_batch)


# --- argument handling --------------------------------------------------------------------

def _scale(norm: str | None, forward: bool) -> str:
    if norm is None or norm == "backward":
        return "none" if forward else "n"
    if norm == "forward":
        return "n" if forward else "none"
    if norm == "ortho":
        return "sqrt"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


# NOTE: PyTorch words the complex-input refusal by the kernel that raises it: the
# n-dimensional real transforms (rfft2 as well as rfftn) name rfftn, and ihfft2/ihfftn
# fail in their dtype check.
_REAL_ONLY_MESSAGES = {
    "rfft2": "rfftn expects a real-valued input tensor, but got {d}",
    "rfftn": "rfftn expects a real-valued input tensor, but got {d}",
    "ihfft2": "Only supports floating-point dtypes, but found: {d}",
    "ihfftn": "Only supports floating-point dtypes, but found: {d}",
}


def _check_dtype(x: Tensor, fname: str, real_only: bool = False) -> Tensor:
    need_tensor(x, f"fft_{fname}")  # (the parser knows fft's functions as fft_*)
    x, = cast_for("fp32", x)  # every fft_* is on PyTorch's CPU autocast fp32 list
    d = x._dtype
    if d in (dt.float16, dt.bfloat16) or d is getattr(dt, "complex32", None):
        raise RuntimeError(f"Unsupported dtype {type_name(d)}")
    if real_only and d.is_complex:
        raise RuntimeError(_REAL_ONLY_MESSAGES.get(fname, "{f} expects a real input tensor, "
                                                   "but got {d}").format(f=fname, d=type_name(d)))
    if d._kind < 2:
        x = x.to(dt.get_default_dtype())
    return x


def _complex(x: Tensor) -> Tensor:
    return x if x._dtype.is_complex else x.to(x._dtype.to_complex())


def _dims_and_sizes(x: Tensor, s, dim, default_all: bool = True):
    """The wrapped transform dims and the size each should have (PyTorch's fftn rules)."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(s, int):
        s = (s,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        if s is not None:
            if len(s) > x.ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{x.ndim} dimensions.")
            dims = tuple(range(x.ndim - len(s), x.ndim))
        else:
            dims = tuple(range(x.ndim)) if default_all else ()
    else:
        dims = tuple(wrap_dim(d, x.ndim) for d in dim)
        if x.ndim == 0 and dims:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = tuple(x._shape[d] for d in dims)
    else:
        sizes = tuple(x._shape[d] if n == -1 else n for d, n in zip(dims, s))
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """`x` trimmed or zero-padded (at the end) to `sizes` along `dims`: each trim a slice, then
    every pad in one constant_pad_nd (PyTorch's nodes, SliceBackward0 and
    ConstantPadNdBackward0)."""
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        d %= x.dim()
        have = x._shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            pad[2 * (x.dim() - 1 - d) + 1] = n - have
    return constant_pad_nd(x, pad) if any(pad) else x


def _one(dim, n):
    return (None if n is None else (n,)), (dim,)


def _exec_dims(x: Tensor, dims, keep_last: bool) -> tuple[int, ...]:
    """`dims` in the order PyTorch's CPU transform executes them: by decreasing stride of
    `x` (a one-sided transform keeps its last dim last). It decides the result's layout."""
    st = x.stride()
    head = list(dims[:-1] if keep_last else dims)
    head.sort(key=lambda d: -st[d])
    return tuple(head) + (tuple(dims[-1:]) if keep_last else ())


# --- complex-to-complex -------------------------------------------------------------------

def _c2c(x, s, dim, norm, forward, fname, default_all=True):
    x = _check_dtype(x, fname)
    dims, sizes = _dims_and_sizes(x, s, dim, default_all)
    if not x._dtype.is_complex and fname in ("fft", "ifft"):
        # NOTE: PyTorch's one-dimensional transforms of a real signal run a two-sided r2c
        # (node FftR2CBackward0; the inverse conjugates the forward one's result)
        x = _resize(x, dims, sizes)
        out = saves(apply(fft_p, x, kind="r2c", dim=dims, scale=_scale(norm, forward),
                          onesided=False), x)
        return out if forward else out.conj()
    if x._dtype.is_complex:
        x = _resize(x, dims, sizes)
        return apply(fft_p, x, kind="c2c", dim=_exec_dims(x, dims, False) if dims else dims,
                     forward=forward, scale=_scale(norm, forward))
    # (cast, then resized: PyTorch's order of nodes)
    c = _resize(_complex(x), dims, sizes)
    out = apply(fft_p, c, kind="c2c", dim=_exec_dims(c, dims, False) if dims else dims,
                forward=forward, scale=_scale(norm, forward))
    # (a real input goes through PyTorch's r2c, whose node keeps it)
    return saves(out, x)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out=None) -> Tensor:
    """One-dimensional discrete Fourier transform along `dim`."""
    s, d = _one(dim, n)
    return _write_result(_c2c(input, s, d, norm, True, "fft"), out, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out=None) -> Tensor:
    """Inverse of `fft`."""
    s, d = _one(dim, n)
    return _write_result(_c2c(input, s, d, norm, False, "ifft"), out, "ifft")


def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
         norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional transform over `dim` (all dims, or the last len(s), by default)."""
    return _write_result(_c2c(input, s, dim, norm, True, "fftn"), out, "fftn")


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `fftn`."""
    return _write_result(_c2c(input, s, dim, norm, False, "ifftn"), out, "fftn")


def fft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
         norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional transform over the last two dims."""
    return _write_result(_c2c(input, s, dim, norm, True, "fft2"), out, "fftn")


def ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `fft2`."""
    return _write_result(_c2c(input, s, dim, norm, False, "ifft2"), out, "fftn")


# --- real-to-complex and back -------------------------------------------------------------

def _r2c(x, s, dim, norm, fname, forward=True):
    x = _check_dtype(x, fname, real_only=True)
    dims, sizes = _dims_and_sizes(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(x, dims, sizes)
    # (the rule reads the input's length only, but PyTorch's r2c node keeps the input)
    return saves(apply(fft_p, x, kind="r2c", dim=_exec_dims(x, dims, True),
                       scale=_scale(norm, forward)), x)


def _c2r_sizes(x, s, dim, fname):
    """A one-sided input's transform dims, the sizes it is resized to (the last one
    `last // 2 + 1`) and `last`, the length of the real result's last transformed dim."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(s, int):
        s = (s,)
    dims, sizes = _dims_and_sizes(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or s[-1] == -1:
        last = 2 * (x._shape[dims[-1]] - 1)
    else:
        last = sizes[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    return dims, sizes[:-1] + (last // 2 + 1,), last


def _c2r(x, s, dim, norm, fname, forward=False):
    x = _check_dtype(x, fname)
    dims, sizes, last = _c2r_sizes(x, s, dim, fname)
    x = _resize(_complex(x), dims, sizes)
    return apply(fft_p, x, kind="c2r", dim=_exec_dims(x, dims, True), last=last,
                 scale=_scale(norm, forward))


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out=None) -> Tensor:
    """Transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    s, d = _one(dim, n)
    return _write_result(_r2c(input, s, d, norm, "rfft"), out, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out=None) -> Tensor:
    """Inverse of `rfft`: a real signal of length n (default 2 * (size - 1))."""
    s, d = _one(dim, n)
    return _write_result(_c2r(input, s, d, norm, "irfft"), out, "irfft")


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional `rfft` (onesided in the last transformed dim)."""
    return _write_result(_r2c(input, s, dim, norm, "rfftn"), out, "rfftn")


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
           norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `rfftn`."""
    return _write_result(_c2r(input, s, dim, norm, "irfftn"), out, "irfftn")


def rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional `rfft`."""
    return _write_result(_r2c(input, s, dim, norm, "rfft2"), out, "rfftn")


def irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `rfft2`."""
    return _write_result(_c2r(input, s, dim, norm, "irfft2"), out, "irfftn")


def _hermitian(x, s, dim, norm, fname):
    # as PyTorch: resized first, a forward c2c over all but the last dim, then conjugated
    # and a one-sided c2r over the last (its nodes in that order)
    x = _check_dtype(x, fname)
    dims, sizes, last = _c2r_sizes(x, s, dim, fname)
    x = _resize(_complex(x), dims, sizes)
    if len(dims) > 1:
        x = _c2c(x, None, dims[:-1], norm, True, fname)
    return _c2r(x.conj(), (last,), dims[-1:], norm, fname, forward=True)


def _ihermitian(x, s, dim, norm, fname):
    x = _check_dtype(x, fname, real_only=True)
    dims, sizes = _dims_and_sizes(x, s, dim)
    if len(dims) <= 1:
        return _r2c(x, sizes, dims, norm, fname, forward=False).conj()
    # as PyTorch: resized first, a one-sided inverse over the last dim, then a c2c inverse
    # over the rest (which decides the result's layout and its node, FftC2CBackward0)
    x = _resize(x, dims, sizes)
    half = _r2c(x, None, dims[-1:], norm, fname, forward=False).conj_physical()
    return _c2c(half, None, dims[:-1], norm, False, fname)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out=None) -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half: a real result."""
    s, d = _one(dim, n)
    return _write_result(_hermitian(input, s, d, norm, "hfft"), out, "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out=None) -> Tensor:
    """Inverse of `hfft`: the onesided inverse transform of a real signal."""
    s, d = _one(dim, n)
    return _write_result(_ihermitian(input, s, d, norm, "ihfft"), out, "ihfft")


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional `hfft` (the last transformed dim holds the onesided half)."""
    return _write_result(_hermitian(input, s, dim, norm, "hfftn"), out, "hfftn")


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
           norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `hfftn`."""
    return _write_result(_ihermitian(input, s, dim, norm, "ihfftn"), out, "ihfftn")


def hfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional `hfft`."""
    return _write_result(_hermitian(input, s, dim, norm, "hfft2"), out, "hfftn")


def ihfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of `hfft2`."""
    return _write_result(_ihermitian(input, s, dim, norm, "ihfft2"), out, "ihfftn")


# --- frequencies and shifts ---------------------------------------------------------------

def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an n-point transform: [0, 1, ..., -(n // 2), ..., -1] / (d n)."""
    _freq_dtype("fftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return write_out(_ramp(k, d * n, dtype, device, requires_grad), out)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """Non-negative sample frequencies of an n-point `rfft`: [0, 1, ..., n // 2] / (d n)."""
    _freq_dtype("rfftfreq", dtype)
    count = int(n / 2) + 1  # (C's division, toward zero, as PyTorch's)
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                           f"[{count}]")
    return write_out(_ramp(np.arange(count), d * n, dtype, device, requires_grad), out)


def _freq_dtype(name: str, dtype) -> None:
    """PyTorch's refusals of a frequency ramp's dtype: integers by name, complex by arange."""
    if dtype is None:
        return
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{type_name(dtype)}\'')


def _ramp(k: np.ndarray, denom: float, dtype, device, requires_grad: bool) -> Tensor:
    # As PyTorch: the integer ramp in the result dtype, times 1 / (d n) (inf for a zero
    # d n, so a zero frequency is NaN) rounded to that dtype.
    from .ops.creation import tensor

    dtype = dtype or dt.get_default_dtype()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.float64(1.0) / np.float64(denom)
        values = k.astype(dtype.np) * np.asarray(scale, dtype=dtype.np)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def _shift_dims(x: Tensor, dim, fname: str) -> tuple[int, ...]:
    need_tensor(x, f"fft_{fname}")
    if dim is None:
        return tuple(range(x.ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(wrap_dim(d, x.ndim) for d in dim)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Move the zero frequency to the centre (a roll by size // 2 along each dim)."""
    dims = _shift_dims(input, dim, "fftshift")
    if not dims:
        return input.clone()
    return roll(input, [input._shape[d] // 2 for d in dims], list(dims))


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Inverse of `fftshift` (a roll by (size + 1) // 2 along each dim)."""
    dims = _shift_dims(input, dim, "ifftshift")
    if not dims:
        return input.clone()
    return roll(input, [(input._shape[d] + 1) // 2 for d in dims], list(dims))


def __getattr__(name: str):
    from .compat import submodule_or_missing

    return submodule_or_missing(__name__, name)

