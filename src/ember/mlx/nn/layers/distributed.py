"""Tensor-parallel and fully sharded layers: MLX's `mlx.nn.layers.distributed`.

A group of N processes (`mx.distributed.Group`) splits a linear layer's work two ways:
- "all-to-sharded" (`AllToShardedLinear`): every rank holds 1/N of the output rows, reads
  the whole input and writes its slice of the output. Its input's gradient is summed
  over the group in the backward pass (each rank sees only its slice's contribution).
- "sharded-to-all" (`ShardedToAllLinear`): every rank holds 1/N of the input columns,
  reads its slice of the input, and the partial products are summed over the group
  (`all_sum`) before the bias, so every rank ends with the whole output.
The quantized versions do the same over `quantized_matmul`, their parameters frozen.

`shard_inplace` / `shard_linear` cut an existing layer's parameters (optionally by
segments, for fused weights such as QKV, each segment split separately), and
`FullyShardedModule` / `fully_shard` keep only a shard of every parameter (axis 0),
gathering the full ones (`all_gather`) around each call; their gradients come back
reduce-scattered (`sum_scatter` / N).

On a group of one every collective is the identity, so these layers compute what the
plain `Linear` / `QuantizedLinear` computes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import accumulate

from ... import core as mx
from ...utils import tree_flatten, tree_map_with_path, tree_unflatten
from .base import Module
from .linear import Linear

__all__ = ["AllToShardedLinear", "FullyShardedModule", "QuantizedAllToShardedLinear",
           "QuantizedShardedToAllLinear", "ShardedToAllLinear", "fully_shard",
           "shard_inplace", "shard_linear"]

_SHARDINGS = ("all-to-sharded", "sharded-to-all")
_summers: dict = {}


def sum_gradients(group) -> Callable:
    """The identity whose vjp sums the cotangent over `group` (the identity itself for
    a group of one); one function per group, kept."""
    if group in _summers:
        return _summers[group]
    if group.size() == 1:
        def fn(x):
            return x
    else:
        @mx.custom_function
        def fn(x):
            return x

        @fn.vjp
        def fn(primals, cotangent, output):
            return mx.distributed.all_sum(cotangent, group=group)
    _summers[group] = fn
    return fn


# -- cutting parameters ---------------------------------------------------------------------
def _pieces(weight: mx.array, segments, axis: int) -> list:
    """`mx.split` of `weight` along `axis`, where `segments` may also list fractions of
    the axis (0.25, 0.5, ...) as the split points."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    n = weight.shape[axis]
    return mx.split(weight, [int(f * n) for f in segments], axis=axis)


def _shard(parameters: dict, predicate: Callable, group=None) -> dict:
    """`parameters` with every array that `predicate(path, array)` names an axis for
    (an int, or a tuple (axis, segments)) replaced by this rank's shard: each segment
    cut into N parts along the axis, this rank's parts joined again."""
    group = group or mx.distributed.init()
    n, rank = group.size(), group.rank()

    def cut(path, weight):
        if not isinstance(weight, mx.array):
            return weight
        rule = predicate(path, weight)
        if rule is None:
            return weight
        if isinstance(rule, int):
            axis, segments = rule, 1
        elif isinstance(rule, tuple):
            axis, segments = rule
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        mine = [_pieces(seg, n, axis)[rank] for seg in _pieces(weight, segments, axis)]
        return mx.contiguous(mx.concatenate(mine, axis=axis))

    return tree_map_with_path(cut, parameters)


def _rows_rule(segments) -> Callable:
    """Cut the output features: a weight's rows (axis -2), a bias along its last axis."""
    def rule(path, weight):
        return (-1, segments) if path.endswith("bias") else (max(weight.ndim - 2, 0), segments)
    return rule


def _columns_rule(segments) -> Callable:
    """Cut the input features: a weight's columns; the bias stays whole."""
    def rule(path, weight):
        return None if path.endswith("bias") else (-1, segments)
    return rule


def _check_sharding(sharding) -> None:
    if sharding not in _SHARDINGS:
        raise ValueError(f"Sharding type {sharding=} not supported, "
                         "choose one of 'all-to-sharded' or 'sharded-to-all'")


def shard_inplace(module: Module, sharding: str | Callable, *, segments: int | list = 1,
                  group=None) -> None:
    """Replace `module`'s parameters by this rank's shards. `sharding` is
    "all-to-sharded", "sharded-to-all" or a callable `(path, weight) -> axis` (or
    `(axis, segments)`, or None to keep the weight whole). The module's computation is
    unchanged: it communicates only if it was written to."""
    if isinstance(sharding, str):
        _check_sharding(sharding)
        rule = _rows_rule if sharding == "all-to-sharded" else _columns_rule
        sharding = rule(segments)
    module.update(_shard(module.parameters(), sharding, group))


