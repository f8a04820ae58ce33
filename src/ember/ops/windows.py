"""Window functions for spectral analysis: hann, hamming, blackman, bartlett and kaiser.

Each is built as PyTorch's factories build it, step for step, so the roundings agree: an
`arange` in the window's dtype scaled by a constant, then its cosines (or, for bartlett, a
fold at the middle; for kaiser, i0 of the distance from the centre). A periodic window of
length N is the symmetric one of length N + 1 without its last sample.
"""

from __future__ import annotations

import math

from .. import _dtype as dt
from .._tensor import Tensor
from ._common import c_type_name, type_name
from .creation import arange, empty, ones


def _window(name: str, window_length, dtype, device, requires_grad: bool, build) -> Tensor:
    """The checks and the shared steps of every window: `build(n, dtype, device)` makes the
    symmetric window of n >= 2 samples."""
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    d = dt.get_default_dtype() if dtype is None else dtype
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{type_name(d)}'")
    if not d.is_floating_point:
        rg = "true" if requires_grad else "false (default)"
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={c_type_name(d)}, "
            f"device=cpu, layout=Strided (default), requires_grad={rg}, "
            "pinned_memory=false, memory_format=(nullopt))")
    return build, d


def _finish(w: Tensor, requires_grad: bool) -> Tensor:
    return w.requires_grad_() if requires_grad else w


def _make(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool,
          symmetric) -> Tensor:
    """`symmetric(n, d, device)` is the symmetric window of n >= 2 samples."""
    _, d = _window(name, window_length, dtype, device, requires_grad, symmetric)
    if window_length == 0:
        return _finish(empty(0, dtype=d, device=device), requires_grad)
    if window_length == 1:
        return _finish(ones(1, dtype=d, device=device), requires_grad)
    n = window_length + 1 if periodic else window_length
    w = symmetric(n, d, device)
    return _finish(w.narrow(0, 0, n - 1) if periodic else w, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2 pi k / (N - 1)), k = 0 .. N-1."""
    def build(n, d, device):
        w = arange(n, dtype=d, device=device) * (math.pi * 2.0 / (n - 1))
        return w.cos() * -beta + alpha

    return _make("hamming_window", window_length, periodic, dtype, device, requires_grad, build)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """0.5 - 0.5 cos(2 pi k / (N - 1)): a hamming window with alpha = beta = 0.5."""
    def build(n, d, device):
        w = arange(n, dtype=d, device=device) * (math.pi * 2.0 / (n - 1))
        return w.cos() * -0.5 + 0.5

    return _make("hann_window", window_length, periodic, dtype, device, requires_grad, build)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    def build(n, d, device):
        w = arange(n, dtype=d, device=device) * (math.pi / (n - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42

    return _make("blackman_window", window_length, periodic, dtype, device, requires_grad,
                 build)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The triangle 2k / (N - 1), folded to 2 - 2k / (N - 1) past the middle."""
    from .join import cat

    def build(n, d, device):
        w = arange(n, dtype=d, device=device) * (2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        return cat([w.narrow(0, 0, half), w.narrow(0, half, n - half) * -1 + 2])

    return _make("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                 build)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """i0(beta sqrt(1 - ((k - c) / c)^2)) / i0(beta), c = (N - 1) / 2: computed in the
    window's dtype (i0, a series, is a transcendental: an ulp from torch's at most)."""
    from .creation import tensor
    from .special_ops import i0

    def build(n, d, device):
        work = dt.float32 if d in (dt.float16, dt.bfloat16) else d  # (PyTorch's opmath)
        c = (n - 1) / 2.0
        k = arange(n, dtype=d, device=device).to(work)
        r = ((1 - ((k - c) / c) ** 2).abs()).sqrt()
        return (i0(r * beta) / i0(tensor(beta, dtype=work, device=device))).to(d)

    return _make("kaiser_window", window_length, periodic, dtype, device, requires_grad, build)


TENSOR_METHODS: dict = {}

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]
