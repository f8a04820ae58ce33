"""What the pointwise families (`binary`, `ternary`) and the pointwise primitives with a
static op (`compare`, `bitwise`) share: their vmap rule and the helpers their forward-mode
rules use. (Their eager evaluation is the core's `eval_kernel`, which calls a family
member's kernel directly.)
"""

from __future__ import annotations

from .._core import bind
from .._tensor import Tensor

# --- vmap --------------------------------------------------------------------------------

def batch_pointwise(prim):
    """The vmap rule of a broadcasting pointwise primitive (or family): every batched
    tensor gets its batch axis in front, then size-1 axes after it up to the largest
    logical rank, so that the logical axes line up from the right and an unbatched operand
    (of any rank up to that) broadcasts against them, never against the batch axis."""
    def rule(args, dims, **params):
        rank = max((a.dim() - (d is not None) for a, d in zip(args, dims)
                    if isinstance(a, Tensor)), default=0)
        if all(d is None for d in dims):
            return bind(prim, *args, **params), None
        moved = []
        for a, d in zip(args, dims):
            if d is not None:
                if d:
                    a = a.movedim(d, 0)
                for _ in range(rank + 1 - a.dim()):
                    a = a.unsqueeze(1)
            moved.append(a)
        return bind(prim, *moved, **params), 0

    return rule


# --- forward mode ------------------------------------------------------------------------

def full(t: Tensor, out: Tensor) -> Tensor:
    """Tangent `t` of a broadcast operand, expanded to the output's shape."""
    return t if t._shape == out._shape else t.expand(out._shape)


def tangent_sum(*terms):
    """The sum of the terms that are not None (None when all are)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def shaped(t, out: Tensor):
    """A tangent (or None) as the output's shape and dtype."""
    if t is None:
        return None
    if t._dtype is not out._dtype:
        t = t.to(out._dtype)
    return full(t, out)
