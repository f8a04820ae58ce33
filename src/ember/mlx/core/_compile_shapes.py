"""A shapeless `mx.compile` trace called at other shapes: which traces may replay their graph
as recorded, and how the others are traced again so that the new graph holds what MLX's
would.

MLX's graph keeps the numbers its ops derive from shapes symbolic (a mean's 1/n is a
NumberOfElements node, `reshape(-1)` infers its size at each call), while the numbers
Python computes from `a.shape` (the user's, and mlx.nn's, which is Python in MLX too) are
constants of the trace. ember's graph records both as plain values. So a trace is "bound"
when something in it may follow the traced shapes: a node param that can encode a size (a
view's size, a slice's bounds, a concatenation's sizes: every param not known to be
shape-free), or a constant an op made from a shape (a mean's 1/n, `zeros_like`'s zeros:
`shape_derived` marks them). A bound trace is traced again at each new set of shapes, its
prints silenced, with every shape that Python outside `mlx.core` reads (`.shape`, `.size`,
`.nbytes`, `len()`) answered as the first trace answered it, in the same order
(`ShapeReads`): the ops see the new shapes and the Python the traced ones, as in MLX.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ...graph.ir import Scalar, Value
from ._array import array

# params whose values never encode an input's size (an axis, a flag, an op's own constant);
# a node with any other param is taken to depend on the traced shapes
SHAPE_FREE_PARAMS = frozenset({
    "dim", "dims", "keepdim", "largest", "op", "dtype", "contiguous", "descending",
    "stable", "log", "decimals", "test", "dim0", "dim1", "ignore_index", "reduction",
    "own", "lower", "diagonal", "eps", "k", "dilation", "groups", "padding", "stride",
    "channels_last", "shifts", "value", "approximate", "alpha", "beta", "negative_slope",
    "min", "max", "exponent", "rounding_mode", "transpose", "transposed"})


class _Made(threading.local):
    held: list | None = None  # the shape-derived constants made while a trace runs


_made = _Made()


def shape_derived(x):
    """Mark tensor or array `x` (made by an op from an array's shape, not by the user's
    Python) as values a shapeless trace must make again at other shapes; `x` itself back."""
    held = _made.held
    if held is not None:
        held.append(getattr(x, "_t", x))
    return x


class _Refusals:
    """What a shapeless trace found that MLX refuses, and the exception being handled
    around it when it began (so `finish` can tell an ending trace's own error from it)."""

    def __init__(self, refuse: bool = True) -> None:
        self.refuse = refuse
        self.outer = sys.exc_info()[1]
        self.primitive: str | None = None


def no_output_shapes(primitive: str) -> None:
    """Note an op whose MLX primitive cannot say its output shapes from its inputs' (Slice,
    FFT, RandomBits, the factorisations...) in the shapeless `mx.compile` trace running:
    MLX refuses such a graph once traced, naming its first such primitive (`finish`)."""
    held = _made.held
    if held is not None and held[0].primitive is None:
        held[0].primitive = primitive


def start(refuse: bool = True) -> list | None:
    """Begin collecting `shape_derived` tensors for a trace (refusing at its end what MLX
    cannot give output shapes for, if `refuse`); the previous collector back."""
    prev = _made.held
    _made.held = [_Refusals(refuse)]
    return prev


def finish(prev: list | None) -> set:
    """The ids of the tensors collected since `start` (the collector `prev` restored).
    A trace that ended without an error of its own but holds an op MLX cannot give output
    shapes for raises MLX's ValueError here."""
    refusals, *held = _made.held or [_Refusals()]
    _made.held = prev
    if refusals.refuse and refusals.primitive is not None and (
            sys.exc_info()[1] is refusals.outer):
        raise refusal(f"[Primitive::output_shapes] {refusals.primitive} cannot infer output "
                      "shapes.")
    return {id(t) for t in held}


def refusal(message: str) -> ValueError:
    """MLX's ValueError for a refused shapeless graph, marked (`is_refusal`) so the compile
    cache can keep it: MLX caches the trace and refuses each later call without running
    the function again (so its draws take no more keys)."""
    error = ValueError(message)
    error.shapeless_refusal = True
    return error


def is_refusal(error: BaseException) -> bool:
    return getattr(error, "shapeless_refusal", False)


def is_bound(plan) -> bool:
    """Whether `plan`'s graph may hold numbers of the traced shapes (see the module
    docstring): a node param not known to be shape-free, a constant argument of a node
    that is a number or a tuple, a constant marked shape-derived, or a constant with the
    shape of an argument."""
    g = plan.graph
    if g is None:
        return False
    for n in g.nodes:
        for k in n.static_params():
            if k not in SHAPE_FREE_PARAMS and k != "fn":
                return True
        for a in n.args:
            if a.__class__ is not Value and a.__class__ is not Scalar and isinstance(
                    a, int | tuple | list) and not isinstance(a, bool):
                return True
    shapes = {tuple(s) for s in plan.shapes}
    for (kind, v), derived in zip(plan.sources, plan.follow):
        if kind == "const" and (derived or (np.ndim(v) and tuple(np.shape(v)) in shapes)):
            return True
    return False


# -- the shapes Python reads while a shapeless trace runs ----------------------------------

_CORE = __name__.rsplit(".", 1)[0] + "."  # (ember.mlx.core.: MLX's C++ side)


class _Reads(threading.local):
    log: ShapeReads | None = None


_reads = _Reads()


class ShapeReads:
    """The shapes read outside `mlx.core` during a trace, in order: recorded by the first
    trace (`replay=None`), answered from a recording by a later one."""

    def __init__(self, replay: list | None = None) -> None:
        self.values: list = [] if replay is None else replay
        self.replay = replay is not None
        self.at = 0

    def read(self, kind: str, real):
        if not self.replay:
            self.values.append((kind, real))
            return real
        if self.at < len(self.values) and self.values[self.at][0] == kind:
            self.at += 1
            return self.values[self.at - 1][1]
        return real  # (a read the first trace did not make: its Python went another way)

    def __enter__(self) -> ShapeReads:
        self.prev = _reads.log
        _reads.log = self
        if _installed[0] == 0:
            _install()
        _installed[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _installed[0] -= 1
        if _installed[0] == 0:
            _uninstall()
        _reads.log = self.prev


_installed = [0]
_saved: dict = {}


def _answer(kind: str, real):
    """`real`, or, read from Python outside `mlx.core` while a trace logs, the logged
    answer."""
    log = _reads.log
    if log is None or sys._getframe(2).f_globals.get("__name__", "").startswith(_CORE):
        return real
    return log.read(kind, real)


def _shape(self) -> tuple:
    return _answer("shape", tuple(self._t.shape))


def _size(self) -> int:
    return _answer("size", self._t.numel())


def _nbytes(self) -> int:
    return _answer("nbytes", self._t.numel() * self._dtype.size)


def _len(self) -> int:
    if self._t.dim() == 0:
        raise TypeError("len() 0-dimensional array.")
    return _answer("len", self._t.shape[0])


def _install() -> None:
    """Answer `array`'s shape reads through the log (class attributes swapped only while a
    shapeless trace runs, so other code reads shapes at their usual cost)."""
    for name, fn in (("shape", property(_shape)), ("size", property(_size)),
                     ("nbytes", property(_nbytes)), ("__len__", _len)):
        _saved[name] = array.__dict__[name]
        setattr(array, name, fn)


def _uninstall() -> None:
    for name, fn in _saved.items():
        setattr(array, name, fn)
    _saved.clear()
