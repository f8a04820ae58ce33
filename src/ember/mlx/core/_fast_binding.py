"""How MLX's bindings of the `mx.fast` kernels take their arguments.

nanobind binds each call to the one signature it knows: a missing or extra argument, an
unknown keyword, or a value nanobind will not convert to a parameter's type (a list for an
`array`, a string or None for a `float`, a float for an `int`, anything but True / False
for a `bool`) is refused with its TypeError naming the signature (`_binding.bad_call`),
before any of MLX's own checks run. Python would name the missing parameter or fail deep
inside ember instead, so `binds` puts nanobind's step in front of each `mx.fast` function,
and hands the function the values nanobind converts to (a Python float, an int).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TypeVar

from ._array import array
from ._binding import bad_call
from ._device import _is_stream_or_device, check_stream
from ._nb_types import as_float, as_int

F = TypeVar("F", bound=Callable)


# a parameter's kind -> its conversion (None where nanobind refuses the value)
_CONVERT = {
    "array": lambda v: v if isinstance(v, array) else None,
    "float": as_float,
    "int": as_int,
    "bool": lambda v: v if v is True or v is False else None,
    "stream": lambda v: v if v is None or _is_stream_or_device(v) else None,
}
_REFUSED = object()  # a marker: nanobind would not convert the value


def _converted(kind: str, value):
    """`value` as a parameter of `kind` receives it ("?" at the end: None is taken too;
    "any": as it is), or `_REFUSED`."""
    if kind == "any" or kind.endswith("?") and value is None:
        return value
    out = _CONVERT[kind.rstrip("?")](value)
    return _REFUSED if out is None else out


def _signature_of(text: str) -> inspect.Signature:
    """The Python signature of a binding's signature `text`, annotations left as text."""
    params = text.partition("(")[2].rpartition(") ->")[0]
    scope: dict = {}
    exec(compile(f"def f({params}): pass", "<binding>", "exec",  # noqa: S102
                 flags=annotations.compiler_flag, dont_inherit=True), scope)
    return inspect.signature(scope["f"])


def binds(text: str, kinds: dict[str, str]) -> Callable[[F], F]:
    """Decorate an `mx.fast` function with nanobind's binding of `text`: each parameter
    named in `kinds` takes the values its kind converts ("array", "float", "int", "bool";
    "?" adds None; the others and "any" take anything); `stream` takes a stream, a
    device or None, and is checked as an op's is (`check_stream`)."""
    name = text.partition("(")[0]
    signature = _signature_of(text)
    kinds = {**kinds, "stream": "stream?"}

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def bound(*args, **kwargs):
            try:
                call = signature.bind(*args, **kwargs)
            except TypeError:
                raise bad_call(name, text, args, kwargs) from None
            for key, kind in kinds.items():
                if key in call.arguments:
                    value = _converted(kind, call.arguments[key])
                    if value is _REFUSED:
                        raise bad_call(name, text, args, kwargs)
                    call.arguments[key] = value
            out = fn(*call.args, **call.kwargs)
            # NOTE: MLX names the stream (refusing a GPU, a foreign thread's stream) only
            # once its own checks of the arguments have passed
            check_stream(call.arguments.get("stream"))
            return out

        return bound  # type: ignore[return-value]

    return decorate
