"""The `__torch_function__` protocol: how a Tensor subclass, a tensor-like object or a
TorchFunctionMode takes over a call of ember's public API (PyTorch's override protocol).

PyTorch checks every public function and Tensor method for overriding arguments. ember pays
that only once something could override: until the first Tensor subclass with a
`__torch_function__` of its own is defined (or a TorchFunctionMode entered, or a tensor-like
object reaches a public function), the public callables are the ops themselves. `activate()`
then replaces each with a dispatching wrapper (`ember.overrides` installs them), which checks
its arguments and hands the call to the highest-priority override:

- a mode on the stack sees every call first, with itself popped while it runs;
- otherwise each overriding argument's type, subclasses before their bases, left to right,
  until one returns something other than NotImplemented.

`Tensor.__torch_function__` (the default) runs the call with subclass dispatch off and
converts Tensor results to the subclass. The switches are process-wide (PyTorch's are
per thread).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

_modes: list = []  # the TorchFunctionMode stack, innermost last
_off = [0, 0]  # nesting depths: [subclass dispatch off, all dispatch off]
_installer: list[Callable[[], None]] = []  # set by ember.overrides: wraps the public API
_uninstaller: list[Callable[[], None]] = []  # and puts it back
_active = [False]
_base: list = [None]  # Tensor, set when _tensor loads (exactly this type never overrides)

# Types that never override, skipped without a lookup.
_PLAIN = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis), bytes))


class _Disabled:
    """`_disabled_torch_function_impl`: the `__torch_function__` of a type that opts out
    (`nn.Parameter`'s). An argument of such a type never overrides a call, and calling it
    runs the call with subclass dispatch off (results stay plain tensors). Not a function,
    so that a class attribute holding it never binds to an instance."""

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _Disabled()
nowrap: list = []  # properties whose value the default override hands back unconverted (grad)


def activate() -> None:
    """Install the dispatching wrappers (once); called when something could override."""
    if not _active[0]:
        _active[0] = True
        for install in _installer:
            install()


def deactivate() -> None:
    """Take the wrappers off again (tests do, so that one test's subclass does not change
    what the next one sees)."""
    if _active[0]:
        _active[0] = False
        for undo in _uninstaller:
            undo()


def is_active() -> bool:
    return _active[0]


def _overrides(t: type) -> bool:
    tf = getattr(t, "__torch_function__", None)
    if tf is None or tf is _disabled_torch_function_impl:
        return False
    # (real PyTorch's own tensors, which tests hand over through DLPack, are data here)
    return not getattr(getattr(tf, "__func__", tf), "__module__", "").startswith("torch")


def overloaded_args(args, kwargs=None) -> list:
    """The arguments whose types override, one per type, subclasses before their bases
    (and otherwise in argument order); sequences are looked into one level deep."""
    found: list = []
    seen: set = set()
    for group in (args, kwargs.values() if kwargs else ()):
        for a in group:
            t = type(a)
            if t in _PLAIN or t is _base[0]:
                continue
            if t is list or t is tuple:
                for b in a:
                    tb = type(b)
                    if tb not in _PLAIN and tb is not _base[0] and tb not in seen \
                            and _overrides(tb):
                        _add(found, seen, b)
            elif t not in seen and _overrides(t):
                _add(found, seen, a)
    return found


def _add(found: list, seen: set, a) -> None:
    t = type(a)
    seen.add(t)
    for i, other in enumerate(found):
        if issubclass(t, type(other)):
            found.insert(i, a)
            return
    found.append(a)


def public_name(func) -> str:
    """`torch.add`, `torch.Tensor.add`, `torch.Tensor.shape.__get__`: how a refusal names
    the function (with the prefix the user imported)."""
    from . import _names

    owner = getattr(func, "__self__", None)
    if type(owner) is property:
        base = _base[0]
        name = next((k for k in dir(base) if getattr(base, k, None) is owner), "?")
        return f"{_names.prefix}.Tensor.{name}.{func.__name__}"
    module = getattr(func, "__module__", None) or ""
    qual = getattr(func, "__qualname__", None) or repr(func)
    if qual.startswith("Tensor."):
        return f"{_names.prefix}.{qual}"
    if module.startswith("ember"):
        module = _names.prefix + module[len("ember"):]
    return f"{module}.{qual}" if module and module != "ember._tensor" else qual


def dispatch(public, overloaded: list, args: tuple, kwargs: dict, *, python: bool = False):
    """Hand a call of `public` to the mode on top of the stack, or to the overriding
    arguments' `__torch_function__`s in priority order. `python`: `public` is a function
    written in Python (`handle_torch_function`), refused in PyTorch's Python words."""
    types = tuple(type(a) for a in overloaded)
    tried: list[str] = []
    if _modes and not _off[1]:
        mode = _modes.pop()
        try:
            out = mode.__torch_function__(public, types, args, kwargs)
        finally:
            _modes.append(mode)
        if out is not NotImplemented:
            return out
        tried.append(f"mode object {mode!r}")
    if _off[0] or _off[1]:
        overloaded = []
    for a in overloaded:
        out = a.__torch_function__(public, types, args, kwargs)
        if out is not NotImplemented:
            return out
        tried.append(f"tensor subclass {type(a)!r}")
    if python:
        raise TypeError(f"no implementation found for '{public_name(public)}' on types that "
                        f"implement __torch_function__: {[type(a) for a in overloaded]}")
    listing = "".join(f"  - {t}\n" for t in tried)
    raise TypeError(f"Multiple dispatch failed for '{public_name(public)}'; all "
                    f"__torch_function__ handlers returned NotImplemented:\n\n{listing}\n"
                    "For more information, try re-running with TORCH_LOGS=not_implemented")


class PublicFunction:
    """A public function behind the protocol: a call with an overriding argument (or under
    a mode) is handed over, others run the op. It compares and hashes equal to the op it
    wraps, so a table an override keyed by `torch.add` before the protocol came on still
    finds it. `modes_only`: a factory (its arguments are data), which only modes see."""

    def __init__(self, fn: Callable, module: str, name: str, modes_only: bool = False):
        functools.update_wrapper(self, fn)
        self.__module__, self.__qualname__, self.__name__ = module, name, name
        self._torch_function_wrapped = fn
        self._modes_only = modes_only
        self._public = name

    def __call__(self, *args, **kwargs):
        if _modes and not _off[1]:
            return dispatch(self, [] if self._modes_only or _off[0]
                            else overloaded_args(args, kwargs), args, kwargs)
        if not (self._modes_only or _off[0] or _off[1]):
            over = overloaded_args(args, kwargs)
            if over:
                return dispatch(self, over, args, kwargs)
        return self._torch_function_wrapped(*args, **kwargs)

    def __eq__(self, other) -> bool:
        fn = self._torch_function_wrapped
        return other is self or other is fn or getattr(other, "_torch_function_wrapped",
                                                       None) is fn

    def __hash__(self) -> int:
        return hash(self._torch_function_wrapped)

    def __repr__(self) -> str:
        return f"<function {self.__qualname__} at {id(self):#x}>"

    def __reduce__(self):
        import importlib

        return getattr, (importlib.import_module(self.__module__), self._public)


def method(fn: Callable, report: Callable | None = None) -> Callable:
    """A Tensor method behind the protocol; `report` is the method a dunder is handed over
    as (`x + 1` as `Tensor.add`, as PyTorch does)."""

    @functools.wraps(fn)
    def call(self, *args, **kwargs):
        # (every argument counts, not only `self`: `plain + sub` is the subclass's call)
        over = overloaded_args((self, *args), kwargs) if not (_off[0] or _off[1]) else ()
        if over or (_modes and not _off[1]):
            return dispatch(report or call, list(over), (self, *args), kwargs)
        return fn(self, *args, **kwargs)

    call._torch_function_wrapped = fn
    return call


def _handed_to(self) -> list | None:
    """Whom reading or setting a property of `self` goes to: None (the property itself), or
    the overriding arguments (`[self]`, or none when only a mode is on)."""
    t = type(self)
    if t is not _base[0] and not (_off[0] or _off[1]) and _overrides(t):
        return [self]
    return [] if _modes and not _off[1] else None


def attribute(prop: property) -> property:
    """A Tensor property behind the protocol: reading (and setting) it is handed over as
    `Tensor.<name>.__get__` / `__set__`."""
    box: list = []

    def fget(self):
        over = _handed_to(self)
        return prop.fget(self) if over is None else dispatch(box[0].__get__, over, (self,), {})

    def fset(self, value):
        over = _handed_to(self)
        if over is None:
            return prop.fset(self, value)
        return dispatch(box[0].__set__, over, (self, value), {})

    new = property(fget, fset if prop.fset is not None else None, prop.fdel, prop.__doc__)
    box.append(new)
    return new


class DisableTorchFunctionSubclass:
    """Within it, Tensor subclasses' `__torch_function__` are not called (modes still are)."""

    def __enter__(self):
        _off[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _off[0] -= 1


class DisableTorchFunction:
    """Within it, no `__torch_function__` is called: neither subclasses' nor modes'."""

    def __enter__(self):
        _off[1] += 1
        return self

    def __exit__(self, *exc) -> None:
        _off[1] -= 1


def is_torch_function_enabled() -> bool:
    return not (_off[0] or _off[1])


def push_mode(mode) -> None:
    activate()
    _modes.append(mode)


def pop_mode():
    return _modes.pop()
