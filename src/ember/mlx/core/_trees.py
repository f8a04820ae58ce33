"""MLX's trees: lists, tuples and dicts nested in any way, with arrays (or anything
else) at the leaves. The transforms flatten their arguments with these; `mlx.utils` gives
the public tree functions on the same walk."""

from __future__ import annotations

from collections.abc import Callable, Iterator


def is_node(x) -> bool:
    return isinstance(x, list | tuple | dict)


def leaves(tree, is_leaf: Callable | None = None) -> list:
    """The leaves of `tree`, depth first, dict entries in insertion order."""
    out: list = []
    _collect(tree, is_leaf, out)
    return out


def _collect(t, is_leaf: Callable | None, out: list) -> None:
    # (a module function, not a closure: a closure that calls itself is a reference cycle,
    # and the leaves it collected, arrays of any size, would wait for the cycle collector)
    if is_leaf is not None and is_leaf(t):
        out.append(t)
    elif isinstance(t, dict):
        for v in t.values():
            _collect(v, is_leaf, out)
    elif isinstance(t, list | tuple):
        for v in t:
            _collect(v, is_leaf, out)
    else:
        out.append(t)


def rebuild(tree, new: Iterator, is_leaf: Callable | None = None):
    """`tree`'s structure with its leaves taken in order from iterator `new`."""
    if is_leaf is not None and is_leaf(tree):
        return next(new)
    if isinstance(tree, dict):
        return {k: rebuild(v, new, is_leaf) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(rebuild(v, new, is_leaf) for v in tree))
    if isinstance(tree, list | tuple):
        return type(tree)(rebuild(v, new, is_leaf) for v in tree)
    return next(new)


def tree_map(fn: Callable, tree, *rest, is_leaf: Callable | None = None):
    """`fn` applied to the leaves of `tree`; each of `rest` is indexed as `tree` is (by
    the same keys and positions), so its subtree at a leaf of `tree` is what `fn` gets."""
    if (is_leaf is not None and is_leaf(tree)) or not is_node(tree):
        return fn(tree, *rest)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v, *(r[k] for r in rest), is_leaf=is_leaf)
                for k, v in tree.items()}
    items = [tree_map(fn, v, *(r[i] for r in rest), is_leaf=is_leaf)
             for i, v in enumerate(tree)]
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*items)
    return type(tree)(items)
