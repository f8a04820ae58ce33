"""CSR / CSC functions and methods, composed from the primitives in `sparse_compressed.py`:
`sparse_csr_tensor`, `sparse_csc_tensor`, `sparse_compressed_tensor`, the conversions
(`to_sparse_csr`, `to_sparse_csc`, `to_sparse_coo`, `to_dense`), the index accessors,
scaling, sums, printing and the products (`mm`, `mv`, `matmul`, `addmm`, `sparse.mm`).

A product converts its compressed operand to COO inside the graph and runs the COO product
primitive `sparse_mm_p`, so `csr @ dense` has PyTorch's node names (MmBackward0,
AddmmBackward0, SparseAddmmBackward0, MvBackward0) and its gradients: dense for a dense
operand and for the matrix of an unmasked product, on the matrix's pattern for
`sparse.mm`, and gathered at the pattern for the `values` of `sparse_csr_tensor`.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .._tensor import Tensor
from ._arg_parser_text import need_tensor
from ._common import type_name
from .registry import apply
from .sparse_compressed import (
    CompressedTensor,
    compressed_p,
    cs_convert_p,
    cs_gather_p,
    cs_values_p,
)
from .sparse_invariants import checks_invariants
from .sparse_matmul import sparse_mm_p
from .sparse_tensor import SparseTensor

_COMPRESSED = {"sparse_csr": "crow_indices", "sparse_csc": "ccol_indices"}
_PLAIN = {"sparse_csr": "col_indices", "sparse_csc": "row_indices"}


def _no_blocks() -> NotImplementedError:
    return NotImplementedError("the block compressed layouts (sparse_bsr, sparse_bsc) are not "
                               "supported by ember; use sparse_csr or sparse_csc")


def _layout_name_of(layout) -> str:
    """PyTorch's name of a layout in its messages (Strided, Sparse, SparseCsr, ...)."""
    return {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
            "sparse_csc": "SparseCsc", "sparse_bsr": "SparseBsr",
            "sparse_bsc": "SparseBsc"}[layout.name]


def _layout_name(t: Tensor) -> str:
    if t.__class__ is CompressedTensor:
        return t._layout_name()
    return "Sparse" if t.__class__ is SparseTensor else "Strided"


# --- construction -------------------------------------------------------------------------

