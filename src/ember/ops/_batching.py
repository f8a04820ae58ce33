"""Small helpers the vmap (`defbatch`) rules of the op modules share.

A rule gets `args` and `dims` (the batch axis of each argument, None when it has none);
these find the batch size, move batch axes to the front, give an unbatched argument the
batch explicitly, line up logical ranks for broadcasting, and, for the rare case a rule
cannot fold the batch into the primitive, run it once per example.
"""

from __future__ import annotations

from .._tensor import Tensor
from .registry import bind


def batch_size(args, dims) -> int:
    """The size of the batch axis (every batched argument has the same)."""
    for a, d in zip(args, dims):
        if d is not None:
            return a._shape[d]
    raise ValueError("no argument is batched")


def front(x: Tensor, d: int | None) -> Tensor:
    """`x` with its batch axis `d` moved to the front (unchanged when `d` is None or 0)."""
    return x if not d else x.movedim(d, 0)


def batched(x: Tensor, d: int | None, size: int) -> Tensor:
    """`x` with the batch in front, an unbatched `x` expanded (a view) to `size` copies."""
    if d is None:
        return x.unsqueeze(0).expand((size,) + tuple(x._shape))
    return front(x, d)


def aligned(args, dims) -> list:
    """Tensor arguments with the batch in front and, for the batched ones, size-1 axes
    after it so every logical rank is the same: elementwise broadcasting then pairs the
    batch with the batch and never with an unbatched argument's leading axis."""
    ranks = [a.ndim - (d is not None) for a, d in zip(args, dims) if isinstance(a, Tensor)]
    top = max(ranks, default=0)
    out = []
    for a, d in zip(args, dims):
        if d is not None:
            a = front(a, d)
            pad = top - (a.ndim - 1)
            if pad:
                a = a.reshape((a._shape[0],) + (1,) * pad + tuple(a._shape[1:]))
        out.append(a)
    return out


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
    """`prim` run once per example and the results stacked along a new axis 0: the
    fallback a rule uses for a case it cannot fold (the other cases vectorise)."""
    from .join import stack

    outs = [bind(prim, *[a.select(d, i) if d is not None else a for a, d in zip(args, dims)],
                 **params) for i in range(batch_size(args, dims))]
    if isinstance(outs[0], tuple):
        return tuple(stack(list(o)) for o in zip(*outs)), (0,) * len(outs[0])
    return stack(outs), 0
