"""`make_dot`: draw the autograd graph behind a tensor, as torchviz draws PyTorch's.

The walk starts at the output's `grad_fn` and follows `next_functions` back to the
leaves. Each backward node is a grey box named as PyTorch names it (`MulBackward0`);
each leaf that requires grad hangs off its `AccumulateGrad` node in light blue, named
from `params`; the output is green (a view's base dark green, joined by a dotted line).
`show_saved` adds the tensors each node saved for backward (orange), `show_attrs` the
node's non-tensor arguments, and `show_values` (ember's addition, for teaching) the
values and `.grad` of the named tensors. Node ids are the objects' `id()`s, as in torchviz.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import FunctionNode
from ...autograd.graph import AccumulateGrad, Node
from ...graph.ir import Graph, Value
from .digraph import Digraph

# What PyTorch calls a node's saved inputs and outputs (`_saved_self`, `_saved_result`).
# A node here keeps its inputs by position, so they are named by position: `self`, then
# `other` for a binary op, `arg1`, `arg2` ... for more.
_RESULT = "result"

_MAX_SHOWN = 8  # show_values prints a tensor's elements up to this many; past it, its range


def _size_str(t: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _input_names(n: int) -> list[str]:
    if n == 2:
        return ["self", "other"]
    return ["self"] + [f"arg{i}" for i in range(1, n)]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _values_str(t: Tensor) -> str:
    """A short text of `t`'s values: all of them when few, else their range."""
    if t.device.type == "meta":
        return "(meta: no values)"
    t = t.detach()
    if t.numel() == 1:
        return _fmt(t.item())
    if t.numel() <= _MAX_SHOWN:
        return "[" + ", ".join(_fmt(v) for v in t.reshape(-1).tolist()) + "]"
    if t.is_complex():
        return f"({t.numel()} complex values)"
    t = t.double()  # (a range of ints or bools too)
    return f"[{_fmt(t.min().item())} .. {_fmt(t.max().item())}]"


def _tensor_lines(t: Tensor, name: str, show_values: bool) -> list[str]:
    lines = [name, f" {_size_str(t)}"]
    if show_values:
        lines.append(f"= {_values_str(t)}")
        if t.requires_grad:
            g = t.grad if t.is_leaf or t.retains_grad else None
            lines.append(f"grad = {_values_str(g)}" if g is not None else "grad = None")
    return lines


def _saved_of(fn: Node) -> tuple[list[tuple[str, Tensor]], dict]:
    """What a built-in node saved: [(name, tensor)] and {name: non-tensor argument}."""
    saved = fn._saved
    if saved is None:  # freed by a backward without retain_graph: PyTorch raises here too
        from ...autograd.engine import retain_graph_error

        raise retain_graph_error()
    names = _input_names(len(saved))
    tensors, attrs = [], {}
    for name, value, need in zip(names, saved, fn._needs):
        if isinstance(value, Tensor):
            tensors.append((name, value))
        elif need is None and value is not None:  # a number or other static argument
            attrs[name] = value
    out = fn._out
    if isinstance(out, Tensor):
        tensors.append((_RESULT, out))
    elif isinstance(out, tuple):
        tensors.extend((f"{_RESULT}{i}", o) for i, o in enumerate(out) if isinstance(o, Tensor))
    return tensors, attrs


def _is_builtin(fn: Node) -> bool:
    """A node recorded by an op (not a leaf's AccumulateGrad, nor a custom Function)."""
    return not isinstance(fn, (AccumulateGrad, FunctionNode)) \
        and getattr(fn, "prim", None) is not None


def _ctx_saved(fn: Node) -> tuple:
    """What a custom Function saved with `ctx.save_for_backward` (nothing once freed)."""
    if not isinstance(fn, FunctionNode) or fn._saved is None:
        return ()
    return tuple(t for t in fn.saved_tensors if t is not None)


def _fn_attrs(fn: Node) -> dict:
    """A node's attributes: its op's static params, number arguments and saved tensors."""
    if not _is_builtin(fn):
        return {}
    tensors, attrs = _saved_of(fn)
    attrs.update({k: v for k, v in (fn._params or {}).items() if k != "fn"})
    attrs.update({name: "[saved tensor]" for name, _ in tensors})
    return attrs


def _fn_label(fn: Node, show_attrs: bool, max_attr_chars: int) -> str:
    """The node's name, then (with show_attrs) a two-column table of its attributes."""
    name = type(fn).__name__  # (torchviz names a node by its class, not its name())
    attrs = _fn_attrs(fn) if show_attrs else {}
    if not attrs:
        return name
    width = max(max_attr_chars, 3)
    values = {k: str(v) for k, v in attrs.items()}
    col1 = max(len(k) for k in values)
    col2 = min(max(len(v) for v in values.values()), width)

    def cut(s: str) -> str:
        return s[:col2 - 3] + "..." if len(s) > col2 else s

    rule = "-" * max(col1 + col2 + 2, len(name))
    rows = [f"{k:<{col1}}: {cut(v):>{col2}}" for k, v in values.items()]
    return "\n".join([name, rule, *rows])