def _index(x) -> Tensor:
    from .creation import as_tensor

    t = x if isinstance(x, Tensor) else as_tensor(x)
    if t.__class__ is not Tensor and t.layout is not strided:
        raise TypeError("sparse_compressed_tensor(): indices must be strided tensors")
    return t.detach()


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory: bool = False,
                             requires_grad: bool = False,
                             check_invariants: bool | None = None) -> CompressedTensor:
    """A CSR or CSC matrix (`layout`) from its compressed indices, plain indices and values;
    gradients flow to `values`. `size` defaults to the smallest one holding every index."""
    from .creation import as_tensor

    if layout not in (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc):
        got = "none" if layout is None else _layout_name_of(layout)
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor "
                           f"layout but got {got}")
    check_invariants = checks_invariants(check_invariants)  # (may warn: sparse_invariants)
    if layout in (sparse_bsr, sparse_bsc):
        raise _no_blocks()
    if device is not None and str(device) != "cpu":
        raise NotImplementedError("sparse tensors are supported on the cpu device only")
    ci, pi = _index(compressed_indices), _index(plain_indices)
    vals = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None and vals._dtype is not dtype:
        vals = vals.to(dtype)
    # both int32 stay int32; any other mix is int64, as in PyTorch
    idx_dtype = dt.int32 if ci._dtype is dt.int32 and pi._dtype is dt.int32 else dt.int64
    ci, pi = ci.to(idx_dtype), pi.to(idx_dtype)
    if ci.ndim != 1 or pi.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError("sparse_compressed_tensor: batch and dense dimensions are "
                                  "not supported (1-D indices and values expected)")
    # NOTE: PyTorch checks the shapes only under check_invariants=True; ember always does
    # (its kernels would fail on them), with PyTorch's words
    if pi._shape[0] != vals._shape[0]:
        raise RuntimeError(f"{_PLAIN[layout.name]}.shape[-1] must be equal to nnz "
                           f"(={vals._shape[0]}) as defined by values.shape[0], but got "
                           f"{pi._shape[0]}")
    if size is None:
        n_plain = int(pi._array().max()) + 1 if pi._shape[0] else 0
        n_outer = ci._shape[0] - 1
        shape = (n_outer, n_plain) if layout is sparse_csr else (n_plain, n_outer)
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != 2:
            raise NotImplementedError("sparse_compressed_tensor: only 2-D matrices are "
                                      f"supported, got size {shape}")
    n_outer = shape[0] if layout is sparse_csr else shape[1]
    if ci._shape[0] != n_outer + 1:
        raise RuntimeError(f"{_COMPRESSED[layout.name]}.shape[-1] must be equal to the number "
                           f"of {'rows' if layout is sparse_csr else 'columns'} + 1 "
                           f"(={n_outer + 1}), but got {ci._shape[0]}")
    if check_invariants:
        _check_invariants(ci, pi, shape, layout)
    out = apply(compressed_p, ci, pi, vals, size=shape, layout=layout.name)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_invariants(ci: Tensor, pi: Tensor, shape, layout) -> None:
    """PyTorch's `check_invariants=True` tests, with its words."""
    c, p = ci._array(), pi._array()
    name, plain = _COMPRESSED[layout.name], _PLAIN[layout.name]
    n_plain = shape[1] if layout is sparse_csr else shape[0]
    outer, inner = ("nrows", "ncols") if layout is sparse_csr else ("ncols", "nrows")
    if c[0] != 0:
        raise RuntimeError(f"`{name}[..., 0] == 0` is not satisfied.")
    if c[-1] != p.shape[0]:
        raise RuntimeError(f"`{name}[..., -1] == nnz` is not satisfied.")
    if p.size and (p.min() < 0 or p.max() >= n_plain):
        raise RuntimeError(f"`0 <= {plain} < {inner}` is not satisfied.")
    if any((np.diff(p[c[i]:c[i + 1]]) <= 0).any() for i in range(len(c) - 1)):
        raise RuntimeError(f"`{plain}[..., {name}[..., i - 1]:{name}[..., i]] for all i = 1, "
                           f"..., {outer} are sorted and distinct along the last dimension "
                           "values` is not satisfied.")
    steps = c[1:] - c[:-1]
    if (steps < 0).any() or (steps > n_plain).any():
        raise RuntimeError(f"`0 <= {name}[..., 1:] - {name}[..., :-1] <= {inner}` is not "
                           "satisfied.")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, **kwargs):
    """A CSR matrix: row i's entries are values[crow[i]:crow[i + 1]] at col_indices."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size,
                                    layout=sparse_csr, **kwargs)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, **kwargs):
    """A CSC matrix: column j's entries are values[ccol[j]:ccol[j + 1]] at row_indices."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size,
                                    layout=sparse_csc, **kwargs)


# --- conversions --------------------------------------------------------------------------

def _to_compressed(self: Tensor, layout, dense_dim) -> Tensor:
    name = "csr" if layout is sparse_csr else "csc"
    if dense_dim not in (None, 0):
        raise RuntimeError(f"dense_to_sparse_{name}: dense_dim argument must be in [0,0] "
                           f"range, but {dense_dim} is given")
    if self.__class__ is CompressedTensor and self._cs_layout is layout:
        return self
    if self.ndim != 2:
        if self.ndim < 2:
            raise RuntimeError(f"to_sparse_{name}: expected a tensor of at least 2 "
                               f"dimensions, got {self.ndim}")
        raise NotImplementedError(f"to_sparse_{name}: batched compressed tensors are not "
                                  "supported")
    return apply(cs_convert_p, self, layout=layout.name)


