"""Activation checkpointing: run a block without keeping its intermediates, and run it
again during backward to get them back.

`use_reentrant=False` records the block's graph as usual (ember keeps no cheaper
recomputation graph, so it saves no memory, but gradients, outputs and RNG draws are
exactly those of a plain call). The reentrant form is a custom Function whose backward
replays the block with the RNG state it first ran with, so dropout masks agree.
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from ..random import get_rng_state

        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.constants = [None if isinstance(a, Tensor) else a for a in args]
        ctx.needs_grad = [isinstance(a, Tensor) and a.requires_grad for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd.engine import backward
        from ..random import fork_rng, set_rng_state

        saved = iter(ctx.saved_tensors)
        inputs = [c if c is not None else next(saved).detach().requires_grad_(need)
                  for c, need in zip(ctx.constants, ctx.needs_grad)]
        with fork_rng(enabled=ctx.rng_state is not None), enable_grad():
            if ctx.rng_state is not None:
                set_rng_state(ctx.rng_state)
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(i.grad if isinstance(i, Tensor) else None for i in inputs)


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs):
    """`function(*args, **kwargs)`, with its intermediates recomputed during backward."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if not use_reentrant:
        return function(*args, **kwargs)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, "children") and not isinstance(functions, list):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        chunk = functions[start:end + 1]
        input = checkpoint(lambda x, chunk=chunk: _run_all(chunk, x), input,
                           use_reentrant=use_reentrant, **kwargs)
    return _run_all(functions[end + 1:], input)


def _run_all(functions, x):
    for f in functions:
        x = f(x)
    return x
