"""How MLX's `vmap` reads `in_axes` and `out_axes`: a prefix of the arguments' tree (of the
outputs' tree), an int or None at a leaf standing for every array below it, paired with
the arrays one by one, with MLX's checks and messages.

The tree an axes prefix is laid against is the single argument itself when there is one,
and the tuple of arguments otherwise, so `in_axes=(0, 1)` maps a function of two arrays,
or of one tuple of two arrays. At an array, an axis may also be a 1-tuple `(axis,)`, but
only when the whole tree is that one array. Negative axes count from the end (of the
output with the mapped axis in it, for `out_axes`); an axis out of range is an IndexError.
"""

from __future__ import annotations

from ._trees import leaves


def _shape_text(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def _not_prefix() -> ValueError:
    return ValueError("[tree_map] Additional input tree is not a valid prefix of the first tree.")


def strict_leaves(tree, is_array) -> list:
    """The arrays of `tree`, which must hold nothing else."""
    flat = leaves(tree)
    if not all(is_array(x) for x in flat):
        raise ValueError("[tree_flatten] The argument should contain only arrays")
    return flat


def flat_axes(tree, axes, is_array, output: bool = False) -> list:
    """One axis (an int, normalised to be non-negative, or None) per array of `tree`, in
    its leaves' order, from the prefix tree `axes`."""
    out: list = []
    saw_tuple = _visit(tree, axes, is_array, output, out)
    if saw_tuple and not is_array(tree):
        raise ValueError("[vmap] axis must be int or None.")
    return out


def _visit(tree, axes, is_array, output: bool, out: list) -> bool:
    """Pair `tree` with `axes` into `out`; whether a 1-tuple axis was met."""
    if isinstance(tree, list | tuple):
        if isinstance(axes, list | tuple | dict):
            if type(axes) is not type(tree) or len(axes) != len(tree):
                raise _not_prefix()
            pairs = zip(tree, axes)
        else:
            pairs = ((t, axes) for t in tree)
    elif isinstance(tree, dict):
        if isinstance(axes, list | tuple) or (isinstance(axes, dict) and len(axes) != len(tree)):
            raise _not_prefix()
        if isinstance(axes, dict):
            if any(k not in axes for k in tree):
                raise ValueError(
                    "[tree_visit] Tree is not a valid prefix tree of the first tree.")
            pairs = ((v, axes[k]) for k, v in tree.items())
        else:
            pairs = ((v, axes) for v in tree.values())
    else:
        return _leaf_axis(tree, axes, output, out)
    saw = False
    for t, a in pairs:
        saw = _visit(t, a, is_array, output, out) or saw
    return saw


def _leaf_axis(x, axis, output: bool, out: list) -> bool:
    saw_tuple = isinstance(axis, tuple)
    if saw_tuple and len(axis) == 1 and (axis[0] is None or isinstance(axis[0], int)):
        axis = axis[0]
    if axis is None:
        out.append(None)
        return saw_tuple
    if not isinstance(axis, int):
        raise ValueError("[vmap] axis must be int or None.")
    ndim = x.ndim + output
    axis = int(axis) + ndim if axis < 0 else int(axis)
    if not 0 <= axis < ndim:
        where = " output " if output else " "
        raise IndexError(f"[vmap] Invalid{where}vectorization axis {axis} for array with "
                         f"shape {_shape_text(x.shape)}")
    out.append(axis)
    return saw_tuple


def mapped_size(arrays: list, axes: list) -> int | None:
    """The length of the mapped axis, the same for every mapped array (None when no
    array is mapped: MLX says so only after running the function once)."""
    sizes = [x.shape[a] for x, a in zip(arrays, axes) if a is not None]
    for s in sizes[1:]:
        if s != sizes[0]:
            raise ValueError(f"[vmap] Inconsistent axis sizes: {sizes[0]} and {s}.")
    return sizes[0] if sizes else None


def nothing_mapped() -> ValueError:
    return ValueError("At least one of in_axes must be non-None.")
