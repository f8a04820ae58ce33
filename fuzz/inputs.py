"""Random inputs a case is made of: tensors (any dtype, 0-d, empty, size-1 dims, transposed,
stepped or expanded views) and Python scalars, each able to build itself in either library
and to print itself as the code that builds it (so every case is its own reproducer)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128")
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64")
# Weighted towards float32 / int64, the everyday dtypes, while still reaching the rest.
DTYPE_WEIGHTS = np.array([4, 3, 2, 2, 3, 6, 3, 3, 12, 5, 2, 2], dtype=float)
DTYPE_WEIGHTS /= DTYPE_WEIGHTS.sum()


def np_dtype(name: str):
    """The NumPy dtype that holds values of ember/torch dtype `name`."""
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


@dataclass(frozen=True)
class Lit:
    """A Python value passed as-is (prints as its repr)."""

    value: object

    def build(self, lib):
        return self.value

    def code(self) -> str:
        return _literal(self.value)


@dataclass(frozen=True)
class DType:
    """A dtype argument, `L.<name>` in either library."""

    name: str

    def build(self, lib):
        return getattr(lib, self.name)

    def code(self) -> str:
        return f"L.{self.name}"


@dataclass(frozen=True)
class Tensor:
    """A tensor: contiguous base values of `dtype`, then an optional view `layout` suffix."""

    values: np.ndarray
    dtype: str
    layout: str = ""

    def build(self, lib):
        dtype = getattr(lib, self.dtype)
        if self.values.size == 0:
            base = lib.zeros(self.values.shape, dtype=dtype)
        else:
            base = lib.tensor(self.values.tolist(), dtype=dtype)
        return eval("base" + self.layout, {"base": base}) if self.layout else base

    def code(self) -> str:
        if self.values.size == 0:
            base = f"L.zeros({tuple(self.values.shape)}, dtype=L.{self.dtype})"
        else:
            base = f"L.tensor({_literal(self.values.tolist())}, dtype=L.{self.dtype})"
        return base + self.layout

    @property
    def shape(self) -> tuple:
        """The shape after the layout view (what the op sees)."""
        return _view_shape(self.values.shape, self.layout)


@dataclass(frozen=True)
class Seq:
    """A list or tuple of other arguments (tensors for cat/stack, ints for shapes)."""

    items: tuple
    kind: str = "list"

    def build(self, lib):
        out = [i.build(lib) for i in self.items]
        return out if self.kind == "list" else tuple(out)

    def code(self) -> str:
        inner = ", ".join(i.code() for i in self.items)
        if self.kind == "tuple":
            return f"({inner},)" if len(self.items) == 1 else f"({inner})"
        return f"[{inner}]"


def _literal(v) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_literal(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, complex):
        return f"complex({_literal(v.real)}, {_literal(v.imag)})"
    return repr(v)


def _view_shape(base: tuple, layout: str) -> tuple:
    shape = list(base)
    if layout.startswith(".transpose("):
        i, j = (int(x) for x in layout[len(".transpose("):-1].split(","))
        shape[i], shape[j] = shape[j], shape[i]
    elif layout == "[..., ::2]":
        shape[-1] = (shape[-1] + 1) // 2
    elif layout.startswith(".expand("):
        shape = [int(x) for x in layout[len(".expand("):-1].split(",") if x.strip()]
    return tuple(shape)


class Gen:
    """Random choices for one case, from its own seeded generator."""

    def __init__(self, seed: int, index: int):
        self.rng = np.random.default_rng([seed, index])

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def int(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def dtype(self, pool=None) -> str:
        if pool is None:
            return DTYPES[int(self.rng.choice(len(DTYPES), p=DTYPE_WEIGHTS))]
        return self.pick(tuple(pool))

    def shape(self, ndim: int | None = None, max_ndim: int = 4) -> tuple:
        if ndim is None:
            ndim = int(self.rng.choice(max_ndim + 1, p=_ndim_p(max_ndim)))
        return tuple(self.size() for _ in range(ndim))

    def size(self) -> int:
        r = self.rng.random()
        return 0 if r < 0.05 else 1 if r < 0.25 else self.int(2, 4)

    def values(self, shape: tuple, dtype: str, lo: float = -3, hi: float = 3) -> np.ndarray:
        rng = self.rng
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if dtype in INTS:
            lo_i = 0 if dtype == "uint8" else int(math.floor(lo))
            return rng.integers(lo_i, int(math.ceil(hi)) + 1, size=shape).astype(dtype)
        if dtype in COMPLEX:
            re = np.round(rng.uniform(lo, hi, shape), 2)
            im = np.round(rng.uniform(lo, hi, shape), 2)
            return (re + 1j * im).astype(dtype)
        v = np.round(rng.uniform(lo, hi, shape), 3)
        if v.size and rng.random() < 0.06:  # a few special values
            flat = v.reshape(-1)
            for _ in range(self.int(1, 2)):
                flat[self.int(0, flat.size - 1)] = self.pick((np.nan, np.inf, -np.inf, 0.0, -0.0))
        return v.astype(np_dtype(dtype))

    def tensor(self, shape: tuple | None = None, dtype: str | None = None, layout: bool = True,
               lo: float = -3, hi: float = 3) -> Tensor:
        """A tensor seen with `shape`; ~30% of the time a non-contiguous view of it."""
        shape = self.shape() if shape is None else tuple(shape)
        dtype = dtype or self.dtype()
        kind = self.pick(("transpose", "step", "expand")) if layout and self.chance(0.3) else ""
        base, view = list(shape), ""
        if kind == "transpose" and len(shape) >= 2:
            i, j = sorted(self.rng.choice(len(shape), 2, replace=False).tolist())
            base[i], base[j] = shape[j], shape[i]
            view = f".transpose({i}, {j})"
        elif kind == "step" and shape:
            base[-1] = 2 * shape[-1]
            view = "[..., ::2]"
        elif kind == "expand" and shape and any(s != 1 for s in shape):
            d = self.pick([k for k, s in enumerate(shape) if s != 1])
            base[d] = 1
            view = f".expand({', '.join(str(s) for s in shape)})"
        return Tensor(self.values(tuple(base), dtype, lo, hi), dtype, view)

    def scalar(self, kind: str | None = None):
        kind = kind or self.pick(("int", "int", "float", "float", "bool", "complex"))
        if kind == "int":
            return Lit(self.int(-3, 3))
        if kind == "float":
            return Lit(self.pick((0.5, -1.5, 2.0, 0.0, -0.25, 3.0, 1e-3)))
        if kind == "bool":
            return Lit(self.chance(0.5))
        return Lit(complex(self.pick((1.0, -0.5)), self.pick((0.5, 2.0))))

    def dim(self, ndim: int, bad: bool = False) -> int:
        """A valid dim of an `ndim`-d tensor (negative half the time), or an out-of-range one."""
        n = max(ndim, 1)
        if bad:
            return self.pick((n, -n - 1, n + 2))
        d = self.int(0, n - 1)
        return d - n if self.chance(0.5) else d


def _ndim_p(max_ndim: int) -> np.ndarray:
    p = np.array([0.15, 0.25, 0.3, 0.2, 0.1][: max_ndim + 1])
    return p / p.sum()


def broadcastable(g: Gen, shape: tuple) -> tuple:
    """A shape that broadcasts with `shape` (fewer dims, or some dims set to 1)."""
    out = [1 if g.chance(0.25) else s for s in shape]
    drop = g.int(0, len(out)) if g.chance(0.3) else 0
    out = out[drop:]
    if not drop and g.chance(0.1):
        out = [g.int(1, 3)] + out  # one more leading dim
    return tuple(out)


def mismatched(g: Gen, shape: tuple) -> tuple | None:
    """A shape that does not broadcast with `shape` (None when `shape` has no dim >= 2)."""
    out = list(shape)
    idx = [k for k, s in enumerate(shape) if s >= 2]
    if not idx:
        return None
    k = g.pick(idx)
    out[k] = shape[k] + 1
    return tuple(out)
