"""The graph IR: what a traced program binds, as data.

A `Graph` is a list of `Node`s in the order they were bound. A node is one `bind` call:
the primitive, its static params (a family's member among them, as `fn`), its arguments
(`Value`s or constants: Python numbers, None) and the `Value`s it produced. A `Value` is
one tensor's metadata: shape, dtype and strides, and where it comes from (a graph input,
which is a real tensor handed in, or a node's output). This is the one IR: `ember.compile`
records it, passes rewrite it, lowering turns it into a program, and it prints as a table.
"""

from __future__ import annotations

import numpy as np

from .._core.primitive import Family, Member
from .._tensor import Size


def np_dtype(d) -> np.dtype | None:
    """The NumPy dtype of ember dtype `d` (None for one NumPy has no type for)."""
    return np.dtype(d.np) if hasattr(d, "np") else None


class Value:
    """One tensor in a graph: its metadata and its producer (None for a graph input)."""

    __slots__ = ("id", "shape", "dtype", "stride", "node", "index")

    def __init__(self, id: int, shape: tuple, dtype, stride: tuple, node=None,
                 index: int = 0) -> None:
        self.id = id
        self.shape = shape
        self.dtype = dtype
        self.stride = stride
        self.node = node
        self.index = index

    @property
    def is_input(self) -> bool:
        return self.node is None

    def __repr__(self) -> str:
        return f"%{self.id}"

    def meta(self) -> str:
        name = self.dtype.name if hasattr(self.dtype, "name") else str(self.dtype)
        return f"{name}{list(self.shape)}"


class Node:
    """One primitive call: `outs = prim(*args, **params)`."""

    __slots__ = ("prim", "params", "args", "outs")

    def __init__(self, prim, params: dict, args: tuple, outs: tuple) -> None:
        self.prim = prim
        self.params = params
        self.args = args
        self.outs = outs

    @property
    def member(self) -> Member | None:
        return self.params.get("fn") if self.prim.__class__ is Family else None

    @property
    def op(self) -> str:
        """`prim` or `family.member`: the name the table prints."""
        m = self.member
        return f"{self.prim.name}.{m.name}" if m is not None else self.prim.name

    def static_params(self) -> dict:
        return {k: v for k, v in self.params.items() if k != "fn" or self.member is None}

    def key_params(self) -> tuple:
        """The node's static params and constant arguments, frozen (for comparisons)."""
        return (freeze(self.static_params()),
                tuple(freeze(a) for a in self.args if a.__class__ not in (Value, Scalar)))

    def inputs(self) -> list[Value]:
        return [a for a in self.args if a.__class__ is Value]


class Scalar:
    """A Python number an op read as a constant argument: a runtime input of the program,
    so a new value (a learning rate, a step count) runs the same program."""

    __slots__ = ("id", "type")

    def __init__(self, id: int, type: type) -> None:
        self.id = id
        self.type = type

    def __repr__(self) -> str:
        return f"$s{self.id}"


RUNTIME_SCALARS = (int, float, complex)


def params_key(params: dict):
    """A node's params as a hashable key: the items themselves when they hash (ints, bools,
    tuples, dtypes, members ...), else frozen value by value."""
    items = tuple(params.items())
    try:
        hash(items)
    except TypeError:
        return freeze(params)
    for _, v in items:
        if v.__class__ is Scalar or v.__class__ is float and v != v:
            return freeze(params)
    return items


def freeze(v):
    """A hashable, structural stand-in for a param or constant: equal when the value is."""
    t = v.__class__
    if t in (int, float, bool, str, type(None), complex):
        return (t.__name__, v) if t is not float or v == v else ("float", "nan")
    if t in (tuple, list):
        return (t.__name__, tuple(freeze(x) for x in v))
    if t is dict:
        return ("dict", tuple(sorted((k, freeze(x)) for k, x in v.items())))
    if t is slice:
        return ("slice", freeze(v.start), freeze(v.stop), freeze(v.step))
    if t is Scalar:
        return ("scalar", v.type)
    if isinstance(v, np.generic):
        return ("np", str(v.dtype), v.item() if v == v else "nan")
    if isinstance(v, np.ndarray):
        return ("array", str(v.dtype), v.shape, v.tobytes())
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return ("obj", v)