def to_sparse_csr(self: Tensor, dense_dim: int | None = None) -> Tensor:
    """This matrix in CSR form (entries row by row, columns sorted)."""
    return _to_compressed(self, sparse_csr, dense_dim)


def to_sparse_csc(self: Tensor, dense_dim: int | None = None) -> Tensor:
    """This matrix in CSC form (entries column by column, rows sorted)."""
    return _to_compressed(self, sparse_csc, dense_dim)


def to_sparse_coo(self: Tensor, sparse_dim: int | None = None) -> Tensor:
    """The coalesced COO form (of a dense, COO, CSR or CSC tensor)."""
    if self.__class__ is CompressedTensor:
        return apply(cs_convert_p, self, layout="sparse_coo", node="ToSparseBackward1")
    from .sparse_functions import to_sparse

    return to_sparse(self, sparse_dim)


def to_sparse_layout(self: Tensor, layout=None, blocksize=None,
                     dense_dim: int | None = None) -> Tensor:
    """`Tensor.to_sparse(layout=...)`: COO by default, or CSR / CSC."""
    if blocksize is not None or layout in (sparse_bsr, sparse_bsc):
        raise _no_blocks()
    if layout is None or layout is sparse_coo:
        return to_sparse_coo(self)
    if layout in (sparse_csr, sparse_csc):
        return _to_compressed(self, layout, dense_dim)
    if layout is strided:  # (PyTorch gives the dense tensor)
        return to_dense(self) if self.__class__ is CompressedTensor else self.to_dense()
    raise NotImplementedError(f"to_sparse: conversion to {layout!r} is not supported")


def to_dense(self: CompressedTensor, dtype=None, *, masked_grad: bool | None = None):
    """The dense matrix (its gradient goes back on this matrix's pattern)."""
    if dtype is not None:
        raise RuntimeError(f"dtype argument is not supported by "
                           f"{self._cs_layout.name}_to_dense")
    return apply(cs_convert_p, self, layout="strided")


def values(self: CompressedTensor) -> Tensor:
    """The stored entries, in the graph (their gradient flows back to this matrix)."""
    return apply(cs_values_p, self)


def _accessor(name: str, layout):
    want = "row" if layout is sparse_csr else "column"

    def get(self: Tensor) -> Tensor:
        if self.__class__ is not CompressedTensor or self._cs_layout is not layout:
            raise RuntimeError(f"{name} expected sparse {want} compressed tensor layout but "
                               f"got {_layout_name(self)}")
        compressed = name in ("crow_indices", "ccol_indices")
        return self._cs_compressed if compressed else self._cs_plain

    get.__name__ = name
    get.__doc__ = f"The {name.replace('_', ' ')} of a {layout.name[7:].upper()} matrix."
    return get


# --- arithmetic ---------------------------------------------------------------------------

def _rebuild(s: CompressedTensor, vals: Tensor, node: str) -> CompressedTensor:
    """`s`'s pattern with new values, the node named as PyTorch names the op."""
    return apply(compressed_p, s._cs_compressed, s._cs_plain, vals, size=s._shape,
                 layout=s._cs_layout.name, node=node)


def mul(self: CompressedTensor, other) -> CompressedTensor:
    """Entrywise product on this matrix's pattern: by a scalar, or by a same-shape tensor
    read at the pattern."""
    if isinstance(other, Tensor) and other.ndim:
        if tuple(other._shape) != self._shape:
            raise RuntimeError(f"mul: expected self and other to have the same shape, got "
                               f"{list(self._shape)} and {list(other._shape)}")
        other = apply(cs_gather_p, other, self._cs_compressed, self._cs_plain,
                      size=self._shape, layout=self._cs_layout.name)
    return _rebuild(self, values(self) * other, "MulBackward0")


