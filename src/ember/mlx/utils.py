"""`mlx.utils`: functions over trees (lists, tuples and dicts of arrays or anything)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .core import _trees

tree_map = _trees.tree_map


def tree_map_with_path(fn: Callable, tree, *rest, is_leaf: Callable | None = None,
                       path: str | None = None):
    """`fn(path, leaf, *matching leaves of rest)` over `tree`; paths as "a.0.b"."""
    if is_leaf is not None and is_leaf(tree) or not _trees.is_node(tree):
        return fn(path, tree, *rest)

    def sub(p, k):
        return f"{p}.{k}" if p else str(k)

    if isinstance(tree, dict):
        return {k: tree_map_with_path(fn, v, *(r[k] for r in rest), is_leaf=is_leaf,
                                      path=sub(path, k)) for k, v in tree.items()}
    items = [tree_map_with_path(fn, v, *(r[i] for r in rest), is_leaf=is_leaf,
                                path=sub(path, i)) for i, v in enumerate(tree)]
    # a namedtuple takes its fields as arguments, as in tree_map
    return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)


def tree_flatten(tree, prefix: str = "", is_leaf: Callable | None = None,
                 destination: list | dict | None = None):
    """`[(path, leaf), ...]` (or into `destination`, a list or a dict) with paths such as
    "layers.0.weight". As in MLX, each key joins the path after a ".", and every path
    drops its first character: a `prefix` should start with "." ("p" makes ".0")."""
    out = [] if destination is None else destination
    if isinstance(out, list):
        add = out.append
    elif isinstance(out, dict):
        add = lambda kv: out.__setitem__(*kv)  # noqa: E731
    else:
        raise ValueError("Destination should be either a list or a dictionary or None")
    _flatten(tree, prefix, is_leaf, add)
    return out


def _flatten(t, prefix: str, is_leaf: Callable | None, add: Callable) -> None:
    # (a module function: a closure calling itself would be a cycle holding the leaves)
    if (is_leaf is None or not is_leaf(t)) and _trees.is_node(t):
        items = t.items() if isinstance(t, dict) else enumerate(t)
        for k, v in items:
            _flatten(v, f"{prefix}.{k}", is_leaf, add)
    else:
        add((prefix[1:], t))


def tree_unflatten(tree: list | dict) -> Any:
    """The nested tree of flat `[(path, value), ...]`: integer keys make lists."""
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]
    if not items:
        return []  # (as MLX's: a module without parameters updates with an empty list)
    children: dict = {}
    for path, value in items:
        head, _, rest = path.partition(".")
        children.setdefault(head, []).append((rest, value))
    if all(k.isdigit() for k in children):  # a list; indices missing in between are {}
        n = max(int(k) for k in children) + 1
        return [tree_unflatten(children[str(i)]) if str(i) in children else {}
                for i in range(n)]
    return {k: tree_unflatten(v) for k, v in children.items()}


def tree_reduce(fn: Callable, tree, initializer=None, is_leaf: Callable | None = None):
    """`fn` folded over the leaves of `tree`, from `initializer` (or the first leaf)."""
    leaves = _trees.leaves(tree, is_leaf)
    if initializer is None:
        if not leaves:
            return None
        acc, leaves = leaves[0], leaves[1:]
    else:
        acc = initializer
    for x in leaves:
        acc = fn(acc, x)
    return acc


def tree_merge(tree_a, tree_b, merge_fn: Callable | None = None):
    """One tree of two whose leaves sit at different places (or that `merge_fn` joins)."""
    if tree_a is None or (_trees.is_node(tree_a) and not tree_a):
        return tree_b
    if tree_b is None or (_trees.is_node(tree_b) and not tree_b):
        return tree_a
    if isinstance(tree_a, dict) and isinstance(tree_b, dict):
        out = dict(tree_a)
        for k, v in tree_b.items():
            out[k] = tree_merge(out[k], v, merge_fn) if k in out else v
        return out
    if isinstance(tree_a, list | tuple) and isinstance(tree_b, list | tuple):
        n = max(len(tree_a), len(tree_b))
        pad_a = list(tree_a) + [None] * (n - len(tree_a))
        pad_b = list(tree_b) + [None] * (n - len(tree_b))
        return type(tree_a)(tree_merge(a, b, merge_fn) for a, b in zip(pad_a, pad_b))
    if merge_fn is None:
        raise ValueError("Trees contain elements at the same locations but no merge "
                         "function was provided")
    return merge_fn(tree_a, tree_b)
