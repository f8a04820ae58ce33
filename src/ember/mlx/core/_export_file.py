"""ember's file format for exported MLX functions, and the run of an imported trace.

A file is, in order: the magic bytes `EMBER-MLXFN\\0`, the format version (uint32, little
endian), the header's length (uint64), the header (UTF-8 JSON) and the data section (raw
bytes). The header holds the traces as data: for each, its keyword names, its inputs'
shapes and dtypes, and its graph (ember's IR: each node's primitive by name, its params
and constant arguments as tagged JSON values, and its outputs' shapes, dtypes and
strides); constant arrays (closed-over weights, a random draw made while tracing) are
entries of a blob table pointing into the data section. Reading parses JSON and copies
bytes: it never evaluates or unpickles anything, refuses a file that is not this format
(or is truncated, or names a primitive ember lacks) with a RuntimeError, and an imported
trace runs node by node through the primitives' own kernels, each view a node makes checked
to lie inside the memory it views. (The kernels trust their parameters as they trust
ember's own graphs: import files you or your tools exported, as with MLX's own format.)
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from ... import _dtype as _e
from ..._core.dispatch import run_quiet
from ..._core.primitive import Family, Member, Primitive, primitives
from ..._tensor import Size
from ..._tensor import _wrap as _tensor_of
from ...graph.ir import Graph, Node, Scalar, Value
from ...graph.passes import live_nodes
from ...graph.program import kernel_of
from ...ops.registry import InplacePrimitive
from . import _dtypes as D
from ._array import _wrap

MAGIC = b"EMBER-MLXFN\x00"
VERSION = 1
_FORMAT = "ember.mlx.export_function"


class Trace:
    """One exported trace: keyword names (sorted), inputs as (shape, MLX dtype name), the
    graph, where each graph input comes from (("arg", i) or ("const", ndarray)), the
    Python numbers the graph reads, and where each returned array comes from."""

    def __init__(self, kwarg_keys: list, inputs: list, graph: Graph | None, sources: list,
                 scalars: list, returns: list, shape_bound: bool = False) -> None:
        self.kwarg_keys = list(kwarg_keys)
        self.inputs = [(tuple(s), d) for s, d in inputs]
        self.graph = graph
        self.sources = sources
        self.scalars = scalars
        self.returns = returns
        self.shape_bound = shape_bound  # (shapeless, but recorded numbers of its shapes)
        self._nodes = None

    def run(self, arrays: list) -> list:
        """The trace's outputs for these input arrays (matched to it by the caller)."""
        if self.shape_bound and any(tuple(a.shape) != s for a, (s, _) in
                                    zip(arrays, self.inputs)):
            raise ValueError(
                "[import_function::call] ember cannot run this shapeless trace at other "
                "input shapes: it recorded numbers that depend on the traced shapes (a "
                "mean's divisor, a reshape's size or a slice's bounds). Export a trace for "
                "these shapes.")
        outs: list = []
        if self.graph is not None:
            data = [_c_order(arrays[i]._t._array()) if kind == "arg" else i
                    for kind, i in self.sources]
            outs = run_quiet(self._interpret, data)
        result = []
        for r in self.returns:
            if r[0] == "out":
                a = outs[r[1]]
                if not a.flags.owndata or not a.flags.c_contiguous:
                    a = np.array(a, order="C")  # (not a view of an input or of another out)
                result.append(_wrap(_tensor_of(a, _e.BY_NAME[r[3]]), D._by_name(r[2])))
            elif r[0] == "arg":
                result.append(arrays[r[1]])
            else:
                result.append(_wrap(_tensor_of(r[1].copy(), _e.BY_NAME[r[3]]),
                                    D._by_name(r[2])))
        return result

    def _interpret(self, data: list) -> list:
        g = self.graph
        if self._nodes is None:
            self._nodes = live_nodes(g)
        env = dict(zip(g.inputs, data))
        scalars = self.scalars

        def get(a):
            c = a.__class__
            return env[a] if c is Value else scalars[a.id] if c is Scalar else a

        for n in self._nodes:
            kernel, params = kernel_of(n)
            params = {k: scalars[v.id] if v.__class__ is Scalar else v
                      for k, v in params.items()}
            res = kernel(*[get(a) for a in n.args], **params)
            for r in (res,) if len(n.outs) == 1 else res:
                _within_base(r)
            if len(n.outs) == 1:
                env[n.outs[0]] = res
            elif n.outs:
                for o, r in zip(n.outs, res, strict=True):
                    env[o] = r
        return [env[v] for v in g.outputs]