def _mul_(self: CompressedTensor, other) -> CompressedTensor:
    """In place: this matrix takes the product's values (its version bumped)."""
    res = mul(self, other)
    self._cs_values, self._dtype = res._cs_values, res._dtype
    if self._vc is not None:
        self._vc[0] += 1
    return self


def _sum(self: CompressedTensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of every entry (dense 0-d); over a dim only with keepdim=True, as a CSR matrix
    (PyTorch's rule)."""
    if dim is None:
        return values(self).sum(dtype=dtype)
    if not keepdim:
        raise RuntimeError(f"reduction operations on {self._layout_name()[6:].upper()} tensors "
                           "with keepdim=False is unsupported")
    return to_dense(self).sum(dim, True, dtype=dtype).to_sparse_csr()


def _div(self: CompressedTensor, other):
    raise RuntimeError(f"unsupported tensor layout: {self._layout_name()}")


def add(self: Tensor, other, *, alpha=1) -> Tensor:
    """compressed + dense is dense; compressed + compressed keeps the layout (the union of
    the patterns)."""
    from .sparse_functions import add as coo_add

    need_tensor(other, "add", "other", None)
    if other.__class__ is CompressedTensor and self.__class__ is CompressedTensor:
        total = coo_add(to_sparse_coo(self), to_sparse_coo(other), alpha)
        return apply(cs_convert_p, total, layout=self._cs_layout.name)
    a = to_dense(self) if self.__class__ is CompressedTensor else self
    b = to_dense(other) if other.__class__ is CompressedTensor else other
    return a + b * alpha if alpha != 1 else a + b


def _to(self: CompressedTensor, *args, **kwargs) -> CompressedTensor:
    return _rebuild(self, values(self).to(*args, **kwargs), "ToCopyBackward0")


def transpose(self: CompressedTensor, dim0: int = 0, dim1: int = 1) -> CompressedTensor:
    """The transpose: a CSR matrix's is the CSC matrix over the same arrays."""
    if {dim0 % 2, dim1 % 2} != {0, 1}:
        return self
    return apply(cs_convert_p, self, layout="transposed", node="TransposeBackward0")


def _t(self: CompressedTensor) -> CompressedTensor:
    return apply(cs_convert_p, self, layout="transposed", node="TBackward0")


def _detach(self: CompressedTensor) -> CompressedTensor:
    from .sparse_compressed import make_compressed

    return make_compressed(self._cs_compressed, self._cs_plain, self._cs_values, self._shape,
                           self._cs_layout)


def _clone(self: CompressedTensor, *, memory_format=None) -> CompressedTensor:
    return apply(compressed_p, self._cs_compressed.clone(), self._cs_plain.clone(),
                 values(self).clone(), size=self._shape, layout=self._cs_layout.name,
                 node="CloneBackward0")


_WHY = ("This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build).")


def _no_t_property(self):
    raise NotImplementedError(
        f"Could not run 'aten::as_strided' with arguments from the '{self._layout_name()}CPU' "
        f"backend. {_WHY}")


def _no_coo(name: str):
    def refuse(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got "
                           f"{self._layout_name()}")
    return refuse


def _no_view(self, *shape):
    raise NotImplementedError(
        f"Could not run 'aten::view' with arguments from the '{self._layout_name()}CPU' "
        f"backend. {_WHY}")


# --- products -----------------------------------------------------------------------------

def _coo(x: Tensor) -> Tensor:
    return apply(cs_convert_p, x, layout="sparse_coo") if x.__class__ is CompressedTensor \
        else x


def _check_product(a: Tensor, b: Tensor, c: Tensor | None = None) -> None:
    """PyTorch's checks on a product with a compressed operand, and its words."""
    for x in (a, b):
        if x.__class__ is SparseTensor:
            raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                               f"{_layout_name(a if c is None else c)} + {_layout_name(a)} @ "
                               f"{_layout_name(b)}")
    if a.ndim == 2 and b.ndim == 2 and a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x"
                           f"{a._shape[1]} and {b._shape[0]}x{b._shape[1]})")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected scalar type {type_name(a._dtype)} but found "
                           f"{type_name(b._dtype)}")
    if not (a._dtype.is_floating_point or a._dtype.is_complex):
        raise NotImplementedError(f"\"addmm_out_sparse_csr_impl_mkl\" not implemented for "
                                  f"'{type_name(a._dtype)}'")


