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
