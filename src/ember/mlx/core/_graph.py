"""The pending graph, as MLX shows and shapes it: `depends` (outputs that wait on other
arrays) and `export_to_dot` (a Graphviz file of what is pending for some arrays).

In ember the pending graph is the lazy session's graph IR (`_lazy`, `ember.graph.ir`): a
pending array holds a lazy tensor whose `Value` a node of that graph makes; a computed
array is an input of it. `export_to_dot` walks that graph back from the arrays given, in
MLX's order and layout (mlx/graph_utils.cpp): computed arrays are sources, nodes are
rectangles labelled with the ember primitive they bind (`binary.mul` where MLX prints
`Multiply`), arrays are named A, B, ... in the order the walk meets them, and arrays no
node reads are sinks. Python numbers an op read are constants of the graph, not arrays
(MLX makes each one an array and a `Broadcast`), so they are not drawn; and `depends` of
several inputs is one identity node per input (MLX's Depends is one node with an output
per input).
"""

from __future__ import annotations

import weakref

from ...graph.lazy import LazyTensor
from . import _lazy
from ._array import _wrap, array
from ._binding import bad_call

# -- depends --------------------------------------------------------------------------------

_DEPENDS = "depends(inputs: array | Sequence[array], dependencies: array | Sequence[array])"


def _array_list(v) -> list:
    """A sequence of arrays as MLX's binding casts one (anything else: its bad_cast)."""
    if isinstance(v, list | tuple) and all(isinstance(x, array) for x in v):
        return list(v)
    raise RuntimeError("std::bad_cast")


def _depends(*args, **kwargs):
    if len(args) != 2 or kwargs or args[0] is None or args[1] is None:
        raise bad_call("depends", _DEPENDS, args, kwargs)
    inputs, dependencies = args
    single = isinstance(inputs, array)
    xs = [inputs] if single else _array_list(inputs)
    deps = [dependencies] if isinstance(dependencies, array) else _array_list(dependencies)
    if not xs:  # (MLX reads the first input's stream without checking: it crashes)
        raise ValueError("[depends] Expected at least one input.")
    # the pending dependencies stay alive as long as the outputs: ember computes every
    # live pending array when it computes any, so they are computed with the outputs; the
    # computed ones are only remembered (weakly), for export_to_dot to draw
    pending = tuple(d._t for d in deps if isinstance(d._t, LazyTensor))
    drawn = tuple(weakref.ref(d._t) for d in deps)
    outs = []
    for x in xs:
        t = x._t.view(x._t.shape)  # (a new array of the same values: an identity view)
        if drawn:
            t.__dict__["_mlx_depends"] = (pending, drawn)
        outs.append(_wrap(t, x._dtype))
    return outs[0] if single else outs


depends = _lazy.lazy(_depends)
depends.__doc__ = """`inputs` (an array or a sequence of them) as new arrays of the same
values that depend on `dependencies`: computing them computes those too. The gradient
goes to `inputs` alone (`dependencies` get zeros).

NOTE: MLX's Depends has no jvp or vmap rule and raises under `mx.jvp` / `mx.vmap`;
ember's outputs are identity views, which both transforms go through."""


# -- export_to_dot --------------------------------------------------------------------------

_EXPORT = "export_to_dot(file: object, *args, **kwargs) -> None"


def _flatten(tree, out: list) -> None:
    """MLX's tree_flatten: lists, tuples and dicts of arrays, and nothing else."""
    if isinstance(tree, array):
        out.append(tree)
    elif isinstance(tree, list | tuple):
        for v in tree:
            _flatten(v, out)
    elif isinstance(tree, dict):
        for v in tree.values():
            _flatten(v, out)
    else:
        raise ValueError("[tree_flatten] The argument should contain only arrays")


