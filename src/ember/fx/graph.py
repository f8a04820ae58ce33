"""`torch.fx.Graph`: the node list of a traced program, the calls that add nodes
(`placeholder`, `call_function`, ... at the insert point), edits (`erase_node`,
`node_copy`, `graph_copy`, `eliminate_dead_code`), checks (`lint`) and printing."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from . import codegen
from .node import Node, Target, map_arg

__all__ = ["Graph", "PythonCode"]

PythonCode = codegen.PythonCode
_LEGAL_OPS = ("call_function", "call_method", "get_attr", "call_module", "placeholder",
              "output")


class _InsertPoint:
    """`with graph.inserting_before(n):` new nodes go before `n` inside the block."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        self.graph._insert = self.orig_insert


class _node_list:  # noqa: N801 (torch's name)
    """`graph.nodes`: a live view of the node list (erasing while iterating is safe)."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        return _walk(self.graph._root, self.direction)

    def __reversed__(self) -> Iterator[Node]:
        return _node_list(self.graph, "_prev" if self.direction == "_next" else "_next") \
            .__iter__()


def _walk(root: Node, direction: str) -> Iterator[Node]:
    cur = getattr(root, direction)
    while cur is not root:
        if not cur._erased:
            yield cur
        cur = getattr(cur, direction)


class Graph:
    """The intermediate representation torch.fx traces programs into: a list of Nodes
    (inputs, calls, one output), each naming the values it uses."""

    def __init__(self, owning_module=None, tracer_cls: type | None = None,
                 tracer_extras: dict | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict[str, int] = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = codegen.Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to (None: a free graph)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _node_list:
        """The nodes in order, as a live view."""
        return _node_list(self)

    def find_nodes(self, *, op: str, target: Target = None, sort: bool = True) -> list[Node]:
        """The nodes with this opcode (and target, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- building -----------------------------------------------------------------------

    def _target_to_str(self, target: Target) -> str:
        if callable(target):
            op = target.__name__
        else:
            op = target
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return codegen.snake_case(op)

    def create_node(self, op: str, target: Target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """A new node at the current insert point (the end unless `inserting_*` says)."""
        if op not in _LEGAL_OPS:
            raise AssertionError(f"Unknown opcode: {op}")
        args = () if not args else args
        if not isinstance(args, tuple):
            raise AssertionError(f"args must be a tuple, got {type(args)}")
        kwargs = {} if not kwargs else kwargs
        if not isinstance(kwargs, dict):
            raise AssertionError(f"kwargs must be a dict, got {type(kwargs)}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the graph (`default_value`: the parameter's default)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """A read of a parameter, buffer or attribute of the owning module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """A call of the owning module's submodule at `module_name`."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """A call of method `method_name` on `args[0]`."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None,
                      name: str | None = None) -> Node:
        """A call of a free function (`torch.relu`, `operator.add`)."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """The graph's result."""
        return self.create_node(op="output", target="output", args=(result,),
                                type_expr=type_expr)

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """Within the `with` block, new nodes go just before `n` (the start when None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """Within the `with` block, new nodes go just after `n` (the end when None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # -- editing ------------------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node no other node uses."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            import warnings

            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """A copy of `node` (of this or another graph) here, its argument nodes mapped
        through `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Any:
        """Copy every node of `g` but its output into this graph (`val_map`: g's node ->
        the copy, filled in); returns what g's output would return, in copies."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict) -> Graph:
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        if output_vals is not None:
            rv, old_out = output_vals
            new_out = g.output(rv, type_expr=getattr(old_out, "type", None))
            new_out.meta = copy.copy(old_out.meta)
        return g

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Erase the nodes whose values nothing uses and that have no side effects
        (`Node.is_impure`); returns whether anything was erased."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: every argument a node of this graph defined
        earlier, names unique, targets present in the owning module."""
        seen_names: set[str] = set()
        seen_values: set[Node] = set()
        for node in self.nodes:
            if node.op not in _LEGAL_OPS:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but "
                        "was used as an argument! If you are copying nodes from another graph, "
                        "make sure to use ``arg_transform`` on node_copy() to remap "
                        f"values\n{self}")
                if arg not in seen_values:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                        f"Please check that Nodes in the graph are topologically ordered\n{self}")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
        if self.owning_module:
            self._lint_targets()

    def _lint_targets(self) -> None:
        from .._runtime import typename as _typename
        from ..nn import Module

        for node in self.nodes:
            if node.op == "call_function" and not callable(node.target):
                raise ValueError(f"Node {node} target {node.target} has type "
                                 f"{_typename(node.target)} but a Callable is expected")
            if node.op != "call_function" and not isinstance(node.target, str):
                raise ValueError(f"Node {node} target {node.target} has type "
                                 f"{_typename(node.target)} but a str is expected")
            if node.op in ("get_attr", "call_module"):
                atoms = node.target.split(".")
                m = self.owning_module
                for i, atom in enumerate(atoms):
                    nxt = getattr(m, atom, None)
                    seen = ".".join(atoms[:i])
                    if nxt is None:
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {seen}")
                    if node.op == "call_module" and not isinstance(nxt, Module):
                        raise RuntimeError(f"Node {node} target {node.target} {atom} of "
                                           f"{seen} does not reference an nn.Module")
                    m = nxt

    # -- printing -----------------------------------------------------------------------

    def python_code(self, root_module: str, *, verbose: bool = False,
                    **kwargs: Any) -> PythonCode:
        """The graph as Python source (a `forward` taking `root_module` first)."""
        return codegen.python_code(self, root_module, verbose)

    def __str__(self) -> str:
        placeholder_names: list[str] = []
        node_strs = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}):"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self) -> None:
        """Print the nodes as a table (needs the `tabulate` package, as torch's does)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be "
                  "found on this machine. Run `pip install tabulate` to install the library.")
            raise
        specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(specs, headers=["opcode", "name", "target", "args", "kwargs"]))
