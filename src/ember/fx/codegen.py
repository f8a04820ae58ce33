"""Graph -> Python source: the `forward` a GraphModule runs and prints (`gm.code`),
written the way torch.fx writes it (operators as operators, each value freed after its
last use with `name = None`)."""

from __future__ import annotations

import builtins
import keyword
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from . import _names
from .node import Node, _type_repr

_illegal_names: dict[str, Any] = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)  # (a name never shadows a builtin)
_ORIGIN_TYPES = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                 frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006
_illegal_char = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake = re.compile(r"(?<=[a-z])([A-Z])")

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}"}


def snake_case(s: str) -> str:
    """`pascalCase` -> `pascal_case`, as node names are made from targets."""
    return _snake.sub(r"_\1", s).lower()


class Namespace:
    """Unique names for objects: each object one name, no name twice, and no builtin or
    keyword shadowed (a candidate `getattr` becomes `getattr_1`)."""

    def __init__(self) -> None:
        self._obj_to_name: dict[Any, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: Any) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj: Any, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)


def format_target(base: str, target: str) -> str:
    """`self.layer1.conv` for a dotted module path (`getattr(...)` for odd parts)."""
    r = base
    for e in target.split("."):
        r = f'getattr({r}, "{e}")' if not e.isidentifier() else f"{r}.{e}"
    return r


@dataclass
class PythonCode:
    """Generated source and the globals it runs with."""

    src: str
    globals: dict[str, Any]


_DTYPE_ABBRS = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _meta_annotation(node: Node) -> str:
    """`: "f32[2, 3]"`, from the tensor a node was seen to produce (ShapeProp's record)."""
    from .._tensor import Tensor

    meta = node.meta.get("val", node.meta.get("tensor_meta", node.meta.get("example_value")))
    if isinstance(meta, Tensor) or (isinstance(meta, tuple) and hasattr(meta, "_fields")
                                    and "shape" in meta._fields and "dtype" in meta._fields):
        dtype = _DTYPE_ABBRS.get(str(meta.dtype).split(".")[-1], str(meta.dtype))
        shape = ", ".join(str(d) for d in meta.shape)
        return f': "{dtype}[{shape}]"'
    return ""


def _stack_summary(stack_trace: str | None) -> str:
    """`File: f.py:3 in forward, code: ...` (the last frame), as verbose code notes."""
    if stack_trace:
        lines = stack_trace.strip().split("\n")
        pattern = re.compile(r'^File "(.+)", line (\d+), in (.+)$')
        for idx in range(len(lines) - 2, -1, -1):
            m = pattern.match(lines[idx].strip())
            if m:
                return (f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: "
                        f"{lines[idx + 1].strip()}")
    return "No stacktrace found for following nodes"


def _arg_repr(arg: Any) -> str:
    from .._tensor import Tensor

    if isinstance(arg, Node):
        return repr(arg)
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        return f"{_names.qualified_name(type(arg))}{tuple(arg)!r}"
    if isinstance(arg, Tensor):
        return f"torch.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
    if isinstance(arg, tuple):
        if len(arg) == 1:
            return f"({_arg_repr(arg[0])},)"
        return "(" + ", ".join(_arg_repr(a) for a in arg) + ")"
    if isinstance(arg, list):
        return "[" + ", ".join(_arg_repr(a) for a in arg) + "]"
    if isinstance(arg, slice):
        return f"slice({_arg_repr(arg.start)}, {_arg_repr(arg.stop)}, {_arg_repr(arg.step)})"
    return repr(arg)


def _format_args(args: tuple, kwargs: dict) -> str:
    out = [_arg_repr(a) for a in args]
    out += [f"{k} = {_arg_repr(v)}" for k, v in kwargs.items()]
    return ", ".join(out)


def python_code(graph, root_module: str, verbose: bool = False) -> PythonCode:
    """The `forward` source of `graph`, calling modules and attributes on `root_module`
    (`verbose`: with where each node came from and the shapes ShapeProp recorded)."""
    namespace = Namespace()
    saved = {}
    for node in graph.nodes:
        saved[node] = node._repr_fn
        node._repr_fn = lambda n: namespace.create_name(n.name, n)
    try:
        return _gen(graph, list(graph.nodes), root_module, namespace, verbose)
    finally:
        for node, fn in saved.items():
            node._repr_fn = fn


