"""A whole graph as one C function: a program run is one native call.

`lower_fused` gives a graph a Python program that calls one kernel per node. For a small
graph the calls cost more than the arithmetic (an MLP training step: 26 calls, about 80 us,
around 30 us of matrix products). Where every node has a rule in `c_rules` (views that
keep their base's start, small matrix products and a product's bias add, the fused loops,
copies, column sums, cross-entropy's fused backward, the SGD and Adam updates), the graph
also lowers to one C function, `ember_program`, in the translation unit of its fused loops.
It makes the calls the Python program makes, in its order, on arrays laid out as its are:
the products through the BLAS call NumPy's `matmul` makes for those layouts, the kernels
through the very C entries the Python program reaches. So its results are that program's
bits, which the tests check node kind by node kind.

Python allocates the arrays the program returns (a result never shares memory with an
earlier call's); the values no caller sees live in a workspace each thread keeps from call
to call (memory planned once: fixed offsets in the C). The addresses go in one array, the
graph's numbers in another.
Where the inputs are not laid out as recorded, where a profiler wants each kernel apart,
or where the C refuses before doing anything (the two operands of a product at one
address, which NumPy multiplies with `syrk`), the Python program runs instead.

Each rule returns the node's C statements, or None where it does not cover the node's
recorded operands: the graph then keeps its Python program only.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from .. import native
from .._core.dispatch import run_quiet
from .._core.primitive import Family
from .._core.ranges import ranges
from .._view import contiguous_strides, is_contiguous
from ..native import calls
from ..ops import views as _views
from ..ops._parallel import blas_layout, one_blas_thread
from ..ops.copy import clone_p
from ..ops.matmul import addmm_p, matmul_p
from ..ops.nll_softmax import _EXACT_COUNT, nll_log_softmax_backward_p
from ..ops.nn_ops import nll_loss_p
from ..ops.reduce import SUM_DIMS
from ..ops.softmax import softmax_p
from ..optim.adam import adam_step_p
from ..optim.sgd import sgd_step_p
from . import direct
from .direct import _np
from .ir import Graph, Node, Scalar, Value
from .program import Program, kernel_of

CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}  # (fuse's too)
_SUFFIX = {"float": "f32", "double": "f64"}
_VIEWS = (_views.transpose, _views.t, _views.permute)
_RESHAPES = (_views.view_, _views.unsafe_view, _views.reshape_alias)


def _dense(v: Value) -> bool:
    """C-contiguous, size-1 dims aside (as NumPy's flag says)."""
    return is_contiguous(v.shape, v.stride)


class Lowering:
    """What a rule sees and adds to: the C names of values, the graph's numbers, the
    kernels of other libraries it calls (through addresses passed in), the checks made
    before any work, and the values whose arrays Python allocates."""

    def __init__(self, graph: Graph, groups: dict) -> None:
        self.graph = graph
        self.groups = groups  # last node of a fused group -> (group, its C function name)
        self.names: dict = {}
        # a view's value -> (the value whose memory it shows, the permutation of that
        # value's dims it is: views here keep their base's start and only reorder dims)
        self.views_of: dict = {}
        self.kernels: list = []  # (C name, library family, symbol, C prototype)
        self.views: list[str] = []  # declarations of views (before the checks)
        self.checks: list[str] = []  # refusals made before any work
        self.allocated: list[Value] = []
        self.effects = False  # an update (a write into an input) has been emitted
        self.written_inputs: set = set()  # graph inputs an update writes
        self.epilogue: list[Node] = []  # nodes run after the C call by their kernels
        self.body: list[str] = []
        self.layout = None  # (see `layout`)

    def ctype(self, v: Value) -> str | None:
        return CTYPE.get(_np(v))

    def name(self, v: Value) -> str:
        return self.names[v]

    def number(self, a) -> str | None:
        """A param or constant operand as a C double: a graph number, or a literal."""
        if a.__class__ is Scalar:
            return f"s[{a.id}]" if a.type in (int, float) else None
        if a.__class__ in (int, float) and math.isfinite(a):
            return repr(float(a))
        return None

    def kernel(self, family: str, symbol: str, proto: str) -> str | None:
        """The C name of `symbol` of native family `family` (None where that library is not
        available): `proto` is its type with `(*)` for the name."""
        if native.library(family) is None:
            return None
        for name, fam, sym, _ in self.kernels:
            if (fam, sym) == (family, symbol):
                return name
        name = f"k{len(self.kernels)}_{symbol}"
        self.kernels.append((name, family, symbol, proto))
        return name

    def write(self, v: Value) -> None:
        """`v` is written by C into an array Python allocates (contiguous)."""
        self.allocated.append(v)


def _view(n: Node, lo: Lowering) -> list[str] | None:
    fn = n.params["fn"]
    x = n.args[0]
    if fn in _RESHAPES and len(n.args) == 1 and x.__class__ is Value:
        return _reshape(n, lo)
    if fn not in _VIEWS or len(n.args) != 1 or x.__class__ is not Value:
        return None
    o = n.outs[0]
    root, perm = lo.views_of.get(x, (x, tuple(range(len(x.shape)))))
    if fn is _views.permute:
        dims = tuple(d % len(perm) for d in n.params["dims"])
    else:  # (transpose, t: two dims swapped; t of fewer than two dims changes nothing)
        dims = list(range(len(perm)))
        if len(perm) >= 2:
            a, b = (n.params.get("dim0", 0) % len(perm), n.params.get("dim1", 1) % len(perm))
            dims[a], dims[b] = dims[b], dims[a]
    lo.views_of[o] = (root, tuple(perm[d] for d in dims))
    lo.views.append(f"{lo.ctype(o)} *const {lo.names[o]} = {lo.names[x]};  /* %{o.id} = "
                    f"view.{fn.name}(%{x.id}): strides {o.stride} */")
    return []


def _reshape(n: Node, lo: Lowering) -> list[str] | None:
    """A `view` of a C-ordered value that is C-ordered too: the same memory in the same
    order, so the same pointer (a value of its own for later views)."""
    x, o = n.args[0], n.outs[0]
    if x in lo.views_of or not _dense(x) or not _dense(o) or lo.ctype(o) is None:
        return None
    lo.views.append(f"{lo.ctype(o)} *const {lo.names[o]} = {lo.names[x]};  /* %{o.id} = "
                    f"view.{n.params['fn'].name}(%{x.id}): shape {o.shape} */")
    return []


def _product(lo: Lowering, a: Value, b: Value, out: str, comment: str) -> list[str] | None:
    """out = a @ b as NumPy's `matmul` makes it for these layouts (both at least 2 x 2):
    one gemm, C-order output. Where NumPy would take `syrk` (a matrix times its own
    transpose at one address) the program refuses at run time."""
    T = lo.ctype(a)
    if T is None or a.dtype is not b.dtype or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or min(m, k, n) < 2:
        return None  # (a dim of 1: NumPy's dot and gemv cases)
    # (NumPy's matmul reads an operand in place as ember's pool product does, or copies it)
    pa, pb = blas_layout(m, k, *a.stride), blas_layout(k, n, *b.stride)
    if pa is None or pb is None:
        return None
    (ta, lda), (tb, ldb) = pa, pb
    if m == n and a.stride == b.stride[::-1] and ta != tb:
        lo.checks.append(f"if ((const void *){lo.name(a)} == (const void *){lo.name(b)}) "
                         f"return 1;  /* {comment}: NumPy's syrk */")
    return [f"ember_gemm_{_SUFFIX[T]}({ta}, {tb}, {m}, {n}, {k}, 1, {lo.name(a)}, {lda}, "
            f"{lo.name(b)}, {ldb}, 0, {out}, {n});  /* {comment} */"]


def _matmul(n: Node, lo: Lowering) -> list[str] | None:
    a, b = n.args
    if n.params.get("conj") or a.__class__ is not Value or b.__class__ is not Value:
        return None
    o = n.outs[0]
    lo.write(o)
    return _product(lo, a, b, lo.names[o], f"%{o.id} = matmul(%{a.id}, %{b.id})")


def _addmm(n: Node, lo: Lowering) -> list[str] | None:
    """bias + a @ b with beta = alpha = 1: the product, then the bias added in place (the
    Python program's `_add(out, bias, out=out)`), a bias of one row or the output's
    shape."""
    bias, a, b = n.args
    p = n.params
    if p.get("batch_sum") or p.get("beta") != 1 or p.get("alpha") != 1 or \
            p["beta"].__class__ is not int or p["alpha"].__class__ is not int or \
            any(v.__class__ is not Value for v in n.args) or bias.dtype is not a.dtype:
        return None
    o = n.outs[0]
    rows, cols = o.shape if len(o.shape) == 2 else (0, 0)
    if bias.shape == (cols,) and bias.stride == (1,):
        at = "j"
    elif bias.shape == o.shape and _dense(bias):
        at = f"i * {cols} + j"
    else:
        return None
    lo.write(o)
    name = lo.names[o]
    prod = _product(lo, a, b, name, f"%{o.id} = addmm(%{bias.id}, %{a.id}, %{b.id})")
    if prod is None:
        return None
    return prod + [f"for (int64_t i = 0; i < {rows}; i++)",
                   f"    for (int64_t j = 0; j < {cols}; j++) "
                   f"{name}[i * {cols} + j] = {name}[i * {cols} + j] + {lo.name(bias)}[{at}];"]


def _clone(n: Node, lo: Lowering) -> list[str] | None:
    (x,) = n.args if len(n.args) == 1 else (None,)
    if x.__class__ is not Value or not n.params.get("contiguous") or \
            n.params.get("dtype") is not None or lo.ctype(x) is None:
        return None
    o = n.outs[0]
    lo.write(o)
    loops, index, out = [], [], []
    for d, (size, stride) in enumerate(zip(x.shape, x.stride)):
        loops.append(f"{'    ' * d}for (int64_t i{d} = 0; i{d} < {size}; i{d}++)")
        index.append(f"i{d} * {stride}")
    for d, stride in enumerate(contiguous_strides(o.shape)):
        out.append(f"i{d} * {stride}")
    body = f"{lo.names[o]}[{' + '.join(out) or '0'}] = {lo.name(x)}[{' + '.join(index) or '0'}];"
    return [f"/* %{o.id} = clone(%{x.id}): a C-order copy */", *loops,
            "    " * len(loops) + body]


def _reduce(n: Node, lo: Lowering) -> list[str] | None:
    """A sum over the leading dims of a C-order array of two or more columns, written out:
    each column from +0.0, its rows added in order, as reduce.c and NumPy sum that layout
    (their bits; inline, so a program needs no kernel library it would not otherwise)."""
    (x,) = n.args
    fn, dims = n.params["fn"], tuple(n.params.get("dims", ()))
    T = lo.ctype(x)
    if fn is not SUM_DIMS or T is None or x.__class__ is not Value or not _dense(x):
        return None
    k = len(dims)
    if not 0 < k < len(x.shape) or dims != tuple(range(k)):
        return None
    rows, cols = math.prod(x.shape[:k]), math.prod(x.shape[k:])
    if rows == 0 or cols < 2:
        return None
    o = n.outs[0]
    lo.write(o)
    out, src = lo.names[o], lo.name(x)
    return [f"/* %{o.id} = sum over dims {dims} of %{x.id}: columns from +0.0, rows in "
            "order */",
            f"for (int64_t j = 0; j < {cols}; j++) {out}[j] = ({T})0 + {src}[j];",
            f"for (int64_t i = 1; i < {rows}; i++)",
            f"    for (int64_t j = 0; j < {cols}; j++) "
            f"{out}[j] = {out}[j] + {src}[i * {cols} + j];"]


def _nll_softmax(n: Node, lo: Lowering) -> list[str] | None:
    """cross-entropy's fused backward in its usual form (no class weights, a 0-d gradient,
    mean or sum): its C entry that finds the coefficient itself."""
    g, target, weight, out = n.args
    p = n.params
    T = lo.ctype(out)
    if weight is not None or p["reduction"] not in ("mean", "sum") or T is None or \
            any(v.__class__ is not Value for v in (g, target, out)) or g.shape != () or \
            g.dtype is not out.dtype or _np(target) != np.dtype(np.int64) or \
            len(out.shape) != 2 or not _dense(out) or not _dense(target) or \
            out.shape[0] >= _EXACT_COUNT or lo.effects:
        return None  # (it may refuse: only before any update, so the Python redoes none)
    sym = f"nll_log_softmax_backward_reduced_{_SUFFIX[T]}"
    f = lo.kernel("nll_softmax", sym, f"int64_t (*)(const {T} *, const int64_t *, const "
                                      f"{T} *, int, {T} *, int64_t, int64_t, int64_t, int)")
    if f is None:
        return None
    o = n.outs[0]
    lo.write(o)
    rows, cols = out.shape
    return [f"if ({f}({lo.name(out)}, {lo.name(target)}, {lo.name(g)}, "
            f"{int(p['reduction'] == 'mean')}, {lo.names[o]}, {rows}, {cols}, "
            f"{int(p['ignore_index'])}, {int(bool(p.get('logits')))}) >= 0) return 2;"
            f"  /* %{o.id} = cross-entropy's backward; a target out of range: Python's "
            "error */"]


def _softmax(n: Node, lo: Lowering) -> list[str] | None:
    """softmax / log_softmax of a dense float array: softmax.c's entry, which the kernel
    reaches at every size."""
    (x,) = n.args
    T = lo.ctype(x)
    if T is None or x.__class__ is not Value or not _dense(x) or not x.shape:
        return None
    d = n.params["dim"] % len(x.shape)
    f = lo.kernel("softmax", f"softmax_forward_{_SUFFIX[T]}",
                  f"void (*)(const {T} *, {T} *, int64_t, int64_t, int64_t, int)")
    if f is None:
        return None
    o = n.outs[0]
    lo.write(o)
    shape = x.shape
    return [f"{f}({lo.name(x)}, {lo.names[o]}, {math.prod(shape[:d])}, {shape[d]}, "
            f"{math.prod(shape[d + 1:])}, {int(bool(n.params.get('log')))});  /* %{o.id} = "
            f"{'log_' if n.params.get('log') else ''}softmax(%{x.id}) */"]


def _update_operands(n: Node, lo: Lowering, count: int):
    """The first `count` operands of an update, each a dense array of one float dtype or
    None, and that dtype's C name; or None."""
    ops = n.args[:count]
    vals = [a for a in ops if a is not None]
    lo.written_inputs.update(n.args[i] for i in n.prim.writes if n.args[i] is not None)
    if any(a.__class__ is not Value for a in vals) or not all(_dense(a) for a in vals):
        return None
    T = lo.ctype(vals[0])
    if T is None or any(a.dtype is not vals[0].dtype or a.shape != vals[0].shape
                        for a in vals):
        return None
    return ["NULL" if a is None else lo.name(a) for a in ops], T, math.prod(vals[0].shape)


def _sgd(n: Node, lo: Lowering) -> list[str] | None:
    """SGD's step written out: optim.c's `sgd_task` arithmetic (its NumPy twin's, rounding
    for rounding: each number rounded to the dtype first, each operation once), inline so
    that a small model's program needs no optimizer library eager would not build."""
    got = _update_operands(n, lo, 3)
    p = n.params
    nums = [lo.number(p[k]) for k in ("lr", "momentum", "dampening", "weight_decay")]
    if got is None or None in nums:
        return None
    (param, grad, buf), T, size = got
    lr, momentum, dampening, wd = nums
    lo.effects = True
    g = f"-{grad}[i]" if p["maximize"] else f"{grad}[i]"
    fma = "fmaf" if T == "float" else "fma"  # (add_(x, alpha=) is a fused multiply-add)
    body = [f"    {T} g = {g};", f"    if ({wd} != 0) g = {fma}({param}[i], ({T}){wd}, g);"]
    if buf != "NULL":
        nesterov = f"{fma}(b, m, g)" if p["nesterov"] else "b"
        body += [f"    if ({momentum} != 0) {{",
                 f"        const {T} m = ({T}){momentum};",
                 f"        {T} b = {buf}[i] * m;",
                 f"        b = 1 - {dampening} == 1 ? b + g : {fma}(g, ({T})(1 - {dampening}), b);",
                 f"        {buf}[i] = b;",
                 f"        g = {nesterov};",
                 "    }"]
    return [f"/* sgd_step of %{n.args[0].id} */",
            f"for (int64_t i = 0; i < {size}; i++) {{", *body,
            f"    {param}[i] = {fma}(g, ({T})(-({lr})), {param}[i]);", "}"]


def _adam(n: Node, lo: Lowering) -> list[str] | None:
    """Adam's step: the step count and bias corrections as its NumPy kernel computes them
    (the count in its dtype, the corrections in double through libm's pow), then optim.c's
    update."""
    got = _update_operands(n, lo, 5)
    step = n.args[5]
    p = n.params
    nums = [lo.number(p[k]) for k in ("lr", "beta1", "beta2", "eps", "weight_decay")]
    if got is None or None in nums or step.__class__ is not Value or step.shape != () or \
            lo.ctype(step) is None:
        return None
    (param, grad, m, v, vmax), T, size = got
    lo.effects = True
    f = lo.kernel("optim", f"adam_step_{_SUFFIX[T]}",
                  f"void (*)({T} *, const {T} *, {T} *, {T} *, {T} *, int64_t, double, "
                  "double, double, double, double, int, int, double, double)")
    if f is None:
        return None
    lr, beta1, beta2, eps, wd = nums
    c = lo.name(step)
    S = lo.ctype(step)
    return [
        "{  /* adam_step */",
        f"    {c}[0] = {c}[0] + ({S})1;",
        f"    const double t = (double){c}[0];",
        f"    {f}({param}, {grad}, {m}, {v}, {vmax}, {size}, {lr}, {beta1}, {beta2}, {eps}, "
        f"{wd}, {int(bool(p['decoupled']))}, {int(bool(p['maximize']))}, "
        f"pow(1 - pow({beta2}, t), 0.5), -({lr}) / (1 - pow({beta1}, t)));",
        "}"]


c_rules: dict = {matmul_p: _matmul, addmm_p: _addmm, clone_p: _clone,
                 nll_log_softmax_backward_p: _nll_softmax, sgd_step_p: _sgd,
                 adam_step_p: _adam, _views.view_p: _view, softmax_p: _softmax}


def _rule(n: Node):
    rule = c_rules.get(n.prim)
    if rule is None and n.prim.__class__ is Family and n.prim.name == "reduce":
        return _reduce
    return rule


def _group_call(g, name: str, lo: Lowering) -> list[str] | None:
    """A fused loop's call: its inputs dense (as its C function reads them)."""
    if any(not _dense(v) for v in g.inputs):
        return None
    for v in g.outputs:
        lo.write(v)
    args = [lo.name(v) for v in g.inputs] + [lo.names[v] for v in g.outputs]
    for s in g.scalars:
        num = lo.number(s)
        if num is None:
            return None
        args.append(num)
    ops = ", ".join(m.op.split(".")[-1] for m in g.nodes)
    return [f"{name}({', '.join(args)});  /* fused: {ops} */"]


def source(graph: Graph, nodes: list[Node], groups: dict) -> Lowering | None:
    """The C of the whole program (`Lowering.code`), or None where a node has no rule for
    its operands. `groups` maps each fused group's last node to (group, C name); the other
    nodes of a group are computed inside its loop."""
    if not direct.serial_products(nodes):
        return None  # (a large product: the Python program's own blocking on the pool)
    lo = Lowering(graph, groups)
    inside = {m for g, _ in groups.values() for m in g.nodes[:-1]}
    for i, v in enumerate(graph.inputs):
        if lo.ctype(v) is None and _np(v) != np.dtype(np.int64):
            return None
        lo.names[v] = f"in{i}"
    body: list[str] = []
    after: set = set()  # values the epilogue computes
    read = {a for m in nodes for a in m.args if a.__class__ is Value}
    for n in nodes:
        for o in n.outs:
            lo.names[o] = f"v{o.id}"
        if n in inside:
            continue
        if n in groups:
            lines = _group_call(*groups[n], lo)
        else:
            rule = _rule(n)
            lines = None if rule is None or any(lo.ctype(o) is None for o in n.outs) \
                else rule(n, lo)
            if lines is None and _epilogue(n, lo, after, read):
                continue
        if lines is None:
            return None
        body += lines
    for n in lo.epilogue:  # (an epilogue node reads what the C wrote, and no update writes)
        if any(a in lo.written_inputs for a in n.args if a.__class__ is Value):
            return None
        if lo.effects and not _cannot_raise(n, lo):
            return None  # (its error would come after the updates, not before as eager's)
    known = set(lo.allocated) | set(graph.inputs) | after
    for v in graph.outputs:
        if v not in known and lo.views_of.get(v, (None,))[0] not in known:
            return None  # (a value the C does not write: the Python program)
    if not body:
        return None  # (nothing for C to do: no translation unit for it)
    lo.body = body
    return lo


_ALIGN = 64  # (each workspace value starts on a cache line)


def layout(lo: Lowering) -> tuple[list[Value], dict, int]:
    """(values Python allocates fresh: the graph's outputs, {internal value: byte offset in
    the workspace}, workspace bytes). Values no caller sees live in one workspace a thread
    reuses call after call; what the program returns is new memory every call. Worked out
    once (the C and its caller read it)."""
    if lo.layout is None:
        lo.layout = _layout(lo)
    return lo.layout


def _layout(lo: Lowering) -> tuple[list[Value], dict, int]:
    outs = set(lo.graph.outputs)
    outs |= {lo.views_of[v][0] for v in outs if v in lo.views_of}  # (a returned view's base)
    outs |= {a for n in lo.epilogue for a in n.args if a.__class__ is Value}  # (read after)
    fresh = [v for v in lo.allocated if v in outs]
    offsets, at = {}, 0
    for v in lo.allocated:
        if v not in outs:
            offsets[v] = at
            at += -(-math.prod(v.shape) * _np(v).itemsize // _ALIGN) * _ALIGN
    return fresh, offsets, at


def _epilogue(n: Node, lo: Lowering, after: set, read: set) -> bool:
    """Whether node `n`, which has no C rule, can run after the C call through its kernel
    (a loss's forward whose value only the caller reads): it writes nothing, no node reads
    what it computes, and it reads inputs or arrays the C writes (no views, no value of a
    fused loop's inside). Its outputs join `after`."""
    if not n.outs or any(o in read for o in n.outs) or any(
            a.__class__ is Value and (a in lo.views_of or (a.node is not None and
                                                            a not in lo.allocated))
            for a in n.args):
        return False
    lo.epilogue.append(n)
    after.update(n.outs)
    return True


def _cannot_raise(n: Node, lo: Lowering) -> bool:
    """Whether epilogue node `n` cannot fail when its kernel runs: elementwise math and
    sums, or `nll_loss` once the C has checked its targets before any work (a target out
    of range then makes the Python program run, which raises eager's error before the
    updates)."""
    if n.prim.__class__ is Family and n.prim.name in ("unary", "binary", "reduce"):
        return True
    if n.prim is not nll_loss_p:
        return False
    x, target = n.args[0], n.args[1]
    if target.__class__ is not Value or target.node is not None or \
            _np(target) != np.dtype(np.int64) or not _dense(target) or len(x.shape) != 2 \
            or target.shape != x.shape[:1]:
        return False
    rows, classes = x.shape
    t, ignore = lo.name(target), int(n.params["ignore_index"])
    lo.checks.append(f"for (int64_t r = 0; r < {rows}; r++)  /* nll_loss's targets */")
    lo.checks.append(f"    if (({t}[r] < 0 || {t}[r] >= {classes}) && {t}[r] != {ignore}) "
                     "return 3;")
    return True


def code(lo: Lowering) -> str:
    """`ember_program(b, s, k)`: b the addresses of the inputs, then of the outputs Python
    allocated, then of the workspace; s the graph's numbers; k the other libraries'
    kernels."""
    graph = lo.graph
    fresh, offsets, _ = layout(lo)
    head = []
    arrays = list(graph.inputs) + fresh
    for i, v in enumerate(arrays):
        T = lo.ctype(v) or "int64_t"
        head.append(f"    {T} *const {lo.names[v]} = b[{i}];  /* %{v.id}: {v.meta()} */")
    if offsets:
        head.append(f"    char *const w = b[{len(arrays)}];  /* the workspace */")
    for v, at in offsets.items():
        T = lo.ctype(v)
        head.append(f"    {T} *const {lo.names[v]} = ({T} *)(w + {at});  /* %{v.id}: "
                    f"{v.meta()} */")
    for i, (name, _, _, proto) in enumerate(lo.kernels):
        head.append(f"    {proto.replace('(*)', f'(*const {name})')} = k[{i}];")
    lines = ["int64_t ember_program(void *const *b, const double *s, void *const *k) {",
             *head, *["    " + v for v in lo.views], *["    " + c for c in lo.checks],
             *["    " + w for w in lo.body], "    (void)s;", "    (void)k;", "    return 0;",
             "}"]
    return "\n".join(lines) + "\n"


class CProgram(Program):
    """A program whose run is one call of `ember_program`, with the Python program it
    replaces kept for what the C does not do (see the module docstring)."""

    def __init__(self, graph: Graph, lo: Lowering, fn, python: Program) -> None:
        fresh, _, self._workspace = layout(lo)
        text = (f"# One C call, ember_program (print .c_source), into {len(fresh)} new "
                f"arrays and a {self._workspace}-byte workspace;\n# the Python program it "
                "does the work of, run where it cannot:\n")
        super().__init__(graph, text + python.code, None, python.notes, python._env)
        self.python = python
        self.hold_blas = python.hold_blas
        self.c_source = getattr(python, "c_source", "")
        self._call = fn
        self._kernels = np.array([_address(f, s) for _, f, s, _ in lo.kernels] or [0],
                                 np.uintp)
        self._n_in = len(graph.inputs)
        item = [(_np(v) or np.dtype(np.int64)).itemsize for v in graph.inputs]
        self._layouts = [(tuple(v.shape), tuple(s * it for s in v.stride))
                         for v, it in zip(graph.inputs, item)]
        self._fresh = [(tuple(v.shape), _np(v)) for v in fresh]
        self._spaces = threading.local()  # (each thread its own workspace)
        where = {v: i for i, v in enumerate(list(graph.inputs) + fresh)}
        self._epilogue = []  # (kernel, operands, fixed params, number params, outputs)
        for n in lo.epilogue:
            kernel, params = kernel_of(n)
            ops = [("buf", where[a]) if a.__class__ is Value else
                   ("num", a.id) if a.__class__ is Scalar else ("const", a) for a in n.args]
            self._epilogue.append((kernel, ops, {k: v for k, v in params.items()
                                                 if v.__class__ is not Scalar},
                                   {k: v.id for k, v in params.items()
                                    if v.__class__ is Scalar}, n.outs))
        self._outs = []  # (array index, how it is returned: None, "copy" or a permutation)
        seen = set()
        for v in graph.outputs:
            if v not in where and v not in lo.views_of:  # (an epilogue's value)
                self._outs.append((v, "after"))
            elif v in lo.views_of:
                root, perm = lo.views_of[v]
                self._outs.append((where[root], perm))
            else:
                self._outs.append((where[v], "copy" if v in seen else None))
            seen.add(v)

    def _space(self) -> list:
        """This thread's workspace address (as a one-item list), made on first use."""
        got = getattr(self._spaces, "at", None)
        if got is None:
            buf = np.empty(self._workspace + _ALIGN, np.uint8)
            start = calls.ptr(buf)
            self._spaces.buf = buf
            got = self._spaces.at = [start + -start % _ALIGN] if self._workspace else []
        return got

    def run(self, arrays: list) -> list:
        if ranges.recorder is not None:
            return self.python.run(arrays)  # (a profiler: each kernel in its own range)
        n = self._n_in
        ins = arrays[:n]
        for a, (shape, strides) in zip(ins, self._layouts):
            if a.__class__ is not np.ndarray or a.strides != strides or a.shape != shape:
                return self.python.run(arrays)
        bufs = ins + [np.empty(shape, dtype) for shape, dtype in self._fresh]
        ptr = calls.ptr
        addrs = np.array(list(map(ptr, bufs)) + self._space(), np.uintp)
        nums = np.array(arrays[n:] or [0.0], np.float64)
        if self.hold_blas:
            with one_blas_thread:
                refused = self._call(ptr(addrs), ptr(nums), ptr(self._kernels))
        else:
            refused = self._call(ptr(addrs), ptr(nums), ptr(self._kernels))
        if refused:
            return self.python.run(arrays)
        after = self._after(bufs, arrays[n:]) if self._epilogue else None
        return [bufs[i] if how is None else bufs[i].copy() if how == "copy" else
                after[i] if how == "after" else bufs[i].transpose(how)
                for i, how in self._outs]

    def _after(self, bufs: list, numbers: list) -> dict:
        """Run the epilogue's nodes by their kernels on what the C wrote."""
        vals: dict = {}
        for kernel, ops, fixed, nums, outs in self._epilogue:
            args = [bufs[x] if kind == "buf" else numbers[x] if kind == "num" else x
                    for kind, x in ops]
            params = {**fixed, **{k: numbers[i] for k, i in nums.items()}}
            res = run_quiet(kernel, *args, **params)
            if len(outs) == 1:
                vals[outs[0]] = res
            else:
                vals.update(zip(outs, res))
        return vals


def _address(family: str, symbol: str) -> int:
    return ctypes.cast(getattr(native.library(family), symbol), ctypes.c_void_p).value


def bind_program(graph: Graph, lo: Lowering, lib, python: Program) -> CProgram:
    fn = calls.entry(lib, "ember_program", [calls.P, calls.P, calls.P], calls.I64)
    return CProgram(graph, lo, fn, python)
