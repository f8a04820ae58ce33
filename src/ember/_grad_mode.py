"""Grad modes: whether ops record graph nodes, per thread.

`no_grad`, `enable_grad`, `set_grad_enabled` and `inference_mode` are context
managers that also decorate functions, as in PyTorch.
"""

from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    """`enabled`: whether ops record (what every op reads); `inference`: inference mode.

    NOTE: in inference mode nothing records, whatever the grad mode: PyTorch's
    InferenceMode leaves autograd out of dispatch, while `enable_grad` inside it still
    switches what `is_grad_enabled()` reports. There `enabled` stays False and the grad
    modes switch `inference_grad` instead."""

    def __init__(self) -> None:
        self.enabled = True
        self.inference = False
        self.inference_grad = False


state = _State()


def is_grad_enabled() -> bool:
    return state.inference_grad if state.inference else state.enabled


def _set(flag: bool) -> bool:
    """Switch grad mode to `flag`; the mode it was in."""
    prev = is_grad_enabled()
    if state.inference:
        state.inference_grad = flag
    else:
        state.enabled = flag
    return prev


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base for grad-mode objects: usable as `with mode():` and as `@mode()` / `@mode`."""

    def __call__(self, fn=None):
        if fn is None:
            return self
        if inspect.isclass(fn):
            raise TypeError("grad-mode decorators apply to functions, not classes")
        mode = self

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with mode.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with mode.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with mode.clone():
                                response = gen.throw(e)
                        else:
                            with mode.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with mode.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_Mode):
    """Within it, no op records a graph node (results have requires_grad=False)."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):  # used as a bare decorator: @no_grad
            self.__init__()
            return self(orig_func)
        return self

    def __init__(self, orig_func=None) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = _set(False)

    def __exit__(self, *exc) -> None:
        _set(self.prev)


class enable_grad(_Mode):
    """Re-enables recording inside a `no_grad` block."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):
            self.__init__()
            return self(orig_func)
        return self

    def __init__(self, orig_func=None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _set(True)

    def __exit__(self, *exc) -> None:
        _set(self.prev)


class set_grad_enabled(_Mode):
    """Sets grad mode on or off; takes effect at construction, as in PyTorch."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):  # (PyTorch refuses 0/1 too, before switching)
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.mode = mode
        self.prev = _set(mode)

    def __repr__(self) -> str:
        from . import _names

        return f"{_names.prefix}.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def __call__(self, fn=None):
        # Used as a decorator, constructing it must not leave the mode switched.
        _set(self.prev)
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set(self.mode)

    def __exit__(self, *exc) -> None:
        _set(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_Mode):
    """Like `no_grad`, and tensors made inside are inference tensors (no version counter)."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev = (True, False, False)

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.inference, state.inference_grad)
        # NOTE: as PyTorch's InferenceMode guard, the mode sets grad mode to its opposite:
        # `inference_mode(False)` turns gradients on, even inside `no_grad`.
        state.enabled = not self.mode
        state.inference = self.mode
        state.inference_grad = False

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference, state.inference_grad = self.prev

    def clone(self):
        return self.__class__(self.mode)
