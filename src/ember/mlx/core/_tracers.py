"""Arrays that stand for every example of a `vmap` at once (its tracers): MLX refuses to
compute one (`mx.eval`, `item`, `tolist`, NumPy conversion) or to hand one to
`mx.async_eval`, with the messages kept here."""

from __future__ import annotations

from ...func._vmap import BatchedTensor

EVAL_IN_TRANSFORM = ("[eval] Attempting to eval an array during function transformations "
                     "like compile or vmap is not allowed.")
ASYNC_EVAL_IN_TRANSFORM = "[async_eval] Not allowed inside a graph transformation."


def is_vmap_tracer(t) -> bool:
    """Whether tensor `t` is a vmap level's batched view (it has no values of its own)."""
    return isinstance(t, BatchedTensor)


def check_readable(t) -> None:
    """Raise MLX's ValueError when tensor `t`'s values are asked for inside a vmap."""
    if isinstance(t, BatchedTensor):
        raise ValueError(EVAL_IN_TRANSFORM)
