"""`Tensor.apply_`, `map_` and `map2_`: a Python callable run on every element, in place.

Slow by nature (one Python call per element, as in PyTorch, which documents them as
CPU-only and slow); kept for the programs that use them. Each element reaches the callable
as a Python number of the tensor's kind, and each result is read back as PyTorch reads it
(a float truncates into an integer tensor, a float past float32's range becomes inf).
"""

from __future__ import annotations

import operator

import numpy as np

from .._grad_mode import no_grad
from .._tensor import Tensor
from ._arg_parser_text import need_tensor
from ._common import type_name


def _refuse_grad(t: Tensor, name: str) -> None:
    if t.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _typename(t: Tensor) -> str:
    return f"torch.{type_name(t.dtype)}Tensor"


def _same_type(name: str, self: Tensor, other, arg: str, position: int, quoted: str) -> Tensor:
    need_tensor(other, name, arg, position + 1, method=True)
    if other.dtype is not self.dtype:
        raise TypeError(f"{name}: expected {_typename(self)} for {quoted} (got "
                        f"{_typename(other)})")
    return other.expand(self.shape)


def _reader(t: Tensor):
    """How a callable's result becomes an element of t's dtype (PyTorch's unpacking)."""
    d = t.dtype
    if d.is_complex:
        return complex
    if d.is_floating_point:
        def real(v):
            if isinstance(v, (complex, str)) or not hasattr(v, "__float__"):
                raise TypeError(f"must be real number, not {type(v).__name__}")
            return float(v)
        return real
    if d.name == "bool":
        return bool

    def integer(v):
        v = int(v) if isinstance(v, float) else operator.index(v)
        if not -(2 ** 63) <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        return v
    return integer


def _run(self: Tensor, fn, operands: list[Tensor]) -> Tensor:
    read = _reader(self)
    columns = [o.reshape(-1).tolist() for o in [self, *operands]]
    out = [read(fn(*args)) for args in zip(*columns)]
    values = np.array(out, dtype=object)
    from .creation import tensor

    with no_grad():
        if self.dtype.is_floating_point:
            with np.errstate(over="ignore"):  # (a float past the dtype's range is inf)
                values = values.astype(np.float64).astype(self.dtype.np)
        elif not self.dtype.is_complex and self.dtype.name != "bool":
            values = np.array([v & 0xFFFFFFFFFFFFFFFF for v in out], np.uint64)
            values = values.view(np.int64).astype(self.dtype.np)  # (wraps, as C's cast)
        self.copy_(tensor(values.reshape(self.shape) if values.size else values,
                          dtype=self.dtype))
    return self


def apply_(self: Tensor, callable) -> Tensor:
    """self[i] = callable(self[i]) for every element, in place."""
    _refuse_grad(self, "apply_")
    return _run(self, callable, [])


def map_(self: Tensor, other: Tensor, callable) -> Tensor:
    """self[i] = callable(self[i], other[i]), other broadcast to self's shape."""
    _refuse_grad(self, "map_")
    o = _same_type("map_", self, other, "other", 1, "'other'")
    return _run(self, callable, [o])


def map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self's shape."""
    _refuse_grad(self, "map2_")
    xs = _same_type("map2_", self, x, "x", 1, "argument 'x'")
    ys = _same_type("map2_", self, y, "y", 2, "argument 'y'")
    return _run(self, callable, [xs, ys])


__all__: list[str] = []
TENSOR_METHODS = {"apply_": apply_, "map_": map_, "map2_": map2_}
