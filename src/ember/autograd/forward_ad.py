"""ember.autograd.forward_ad: dual tensors and Jacobian-vector products, PyTorch's API.

Forward mode for real: `dual_level()` pushes a `JVPInterpreter` (forward_mode.py) onto the
dispatch stack, `make_dual` gives a tensor a tangent at that level, and every op bound
inside maps its inputs' tangents to its output's with its primitive's `jvp` rule: one
forward pass, no backward. `unpack_dual(y)` reads y's tangent off the level.
"""

from __future__ import annotations

from collections import namedtuple

from .. import _tensor as T
from .._core import interpret
from .forward_mode import JVPInterpreter, in_primal_layout

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels: list = []  # the open level: [(interpreter, the `interpret` context)]


def enter_dual_level() -> int:
    """Open a new dual level (only one at a time, as in PyTorch) and return its index."""
    if _levels:
        raise RuntimeError(
            "Entering a new forward AD level but the current level is not valid. Make sure "
            "you did not modified it directly."
        )
    level = JVPInterpreter(0)
    ctx = interpret(level)
    ctx.__enter__()
    _levels.append((level, ctx))
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current dual level; its dual tensors lose their tangents."""
    if not _levels:
        raise RuntimeError("Trying to exit a forward AD level that was not entered.")
    _, ctx = _levels.pop()
    ctx.__exit__(None, None, None)


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
    level = _levels[-1][0]
    dual = level.below(tensor.view_as, tensor)  # a view: the primal's values, shared
    level.set_tangent(dual, level.below(in_primal_layout, tangent, tensor))
    return dual



def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`; the tangent is None when it depends on no dual."""
    if not _levels or not isinstance(tensor, T.Tensor):
        return UnpackedDualTensor(tensor, None)
    lvl = _levels[-1][0]
    return UnpackedDualTensor(lvl.below(tensor.view_as, tensor), lvl.tangent(tensor))


__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]
