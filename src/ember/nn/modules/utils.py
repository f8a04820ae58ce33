"""Helpers PyTorch keeps in `torch.nn.modules.utils`: argument tuples for conv/pool
layers, and renaming a data-parallel checkpoint's keys for a plain model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function that turns `x` into an n-tuple (an iterable is taken as it is)."""

    def parse(x) -> tuple:
        return tuple(x) if isinstance(x, Iterable) else (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """`t` reversed with each element repeated `n` times (conv padding -> `F.pad` order)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None taken from the input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[len(defaults) - len(out_size):]
    return [d if v is None else v for v, d in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Remove `prefix` (e.g. DataParallel's "module.") from every key that has it, in place,
    and from the keys of the dict's `_metadata` (the prefix's own entry becomes the root's)."""
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is None:
        return
    for key in list(meta):
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            meta[key[len(prefix):]] = meta.pop(key)
