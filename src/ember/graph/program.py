"""Lowering a graph to a program: generated Python that calls each node's kernel once,
with no dispatch, no promotion and no autograd work left (all of that happened while
recording). The program is a readable function: `print(program.code)`.
"""

from __future__ import annotations

from .._core.dispatch import run_quiet
from .._core.primitive import Family, _family_kernel, kernels
from .ir import Graph, Node, Value
from .passes import live_nodes

_cpu = kernels["cpu"]


class Program:
    """A compiled graph: `run(input_arrays) -> output_arrays`, and the code that does it."""

    def __init__(self, graph: Graph, code: str, fn, notes: list[str]) -> None:
        self.graph = graph
        self.code = code
        self._fn = fn
        self.notes = notes  # what the passes did, for `explain`

    def run(self, arrays: list) -> list:
        return run_quiet(self._fn, *arrays)


def kernel_of(node: Node):
    """(kernel, params) a node's kernel is called with: a family member's own kernel and
    the params less `fn`, else the primitive's CPU kernel (native or NumPy)."""
    prim, params = node.prim, node.params
    kernel = _cpu[prim]
    if prim.__class__ is Family and kernel is _family_kernel:
        return params["fn"].kernel, {k: v for k, v in params.items() if k != "fn"}
    return kernel, params


def lower_python(graph: Graph, extra: dict | None = None, lines_for=None) -> Program:
    """The graph as a Python function over kernels. `lines_for(node, name_of, env)` may
    claim a node (fusion) by returning its lines, else it is one kernel call."""
    nodes = live_nodes(graph)
    env: dict = dict(extra or {})
    names: dict = {}
    for i, v in enumerate(graph.inputs):
        names[v] = f"in{i}"

    def name_of(a):
        if a.__class__ is Value:
            return names[a]
        key = f"c{len(env)}"
        env[key] = a
        return key

    body = []
    for n in nodes:
        for o in n.outs:
            names[o] = f"v{o.id}"
        claimed = lines_for(n, name_of, env) if lines_for is not None else None
        if claimed is not None:
            body += claimed
            continue
        kernel, params = kernel_of(n)
        k = f"k{len(env)}"
        env[k] = kernel
        call = ", ".join(name_of(a) for a in n.args)
        if params:
            p = f"p{len(env)}"
            env[p] = params
            call += (", " if call else "") + f"**{p}"
        lhs = ", ".join(names[o] for o in n.outs) + ("," if len(n.outs) > 1 else "")
        if len(n.outs) > 1:
            lhs = "(" + lhs.rstrip(",") + ")"
        body.append(f"{lhs} = {k}({call})  # {n.op}")
    ret = ", ".join(names[v] for v in graph.outputs)
    args = ", ".join(names[v] for v in graph.inputs)
    code = "\n".join([f"def program({args}):"] + [f"    {line}" for line in body]
                     + [f"    return [{ret}]"]) + "\n"
    scope: dict = {}
    exec(compile(code, "<ember graph>", "exec"), env, scope)  # noqa: S102 - generated code
    return Program(graph, code, scope["program"], [])