_byte_bounds = getattr(np.lib, "array_utils", np).byte_bounds  # (moved in NumPy 2)


def _within_base(a) -> None:
    """Refuse a view a node made outside the memory it views (a file's strides or offset
    that lie): checked before anything reads through it."""
    if a.__class__ is not np.ndarray or a.base is None or a.size == 0:
        return
    base, link = a, a.base
    while link is not None:  # (as_strided's views go through a non-array holder)
        if link.__class__ is np.ndarray:
            base = link
        link = getattr(link, "base", None)
    lo, hi = _byte_bounds(a)
    blo, bhi = _byte_bounds(base)
    if lo < blo or hi > bhi:
        raise RuntimeError("[import_function::call] the imported graph makes a view outside "
                           "the array it views: the file is corrupt.")


def _c_order(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else a.copy(order="C")


# -- writing --------------------------------------------------------------------------------

class _Writer:
    """Header values and the data section being built."""

    def __init__(self) -> None:
        self.blobs: list = []
        self.data = bytearray()

    def blob(self, a: np.ndarray, dtype: str, kind: str) -> int:
        a = np.array(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        self.blobs.append([kind, dtype, list(a.shape), len(self.data), a.nbytes])
        self.data += a.tobytes()
        return len(self.blobs) - 1

    def enc(self, v):
        """A param or constant argument as tagged JSON (refusing what is not data)."""
        c = v.__class__
        if v is None or c in (bool, int, str):
            return v
        if c is float:
            return ["f", v.hex()]
        if c is complex:
            return ["c", v.real.hex(), v.imag.hex()]
        if c is Value:
            return ["v", v.id]
        if c is Scalar:
            return ["s", v.id]
        if c is tuple:
            return ["t", [self.enc(x) for x in v]]
        if c is list:
            return ["l", [self.enc(x) for x in v]]
        if c is Size:
            return ["S", [self.enc(x) for x in v]]
        if c is dict:
            return ["d", [[self.enc(k), self.enc(x)] for k, x in v.items()]]
        if c is slice:
            return ["sl", self.enc(v.start), self.enc(v.stop), self.enc(v.step)]
        if v is Ellipsis:
            return ["e"]
        if c is Member:
            return ["m", v.family.name, v.name]
        if isinstance(v, Primitive):
            return ["p", v.name]
        if c is _e.dtype:
            return ["dt", v.name]
        if c is D.Dtype:
            return ["mdt", v.name]
        if isinstance(v, np.ndarray) and v.dtype.kind in "biufc":
            return ["nd", self.blob(v, v.dtype.str, "numpy")]
        if isinstance(v, np.generic) and v.dtype.kind in "biufc":
            return ["ng", v.dtype.str, v.tobytes().hex()]
        raise ValueError(f"[export_function] ember cannot export this function: a recorded "
                         f"op holds a {c.__qualname__}, which its file format cannot store.")

    def graph(self, g: Graph, sources: list) -> dict:
        def meta(v: Value) -> list:
            return [v.id, list(v.shape), v.dtype.name, list(v.stride)]

        inputs = []
        for v, (kind, i) in zip(g.inputs, sources, strict=True):
            src = ["arg", i] if kind == "arg" else ["blob", self.blob(i, v.dtype.name, "ember")]
            inputs.append(meta(v) + [src])
        nodes = [[n.prim.name, [[k, self.enc(x)] for k, x in n.params.items()],
                  [self.enc(a) for a in n.args], [meta(o) for o in n.outs]] for n in g.nodes]
        return {"inputs": inputs, "nodes": nodes, "outputs": [v.id for v in g.outputs],
                "scalar_types": [s.type.__name__ for s in g.scalars]}

    def trace(self, t: Trace) -> dict:
        returns = []
        for r in t.returns:
            if r[0] == "const":
                returns.append(["const", self.blob(r[1], r[3], "ember"), r[2], r[3]])
            else:
                returns.append(list(r))
        return {"kwarg_keys": t.kwarg_keys,
                "inputs": [[list(s), d] for s, d in t.inputs],
                "graph": None if t.graph is None else self.graph(t.graph, t.sources),
                "scalars": [self.enc(x) for x in t.scalars],
                "returns": returns, "shape_bound": t.shape_bound}


def save_traces(path: str, shapeless: bool, metadata: str | None, traces: list) -> None:
    """Write the file (all traces so far): raises OSError when it cannot be opened."""
    w = _Writer()
    body = [w.trace(t) for t in traces]
    header = json.dumps({"format": _FORMAT, "shapeless": shapeless, "metadata": metadata,
                         "traces": body, "blobs": w.blobs, "data_bytes": len(w.data)},
                        separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<IQ", VERSION, len(header)) + header + bytes(w.data))


# -- reading --------------------------------------------------------------------------------

class _Corrupt(Exception):
    pass


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise _Corrupt(what)


def _is_int(v) -> bool:
    return v.__class__ is int


def _int_list(v, what: str, nonneg: bool = True) -> list:
    _need(v.__class__ is list and all(_is_int(x) and (x >= 0 or not nonneg) for x in v),
          what)
    return v


_PRIMS: dict = {}


def _primitive(name) -> Primitive:
    if not _PRIMS or name not in _PRIMS:
        _PRIMS.clear()
        for p in primitives:
            _PRIMS.setdefault(p.name, p)
    _need(name.__class__ is str and name in _PRIMS, f"unknown primitive {name!r}")
    return _PRIMS[name]


class _Reader:
    def __init__(self, header: dict, data: bytes) -> None:
        self.data = data
        blobs = header.get("blobs")
        _need(blobs.__class__ is list, "blob table")
        self.blobs = [self._blob(b) for b in blobs]
        self.values: dict = {}
        self.scalars: list = []

    def _blob(self, b) -> np.ndarray:
        _need(b.__class__ is list and len(b) == 5, "blob entry")
        kind, dtype, shape, offset, nbytes = b
        shape = tuple(_int_list(shape, "blob shape"))
        _need(dtype.__class__ is str, "blob dtype")
        if kind == "ember":
            _need(dtype in _e.BY_NAME, f"dtype {dtype!r}")
            npd = np.dtype(_e.BY_NAME[dtype].np)
        else:
            _need(kind == "numpy", "blob kind")
            try:
                npd = np.dtype(dtype)
            except TypeError:
                raise _Corrupt(f"dtype {dtype!r}") from None
            _need(npd.kind in "biufc", f"dtype {dtype!r}")
        _need(_is_int(offset) and _is_int(nbytes) and offset >= 0, "blob place")
        _need(nbytes == math.prod(shape) * npd.itemsize, "blob size")
        _need(offset + nbytes <= len(self.data), "data section too short")
        return np.frombuffer(self.data, npd, math.prod(shape), offset).reshape(shape).copy()

    def dec(self, v):
        if v is None or v.__class__ in (bool, int, str):
            return v
        _need(v.__class__ is list and v and v[0].__class__ is str, "value")
        tag, rest = v[0], v[1:]
        if tag == "f":
            return float.fromhex(rest[0])
        if tag == "c":
            return complex(float.fromhex(rest[0]), float.fromhex(rest[1]))
        if tag == "v":
            _need(len(rest) == 1 and rest[0] in self.values, "value reference")
            return self.values[rest[0]]
        if tag == "s":
            _need(len(rest) == 1 and _is_int(rest[0]) and 0 <= rest[0] < len(self.scalars),
                  "scalar reference")
            return self.scalars[rest[0]]
        if tag in ("t", "l", "S"):
            _need(len(rest) == 1 and rest[0].__class__ is list, "sequence")
            items = [self.dec(x) for x in rest[0]]
            return tuple(items) if tag == "t" else items if tag == "l" else Size(items)
        if tag == "d":
            _need(len(rest) == 1 and rest[0].__class__ is list, "dict")
            out = {}
            for kv in rest[0]:
                _need(kv.__class__ is list and len(kv) == 2, "dict item")
                k = self.dec(kv[0])
                _need(k.__class__ in (bool, int, str, float, tuple) or k is None, "dict key")
                out[k] = self.dec(kv[1])
            return out
        if tag == "sl":
            _need(len(rest) == 3, "slice")
            return slice(*(self.dec(x) for x in rest))
        if tag == "e":
            return Ellipsis
        if tag == "m":
            fam = _primitive(rest[0])
            _need(fam.__class__ is Family and rest[1] in fam.members, f"member {rest!r}")
            return fam.members[rest[1]]
        if tag == "p":
            return _primitive(rest[0])
        if tag == "dt":
            _need(rest[0] in _e.BY_NAME, "dtype")
            return _e.BY_NAME[rest[0]]
        if tag == "mdt":
            _need(rest[0] in D._BY_NAME, "dtype")
            return D._BY_NAME[rest[0]]
        if tag == "nd":
            _need(_is_int(rest[0]) and 0 <= rest[0] < len(self.blobs), "array reference")
            return self.blobs[rest[0]].copy()
        if tag == "ng":
            npd = np.dtype(rest[0])
            _need(npd.kind in "biufc", "scalar dtype")
            raw = bytes.fromhex(rest[1])
            _need(len(raw) == npd.itemsize, "scalar size")
            return np.frombuffer(raw, npd, 1)[0]
        raise _Corrupt(f"value tag {tag!r}")

    def value(self, g: Graph, m, node=None, index: int = 0) -> Value:
        _need(m.__class__ is list and len(m) >= 4, "value")
        vid, shape, dtype, stride = m[:4]
        _need(_is_int(vid) and vid not in self.values, "value id")
        _need(dtype in _e.BY_NAME, f"dtype {dtype!r}")
        v = Value(vid, tuple(_int_list(shape, "shape")), _e.BY_NAME[dtype],
                  tuple(_int_list(stride, "stride", nonneg=False)), node, index)
        g._count = max(g._count, vid + 1)
        self.values[vid] = v
        return v

    def graph(self, d: dict, n_inputs: int) -> tuple[Graph, list]:
        _need(d.__class__ is dict, "graph")
        g = Graph()
        sources = []
        types = {"int": int, "float": float, "complex": complex, "bool": bool}
        for t, x in zip(d["scalar_types"], self.scalars, strict=True):
            _need(t in types and x.__class__ is types[t], "scalar")
            g.scalars.append(Scalar(len(g.scalars), types[t]))
        for m in d["inputs"]:
            v = self.value(g, m)
            g.inputs.append(v)
            _need(len(m) == 5 and m[4].__class__ is list and len(m[4]) == 2, "input source")
            kind, i = m[4]
            _need(_is_int(i), "input source")
            if kind == "arg":
                _need(0 <= i < n_inputs, "input source")
                sources.append(("arg", i))
            else:
                _need(kind == "blob" and 0 <= i < len(self.blobs), "input source")
                a = self.blobs[i]
                _need(a.shape == v.shape and a.dtype == np.dtype(v.dtype.np), "constant")
                sources.append(("const", a))
        for nd in d["nodes"]:
            _need(nd.__class__ is list and len(nd) == 4, "node")
            prim = _primitive(nd[0])
            _need(nd[1].__class__ is list and nd[2].__class__ is list, "node")
            params = {}
            for kv in nd[1]:
                _need(kv.__class__ is list and len(kv) == 2 and kv[0].__class__ is str, "param")
                params[kv[0]] = self.dec(kv[1])
            args = tuple(self.dec(a) for a in nd[2])
            if prim.__class__ is InplacePrimitive or prim.writes_first:
                # (a trace never writes into its inputs: `mx.compile` replays no such graph)
                _need(not args or args[0].__class__ is not Value or not args[0].is_input,
                      "write into an input")
            if prim.__class__ is Family:
                _need(params.get("fn").__class__ is Member and params["fn"].family is prim,
                      "member")
            _need(nd[3].__class__ is list, "node outputs")
            node = Node(prim, params, args, ())
            node.outs = tuple(self.value(g, m, node, i) for i, m in enumerate(nd[3]))
            g.nodes.append(node)
        outs = _int_list(d["outputs"], "outputs")
        _need(all(i in self.values for i in outs), "outputs")
        g.outputs = [self.values[i] for i in outs]
        return g, sources

    def trace(self, t: dict) -> Trace:
        _need(t.__class__ is dict, "trace")
        keys = t["kwarg_keys"]
        _need(keys.__class__ is list and all(k.__class__ is str for k in keys), "keywords")
        inputs = []
        for s, dname in t["inputs"]:
            _need(dname in D._BY_NAME, "input dtype")
            inputs.append((tuple(_int_list(s, "input shape")), dname))
        _need(len(keys) <= len(inputs), "keywords")
        self.values, self.scalars = {}, []
        self.scalars = [self.dec(x) for x in t["scalars"]]
        graph, sources = (None, []) if t["graph"] is None else self.graph(t["graph"],
                                                                           len(inputs))
        n_out = len(graph.outputs) if graph is not None else 0
        returns = []
        for r in t["returns"]:
            _need(r.__class__ is list and r and r[0] in ("out", "arg", "const"), "return")
            if r[0] == "out":
                _need(len(r) == 4 and _is_int(r[1]) and 0 <= r[1] < n_out and
                      r[2] in D._BY_NAME and r[3] in _e.BY_NAME, "return")
                returns.append(("out", r[1], r[2], r[3]))
            elif r[0] == "arg":
                _need(len(r) == 2 and _is_int(r[1]) and 0 <= r[1] < len(inputs), "return")
                returns.append(("arg", r[1]))
            else:
                _need(len(r) == 4 and _is_int(r[1]) and 0 <= r[1] < len(self.blobs) and
                      r[2] in D._BY_NAME and r[3] in _e.BY_NAME, "return")
                returns.append(("const", self.blobs[r[1]], r[2], r[3]))
        bound = t["shape_bound"]
        _need(bound.__class__ is bool, "shape_bound")
        return Trace(keys, inputs, graph, sources, self.scalars, returns, bound)


def load_traces(path: str) -> tuple[bool, str | None, list]:
    """(shapeless, metadata, traces) of an exported file; RuntimeError for a file that
    cannot be opened, is not ember's format, or is corrupt."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        raise RuntimeError(f"[import_function] Failed to open {path}") from None
    n = len(MAGIC) + 12
    if len(raw) < len(MAGIC) or raw[:len(MAGIC)] != MAGIC:
        raise RuntimeError(f"[import_function] {path} is not a function exported by ember "
                           "(its first bytes are not ember's export format's).")
    if len(raw) < n:
        raise RuntimeError(f"[import_function] {path} is truncated.")
    version, size = struct.unpack("<IQ", raw[len(MAGIC):n])
    if version != VERSION:
        raise RuntimeError(f"[import_function] {path} has export format version {version}; "
                           f"this ember reads version {VERSION}.")
    if n + size > len(raw):
        raise RuntimeError(f"[import_function] {path} is truncated.")
    try:
        header = json.loads(raw[n:n + size].decode())
        _need(header.__class__ is dict and header.get("format") == _FORMAT, "header")
        data = raw[n + size:]
        _need(_is_int(header["data_bytes"]), "header")
        if header["data_bytes"] > len(data):
            raise RuntimeError(f"[import_function] {path} is truncated.")
        _need(header["data_bytes"] == len(data), "data section length")
        meta = header["metadata"]
        _need(meta is None or meta.__class__ is str, "metadata")
        _need(header["shapeless"].__class__ is bool and header["traces"].__class__ is list,
              "header")
        reader = _Reader(header, data)
        traces = [reader.trace(t) for t in header["traces"]]
    except RuntimeError:
        raise
    except (_Corrupt, KeyError, IndexError, TypeError, ValueError, AttributeError,
            UnicodeDecodeError, RecursionError) as e:
        raise RuntimeError(f"[import_function] {path} is corrupt: cannot read its "
                           f"{e if isinstance(e, _Corrupt) else 'contents'}.") from None
    return header["shapeless"], meta, traces