def shard_linear(module: Module, sharding: str, *, segments: int | list = 1,
                 group=None) -> Module:
    """A new sharded layer from a `Linear` (or a quantized linear layer), which is left
    as it was: one of the four sharded linear classes, by `sharding` and kind."""
    _check_sharding(sharding)
    if isinstance(module, Linear):
        cls = AllToShardedLinear if sharding == _SHARDINGS[0] else ShardedToAllLinear
        return cls.from_linear(module, segments=segments, group=group)
    cls = QuantizedAllToShardedLinear if sharding == _SHARDINGS[0] else \
        QuantizedShardedToAllLinear
    return cls.from_quantized_linear(module, segments=segments, group=group)


def _divisible(dims: int, n: int, outputs: bool) -> None:
    if dims % n:
        raise ValueError(f"Cannot shard the output of size {dims} across {n} devices."
                         if outputs else
                         f"The input of size {dims} cannot be sharded across {n} devices.")


def _dims_repr(out_dims: int, in_dims: int, has_bias: bool) -> str:
    return f"input_dims={in_dims}, output_dims={out_dims}, bias={has_bias}"


# -- the sharded linear layers --------------------------------------------------------------
class AllToShardedLinear(Module):
    """A linear layer holding this rank's 1/N of the output features: the whole input in,
    this rank's slice of the output out; the input's gradient is summed over `group`
    (default: the global group)."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group=None) -> None:
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _divisible(output_dims, n, outputs=True)
        scale = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(-scale, scale, (output_dims // n, input_dims))
        if bias:
            self.bias = mx.random.uniform(-scale, scale, (output_dims // n,))

    def _extra_repr(self) -> str:
        rows, cols = self.weight.shape
        return _dims_repr(rows * self.group.size(), cols, "bias" in self)

    def __call__(self, x: mx.array) -> mx.array:
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    @classmethod
    def from_linear(cls, linear_layer: Module, *, segments: int | list = 1,
                    group=None) -> AllToShardedLinear:
        """This rank's share of `linear_layer` (its rows, by `segments`)."""
        group = group or mx.distributed.init()
        out_dims, in_dims = linear_layer.weight.shape
        layer = cls(in_dims, out_dims, hasattr(linear_layer, "bias"), group)
        layer.update(_shard(linear_layer.parameters(), _rows_rule(segments), group))
        return layer


class ShardedToAllLinear(Module):
    """A linear layer holding this rank's 1/N of the input features: this rank's slice of
    the input in, the partial products summed over `group` (default: the global group),
    then the bias; every rank gets the same whole output."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group=None) -> None:
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _divisible(input_dims, n, outputs=False)
        scale = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(-scale, scale, (output_dims, input_dims // n))
        if bias:
            self.bias = mx.random.uniform(-scale, scale, (output_dims,))

    def _extra_repr(self) -> str:
        rows, cols = self.weight.shape
        return _dims_repr(rows, cols * self.group.size(), "bias" in self)

    def __call__(self, x: mx.array) -> mx.array:
        x = mx.distributed.all_sum(x @ self["weight"].T, group=self.group)
        return x + self["bias"] if "bias" in self else x

    @classmethod
    def from_linear(cls, linear_layer: Module, *, segments: int | list = 1,
                    group=None) -> ShardedToAllLinear:
        """This rank's share of `linear_layer` (its columns, by `segments`)."""
        group = group or mx.distributed.init()
        out_dims, in_dims = linear_layer.weight.shape
        layer = cls(in_dims, out_dims, hasattr(linear_layer, "bias"), group)
        layer.update(_shard(linear_layer.parameters(), _columns_rule(segments), group))
        return layer


