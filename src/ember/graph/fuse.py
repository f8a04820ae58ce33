"""Fusion: chains of pointwise nodes become one generated C loop each.

A *group* is a run of pointwise nodes (members with a `lower` rule: `deflower`) of one
float dtype over one output shape, whose tensor operands are that shape or broadcast to it
(size-1 or missing leading dims), with Python numbers as scalars. One loop computes the
chain per element; only the values used after the group (by another node, or as outputs)
are written to memory. The loop does the members' operations in the same order and
precision as their NumPy kernels, compiled with `-ffp-contract=off`, so a fused result is
bit for bit eager's.

All groups of a graph go into one C translation unit, compiled once through the native
toolchain (and cached on disk). Where no C compiler works, or `EMBER_KERNELS=numpy`, the
graph runs as generated Python over the kernels (`program.lower_python`), same results.

A transcendental's C (`deflower(..., ulps=n)`) may land a few ulps from its NumPy kernel;
`lower_fused(graph, exact=True)` leaves such nodes to their kernels, for callers that
promise the same bits whether a graph runs fused or not (MLX's lazy arrays).
"""

from __future__ import annotations

import numpy as np

from .. import native
from .._core.primitive import Family, lower_rules, lower_terms, lower_ulps
from .._view import contiguous_strides
from ..native import calls, toolchain
from . import c_program
from .c_program import CTYPE as _CTYPE
from .ir import Graph, Node, Scalar, Value
from .ir import np_dtype as _np_dtype
from .passes import live_nodes
from .patterns import split_epilogues
from .program import Program, lower_python

_ptr = calls.ptr

MIN_GROUP = 1  # a single node is fused too: one C loop, no NumPy dispatch, no temporaries
PARALLEL_ELEMENTS = 1 << 15  # below this many elements a loop runs on the calling thread


class Group:
    """Nodes fused into one loop: their shape and dtype, the external operands, and the
    values written out."""

    def __init__(self, shape: tuple, dtype) -> None:
        self.shape = shape
        self.dtype = dtype
        self.nodes: list[Node] = []
        self.inputs: list[Value] = []  # tensors read from memory
        self.scalars: list = []  # Scalar placeholders or constants, passed by value
        self.outputs: list[Value] = []  # values written to memory


def _fusible(n: Node) -> bool:
    """Whether `n` can join a fused loop (its C may differ from its kernel by its ulps)."""
    if n.prim.__class__ is not Family or n.params["fn"] not in lower_rules:
        return False
    if len(n.outs) != 1:
        return False
    held, dtypes, _ = lower_terms.get(n.params["fn"], ({}, ("float32", "float64"), ""))
    if len(n.params) != 1 + len(held) or any(
            k not in n.params or n.params[k] != v for k, v in held.items()):
        return False
    out = n.outs[0]
    dtype = _np_dtype(out.dtype)
    if dtype not in _CTYPE or dtype.name not in dtypes:
        return False
    for a in n.args:
        if a.__class__ is Value:
            if a.dtype is not out.dtype or not _broadcasts(a.shape, out.shape):
                return False
        elif a.__class__ is Scalar:
            if a.type not in (int, float):
                return False
        elif a.__class__ not in (int, float):
            return False
    return True


def _fusible_exact(n: Node) -> bool:
    """Whether `n` can join a fused loop whose bits are its kernel's."""
    return _fusible(n) and not lower_ulps.get(n.params["fn"], 0)


def _broadcasts(shape: tuple, to: tuple) -> bool:
    if len(shape) > len(to):
        return False
    lead = len(to) - len(shape)
    return all(s == t or s == 1 for s, t in zip(shape, to[lead:]))


