"""Affine layers: `Identity`, `Linear` (weight `(out, in)`) and `Bilinear`."""

from __future__ import annotations

import math
from typing import Any

from ... import core as mx
from ...core import random
from .base import Module
from .quantized import QuantizedLinear


class Identity(Module):
    """Returns its input; takes and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x: mx.array) -> mx.array:
        return x


class Linear(Module):
    """`y = x @ weight.T + bias`, weight `(output_dims, input_dims)`; weight then bias
    drawn from U(-k, k) with k = 1/sqrt(input_dims)."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        k = math.sqrt(1.0 / input_dims)
        self.weight = random.uniform(-k, k, (output_dims, input_dims))
        if bias:
            self.bias = random.uniform(-k, k, (output_dims,))

    def _extra_repr(self) -> str:
        out, inp = self.weight.shape
        return f"input_dims={inp}, output_dims={out}, bias={'bias' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    def to_quantized(self, group_size: int | None = None, bits: int | None = None,
                     mode: str = "affine", quantize_input: bool = False) -> Module:
        """This layer as a `QuantizedLinear` (the hook `nn.quantize` calls)."""
        if quantize_input:  # (MLX returns a QQLinear, which needs mx.qqmm)
            raise NotImplementedError("quantize_input=True (QQLinear) is not supported yet")
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    """`y_i = x2 @ weight[i] @ x1 + bias_i`, weight `(out, in2, in1)`; drawn from
    U(-k, k) with k = 1/sqrt(input1_dims)."""

    def __init__(self, input1_dims: int, input2_dims: int, output_dims: int,
                 bias: bool = True) -> None:
        super().__init__()
        k = math.sqrt(1.0 / input1_dims)
        self.weight = random.uniform(-k, k, (output_dims, input2_dims, input1_dims))
        if bias:
            self.bias = random.uniform(-k, k, (output_dims,))

    def _extra_repr(self) -> str:
        out, in2, in1 = self.weight.shape
        return (f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, "
                f"bias={'bias' in self}")

    def __call__(self, x1: mx.array, x2: mx.array) -> mx.array:
        out, in2, in1 = self.weight.shape
        lead = x1.shape[:-1]
        x1 = x1.reshape(-1, in1)
        x2 = x2.reshape(-1, 1, in2)
        # (n, in1) @ (in1, out*in2) -> (n, out, in2), then contract in2 with x2
        w = self.weight.reshape(out * in2, in1).T
        y = (x1 @ w).reshape(-1, out, in2)
        y = (x2 @ y.swapaxes(-2, -1)).squeeze(1)
        if "bias" in self:
            y = y + self.bias
        return y.reshape(*lead, out)
