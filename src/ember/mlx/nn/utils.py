"""`nn.value_and_grad` and `nn.checkpoint`: transforms over a model's trainable
parameters; `nn.average_gradients` across the processes of `mx.distributed`."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from .. import core as mx
from .._listing import listing
from ..utils import tree_flatten, tree_map, tree_unflatten
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

    As in MLX, a group of one gets `gradients` back unchanged; otherwise arrays of one
    dtype are flattened and concatenated into messages of about `all_reduce_size` bytes
    (each summed by one `all_sum`, then split back), and with mixed dtypes or
    `all_reduce_size <= 0` each array is summed on its own."""
    group = group or mx.distributed.init()
    n = group.size()
    if n == 1:
        return gradients

    def average(x):
        return mx.distributed.all_sum(x, group=group, stream=communication_stream) / n

    flat = tree_flatten(gradients)
    if all_reduce_size <= 0 or any(g.dtype != flat[0][1].dtype for _, g in flat):
        return tree_map(average, gradients)
    if not flat:
        return gradients
    out, batch, nbytes = [], [], 0
    for i, (_, g) in enumerate(flat):
        batch.append(g)
        nbytes += g.size * g.dtype.size
        if nbytes >= all_reduce_size or i == len(flat) - 1:
            sizes = list(itertools.accumulate(a.size for a in batch))[:-1]
            parts = mx.split(average(mx.concatenate([a.reshape(-1) for a in batch])), sizes)
            out.extend(p.reshape(a.shape) for p, a in zip(parts, batch))
            batch, nbytes = [], 0
    return tree_unflatten([(k, g) for (k, _), g in zip(flat, out)])


__dir__ = listing(globals(), ("Any", "Callable", "Module", "mx", "tree_flatten", "tree_map",
                                 "tree_unflatten"))  # (MLX lists these too)
