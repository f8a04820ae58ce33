"""vmap helpers shared by the linear-algebra, fft and matrix-structure batch rules.

Their kernels already take leading batch dims, so a batch rule moves vmap's axis to the
front and calls the primitive itself. Where several operands broadcast their batch dims
(solve, lstsq, cross), a batched operand also gets unit dims after its vmap axis so that
every batched operand has as many batch dims as the deepest one: an unbatched operand
then lines up with the trailing ones and never broadcasts against vmap's axis.
"""

from __future__ import annotations

from .._tensor import Tensor


def front(x: Tensor, d: int | None) -> Tensor:
    """`x` with its batch axis `d` first (as it is when `d` is None or 0)."""
    return x if not d else x.movedim(d, 0)


def align(args: tuple, dims: tuple, cores: tuple[int, ...]) -> tuple:
    """`args` with each batched tensor's batch axis first and unit dims inserted after it,
    so that every batched tensor has the same number of batch dims. `cores[i]` is how many
    trailing dims of arg i are its core (a matrix: 2, a vector: 1, elementwise: 0)."""
    ranks = [a.ndim - (d is not None) - c for a, d, c in zip(args, dims, cores)
             if isinstance(a, Tensor)]
    deepest = max(ranks, default=0)
    out = []
    for a, d, c in zip(args, dims, cores):
        if d is not None:
            a = front(a, d)
            missing = deepest - (a.ndim - 1 - c)
            if missing:
                a = a.reshape(a._shape[:1] + (1,) * missing + a._shape[1:])
        out.append(a)
    return tuple(out)


def leading(prim, empty=None):
    """The batch rule of a one-input primitive whose kernel takes leading batch dims: the
    batch axis moved first, the primitive itself, every output batched along dim 0 except
    the empty placeholders (`empty(params)`: their output positions) a mode leaves out."""
    from .._core import bind

    def rule(args, dims, **params):
        out = bind(prim, front(args[0], dims[0]), *args[1:], **params)
        if prim.n_outputs == 1:
            return out, 0
        skip = empty(params) if empty is not None else ()
        return out, tuple(None if i in skip else 0 for i in range(prim.n_outputs))

    return rule
