"""Lowering a graph to a program: generated Python that calls each node's kernel once,
with no dispatch, no promotion and no autograd work left (all of that happened while
recording). The program is a readable function: `print(program.code)`.
"""

from __future__ import annotations

import re

import numpy as np

from .._core.dispatch import run_quiet
from .._core.primitive import Family, _family_kernel, kernels
from .._core.ranges import ranges
from ..ops._inplace_kernel import run_inplace
from ..ops._parallel import OPENBLAS_SERIAL, one_blas_thread
from ..ops.registry import InplacePrimitive
from . import direct
from .ir import Graph, Node, Scalar, Value
from .passes import live_nodes

_cpu = kernels["cpu"]


class Program:
    """A compiled graph: `run(input_arrays) -> output_arrays`, and the code that does it."""

    def __init__(self, graph: Graph, code: str, fn, notes: list[str], env: dict | None = None
                 ) -> None:
        self.graph = graph
        self.code = code
        self._fn = fn
        self.notes = notes  # what the passes did, for `explain`
        self._env = env
        self._profiled = None
        self.hold_blas = False  # run under `one_blas_thread` (its products are all small)

    def run(self, arrays: list) -> list:
        rec = ranges.recorder
        if rec is None:
            if self.hold_blas:
                with one_blas_thread:
                    return run_quiet(self._fn, *arrays)
            return run_quiet(self._fn, *arrays)
        token = rec.enter("CompiledFunction")  # (PyTorch's profiler names a compiled region so)
        try:
            if self.hold_blas:
                with one_blas_thread:
                    return run_quiet(self._instrumented(rec), *arrays)
            return run_quiet(self._instrumented(rec), *arrays)
        finally:
            rec.exit(token)

    def _instrumented(self, rec):
        """The program with each line inside a profiler range named after what it runs
        (`ember::addmm`, `ember::fused_0 (mul, add, relu)`), made when first profiled."""
        if self._profiled is None or self._profiled[0] is not rec:
            lines = self.code.splitlines()
            out = [lines[0]]
            for line in lines[1:-1]:
                label = line.split("#", 1)[1].strip() if "#" in line else line.strip()
                if label.startswith("fused C loop: "):  # `v5 = fused_0(...)`: its name too
                    callee = line.split("=", 1)[1].split("(", 1)[0].strip()
                    label = f"{callee} ({label[len('fused C loop: '):]})"
                out += [f"    _t = _rec.enter({('ember::' + label)!r})", line,
                        "    _rec.exit(_t)"]
            out.append(lines[-1])
            scope: dict = {}
            exec(compile("\n".join(out) + "\n", "<ember graph, profiled>", "exec"),  # noqa: S102
                 {**self._env, "_rec": rec}, scope)
            self._profiled = (rec, scope["program"])
        return self._profiled[1]


def kernel_of(node: Node):
    """(kernel, params) a node's kernel is called with: a family member's own kernel and
    the params less `fn`, else the primitive's CPU kernel (native or NumPy)."""
    prim, params = node.prim, node.params
    if prim.__class__ is InplacePrimitive:
        return _writer(prim.base), params
    kernel = _cpu[prim]
    if prim.__class__ is Family and kernel is _family_kernel:
        return params["fn"].kernel, {k: v for k, v in params.items() if k != "fn"}
    return kernel, params


_writers: dict = {}


def _writer(prim):
    """The kernel of `x.op_(...)`: `prim`'s result written into x's array (checked when it
    was recorded)."""
    w = _writers.get(prim)
    if w is None:
        def w(dst, *arrays, **params):
            run_inplace(prim, None, dst, list(arrays), params, _checked)

        w.__name__ = f"{prim.name}_into"
        _writers[prim] = w
    return w


def _checked(*_):
    """(shape checks happened at recording)"""


def lower_python(graph: Graph, extra: dict | None = None, lines_for=None) -> Program:
    """The graph as a Python function over kernels. `lines_for(node, name_of, env)` may
    claim a node (fusion) by returning its lines, else it is one kernel call."""
    nodes = live_nodes(graph)
    env: dict = dict(extra or {})
    names: dict = {}
    for i, v in enumerate(graph.inputs):
        names[v] = f"in{i}"
    for s in graph.scalars:
        names[s] = f"s{s.id}"

    def name_of(a):
        if a.__class__ is Value or a.__class__ is Scalar:
            return names[a]
        key = f"c{len(env)}"
        env[key] = a
        return key

    body = []
    serial = direct.serial_products(nodes)
    for n in nodes:
        for o in n.outs:
            names[o] = f"v{o.id}"
        claimed = lines_for(n, name_of, env) if lines_for is not None else None
        if claimed is None:
            claimed = direct.lines(n, [names[o] for o in n.outs], name_of, env, serial)
        if claimed is not None:
            body += claimed
            continue
        kernel, params = kernel_of(n)
        k = f"k{len(env)}"
        env[k] = kernel
        call = ", ".join(name_of(a) for a in n.args)
        fixed = {key: v for key, v in params.items() if v.__class__ is not Scalar}
        if fixed:
            p = f"p{len(env)}"
            env[p] = fixed
            call += (", " if call else "") + f"**{p}"
        for key, v in params.items():
            if v.__class__ is Scalar:
                call += f", {key}={names[v]}"
        lhs = ", ".join(names[o] for o in n.outs)
        if len(n.outs) > 1:
            lhs = "(" + lhs + ")"
        body.append(f"{lhs + ' = ' if lhs else ''}{k}({call})  # {n.op}")
    body = _free_dead(body, {names[v] for v in graph.outputs})
    returned: set = set()
    rets = []
    for v in graph.outputs:  # (two outputs that are one value after CSE: a copy each)
        rets.append(names[v] if v not in returned else f"_copy({names[v]})")
        returned.add(v)
    env["_copy"] = np.copy
    ret = ", ".join(rets)
    args = ", ".join([names[v] for v in graph.inputs] + [names[s] for s in graph.scalars])
    code = "\n".join([f"def program({args}):"] + [f"    {line}" for line in body]
                     + [f"    return [{ret}]"]) + "\n"
    scope: dict = {}
    exec(compile(code, "<ember graph>", "exec"), env, scope)  # noqa: S102 - generated code
    program = Program(graph, code, scope["program"], [], env)
    # (products the kernels would hold OpenBLAS to one thread for: held once, around the run)
    program.hold_blas = serial and any(f >= OPENBLAS_SERIAL for f in direct.products(nodes))
    return program


_LOCAL = re.compile(r"\bv\d+\b")


def _free_dead(body: list[str], kept: set) -> list[str]:
    """`body` with each intermediate deleted after the line that reads it last, so its
    buffer goes back to the allocator while the program runs (as eager frees its
    temporaries) instead of every intermediate living until the return."""
    last: dict = {}
    for i, line in enumerate(body):
        for name in _LOCAL.findall(line.split("  # ", 1)[0]):
            last[name] = i
    dead: dict = {}
    for name, i in last.items():
        if name not in kept:
            dead.setdefault(i, []).append(name)
    out = []
    for i, line in enumerate(body):
        out.append(line)
        if i in dead:
            out.append("del " + ", ".join(sorted(dead[i], key=lambda n: int(n[1:]))))
    return out
