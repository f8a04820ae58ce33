"""MLX's function export: `export_function`, `exporter` (a `FunctionExporter`) and
`import_function`, on ember's `mx.compile` tracing.

Exporting traces `fun` once per call signature exactly as `mx.compile` does (arrays read
that are not arguments, as closed-over weights or a random draw, are constants of the
trace) and writes the recorded graph to the file as data: ember's own format (MLX's
binary `.mlxfn` layout is not read or written), see `_export_file`. Importing reads that
data back into ember's graph IR and returns a function that picks the trace matching its
arguments and runs the graph node by node through the primitives' kernels, looked up by
name: nothing in a file is executed or unpickled.

The rules a user sees are MLX's: inputs are positional and keyword arrays, or one tuple
(or list) of arrays and/or one dict of them; keyword inputs are stored sorted by name; a
call matches a trace with as many inputs, every keyword the trace has, and each input's
dtype and shape (with `shapeless=True`, its number of dims); the result is a tuple of
arrays. The file name is used as given (no suffix is added). The file is created when
the exporter is made and rewritten after each trace.

NOTE: where MLX's graph recomputes shape-derived numbers at each call of a shapeless trace
(a mean's divisor, a reshape's size), ember's holds the traced ones; a shapeless trace that
recorded any (found by tracing again at other shapes) refuses calls at other shapes.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

import numpy as np

from ..._tensor import _wrap as _tensor_of
from ...graph.ir import Scalar, Value, freeze
from . import _lazy
from . import random as _random
from ._array import _wrap, array
from ._binding import bad_call
from ._compile import _EAGER, _Compiled, _Slot
from ._export_file import load_traces, save_traces
from ._nb_types import nb_func

_INPUTS = ("Inputs can either be a variable number of positional and keyword arrays or a "
           "single tuple and/or dictionary of arrays.")
_OUTPUTS = ("[export_function] Outputs can be either a single array, a tuple, or a list of "
            "arrays.")
_TWICE = ("[export_function] Attempting to export a function twice with the same signature "
          "is not allowed.")
_CLOSED = "[export_function] Attempting to write after exporting is closed."

_EXPORT_SIG = ("export_function(file_or_callback: str | Callable, fun: Callable, *args, "
               "shapeless: bool = False, metadata: str | None = None, **kwargs) -> None")
_EXPORTER_SIG = ("exporter(file: str, fun: collections.abc.Callable, *, shapeless: bool = "
                 "False, metadata: str | None = None) -> mlx.core.FunctionExporter")
_IMPORT_SIG = ("import_function(file: str, return_metadata: bool = False) -> Callable | "
               "tuple[Callable, str]")


# -- the inputs of a call, as MLX's binding takes them ---------------------------------------

def _array_seq(v) -> list | None:
    if isinstance(v, list | tuple) and all(isinstance(x, array) for x in v):
        return list(v)
    return None


def _array_dict(v) -> dict | None:
    if isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, array)
                                   for k, x in v.items()):
        return dict(v)
    return None


def split_inputs(args: tuple, kwargs: dict, prefix: str) -> tuple[list, dict]:
    """(positional arrays, keyword arrays) of a call: `*arrays, **arrays`, or one tuple (or
    list) of arrays and/or one dict of them; anything else is MLX's ValueError."""
    bad = ValueError(f"{prefix} {_INPUTS}")
    if not args:
        kw = _array_dict(kwargs)
        if kw is None:
            raise bad
        return [], kw
    if isinstance(args[0], array):
        pos, kw = _array_seq(args), _array_dict(kwargs)
        if pos is None or kw is None:
            raise bad
        return pos, kw
    if kwargs or len(args) > 2:
        raise bad
    if len(args) == 1:
        pos = _array_seq(args[0])
        if pos is not None:
            return pos, {}
        kw = _array_dict(args[0])
        if kw is None:
            raise bad
        return [], kw
    pos, kw = _array_seq(args[0]), _array_dict(args[1])
    if pos is None or kw is None:
        raise bad
    return pos, kw


