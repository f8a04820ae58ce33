"""`torch.fx.symbolic_trace` and `Tracer`: run a module's `forward` (or a function) on
Proxies and keep the Graph they record. Submodules of `torch.nn` are leaves (one
`call_module` node); parameters read inside `forward` become `get_attr` nodes; other
tensors the program makes are kept on the module as `_tensor_constant<N>`.

The `__torch_function__` protocol (what routes `torch.relu(proxy)` to the Proxy) is
switched on only while a trace runs, and off again afterwards unless something else had
switched it on (its wrappers cost every later call; see `ember._torch_function`)."""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
from collections.abc import Callable
from types import FunctionType
from typing import Any

from .. import _torch_function as _tf
from .graph import Graph
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "is_fx_tracing"]

_is_fx_tracing_flag = False
_wrapped_fns_to_patch: dict[tuple[int, str], dict] = {}  # (id(globals), name) -> globals
_HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _is_fx_tracing_flag


class PHBase:
    """A placeholder marker for `concrete_args` (the input stays an input)."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _assert_is_none(value: Any, msg: str) -> None:
    if value is not None:
        raise AssertionError(msg)


def _find_proxy(*objects: Any) -> Proxy | None:
    found: list[Proxy] = []

    def look(x: Any) -> Any:
        if isinstance(x, Proxy) and not found:
            found.append(x)
        return x

    map_aggregate(objects, look)
    return found[0] if found else None


def _create_wrapped_func(orig_fn: Callable) -> Callable:
    """`orig_fn` recorded as one call_function node when a Proxy reaches it."""

    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            out.node.meta["is_wrapped"] = True
            return out
        return orig_fn(*args, **kwargs)

    return wrapped


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """At a module's top level: calls of this module-global function are recorded as
    one call_function node while tracing, not traced through (`torch.fx.wrap('len')`)."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("fn_or_name must be a global function or string name")
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


class _Patcher:
    """Temporary replacements of dict entries and class attributes, undone on exit."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._seen: set[int] = set()

    def patch(self, d: dict, name: str, new: Any) -> None:
        missing = name not in d
        old = d.get(name)
        d[name] = new
        self._undo.append((lambda: d.pop(name, None)) if missing
                          else (lambda: d.__setitem__(name, old)))

    def patch_method(self, cls: type, name: str, new: Any) -> None:
        old = cls.__dict__[name]
        setattr(cls, name, new)
        self._undo.append(lambda: setattr(cls, name, old))

    def visit_once(self, thing: Any) -> bool:
        if id(thing) in self._seen:
            return False
        self._seen.add(id(thing))
        return True

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc) -> None:
        while self._undo:
            self._undo.pop()()


class Tracer(TracerBase):
    """Symbolic tracing: `trace(root)` returns the Graph of `root.forward` (or of the
    function `root`). Override `is_leaf_module` to choose which submodules stay calls,
    `create_arg` for what arguments may be."""

    # NOTE: shared by all tracers, as torch's is (the constant a second trace of the same
    # module adds is numbered after those any earlier trace made)
    _qualname_counter: dict[str, int] = collections.defaultdict(int)

    def __init__(self, autowrap_modules: tuple = (math,),
                 autowrap_functions: tuple[Callable, ...] = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_function_ids = {
            id(value) for m in autowrap_modules for name, value in m.__dict__.items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root_module_name = ""
        self.module_stack: collections.OrderedDict = collections.OrderedDict()
        self.num_calls: dict[str, int] = {}

    def get_fresh_qualname(self, prefix: str) -> str:
        """An attribute name `<prefix><N>` the root does not have yet."""
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    def create_arg(self, a: Any) -> Any:
        """Parameters, buffers and submodules of the root become get_attr nodes; other
        tensors become `_tensor_constant<N>` attributes of the root."""
        from .._tensor import Tensor
        from ..nn import Module, Parameter

        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        elif isinstance(a, Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(e) for e in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        """Whether `m` is recorded as one call_module node (modules of torch.nn are, but
        Sequential) rather than traced through."""
        from ..nn import Sequential

        module = type(m).__module__
        return (module.startswith(("ember.nn", "torch.nn", "torch.ao.nn"))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod: Any) -> str:
        """The dotted path of submodule `mod` in the root."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Any, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A submodule call while tracing: a call_module node for a leaf, otherwise its
        forward traced inline."""
        name = self.path_of_module(m)
        calls = self.num_calls.get(name, 0)
        key = f"{name}@{calls}" if calls > 0 else name
        self.module_stack[key] = (name, type(m))
        self.num_calls[name] = calls + 1
        try:
            if not self.is_leaf_module(m, name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A module attribute read while tracing: a root parameter becomes (one)
        get_attr node."""
        from .._tensor import Tensor
        from ..nn import Parameter

        def proxy_for(collection) -> Proxy | None:
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None if not self.param_shapes_constant else \
                            (lambda node, n=n: ParameterProxy(self, node, n, attr_val))
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, Parameter):
            found = proxy_for(self.root.named_parameters())
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = proxy_for(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict | tuple | None = None) -> tuple:
        """The placeholders for `root_fn`'s parameters (and `concrete_args` fixed)."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names_iter) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(n, concrete_args, sig, fn) for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & _HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), None, sig, fn))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), None, sig, fn))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name: str, concrete_args: dict | None, sig, fn) -> Any:
        if concrete_args is not None and name in concrete_args:
            x = concrete_args[name]
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if isinstance(x, PHBase):
                return out
            from .. import _assert

            if type(x) in (bool, int, float, str, complex):
                _assert(out == x,
                        f"{name} has been specialized to have value {x} but got another value")
            elif x is None:
                self.create_proxy("call_function", _assert_is_none, (
                    out, f"{name} has been specialized to have value None but got another "
                    "value"), {})
            else:
                import warnings

                warnings.warn(f"Was not able to add assertion to guarantee correct input {name} "
                              "to specialized function. It is up to the user to make sure that "
                              "your inputs match the inputs you specialized the function with.",
                              stacklevel=2)
            return x
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=_annotations(fn).get(name, None))

    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Graph:
        """The Graph of `root.forward` (a Module) or of the function `root`."""
        global _is_fx_tracing_flag
        from ..nn import Module

        was_tracing = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = Module()
                fn = root
            self.graph = Graph(tracer_cls=type(self))
            self.tensor_attrs: dict = {}
            self._collect_tensor_attrs(self.root, [])
            if not isinstance(fn, FunctionType):
                raise AssertionError(f"Expected FunctionType, got {type(fn)}")
            with protocol_on(self.graph):
                fn_globals = fn.__globals__
                fn, args = self.create_args_for_root(fn, isinstance(root, Module),
                                                     concrete_args)
                self._run(fn, args, fn_globals)
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = was_tracing
        return self.graph

    def _collect_tensor_attrs(self, m, prefix: list[str]) -> None:
        from .._tensor import Tensor

        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[v] = ".".join(prefix + [k])
        for k, v in m.named_children():
            self._collect_tensor_attrs(v, prefix + [k])

    def _run(self, fn: Callable, args: list, fn_globals: dict) -> None:
        from ..nn import Module

        cache: dict[str, Proxy] = {}
        orig_getattr, orig_call = Module.__getattr__, Module.__call__
        tracer = self

        @functools.wraps(orig_getattr)
        def module_getattr_wrapper(mod, attr: str) -> Any:
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        @functools.wraps(orig_call)
        def module_call_wrapper(mod, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                            tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        with _Patcher() as patcher:
            patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
            patcher.patch_method(Module, "__call__", module_call_wrapper)
            for (_, name), globals_ in _wrapped_fns_to_patch.items():
                if name not in globals_ and hasattr(builtins, name):
                    orig = getattr(builtins, name)
                else:
                    orig = globals_[name]
                patcher.patch(globals_, name, _create_wrapped_func(orig))
            _patch_factories(patcher)
            _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
            ann = _annotations(inspect.unwrap(fn))
            self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                             type_expr=ann.get("return", None))


class protocol_on:
    """The `__torch_function__` protocol on while Proxies are about (a trace, a
    Transformer run); off again afterwards unless it was on before, with the graph's
    call targets turned back into the plain functions they wrap."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __enter__(self) -> None:
        self.was_active = _tf.is_active()
        _tf.activate()

    def __exit__(self, *exc) -> None:
        if self.was_active or not _tf.is_active():
            return
        _tf.deactivate()
        for node in self.graph.nodes:
            inner = getattr(node.target, "_torch_function_wrapped", None)
            if node.op == "call_function" and inner is not None:
                node.target = inner


