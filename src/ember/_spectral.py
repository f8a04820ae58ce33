"""The short-time Fourier transform and its inverse: `ember.stft` and `ember.istft`, built as
PyTorch builds them from framing, a window and `ember.fft`.

stft: the signal (padded by n_fft // 2 at both ends when `center`), cut into frames of n_fft
every `hop_length` samples (a strided view), each multiplied by the window (zero-padded to
n_fft when shorter) and transformed (rfft for a real signal and window, else fft), laid out
(freq, frame). istft undoes it: the inverse transform of each frame, times the window, summed
back in place (overlap-add) and divided by the summed squared window.
"""

from __future__ import annotations

from . import _dtype as dt
from . import fft as _fft
from ._dtype import SCALAR_TYPE_NAMES
from ._tensor import Tensor
from ._user_warnings import warn_at_user
from .amp.autocast_mode import autocast_op
from .ops._aten_text import aten_text
from .ops.creation import arange, ones, zeros
from .ops.dtype_views import view_as_real


def _tensor_repr(t: Tensor) -> str:
    return f"torch.{SCALAR_TYPE_NAMES[t._dtype.name]}Tensor"


def _flag(v) -> str:
    return "None" if v is None else str(int(v))


def _full_window(window: Tensor | None, win_length: int, n_fft: int, d: dt.dtype, device):
    """The window as n_fft samples: centred between zeros when win_length < n_fft; ones
    (rectangular) when none is given."""
    w = ones(win_length, dtype=d, device=device) if window is None else window
    if win_length < n_fft:
        from .nn.functional import pad

        left = (n_fft - win_length) // 2
        w = pad(w, [left, n_fft - win_length - left])
    return w


def _stft_warnings(input: Tensor, window: Tensor | None, return_complex: bool | None) -> bool:
    """stft's warnings and its return_complex check, in PyTorch's order: they come after the
    centre padding and before every check of the sizes (a call that then fails has warned)."""
    if window is None:
        warn_at_user(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.", once=True)
    if return_complex is None:
        if not (input._dtype.is_complex or (window is not None and window._dtype.is_complex)):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        return True
    if not return_complex:
        warn_at_user(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise an "
            "error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.", once=True)
    return return_complex


@autocast_op("stft")
def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: (freq, frames) or (batch, freq, frames), complex.
    A real signal and window give the onesided n_fft // 2 + 1 frequencies unless
    `onesided=False`; `normalized` scales by 1/sqrt(n_fft)."""
    if align_to_window:
        raise NotImplementedError("ember's stft does not take align_to_window=True")
    if center:
        from .nn.functional import pad

        ndim = input.ndim
        pad_by = n_fft // 2
        shape = [1] * (3 - ndim) + list(input._shape)
        input = pad(input.view(shape), [pad_by, pad_by], pad_mode)
        input = input.view(input._shape[-ndim:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    return_complex = _stft_warnings(input, window, return_complex)

    def fail(msg: str) -> RuntimeError:
        shown = "None" if window is None else \
            f"{_tensor_repr(window)}{{{list(window._shape)}}}"
        return RuntimeError(
            f"stft({_tensor_repr(input)}{list(input._shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={shown}, normalized={_flag(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : {msg}")

    if input.ndim not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise fail("expected a tensor of floating point or complex values")
    length = input._shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window._shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got "
                   f"window with size {list(window._shape)}")
    frames = input.unfold(-1, n_fft, hop)  # (batch?, frames, n_fft), a view
    if window is not None or win < n_fft:
        frames = frames * _full_window(window, win, n_fft, input._dtype, input.device)
    norm = "ortho" if normalized else "backward"
    if frames._dtype.is_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft.fft(frames, dim=-1, norm=norm)
    elif onesided is False:
        out = _fft.fft(frames, dim=-1, norm=norm)
    else:
        out = _fft.rfft(frames, dim=-1, norm=norm)
    out = out.transpose(-1, -2)
    if not return_complex:
        return view_as_real(out)
    return out


def _overlap_add(frames: Tensor, hop: int, total: int) -> Tensor:
    """(batch, frames, n) summed into (batch, total): frame f's sample k lands at f*hop + k."""
    n_frames, n = frames._shape[-2:]
    at = (arange(n_frames, device=frames.device)[:, None] * hop
          + arange(n, device=frames.device)).reshape(-1)
    out = zeros((frames._shape[0], total), dtype=frames._dtype, device=frames.device)
    return out.index_add(1, at, frames.reshape(frames._shape[0], -1))


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of `stft`: (freq, frames) or (batch, freq, frames) complex back to the
    signal, by overlap-add of the windowed inverse transforms divided by the summed squared
    window; `length` trims (or zero-pads) the result."""
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:  # (before every check, as PyTorch warns)
        warn_at_user(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.", once=True)
    if not input._dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def fail(msg: str) -> RuntimeError:
        shown = "None" if window is None else \
            f"{_tensor_repr(window)}{{{list(window._shape)}}}"
        kind = SCALAR_TYPE_NAMES[input._dtype.name]
        return RuntimeError(
            f"istft(CPU{kind}Type{list(input._shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={shown}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) {msg}")

    if input.numel() == 0:
        raise fail(": input tensor cannot be empty.")
    if input.ndim not in (2, 3):
        raise fail(f": expected a tensor with 3 or 4 dimensions, but got {input.ndim + 1}")
    n_frames, fft_size = input._shape[-1], input._shape[-2]
    one = fft_size != n_fft if onesided is None else onesided
    if one and n_fft // 2 + 1 != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor "
                   f"to match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor "
                   f"to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window._shape[0] != win):
        raise fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    real_dtype = dt.float64 if input._dtype is dt.complex128 else dt.float32
    w = _full_window(window, win, n_fft, real_dtype, input.device)
    x = input if input.ndim == 3 else input.unsqueeze(0)
    x = x.transpose(1, 2)  # (batch, frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft.ifft(x, dim=-1, norm=norm)
    else:
        if window is not None and window._dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft.irfft(x, n_fft, dim=-1, norm=norm)
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames * w, hop, total)
    envelope = _overlap_add((w * w).expand((1, n_frames, n_fft)), hop, total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else total
    stop = min(end, total) if end >= 0 else total + end
    y = y.narrow(1, start, max(stop - start, 0))
    envelope = envelope.narrow(1, start, max(stop - start, 0))
    tiny = envelope.abs().min() < 1e-11 if envelope.numel() else None
    if tiny is not None and bool(tiny.item()):
        # (PyTorch prints the failed test, a 0-d bool tensor, where the minimum would go)
        raise fail(f"window overlap add min: {aten_text(tiny)}")
    y = y / envelope
    if input.ndim == 2:
        y = y.squeeze(0)
    if end > total:
        from .nn.functional import pad

        warn_at_user("The length of signal is shorter than the length parameter. Result is "
                     "being padded with zeros in the tail. Please check your center and "
                     "hop_length settings.", once=True)
        y = pad(y, [0, end - total])
    return y


Tensor.stft = stft
Tensor.istft = istft
