"""`mlx.core.fft` on ember: discrete Fourier transforms over ember.fft.

MLX computes every transform in single precision: the input is cast to complex64 (float32
for `rfft*`), the output is complex64 (float32 for `irfft*`). Sizes `n`/`s` truncate or
zero-pad the input before the transform, and a normalisation other than "backward" is a
multiplication of the unnormalised result by a float32 scale afterwards, as MLX does it.
The transforms are linear ember ops, so they differentiate.
"""

from __future__ import annotations

import math

import ember as E

from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, cast

_NORMS = ("backward", "ortho", "forward")


def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def _scale(n: list, norm: str, inverse: bool) -> float:
    count = math.prod(n)
    if norm == "ortho":
        return math.sqrt(count) if inverse else 1.0 / math.sqrt(count)
    if norm == "forward":
        return count if inverse else 1.0 / count
    return 1.0


def _transform(a: array, n, axes, real: bool, inverse: bool, norm: str) -> array:
    """MLX's `fft_impl`: resize the input along `axes` to `n`, transform, scale."""
    if a.ndim < 1:
        raise ValueError("[fftn] Requires array with at least one dimension.")
    if len(n) != len(axes):
        raise ValueError("[fftn] Shape and axes have different sizes.")
    if not axes:
        return a
    valid = [ax + a.ndim if ax < 0 else ax for ax in axes]
    if len(set(valid)) != len(valid):
        raise ValueError(f"[fftn] Duplicated axis received {_vec(axes)}")
    if min(valid) < 0 or max(valid) >= a.ndim:
        raise IndexError(f"[fftn] Invalid axis received for array with {a.ndim} dimensions.")
    if any(i <= 0 for i in n):
        raise ValueError(f"[fftn] Invalid FFT output size requested {_vec(n)}")
    in_shape = list(a.shape)
    for ax, size in zip(valid, n):
        in_shape[ax] = size
    if real and inverse:
        in_shape[valid[-1]] = n[-1] // 2 + 1
    in_dt = D.float32 if real and not inverse else D.complex64
    t = cast(a._t, a._dtype, in_dt)
    for ax, (have, want) in enumerate(zip(a.shape, in_shape)):
        if want < have:
            t = E.narrow(t, ax, 0, want)
        elif want > have:
            widths = [0, 0] * (a.ndim - 1 - ax) + [0, want - have]
            t = E.nn.functional.pad(t, widths)
    if real and not inverse:
        out = E.fft.rfftn(t, dim=valid)
    elif real:
        out = E.fft.irfftn(t, s=list(n), dim=valid)
    else:
        out = (E.fft.ifftn if inverse else E.fft.fftn)(t, dim=valid)
    out_dt = D.float32 if real and inverse else D.complex64
    out = _wrap(out.to(out_dt.carrier), out_dt)
    scale = _scale(list(n), norm, inverse)
    return out if scale == 1.0 else O.multiply(out, array(scale, out_dt))


def _vec(v) -> str:
    return "(" + ",".join(str(x) for x in v) + ")"


def _size(a: array, axis: int) -> int:
    if not -a.ndim <= axis < a.ndim:
        raise IndexError("SmallVector out of range.")  # (MLX's own words here)
    return a.shape[axis]


def _check_norm(norm: str, op: str) -> None:
    if norm not in _NORMS:
        raise ValueError(f"[{op}] Invalid norm. Expected one of {{'backward', 'ortho', "
                         "'forward'}.")


def _one(a, n, axis: int, norm: str, real: bool, inverse: bool, op: str) -> array:
    _check_norm(norm, op)
    a = _arr(a)
    if n is None:
        n = _size(a, axis)
        if real and inverse:
            n = (n - 1) * 2
    return _transform(a, [n], [axis], real, inverse, norm)


def _many(a, s, axes, norm: str, real: bool, inverse: bool, op: str) -> array:
    _check_norm(norm, op)
    a = _arr(a)
    if axes is None:
        if s is not None:
            raise ValueError(f"[{op}] `axes` should not be `None` if `s` is not `None`.")
        axes = list(range(a.ndim))
    axes = list(axes)
    if s is None:
        s = [_size(a, ax) for ax in axes]
        if real and inverse and a.ndim > 0 and s:
            s[-1] = (s[-1] - 1) * 2
    return _transform(a, list(s), axes, real, inverse, norm)


def fft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """One-dimensional DFT (complex64)."""
    return _one(a, n, axis, norm, False, False, "fft")


def ifft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """One-dimensional inverse DFT (complex64)."""
    return _one(a, n, axis, norm, False, True, "ifft")


def rfft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """DFT of real input: the n // 2 + 1 non-negative frequencies."""
    return _one(a, n, axis, norm, True, False, "rfft")


def irfft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """Inverse of `rfft` (float32), `n` output points, by default 2 * (size - 1)."""
    return _one(a, n, axis, norm, True, True, "irfft")


def fft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional DFT over `axes`."""
    return _many(a, s, axes, norm, False, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional inverse DFT over `axes`."""
    return _many(a, s, axes, norm, False, True, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional DFT of real input (the last axis halved)."""
    return _many(a, s, axes, norm, True, False, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Inverse of `rfft2`."""
    return _many(a, s, axes, norm, True, True, "irfft2")


def fftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional DFT over `axes` (all axes by default)."""
    return _many(a, s, axes, norm, False, False, "fftn")


def ifftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional inverse DFT."""
    return _many(a, s, axes, norm, False, True, "ifftn")


def rfftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional DFT of real input (the last axis halved)."""
    return _many(a, s, axes, norm, True, False, "rfftn")


def irfftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """Inverse of `rfftn`."""
    return _many(a, s, axes, norm, True, True, "irfftn")


def _shift(name: str, a, axes, inverse: bool) -> array:
    a = _arr(a)
    if axes is None:
        if a.ndim < 1:
            return a
        axes = list(range(a.ndim))
    axes = [axes] if isinstance(axes, int) else list(axes)
    if not axes:
        return a
    shifts = []
    for ax in axes:
        axis = ax + a.ndim if ax < 0 else ax
        if not 0 <= axis < a.ndim:
            raise IndexError(f"[{name}] Invalid axis {ax} for array with {a.ndim} dimensions.")
        shifts.append(-(a.shape[axis] // 2) if inverse else a.shape[axis] // 2)
    return _wrap(E.roll(a._t, shifts, axes), a._dtype)


def fftshift(a, axes=None) -> array:
    """Move the zero frequency to the centre (a roll by size // 2 on each axis)."""
    return _shift("fftshift", a, axes, False)


def ifftshift(a, axes=None) -> array:
    """Undo `fftshift`."""
    return _shift("ifftshift", a, axes, True)


def fftfreq(n: int, d: float = 1.0) -> array:
    """The sample frequencies of an n-point DFT (float32)."""
    if n <= 0:
        raise ValueError("[fftfreq] `n` must be greater than 0.")
    if d == 0.0:
        raise ValueError("[fftfreq] `d` must be non-zero.")
    freqs = O.concatenate([O.arange(0, (n + 1) // 2, dtype=D.float32),
                           O.arange(-(n // 2), 0, dtype=D.float32)])
    return O.multiply(freqs, array(1.0 / (n * d), D.float32))


def rfftfreq(n: int, d: float = 1.0) -> array:
    """The sample frequencies of `rfft`'s output (float32)."""
    if n <= 0:
        raise ValueError("[rfftfreq] `n` must be greater than 0.")
    if d == 0.0:
        raise ValueError("[rfftfreq] `d` must be non-zero.")
    return O.multiply(O.arange(0, n // 2 + 1, dtype=D.float32),
                      array(1.0 / (n * d), D.float32))


__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn",
           "ifftshift", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]