class Graph:
    """Inputs (real tensors handed in), nodes in bind order, and the values the caller
    needs afterwards (outputs)."""

    def __init__(self) -> None:
        self.inputs: list[Value] = []
        self.scalars: list[Scalar] = []
        self.nodes: list[Node] = []
        self.outputs: list[Value] = []
        self.effects = False  # some node writes into an input (runs even with no output)
        self._count = 0
        # backward passes recorded while following this graph, to replay (graph/backward.py)
        self.backward_memos: dict = {}
        # built-in modules' calls recorded while following this graph (graph/memo.py)
        self.call_memos: dict = {}

    def value(self, shape, dtype, stride, node=None, index: int = 0) -> Value:
        v = Value(self._count, tuple(shape), dtype, tuple(stride), node, index)
        self._count += 1
        return v

    def add_input(self, shape, dtype, stride) -> Value:
        v = self.value(shape, dtype, stride)
        self.inputs.append(v)
        return v

    def add_scalar(self, value) -> Scalar:
        s = Scalar(len(self.scalars), value.__class__)
        self.scalars.append(s)
        return s

    def add_node(self, node: Node) -> None:
        self.nodes.append(node)

    def with_nodes(self, nodes: list[Node]) -> Graph:
        """This graph's inputs, scalars and outputs over other nodes (a pass's result)."""
        g = Graph()
        g.inputs, g.scalars, g.outputs, g.effects = \
            self.inputs, self.scalars, self.outputs, self.effects
        g.nodes = nodes
        g._count = self._count
        return g

    def key(self) -> tuple:
        """The graph's structure: equal keys run the same program (given inputs of the
        recorded shapes, dtypes and strides). Values are named by their number, which is
        their place in recording order, so equal recordings give equal keys."""
        return (tuple((v.id, v.shape, v.dtype, v.stride) for v in self.inputs),
                tuple(_part(n) for n in self.nodes), tuple(v.id for v in self.outputs))

    def table(self) -> str:
        """The graph as a table: one line per input and node, outputs marked."""
        outs = {v: i for i, v in enumerate(self.outputs)}
        lines = [f"graph: {len(self.inputs)} inputs, {len(self.nodes)} nodes, "
                 f"{len(self.outputs)} outputs"]
        for v in self.inputs:
            lines.append(f"  {v!r:>5} = input{'':26} {v.meta():<24} stride {v.stride}")
        for n in self.nodes:
            args = ", ".join(repr(a) if a.__class__ in (Value, Scalar) else _show(a)
                             for a in n.args)
            params = ", ".join(f"{k}={_show(v)}" for k, v in n.static_params().items())
            call = f"{n.op}({args}{', ' if args and params else ''}{params})"
            for o in n.outs:
                mark = f"   -> output {outs[o]}" if o in outs else ""
                lines.append(f"  {o!r:>5} = {call:<32} {o.meta():<24}{mark}")
                call = '"'
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _part(node: Node) -> tuple:
    """A node's part of its graph's key."""
    return (node.prim, params_key(node.params),
            tuple(a.id if a.__class__ is Value else
                  ("scalar", a.type) if a.__class__ is Scalar else freeze(a) for a in node.args))


_MISSING = object()


def same_node(n: Node, e: Node) -> bool:
    """Whether node `n` has the part of the key that node `e` (of an earlier graph) has,
    the graph inputs it reads laid out the same (given that the nodes before them did)."""
    if n.prim is not e.prim:
        return False
    a1, a2 = n.args, e.args
    if len(a1) != len(a2):
        return False
    for x, y in zip(a1, a2):
        c = x.__class__
        if c is not y.__class__:
            return False
        if c is Value:
            if x.id != y.id or (x.node is None) is not (y.node is None):
                return False
            if x.node is None and (x.shape != y.shape or x.dtype is not y.dtype
                                   or x.stride != y.stride):
                return False
        elif c is Scalar:
            if x.type is not y.type:
                return False
        elif not same_const(x, y):
            return False
    return same_params(n.params, e.params)


def same_const(x, y) -> bool:
    """Whether constant arguments `x` and `y` (of one class) are equal as the key says."""
    return x is y or (x == y if x.__class__ in _PLAIN else freeze(x) == freeze(y))


def same_params(p1: dict, p2: dict) -> bool:
    """Whether two nodes' params are equal as the key says (a Scalar matching by type)."""
    if len(p1) != len(p2):
        return False
    for k, v in p1.items():
        w = p2.get(k, _MISSING)
        if v is not w and not same_param(v, w):
            return False
    return True


def same_param(v, w) -> bool:
    """Whether param values `v` and `w` are equal as the key says."""
    c = v.__class__
    if c is not w.__class__:
        return False
    if c is Scalar:
        return v.type is w.type
    if c in _PLAIN:
        return v == w
    return freeze(v) == freeze(w)


# classes whose == is the key's equality (as `params_key` compares hashable params); a
# tuple holding something else (an array) makes `same_node` raise: the caller says no
_PLAIN = frozenset((int, bool, str, tuple, Size))


def _show(v) -> str:
    if isinstance(v, Member):
        return v.name
    if hasattr(v, "name") and hasattr(v, "itemsize"):
        return v.name
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."