def _show_shape(shape: tuple) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def _describe(arrays: list, keys: list) -> list[str]:
    """MLX's lines for a call's inputs: `1: (3) float32`, `"w": () float32`."""
    n = len(arrays) - len(keys)
    return [(f"{i + 1}" if i < n else f'"{keys[i - n]}"') +
            f": {_show_shape(a.shape)} {a.dtype.name}" for i, a in enumerate(arrays)]


class _Table:
    """The traces of one function, by number of inputs then in the order exported (MLX's
    FunctionTable), and the match of a call against them."""

    def __init__(self, shapeless: bool) -> None:
        self.shapeless = shapeless
        self.traces: list = []  # Trace objects (see _export_file), in export order

    def ordered(self) -> list:
        """MLX's order: grouped by number of inputs, the groups last made first (its table
        is an unordered map), each group in export order."""
        counts = list(dict.fromkeys(len(t.inputs) for t in self.traces))
        rank = {n: -i for i, n in enumerate(counts)}
        return sorted(self.traces, key=lambda t: rank[len(t.inputs)])  # (stable)

    def matches(self, trace, pos: list, kw: dict) -> bool:
        if len(trace.inputs) != len(pos) + len(kw):
            return False
        if any(k not in kw for k in trace.kwarg_keys):
            return False
        for a, (shape, dtype) in zip(pos + [kw[k] for k in sorted(kw)], trace.inputs):
            if a.dtype.name != dtype:
                return False
            if (a.ndim != len(shape)) if self.shapeless else (tuple(a.shape) != shape):
                return False
        return True

    def find(self, pos: list, kw: dict):
        for t in self.ordered():
            if self.matches(t, pos, kw):
                return t
        return None

    def no_match(self, pos: list, kw: dict) -> ValueError:
        lines = ["[import_function::call] No imported function found which matches the "
                 "given positional and keyword arguments. Possible functions include:"]
        for i, t in enumerate(self.ordered()):
            npos = len(t.inputs) - len(t.kwarg_keys)
            lines.append(f" {i + 1}. Function with {npos} positional inputs and "
                         f"{len(t.kwarg_keys)} keyword inputs:")
            n = npos
            for j, (shape, dtype) in enumerate(t.inputs):
                name = f"{j + 1}" if j < n else f'"{t.kwarg_keys[j - n]}"'
                lines.append(f"   {name}: {_show_shape(shape)} {dtype}")
        # (MLX's keyword map is unordered; for a few names it lists them last given first)
        keys = list(reversed(kw))
        lines += ["", f"Called with {len(pos)} positional inputs and {len(kw)} keyword "
                  "inputs:"]
        lines += ["  " + s for s in _describe(pos + [kw[k] for k in keys], keys)]
        return ValueError("\n".join(lines) + "\n")


# -- exporting ------------------------------------------------------------------------------

class FunctionExporter:
    """A context managing class for exporting multiple traces of the same function to a
    file. Make one with `mx.exporter`."""

    def __init__(self, file: str, fun: Callable, shapeless: bool, metadata: str | None
                 ) -> None:
        self._file = file
        self._fun = fun
        self._table = _Table(shapeless)
        self._metadata = metadata
        self._closed = False
        self._write()  # (MLX opens the file, and writes its header, here)

    def _write(self) -> None:
        try:
            save_traces(self._file, self._table.shapeless, self._metadata, self._table.traces)
        except OSError:
            raise RuntimeError(f"[export_function] Failed to open {self._file}") from None

    def __call__(self, *args, **kwargs) -> None:
        pos, kw = split_inputs(args, kwargs, "[export_function]")
        if self._closed:
            raise RuntimeError(_CLOSED)
        if any(self._table.matches(t, pos, kw) for t in self._table.traces):
            raise RuntimeError(_TWICE)
        self._table.traces.append(_trace(self._fun, pos, kw, self._table.shapeless))
        self._write()

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> FunctionExporter:
        return self

    def __exit__(self, exc_type=None, exc_value=None, traceback=None) -> None:
        self.close()


