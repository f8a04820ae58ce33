"""The tangent of a primitive marked `BY_VJP`: its VJP, transposed.

The VJP `u -> J^T u` is linear in the cotangent `u`; differentiating `<J^T u, t>` with
respect to `u` gives `J t`, the JVP. That costs two reverse passes instead of one forward
rule, so it serves only primitives whose forward rule would be a fused backward kernel of
its own or a recursion (`jvp_by_vjp` records why for each). Real inputs and outputs.
"""

from __future__ import annotations

from .._core import bind
from ..ops.creation import zeros_like
from . import grad_mode
from .engine import grad


def _differentiable(t) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def jvp_from_vjp(prim, primals: tuple, tangents: tuple, params: dict):
    """The output tangent(s) of `prim(*primals, **params)` along `tangents` (None: zero)."""
    with grad_mode.enable_grad():
        xs = [p.detach().requires_grad_() if t is not None else p
              for p, t in zip(primals, tangents)]
        out = bind(prim, *xs, **params)
        outs = out if isinstance(out, tuple) else (out,)
        diff = [o for o in outs if _differentiable(o)]
        us = [zeros_like(o).requires_grad_() for o in diff]
        wrt = [(x, t) for x, t in zip(xs, tangents) if t is not None]
        gs = grad(diff, [x for x, _ in wrt], us, create_graph=True, allow_unused=True)
        terms = [(g * t).sum() for g, (_, t) in zip(gs, wrt) if g is not None]
        res = grad(sum(terms), us, allow_unused=True) if terms else [None] * len(us)
    res = iter([zeros_like(o) if r is None else r.detach() for r, o in zip(res, diff)])
    if isinstance(out, tuple):
        return tuple(next(res) if _differentiable(o) else None for o in outs)
    return next(res)
