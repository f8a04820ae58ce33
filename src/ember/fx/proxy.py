"""`torch.fx.Proxy`: the stand-in value a traced program computes with. Every operator,
method call, attribute read and public ember function applied to it (the last through
`__torch_function__`) records a Node instead of computing; `TracerBase` turns the
arguments of those calls into graph arguments."""

from __future__ import annotations

import copy
import dis
import inspect
import operator
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

from .. import _torch_function as _tf
from . import _names
from .codegen import magic_methods, reflectable_magic_methods
from .graph import Graph
from .node import Node, Target

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute",
           "ParameterProxy"]


class TraceError(ValueError):
    """A traced program did something a symbolic value cannot do (branch on it)."""


class TracerBase:
    """Records calls on Proxies into `self.graph`."""

    graph: Graph
    check_mutable_operations: bool = False
    trace_asserts: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Add a node to the graph (a hook tracers override to annotate nodes); a node
        recorded inside submodule calls notes them (`meta['nn_module_stack']`)."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        stack = getattr(self, "module_stack", None)
        if stack:
            node.meta["nn_module_stack"] = copy.copy(stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for `node`'s value."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record a call (its arguments through `create_arg`) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn else self.proxy(node)

    def create_arg(self, a: Any) -> Any:
        """A value as a graph argument: Proxies become their nodes, containers are
        mapped, plain constants stay; anything else is refused."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*[self.create_arg(e) for e in a])
            return type(a)([self.create_arg(e) for e in a])
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, _base_types()) or a is None or a is ...:
            return a
        import enum

        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """`bool(proxy)`: refused (the branch taken would depend on the traced value)."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator:
        """`iter(proxy)`: refused (its length is not known while tracing)."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in "
            "a loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can "
            "be traced, and check out the Proxy docstring for help troubleshooting Proxy "
            "iteration errors")

    def keys(self, obj: Proxy) -> Proxy:
        """`proxy.keys()`, recorded as a method call (so `**proxy` works)."""
        return Attribute(obj, "keys")()


def _base_types() -> tuple:
    from .._device import device
    from .._dtype import dtype
    from .._layout import layout, memory_format
    from .._tensor import Tensor

    return (str, int, float, bool, complex, dtype, Tensor, device, layout, memory_format)


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made for a node of an existing graph: appends to it."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph


class Proxy:
    """A value of the program being traced: operations on it add nodes to the graph."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node
        # NOTE: a Proxy made by hand (graph building with Proxies, outside a trace) needs
        # `torch.relu(proxy)` to reach `__torch_function__`: the protocol goes on for good
        # then, as when a program defines a tensor-like type; a trace turns it off after.
        _tf.activate()

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # (attribute reads record `getattr` only when used: a method call records the call)
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        # NOTE: `a, b = proxy` unpacks into getitems (the bytecode says how many), as
        # torch's Proxy does; any other iteration is refused.
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        inst = insts[bisect_left(insts, frame.f_lasti, key=lambda x: x.offset)]
        if inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Proxy:
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict[TracerBase, None] = {}

        def find_tracer(a: Any) -> Any:
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a

        from .node import map_aggregate

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying "
                               f"to trace operations {orig_method}")
        tracer = next(iter(tracers))
        from ..overrides import is_tensor_method_or_property

        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        op, target, args, kwargs = _names.handover(orig_method, args, kwargs)
        if op == "call_method":
            return tracer.create_proxy(op, target, args, kwargs)
        return tracer.create_proxy(op, target, args, kwargs,
                                   name=tracer.graph._target_to_str(_names.call_name(target)))


class Attribute(Proxy):
    """`proxy.name`: a `getattr` node once the value is used, a method call when called."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter read while tracing with `param_shapes_constant=True`: its shape, size,
    dim and numel are the parameter's own (constants), not recorded."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Any) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self) -> Any:
        # (no `dim`: torch's takes none either, and `w.size(1)` is refused the same way)
        return self.param.size()

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _install_magic(name: str) -> None:
    target = getattr(operator, name)

    def impl(*args: Any) -> Proxy:
        return args[0].tracer.create_proxy("call_function", target, args, {})

    impl.__name__ = name
    setattr(Proxy, f"__{name.strip('_')}__", impl)


def _install_reflected(name: str) -> None:
    target = getattr(operator, name)

    def impl(self: Proxy, rhs: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = f"__r{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _name in magic_methods:
    if hasattr(operator, _name):
        _install_magic(_name)
for _name in reflectable_magic_methods:
    if hasattr(operator, _name):
        _install_reflected(_name)
