"""ember.autograd.forward_ad: dual tensors and Jacobian-vector products, PyTorch's API.

Forward mode here is built on reverse mode, not on per-op JVP rules: `make_dual`
registers (primal, tangent) in the current dual level and returns a tensor that
records a graph; `unpack_dual(y)` gets y's tangent `J v` with the double-backward
trick (differentiate the VJP `u -> J^T u` with respect to `u`, along `v`). The
numbers are those of true forward mode; the cost is two backward passes per
unpack. One visible difference from PyTorch: dual tensors require grad.
"""

from __future__ import annotations

from collections import namedtuple

from .. import _tensor as T
from . import grad_mode

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels: list[list] = []  # one list of (dual tensor, tangent) per open level


def enter_dual_level() -> int:
    """Open a new dual level (only one at a time, as in PyTorch) and return its index."""
    if _levels:
        raise RuntimeError(
            "Entering a new forward AD level but the current level is not valid. Make sure "
            "you did not modified it directly."
        )
    _levels.append([])
    return len(_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current dual level; its dual tensors lose their tangents."""
    if not _levels:
        raise RuntimeError("Trying to exit a forward AD level that was not entered.")
    _levels.pop()


class dual_level:
    """Context manager for a dual level: `with dual_level(): ...`."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def make_dual(tensor, tangent, *, level: int | None = None):
    """A tensor with `tensor`'s values whose tangent (directional derivative) is `tangent`."""
    if not _levels:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    with grad_mode.enable_grad():
        if tensor.requires_grad:
            dual = tensor.view_as(tensor)
        else:
            dual = tensor.detach().requires_grad_(True)
    _levels[-1].append((dual, tangent.detach()))
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`; the tangent is None when it depends on no dual."""
    primal = tensor.detach() if isinstance(tensor, T.Tensor) else tensor
    if not _levels or not isinstance(tensor, T.Tensor) or not tensor.requires_grad:
        return UnpackedDualTensor(primal, None)
    for dual, tangent in _levels[-1]:
        if tensor is dual:
            return UnpackedDualTensor(primal, tangent)
    from ..ops.creation import zeros_like
    from .engine import grad

    duals = [d for d, _ in _levels[-1]]
    tangents = [t for _, t in _levels[-1]]
    with grad_mode.enable_grad():
        u = zeros_like(tensor).requires_grad_(True)
        vjps = grad(tensor, duals, u, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(vjps, tangents) if g is not None and g.requires_grad]
        if not pairs:
            return UnpackedDualTensor(primal, None)
        gs, ts = zip(*pairs)
        (jvp,) = grad(gs, u, ts, retain_graph=True, allow_unused=True)
    return UnpackedDualTensor(primal, None if jvp is None else jvp.detach())


__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]
