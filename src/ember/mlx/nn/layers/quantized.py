"""Quantized layers: `QuantizedLinear`, `QuantizedEmbedding`, `QQLinear` (input quantized
too), and `quantize(model)`, which swaps a model's layers for their quantized versions in
place.

A quantized layer holds `weight` (packed uint32), `scales` and, in "affine" mode,
`biases` (None in the floating-point modes), all frozen as in MLX: the packed codes have
no gradient and the layers are meant for inference.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ... import core as mx
from ...core import random
from ...utils import tree_map_with_path
from .base import Module

_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode: str, group_size: int | None, bits: int | None) -> tuple:
    """(group size, bits), each the mode's default where not given."""
    if mode not in _MODE_DEFAULTS:
        raise ValueError(f"Invalid quantization mode '{mode}'. "
                         f"Valid modes are: {', '.join(_MODE_DEFAULTS)}.")
    gs, b = _MODE_DEFAULTS[mode]
    return group_size or gs, bits or b


def _set_quantized(layer: Module, weight: mx.array, group_size, bits, mode: str) -> None:
    layer.weight, layer.scales, *biases = mx.quantize(weight, group_size, bits, mode=mode)
    layer.biases = biases[0] if biases else None


class QuantizedLinear(Module):
    """`Linear` over a quantized weight: `quantized_matmul(x, weight.T) + bias`.
    `from_linear` converts a `Linear`."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group_size: int | None = None, bits: int | None = None,
                 mode: str = "affine") -> None:
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1 / input_dims)
        _set_quantized(self, random.uniform(-k, k, (output_dims, input_dims)),
                       group_size, bits, mode)
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        return (f"input_dims={packed * 32 // self.bits}, output_dims={out_dims}, "
                f"bias={'bias' in self}, group_size={self.group_size}, bits={self.bits}, "
                f"mode={self.mode}")

    def __call__(self, x: mx.array) -> mx.array:
        x = mx.quantized_matmul(x, self["weight"], scales=self["scales"],
                                biases=self.get("biases"), transpose=True,
                                group_size=self.group_size, bits=self.bits, mode=self.mode)
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_linear(cls, linear_layer: Module, group_size: int | None = None,
                    bits: int | None = None, mode: str = "affine") -> QuantizedLinear:
        """A `QuantizedLinear` holding `linear_layer`'s weight quantized (its bias as is)."""
        output_dims, input_dims = linear_layer.weight.shape
        ql = cls(input_dims, output_dims, False, group_size, bits, mode=mode)
        _set_quantized(ql, linear_layer.weight, group_size, bits, mode)
        if "bias" in linear_layer:
            ql.bias = linear_layer.bias
        return ql


class QuantizedEmbedding(Module):
    """`Embedding` over a quantized table: rows are dequantized as they are looked up;
    `as_linear(x)` multiplies by the table's transpose (for tied output layers)."""

    def __init__(self, num_embeddings: int, dims: int, group_size: int | None = None,
                 bits: int | None = None, mode: str = "affine") -> None:
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        weight = random.normal((num_embeddings, dims), scale=math.sqrt(1 / dims))
        _set_quantized(self, weight, group_size, bits, mode)
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x: mx.array) -> mx.array:
        biases = self.get("biases")
        return mx.dequantize(self["weight"][x], scales=self["scales"][x],
                             biases=biases[x] if biases is not None else None,
                             group_size=self.group_size, bits=self.bits, mode=self.mode)

    def as_linear(self, x: mx.array) -> mx.array:
        """`x @ dequantize(weight).T`, as a quantized matmul."""
        return mx.quantized_matmul(x, self["weight"], scales=self["scales"],
                                   biases=self.get("biases"), transpose=True,
                                   group_size=self.group_size, bits=self.bits,
                                   mode=self.mode)

    def _extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.dims}, group_size={self.group_size}, "
                f"bits={self.bits}, mode={self.mode}")

    @classmethod
    def from_embedding(cls, embedding_layer: Module, group_size: int | None = None,
                       bits: int | None = None, mode: str = "affine") -> QuantizedEmbedding:
        """A `QuantizedEmbedding` holding `embedding_layer`'s table quantized."""
        num_embeddings, dims = embedding_layer.weight.shape
        ql = cls(num_embeddings, dims, group_size, bits, mode=mode)
        _set_quantized(ql, embedding_layer.weight, group_size, bits, mode)
        return ql


