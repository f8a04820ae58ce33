"""`functionalize`: a function with its mutations taken out.

PyTorch's transform rewrites in-place ops into out-of-place ones so that a tracer sees a
program without mutation. ember runs eagerly, so the same contract is kept by running the
function on copies of its tensor inputs: mutations (and writes through views) land on the
copies, and an input the function mutated receives the new value afterwards, as PyTorch
copies it back once the function returns. An output is then never a mutated input; an input
returned unchanged is returned itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..utils._pytree import tree_flatten, tree_unflatten

_REMOVE = ("mutations", "mutations_and_views")


def _bad_remove(remove: object) -> RuntimeError:
    return RuntimeError(
        f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
        "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
        "removed from the program, and replaced with their out-of-place equivalents.\n"
        "     remove='mutations_and_views': In addition to the above, all aliasing operators "
        "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """`func` run on copies of its tensor arguments; input mutations are copied back."""
    if remove not in _REMOVE:
        raise _bad_remove(remove)

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        leaves, spec = tree_flatten((args, kwargs))
        copies = [x.clone() if isinstance(x, Tensor) else x for x in leaves]
        versions = [c._version if isinstance(c, Tensor) else None for c in copies]
        fargs, fkwargs = tree_unflatten(copies, spec)
        out = func(*fargs, **fkwargs)
        untouched = {}
        for orig, copy, version in zip(leaves, copies, versions):
            if isinstance(orig, Tensor):
                if copy._version != version:
                    orig.copy_(copy)
                else:
                    untouched[id(copy)] = orig
        # an input returned as it came is the input itself, as in PyTorch
        outs, out_spec = tree_flatten(out)
        return tree_unflatten([untouched.get(id(o), o) for o in outs], out_spec)

    return wrapped
