"""How MLX's Python bindings (nanobind) refuse a call whose arguments have the wrong types:
the TypeError, with the signature and the types it was given, as MLX prints them."""

from __future__ import annotations

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python (or a nanobind class)


def type_name(value) -> str:
    """The name nanobind gives `value`'s type: the bare name for a type written in C
    (`int`, `NoneType`, `ndarray`), `module.Name` for a class (`__main__.A`), and so
    `mlx.core.array` for an MLX class, ember's stand-ins included."""
    t = type(value)
    if not t.__flags__ & _HEAP_TYPE:
        return t.__name__
    module = t.__module__
    if module.startswith("ember.mlx."):
        module = module[len("ember."):].rsplit("._", 1)[0]
    return f"{module}.{t.__qualname__}"


def bad_call(fn: str, signature: str, args: tuple = (), kwargs: dict | None = None) -> TypeError:
    """The TypeError of `fn(*args, **kwargs)` refused by its binding, whose one overload is
    `signature` (a method's `args` start with the object itself)."""
    given = [type_name(a) for a in args]
    if kwargs:
        given.append("kwargs = { " + ", ".join(f"{k}: {type_name(v)}" for k, v in kwargs.items())
                     + " }")
    return TypeError(f"{fn}(): incompatible function arguments. The following argument types "
                     f"are supported:\n    1. {signature}\n\nInvoked with types: "
                     f"{', '.join(given)}")
