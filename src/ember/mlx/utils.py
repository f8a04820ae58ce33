"""`mlx.utils`: functions over trees (lists, tuples and dicts of arrays or anything)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._listing import listing
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
    items = tree.items() if isinstance(tree, dict) else tree
    # (len first, as MLX: a non-sized argument fails with "object of type ... has no len()")
    if len(items) == 1:
        key, value = next(iter(items))
        if key == "":
            return value
    children: dict = {}
    for path, value in items:
        head, _, rest = path.partition(".")
        children.setdefault(head, []).append((rest, value))
    # a list when every key reads as a distinct int (int() as MLX: "01" and "1" collide,
    # so make a dict); indices missing in between are {}
    try:
        index = {int(k): k for k in children}
    except ValueError:
        index = None
    if index is not None and len(index) == len(children):
        out: list = []
        for i, k in sorted(index.items()):
            out.extend({} for _ in range(i - len(out)))
            out.append(tree_unflatten(children[k]))
        return out
    return {k: tree_unflatten(v) for k, v in children.items()}


def tree_reduce(fn: Callable, tree, initializer=None, is_leaf: Callable | None = None):
    """`fn` folded over the leaves of `tree`, from `initializer` (or the first leaf).

    As MLX's: whenever the running value is None (no initializer yet, or `fn` returned
    None) the next leaf replaces it instead of being passed to `fn`."""
    if is_leaf is not None and is_leaf(tree):
        return tree if initializer is None else fn(initializer, tree)
    if not _trees.is_node(tree):
        return tree if initializer is None else fn(initializer, tree)
    acc = initializer
    for v in (tree.values() if isinstance(tree, dict) else tree):
        acc = tree_reduce(fn, v, acc, is_leaf)
    return acc


def _empty(t) -> bool:
    return _trees.is_node(t) and len(t) == 0


def tree_merge(tree_a, tree_b, merge_fn: Callable | None = None):
    """One tree of two whose leaves sit at different places (or that `merge_fn` joins).

    As MLX's: empty containers and None are absent subtrees, two empty containers must be
    of one type, and two absent leaves at one place (None and None) need `merge_fn`. Dict
    keys come in first-seen order (MLX's come in a set's order, which varies by run)."""
    if _empty(tree_a) and _empty(tree_b):
        if type(tree_a) is not type(tree_b):
            raise ValueError(f"Cannot merge {type(tree_a).__name__} with "
                             f"{type(tree_b).__name__}")
        return type(tree_a)()
    a = None if _empty(tree_a) else tree_a
    b = None if _empty(tree_b) else tree_b
    if a is None and b is not None:
        return b
    if a is not None and b is None:
        return a
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        n = max(len(a), len(b))
        pad_a = list(a) + [None] * (n - len(a))
        pad_b = list(b) + [None] * (n - len(b))
        items = [tree_merge(x, y, merge_fn) for x, y in zip(pad_a, pad_b)]
        return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
    if isinstance(a, dict) and isinstance(b, dict):
        keys = list(a) + [k for k in b if k not in a]
        return {k: tree_merge(a.get(k), b.get(k), merge_fn) for k in keys}
    if merge_fn is None:
        raise ValueError("Trees contain elements at the same locations but no merge "
                         "function was provided")
    return merge_fn(a, b)


__dir__ = listing(globals(), ("Any", "Callable", "tree_map"))  # (MLX lists these too)
