"""torch.utils.deterministic: whether deterministic mode also fills the memory that `empty`,
`empty_like`, `new_empty`, `empty_strided` and a growing `resize_` hand out (NaN, or an
integer dtype's largest value), so that a program reading it by mistake reads the same
values every run. The flag lives below the op layer (`ember._algorithms`); this module is
its public face, a module attribute that reads and writes it."""

from __future__ import annotations

import sys
import types

from .. import _algorithms


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Fill uninitialised memory when `use_deterministic_algorithms(True)` (default True)."""
        return _algorithms.deterministic["fill"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _algorithms.deterministic["fill"] = mode


sys.modules[__name__].__class__ = _Deterministic
