"""`torch.fx.Node`: one operation of a Graph (its opcode, target, arguments and users),
linked into the graph's doubly linked node list, and `map_arg` / `map_aggregate`, which
walk the nested arguments a node holds."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from . import _names
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

Target = Any
Argument = Any

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr",
            "output", "root")
_side_effectful: set = set()
_SIDE_EFFECT_NAMES = frozenset((
    "torch._assert", "torch._assert_async", "torch._C._set_grad_enabled",
    "torch.amp.autocast_mode._enter_autocast", "torch.amp.autocast_mode._exit_autocast"))
_RANDOM_NAMES = frozenset(f"torch.{n}" for n in (
    "bernoulli", "multinomial", "normal", "poisson", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm"))


def has_side_effect(fn: Callable) -> Callable:
    """Mark `fn` as having side effects: dead code elimination keeps its calls."""
    _side_effectful.add(fn)
    return fn


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply `fn` to every leaf of the nested tuples, lists, dicts and slices in `a`."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply `fn` to every Node in the nested argument structure `a`."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _type_repr(obj: Any) -> str:
    """A type as an annotation names it (`torch.Tensor`), anything else by repr."""
    if isinstance(obj, type):
        from .._tensor import Tensor

        if obj is Tensor:
            return "torch.Tensor"
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{_names.torch_module(obj.__module__)}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg: Any) -> str:
    """An argument as `str(graph)` shows it (nodes as `%name`)."""
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return "%" + str(arg) if isinstance(arg, Node) else str(arg)


class Node:
    """A call site in a Graph. `op` is one of placeholder (an input), get_attr (a parameter
    or buffer of the module), call_function, call_method, call_module and output; `target`
    is what is called (a callable, a method name or a module path); `args` / `kwargs` may
    hold other Nodes, whose `users` record this node."""

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        if op not in _OPCODES:
            raise AssertionError(f"Unknown opcode: {op}")
        if op in ("call_method", "call_module") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected for {op}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = immutable_dict()
        self.__update_args_kwargs(args, kwargs)
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn: Callable | None = None
        self.meta: dict[str, Any] = {}

    # -- the linked list ----------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The node after this one in the graph."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move `x` to just before this node."""
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move `x` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        # (an erased node keeps its links, so an iteration standing on it goes on)

    # -- arguments and users ------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The positional arguments (setting them updates the users of the nodes in them)."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments (setting them updates the users of the nodes in them)."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct Nodes among args and kwargs, in the order they appear."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set positional argument `idx`."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set keyword argument `key`."""
        self.kwargs = {**self.kwargs, key: arg}

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert a positional argument at `idx`."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def __update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self)
        self._input_nodes = {}
        found: dict[Node, None] = {}

        def collect(n: Node) -> Node:
            found.setdefault(n)
            return n

        self._args = map_arg(new_args, collect)
        self._kwargs = map_arg(new_kwargs, collect)
        self._input_nodes = found
        for n in found:
            n.users.setdefault(self)

    _update_args_kwargs = __update_args_kwargs

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node use `replace_with` instead; returns the users
        changed. `delete_user_cb(user)` False keeps that user on this node."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     "meta keys")
            replace_with.meta.update(self.meta)
        to_process = list(self.users)
        skipped = []
        for user in to_process:
            if user is replace_with or not delete_user_cb(user):
                skipped.append(user)
                continue
            user.replace_input_with(self, replace_with)
        return [n for n in to_process if n not in skipped]

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Use `new_input` wherever this node's arguments held `old_input`."""

        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether removing this node could change what the program does: inputs and
        outputs, asserts, `operator.setitem`, functions marked `has_side_effect`, random
        draws, modules marked `_is_impure`. As torch's, in-place method
        calls do not count."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            import operator

            if self.target in _side_effectful or self.target is operator.setitem:
                return True
            name = _names.qualified_name(self.target) if callable(self.target) else ""
            # (random draws count whatever `impure_random` says: it only concerns ops
            # marked nondeterministic-seeded, which ember's functions are not)
            return name in _SIDE_EFFECT_NAMES or name in _RANDOM_NAMES
        if self.op == "call_module":
            owner = self.graph.owning_module
            if owner is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(owner.get_submodule(self.target), "_is_impure", False)
        return False

    @property
    def stack_trace(self) -> str | None:
        """Where in the traced program this node was recorded (None: not recorded)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # -- printing -----------------------------------------------------------------------

    def __repr__(self) -> str:
        return self._repr_fn(self) if self._repr_fn else self.name

    @staticmethod
    def _pretty_print_target(target: Target) -> str:
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None)
        if name is not None and module == "builtins":
            return f"builtins.{name}"
        if name is not None and module in ("_operator", "operator"):
            return f"operator.{name}"
        return _names.qualified_name(target)

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """One line describing this node, as `str(graph)` lists it."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            arg_str = self.target
            # (an empty list, as str(graph) passes, still lists the placeholder: torch's)
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default}")
        if self.op == "get_attr":
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

