"""`torch.fx.GraphModule`: a Module whose `forward` is Python generated from a Graph.
It holds the submodules, parameters and constants the graph's call_module and get_attr
nodes name (shared with the module traced, not copied); `recompile()` regenerates the
code after the graph is edited."""

from __future__ import annotations

import copy
import linecache
from typing import Any

from .._tensor import Tensor
from ..nn import Module, Parameter
from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_counter = [0]


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Install `from_module`'s attribute at dotted path `target` on `to_module` (plain
    Modules stand for the parents; a plain tensor becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # (a parent of it is already installed)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _exec_forward(src: str, globals_: dict[str, Any]):
    """Compile the generated source under a fake file name (so tracebacks and
    `inspect.getsource` show the generated lines)."""
    _counter[0] += 1
    key = f"<eval_with_key>.{_counter[0]}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)
    return globals_["forward"]


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line if line.strip() else ""
                                     for line in lines)


def _print_readable(module: GraphModule, name: str, print_output: bool) -> str:
    src = module.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
    code = _addindent(f"class {name}(torch.nn.Module):\n" + src, 4)
    subs = [""] + [_print_readable(child, child_name, False)
                   for child_name, child in module.named_children()
                   if isinstance(child, GraphModule)]
    out = code + _addindent("\n".join(subs), 4)
    if print_output:
        print(out)
    return out


class GraphModule(Module):
    """A Module running the code generated from `graph`. `root` (a Module, or a dict of
    path -> object) supplies what the graph's get_attr / call_module nodes name."""

    def __new__(cls, *args: Any, **kwargs: Any):
        # NOTE: each instance gets a class of its own, since `forward` is set on the class
        # (as torch does; a recompile of one GraphModule leaves the others alone).
        if getattr(cls, "_graph_module_impl", False):
            return super().__new__(cls)
        impl = type("GraphModuleImpl", (cls,), {"_graph_module_impl": True})
        return super().__new__(impl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self.meta: dict[str, Any] = {}

    @property
    def graph(self) -> Graph:
        """The Graph this module runs; assigning one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated Python source of `forward`."""
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate `forward` from the graph (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _exec_forward(python_code.src, python_code.globals)
        return python_code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install `m` at dotted path `target`, making plain Modules for missing parents;
        False when a parent on the path is not a Module."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at `target`; False when there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod: Module = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no call_module / get_attr node reaches."""
        used: list[str] = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used += [".".join(atoms[:i]) for i in range(1, len(atoms) + 1)]
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, **kwargs: Any) -> str:
        """The module (and GraphModule children) as class definitions, with notes on
        where nodes came from and the shapes recorded on them."""
        return _print_readable(self, self._get_name(), print_output)

    def __str__(self) -> str:
        return "\n".join([super().__repr__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def __deepcopy__(self, memo: dict) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake = Module()
        fake.__dict__ = copy.deepcopy(
            {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}, memo)
        # NOTE: the copy shares the original's class and, as in torch, renames it to
        # GraphModule (the default name)
        GraphModule.__init__(res, fake, copy.deepcopy(self.graph, {}))
        for k, v in fake.__dict__.items():
            if k not in res.__dict__:
                res.__dict__[k] = v
        return res

    def __reduce__(self):
        # NOTE: pickled as its code and state (as torch does); loading regenerates the
        # graph by tracing that code with every submodule a leaf.
        # (the class name is not kept: torch's copy is a `GraphModule` again)
        body = {k: v for k, v in self.__dict__.items() if k != "_graph"}
        python_code = self.recompile()
        return (reduce_graph_module, (body, _import_block(python_code.globals)))

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res


def _import_block(globals_: dict[str, Any]) -> str:
    """Import lines binding the names generated code uses beyond `torch`."""
    from ._names import torch_globals

    skip = set(torch_globals())
    lines = []
    for name, obj in globals_.items():
        if name in skip:
            continue
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "_name", None)
        module = getattr(obj, "__module__", None)
        if module and qual and "<" not in qual:
            lines.append(f"from {module} import {qual.split('.')[0]} as {name}")
    return "\n".join(lines) + "\n" if lines else ""


def reduce_graph_module(body: dict[str, Any], import_block: str) -> GraphModule:
    """Rebuild a pickled GraphModule from its state and generated code."""
    from ._names import torch_globals
    from ._symbolic_trace import Tracer

    globals_ = torch_globals()
    exec(compile(import_block, "<fx imports>", "exec"), globals_)
    forward = _exec_forward(body["_code"], globals_)

    class _CodeOnlyModule(Module):
        def __init__(self, state: dict[str, Any]) -> None:
            super().__init__()
            self.__dict__ = state

    _CodeOnlyModule.forward = forward

    class _KeepModules(Tracer):
        def is_leaf_module(self, m, qualname: str) -> bool:
            return True

    com = _CodeOnlyModule(dict(body))
    name = body.get("_graphmodule_cls_name", "GraphModule")
    graph = _KeepModules().trace(com)
    gm = GraphModule(com, graph, class_name=name)
    for k, v in body.items():
        if k not in gm.__dict__ and k != "_graphmodule_cls_name":
            gm.__dict__[k] = v
    return gm
