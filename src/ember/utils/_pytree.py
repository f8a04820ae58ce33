"""Nested containers of tensors ("pytrees"), flattened to a list of leaves and back.

Tuples, lists, dicts (keys in insertion order) and namedtuples are nodes; anything else,
None included, is a leaf. This is what the function transforms use to accept and return
structures of tensors, with the names `torch.utils._pytree` gives them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TreeSpec:
    """The shape of a pytree without its leaves: a node type, its context (dict keys or
    the namedtuple class) and one spec per child; a leaf's spec has type None."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type_, context=None, children: tuple = ()) -> None:
        self.type = type_
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        return 1 if self.type is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children) == (
            other.type, other.context, other.children)

    def __hash__(self) -> int:
        return hash((self.type, self.children))

    def __repr__(self) -> str:
        if self.type is None:
            return "*"
        return f"{self.type.__name__}({', '.join(map(repr, self.children))})"


LEAF = TreeSpec(None)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """`(leaves, spec)`: the leaves in order, and the structure to rebuild the tree."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec(type(tree), keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if _is_namedtuple(tree):
        return TreeSpec(type(tree), type(tree), tuple(_flatten(v, leaves) for v in tree))
    if isinstance(tree, (tuple, list)):
        return TreeSpec(type(tree), None, tuple(_flatten(v, leaves) for v in tree))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec) -> Any:
    """The tree of structure `spec` holding `leaves` in order."""
    it = iter(leaves)
    tree = _unflatten(it, spec)
    if next(it, _END) is not _END:
        raise ValueError(f"tree_unflatten: too many leaves for the spec {spec!r}")
    return tree


_END = object()


def _unflatten(it, spec: TreeSpec):
    if spec.type is None:
        leaf = next(it, _END)
        if leaf is _END:
            raise ValueError("tree_unflatten: too few leaves for the spec")
        return leaf
    children = [_unflatten(it, c) for c in spec.children]
    if issubclass(spec.type, dict):
        return spec.type(zip(spec.context, children))
    if spec.context is not None:  # a namedtuple
        return spec.type(*children)
    return spec.type(children)


def tree_leaves(tree: Any) -> list:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable, tree: Any, *rests: Any) -> Any:
    """`fn` applied to each leaf (and the matching leaves of `rests`, same structure)."""
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rests]
    return tree_unflatten([fn(x, *xs) for x, *xs in zip(leaves, *others)], spec)


def tree_structure(tree: Any) -> TreeSpec:
    return tree_flatten(tree)[1]


__all__ = ["TreeSpec", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
           "tree_unflatten"]
