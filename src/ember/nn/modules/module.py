"""`Module`: the base class of every layer, with PyTorch's registration semantics.

Assigning a `Parameter`, a `Buffer` or a `Module` to an attribute registers it in
`_parameters`, `_buffers` or `_modules` (ordered dicts), which is what makes
`state_dict` keys, `named_parameters` names and `repr` text match PyTorch's.
`__call__` runs `forward` directly unless a hook was registered on the module (or on
every module, by `register_module_forward_hook` & co., at the end of this file).
`Module` inherits its state-dict methods from `_state_dict.py` and its moving and
casting methods (`to`, `float`, `cpu`, ...) from `_conversion.py`.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..._core.memo_seam import memos
from ..._dtype import SCALAR_TYPE_NAMES
from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...autograd.graph import RemovableHandle
from ..parameter import Buffer, Parameter
from ._conversion import _ConversionMixin, _parse_to  # noqa: F401  (_parse_to: re-exported)
from ._state_dict import (  # noqa: F401  (re-exported: they lived here)
    _EXTRA_STATE_KEY_SUFFIX,
    _IncompatibleKeys,
    _StateDictMixin,
)
from .hooks import _BackwardHook, attach_legacy_backward_hooks


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return _tensor_type_name(obj)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def _tensor_type_name(t: Tensor) -> str:
    from ... import _names

    if isinstance(t, Parameter):
        return f"{_names.prefix}.nn.parameter.Parameter"
    return f"{_names.prefix}.{SCALAR_TYPE_NAMES[t.dtype.name]}Tensor"



# How many times train()/eval() changed some module's mode: a pure-mode compile's replay
# (ember.graph.replay) was traced in one mode and is stale once this moves.
mode_changes = [0]
attr_changes = [0]  # attributes set or deleted on any module (`__setattr__`, `__delattr__`)


class Module(_StateDictMixin, _ConversionMixin):
    """Base class for all neural-network modules; subclass it and define `forward`."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}
        d["_hooked"] = False
        d["_is_full_backward_hook"] = None
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- calling -----------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        # NOTE: the hot path. With no hooks registered this is one branch and one call.
        if self._hooked:
            return self._call_with_hooks(args, kwargs)
        if memos.active and self.__class__ in memos.module_types:
            return memos.module_call(self, args, kwargs)
        return self.forward(*args, **kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        compiled = self.__dict__.get("_compiled_call")
        if compiled is not None:  # Module.compile(): the call, hooks included, compiled
            return compiled(*args, **kwargs)
        return self._call_hooks_and_forward(args, kwargs)

    def _call_uncompiled(self, *args, **kwargs):
        """The call as it runs without `compile()` (what a compiled call captures)."""
        return self._call_hooks_and_forward(args, kwargs)

    def _call_hooks_and_forward(self, args: tuple, kwargs: dict):
        for hook_id, hook in [*_global_forward_pre_hooks.items(),
                              *self._forward_pre_hooks.items()]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw = None
        full = self._backward_hooks and self.__dict__.get("_is_full_backward_hook") is not False
        if full or self._backward_pre_hooks or _global_backward_hooks or \
                _global_backward_pre_hooks:
            bw = _BackwardHook(self)
            args = bw.setup_input(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in list(_global_forward_hooks.items()):
                if hook_id in _global_forward_hooks_always_called:
                    try:
                        hook(self, args, None)  # (as PyTorch: never with kwargs here)
                    except Exception as e:
                        warnings.warn("global module forward hook with ``always_call=True`` "
                                      "raised an exception that was silenced as another "
                                      f"error was raised in forward: {e}",
                                      stacklevel=user_stacklevel())
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:
                        warnings.warn(f"forward hook with always_call=True raised an exception "
                                      f"that was silenced as another error was raised in "
                                      f"forward: {e}", stacklevel=user_stacklevel())
            raise
        for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
            if hook_id in self._forward_hooks_with_kwargs or \
                    hook_id in _global_forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if bw is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=user_stacklevel())
            result = bw.setup_output(result)
        if self._backward_hooks and self.__dict__.get("_is_full_backward_hook") is False:
            attach_legacy_backward_hooks(self, args, result, list(self._backward_hooks.values()))
        return result

    def _get_backward_hooks(self) -> list:
        """The full backward hooks a call runs: the global ones, then the module's."""
        if self.__dict__.get("_is_full_backward_hook") is False:  # (its hooks are legacy)
            return list(_global_backward_hooks.values())
        return [*_global_backward_hooks.values(), *self._backward_hooks.values()]

    def _get_backward_pre_hooks(self) -> list:
        """The backward pre-hooks a call runs: the global ones, then the module's."""
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _update_hooked(self) -> None:
        self.__dict__["_hooked"] = bool(
            self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
            or self._backward_pre_hooks or self.__dict__.get("_compiled_call") is not None
        )

    # -- hooks ---------------------------------------------------------------------------

    def _add_hook(self, store: dict, hook: Callable, prepend: bool, extras=()) -> RemovableHandle:
        handle = RemovableHandle(store, extra_dict=list(extras))
        handle._on_remove = self._update_hooked
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        self._update_hooked()
        return handle

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """`hook(module, args)` (or `(module, args, kwargs)`) runs before `forward`."""
        h = self._add_hook(self._forward_pre_hooks, hook, prepend,
                           (self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        return h

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """`hook(module, args, output)` runs after `forward`; a non-None return replaces it."""
        h = self._add_hook(self._forward_hooks, hook, prepend,
                           (self._forward_hooks_with_kwargs, self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        return h

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` runs when the inputs' gradients are known."""
        self._backward_hook_kind(True)
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` runs when the outputs' gradients are known."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: `hook(module, grad_input, grad_output)` sees the gradients of the node
        that made the output (its inputs may be the layer's weight and bias, not the module's
        inputs); `register_full_backward_hook` gives the module's. A call warns (FutureWarning)
        when the two differ."""
        self._backward_hook_kind(False)
        return self._add_hook(self._backward_hooks, hook, False)

    def _backward_hook_kind(self, full: bool) -> None:
        """A module's backward hooks are all full or all legacy, as in PyTorch."""
        kind = self.__dict__.get("_is_full_backward_hook")
        if kind is not None and kind is not full:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full

    # -- registration --------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None,
                        persistent: bool = True) -> None:
        """Register `tensor` as state (saved in `state_dict` unless `persistent=False`)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` under `name` (None leaves a slot that `state_dict` skips)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` as a child under `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}': its Module state "
                f"is missing. Did {type(self).__name__}.__init__ call super().__init__()?"
            )
        p = d["_parameters"]
        if name in p:
            return p[name]
        b = d["_buffers"]
        if name in b:
            return b[name]
        m = d["_modules"]
        if name in m:
            return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        attr_changes[0] += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            _remove_from(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        attr_changes[0] += 1
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in dict.fromkeys(keys) if not k[0].isdigit())

    def __getstate__(self) -> dict:
        """A pickle or deep copy leaves out a `compile()`d call, as torch's does: the copy
        runs uncompiled (compile it again)."""
        state = self.__dict__.copy()
        if state.pop("_compiled_call", None) is not None:
            state["_hooked"] = bool(
                state["_forward_hooks"] or state["_forward_pre_hooks"]
                or state["_backward_hooks"] or state["_backward_pre_hooks"])
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_hooked", False)

    # -- traversal ---------------------------------------------------------------------------

    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at the dotted path `target` (its parent must exist); with `strict`,
        only replace a submodule that is already there."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if hasattr(parent, name):
            if not isinstance(getattr(parent, name), Module):
                raise AttributeError("`" + name + "` is not an nn.Module")
        elif strict:
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- modes and conversions ---------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        if self.training is not mode:
            mode_changes[0] += 1
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's calls in place (`ember.compile`'s arguments): the module
        stays itself (same class, same state_dict keys); calling it runs compiled."""
        from ..._runtime import compile as compile_fn

        self.__dict__["_compiled_call"] = compile_fn(self._call_uncompiled, *args, **kwargs)
        self._update_hooked()

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- printing ----------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text inside this module's `repr` parentheses; override in subclasses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


# The mixins' methods are Module's: name them so (a TypeError about their arguments says
# "Module.to_empty()", as torch's does).
for _mixin in (_StateDictMixin, _ConversionMixin):
    for _name, _fn in vars(_mixin).items():
        if callable(_fn) and hasattr(_fn, "__qualname__"):
            _fn.__qualname__ = f"Module.{_name}"


def _remove_from(name: str, *stores) -> None:
    for s in stores:
        if name in s:
            if isinstance(s, dict):
                del s[name]
            else:
                s.discard(name)


# --- hooks of every module (`register_module_forward_hook` & co., PyTorch's global state) ---
# NOTE: while any is registered, `Module._hooked` is a data descriptor reading True, which
# overrides each module's own flag: every call takes the hooked path, and the graph layer's
# checks (which read `m._hooked`) see every module as hooked. With none, the class has no
# `_hooked` and the per-module flag decides, so the no-hook path costs nothing more.

_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()


class _AllHooked:
    """`Module._hooked` while a global hook exists: True for every module."""

    def __get__(self, obj, cls=None):
        return True if obj is not None else self

    def __set__(self, obj, value) -> None:
        obj.__dict__["_hooked"] = value


def _has_any_global_hook() -> bool:
    return bool(_global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_pre_hooks or _global_backward_hooks)


def _refresh_global_hooked() -> None:
    installed = isinstance(Module.__dict__.get("_hooked"), _AllHooked)
    if _has_any_global_hook() and not installed:
        Module._hooked = _AllHooked()
    elif installed and not _has_any_global_hook():
        del Module._hooked
    mode_changes[0] += 1  # (a replay traced before the change is stale)


def _add_global(store: dict, hook: Callable, extras=()) -> RemovableHandle:
    handle = RemovableHandle(store, extra_dict=list(extras))
    handle._on_remove = _refresh_global_hooked
    store[handle.id] = hook
    _refresh_global_hooked()
    return handle


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, args)` runs before every module's `forward` (before its own pre-hooks);
    a non-None return replaces the positional arguments."""
    return _add_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """`hook(module, args, output)` (or `(module, args, kwargs, output)`) runs after every
    module's `forward` (before its own hooks); a non-None return replaces the output.
    With `always_call`, it also runs when `forward` raises."""
    h = _add_global(_global_forward_hooks, hook,
                    (_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called))
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, grad_output)` runs for every module when its outputs' gradients are
    known (before its own backward pre-hooks); a non-None return replaces them."""
    return _add_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, grad_input, grad_output)` runs for every module when its inputs'
    gradients are known (before its own backward hooks)."""
    return _add_global(_global_backward_hooks, hook)
