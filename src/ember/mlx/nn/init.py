"""`nn.init`: initializers. Each function returns an initializer, a function from an
array (whose shape it reads) to a new array, as MLX's do:
`nn.init.he_normal()(layer.weight)`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import core as mx
from .._listing import listing
from ..core import random

Initializer = Callable[..., mx.array]


def constant(value: float, dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array) -> mx.array:
        return mx.full(a.shape, value, dtype=dtype)
    return initializer


def normal(mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array) -> mx.array:
        return random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
    return initializer


def uniform(low: float = 0.0, high: float = 1.0, dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array) -> mx.array:
        return random.uniform(low, high, a.shape, dtype)
    return initializer


def identity(dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"The input array must be a square matrix but got shape "
                             f"{a.shape}.")
        return mx.eye(a.shape[0], dtype=dtype)
    return initializer


def _fans(a: mx.array) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out (out, *kernel, in), as MLX's layers are."""
    if a.ndim < 2:
        raise ValueError("Glorot / He initialization requires at least 2 dimensional "
                         f"input but input with {a.ndim} dimensions.")
    receptive = math.prod(a.shape[1:-1])
    return a.shape[-1] * receptive, a.shape[0] * receptive


def _fan(a: mx.array, mode: str) -> int:
    fan_in, fan_out = _fans(a)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")


def glorot_normal(dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a)
        return random.normal(a.shape, dtype, scale=gain * math.sqrt(2.0 / (fan_in + fan_out)))
    return initializer


def glorot_uniform(dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _fans(a)
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return random.uniform(-limit, limit, a.shape, dtype)
    return initializer


def he_normal(dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array, mode: str = "fan_in", gain: float = 1.0) -> mx.array:
        return random.normal(a.shape, dtype, scale=gain / math.sqrt(_fan(a, mode)))
    return initializer


def he_uniform(dtype: mx.Dtype = mx.float32) -> Initializer:
    def initializer(a: mx.array, mode: str = "fan_in", gain: float = 1.0) -> mx.array:
        limit = gain * math.sqrt(3.0 / _fan(a, mode))
        return random.uniform(-limit, limit, a.shape, dtype)
    return initializer


def sparse(sparsity: float, mean: float = 0.0, std: float = 1.0,
           dtype: mx.Dtype = mx.float32) -> Initializer:
    """Normal values with a `sparsity` fraction of each row set to zero."""
    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError("Only tensors with 2 dimensions are supported")
        rows, cols = a.shape
        zeros = int(math.ceil(sparsity * cols))
        order = mx.argsort(random.uniform(shape=a.shape), axis=1)
        out = random.normal(a.shape, dtype, loc=mean, scale=std)
        out[mx.arange(rows).reshape(rows, 1), order[:, :zeros]] = 0
        return out
    return initializer


def orthogonal(gain: float = 1.0, dtype: mx.Dtype = mx.float32) -> Initializer:
    """The Q of a QR factorisation of a normal matrix (signs fixed by R's diagonal)."""
    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError("Orthogonal initialization requires a 2D array but got a "
                             f"{a.ndim}D array.")
        rows, cols = a.shape
        n = max(rows, cols)
        # NOTE: ember.mlx has no mx.linalg yet; the QR runs in NumPy (float32, as MLX's).
        q, r = np.linalg.qr(np.array(random.normal((n, n))))
        q = q * np.sign(np.diag(r))
        return (mx.array(q[:rows, :cols]) * gain).astype(dtype)
    return initializer


__dir__ = listing(globals(), ("Callable", "math", "mx"))  # (MLX lists these too)
