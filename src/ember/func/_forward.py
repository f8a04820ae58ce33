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


_JVP = "jvp(f, primals, tangents)"


def check_dual(p, t=None) -> None:
    """Primal `p` and its tangent `t` refused as PyTorch's `make_dual` refuses them."""
    if not (p.dtype.is_floating_point or p.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {p.dtype}")
    if t is None:
        return
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{t.dtype}")
    if tuple(p.shape) != tuple(t.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(p.shape)} while the given forward gradient is of size "
                           f"{list(t.shape)}.")


def _check_tensors(leaves: list, argname: str) -> None:
    if not leaves:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got "
                               f"{type(x)}")


def _check_pair(primals, tangents) -> tuple[list, list, object]:
    """The primals' and tangents' leaves, checked in PyTorch's order and words."""
    from ._vmap import spec_str

    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{spec_str(p_spec)} and tangents with structure {spec_str(t_spec)}")
    _check_tensors(p_leaves, "primals")
    _check_tensors(t_leaves, "tangents")
    for p, t in zip(p_leaves, t_leaves):
        check_dual(p, t)
    return p_leaves, t_leaves, p_spec


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False,
        has_aux: bool = False):
    """`(func(*primals), J tangents)`: the output and its directional derivative along
    `tangents`, in one forward pass. With `has_aux`, func returns `(output, aux)` and aux is
    returned third."""
    p_leaves, t_leaves, spec = _check_pair(primals, tangents)
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
                    raise RuntimeError(f"{_JVP}: output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
                for a in tree_flatten(aux)[0]:
                    if not isinstance(a, Tensor):
                        raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
            o_leaves, o_spec = tree_flatten(out)
            if not o_leaves or o_leaves == [None]:
                raise RuntimeError(f"{_JVP}: Expected f to be a function that has non-empty "
                                   f"output (got output = {o_leaves})")
            for o in o_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{_JVP}: expected f(*primals) to return only tensors, "
                                       f"got unsupported type {type(o)}")
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
