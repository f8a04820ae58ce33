"""`mlx.core.fft` on ember: discrete Fourier transforms over ember.fft.

MLX computes every transform in single precision: the input is cast to complex64 (float32
for `rfft*`), the output is complex64 (float32 for `irfft*`). Sizes `n`/`s` truncate or
zero-pad the input before the transform, and a normalisation other than "backward" is a
multiplication of the unnormalised result by a float32 scale afterwards, as MLX does it.
The transforms are linear ember ops, so they differentiate. `stft` / `istft` are MLX's graphs
of these transforms, framing, windowing and overlap-adding, in ember's ops.
"""

from __future__ import annotations

import math

import numpy as np

import ember as E

from .._listing import listing
from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, cast
from ._compile_shapes import no_output_shapes
from ._fft_binding import bound
from ._padding import pad

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
    # (MLX slices a longer input, zero-pads a shorter one by a slice update; its Slice and
    # FFT primitives are refused by a shapeless compile)
    no_output_shapes("Slice" if any(w < h for h, w in zip(a.shape, in_shape)) else "FFT")
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


@bound
def fft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """One-dimensional DFT (complex64)."""
    return _one(a, n, axis, norm, False, False, "fft")


@bound
def ifft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """One-dimensional inverse DFT (complex64)."""
    return _one(a, n, axis, norm, False, True, "ifft")


@bound
def rfft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """DFT of real input: the n // 2 + 1 non-negative frequencies."""
    return _one(a, n, axis, norm, True, False, "rfft")


@bound
def irfft(a, n: int | None = None, axis: int = -1, norm: str = "backward") -> array:
    """Inverse of `rfft` (float32), `n` output points, by default 2 * (size - 1)."""
    return _one(a, n, axis, norm, True, True, "irfft")


@bound
def fft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional DFT over `axes`."""
    return _many(a, s, axes, norm, False, False, "fft2")


@bound
def ifft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional inverse DFT over `axes`."""
    return _many(a, s, axes, norm, False, True, "ifft2")


@bound
def rfft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Two-dimensional DFT of real input (the last axis halved)."""
    return _many(a, s, axes, norm, True, False, "rfft2")


@bound
def irfft2(a, s=None, axes=(-2, -1), norm: str = "backward") -> array:
    """Inverse of `rfft2`."""
    return _many(a, s, axes, norm, True, True, "irfft2")


@bound
def fftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional DFT over `axes` (all axes by default)."""
    return _many(a, s, axes, norm, False, False, "fftn")


