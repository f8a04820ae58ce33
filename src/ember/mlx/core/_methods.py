"""`mx.array`'s methods: each is the `mx` function of the same name, array first."""

from __future__ import annotations

from . import _cpu_math, _elementwise, _ops, _sequences, _shapes
from ._array import _At, _wrap, array, check_operand
from ._binding import bad_call
from ._lazy import lazy
from ._method_binding import method, star_method

_SAME = ("abs", "all", "any", "argmax", "argmin", "cos", "cummax", "cummin", "cumprod",
         "cumsum", "diag", "diagonal", "exp", "flatten", "log", "log10", "log1p", "log2",
         "logsumexp", "max", "mean", "min", "moveaxis", "prod", "reciprocal", "round",
         "rsqrt", "sin", "split", "sqrt", "square", "squeeze", "std", "sum", "swapaxes", "var")


def _reshape(self, shape: tuple) -> array:
    return _ops.reshape(self, shape)


def _transpose(self, axes: tuple) -> array:
    return _ops.transpose(self, axes or None)


def _conj(self) -> array:
    return _wrap(self._t.conj().resolve_conj(), self._dtype) if self._dtype.kind == "c" \
        else self


def _mT(self) -> array:
    return _ops.swapaxes(self, -1, -2)


# what records lazily besides the methods above (see `_lazy`)
_OPERATORS = ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
              "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "and", "or",
              "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt",
              "ge", "neg", "abs", "invert", "iadd", "isub", "imul", "itruediv", "getitem",
              "setitem")


# methods from the modules beyond `_ops`
_MORE = {"logcumsumexp": _sequences.logcumsumexp, "view": _shapes.view,
         "logsumexp": _cpu_math.logsumexp, "rsqrt": _cpu_math.rsqrt, "log": _cpu_math.log,
         "log1p": _cpu_math.log1p}
# in-place operators MLX has beyond `_OPERATORS`, with what its errors call them: each
# rebinds the object to the result
_IN_PLACE = {"and": "bitwise and", "or": "bitwise or", "xor": "bitwise xor",
             "floordiv": "floor division", "mod": "modulus", "pow": "power",
             "lshift": "left shift", "rshift": "right shift", "matmul": None}


def _in_place(name: str, action: str | None):
    op, method_name = getattr(array, f"__{name}__"), f"__i{name}__"

    def method(self, o):
        if action is not None:
            check_operand(self, o, method_name, f"inplace {action}")
        elif not isinstance(o, array):  # (@= takes arrays only)
            raise bad_call(method_name, f"{method_name}(self, other: mlx.core.array) -> "
                           "mlx.core.array", (self, o))
        return self._rebind(op(self, o))
    method.__name__ = method_name
    return method


def _copy(self) -> array:
    return _wrap(self._t, self._dtype)


def _deepcopy(self, memo) -> array:
    return _wrap(self._t.clone(), self._dtype)


def _complex(self) -> complex:
    return complex(self.item())


def install() -> None:
    for name in _SAME:
        setattr(array, name, lazy(method(getattr(_ops, name), name)))
    array.reshape = lazy(star_method("reshape", _reshape))
    array.transpose = lazy(star_method("transpose", _transpose))
    array.conj = lazy(method(_conj, "conj"))
    array.astype = lazy(method(array.astype, "astype"))
    array.mT = property(lazy(_mT))
    array.T = property(lazy(array.T.fget))
    for name in _OPERATORS:
        dunder = f"__{name}__"
        setattr(array, dunder, lazy(getattr(array, dunder)))
    for name, fn in _MORE.items():
        setattr(array, name, lazy(method(fn, name)))
    for name, action in _IN_PLACE.items():
        setattr(array, f"__i{name}__", _in_place(name, action))
    array.real = property(lazy(_elementwise.real))
    array.imag = property(lazy(_elementwise.imag))
    array.__copy__ = _copy
    array.__deepcopy__ = _deepcopy
    array.__complex__ = _complex
    for name in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
        setattr(_At, name, lazy(getattr(_At, name)))
