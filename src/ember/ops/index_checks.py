"""PyTorch's argument checks for the index-driven ops, per op and per path.

PyTorch checks an index in several places (the op's meta function, then whichever CPU kernel
the shapes pick), and each place has its own exception type and message: index_select's
dim-1 fast path raises RuntimeError("INDICES element is out of DATA bounds ...") where its
general path raises IndexError("index out of range in self"); index_add goes through
scatter_add when it can. Each function here makes one op's checks in PyTorch's order and
returns the wrapped dim. Index values are read only on the CPU (a meta index has none).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import wrap_dim
from ._arg_parser_text import need_int, need_tensor
from ._common import checked_type_name, type_name

_INT_INDEX = (dt.int64, dt.int32)


def _values(index: Tensor) -> np.ndarray | None:
    """The index's values, flattened (None on a device with no data, or when empty)."""
    if index.device.type != "cpu" or index.numel() == 0:
        return None
    return index._array().reshape(-1)


def first_outside(index: Tensor, lo: int, hi: int) -> int | None:
    """The first index value (in order) outside [lo, hi), or None."""
    a = _values(index)
    if a is None:
        return None
    bad = (a < lo) | (a >= hi)
    return int(a[bad.argmax()]) if bad.any() else None


def _require_tensor(name: str, index) -> None:
    """The parser's TypeError for an index that is not a tensor: these ops' third
    parameter (`x.index_select(0, "a")` names it "position 2")."""
    need_tensor(index, name, "index", 3)


def _dims(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


# --- index_select (and embedding, which is index_select along 0) ------------------------------

def index_select(x: Tensor, dim: int, index: Tensor) -> int:
    if dim.__class__ is not int:
        dim = need_int(dim, "index_select", "dim", 2)
    _require_tensor("index_select", index)
    d = wrap_dim(dim, max(x.ndim, 1))
    n = index.numel()
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if x.ndim == 0 and n != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {n} "
                           "value(s)")
    if index._dtype not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    select_bounds(x, d, index)
    return d


def select_bounds(x: Tensor, d: int, index: Tensor) -> None:
    """index_select's bound check on each CPU path."""
    if x.ndim > 1:
        if index.numel() == 0:
            return
        size = x._shape[d]
        if x.numel() == 0 or d == 1:  # (the empty-input check and the dim-1 fast path)
            if x.numel() == 0 and size == 0:
                raise RuntimeError("index_select(): self indexing axis dim should be positive")
            bad = first_outside(index, 0, size)
            if bad is not None:
                raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                                   f"axis_dim={size}")
            return
    else:
        size = x.numel()
    if first_outside(index, 0, size) is not None:
        raise IndexError("index out of range in self")


def embedding(weight: Tensor, indices: Tensor) -> None:
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices._dtype not in _INT_INDEX:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{checked_type_name(indices)} instead (while checking arguments "
                           "for embedding)")
    select_bounds(weight, 0, indices)


# --- index_add / index_copy / index_fill -----------------------------------------------------

def _source_fits(name: str, x: Tensor, source: Tensor, d: int, n: int) -> None:
    """An index_add_-like op's checks that `source` has one slice per index along `d` and
    `x`'s shape elsewhere."""
    if source.ndim and n != source._shape[d]:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({source._shape[d]}), for dim: {d}")
    xs, ss = list(x._shape), list(source._shape)
    if x.ndim and source.ndim:
        del xs[d], ss[d]
    if xs != ss:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_dims(x._shape)} "
                           f"source.shape = {_dims(source._shape)}")


