"""Recurrent layers over (batch..., L, features) inputs, unrolled step by step as in
MLX: RNN (Wxh, Whh, bias), GRU (Wx, Wh, b, bhn; gates r, z then n) and LSTM (Wx, Wh,
bias; gates i, f, g, o). Each returns the hidden state of every step (LSTM: and the
cell states); all weights are drawn from U(-k, k), k = 1/sqrt(hidden_size)."""

from __future__ import annotations

import math
from collections.abc import Callable

from ... import core as mx
from ...core import random
from .activations import tanh
from .base import Module


def _draw(k: float, *shape: int) -> mx.array:
    return random.uniform(-k, k, shape)


def _project(x: mx.array, w: mx.array, b: mx.array | None) -> mx.array:
    return mx.addmm(b, x, w.T) if b is not None else x @ w.T


class RNN(Module):
    """Elman RNN: h_t = nonlinearity(x_t Wxh^T + bias + h_{t-1} Whh^T) (tanh by
    default)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: Callable | None = None) -> None:
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        k = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _draw(k, hidden_size, input_size)
        self.Whh = _draw(k, hidden_size, hidden_size)
        self.bias = _draw(k, hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return (f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
                f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}")

    def __call__(self, x: mx.array, hidden: mx.array | None = None) -> mx.array:
        x = _project(x, self.Wxh, self.bias)
        states = []
        for t in range(x.shape[-2]):
            pre = x[..., t, :]
            if hidden is not None:
                pre = mx.addmm(pre, hidden, self.Whh.T)
            hidden = self.nonlinearity(pre)
            states.append(hidden)
        return mx.stack(states, axis=-2)


class GRU(Module):
    """Gated recurrent unit with PyTorch's gate equations (the reset gate scales
    h W_hn + b_hn)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _draw(k, 3 * hidden_size, input_size)
        self.Wh = _draw(k, 3 * hidden_size, hidden_size)
        self.b = _draw(k, 3 * hidden_size) if bias else None
        self.bhn = _draw(k, hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return (f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
                f"bias={self.b is not None}")

    def __call__(self, x: mx.array, hidden: mx.array | None = None) -> mx.array:
        H = self.hidden_size  # noqa: N806
        x = _project(x, self.Wx, self.b)
        x_rz, x_n = x[..., :-H], x[..., -H:]
        states = []
        for t in range(x.shape[-2]):
            rz, n = x_rz[..., t, :], x_n[..., t, :]
            if hidden is not None:
                h = hidden @ self.Wh.T
                h_n = h[..., -H:] if self.bhn is None else h[..., -H:] + self.bhn
                rz = rz + h[..., :-H]
            r, z = mx.split(mx.sigmoid(rz), 2, axis=-1)
            if hidden is not None:
                n = n + r * h_n
            elif self.bhn is not None:
                n = n + r * self.bhn
            n = mx.tanh(n)
            hidden = (1 - z) * n + z * hidden if hidden is not None else (1 - z) * n
            states.append(hidden)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    """Long short-term memory; returns (hidden states, cell states), both
    (..., L, hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _draw(k, 4 * hidden_size, input_size)
        self.Wh = _draw(k, 4 * hidden_size, hidden_size)
        self.bias = _draw(k, 4 * hidden_size) if bias else None

    def _extra_repr(self) -> str:
        return (f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
                f"bias={self.bias is not None}")

    def __call__(self, x: mx.array, hidden: mx.array | None = None,
                 cell: mx.array | None = None) -> tuple[mx.array, mx.array]:
        x = _project(x, self.Wx, self.bias)
        hs, cs = [], []
        for t in range(x.shape[-2]):
            gates = x[..., t, :]
            if hidden is not None:
                gates = mx.addmm(gates, hidden, self.Wh.T)
            i, f, g, o = mx.split(gates, 4, axis=-1)
            i, f, g, o = mx.sigmoid(i), mx.sigmoid(f), mx.tanh(g), mx.sigmoid(o)
            cell = f * cell + i * g if cell is not None else i * g
            hidden = o * mx.tanh(cell)
            hs.append(hidden)
            cs.append(cell)
        return mx.stack(hs, axis=-2), mx.stack(cs, axis=-2)
