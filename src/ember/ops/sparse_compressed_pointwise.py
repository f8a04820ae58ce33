"""CSR / CSC pointwise methods: the functions with f(0) == 0 act on the stored values alone
(`abs`, `sqrt`, `sin`, `sign`, `isnan` ...), with their in-place forms; the others would fill
every unspecified entry and are refused, with PyTorch's words.

A compressed matrix has no duplicate entries, so, unlike COO, nothing is coalesced first.
The function forms (`ember.abs(csr)`) reach these methods through the unary ops' hand-over
to a sparse layout's own method (ops/unary.py).
"""

from __future__ import annotations

from .sparse_compressed import CompressedTensor
from .sparse_compressed_ops import _WHY, _rebuild, values

# The zero-preserving functions PyTorch's SparseCsrCPU backend implements (out of place).
_ZERO_PRESERVING = (
    "abs", "neg", "negative", "absolute", "sqrt", "sin", "tan", "tanh", "sign", "sgn", "expm1",
    "log1p", "asin", "atan", "sinh", "asinh", "atanh", "ceil", "floor", "round", "trunc",
    "frac", "relu", "rad2deg", "deg2rad", "erf", "erfinv", "angle", "signbit", "isnan",
    "isinf", "isposinf", "isneginf",
)
# those with an in-place form there (the predicates and angle have none)
_IN_PLACE = tuple(n for n in _ZERO_PRESERVING
                  if n not in ("signbit", "isnan", "isinf", "isposinf", "isneginf", "angle"))
# unary functions with f(0) != 0 (or no sparse kernel): PyTorch refuses the layout
_DENSIFYING = (
    "exp", "exp2", "cos", "cosh", "acos", "acosh", "log", "log2", "log10", "reciprocal",
    "rsqrt", "sigmoid", "square", "lgamma", "digamma", "erfc", "i0", "sinc", "isfinite",
    "bitwise_not",
)
# ops with no kernel registered for the compressed layouts at all
_NO_KERNEL = {"nan_to_num": "nan_to_num.out", "logit": "logit"}


def _value_ops(t: CompressedTensor, fn):
    """`fn` of the stored values, on the same pattern (the node named after fn's own)."""
    v = fn(values(t))
    return _rebuild(t, v, v.grad_fn.name() if v.grad_fn is not None else "")


def _pointwise(name: str):
    def method(self: CompressedTensor, *args, **kwargs) -> CompressedTensor:
        return _value_ops(self, lambda v: getattr(v, name)(*args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"`{name}` of every stored value (zero stays zero), on the same pattern."
    return method


def _pointwise_(name: str):
    def method(self: CompressedTensor, *args, **kwargs) -> CompressedTensor:
        res = _value_ops(self, lambda v: getattr(v, name)(*args, **kwargs))
        self._cs_values = res._cs_values
        if self._vc is not None:
            self._vc[0] += 1
        return self

    method.__name__ = name + "_"
    method.__doc__ = f"In-place `{name}` of every stored value."
    return method


def _refuse_layout(name: str):
    def refuse(self: CompressedTensor, *args, **kwargs):
        raise RuntimeError(f"unsupported tensor layout: {self._layout_name()}")

    refuse.__name__ = name
    return refuse


def _no_kernel(name: str, aten: str):
    def refuse(self: CompressedTensor, *args, **kwargs):
        # (both compressed layouts dispatch to the one SparseCsrCPU key)
        raise NotImplementedError(f"Could not run 'aten::{aten}' with arguments from the "
                                  f"'SparseCsrCPU' backend. {_WHY}")

    refuse.__name__ = name
    return refuse


def _self(self: CompressedTensor) -> CompressedTensor:
    return self


METHODS: dict = {name: _pointwise(name) for name in _ZERO_PRESERVING}
METHODS.update({name + "_": _pointwise_(name) for name in _IN_PLACE})
METHODS.update({name: _refuse_layout(name) for name in _DENSIFYING})
METHODS.update({name + "_": _refuse_layout(name + "_") for name in _DENSIFYING})
METHODS.update({name: _no_kernel(name, aten) for name, aten in _NO_KERNEL.items()})
METHODS.update({name + "_": _no_kernel(name + "_", aten) for name, aten in _NO_KERNEL.items()})
# a real matrix is its own conjugate, and `positive` is the identity (the same object)
METHODS.update({"positive": _self, "conj_physical": lambda self: self if not
                self._dtype.is_complex else _value_ops(self, lambda v: v.conj_physical())})

for _name, _fn in METHODS.items():
    if _name not in CompressedTensor.__dict__:  # (the layout's arithmetic keeps its own)
        setattr(CompressedTensor, _name, _fn)
del _name, _fn

TENSOR_METHODS: dict = {}
__all__: list[str] = []
