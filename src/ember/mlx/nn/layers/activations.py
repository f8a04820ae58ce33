"""Activations: the functions (`nn.relu`, `nn.gelu`, ...) and their layers (`nn.ReLU`,
`nn.GELU`, ...), each written as MLX writes it so values and gradients agree with
MLX's, kinks included (e.g. `relu` is `maximum(x, 0)`: at 0 the gradient goes to the
second argument, so relu's is 0 there)."""

from __future__ import annotations

import math

from ... import core as mx
from .base import Module


def sigmoid(x: mx.array) -> mx.array:
    return mx.sigmoid(x)


def relu(x: mx.array) -> mx.array:
    return mx.maximum(x, 0)


def relu2(x: mx.array) -> mx.array:
    return mx.square(mx.maximum(x, 0))


def relu6(x: mx.array) -> mx.array:
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x: mx.array, negative_slope: float = 0.01) -> mx.array:
    return mx.maximum(negative_slope * x, x)


def log_softmax(x: mx.array, axis: int = -1) -> mx.array:
    x = x - mx.stop_gradient(mx.max(x, axis=axis, keepdims=True))
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def elu(x: mx.array, alpha: float = 1.0) -> mx.array:
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x: mx.array, axis: int = -1) -> mx.array:
    return mx.softmax(x, axis=axis)


def softplus(x: mx.array) -> mx.array:
    return mx.logaddexp(x, 0)


def softsign(x: mx.array) -> mx.array:
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x: mx.array, lambd: float = 0.5) -> mx.array:
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x: mx.array, alpha: float = 1.0) -> mx.array:
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x: mx.array) -> mx.array:
    return x * mx.sigmoid(x)


def log_sigmoid(x: mx.array) -> mx.array:
    return -softplus(-x)


def gelu(x: mx.array) -> mx.array:
    """Exact GELU: x * Phi(x), through MLX's erf (its polynomial's absolute error is what
    is left of 1 + erf in the far negative tail, so MLX's values there are its own)."""
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def gelu_approx(x: mx.array) -> mx.array:
    """GELU's tanh approximation (PyTorch's approximate='tanh')."""
    return 0.5 * x * (1 + mx.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_fast_approx(x: mx.array) -> mx.array:
    """GELU as x * sigmoid(1.702 x)."""
    return x * mx.sigmoid(1.702 * x)


def glu(x: mx.array, axis: int = -1) -> mx.array:
    """Gated linear unit: the first half of `axis` times the sigmoid of the second."""
    a, b = mx.split(x, 2, axis=axis)
    return a * mx.sigmoid(b)


def step(x: mx.array, threshold: float = 0.0) -> mx.array:
    return mx.where(x >= threshold, 1, 0)


def selu(x: mx.array) -> mx.array:
    return elu(x, 1.67326) * 1.0507


def prelu(x: mx.array, alpha: mx.array) -> mx.array:
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x: mx.array) -> mx.array:
    return x * mx.tanh(softplus(x))


def hardswish(x: mx.array) -> mx.array:
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x: mx.array, min_val: float = -1.0, max_val: float = 1.0) -> mx.array:
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x: mx.array, lambd: float = 0.5) -> mx.array:
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x: mx.array, axis: int = -1) -> mx.array:
    return mx.softmax(-x, axis=axis)


def tanh(x: mx.array) -> mx.array:
    return mx.tanh(x)


def _layer(name: str, fn, doc: str) -> type:
    """A parameterless layer calling `fn` (MLX builds these the same way)."""
    return type(name, (Module,), {"__call__": lambda self, x: fn(x), "__doc__": doc,
                                  "__module__": __name__})


Sigmoid = _layer("Sigmoid", sigmoid, "Applies `nn.sigmoid`.")
Mish = _layer("Mish", mish, "Applies `nn.mish`.")
ReLU = _layer("ReLU", relu, "Applies `nn.relu`.")
ReLU2 = _layer("ReLU2", relu2, "Applies `nn.relu2`.")
ReLU6 = _layer("ReLU6", relu6, "Applies `nn.relu6`.")
Softmax = _layer("Softmax", softmax, "Applies `nn.softmax` over the last axis.")
Softplus = _layer("Softplus", softplus, "Applies `nn.softplus`.")
Softsign = _layer("Softsign", softsign, "Applies `nn.softsign`.")
SiLU = _layer("SiLU", silu, "Applies `nn.silu`.")
LogSoftmax = _layer("LogSoftmax", log_softmax, "Applies `nn.log_softmax` (last axis).")
LogSigmoid = _layer("LogSigmoid", log_sigmoid, "Applies `nn.log_sigmoid`.")
Tanh = _layer("Tanh", tanh, "Applies `nn.tanh`.")
Hardswish = _layer("Hardswish", hardswish, "Applies `nn.hardswish`.")
SELU = _layer("SELU", selu, "Applies `nn.selu`.")
HardTanh = _layer("HardTanh", hard_tanh, "Applies `nn.hard_tanh` on [-1, 1].")
Softmin = _layer("Softmin", softmin, "Applies `nn.softmin` over the last axis.")


class GLU(Module):
    """Applies `nn.glu` along `axis`."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def __call__(self, x: mx.array) -> mx.array:
        return glu(x, self.axis)


class LeakyReLU(Module):
    """Applies `nn.leaky_relu` with `negative_slope`."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x: mx.array) -> mx.array:
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """Applies `nn.elu` with `alpha`."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self._alpha = alpha

    def __call__(self, x: mx.array) -> mx.array:
        return elu(x, self._alpha)


class CELU(Module):
    """Applies `nn.celu` with `alpha`."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self._alpha = alpha

    def __call__(self, x: mx.array) -> mx.array:
        return celu(x, self._alpha)


class Softshrink(Module):
    """Applies `nn.softshrink` with `lambd`."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def __call__(self, x: mx.array) -> mx.array:
        return softshrink(x, self.lambd)


class HardShrink(Module):
    """Applies `nn.hard_shrink` with `lambd`."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def __call__(self, x: mx.array) -> mx.array:
        return hard_shrink(x, self.lambd)


class Step(Module):
    """1 where `x >= threshold`, else 0."""

    def __init__(self, threshold: float = 0.0) -> None:
        super().__init__()
        self.threshold = threshold

    def __call__(self, x: mx.array) -> mx.array:
        return step(x, self.threshold)


class PReLU(Module):
    """`nn.prelu` with a learned slope per channel (`weight`, `num_parameters` long)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x: mx.array) -> mx.array:
        return prelu(x, self.weight)


class GELU(Module):
    """GELU: exact (`approx="none"`), tanh (`"precise"` or `"tanh"`) or
    x * sigmoid(1.702 x) (`"fast"`)."""

    def __init__(self, approx: str = "none") -> None:
        super().__init__()
        allowed = ["none", "precise", "tanh", "fast"]
        if approx not in allowed:
            raise ValueError(f"The approximation should be in {allowed} but '{approx}' "
                             "was given")
        self._approx = approx

    def __call__(self, x: mx.array) -> mx.array:
        if self._approx == "none":
            return gelu(x)
        if self._approx in ("precise", "tanh"):
            return gelu_approx(x)
        return gelu_fast_approx(x)
