"""Small helpers the batch (vmap) rules share: where the batch is, moving it to the front,
lining ranks up, and the per-example loop for a case no vectorised form covers."""

from __future__ import annotations

from .._tensor import Tensor
from .registry import bind


def batch_size(args, dims) -> int:
    """The batch size: the length of the first batched argument's batch axis."""
    for a, d in zip(args, dims):
        if d is not None:
            return a._shape[d]
    raise ValueError("no argument is batched")


def front(t: Tensor, d: int | None) -> Tensor:
    """`t` with its batch axis `d` moved to 0 (unchanged when `d` is None or 0)."""
    return t if not d else t.movedim(d, 0)


def pad_front(t, d: int | None, ndim: int):
    """`t` (batch axis `d`, or None) as (batch or 1, *ones, *t's logical shape) with `ndim`
    logical dims: ready to broadcast, batch first, against a batched result of that rank.
    A number is returned as it is."""
    if not isinstance(t, Tensor):
        return t
    if d is None:
        return t.reshape((1,) * (ndim - t.ndim + 1) + t._shape)
    t = front(t, d)
    return t.reshape(t._shape[:1] + (1,) * (ndim - t.ndim + 1) + t._shape[1:])


def loop(prim, args, dims, **params):
    """The primitive run once per example and the results stacked on a new axis 0."""
    from .join import stack

    outs = [bind(prim, *[a.select(d, i) if d is not None else a for a, d in zip(args, dims)],
                 **params) for i in range(batch_size(args, dims))]
    if isinstance(outs[0], tuple):
        return tuple(stack(list(o)) for o in zip(*outs)), (0,) * len(outs[0])
    return stack(outs), 0