def _patch_factories(patcher: _Patcher) -> None:
    """Factories (`torch.zeros(x.shape)`, `torch.arange(x.size(1))`) record a call when
    a Proxy is among their arguments, as torch's do: ember's hand only modes their calls
    (their arguments are data), so while tracing they are wrapped here."""
    import ember
    from ember.overrides import _MODES_ONLY

    for name in _MODES_ONLY:
        fn = ember.__dict__.get(name)
        if fn is not None:
            patcher.patch(ember.__dict__, name, _record_with_proxies(fn))


def _record_with_proxies(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        return proxy.tracer.create_proxy("call_function", fn, args, kwargs)

    return call


def _autowrap_check(patcher: _Patcher, frame_dict: dict, function_ids: set[int]) -> None:
    """Patch the functions of `frame_dict` listed in `function_ids` (math's) to record."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


def _annotations(fn: Callable) -> dict:
    """`fn`'s annotations; ember's own modules postpone theirs (strings), which are
    evaluated here so that a traced `nn.Linear` reads `input : torch.Tensor` as torch's."""
    ann = getattr(fn, "__annotations__", {})
    if (getattr(fn, "__module__", None) or "").startswith("ember.") and \
            any(isinstance(v, str) for v in ann.values()):
        try:
            return inspect.get_annotations(fn, eval_str=True)
        except Exception:  # noqa: BLE001 - an annotation naming what is not importable
            return ann
    return ann


def _patch_function(fn: FunctionType, nargs: int) -> FunctionType:
    """`fn` taking its *args / **kwargs as plain positional parameters, so that each
    becomes one placeholder."""
    co = fn.__code__
    co_flags = co.co_flags & ~_HAS_VARSTUFF
    new_code = co.replace(co_argcount=nargs, co_kwonlyargcount=0, co_flags=co_flags)
    return FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                        fn.__closure__)


def symbolic_trace(root: Any, concrete_args: dict[str, Any] | None = None) -> Any:
    """Trace a Module or function into a GraphModule whose generated `forward` does what
    the original does (for programs without data-dependent control flow)."""
    from ..nn import Module
    from .graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
