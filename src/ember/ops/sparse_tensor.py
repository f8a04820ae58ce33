"""The sparse COO tensor: an indices tensor and a values tensor behind the Tensor face.

A `SparseTensor` is a `Tensor` subclass, so autograd, `isinstance` and `requires_grad`
treat it like any tensor, while the strided path pays nothing for it: it has no storage
and no NumPy view, and the few places a dense kernel would read one (`_array`,
`_ensure_storage`) raise instead. Its data is `_sp_indices` (int64, sparse_dim x nnz)
and `_sp_values` (nnz x dense dims), both plain tensors outside any graph; the graph
runs through the sparse primitives in `sparse_ops.py`, which also attaches the methods.
"""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._layout import sparse_coo
from .._tensor import Tensor
from .._view import wrap_dim

_new = object.__new__
_grad_state = grad_mode.state


def _unsupported(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'SparseCPU' backend: a sparse "
        "COO tensor has no strided data. Call .to_dense() first.")


class StoragelessTensor(Tensor):
    """What the sparse layouts share: no strided data, so every read of a storage is
    refused in PyTorch's words, naming the layout's backend and tensor implementation."""

    __slots__ = ()
    _IMPL = "SparseTensorImpl"
    _strided = False

    def _backend(self) -> str:
        return "Sparse"

    def _array(self):
        raise NotImplementedError(
            f"Could not run this operation with arguments from the '{self._backend()}CPU' "
            "backend: it needs a strided tensor. Call .to_dense() first.")

    def _ensure_storage(self):
        raise NotImplementedError(f"Cannot access storage of {self._IMPL}")

    def untyped_storage(self):
        raise NotImplementedError(f"Cannot access storage of {self._IMPL}")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force: bool = False):
        raise TypeError(f"can't convert {self._backend()} layout tensor to numpy. Use "
                        "Tensor.to_dense() first.")


def new_storageless(cls: type, shape, dtype) -> Tensor:
    """A new instance of a storage-less class, its Tensor fields set for `shape` and
    `dtype` (the layout's own fields are the caller's to set)."""
    t = _new(cls)
    t._np = None
    t._storage = None
    t._shape = tuple(shape)
    t._stride = None
    t._offset = 0
    t._dtype = dtype
    t._vc = [0] if _grad_state.inference is False else None
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._ag = None
    return t


class SparseTensor(StoragelessTensor):
    """A sparse COO tensor (`layout=ember.sparse_coo`): values at listed coordinates."""

    __slots__ = ("_sp_indices", "_sp_values", "_sp_coalesced")

    # -- what it is ---------------------------------------------------------------

    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def sparse_dim(self) -> int:
        return self._sp_indices._shape[0]

    def dense_dim(self) -> int:
        return len(self._sp_values._shape) - 1

    def _nnz(self) -> int:
        return self._sp_indices._shape[1]

    def is_coalesced(self) -> bool:
        return self._sp_coalesced

    def _indices(self) -> Tensor:
        return self._sp_indices

    def indices(self) -> Tensor:
        if not self._sp_coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    # -- what it refuses (PyTorch's exceptions) -------------------------------------

    def stride(self, dim: int | None = None):
        # NOTE: PyTorch reports zero strides for a sparse tensor rather than raising.
        if dim is None:
            return (0,) * len(self._shape)
        wrap_dim(dim, len(self._shape))
        return 0

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def storage_offset(self) -> int:
        return 0

    def view(self, *shape):
        raise _unsupported("view")

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def __setitem__(self, key, value) -> None:
        raise _unsupported("index_put_")


def make_sparse(indices: Tensor, values: Tensor, shape, coalesced: bool) -> SparseTensor:
    """A new sparse tensor over `indices` and `values` (taken as they are, no checks)."""
    t = new_storageless(SparseTensor, shape, values._dtype)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = bool(coalesced)
    return t
