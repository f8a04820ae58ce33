"""`nn.value_and_grad` and `nn.checkpoint`: transforms over a model's trainable
parameters."""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import core as mx
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
        return both(model.trainable_parameters(), *args, **kwargs)

    return wrapped


def checkpoint(module: Module, fn: Callable | None = None) -> Callable:
    """`fn` (default: the module) called on the module's trainable parameters.

    MLX recomputes the forward pass during backward to save memory; ember.mlx has no
    `mx.checkpoint` yet, so this keeps the activations (same values and gradients)."""
    fn = module if fn is None else fn

    def with_params(params, *args, **kwargs):
        module.update(params)
        return fn(*args, **kwargs)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return with_params(module.trainable_parameters(), *args, **kwargs)

    return wrapped
