"""Forward-mode transforms: `jvp` and `linearize`, each a level of `JVPInterpreter`.

`jvp(f, primals, tangents)` pushes a fresh level, gives each primal its tangent there,
runs `f` once and reads the outputs' tangents off the level. Levels nest: the tangent
arithmetic of an inner level is bound below it, so an outer level differentiates it and
the two never confuse their perturbations.
"""

from __future__ import annotations

from collections.abc import Callable

from .._core import interpret
from .._tensor import Tensor
from ..autograd.forward_mode import JVPInterpreter, in_primal_layout
from ..ops.creation import zeros_like
from ..utils._pytree import tree_flatten, tree_unflatten

_levels = [0]  # forward levels open now (each new one is numbered after them)


def _check_pair(primals, tangents, fname: str) -> tuple[list, list, object]:
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents to "
                           "have the same python structure.")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents "
                               "to only contain Tensors")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents "
                               f"to have the same shape, got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}")
        if not (p.dtype.is_floating_point or p.dtype.is_complex):
            raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to be "
                               f"floating point or complex, got {p.dtype}")
    return p_leaves, t_leaves, p_spec


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False,
        has_aux: bool = False):
    """`(func(*primals), J tangents)`: the output and its directional derivative along
    `tangents`, in one forward pass. With `has_aux`, func returns `(output, aux)` and aux is
    returned third."""
    p_leaves, t_leaves, spec = _check_pair(primals, tangents, "jvp")
    level = JVPInterpreter(_levels[0])
    _levels[0] += 1
    try:
        with interpret(level):
            duals = []
            for p, t in zip(p_leaves, t_leaves):
                d = level.below(p.view_as, p)
                level.set_tangent(d, level.below(in_primal_layout, t, p))
                duals.append(d)
            out = func(*tree_unflatten(duals, spec))
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("jvp(f, primals, tangents): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                out, aux = out
            o_leaves, o_spec = tree_flatten(out)
            for o in o_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError("jvp(f, primals, tangents): Expected f(*primals) to "
                                       f"return only tensors, got unsupported type "
                                       f"{type(o).__name__}")
            t_out = [level.tangent(o) for o in o_leaves]
            t_out = [level.below(zeros_like, o) if t is None else t
                     for t, o in zip(t_out, o_leaves)]
    finally:
        _levels[0] -= 1
    res = (tree_unflatten(o_leaves, o_spec), tree_unflatten(t_out, o_spec))
    return res + (aux,) if has_aux else res


def linearize(func: Callable, *primals):
    """`(func(*primals), jvp_fn)`, where `jvp_fn(*tangents)` is the JVP at `primals`
    (each call runs one forward pass)."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn
