"""Compressed sparse matrices (CSR and CSC) behind the Tensor face, and their primitives.

A `CompressedTensor` is a 2-D sparse matrix stored as PyTorch stores one: `compressed`
indices (one offset per row for CSR, per column for CSC, plus the end), `plain` indices
(the column of each entry for CSR, the row for CSC) and the entries' `values`, all plain
tensors outside any graph. Like the COO `SparseTensor` it has no storage or strided view.

Three primitives carry the graph: `compressed_p` builds one from its three parts (the
values' gradient is the cotangent gathered at the pattern), `cs_values_p` reads the values
back, and `cs_convert_p` converts between dense, COO, CSR and CSC (and transposes: a CSR
matrix's transpose is the CSC matrix over the same three arrays). Products are not
primitives of their own: a compressed operand is converted to COO in the graph and
multiplied by `sparse_mm_p`, so node names and gradients are those of the COO products.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._layout import sparse_csc, sparse_csr
from .._tensor import Tensor, _wrap
from .registry import Primitive, apply, batch_by_loop, defjvp, defvjp
from .sparse_ops import COO, RECORDS, RESULTS, _coalesce_arrays, _sparse_prim, _to_dense_kernel
from .sparse_tensor import SparseTensor, StoragelessTensor, new_storageless

_NAMES = {"sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc"}


def _no_strides(what: str) -> RuntimeError:
    return RuntimeError(f"Sparse CSR tensors do not have {what}")


class CompressedTensor(StoragelessTensor):
    """A sparse CSR or CSC matrix (`layout=ember.sparse_csr` / `ember.sparse_csc`)."""

    __slots__ = ("_cs_compressed", "_cs_plain", "_cs_values", "_cs_layout")

    @property
    def layout(self):
        return self._cs_layout

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return self._cs_layout is sparse_csr

    _IMPL = "SparseCsrTensorImpl"

    def _layout_name(self) -> str:
        return _NAMES[self._cs_layout.name]

    _backend = _layout_name

    def _nnz(self) -> int:
        return self._cs_plain._shape[-1]

    def sparse_dim(self) -> int:
        return 2

    def dense_dim(self) -> int:
        return 0

    def _row_major(self) -> bool:
        return self._cs_layout is sparse_csr

    # -- what it refuses (PyTorch's exceptions and words) -------------------------------

    def stride(self, dim: int | None = None):
        raise _no_strides("strides")

    def is_contiguous(self, memory_format=None) -> bool:
        raise _no_strides("is_contiguous")

    def contiguous(self, memory_format=None):
        raise _no_strides("is_contiguous")

    def reshape(self, *shape):
        raise _no_strides("is_contiguous")

    def storage_offset(self) -> int:
        raise _no_strides("storage_offset")



def make_compressed(compressed: Tensor, plain: Tensor, values: Tensor, shape,
                    layout) -> CompressedTensor:
    """A new compressed matrix over the three parts (taken as they are, no checks)."""
    t = new_storageless(CompressedTensor, shape, values._dtype)
    t._cs_compressed = compressed
    t._cs_plain = plain
    t._cs_values = values
    t._cs_layout = layout
    return t


# --- the kernel side ----------------------------------------------------------------------

class CS(NamedTuple):
    """A compressed operand or result as a kernel sees it."""

    compressed: np.ndarray
    plain: np.ndarray
    values: np.ndarray
    shape: tuple
    layout: str  # "sparse_csr" or "sparse_csc"


_LAYOUTS = {"sparse_csr": sparse_csr, "sparse_csc": sparse_csc}


RECORDS[CompressedTensor] = lambda a: CS(a._cs_compressed._array(), a._cs_plain._array(),
                                        a._cs_values._array(), a._shape, a._cs_layout.name)
RESULTS[CS] = lambda r: make_compressed(_wrap(r.compressed), _wrap(r.plain), _wrap(r.values),
                                        r.shape, _LAYOUTS[r.layout])


def _cs_prim(name: str, kernel, **kw) -> Primitive:
    return _sparse_prim(name, kernel, **kw)


def _coords(s: CS) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) of every entry, in stored order."""
    counts = np.diff(s.compressed)
    outer = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    plain = s.plain.astype(np.int64, copy=False)
    return (outer, plain) if s.layout == "sparse_csr" else (plain, outer)


def _compress(outer: np.ndarray, plain: np.ndarray, values: np.ndarray, shape,
              layout: str, index_dtype=np.int64) -> CS:
    """CS arrays of entries given by (outer, plain) coordinates, sorted by (outer, plain)."""
    n_outer = shape[0] if layout == "sparse_csr" else shape[1]
    order = np.lexsort((plain, outer))
    compressed = np.r_[0, np.cumsum(np.bincount(outer, minlength=n_outer))]
    return CS(compressed.astype(index_dtype), plain[order].astype(index_dtype),
              np.ascontiguousarray(values[order]), tuple(shape), layout)


def _dense_of(x) -> np.ndarray:
    if isinstance(x, CS):
        rows, cols = _coords(x)
        return _to_dense_kernel(COO(np.stack([rows, cols]), x.values, x.shape, False))
    return _to_dense_kernel(x) if isinstance(x, COO) else x


