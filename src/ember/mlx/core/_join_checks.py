"""The argument checks of MLX's `concatenate` and `stack`, in MLX's order and with its
messages (ember's own joins would speak PyTorch's)."""

from __future__ import annotations


def _shape(shape: tuple) -> str:
    return "(" + ",".join(map(str, shape)) + ")"


def _axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise IndexError(f"[{op}] Axis {axis} is out of bounds for array with {ndim} "
                         "dimensions.")
    return axis % ndim


def check_concatenate(shapes: list, axis: int) -> None:
    """Raise as MLX does for joining arrays of `shapes` along `axis` (one array: no check,
    MLX hands it back unchanged)."""
    if not shapes:
        raise ValueError("[concatenate] No arrays provided for concatenation")
    if len(shapes) == 1:
        return
    ax = _axis("concatenate", axis, len(shapes[0]))
    for shape in shapes:
        if len(shape) != len(shapes[0]):
            raise ValueError("[concatenate] All the input arrays must have the same number "
                             f"of dimensions. However, got arrays with dimensions "
                             f"{len(shapes[0])} and {len(shape)}.")
        if any(a != b for i, (a, b) in enumerate(zip(shape, shapes[0])) if i != ax):
            listed = "".join(f"{_shape(s)}, " for s in shapes)
            raise ValueError("[concatenate] All the input array dimensions must match "
                             "exactly except for the concatenation axis. However, the "
                             f"provided shapes are {listed}and the concatenation axis is "
                             f"{axis}.")


def check_stack(shapes: list, axis: int) -> None:
    """Raise as MLX does for stacking arrays of `shapes` on a new axis `axis`."""
    if not shapes:
        raise ValueError("[stack] No arrays provided for stacking")
    if any(s != shapes[0] for s in shapes):
        raise ValueError("[stack] All arrays must have the same shape")
    _axis("stack", axis, len(shapes[0]) + 1)
