"""`mx.array`'s methods: each is the `mx` function of the same name, array first."""

from __future__ import annotations

from . import _ops
from ._array import _wrap, array

_SAME = ("abs", "all", "any", "argmax", "argmin", "cos", "cummax", "cummin", "cumprod",
         "cumsum", "diag", "diagonal", "exp", "flatten", "log", "log10", "log1p", "log2",
         "logsumexp", "max", "mean", "min", "moveaxis", "prod", "reciprocal", "round",
         "rsqrt", "sin", "split", "sqrt", "square", "squeeze", "std", "sum", "swapaxes", "var")


def _shape_args(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return tuple(args[0])
    return tuple(args)


def _reshape(self, *shape, stream=None) -> array:
    return _ops.reshape(self, _shape_args(shape))


def _transpose(self, *axes, stream=None) -> array:
    return _ops.transpose(self, _shape_args(axes) or None)


def _conj(self) -> array:
    return _wrap(self._t.conj().resolve_conj(), self._dtype) if self._dtype.kind == "c" \
        else self


def _mT(self) -> array:
    return _ops.swapaxes(self, -1, -2)


def install() -> None:
    for name in _SAME:
        setattr(array, name, getattr(_ops, name))
    array.reshape = _reshape
    array.transpose = _transpose
    array.conj = _conj
    array.mT = property(_mT)
