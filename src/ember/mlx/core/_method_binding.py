"""How MLX's bindings of `mx.array`'s methods take their arguments.

A method binds as nanobind binds it (`_strict.bound_as`): `x.sum(axis=1.0)`,
`x.flatten(0.0)`, `x.astype("float32")`, `x.sum(stream=3)` are refused with the method's
own signature text (it differs from the function's: `self` first, no `/`, the types
spelt out), measured on mlx 0.32.4. `reshape` and `transpose` take `*shape` / `*axes`,
which MLX casts after binding: what is not an `int` there fails as `std::bad_cast`, and
so does an axis outside int32 or a shape outside int64 (a shape outside int32 raises the
OverflowError of MLX's `Shape`, `_nb_types`).
"""

from __future__ import annotations

from collections.abc import Callable

from ._binding import bad_call
from ._device import check_stream, is_stream_or_device
from ._nb_types import REFUSED, SHAPE, _ints_or_refused
from ._strict import bound_as

_S = ("stream: mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
      "mlx.core.DeviceType | None = None")
_AXES = ("axis: int | collections.abc.Sequence[int] | None = None, keepdims: bool = False, "
         "*, {S}) -> mlx.core.array")
_SCAN = ("axis: int | None = None, *, reverse: bool = False, inclusive: bool = True, {S}) "
         "-> mlx.core.array")
_UNARY = "*, {S}) -> mlx.core.array"

# method -> its parameters after `self, ` (`{S}`: the stream parameter)
_METHODS = {
    **dict.fromkeys(("all", "any", "logsumexp", "max", "mean", "min", "prod", "sum"), _AXES),
    **dict.fromkeys(("cummax", "cummin", "cumprod", "cumsum", "logcumsumexp"), _SCAN),
    **dict.fromkeys(("abs", "cos", "exp", "log", "log10", "log1p", "log2", "reciprocal",
                     "rsqrt", "sin", "sqrt", "square"), _UNARY),
    "argmax": "axis: int | None = None, keepdims: bool = False, *, {S}) -> mlx.core.array",
    "argmin": "axis: int | None = None, keepdims: bool = False, *, {S}) -> mlx.core.array",
    "diag": "k: int = 0, *, {S}) -> mlx.core.array",
    "diagonal": "offset: int = 0, axis1: int = 0, axis2: int = 1, {S}) -> mlx.core.array",
    "flatten": "start_axis: int = 0, end_axis: int = -1, *, {S}) -> mlx.core.array",
    "moveaxis": "source: int, destination: int, *, {S}) -> mlx.core.array",
    "round": "decimals: int = 0, *, {S}) -> mlx.core.array",
    "split": ("indices_or_sections: int | tuple[int, ...], axis: int = 0, *, {S}) -> "
              "list[mlx.core.array]"),
    "squeeze": ("axis: int | collections.abc.Sequence[int] | None = None, *, {S}) -> "
                "mlx.core.array"),
    "swapaxes": "axis1: int, axis2: int, *, {S}) -> mlx.core.array",
    # (MLX's `correction=` replaces ddof when given)
    "std": ("axis: int | collections.abc.Sequence[int] | None = None, keepdims: bool = False, "
            "ddof: int = 0, *, correction: int | None = None, {S}) -> mlx.core.array"),
    "var": ("axis: int | collections.abc.Sequence[int] | None = None, keepdims: bool = False, "
            "ddof: int = 0, *, correction: int | None = None, {S}) -> mlx.core.array"),
    "astype": "dtype: mlx.core.Dtype, {S}) -> mlx.core.array",
    "view": "dtype: mlx.core.Dtype, *, {S}) -> mlx.core.array",
    "conj": _UNARY,
}


def method(fn: Callable, name: str) -> Callable:
    """`fn` (array first) as `mx.array`'s method `name`, bound as MLX binds it; a method
    not in the table comes back as it is."""
    text = _METHODS.get(name)
    if text is None:
        return fn
    return bound_as(fn, (), f"{name}(self, {text.replace('{S}', _S)}", fallback=False)


def _star(name: str, star: str, fn: Callable) -> Callable:
    """`fn(self, values)` as MLX's `name(self, *star, stream)`: one argument that is not
    an int is the whole sequence; several must each be an `int`."""
    signature = f"{name}(self, *{star}, {_S}) -> mlx.core.array"
    # a shape binds as MLX's `Shape` (int32, its OverflowError past it), axes as C++ ints
    convert = SHAPE["Sequence[int]"] if star == "shape" else _ints_or_refused

    def bound(self, *args, **kwargs):
        if kwargs:
            stream = kwargs.get("stream")
            if len(kwargs) > 1 or "stream" not in kwargs or not (
                    stream is None or is_stream_or_device(stream)):
                raise bad_call(name, signature, (self, *args), kwargs)
            check_stream(stream)
        if len(args) == 1 and args[0].__class__ is not int:
            values = convert(args[0])
            if values is REFUSED:
                raise RuntimeError("std::bad_cast")
            return fn(self, tuple(values))
        for a in args:
            if a.__class__ is not int:
                raise RuntimeError("std::bad_cast")
        # (the first is cast to a C++ int on its own, to tell the two forms apart)
        if args and not -(2**31) <= args[0] < 2**31 or convert(args) is REFUSED:
            raise RuntimeError("std::bad_cast")
        return fn(self, args)
    bound.__name__ = bound.__qualname__ = name
    return bound


def star_method(name: str, fn: Callable) -> Callable:
    """`reshape(self, *shape)` / `transpose(self, *axes)` over `fn(self, values)`."""
    return _star(name, "shape" if name == "reshape" else "axes", fn)
