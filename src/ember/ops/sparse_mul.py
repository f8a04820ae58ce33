"""Elementwise products with a sparse COO operand: sparse * sparse and sparse * dense (and
dense * sparse), as PyTorch's SparseCPU `mul` computes them (a number or a 0-d tensor factor
is `sparse_functions.scale`).

The product of two sparse tensors holds entries only where both do. PyTorch's pattern:
two coalesced operands give their coalesced intersection; otherwise the result keeps every
entry of one operand (the uncoalesced one, or of two uncoalesced ones the one with fewer
entries, the second on a tie), each times the other's summed value at its coordinate (zero
where it has none), and is not flagged coalesced. A dense factor is read at the sparse
operand's coordinates: the result has the sparse operand's entries and flag. Gradients are
sparse, on the sparse operands' patterns, as PyTorch's MulBackward0 gives them.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor, _wrap
from .._view import broadcast_shapes
from .registry import apply, batch_by_loop, defjvp, defvjp
from .sparse_functions import _become, coalesce, divide, scale, to_dense, values
from .sparse_ops import _LOOP, COO, _coalesce_arrays, _grad_at, _sparse_prim, sparse_coo_p
from .sparse_tensor import SparseTensor, StoragelessTensor

_NAMES = dt.SCALAR_TYPE_NAMES


def _linear(indices: np.ndarray, shape) -> np.ndarray:
    return np.ravel_multi_index(tuple(indices), shape) if indices.shape[0] else \
        np.zeros(indices.shape[1], np.int64)


def _mul_kernel(a: COO, b, *, dtype) -> COO:
    d = dtype.np
    if not isinstance(b, COO):  # a dense factor, broadcast to a's shape, at a's coordinates
        at = np.broadcast_to(b, a.shape)[tuple(a.indices)]
        return COO(a.indices, a.values.astype(d) * at.astype(d), a.shape, a.coalesced)
    sd = a.indices.shape[0]
    shape = tuple(broadcast_shapes(a.shape, b.shape))
    if a.coalesced and b.coalesced:
        la, lb = _linear(a.indices, a.shape[:sd]), _linear(b.indices, b.shape[:sd])
        _, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
        vals = a.values[ia].astype(d) * b.values[ib].astype(d)
        return COO(np.ascontiguousarray(a.indices[:, ia]), vals, shape, True)
    keep_a = not a.coalesced and (b.coalesced or a.indices.shape[1] < b.indices.shape[1])
    it, other = (a, b) if keep_a else (b, a)
    oc = _coalesce_arrays(other.indices, other.values, other.shape)
    li, lo = _linear(it.indices, shape[:sd]), _linear(oc.indices, shape[:sd])
    pos = np.minimum(np.searchsorted(lo, li), max(len(lo) - 1, 0))
    found = (pos < len(lo)) & (lo[pos] == li) if len(lo) else np.zeros(len(li), bool)
    ov = oc.values.astype(d)[pos] if len(lo) else np.zeros((len(li),) + oc.values.shape[1:], d)
    ov = np.where(found.reshape((-1,) + (1,) * (ov.ndim - 1)), ov, np.zeros((), d))
    iv = it.values.astype(d)
    vals = iv * ov if keep_a else ov * iv
    return COO(it.indices, vals, shape, False)


mul_p = _sparse_prim("sparse_mul", _mul_kernel, grad_name="MulBackward0")


def _sum_to(g: Tensor, shape) -> Tensor:
    """A gradient for a broadcast dense factor: densified and summed back to its shape."""
    g = to_dense(g)
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g._shape[lead + i] != 1)
    return g.sum(dims, keepdim=True).reshape(shape) if dims else g


def _dense_cotangent(g: Tensor) -> Tensor:
    """The cotangent as a dense tensor. A sparse one on the output's own pattern holds one
    value per entry, equal across an uncoalesced output's duplicates (the derivative with
    respect to each of them), so it is written, not summed, at its coordinates."""
    if g.__class__ is not SparseTensor:
        return g
    if g._sp_coalesced:
        return to_dense(g)
    from .creation import zeros

    idx = tuple(g._sp_indices[i] for i in range(g.sparse_dim()))
    return zeros(g._shape, dtype=g._dtype).index_put(idx, values(g))


def _cotangent(g: Tensor, a: SparseTensor, b: Tensor) -> SparseTensor:
    """The cotangent as a sparse tensor on the output's coalesced pattern (the pattern
    recomputed from the inputs: a saved output is kept as a strided tensor)."""
    with grad_mode.no_grad():
        out = multiply(a.detach(), b.detach())
    return _grad_at(_dense_cotangent(g), out, True)


# PyTorch's MulBackward0 for sparse operands: grad * other, on the output's pattern (which
# may hold coordinates the input itself has none at: the input's gradient holds them too)
def _grad_a(g, out, a, b, *, dtype):
    return multiply(_cotangent(g, a, b), b)


def _grad_b(g, out, a, b, *, dtype):
    prod = multiply(_cotangent(g, a, b), a)
    return prod if b._shape == prod._shape else _sum_to(prod, b._shape)


defvjp(mul_p, _grad_a, _grad_b)


def _mul_jvp(primals, tangents, out, *, dtype):
    """d(a * b) = da * b + a * db (the product is bilinear)."""
    (a, b), (ta, tb) = primals, tangents
    terms = [multiply(ta, b) if ta is not None else None,
             multiply(a, tb) if tb is not None else None]
    terms = [t for t in terms if t is not None]
    return None if not terms else terms[0] if len(terms) == 1 else terms[0] + terms[1]


defjvp(mul_p, _mul_jvp)
batch_by_loop(mul_p, _LOOP)


def _check_sparse_pair(a: SparseTensor, b: SparseTensor) -> None:
    sd = a.sparse_dim()
    if sd != b.sparse_dim() or a.ndim != b.ndim or a._shape[:sd] != b._shape[:sd]:
        raise RuntimeError(
            "sparse_binary_op_intersection_cpu(): expects sparse inputs with equal "
            "dimensionality, number of sparse dimensions, and shape of sparse dimensions")
    if dt.promote_types(a._dtype, b._dtype) is dt.bool_:
        raise NotImplementedError("\"mul_out_sparse\" not implemented for 'Bool'")


def multiply(self: SparseTensor, other) -> Tensor:
    """self * other for a sparse `self`: scaled by a number or 0-d tensor, or the product
    with a sparse or dense tensor (sparse, see the module docstring)."""
    if not isinstance(other, Tensor) or (other.ndim == 0 and other.__class__ is Tensor):
        return scale(self, other)
    if other.__class__ is SparseTensor:
        _check_sparse_pair(self, other)
    elif other.__class__ is not Tensor:
        raise RuntimeError("Expected result Tensor to be of format CSR")  # (PyTorch's words)
    elif broadcast_shapes(other._shape, self._shape) != self._shape:
        self = _expanded(self, broadcast_shapes(other._shape, self._shape))
    d = dt.promote_types(self._dtype, other._dtype)
    return apply(mul_p, self, other, dtype=d)


def _expanded(s: SparseTensor, shape) -> SparseTensor:
    """`s` broadcast to `shape` by new leading dims (sparse ones): its coalesced entries
    repeated for each leading index, coalesced (PyTorch's sparse * larger dense)."""
    from .join import cat

    lead = len(shape) - len(s._shape)
    if tuple(shape[lead:]) != s._shape:
        raise NotImplementedError(
            f"mul: a sparse tensor of shape {list(s._shape)} broadcast along its own size-1 "
            f"dims (to {list(shape)}) by a dense factor is not supported")
    c = coalesce(s)
    n, reps = c._nnz(), int(np.prod(shape[:lead]))
    grid = np.indices(shape[:lead]).reshape(lead, -1)
    head = np.repeat(grid, n, axis=1)
    idx = cat([_wrap(np.ascontiguousarray(head.astype(np.int64))),
               c._sp_indices.repeat(1, reps)])
    vals = values(c).repeat((reps,) + (1,) * (c.ndim - c.sparse_dim()))
    return apply(sparse_coo_p, idx, vals, size=tuple(shape), coalesced=True)


def _rmul(self: SparseTensor, other) -> Tensor:
    """other * self: the same product (its factors commute; the pattern rule is symmetric
    but for ties, which follow the sparse operand order)."""
    if other.__class__ is SparseTensor:
        return multiply(other, self)
    return multiply(self, other)


def _mul_(self: SparseTensor, other) -> SparseTensor:
    """In place. A number or dense factor leaves `self` marked uncoalesced (as PyTorch's
    in-place kernel does, even from a coalesced `self`); a sparse one keeps the product's
    mark."""
    res = multiply(self, other)
    if res._dtype is not self._dtype:
        got, want = _NAMES[res._dtype.name], _NAMES[self._dtype.name]
        if other.__class__ is SparseTensor:
            raise RuntimeError(f"Can't convert result type {got} to output {want} in mul "
                               "operation")
        raise RuntimeError(f"dtype of values ({got}) must match dtype of sparse tensor ({want})")
    out = _become(self, res)
    if other.__class__ is not SparseTensor:
        out._sp_coalesced = False
    return out


def divide_checked(self: SparseTensor, other, *, rounding_mode=None) -> SparseTensor:
    """self / other: only a number or a 0-d dense tensor divides a sparse tensor. A rounded
    quotient is taken of the coalesced values (rounding does not distribute over a sum)."""
    if isinstance(other, Tensor) and (other.__class__ is not Tensor or other.ndim):
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor "
                           f"(got shape {list(other._shape)} for divisor)")
    if rounding_mode is None:
        return divide(self, other)
    c = coalesce(self)
    return apply(sparse_coo_p, c._sp_indices, values(c).div(other, rounding_mode=rounding_mode),
                 size=c._shape, coalesced=True)