FunctionExporter.__module__ = "mlx.core"


def _given(**named) -> dict:
    """The keywords a call gave that are not their defaults (as the binding lists them)."""
    defaults = {"shapeless": False, "metadata": None, "return_metadata": False}
    return {k: v for k, v in named.items() if v is not defaults[k]}


def _check_flags(shapeless, metadata) -> bool:
    return isinstance(shapeless, bool) and (metadata is None or isinstance(metadata, str))


def exporter(file: str, fun: Callable, *, shapeless: bool = False,
             metadata: str | None = None) -> FunctionExporter:
    """A `FunctionExporter` writing traces of `fun` to `file` (one per call of it)."""
    if not isinstance(file, str) or not callable(fun) or not _check_flags(shapeless, metadata):
        raise bad_call("exporter", _EXPORTER_SIG, (file, fun),
                       _given(shapeless=shapeless, metadata=metadata))
    return FunctionExporter(file, fun, shapeless, metadata)


def export_function(file_or_callback, fun: Callable, *args, **kwargs) -> None:
    """Trace `fun` on the example arrays (`*args, **kwargs`, or a tuple and/or dict of
    them) and write the trace to the file. Keywords `shapeless` (bool) and `metadata` (a
    string read back by `import_function(..., return_metadata=True)`) are the options.

    NOTE: MLX's callback form (a callable instead of a path, receiving MLX's graph as
    dicts) is not supported: ember's graph is not MLX's, so it refuses one."""
    given = dict(kwargs)
    shapeless = kwargs.pop("shapeless", False)
    metadata = kwargs.pop("metadata", None)
    if not callable(fun) or not _check_flags(shapeless, metadata):
        raise bad_call("export_function", _EXPORT_SIG, (file_or_callback, fun, *args), given)
    if not isinstance(file_or_callback, str):
        if not callable(file_or_callback):
            raise RuntimeError("std::bad_cast")
        if metadata is not None:
            raise ValueError("[export_function] The metadata argument is only supported "
                             "when exporting to a file, not when using a callback.")
        raise NotImplementedError("[export_function] ember does not support exporting to "
                                  "a callback; give a file path.")
    pos, kw = split_inputs(args, kwargs, "[export_function]")  # (before the file is made)
    ex = exporter(file_or_callback, fun, shapeless=shapeless, metadata=metadata)
    try:
        ex(pos, kw)
    finally:
        ex.close()


def _flat_fun(fun: Callable, npos: int, keys: list) -> Callable:
    """`fun` over one flat list of arrays (positional, then keywords by sorted name),
    refusing what MLX refuses as outputs."""

    def flat(*arrays):
        out = fun(*arrays[:npos], **dict(zip(keys, arrays[npos:])))
        if isinstance(out, array):
            return [out]
        if isinstance(out, list | tuple) and all(isinstance(o, array) for o in out):
            return list(out)
        raise ValueError(_OUTPUTS)

    return flat


def _plan(fun: Callable, inputs: list, npos: int, keys: list, shapeless: bool):
    """`fun` traced on `inputs` by `mx.compile`'s machinery: its replayable plan."""
    _lazy.evaluate("mx.compile")
    compiled = _Compiled(_flat_fun(fun, npos, keys), None, None, shapeless)
    compiled.refuse = False  # (MLX exports what its shapeless compile refuses)
    key = ("export",)
    compiled._trace(key, tuple(inputs), {}, inputs, [])
    plan = compiled.plans[key]
    if plan is _EAGER:
        raise RuntimeError("[export_function] ember could not trace this function as one "
                           "graph (it reads a value, or binds an op its tracing does not "
                           "record), so it cannot be exported.")
    return plan