def groups(graph: Graph, nodes: list[Node], fusible=_fusible) -> list[Group]:
    """Greedy fusion in bind order: a fusible node joins the open groups of its shape and
    dtype that compute its operands (merging them into one when it reads from several:
    two chains that meet, as `b1 * m + (1 - b1) * g`), else opens a group. A group is
    closed once a node outside it reads its values (it runs before that node) or writes
    into a value it reads."""
    found: list[Group] = []
    owner: dict = {}  # value -> the group computing it
    into: dict = {}  # a group merged away -> the group it went into
    readers: dict = {}  # value -> groups that read it
    closed: set = set()
    pos = {n: i for i, n in enumerate(nodes)}

    def find(g):
        while g in into:
            g = into[g]
        return g

    for n in nodes:
        if not fusible(n):
            for a in n.args:
                if a.__class__ is Value:
                    if a in owner:
                        closed.add(find(owner[a]))
                    if not n.outs:  # an effect writing into `a`: its readers run first
                        closed.update(find(r) for r in readers.get(a, ()))
            continue
        out = n.outs[0]
        joined: list = []
        for a in n.args:
            cand = find(owner[a]) if a.__class__ is Value and a in owner else None
            if cand is None or cand in joined:
                continue
            if cand not in closed and cand.shape == out.shape and cand.dtype is out.dtype:
                joined.append(cand)
            else:
                closed.add(cand)
        if joined:
            g = joined[0]
            for other in joined[1:]:
                g.nodes = sorted(g.nodes + other.nodes, key=pos.__getitem__)
                into[other] = g
        else:
            g = Group(out.shape, out.dtype)
            found.append(g)
        g.nodes.append(n)
        owner[out] = g
        for a in n.args:
            if a.__class__ is Value:
                readers.setdefault(a, []).append(g)
    found = [g for g in found if g not in into]
    owner = {v: find(g) for v, g in owner.items()}
    used_outside = _uses(graph, nodes, owner)
    for g in found:
        inside = {n.outs[0] for n in g.nodes}
        for n in g.nodes:
            for a in n.args:
                if a.__class__ is Value and a not in inside and a not in g.inputs:
                    g.inputs.append(a)
                elif a.__class__ is not Value and a not in g.scalars:
                    g.scalars.append(a)
            if n.outs[0] in used_outside:
                g.outputs.append(n.outs[0])
    return [g for g in found if len(g.nodes) >= MIN_GROUP and g.outputs]


def _uses(graph: Graph, nodes: list[Node], owner: dict) -> set:
    """Values a group computes that something outside it reads (or the graph returns)."""
    used = set(graph.outputs)
    for n in nodes:
        mine = owner.get(n.outs[0]) if n.outs else None
        for a in n.args:
            if a.__class__ is Value and a in owner and owner[a] is not mine:
                used.add(a)
    return used


# --- C source ------------------------------------------------------------------------------

def _strides(shape: tuple, to: tuple) -> tuple:
    """Element strides of a contiguous array of `shape` read as `to` (0 where broadcast)."""
    lead = len(to) - len(shape)
    own = contiguous_strides(shape)
    return (0,) * lead + tuple(0 if s == 1 and t != 1 else st
                               for s, t, st in zip(shape, to[lead:], own))


def _merge_dims(shape: tuple, strides: list[tuple]) -> tuple[tuple, list[tuple]]:
    """Collapse adjacent dims every operand walks as one (so most loops are 1-d or 2-d)."""
    dims = [(shape[i], [s[i] for s in strides]) for i in range(len(shape)) if shape[i] != 1]
    if not dims:
        return (1,), [(0,) for _ in strides]
    merged = [dims[0]]
    for size, st in dims[1:]:
        psize, pst = merged[-1]
        if all(p == s * size for p, s in zip(pst, st)):
            merged[-1] = (psize * size, st)
        else:
            merged.append((size, st))
    return tuple(m[0] for m in merged), [tuple(m[1][k] for m in merged)
                                         for k in range(len(strides))]