def _gen(graph, nodes: list[Node], root_module: str, namespace: Namespace,
         verbose: bool) -> PythonCode:
    globals_ = _names.torch_globals()
    for name in globals_:
        namespace.create_name(name, globals_[name])
    free_vars: list[str] = []
    body: list[str] = []
    return_annotation = [""]
    wrapped_fns: dict[str, None] = {}

    def add_global(obj: Any, hint: str | None = None) -> str:
        qual = _names.qualified_name(obj) if callable(obj) else None
        if qual is not None and qual.startswith("torch."):
            return qual
        name = namespace.create_name(hint or qual, obj)
        globals_.setdefault(name, obj)
        return name

    last_use: dict[Node, Node] = {}
    to_free: dict[Node, list[Node]] = {}
    for node in reversed(nodes):
        for inp in node._input_nodes:
            if inp not in last_use:
                last_use[inp] = node
                to_free.setdefault(node, []).append(inp)

    def free(user: Node) -> None:
        if user.op == "placeholder":
            return
        if user.op == "output":
            body.append("\n")
            return
        dead = to_free.get(user, [])
        if len(user.users) == 0:
            dead = dead + [user]
        if dead:
            body.append(f";  {' = '.join([repr(n) for n in dead] + ['None'])}\n")
        else:
            body.append("\n")

    def type_repr(o: Any) -> str:
        """An annotation as code: globals for what is not torch's (`typing_List[int]`)."""
        if o == ():
            return "()"
        typename = _type_repr(o)
        if isinstance(o, types.UnionType) and "|" in typename:
            return "|".join(type_repr(a) for a in typing.get_args(o))
        origin = getattr(o, "__origin__", None)
        if origin is not None:
            if isinstance(o, typing._GenericAlias):  # (list[int] and List[int] alike)
                origin = _ORIGIN_TYPES.get(origin, origin)
            origin_name = add_global(origin, _type_repr(origin))
            type_args = typing.get_args(o)
            if type_args:
                return f"{origin_name}[{','.join(type_repr(a) for a in type_args)}]"
            return origin_name
        return add_global(o, typename)

    prev_summary: list[str | None] = [None]
    for node in nodes:
        annot = "" if node.type is None else f" : {type_repr(node.type)}"
        if verbose:
            annot = _meta_annotation(node) or annot
            if node.op not in ("placeholder", "output"):
                summary = f"\n# {_stack_summary(node.stack_trace)}\n"
                if summary != prev_summary[0]:
                    prev_summary[0] = summary
                    body.append(summary)
        if node.op == "placeholder":
            default = "" if not node.args else f" = {_arg_repr(node.args[0])}"
            free_vars.append(f"{node.target}{annot}{default}")
            raw = node.target.replace("*", "")
            if raw != repr(node):
                body.append(f"{repr(node)} = {raw}\n")
            continue
        if node.op == "call_method":
            method = format_target(_arg_repr(node.args[0]), node.target)
            body.append(f"{repr(node)}{annot} = {method}"
                        f"({_format_args(node.args[1:], node.kwargs)})")
        elif node.op == "call_function":
            mod, name = getattr(node.target, "__module__", ""), getattr(node.target, "__name__", "")
            if mod in ("_operator", "operator") and name in magic_methods:
                body.append(f"{repr(node)}{annot} = "
                            + magic_methods[name].format(*(_arg_repr(a) for a in node.args)))
            elif mod in ("_operator", "operator") and name in inplace_methods:
                body.append(inplace_methods[name].format(*(_arg_repr(a) for a in node.args))
                            + f";  {repr(node)}{annot} = {_arg_repr(node.args[0])}")
            else:
                global_name = add_global(node.target)
                if global_name == "getattr" and len(node.args) == 2 \
                        and isinstance(node.args[1], str) and node.args[1].isidentifier():
                    body.append(f"{repr(node)}{annot} = "
                                f"{format_target(_arg_repr(node.args[0]), node.args[1])}")
                else:
                    body.append(f"{repr(node)}{annot} = {global_name}"
                                f"({_format_args(node.args, node.kwargs)})")
                    if node.meta.get("is_wrapped", False):
                        wrapped_fns.setdefault(global_name)
        elif node.op == "call_module":
            body.append(f"{repr(node)}{annot} = {format_target(root_module, node.target)}"
                        f"({_format_args(node.args, node.kwargs)})")
        elif node.op == "get_attr":
            body.append(f"{repr(node)}{annot} = {format_target(root_module, node.target)}")
        elif node.op == "output":
            if node.type is not None:
                return_annotation[0] = f" -> {type_repr(node.type)}"
            body.append(f"return {_arg_repr(node.args[0])}")
        else:
            raise NotImplementedError(f"node: {node.op} {node.target}")
        free(node)
    if not body:
        body.append("pass\n")
    wrap_stmts = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")' for name in wrapped_fns)
    if not free_vars or free_vars[0] != "self":
        free_vars.insert(0, "self")
    prologue = f"def forward({', '.join(free_vars)}){return_annotation[0]}:"
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)