@bound
def ifftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional inverse DFT."""
    return _many(a, s, axes, norm, False, True, "ifftn")


@bound
def rfftn(a, s=None, axes=None, norm: str = "backward") -> array:
    """N-dimensional DFT of real input (the last axis halved)."""
    return _many(a, s, axes, norm, True, False, "rfftn")


@bound
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
    # (MLX rolls axis by axis, empty ones skipped: by a Split, or by Slices where the shift
    # is a whole turn)
    rolled = [(s, a.shape[ax]) for s, ax in zip(shifts, axes) if a.shape[ax]]
    if rolled:
        no_output_shapes("Slice" if rolled[0][0] % rolled[0][1] == 0 else "Split")
    return _wrap(E.roll(a._t, shifts, axes), a._dtype)


@bound
def fftshift(a, axes=None) -> array:
    """Move the zero frequency to the centre (a roll by size // 2 on each axis)."""
    return _shift("fftshift", a, axes, False)


@bound
def ifftshift(a, axes=None) -> array:
    """Undo `fftshift`."""
    return _shift("ifftshift", a, axes, True)


@bound
def fftfreq(n: int, d: float = 1.0) -> array:
    """The sample frequencies of an n-point DFT (float32)."""
    if n <= 0:
        raise ValueError("[fftfreq] `n` must be greater than 0.")
    if d == 0.0:
        raise ValueError("[fftfreq] `d` must be non-zero.")
    freqs = O.concatenate([O.arange(0, (n + 1) // 2, dtype=D.float32),
                           O.arange(-(n // 2), 0, dtype=D.float32)])
    return O.multiply(freqs, array(1.0 / (n * d), D.float32))


@bound
def rfftfreq(n: int, d: float = 1.0) -> array:
    """The sample frequencies of `rfft`'s output (float32)."""
    if n <= 0:
        raise ValueError("[rfftfreq] `n` must be greater than 0.")
    if d == 0.0:
        raise ValueError("[rfftfreq] `d` must be non-zero.")
    return O.multiply(O.arange(0, n // 2 + 1, dtype=D.float32),
                      array(1.0 / (n * d), D.float32))


# -- short-time transforms ------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _window(window, win_length: int, n_fft: int, op: str) -> array:
    """The window (ones of `win_length` by default), zero-padded to `n_fft` with the extra
    zero on the right when the padding is odd."""
    if window is None:
        if win_length < 0:
            raise ValueError("[full] Negative dimensions not allowed.")
        win = O.ones((win_length,), D.float32)
    else:
        win = _arr(window)
    if win.ndim != 1:
        raise ValueError(f"[{op}] window must be a one-dimensional array.")
    short = n_fft - win.shape[0]
    if short < 0:
        raise ValueError(f"[{op}] window length must not exceed n_fft.")
    return pad(win, [(short // 2, short - short // 2)]) if short else win


def _padded(x: array, width: int, mode: str) -> array:
    """`x` padded by `width` on both ends of its last axis, as `np.pad` (and MLX's `pad`)
    does it: "reflect" and "symmetric" reflect as often as the width needs."""
    if mode not in _PAD_MODES:
        raise ValueError(f"Invalid padding mode ({mode}) passed to pad")
    if mode == "constant":
        return pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)])
    n = x.shape[-1]
    i = np.arange(-width, n + width)
    if mode == "edge":
        i = np.clip(i, 0, n - 1)
    elif mode == "reflect":
        i = np.abs(i) % (2 * n - 2) if n > 1 else np.zeros_like(i)
        i = np.where(i >= n, 2 * n - 2 - i, i)
    else:
        i = i % (2 * n)
        i = np.where(i >= n, 2 * n - 1 - i, i)
    return O.take(x, array(i.astype(np.int32)), axis=-1)


def _at_least_tiny(envelope: array) -> array:
    """`maximum(envelope, 1e-8)`, 1e-8 a float32 in the envelope's dtype. A complex
    envelope (from a complex window) is ordered as MLX orders complex numbers: by real
    part, then imaginary part, NaN first."""
    tiny = float(np.float32(1e-8))
    if envelope.dtype is not D.complex64:
        return O.maximum(envelope, array(tiny, D.float32).astype(envelope.dtype))
    re, im = _wrap(E.real(envelope._t), D.float32), _wrap(E.imag(envelope._t), D.float32)
    keep = (re > tiny) | ((re == tiny) & (im > 0)) | O.isnan(re) | O.isnan(im)
    return O.where(keep, envelope, array(tiny, D.complex64))


@bound
def stft(x, n_fft: int = 2048, hop_length: int | None = None, win_length: int | None = None,
         window=None, center: bool = True, pad_mode: str = "reflect",
         norm: str = "backward", onesided: bool | None = None) -> array:
    """Short-time Fourier transform of the last axis of `x`: frames of `n_fft` samples,
    `hop_length` apart (n_fft // 4), times `window` (ones of `win_length`, n_fft), each
    transformed; complex64 of shape (..., n_freq, n_frames). `center` pads n_fft // 2 on
    both ends first (`pad_mode`); `onesided` (real input) keeps the n_fft // 2 + 1
    non-negative frequencies, as `rfft`, which reads only the real part of a complex frame.

    MLX's graph (mlx/fft.cpp): frames times window in their promoted dtype, then the
    transform in single precision, so float64 input is transformed as float32."""
    _check_norm(norm, "stft")
    if n_fft <= 0:
        raise ValueError("[stft] n_fft must be positive.")
    x = _arr(x)
    if x.ndim < 1:
        raise ValueError("[stft] Input must have at least one dimension.")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise ValueError("[stft] hop_length must be positive.")
    if onesided is None:
        onesided = x.dtype is not D.complex64
    win = _window(window, n_fft if win_length is None else win_length, n_fft, "stft")
    if x.shape[-1] == 0:  # (MLX folds the leading axes with reshape(-1, 0))
        raise ValueError("[reshape] Cannot infer the shape of an empty array")
    if center:
        x = _padded(x, n_fft // 2, pad_mode)
    if x.shape[-1] < n_fft:
        raise ValueError("[stft] Input is too short for the given n_fft.")
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    starts = np.arange(n_frames, dtype=np.int32)[:, None] * hop
    frames = O.multiply(O.take(x, array(starts + np.arange(n_fft, dtype=np.int32)), axis=-1),
                        win)
    if onesided and frames.dtype is D.complex64:
        frames = _wrap(E.real(frames._t), D.float32)  # (what rfft's cast to float32 keeps)
    spec = _transform(frames, [n_fft], [-1], onesided, False, norm)
    return O.swapaxes(spec, -1, -2)


@bound
def istft(stft_matrix, n_fft: int | None = None, hop_length: int | None = None,
          win_length: int | None = None, window=None, center: bool = True,
          norm: str = "backward", onesided: bool | None = None,
          length: int | None = None) -> array:
    """Inverse of `stft`: each frame's inverse transform (`irfft` if `onesided`, the
    default, else the real part of `ifft`) times the window, overlap-added, divided by the
    overlap-added squared window (at least 1e-8), the centring pad cut off; `length`
    trims or zero-pads the result. `n_fft` defaults to 2 * (n_freq - 1) (n_freq if not
    `onesided`). float32, or the window's dtype where that is wider.

    MLX's graph (mlx/fft.cpp), op for op: the frames are cut into blocks of `hop_length`
    samples and block k of frame i added at output block i + k, k in order, so apart from
    the transforms the sums are MLX's."""
    _check_norm(norm, "istft")
    z = _arr(stft_matrix)
    if z.ndim < 2:
        raise ValueError("[istft] Input must have at least two dimensions (freq, frames).")
    onesided = True if onesided is None else onesided
    *lead, n_freq, n_frames = z.shape
    if n_fft is None:
        n_fft = (n_freq - 1) * 2 if onesided else n_freq
    if n_fft <= 0:
        raise ValueError("[istft] n_fft must be positive.")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise ValueError("[istft] hop_length must be positive.")
    win = _window(window, n_fft if win_length is None else win_length, n_fft, "istft")
    if n_freq * n_frames == 0:  # (MLX folds the leading axes with reshape(-1, f, t))
        raise ValueError("[reshape] Cannot infer the shape of an empty array")
    # each frame's inverse transform, along the frequency axis where it stands, times the
    # window, then the frames made rows by a copying reshape.
    # NOTE: not MLX's swap-then-transform: NumPy's FFT of a transposed array comes back
    # column-major, and ember's lazy graph, taking kernels' results as row-major, would
    # then lower the block reshapes below to views that cannot be made.
    frames = _transform(z, [n_fft], [-2], onesided, True, norm)
    if not onesided:
        frames = _wrap(E.real(frames._t), D.float32)
    frames = O.multiply(frames, O.reshape(win, (n_fft, 1)))
    frames = O.reshape(O.reshape(O.swapaxes(frames, -1, -2), (*lead, n_frames * n_fft)),
                       (*lead, n_frames, n_fft))
    seg = -(-n_fft // hop)
    extra = seg * hop - n_fft
    sq = O.square(win)
    if extra:
        frames = pad(frames, [(0, 0)] * (frames.ndim - 1) + [(0, extra)])
        sq = pad(sq, [(0, extra)])
    blocks = O.reshape(frames, (*lead, n_frames, seg, hop))
    sq_blocks = O.broadcast_to(O.reshape(sq, (1, seg, hop)), (n_frames, seg, hop))
    out_len = (n_frames + seg - 1) * hop
    signal = O.zeros((*lead, out_len), frames.dtype)
    envelope = O.zeros((out_len,), frames.dtype)
    for k in range(seg):
        shift = [(0, 0)] * len(lead) + [(k, seg - 1 - k), (0, 0)]
        signal = signal + O.reshape(pad(blocks[..., k, :], shift), (*lead, out_len))
        envelope = envelope + O.reshape(pad(sq_blocks[:, k, :], shift[len(lead):]),
                                        (out_len,))
    signal = signal / _at_least_tiny(envelope)
    full = n_fft + (n_frames - 1) * hop
    start = n_fft // 2 if center else 0
    if length is None:
        return signal[..., start:full - start if center else full]
    signal = signal[..., start:min(full, start + length)]
    if signal.shape[-1] < length:
        signal = pad(signal, [(0, 0)] * len(lead) + [(0, length - signal.shape[-1])])
    return signal


__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn",
           "ifftshift", "irfft", "irfft2", "irfftn", "istft", "rfft", "rfft2", "rfftfreq",
           "rfftn", "stft"]


__dir__ = listing(globals(), __all__)