def _convert_kernel(x, *, layout: str, node=None):
    """x (dense array, COO or CS) in `layout`: "strided", "sparse_coo", "sparse_csr",
    "sparse_csc" or "transposed" (a CS matrix's transpose: the same arrays, the other
    layout)."""
    if layout == "transposed":
        other = "sparse_csc" if x.layout == "sparse_csr" else "sparse_csr"
        return CS(x.compressed, x.plain, x.values, x.shape[::-1], other)
    if layout == "strided":
        return _dense_of(x)
    if isinstance(x, CS):
        if x.layout == layout:
            return x
        rows, cols = _coords(x)
        if layout == "sparse_coo":
            # in stored order (a CSC matrix's entries column by column, as in PyTorch)
            return COO(np.stack([rows, cols]), x.values, x.shape, x.layout == "sparse_csr")
        outer, plain = (rows, cols) if layout == "sparse_csr" else (cols, rows)
        return _compress(outer, plain, x.values, x.shape, layout, x.compressed.dtype)
    if isinstance(x, COO):
        x = _coalesce_arrays(x.indices, x.values, x.shape) if not x.coalesced else x
        rows, cols = x.indices
    else:
        rows, cols = np.nonzero(x)
        x = COO(np.stack([rows, cols]), x[rows, cols], x.shape, True)
    outer, plain = (rows, cols) if layout == "sparse_csr" else (cols, rows)
    return _compress(outer, plain, x.values, x.shape, layout)


def _layout_of(t: Tensor) -> str:
    cls = t.__class__
    if cls is CompressedTensor:
        return t._cs_layout.name
    return "sparse_coo" if cls is SparseTensor else "strided"


def _convert_vjp(g, out, x, *, layout, node=None):
    if layout == "transposed":
        return apply(cs_convert_p, g, layout="transposed") if g.__class__ is \
            CompressedTensor else g.mT
    want = _layout_of(x)
    have = _layout_of(g)
    if layout == "strided" and x.__class__ is CompressedTensor:
        # to_dense of a CSR/CSC matrix: its gradient on the matrix's own pattern
        return apply(compressed_p, x._cs_compressed, x._cs_plain,
                     apply(cs_gather_p, g, x._cs_compressed, x._cs_plain, size=x._shape,
                           layout=want), size=x._shape, layout=want)
    # a dense cotangent reaches a sparse input as it is (PyTorch's gradient for a sparse
    # operand of an unmasked product is dense too); a sparse one in the input's layout
    if have == "strided" or have == want:
        return g
    return apply(cs_convert_p, g, layout=want)


_CONVERT_NAMES = {"strided": "ToDenseBackward0", "sparse_coo": "ToSparseBackward0",
                  "sparse_csr": "ToSparseCsrBackward0", "sparse_csc": "ToSparseCscBackward0",
                  "transposed": "TransposeBackward0"}
cs_convert_p = _cs_prim("sparse_compressed_convert", _convert_kernel,
                        grad_name=lambda args, params: params.get("node")
                        or _CONVERT_NAMES[params["layout"]])
defvjp(cs_convert_p, _convert_vjp)
defjvp(cs_convert_p, lambda primals, tangents, out, **params: apply(
    cs_convert_p, tangents[0], **params))


# --- construction and values --------------------------------------------------------------

def _build_kernel(compressed, plain, values, *, size, layout, node=None):
    return CS(compressed, plain, values, tuple(size), layout)


def _gather_kernel(g, compressed, plain, *, size, layout):
    """The entries of `g` (dense, COO or CS) at the pattern (compressed, plain)."""
    if isinstance(g, CS) and g.layout == layout and np.array_equal(g.compressed, compressed) \
            and np.array_equal(g.plain, plain):
        return g.values
    rows, cols = _coords(CS(compressed, plain, None, size, layout))
    return np.ascontiguousarray(_dense_of(g)[rows, cols])


cs_gather_p = _cs_prim("sparse_compressed_gather", _gather_kernel, grad_name="IndexBackward0")
# `node` names the graph node when the construction stands for another op (a scaling is
# MulBackward0, a dtype change ToCopyBackward0: PyTorch's names)
compressed_p = _cs_prim("sparse_compressed", _build_kernel,
                        grad_name=lambda args, params: params.get("node")
                        or "SparseCompressedTensorBackward0")


def _values_grad(g, out, compressed, plain, values, *, size, layout, node=None):
    return apply(cs_gather_p, g, compressed, plain, size=size, layout=layout)


def _gather_grad(g, out, src, compressed, plain, *, size, layout):
    built = apply(compressed_p, compressed, plain, g, size=size, layout=layout)
    return built if src.__class__ is CompressedTensor else apply(cs_convert_p, built,
                                                                  layout="strided")


defvjp(compressed_p, None, None, _values_grad)
defjvp(compressed_p, lambda primals, tangents, out, **params: None if tangents[2] is None
       else apply(compressed_p, primals[0], primals[1], tangents[2], **params))
defvjp(cs_gather_p, _gather_grad, None, None)
defjvp(cs_gather_p, lambda primals, tangents, out, **params: apply(
    cs_gather_p, tangents[0], primals[1], primals[2], **params))

cs_values_p = _cs_prim("sparse_compressed_values", lambda s: s.values,
                       grad_name="ValuesBackward0")
defvjp(cs_values_p, lambda g, out, s: apply(compressed_p, s._cs_compressed, s._cs_plain, g,
                                            size=s._shape, layout=s._cs_layout.name))
defjvp(cs_values_p, lambda primals, tangents, out: apply(cs_values_p, tangents[0]))

_LOOP = "a compressed sparse matrix has no batch axis to vectorise over"
for _prim in (cs_convert_p, compressed_p, cs_gather_p, cs_values_p):
    batch_by_loop(_prim, _LOOP)
