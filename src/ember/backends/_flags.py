"""Backend flags as module attributes that check what is assigned, as PyTorch's do
(`torch.backends.cudnn.benchmark = 1` raises): a module's class is swapped for one with a
property per flag, reading and writing the module's own dict of values."""

from __future__ import annotations

import sys
import types


def _flag(name: str, setter: str, values: dict) -> property:
    def get(self) -> bool:
        return values[name]

    def put(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        values[name] = value

    return property(get, put, doc=f"The `{name}` flag (a bool).")


def bool_flags(module_name: str, values: dict, setters: dict[str, str]) -> None:
    """Make each of `setters` (flag -> the name PyTorch's refusal gives its setter) an
    attribute of module `module_name` that reads `values` and refuses non-bools."""
    module = sys.modules[module_name]
    body = {name: _flag(name, setter, values) for name, setter in setters.items()}
    module.__class__ = type("FlagModule", (types.ModuleType,), body)
