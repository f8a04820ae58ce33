"""torch.backends.opt_einsum: whether einsum plans a contraction path for three or more
operands.

PyTorch plans one (with the opt_einsum package) when that package is installed and
`enabled`, and contracts left to right otherwise: which of the two a program gets depends
on the environment, and with it the result's strides, its backward nodes and its rounding.
ember plans with its own search (ops/einsum.py, opt_einsum's choices on every case
tested) under the same condition, so that it takes the route PyTorch would take here. It
never imports the package: it asks only whether it is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache


@lru_cache
def is_available() -> bool:
    """Whether the opt_einsum package is installed (PyTorch then plans einsum's paths)."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum() -> None:
    """The opt_einsum package PyTorch would use: ember plans on its own, so None."""
    return None


enabled = is_available()
strategy = "auto" if is_available() else None


def plans() -> bool:
    """Whether einsum of three or more operands follows a planned path."""
    return enabled and is_available()


def _set_enabled(value: bool) -> None:
    global enabled
    if value and not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. torch.einsum will fall back to "
            "contracting from left to right. To enable this optimal path calculation, please "
            "install opt-einsum.")
    enabled = value


def _set_strategy(value: str) -> None:
    global strategy
    bypass = ("torch.einsum will bypass path calculation and simply contract from left to "
              "right.")
    if not is_available():
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {value} will "
                         f"not be meaningful. {bypass} Please install opt_einsum or unset "
                         "`strategy`.")
    if not enabled:
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {value} will "
                         f"not be meaningful. {bypass} Please set `enabled` to `True` as well "
                         "or unset `strategy`.")
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError("`strategy` must be one of the following: [auto, greedy, optimal] but "
                         f"is {value}")
    strategy = value


def set_flags(_enabled=None, _strategy=None) -> tuple:
    """Set the flags that are given (checked as PyTorch checks them); the previous ones."""
    before = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return before


@contextmanager
def flags(enabled=None, strategy=None) -> Iterator[None]:
    """`with flags(strategy="greedy"):` the flags for the block, restored after it."""
    before = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*before)
