"""Whole Jacobians: `jacrev` (VJPs of the output's unit vectors), `jacfwd` (JVPs of the
input's unit vectors) and `hessian` (`jacfwd` of `jacrev`).

The unit vectors are one batch under `vmap`, so a Jacobian costs one batched backward
(or forward) pass rather than one per element; `chunk_size` bounds how many run at once.
Each result has shape `output.shape + input.shape`, one per (output leaf, argnum).
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor import Tensor
from ..ops.creation import eye, zeros
from ..utils._pytree import tree_flatten, tree_unflatten
from ._forward import check_dual, jvp
from ._reverse import ForwardAboveVmap, _argnums_inputs, vjp
from ._vmap import BatchedTensor, vmap


def _unit_vectors(leaves: list) -> list:
    """For tensors `leaves` of N elements in all: per leaf, the (N, *leaf.shape) slices of
    the N x N identity (row i is one at element i of the concatenation)."""
    n = sum(x.numel() for x in leaves)
    ident = eye(n, dtype=leaves[0].dtype, device=leaves[0].device) if leaves else None
    out, start = [], 0
    for x in leaves:
        k = x.numel()
        out.append(ident[:, start:start + k].reshape((n,) + tuple(x.shape)))
        start += k
    return out


def _split_rows(stacked, leaves: list) -> list:
    """(N, *rest) -> one (n_i, *rest) block per leaf, n_i its element count."""
    out, start = [], 0
    for x in leaves:
        k = x.numel()
        out.append(stacked[start:start + k])
        start += k
    return out


def _restrict(func, args, kwargs, which):
    def restricted(*picked):
        full = list(args)
        for i, v in zip(which, picked):
            full[i] = v
        return func(*full, **kwargs)
    return restricted


def _refuse_complex(name: str, tree, is_input: bool) -> None:
    """PyTorch's jacrev / jacfwd take real functions only: refuse a complex tensor among
    all the arguments (not only argnums) or the outputs, naming its flattened index."""
    for idx, x in enumerate(tree_flatten(tree)[0]):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            raise RuntimeError(f"{name}: Expected all {'inputs' if is_input else 'outputs'} to "
                               f"be real but received complex tensor at flattened input idx: "
                               f"{idx}")


def _check_chunk(chunk_size) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of `func` by reverse mode (cheap when outputs are few)."""
    _check_chunk(chunk_size)

    def wrapper(*args, **kwargs):
        _refuse_complex("jacrev", args, True)
        which = _argnums_inputs(args, argnums)
        picked = tuple(args[i] for i in which)
        res = vjp(_restrict(func, args, kwargs, which), *picked, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        o_leaves, o_spec = tree_flatten(out)
        _refuse_complex("jacrev", o_leaves, False)
        in_leaves, in_spec = tree_flatten(picked)
        if sum(o.numel() for o in o_leaves) == 0:
            rows = [zeros((0,) + tuple(x.shape), dtype=x.dtype) for x in in_leaves]
        else:
            def row(*cts):
                return tree_flatten(vjp_fn(tree_unflatten(list(cts), o_spec)))[0]
            units = _unit_vectors(o_leaves)
            rows = vmap(row, chunk_size=chunk_size)(*units)
        per_in = [_split_rows(r, o_leaves) for r in rows]  # [input][output] -> (n_o, *in)
        per_out = []
        for k, o in enumerate(o_leaves):
            jac = [per_in[m][k].reshape(tuple(o.shape) + tuple(x.shape))
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
        _refuse_complex("jacfwd", args, True)
        which = _argnums_inputs(args, argnums)
        picked = tuple(args[i] for i in which)
        in_leaves, in_spec = tree_flatten(picked)
        for x in in_leaves:  # (PyTorch's jvp checks them before f runs)
            if isinstance(x, Tensor):
                check_dual(x)
        restricted = _restrict(func, args, kwargs, which)
        out = restricted(*picked)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be "
                                   "a tuple: (output, aux) if has_aux is True")
            out, aux = out
        o_leaves, o_spec = tree_flatten(out)
        _refuse_complex("jacfwd", o_leaves, False)
        if sum(x.numel() for x in in_leaves) == 0:
            cols = [zeros((0,) + tuple(o.shape), dtype=o.dtype) for o in o_leaves]
        else:
            def column(*ts):
                res = jvp(restricted, picked, tree_unflatten(list(ts), in_spec),
                          has_aux=has_aux)
                return tree_flatten(res[1])[0]
            units = _unit_vectors(in_leaves)
            cols = vmap(column, randomness=randomness)(*units)
        per_out = []
        for k, o in enumerate(o_leaves):
            blocks = _split_rows(cols[k], in_leaves)  # per input: (n_in, *o.shape)
            jac = []
            for m, x in enumerate(in_leaves):
                b = blocks[m].reshape((x.numel(),) + tuple(o.shape))
                b = b.permute(*range(1, o.dim() + 1), 0) if o.dim() else b
                jac.append(b.reshape(tuple(o.shape) + tuple(x.shape)))
            jac = tree_unflatten(jac, in_spec)
            per_out.append(jac[0] if isinstance(argnums, int) else jac)
        result = tree_unflatten(per_out, o_spec)
        return (result, aux) if has_aux else result

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of scalar-valued `func`: forward over reverse. Under a vmap whose batch
    the reverse pass's tape holds (per-example Hessians), reverse over reverse: the
    forward level would sit above that vmap and not see the tape's backward ops."""
    fwd = jacfwd(jacrev(func, argnums), argnums)
    rev = jacrev(jacrev(func, argnums), argnums)

    def wrapper(*args, **kwargs):
        if any(isinstance(x, BatchedTensor) for x in tree_flatten(args)[0]):
            return rev(*args, **kwargs)  # (a batched input: the tape holds the batch)
        try:
            return fwd(*args, **kwargs)
        except ForwardAboveVmap:  # (a closure over a batched value)
            return rev(*args, **kwargs)

    return wrapper
