"""vmap of a custom `autograd.Function`, as PyTorch's `torch.func` runs one.

A Function works under vmap only when written for transforms (`forward` without ctx plus
`setup_context`) and when it says how: `generate_vmap_rule = True` (vmap runs its
forward on the batched inputs, as any function) or its own `vmap` staticmethod (called
with the batch laid out as it is, returning `(output, out_dims)`). Anything else is
refused in PyTorch's words. While the call records a graph node (an input requires grad:
`vmap(grad(f))`), the node has to be one example's, so the Function runs once per example.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ..autograd.function import NEEDS_SETUP_CONTEXT, Function
from ..utils._pytree import tree_flatten, tree_unflatten

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What a Function's `vmap` staticmethod is told about the vmap it runs under."""

    batch_size: int
    randomness: str


def check_vmappable(cls: type) -> None:
    """Refuse a Function vmap cannot run, in PyTorch's words."""
    if cls.setup_context is Function.setup_context:
        raise RuntimeError(NEEDS_SETUP_CONTEXT)
    own_rule = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule and own_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            f"delete the overridden vmap staticmethod to avoid ambiguity. {_DOCS}")
    if not cls.generate_vmap_rule and not own_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. "
            "Please override and implement the vmap staticmethod or set "
            f"generate_vmap_rule=True. {_DOCS}")


def records(args: tuple) -> bool:
    """Whether applying the Function to `args` records a graph node."""
    return grad_mode.is_grad_enabled() and any(
        isinstance(a, Tensor) and a.requires_grad for a in args)


def run_generated(cls: type, args: tuple, params: dict):
    """forward on the batched inputs (the caller's level batches its ops)."""
    with grad_mode.no_grad():
        return cls.forward(*args, **params)


def run_own_rule(interp, cls: type, vals: list, dims: list, params: dict):
    """The class's `vmap(info, in_dims, *args)`, below `interp`'s level, its output
    re-batched along the out_dims it returns."""
    info = VmapInfo(interp.size, interp.randomness)
    with grad_mode.no_grad():
        result = interp.below(cls.vmap, info, tuple(dims), *vals, **params)
    base = ("Expected the vmap staticmethod to have two returns, an output and out_dims "
            "with pytree structure compatible with the output. ")
    if not isinstance(result, tuple):
        raise RuntimeError(base + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(base + f"Got {len(result)} returns instead")
    out, out_dims = result
    leaves, spec = tree_flatten(out)
    odims = [out_dims] * len(leaves) if isinstance(out_dims, int) or out_dims is None \
        else tree_flatten(out_dims)[0]
    return tree_unflatten([interp._wrap(o, d) for o, d in zip(leaves, odims)], spec)