def _product(a: Tensor, b: Tensor, masked: bool) -> Tensor:
    _check_product(a, b)
    out = apply(sparse_mm_p, None, _coo(a), _coo(b), masked=masked)
    if out.__class__ is SparseTensor:  # compressed @ compressed: compressed (MmBackward0)
        return apply(cs_convert_p, out, layout=a._cs_layout.name, node="MmBackward0")
    return out


def mm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """`torch.mm` with a compressed operand (MmBackward0; dense gradients)."""
    if out is not None:
        raise RuntimeError("mm: out= is not supported with a sparse compressed operand")
    if input.__class__ is CompressedTensor and mat2.ndim < 2:  # (PyTorch reads mat2's dim 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got {1 if mat2.ndim == 1 else -2})")
    for name, x in (("self", input), ("mat2", mat2)):
        if x.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix")
    return _product(input, mat2, masked=False)


def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    """`torch.mv` with a compressed matrix (MvBackward0)."""
    if out is not None:
        raise RuntimeError("mv: out= is not supported with a sparse compressed operand")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, "
                           f"{vec.ndim}")
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._shape[0]}), mat "
                           f"({input._shape[0]}x{input._shape[1]}), vec ({vec._shape[0]})")
    _check_product(input, vec)
    return apply(sparse_mm_p, None, _coo(input), vec, masked=False)


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """`@` with a compressed operand: matrix @ matrix or matrix @ vector."""
    if input.__class__ is CompressedTensor and other.ndim == 1:
        return mv(input, other, out=out)
    if input.ndim > 2 or other.ndim > 2:
        sparse = input if input.__class__ is CompressedTensor else other
        raise RuntimeError(f"expand is unsupported for {_layout_name(sparse)} tensors")
    return mm(input, other, out=out)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None,
          masked: bool = False) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2) with a compressed mat1 (AddmmBackward0, or
    SparseAddmmBackward0 for `sparse.addmm`)."""
    if out is not None:
        raise RuntimeError("addmm: out= is not supported with a sparse compressed operand")
    if input.__class__ is not Tensor or mat1.__class__ is not CompressedTensor or \
            mat2.__class__ is not Tensor:
        raise NotImplementedError(
            f"addmm: computation on CPU is not implemented for {_layout_name(input)} + "
            f"{_layout_name(mat1)} @ {_layout_name(mat2)} (ember: a dense input, a compressed "
            "mat1 and a dense mat2 only)")
    _check_product(mat1, mat2, input)
    shape = (mat1._shape[0], mat2._shape[1])
    c = input if tuple(input._shape) == shape else input.expand(shape)
    return apply(sparse_mm_p, c, _coo(mat1), mat2, masked=masked, beta=beta, alpha=alpha)


def sparse_mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """`torch.sparse.mm` with a compressed mat1: the matrix's gradient on its pattern
    (SparseAddmmBackward0)."""
    return _product(mat1, mat2, masked=True)


def _rmatmul(self: CompressedTensor, other: Tensor) -> Tensor:
    return matmul(other, self)


# --- printing -----------------------------------------------------------------------------

def compressed_repr(t: CompressedTensor) -> str:
    """PyTorch's repr of a CSR/CSC matrix: its three parts, then size, nnz, dtype (when
    not a default), layout and grad_fn."""
    from .._printing import _add_suffixes, _data_str

    prefix = "tensor("
    indent = len(prefix)
    parts = []
    for name, part in ((_COMPRESSED[t._cs_layout.name], t._cs_compressed),
                       (_PLAIN[t._cs_layout.name], t._cs_plain), ("values", t._cs_values)):
        head = f"{name}=tensor("
        a = part._array()
        body = "[]" if a.size == 0 else _data_str(a, part._dtype, indent + len(head))
        if a.size == 0:
            body += f", size={tuple(a.shape)}"
        parts.append(head + body + ")")
    text = prefix + (",\n" + " " * indent).join(parts)
    suffixes = [f"size={tuple(t._shape)}", f"nnz={t._nnz()}"]
    d = t._dtype
    if d not in (dt.get_default_dtype(), dt.default_complex(), dt.int64, dt.bool_):
        suffixes.append(f"dtype={d!r}")
    suffixes.append(f"layout={t.layout!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name().rpartition('::')[2]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(text, suffixes, indent)


# --- the methods --------------------------------------------------------------------------

COMPRESSED_METHODS = {
    "crow_indices": _accessor("crow_indices", sparse_csr),
    "col_indices": _accessor("col_indices", sparse_csr),
    "ccol_indices": _accessor("ccol_indices", sparse_csc),
    "row_indices": _accessor("row_indices", sparse_csc),
    "values": values,
    "to_dense": to_dense,
    "to_sparse_csr": to_sparse_csr,
    "to_sparse_csc": to_sparse_csc,
    "to_sparse_coo": to_sparse_coo,
    "to_sparse": to_sparse_layout,
    "t": _t,
    "transpose": transpose,
    "mT": property(lambda self: transpose(self)),
    "T": property(_no_t_property),
    "mul": mul,
    "__mul__": mul,
    "__rmul__": mul,
    "__neg__": lambda self: _rebuild(self, -values(self), "NegBackward0"),
    "neg": lambda self: _rebuild(self, -values(self), "NegBackward0"),
    "div": _div,
    "__truediv__": _div,
    "add": add,
    "__add__": add,
    "__radd__": lambda self, other: add(other, self),
    "sum": _sum,
    "mul_": _mul_,
    "__imul__": _mul_,
    "mm": mm,
    "mv": mv,
    "matmul": matmul,
    "__matmul__": matmul,
    "__rmatmul__": _rmatmul,
    "to": _to,
    "double": lambda self: _to(self, dt.float64),
    "float": lambda self: _to(self, dt.float32),
    "half": lambda self: _to(self, dt.float16),
    "detach": _detach,
    "clone": _clone,
    "view": _no_view,
    "indices": _no_coo("indices"),
    "coalesce": _no_coo("coalesce"),
    "is_coalesced": _no_coo("is_coalesced"),
    "__repr__": lambda self, *, tensor_contents=None: compressed_repr(self),
}

for _name, _fn in COMPRESSED_METHODS.items():
    setattr(CompressedTensor, _name, _fn)
del _name, _fn

# a COO tensor converts too
for _name, _fn in (("to_sparse_csr", to_sparse_csr), ("to_sparse_csc", to_sparse_csc),
                   ("to_sparse_coo", lambda self, sparse_dim=None: self)):
    setattr(SparseTensor, _name, _fn)
del _name, _fn

def _to_block(self: Tensor, blocksize=None, dense_dim=None):
    raise _no_blocks()


TENSOR_METHODS = {
    "to_sparse_csr": to_sparse_csr,
    "to_sparse_bsr": _to_block,
    "to_sparse_bsc": _to_block,
    "to_sparse_csc": to_sparse_csc,
    "to_sparse_coo": to_sparse_coo,
    "crow_indices": _accessor("crow_indices", sparse_csr),
    "col_indices": _accessor("col_indices", sparse_csr),
    "ccol_indices": _accessor("ccol_indices", sparse_csc),
    "row_indices": _accessor("row_indices", sparse_csc),
}

__all__ = ["sparse_compressed_tensor", "sparse_csc_tensor", "sparse_csr_tensor"]