class QQLinear(Module):
    """`Linear` without bias whose input is quantized as well: `qqmm(x, weight)` ("nvfp4"
    or "mxfp8").

    In training mode `weight` is a float array, quantized on the fly (MLX's CPU build
    refuses that product: `mx.qqmm`); `eval()` quantizes it in place (packed `weight`
    and `scales`), `train()` turns it back into floats (bfloat16, `mx.dequantize`'s
    default for the floating-point modes). Its parameters are not frozen, as in MLX.
    `from_linear` converts a `Linear` without bias."""

    def __init__(self, input_dims: int, output_dims: int, group_size: int | None = None,
                 bits: int | None = None, mode: str = "nvfp4") -> None:
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        self.weight = random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        if self.weight.dtype == mx.uint32:
            in_dims = in_dims * 32 // self.bits
        return (f"input_dims={in_dims}, output_dims={out_dims}, "
                f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}")

    def quantize(self) -> None:
        """Pack `weight` (and add its `scales`), unless it already is."""
        if not self._quantized:
            self.weight, self.scales = mx.quantize(self.weight, self.group_size, self.bits,
                                                   mode=self.mode)
            self._quantized = True

    def dequantize(self) -> None:
        """Unpack `weight` back into floats (and drop `scales`), unless it is not packed."""
        if self._quantized:
            self.weight = mx.dequantize(self.weight, scales=self.scales,
                                        group_size=self.group_size, bits=self.bits,
                                        mode=self.mode)
            del self.scales
            self._quantized = False

    def _set_training_mode(self, mode: bool) -> None:
        super()._set_training_mode(mode)
        if self._training:
            self.dequantize()
        else:
            self.quantize()

    def __call__(self, x: mx.array) -> mx.array:
        return mx.qqmm(x, self["weight"], scales=self.get("scales"),
                       group_size=self.group_size, bits=self.bits, mode=self.mode)

    @classmethod
    def from_linear(cls, linear_layer: Module, group_size: int | None = None,
                    bits: int | None = None, mode: str = "nvfp4") -> QQLinear:
        """A `QQLinear` holding `linear_layer`'s weight (the same array), in its mode
        (training or eval)."""
        output_dims, input_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        ql = cls(input_dims, output_dims, group_size, bits, mode=mode)
        ql.weight = linear_layer.weight
        ql.train(linear_layer.training)
        return ql


def quantize(model: Module, group_size: int | None = None, bits: int | None = None, *,
             mode: str = "affine", quantize_input: bool = False,
             class_predicate: Callable[[str, Module], bool | dict] | None = None) -> None:
    """Replace, in place, each leaf module of `model` that `class_predicate(path, module)`
    accepts by `module.to_quantized(...)`: by default every layer that has that method
    (`Linear`, `Embedding`). The predicate may return a dict of `to_quantized` arguments."""
    if class_predicate is None:
        def class_predicate(_, m):
            return hasattr(m, "to_quantized")

    def maybe_quantize(path: str, m: Module):
        chosen = class_predicate(path, m)
        if not chosen:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(chosen, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(chosen, dict):
            if "quantize_input" in chosen and not chosen["quantize_input"]:
                chosen.pop("quantize_input")
            return m.to_quantized(**chosen)
        raise ValueError("``class_predicate`` must return a bool or a dict of parameters "
                         "to pass to ``to_quantized``")

    leaves = tree_map_with_path(maybe_quantize, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)