def function_form(name: str, input, other, alpha=1, rounding_mode=None) -> Tensor:
    """`ember.mul / add / sub / div(input, other)` with a sparse operand (COO or
    compressed), as that operand's methods compute them: products and quotients keep the
    sparse layout, dense + sparse is dense."""
    first = isinstance(input, StoragelessTensor)
    if name == "mul":
        return input.mul(other) if first else other.__rmul__(input)
    if name == "div":
        if not first:
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                               f"divisor (got shape {list(other._shape)} for divisor)")
        if rounding_mode is not None:
            return input.div(other, rounding_mode=rounding_mode)
        return input.div(other)
    if name == "sub":
        for x in (input, other):
            if isinstance(x, StoragelessTensor) and x.__class__ is not SparseTensor:
                layout = "".join(w.capitalize() for w in x.layout.name.split("_"))
                raise RuntimeError(f"unsupported tensor layout: {layout}")
    alpha = alpha if name == "add" else -alpha
    if first:
        return input.add(other, alpha=alpha)
    return input.add(other.to_dense(), alpha=alpha)


def dense_mul_(self: Tensor, other: SparseTensor) -> Tensor:
    """dense.mul_(sparse): `self` times the sparse tensor's dense form, in place."""
    d = dt.promote_types(self._dtype, other._dtype)
    if d is not self._dtype and not dt.can_cast(d, self._dtype):
        raise RuntimeError(f"Can't convert result type {_NAMES[d.name]} to output "
                           f"{_NAMES[self._dtype.name]} in add operation")
    return self.mul_(to_dense(other))


METHODS = {"mul": multiply, "multiply": multiply, "__mul__": multiply, "__rmul__": _rmul,
           "mul_": _mul_, "multiply_": _mul_, "__imul__": _mul_, "div": divide_checked,
           "divide": divide_checked, "__truediv__": divide_checked, "true_divide": divide_checked,
           "div_": lambda self, other, *, rounding_mode=None: _become(
               self, divide_checked(self, other, rounding_mode=rounding_mode)),
           "__itruediv__": lambda self, other: _become(self, divide_checked(self, other))}
for _name, _fn in METHODS.items():
    setattr(SparseTensor, _name, _fn)
del _name, _fn

TENSOR_METHODS: dict = {}
__all__: list[str] = []
