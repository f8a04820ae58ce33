"""What the pointwise families (`binary`, `ternary`) and the pointwise primitives with a
static op (`compare`, `bitwise`) share: their vmap rule and the helpers their forward-mode
rules use; and the eager evaluation of the `binary` family.

Eager evaluation of the `binary` family (`eval_pointwise`) is the core's `eval_kernel`
with the member's kernel called directly and its VJP looked up inline: `a + b` and `a * b`
are the framework's hottest calls, and the generic family path would add a delegation call
for the kernel and another for the VJP lookup to each of them. (`ternary` takes the
generic path.)
"""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._core import MISSING, bind, vjp_rules
from .._core.dispatch import _FP_QUIET, _eval_off_cpu, _fp_reset, _fp_set, autograd
from .._tensor import Tensor, _wrap

_grad_state = grad_mode.state

def eval_pointwise(fam, args: tuple, params: dict):
    """Eager evaluation of `binary` family member `params["fn"]` on `args` (its members
    take no other params)."""
    # NOTE: the hot path of `a + b`: one pass over the arguments, as eval_kernel.
    arrays = []
    grad = False
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            if s is not None and s.device.type != "cpu":
                return _eval_off_cpu(fam, args, params)
            arr = a._np
            arrays.append(arr if arr is not None else a._array())
            if a._requires_grad:
                grad = True
        else:
            arrays.append(a)
    fn = params["fn"]
    token = _fp_set(_FP_QUIET)
    try:
        res = fn.kernel(*arrays)  # (a binary member takes no params: `fn` is the only one)
    finally:
        _fp_reset(token)
    out = _wrap(res)
    if grad and _grad_state.enabled:
        autograd.record(fam, vjp_rules[fam].table.get(fn, MISSING), args, params, out)
    return out


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