def _vector_index_and_source(name: str, x: Tensor, index: Tensor, source: Tensor) -> None:
    """An index_add_-like op's checks of its index (an int vector) and source (x's dtype)."""
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {type_name(index._dtype)} and size: "
                         f"{_dims(index._shape)}")
    if index._dtype not in _INT_INDEX:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{type_name(index._dtype)}")
    if source._dtype is not x._dtype:
        raise RuntimeError(f"{name}(): self ({type_name(x._dtype)}) and source "
                           f"({type_name(source._dtype)}) must have the same scalar type")


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, alpha=1) -> int:
    _require_tensor("index_add", index)
    d = wrap_dim(dim, max(x.ndim, 1))
    n = index.numel()
    _vector_index_and_source("index_add_", x, index, source)
    if not (d == 0 or d < source.ndim):
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    if source.ndim == 0 and n != 1:
        # (PyTorch's message reads source.size(dim), which fails first on a 0-d source)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    _source_fits("index_add_", x, source, d, n)
    _same_device("index_add", x, index, source)
    if x.ndim > 1:
        if n == 0 or x.numel() == 0:
            return d
        size = x._shape[d]
        if (d == 0 or d == x.ndim - 1) and alpha == 1 and index._dtype is dt.int64:
            bad = first_outside(index, 0, size)  # (PyTorch's scatter_add path)
            if bad is not None:
                raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                                   f"{size}")
            return d
    else:
        size = x.numel()
    if first_outside(index, 0, size) is not None:
        raise IndexError("index out of range in self")
    return d


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                 include_self: bool = True) -> int:
    """index_reduce_'s checks, in PyTorch's order and words, then its beta warning and its
    kernels' dtype refusal; the wrapped dim."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _require_tensor("index_reduce", index)
    d = wrap_dim(dim, max(x.ndim, 1))
    n = index.numel()
    _vector_index_and_source("index_reduce_", x, index, source)
    if source.ndim == 0 and n != 1 or source.ndim and d >= source.ndim:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    _source_fits("index_reduce_", x, source, d, n)
    warn_at_user("index_reduce() is in beta and the API may change at any time.", once=True)
    # (then its kernels: a dispatch over real dtypes, and bounds checked in each one's words)
    if x._dtype is dt.bool_ or x._dtype.is_complex:
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')
    size = x._shape[d] if x.ndim else 1
    bad = None if include_self else first_outside(index, -size, size)  # (its first pass)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    if first_outside(index, 0, size) is not None:
        raise IndexError("index out of range in self")
    return d


def _empty_target(x: Tensor, d: int, index: Tensor) -> str:
    """How PyTorch's index_copy / index_fill kernels treat a target with no elements and a
    non-empty index: 'check' (bounds checked), 'skip' (no slice to write: nothing checked),
    or 'fail' (the indexed dim is empty: its TensorIterator refuses the restrided operands)."""
    if x.numel() or index.numel() == 0 or x.ndim == 0:
        return "check"
    # (the refused operand is x restrided to one slice along d: it has elements only when
    # every other dim has)
    others = x._shape[:d] + x._shape[d + 1:]
    return "fail" if x._shape[d] == 0 and 0 not in others else "skip"


def _storage_failure(name: str, x: Tensor, d: int) -> RuntimeError:
    return RuntimeError(f"{name}(): cannot index dimension {d} of a tensor with no elements "
                        f"(shape {_dims(x._shape)})")


def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    _require_tensor("index_copy", index)
    d = wrap_dim(dim, max(x.ndim, 1))
    n = index.numel()
    if index.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.ndim == 0 and n != 1:
        raise IndexError("index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if source.ndim not in (x.ndim, 0) and x.ndim != 0:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    if index._dtype is not dt.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{type_name(index._dtype)}")
    if source._dtype is not x._dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {type_name(x._dtype)} and (source) "
                           f"{type_name(source._dtype)}")
    xs, ss = list(x._shape), list(source._shape)
    if xs:
        del xs[d]
    if ss and d < len(ss):
        del ss[d]
    if xs != ss:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {_dims(xs)} at dimension {d} "
                           f"and source slice shape: {_dims(ss)} at dimension 0.")
    if source.ndim and n != source._shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source._shape[d]})")
    _same_device("index_copy", x, index, source)
    _kernel_bounds("index_copy_", x, d, index, negative_ok=False)
    return d


def _same_device(name: str, x: Tensor, index: Tensor, source: Tensor) -> None:
    """The CPU kernels' check of their three operands' devices, in their words."""
    if not x.device == index.device == source.device:
        raise RuntimeError(f"{name}(): self, index and source expected to be in the same "
                           f"device, but got (self) {x.device}, (index) {index.device}, and "
                           f"(source) {source.device}")


def index_fill(x: Tensor, dim: int, index: Tensor) -> int:
    _require_tensor("index_fill_", index)
    if index._dtype is not dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = wrap_dim(dim, max(x.ndim, 1))
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    _kernel_bounds("index_fill_", x, d, index, negative_ok=True)
    return d


def _kernel_bounds(name: str, x: Tensor, d: int, index: Tensor, *, negative_ok: bool) -> None:
    """index_copy / index_fill's CPU kernel: each index within the dim (index_fill also takes
    negative ones), unless the target has no elements (see `_empty_target`)."""
    how = _empty_target(x, d, index)
    if how == "skip":
        return
    if how == "fail":
        raise _storage_failure(name, x, d)
    size = x._shape[d] if x.ndim else 1
    bad = first_outside(index, -size if negative_ok else 0, size)
    if bad is not None:
        prefix = "index_copy_(): " if name == "index_copy_" else ""
        raise IndexError(f"{prefix}index {bad} is out of bounds for dimension {d} with size "
                         f"{size}")


# --- take / put_ --------------------------------------------------------------------------------

def _long_index(name: str, index) -> None:
    # (put_ is a method only: "position 1")
    need_tensor(index, name, "index", 2, method=True if name.endswith("_") else None)
    if index._dtype is not dt.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{type_name(index._dtype)}")


def _flat_bounds(x: Tensor, index: Tensor) -> None:
    n = x.numel()
    bad = first_outside(index, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")


def take(x: Tensor, index) -> None:
    _long_index("take", index)
    if x.numel() == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    _flat_bounds(x, index)


def put(x: Tensor, index, source: Tensor) -> None:
    _long_index("put_", index)
    if source._dtype is not x._dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {type_name(x._dtype)} and source.dtype = "
                           f"{type_name(source._dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    if x.numel() == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    _flat_bounds(x, index)