class _Walk:
    """The part of the pending graph the given arrays need, as MLX's depth-first walk
    meets it. An array is keyed by the graph `Value` that stands for it (a node's output,
    or a graph input: a computed tensor the graph reads), or by its tensor when no graph
    reads it; two `mx.array` objects of one tensor are one array, as in MLX."""

    def __init__(self, tensors: list) -> None:
        world = _lazy._local.world
        self.input_of = world.input_of if world is not None else {}
        self.extra: dict = {}  # a node -> the dependencies `depends` gave its outputs
        sessions = [world] if world is not None else []
        for t in tensors:  # (an array pending in another session: a `compile` trace)
            s = t.__dict__.get("_lazy_session") if t.__class__ is LazyTensor else None
            if s is not None and s not in sessions:
                sessions.append(s)
        for s in sessions:
            self._collect_depends(s)

    def _collect_depends(self, session) -> None:
        for ref in session.lazies:
            t = ref()
            if t is not None and t.__class__ is LazyTensor and "_mlx_depends" in t.__dict__:
                node = t.__dict__["_lazy_value"].node
                _, drawn = t.__dict__["_mlx_depends"]
                self.extra.setdefault(node, []).extend(
                    d for d in (ref() for ref in drawn) if d is not None)

    def key(self, t):
        if t.__class__ is LazyTensor:
            return t.__dict__["_lazy_value"]
        v = self.input_of.get(id(t))
        return v if v is not None else t

    def inputs(self, node) -> list:
        return node.inputs() + [self.key(d) for d in self.extra.get(node, ())]

    def order(self, outputs: list) -> list:
        """MLX's `depth_first_traversal`: each array after its inputs, once (a node's other
        outputs are marked seen with it)."""
        seen: set = set()
        order: list = []
        for root in outputs:
            if id(root) in seen:
                continue
            stack = [(root, False)]
            while stack:
                k, expanded = stack.pop()
                if expanded:
                    order.append(k)
                    continue
                if id(k) in seen:
                    continue
                seen.add(id(k))
                node = getattr(k, "node", None)
                if node is None:
                    order.append(k)
                    continue
                for o in node.outs:
                    seen.add(id(o))
                stack.append((k, True))
                stack.extend((i, False) for i in reversed(self.inputs(node)))
        return order


class _Namer:
    """MLX's NodeNamer: names given, else A, B, ..., Z, AA, ... by how many are named."""

    def __init__(self) -> None:
        self.names: dict = {}  # id(key) -> name

    def set(self, k, name: str) -> None:
        self.names[id(k)] = name

    def get(self, k) -> str:
        name = self.names.get(id(k))
        if name is None:
            n, letters = len(self.names) + 1, []
            while n > 0:
                letters.append(chr(ord("A") + (n - 1) % 26))
                n = (n - 1) // 26
            name = self.names[id(k)] = "".join(reversed(letters))
        return name


def _dot(walk: _Walk, namer: _Namer, outputs: list) -> str:
    order = walk.order(outputs)
    intermediate = {id(i) for k in order if getattr(k, "node", None) is not None
                    for i in walk.inputs(k.node)}
    lines = ["digraph {"]
    for k in order:
        node = getattr(k, "node", None)
        if node is None:
            lines.append(f'{{ rank=source; "{namer.get(k)}"; }}')
            continue
        pid = id(node)
        label = "depends" if node in walk.extra else node.op  # (the identity `depends` made)
        lines.append(f'{{ {pid} [label ="{label}", shape=rectangle]; }}')
        lines.extend(f'"{namer.get(i)}" -> {pid}' for i in walk.inputs(node))
        for o in node.outs:
            sink = "" if id(o) in intermediate else "rank=sink; "
            lines.append(f'{{ {sink}"{namer.get(o)}"; }}')
            lines.append(f'{pid} -> "{namer.get(o)}"')
    return "\n".join(lines) + "\n}"


def export_to_dot(*args, **kwargs) -> None:
    """Write the pending graph of the arrays given (positional ones, then the keyword ones,
    which also name them) to `file` in Graphviz's DOT language: a path, or an object with
    a `write` method (see the module docstring for how ember's graph is drawn)."""
    if args:
        file, arrays_in = args[0], args[1:]
        if "file" in kwargs:
            raise bad_call("export_to_dot", _EXPORT, args, kwargs)
    elif "file" in kwargs:
        kwargs = dict(kwargs)
        file, arrays_in = kwargs.pop("file"), ()
    else:
        raise bad_call("export_to_dot", _EXPORT, args, kwargs)
    if file is None:
        raise bad_call("export_to_dot", _EXPORT, (file, *arrays_in), kwargs)
    outputs: list = []
    _flatten((arrays_in, kwargs), outputs)
    walk, namer = _Walk([x._t for x in outputs]), _Namer()
    for name, x in kwargs.items():
        if not isinstance(x, array):
            raise RuntimeError("std::bad_cast")
        namer.set(walk.key(x._t), name)
    keys = [walk.key(x._t) for x in outputs]
    if isinstance(file, str):
        text = _dot(walk, namer, keys)
        try:
            with open(file, "w") as f:
                f.write(text)
        except OSError:  # NOTE: MLX's std::ofstream fails silently (no file, no error)
            pass
    elif hasattr(file, "write"):
        file.write(_dot(walk, namer, keys))
    else:
        raise ValueError("[export_to_dot] Accepts file-like objects or strings to be used as "
                         "filenames.")
