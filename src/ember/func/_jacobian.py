"""Whole Jacobians: `jacrev` (one VJP per output element), `jacfwd` (one JVP per input
element) and `hessian` (`jacfwd` of `jacrev`).

Each result has shape `output.shape + input.shape`, one per (output leaf, argnum). The
rows or columns are computed one at a time; `chunk_size` is accepted for PyTorch's API
and bounds nothing more here (vmap, which would compute a chunk at once, comes later).
"""

from __future__ import annotations

from collections.abc import Callable

from ..ops.creation import zeros
from ..ops.join import stack
from ..utils._pytree import tree_flatten, tree_unflatten
from ._forward import jvp
from ._reverse import _argnums_inputs, vjp


def _basis(shape, dtype, device):
    """The unit tensors of `shape`, one per element, in row-major order."""
    n = 1
    for s in shape:
        n *= s
    for i in range(n):
        e = zeros(n, dtype=dtype, device=device)
        e[i] = 1
        yield e.reshape(shape)


def _check_chunk(chunk_size) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")


def _assemble(cols: list, out_shape, in_shape, *, rows_first: bool):
    """Stack per-element results into `out_shape + in_shape`."""
    if not cols:
        return zeros(tuple(out_shape) + tuple(in_shape))
    st = stack(cols)
    if rows_first:  # one row per output element: (n_out, *in_shape)
        return st.reshape(tuple(out_shape) + tuple(in_shape))
    # one column per input element: (n_in, *out_shape) -> out_shape + in_shape
    moved = st.reshape((-1,) + tuple(out_shape))
    k = len(out_shape)
    return moved.permute(*range(1, k + 1), 0).reshape(tuple(out_shape) + tuple(in_shape))


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of `func` by reverse mode (cheap when outputs are few)."""
    _check_chunk(chunk_size)

    def wrapper(*args, **kwargs):
        which = _argnums_inputs(args, argnums, "jacrev")

        def restricted(*picked):
            full = list(args)
            for i, v in zip(which, picked):
                full[i] = v
            return func(*full, **kwargs)

        res = vjp(restricted, *(args[i] for i in which), has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        o_leaves, o_spec = tree_flatten(out)
        in_leaves, in_spec = tree_flatten(tuple(args[i] for i in which))
        per_out = []
        for k, o in enumerate(o_leaves):
            rows = []
            for e in _basis(o.shape, o.dtype, o.device):
                cts = [e if j == k else zeros(p.shape, dtype=p.dtype, device=p.device)
                       for j, p in enumerate(o_leaves)]
                rows.append(tree_flatten(vjp_fn(tree_unflatten(cts, o_spec)))[0])
            jac = [_assemble([r[m] for r in rows], o.shape, x.shape, rows_first=True)
                   for m, x in enumerate(in_leaves)]
            jac = tree_unflatten(jac, in_spec)
            per_out.append(jac[0] if isinstance(argnums, int) else jac)
        result = tree_unflatten(per_out, o_spec)
        return (result, res[2]) if has_aux else result

    return wrapper


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error"
           ) -> Callable:
    """The Jacobian of `func` by forward mode (cheap when inputs are few)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        which = _argnums_inputs(args, argnums, "jacfwd")
        picked = tuple(args[i] for i in which)
        in_leaves, in_spec = tree_flatten(picked)

        def restricted(*vals):
            full = list(args)
            for i, v in zip(which, vals):
                full[i] = v
            return func(*full, **kwargs)

        cols = []  # per input leaf: list of tangent-output leaf lists
        out = aux = None
        for m, x in enumerate(in_leaves):
            per = []
            for e in _basis(x.shape, x.dtype, x.device):
                ts = [e if j == m else zeros(p.shape, dtype=p.dtype, device=p.device)
                      for j, p in enumerate(in_leaves)]
                res = jvp(restricted, picked, tree_unflatten(ts, in_spec), has_aux=has_aux)
                out = res[0]
                aux = res[2] if has_aux else None
                per.append(tree_flatten(res[1])[0])
            cols.append(per)
        if out is None:  # no input elements: evaluate once for the output's shape
            out = restricted(*picked)
            if has_aux:
                out, aux = out
        o_leaves, o_spec = tree_flatten(out)
        per_out = []
        for k, o in enumerate(o_leaves):
            jac = [_assemble([c[k] for c in cols[m]], o.shape, x.shape, rows_first=False)
                   for m, x in enumerate(in_leaves)]
            jac = tree_unflatten(jac, in_spec)
            per_out.append(jac[0] if isinstance(argnums, int) else jac)
        result = tree_unflatten(per_out, o_spec)
        return (result, aux) if has_aux else result

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of scalar-valued `func`: forward over reverse."""
    return jacfwd(jacrev(func, argnums), argnums)