class _QuantizedShard(Module):
    """What the two quantized sharded layers share: the quantization settings, a frozen
    quantized weight of the shard's shape, a zero bias, the repr and the matmul."""

    _outputs: bool  # True: the output features are sharded (all-to-sharded)

    def __init__(self, input_dims: int, output_dims: int, bias: bool, group_size: int,
                 bits: int, mode: str, group) -> None:
        super().__init__()
        self.group_size, self.bits, self.mode = group_size, bits, mode
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _divisible(output_dims if self._outputs else input_dims, n, self._outputs)
        shape = (output_dims // n, input_dims) if self._outputs else \
            (output_dims, input_dims // n)
        scale = math.sqrt(1.0 / input_dims)
        weight = mx.random.uniform(-scale, scale, shape)
        self.weight, self.scales, *biases = mx.quantize(weight, group_size, bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias:
            self.bias = mx.zeros((shape[0] if self._outputs else output_dims,))
        self.freeze()

    def unfreeze(self, *args, **kwargs) -> Module:
        """Unfreeze any submodules; this layer's own quantized parameters stay frozen."""
        super().unfreeze(*args, **kwargs)
        return self.freeze(recurse=False)

    def _extra_repr(self) -> str:
        rows, packed = self.weight.shape
        cols, n = packed * 32 // self.bits, self.group.size()
        dims = _dims_repr(rows * n, cols, "bias" in self) if self._outputs else \
            _dims_repr(rows, cols * n, "bias" in self)
        return f"{dims}, group_size={self.group_size}, bits={self.bits}, mode={self.mode}"

    def _matmul(self, x: mx.array) -> mx.array:
        return mx.quantized_matmul(x, self["weight"], scales=self["scales"],
                                   biases=self.get("biases"), transpose=True,
                                   group_size=self.group_size, bits=self.bits,
                                   mode=self.mode)

    @classmethod
    def from_quantized_linear(cls, quantized_linear_layer: Module, *,
                              segments: int | list = 1, group=None) -> Module:
        """This rank's share of a quantized linear layer (its packed rows or columns, with
        their scales and biases, by `segments`), with the layer's quantization."""
        group = group or mx.distributed.init()
        q = quantized_linear_layer
        out_dims, packed = q.weight.shape
        layer = cls(packed * 32 // q.bits, out_dims, hasattr(q, "bias"),
                    group_size=q.group_size, bits=q.bits, mode=getattr(q, "mode", "affine"),
                    group=group)
        rule = _rows_rule if cls._outputs else _columns_rule
        layer.update(_shard(q.parameters(), rule(segments), group))
        return layer


class QuantizedAllToShardedLinear(_QuantizedShard):
    """`AllToShardedLinear` over a quantized weight (see `mx.quantize`); its parameters
    are frozen."""

    _outputs = True

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group_size: int = 64, bits: int = 4, mode: str = "affine",
                 group=None) -> None:
        super().__init__(input_dims, output_dims, bias, group_size, bits, mode, group)

    def __call__(self, x: mx.array) -> mx.array:
        x = self._matmul(sum_gradients(self.group)(x))
        return x + self["bias"] if "bias" in self else x


class QuantizedShardedToAllLinear(_QuantizedShard):
    """`ShardedToAllLinear` over a quantized weight (see `mx.quantize`); its parameters
    are frozen."""

    _outputs = False

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group_size: int = 64, bits: int = 4, mode: str = "affine",
                 group=None) -> None:
        super().__init__(input_dims, output_dims, bias, group_size, bits, mode, group)

    def __call__(self, x: mx.array) -> mx.array:
        x = mx.distributed.all_sum(self._matmul(x), group=self.group)
        return x + self["bias"] if "bias" in self else x


# -- fully sharded modules ------------------------------------------------------------------
def _gatherer(group, full_shapes: list, sizes: list, compute_dtype) -> Callable:
    """`gather(shards) -> full parameters`: the shards flattened into one row, gathered
    over `group` (one row a rank) and cut back into the parameters, cast to
    `compute_dtype` if given. Its vjp sum-scatters the cotangents and divides by N, each
    rank getting the mean gradient of its own shards, in their dtypes."""
    n = group.size()
    cuts = list(accumulate(sizes))[:-1]
    shard_shapes = [(s[0] // n, *s[1:]) for s in full_shapes]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        parts = mx.split(mx.distributed.all_gather(row, group=group), cuts, axis=1)
        return [p.reshape(shape) for p, shape in zip(parts, full_shapes, strict=True)]

    @gather.vjp
    def gather(shards, cotangents, outputs):
        rows = mx.concatenate([c.reshape(n, -1) for c in cotangents], axis=1)
        mine = mx.distributed.sum_scatter(rows, group=group) / n
        return [cast(p.reshape(shape), s.dtype) for p, shape, s in
                zip(mx.split(mine, cuts, axis=1), shard_shapes, shards, strict=True)]

    return gather


def _shardable(module: Module, key: str, value) -> bool:
    """The parameters a `FullyShardedModule` shards: all but those inside another one."""
    return not isinstance(value, FullyShardedModule) and \
        Module.valid_parameter_filter(module, key, value)


class FullyShardedModule(Module):
    """`module` with only this rank's shard (along axis 0) of each parameter kept; each
    call gathers the full parameters over `group` (cast to `compute_dtype` if given),
    runs the module and puts the shards back, so gradients and optimizer updates are
    the shards'. Every parameter's first axis must divide by the group's size."""

    def __init__(self, module: Module, group=None, compute_dtype=None) -> None:
        super().__init__()
        group = group or mx.distributed.init()
        n = group.size()
        params = module.filter_and_map(_shardable)
        flat = tree_flatten(params)
        for path, a in flat:
            if a.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if a.shape[0] % n:
                raise ValueError(f"Cannot shard parameter '{path}' with shape {a.shape} "
                                 f"across {n} devices: axis 0 must be divisible by {n}.")
        object.__setattr__(self, "_paths", [path for path, _ in flat])
        gather = _gatherer(group, [a.shape for _, a in flat], [a.size // n for _, a in flat],
                           compute_dtype)
        module.update(_shard(params, lambda path, w: 0, group))
        self.module = module
        self._gather_fn = gather

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _gathered_call(self, fn: Callable, *args, **kwargs):
        shards = self.module.filter_and_map(_shardable)
        fulls = self._gather_fn([a for _, a in tree_flatten(shards)])
        self.module.update(tree_unflatten(list(zip(self._paths, fulls, strict=True))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args, **kwargs):
        return self._gathered_call(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        """The wrapped module's `as_linear` (a tied embedding) over the full parameters."""
        return self._gathered_call(self.module.as_linear, *args, **kwargs)


def fully_shard(module: Module, *, group=None, compute_dtype=None) -> Module:
    """`module` wrapped in a `FullyShardedModule`; `module` itself on a group of one, if
    it is already wrapped, or if it has no parameters to shard."""
    group = group or mx.distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
