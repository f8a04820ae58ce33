"""`nn.value_and_grad` and `nn.checkpoint`: transforms over a model's trainable
parameters; `nn.average_gradients` across the processes of `mx.distributed`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import core as mx
from ..utils import tree_map
from .layers.base import Module


def value_and_grad(model: Module, fn: Callable) -> Callable:
    """`fn` made to return `(fn(*args), gradients)`, the gradients taken with respect to
    `model.trainable_parameters()` (a tree of the same shape)."""
    def with_params(params, *args, **kwargs):
        model.update(params)
        return fn(*args, **kwargs)

    both = mx.value_and_grad(with_params)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        params = model.trainable_parameters()
        try:
            return both(params, *args, **kwargs)
        finally:
            # (the arrays it was given back, equal to the ones the transform traced, which
            # would tie the optimizer's update to the transform's graph)
            model.update(params)

    return wrapped


def checkpoint(module: Module, fn: Callable | None = None) -> Callable:
    """`fn` (default: the module) as an `mx.checkpoint` over the module's trainable
    parameters and its inputs: the backward pass runs it again instead of keeping its
    intermediate arrays (same values and gradients, less memory)."""
    fn = module if fn is None else fn  # (the module, so a later patched __call__ is used)

    def with_params(params, *args, **kwargs):
        module.update(params)
        return fn(*args, **kwargs)

    checkpointed = mx.checkpoint(with_params)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return checkpointed(module.trainable_parameters(), *args, **kwargs)

    return wrapped


def average_gradients(gradients: Any, group: mx.distributed.Group | None = None,
                      all_reduce_size: int = 32 * 1024**2,
                      communication_stream: mx.Stream | None = None) -> Any:
    """The gradient tree averaged over the processes of `group` (default: `init()`'s).

    A group of one, the only group ember.mlx has, gets `gradients` back unchanged, as in
    MLX. (MLX also packs small arrays into `all_reduce_size`-byte messages; that only
    changes the networking, not the values.)"""
    group = group or mx.distributed.init()
    n = group.size()
    if n == 1:
        return gradients
    return tree_map(lambda g: mx.distributed.all_sum(g, group=group,
                                                     stream=communication_stream) / n,
                    gradients)