def _structure(plan) -> tuple:
    """What a plan recorded, less the shapes: primitives, params, constant arguments, the
    Python numbers read, and where inputs and outputs come from (constants by shape)."""
    g = plan.graph
    nodes = () if g is None else tuple(
        (n.prim.name, freeze(n.static_params()), tuple(
            ("v", a.id) if a.__class__ is Value else ("s", a.id) if a.__class__ is Scalar
            else freeze(a) for a in n.args)) for n in g.nodes)
    sources = tuple((k, freeze(i)) for k, i in plan.sources)
    returns = tuple((s.kind, freeze(s.index._t._array()) if s.kind == "const" else s.index)
                    for s in plan.returns)
    return nodes, freeze(list(plan.scalars)), sources, returns


def _shape_bound(fun: Callable, inputs: list, npos: int, keys: list, plan, key) -> bool:
    """Whether a shapeless trace recorded numbers that depend on the traced shapes (a
    mean's divisor, a reshape's size, a slice's bounds): `fun` traced again with every
    dimension above 1 one longer (its prints silenced, drawing from the random key `key`
    the first trace drew from, the key left as the first trace left it) records something
    else, or fails.

    NOTE: MLX's graph keeps such numbers symbolic and recomputes them at each shape;
    ember's graph holds them as recorded, so a call at other shapes of such a trace is
    refused (`Trace.run`) instead of computing with the traced shapes' numbers."""
    grown = [mx_zeros(tuple(d + 1 if d > 1 else d for d in a.shape), a) for a in inputs]
    after = _random._state_key()
    _random._set_state_key(key)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            other = _plan(fun, grown, npos, keys, True)
    except Exception:  # noqa: BLE001 - a function that fails at other shapes is bound
        return True
    finally:
        _random._set_state_key(after)
    return _structure(other) != _structure(plan)


def mx_zeros(shape: tuple, like: array) -> array:
    """Zeros of `shape` in `like`'s dtype (a valid index for any gather)."""
    return _wrap(_tensor_of(np.zeros(shape, like._t._array().dtype), like._t.dtype),
                 like._dtype)


def _trace(fun: Callable, pos: list, kw: dict, shapeless: bool):
    """The trace of `fun` on these inputs, as the data the file holds."""
    from ._export_file import Trace

    keys = sorted(kw)
    inputs = pos + [kw[k] for k in keys]
    key = _random._state_key()
    plan = _plan(fun, inputs, len(pos), keys, shapeless)
    returns = []
    for s in plan.returns:
        if not isinstance(s, _Slot):  # pragma: no cover - outputs are arrays (checked)
            raise ValueError(_OUTPUTS)
        if s.kind == "out":
            returns.append(("out", s.index, s.dtype.name, s.tensor_dtype.name))
        elif s.kind == "arg":
            returns.append(("arg", s.index))
        else:
            a = s.index
            returns.append(("const", np.array(a._t._array(), order="C"), a._dtype.name,
                            a._t.dtype.name))
    bound = shapeless and _shape_bound(fun, inputs, len(pos), keys, plan, key)
    return Trace(keys, [(tuple(a.shape), a.dtype.name) for a in inputs], plan.graph,
                 list(plan.sources), list(plan.scalars), returns, bound)


# -- importing ------------------------------------------------------------------------------

def import_function(file: str, return_metadata: bool = False):
    """The function exported to `file`: called with arrays (as `export_function` took
    them), it runs the matching trace and returns a tuple of arrays."""
    if not isinstance(file, str) or not isinstance(return_metadata, bool):
        raise bad_call("import_function", _IMPORT_SIG, (file,),
                       _given(return_metadata=return_metadata))
    shapeless, metadata, traces = load_traces(file)
    table = _Table(shapeless)
    table.traces = traces

    def call(*args, **kwargs) -> tuple:
        pos, kw = split_inputs(args, kwargs, "[import_function::call]")
        trace = table.find(pos, kw)
        if trace is None:
            raise table.no_match(pos, kw)
        return tuple(trace.run(pos + [kw[k] for k in sorted(kw)]))

    imported = nb_func(call, "(*args, **kwargs) -> tuple")
    if return_metadata:
        return imported, metadata or ""
    return imported


__all__ = ["FunctionExporter", "export_function", "exporter", "import_function"]