def group_source(g: Group, name: str) -> str:
    """One group as C: a task over the outer dim and an entry that runs it in parallel."""
    T = _CTYPE[_np_dtype(g.dtype)]
    shape, strides = _merge_dims(g.shape, [_strides(v.shape, g.shape) for v in g.inputs]
                                 + [_strides(v.shape, g.shape) for v in g.outputs])
    rank = len(shape)
    idx = [f"i{d}" for d in range(rank)]

    def offset(st):
        terms = [f"{i} * {s}" if s != 1 else i for i, s in zip(idx, st) if s]
        return " + ".join(terms) or "0"

    fields = [f"    const {T} *in{k};" for k in range(len(g.inputs))]
    fields += [f"    {T} *out{k};" for k in range(len(g.outputs))]
    fields += [f"    double s{k};" for k in range(len(g.scalars))]
    names: dict = {}
    for k, v in enumerate(g.inputs):
        names[v] = f"x{k}"
    for k, s in enumerate(g.scalars):
        names[s if s.__class__ is Scalar else ("const", k)] = f"(({T})s{k})"
    body = [f"const {T} x{k} = in{k}[{offset(strides[k])}];" for k in range(len(g.inputs))]
    comment = []
    for n in g.nodes:
        args = []
        for a in n.args:
            if a.__class__ is Value:
                args.append(names[a])
            else:
                key = a if a.__class__ is Scalar else ("const", g.scalars.index(a))
                args.append(names[key])
        o = n.outs[0]
        expr = lower_rules[n.params["fn"]].format(*args, T=T)
        body.append(f"const {T} t{o.id} = {expr};  /* {n.op} */")
        names[o] = f"t{o.id}"
        comment.append(f"%{o.id} = {n.op}({', '.join(map(repr, n.args))})")
    for k, v in enumerate(g.outputs):
        body.append(f"out{k}[{offset(strides[len(g.inputs) + k])}] = t{v.id};")
    lines = [f"/* {name}: {'; '.join(comment)} */",
             "typedef struct {", *fields, f"}} {name}_args;", "",
             f"static void {name}_task(void *p, int64_t lo, int64_t hi) {{",
             f"    const {name}_args *a = p;"]
    lines += [f"    const {T} *restrict in{k} = a->in{k};" for k in range(len(g.inputs))]
    lines += [f"    {T} *restrict out{k} = a->out{k};" for k in range(len(g.outputs))]
    lines += [f"    const double s{k} = a->s{k};" for k in range(len(g.scalars))]
    indent = "    "
    for d in range(rank):
        lo, hi = ("lo", "hi") if d == 0 else ("0", str(shape[d]))
        lines.append(f"{indent}for (int64_t i{d} = {lo}; i{d} < {hi}; i{d}++) {{")
        indent += "    "
    lines += [indent + b for b in body]
    for _ in range(rank):
        indent = indent[:-4]
        lines.append(indent + "}")
    lines.append("}")
    inner = int(np.prod(shape[1:])) if rank > 1 else 1
    grain = max(1, PARALLEL_ELEMENTS // max(inner, 1))
    params = [f"const {T} *in{k}" for k in range(len(g.inputs))]
    params += [f"{T} *out{k}" for k in range(len(g.outputs))]
    params += [f"double s{k}" for k in range(len(g.scalars))]
    init = ", ".join([f"in{k}" for k in range(len(g.inputs))]
                     + [f"out{k}" for k in range(len(g.outputs))]
                     + [f"s{k}" for k in range(len(g.scalars))])
    lines += ["", f"void {name}({', '.join(params)}) {{",
              f"    {name}_args a = {{{init}}};",
              f"    ember_parallel_for({name}_task, &a, {shape[0]}, {grain});", "}"]
    return "\n".join(lines) + "\n"


# --- the program -------------------------------------------------------------------------

class FusedCall:
    """A group's C entry called from the program: checks its operands' layout (falling back
    to the group's own kernels if one is not laid out as recorded) and allocates outputs."""

    def __init__(self, fn, g: Group, fallback) -> None:
        self.fn = fn
        self.layouts = [(v.shape, _byte_strides(v)) for v in g.inputs]
        self.out = [(v.shape, _np_dtype(v.dtype)) for v in g.outputs]
        self.fallback = fallback
        self.n_in = len(g.inputs)

    def __call__(self, *args):
        # NOTE: once per fused loop per program run: kept flat
        ptrs = []
        for a, (shape, strides) in zip(args, self.layouts):
            if a.__class__ is not np.ndarray or a.shape != shape or (
                    a.strides != strides and not a.flags.c_contiguous):
                return self.fallback(*args)
            ptrs.append(_ptr(a))
        if len(self.out) == 1:
            shape, dtype = self.out[0]
            out = np.empty(shape, dtype)
            self.fn(*ptrs, _ptr(out), *args[self.n_in:])
            return out
        outs = [np.empty(shape, dtype) for shape, dtype in self.out]
        self.fn(*ptrs, *[_ptr(o) for o in outs], *args[self.n_in:])
        return tuple(outs)


def _byte_strides(v: Value) -> tuple:
    """The C-order strides in bytes of `v`'s shape (as NumPy reports them)."""
    item = _np_dtype(v.dtype).itemsize
    return tuple(s * item for s in contiguous_strides(v.shape))


def lower_fused(graph: Graph, *, exact: bool = False) -> Program:
    """The graph as Python calling one compiled C loop per group, or, without a compiler,
    `lower_python`'s program. `exact`: fuse only nodes whose C gives their kernel's bits."""
    if not native.available():
        return lower_python(graph)
    fusible = _fusible_exact if exact else _fusible
    graph = split_epilogues(graph.with_nodes(live_nodes(graph)), fusible)
    nodes = graph.nodes
    found = groups(graph, nodes, fusible)
    names = [f"fused_{i}" for i in range(len(found))]
    whole = c_program.source(graph, nodes, {g.nodes[-1]: (g, nm) for g, nm in zip(found, names)})
    if not found and whole is None:
        return lower_python(graph)
    support = []
    for g in found:
        for n in g.nodes:
            code = lower_terms.get(n.params["fn"], (None, None, ""))[2]
            if code and code not in support:
                support.append(code)
    source = '#include "ember.h"\n#include "ember_math.h"\n#include <math.h>\n\n' \
             '#define EMBER_ABS(x) _Generic((x), float: fabsf, double: fabs)(x)\n' \
             '#define EMBER_SQRT(x) _Generic((x), float: sqrtf, double: sqrt)(x)\n\n' + \
        "".join(c + "\n" for c in support) + \
        "\n".join(group_source(g, nm) for g, nm in zip(found, names))
    if whole is not None:
        source += '\n#include <stdint.h>\n#include "blas.h"\n\n' + c_program.code(whole)
    lib = toolchain.try_build("graph-" + toolchain.cache.digest(source)[:16], source)
    if lib is None:
        return lower_python(graph)
    by_node: dict = {}
    env: dict = {}
    for g, nm in zip(found, names):
        fn = calls.entry(lib, nm, [calls.P] * (len(g.inputs) + len(g.outputs))
                         + [calls.F64] * len(g.scalars))
        call = FusedCall(fn, g, _group_fallback(g))
        by_node[g.nodes[-1]] = (g, nm, call)
        for n in g.nodes[:-1]:
            by_node[n] = None
        env[nm] = call

    def lines_for(n, name_of, env_):
        if n not in by_node:
            return None
        claim = by_node[n]
        if claim is None:
            return []  # computed inside its group's loop
        g, nm, call = claim
        env_[nm] = call
        args = ", ".join([name_of(v) for v in g.inputs]
                         + [name_of(s) if s.__class__ is Scalar else repr(float(s))
                            for s in g.scalars])
        outs = ", ".join(f"v{v.id}" for v in g.outputs)
        if len(g.outputs) > 1:
            outs = f"({outs})"
        ops = ", ".join(m.op.split(".")[-1] for m in g.nodes)
        return [f"{outs} = {nm}({args})  # fused C loop: {ops}"]

    program = lower_python(graph, lines_for=lines_for)
    program.c_source = source
    if whole is not None:
        return c_program.bind_program(graph, whole, lib, program)
    return program


def _group_fallback(g: Group):
    """The group's nodes run by their own kernels (operands laid out otherwise than
    recorded)."""
    from .program import kernel_of

    steps = [(kernel_of(n), n) for n in g.nodes]

    def run(*args):
        vals = dict(zip(g.inputs, args[:len(g.inputs)]))
        scal = dict(zip([s if s.__class__ is Scalar else ("c", i)
                         for i, s in enumerate(g.scalars)], args[len(g.inputs):]))
        for (kernel, params), n in steps:
            ops = []
            for a in n.args:
                if a.__class__ is Value:
                    ops.append(vals[a])
                elif a.__class__ is Scalar:
                    ops.append(scal[a])
                else:
                    ops.append(a)
            vals[n.outs[0]] = kernel(*ops, **params)
        outs = [vals[v] for v in g.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run
