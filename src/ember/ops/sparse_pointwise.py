"""Sparse COO methods that act on the values alone: the pointwise functions that map zero
to zero (`abs`, `sqrt`, `pow` ...), their in-place forms, `neg`, `conj`, `norm` and `zero_`.

A function with f(0) == 0 leaves every unspecified entry zero, so the result is the
input's coalesced pattern with f applied to its values (PyTorch's SparseCPU kernels
coalesce first: |a| + |b| is not |a + b| for a duplicated coordinate). The values go
through ordinary tensor ops, so gradients reach the sparse input through `values`.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap
from .._view import wrap_dim
from ._common import type_name
from .registry import apply, rename_node
from .sparse_functions import _become, coalesce, scale, values
from .sparse_ops import sparse_coo_p
from .sparse_tensor import SparseTensor, _unsupported, make_sparse

# The zero-preserving functions PyTorch's SparseCPU backend implements (the methods that
# the dense Tensor has under the same name, applied to the coalesced values).
_ZERO_PRESERVING = (
    "abs", "sqrt", "sign", "sgn", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh",
    "atanh", "erf", "erfinv", "expm1", "log1p", "floor", "ceil", "trunc", "round", "frac",
    "rad2deg", "deg2rad", "relu", "square", "nan_to_num", "signbit", "isnan", "isinf",
    "isposinf", "isneginf",
)
# those with an in-place form on a sparse tensor (which must be coalesced already)
_IN_PLACE = (
    "abs", "sqrt", "sign", "sgn", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh",
    "atanh", "erf", "erfinv", "expm1", "log1p", "floor", "ceil", "trunc", "round", "frac",
    "rad2deg", "deg2rad",
)


def on_values(s: SparseTensor, fn) -> SparseTensor:
    """`fn` applied to the values of `s` coalesced: a coalesced sparse tensor."""
    c = coalesce(s)
    v = fn(values(c))
    out = apply(sparse_coo_p, c._sp_indices, v, size=s._shape, coalesced=True)
    if out.grad_fn is not None and v.grad_fn is not None:  # (PyTorch's node: AbsBackward0)
        rename_node(out.grad_fn, v.grad_fn.name())
    return out


def _pointwise(name: str):
    def method(self: SparseTensor, *args, **kwargs) -> SparseTensor:
        return on_values(self, lambda v: getattr(v, name)(*args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"`{name}` of every specified value (zero stays zero): sparse, coalesced."
    return method


def _pointwise_(name: str):
    def method(self: SparseTensor, *args, **kwargs) -> SparseTensor:
        if not self._sp_coalesced:
            raise RuntimeError(f"{name}_ requires coalesced input")
        return _become(self, on_values(self, lambda v: getattr(v, name)(*args, **kwargs)))

    method.__name__ = name + "_"
    method.__doc__ = f"In-place `{name}` of a coalesced sparse tensor's values."
    return method


def pow(self: SparseTensor, exponent) -> SparseTensor:  # noqa: A001
    """`self ** exponent` for a scalar exponent other than 0 (which would fill the zeros)."""
    if isinstance(exponent, Tensor):
        if exponent.ndim:
            raise _unsupported("pow.Tensor_Tensor")
        exponent = exponent.item()
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    return on_values(self, lambda v: v.pow(exponent))


def norm(self: SparseTensor, p="fro", dim=None, keepdim: bool = False,
         dtype=None) -> Tensor:
    """The vector p-norm of every entry (a dense 0-d tensor): PyTorch's sparse norm reduces
    over all dims only, and duplicated coordinates are summed first."""
    from .stats import vector_norm

    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if dims and sorted({wrap_dim(d, len(self._shape)) for d in dims}) != list(
                range(len(self._shape))):
            raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                               "must either be empty or contain all dimensions of the input")
    if p is None or p == "fro":
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm_sparse: unsupported p='{p}'")
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {type_name(self._dtype)} instead.")
    v = values(coalesce(self))
    if dtype is not None:
        v = v.to(dtype)
    return vector_norm(v, ord=p)


def zero_(self: SparseTensor) -> SparseTensor:
    """Every entry zero: no specified entries left (coalesced), shape and dtype kept."""
    sd = self._sp_indices._shape[0]
    empty = _wrap(np.zeros((0,) + tuple(self._shape[sd:]), self._dtype.np))
    res = make_sparse(_wrap(np.zeros((sd, 0), np.int64)), empty, self._shape, True)
    return _become(self, res)


def neg_(self: SparseTensor) -> SparseTensor:
    """In-place negation (linear: duplicates and the coalesced flag stay as they are)."""
    return _become(self, scale(self, -1))


def conj(self: SparseTensor) -> SparseTensor:
    """The complex conjugate: every value conjugated (a copy, never a lazy view: PyTorch's
    sparse conj is physical), the indices and coalesced flag kept; a real tensor itself."""
    if not self._dtype.is_complex:
        return self
    return apply(sparse_coo_p, self._sp_indices, values(self).conj(), size=self._shape,
                 coalesced=self._sp_coalesced)


def _conj_physical_(self: SparseTensor) -> SparseTensor:
    raise RuntimeError("unsupported tensor layout: Sparse")


def _pow_(self: SparseTensor, exponent) -> SparseTensor:
    raise _unsupported("pow_.Scalar")


METHODS = {name: _pointwise(name) for name in _ZERO_PRESERVING}
METHODS.update({name + "_": _pointwise_(name) for name in _IN_PLACE})
METHODS.update({
    "pow": pow, "__pow__": pow, "pow_": _pow_, "__ipow__": _pow_, "norm": norm,
    "zero_": zero_, "neg": lambda self: scale(self, -1), "negative": lambda self: scale(self, -1),
    "neg_": neg_, "negative_": neg_, "absolute": METHODS["abs"],
    "conj": conj, "conj_physical": conj, "conj_physical_": _conj_physical_,
})

for _name, _fn in METHODS.items():
    setattr(SparseTensor, _name, _fn)
del _name, _fn

TENSOR_METHODS: dict = {}
__all__: list[str] = []
