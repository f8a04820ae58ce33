"""Padding layers: constant, zero, reflection, replication and circular, 1-d to 3-d."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


def _ntuple(n: int, x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _n = 2

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(self._n, padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 2


class ConstantPad2d(_ConstantPadNd):
    _n = 4


class ConstantPad3d(_ConstantPadNd):
    _n = 6


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode, _n = "reflect", 2


class ReflectionPad2d(_PadNd):
    _mode, _n = "reflect", 4


class ReflectionPad3d(_PadNd):
    _mode, _n = "reflect", 6


class ReplicationPad1d(_PadNd):
    _mode, _n = "replicate", 2


class ReplicationPad2d(_PadNd):
    _mode, _n = "replicate", 4


class ReplicationPad3d(_PadNd):
    _mode, _n = "replicate", 6


class CircularPad1d(_PadNd):
    _mode, _n = "circular", 2


class CircularPad2d(_PadNd):
    _mode, _n = "circular", 4


class CircularPad3d(_PadNd):
    _mode, _n = "circular", 6
