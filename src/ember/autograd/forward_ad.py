"""ember.autograd.forward_ad: dual tensors and Jacobian-vector products, PyTorch's API.

Forward mode for real: `dual_level()` pushes a `JVPInterpreter` (forward_mode.py) onto the
dispatch stack, `make_dual` gives a tensor a tangent at that level, and every op bound
inside maps its inputs' tangents to its output's with its primitive's `jvp` rule: one
forward pass, no backward. `unpack_dual(y)` reads y's tangent off the level.
"""

from __future__ import annotations

from collections import namedtuple

from .. import _printing
from .. import _tensor as T
from .._core import current_interpreter, interpret
from .forward_mode import JVPInterpreter, in_primal_layout

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels: list = []  # the open level: [(interpreter, the `interpret` context)]


def _current() -> int:
    """The open level's index, -1 when none is open (torch's `_current_level`)."""
    return 0 if _levels else -1


def enter_dual_level() -> int:
    """Open a new dual level (only one at a time, as in PyTorch) and return its index."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = JVPInterpreter(0)
    ctx = interpret(level)
    ctx.__enter__()
    _levels.append((level, ctx))
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current dual level; its dual tensors lose their tangents."""
    if level is None:
        level = _current()
    if level != _current():
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
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
    if level is None:
        level = _current()
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if level != _current():
        raise RuntimeError("Invalid level given to _make_dual")
    lvl = _levels[-1][0]
    if lvl.tangent(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    dual = lvl.below(tensor.view_as, tensor)  # a view: the primal's values, shared
    lvl.set_tangent(dual, lvl.below(in_primal_layout, tangent, tensor))
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`; the tangent is None when it depends on no dual."""
    if level is None:
        level = _current()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, T.Tensor):
        return UnpackedDualTensor(tensor, None)
    lvl = _levels[-1][0]
    if level != _current():  # torch only looks at the level of a tensor with a tangent
        if lvl.tangent(tensor) is not None:
            raise RuntimeError("Invalid level given to _fw_primal")
        return UnpackedDualTensor(lvl.below(tensor.view_as, tensor), None)
    # NOTE: code the level runs below itself (a custom Function's forward, setup_context and
    # jvp) sees no tangents, as torch runs them with forward grad off
    tangent = lvl.tangent(tensor) if _active(lvl) else None
    return UnpackedDualTensor(lvl.below(tensor.view_as, tensor), tangent)


def _active(lvl) -> bool:
    """Whether `lvl` is on the dispatch stack now (not stepped below)."""
    it = current_interpreter()
    while it is not None:
        if it is lvl:
            return True
        it = it.parent
    return False


def _tangent_for_printing(t):
    """The tangent `repr` shows after the data (None outside a level or without one)."""
    return unpack_dual(t).tangent if _levels else None


_printing.forward_tangent = _tangent_for_printing


__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]