def make_dot(var, params: dict | None = None, show_attrs: bool = False,
             show_saved: bool = False, max_attr_chars: int = 50, *,
             show_values: bool = False) -> Digraph:
    """The autograd graph of `var` (a tensor, or a tuple of them) as a `Digraph`; or, for a
    graph `ember.compile` captured (`fn.graphs[i]`), that graph (`draw_graph`).

    `params` maps names to tensors: leaves are labelled with their names (as torchviz
    does), and so, here, are named intermediate tensors, on their `grad_fn` node.
    `show_attrs` lists each node's non-tensor arguments; `show_saved` draws the tensors
    each node saved for backward; `max_attr_chars` truncates long attribute values.
    `show_values` adds the values and gradients of the named tensors and the output (the
    gradient of a non-leaf shows when it called `retain_grad()` before backward).
    """
    if isinstance(var, Graph):
        return draw_graph(var)
    if params is not None:
        for name, value in params.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"make_dot: params[{name!r}] is a {type(value).__name__}, "
                                "not a tensor")
        param_map = {id(v): k for k, v in params.items()}
        fn_names = {id(v.grad_fn): (k, v) for k, v in params.items() if v.grad_fn is not None}
    else:
        param_map, fn_names = {}, {}
    outputs = var if isinstance(var, tuple) else (var,)
    for t in outputs:  # an output's name and values go on its own (green) node
        if t.grad_fn is not None:
            fn_names.pop(id(t.grad_fn), None)

    dot = Digraph(
        node_attr=dict(style="filled", shape="box", align="left", fontsize="10",
                       ranksep="0.1", height="0.2", fontname="monospace"),
        graph_attr=dict(size="12,12"),
    )
    seen: set[int] = set()
    output_ids = {id(t) for t in outputs}

    def var_label(t: Tensor, name: str | None = None) -> str:
        name = name or param_map.get(id(t), "")
        shown = show_values and (id(t) in param_map or id(t) in output_ids)
        return "\n".join(_tensor_lines(t, name, shown))

    def add_saved(fn: Node) -> None:
        if _is_builtin(fn):
            for attr, t in _saved_of(fn)[0]:
                dot.edge(str(id(fn)), str(id(t)), dir="none")
                dot.node(str(id(t)), var_label(t, attr), fillcolor="orange")

    def add_nodes(root: Node) -> None:
        stack = [root]
        while stack:
            fn = stack.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            if show_saved:
                add_saved(fn)
            if isinstance(fn, AccumulateGrad):
                leaf = fn.variable
                dot.node(str(id(leaf)), var_label(leaf), fillcolor="lightblue")
                dot.edge(str(id(leaf)), str(id(fn)))
            label = _fn_label(fn, show_attrs, max_attr_chars)
            named = fn_names.get(id(fn))
            if named is not None:  # a named intermediate: "c (2, 3)", then its values
                name, lines = named[0], _tensor_lines(named[1], named[0], show_values)
                label += "\n" + "\n".join([name + lines[1], *lines[2:]])
            dot.node(str(id(fn)), label)
            for nxt, _ in reversed(fn.next_functions):
                if nxt is not None:
                    dot.edge(str(id(nxt)), str(id(fn)))
                    stack.append(nxt)
            for t in _ctx_saved(fn):  # drawn always, as torchviz draws them
                dot.edge(str(id(t)), str(id(fn)), dir="none")
                dot.node(str(id(t)), var_label(t), fillcolor="orange")

    def add_output(t: Tensor, color: str) -> None:
        todo = [(t, color)]
        while todo:
            t, color = todo.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            dot.node(str(id(t)), var_label(t), fillcolor=color)
            if t.grad_fn is not None:
                add_nodes(t.grad_fn)
                dot.edge(str(id(t.grad_fn)), str(id(t)))
            if t._is_view():
                dot.edge(str(id(t._base)), str(id(t)), style="dotted")
                todo.append((t._base, "darkolivegreen3"))

    for t in outputs:
        add_output(t, "darkolivegreen1")
    _resize(dot)
    return dot


def _resize(dot: Digraph, per_row: float = 0.15, minimum: float = 12) -> None:
    """Grow the drawing's size limit with the number of statements (torchviz's rule)."""
    size = max(minimum, len(dot.body) * per_row)
    dot.graph_attr["size"] = f"{size},{size}"


def draw_graph(graph: Graph) -> Digraph:
    """A graph `ember.compile` captured (`fn.graphs[i]`): inputs in light blue, one box per
    node (its op and output metadata), outputs in green, arrows from operands to users."""
    dot = Digraph(
        node_attr=dict(style="filled", shape="box", align="left", fontsize="10",
                       ranksep="0.1", height="0.2", fontname="monospace"),
        graph_attr=dict(size="12,12"),
    )
    outputs = set(graph.outputs)
    for v in graph.inputs:
        dot.node(f"v{v.id}", f"%{v.id} input\n{v.meta()}", fillcolor="lightblue")
    for n in graph.nodes:
        name = f"n{id(n)}"
        metas = "\n".join(f"%{o.id} {o.meta()}" for o in n.outs) or "(writes its inputs)"
        done = any(o in outputs for o in n.outs)
        dot.node(name, f"{n.op}\n{metas}", fillcolor="darkolivegreen1" if done else
                 ("orange" if not n.outs else "lightgrey"))
        for a in n.args:
            if a.__class__ is Value:
                src = f"v{a.id}" if a.node is None else f"n{id(a.node)}"
                dot.edge(src, name)
    return dot


def make_dot_from_trace(trace):
    """torchviz's tracer-based drawing; PyTorch moved it to TensorBoard, and so does ember."""
    raise NotImplementedError(
        "make_dot_from_trace has moved: draw a model's graph with "
        "SummaryWriter.add_graph (ember.utils.tensorboard), or use make_dot")
