"""Shape ops on sparse COO tensors: transpose / swapaxes / mT, permute / T, unsqueeze,
index_select, narrow_copy and select, as PyTorch's sparse kernels compute them.

Each result is new coordinates (computed here on the index array, no gradient) over the
input's values gathered at the kept entries (in the graph), so a gradient reaches the
values of the input as it would through PyTorch's op; the node carries PyTorch's name.
The coalesced flag follows PyTorch: a permutation of sparse dims clears it, narrowing keeps
it, and a freshly assembled result is flagged only when it holds at most one entry.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from .._user_warnings import user_stacklevel
from .._view import wrap_dim
from .registry import apply, rename_node
from .sparse_functions import values
from .sparse_ops import gather_p, sparse_coo_p, transpose_2d
from .sparse_tensor import SparseTensor

_GRAIN = 32768  # PyTorch's at::internal::GRAIN_SIZE: work per thread in its parallel loops
_BRUTE_FORCE = 2 << 14  # index_select's nested-loop limit (PyTorch's BRUTE_FORCE_SIZE_LIMIT)


def _rebuild(s: SparseTensor, idx: np.ndarray, shape, coalesced: bool, name: str,
             pos: np.ndarray | None = None, vfn=None) -> SparseTensor:
    """A sparse tensor at coordinates `idx` holding `s`'s values at entries `pos` (all when
    None), passed through `vfn` (a dense op on the values' dense dims) when given."""
    from .creation import as_tensor

    v = values(s)
    if pos is not None:
        v = apply(gather_p, v, as_tensor(np.asarray(pos, np.int64).reshape(1, -1)))
    if vfn is not None:
        v = vfn(v)
    out = apply(sparse_coo_p, _wrap(np.ascontiguousarray(idx, dtype=np.int64)), v,
                size=tuple(shape), coalesced=bool(coalesced))
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


def _fresh(nnz: int) -> bool:
    """PyTorch's flag on a newly assembled COO tensor: coalesced when at most one entry."""
    return nnz <= 1


# --- transposes and permutations ---------------------------------------------------------

def transpose(s: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """Swap two sparse dims (PyTorch refuses to move a dense dim)."""
    nd, sd = len(s._shape), s.sparse_dim()
    d0, d1 = wrap_dim(dim0, max(nd, 1)), wrap_dim(dim1, max(nd, 1))
    if d0 >= sd or d1 >= sd:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
    if d0 == d1:
        return _rebuild(s, s._sp_indices._array(), s._shape, s._sp_coalesced,
                        "TransposeBackward0")
    if nd == 2:  # the matrix transpose `t()` runs, so a gradient keeps its layout
        out = transpose_2d(s)
        if out.grad_fn is not None:
            rename_node(out.grad_fn, "TransposeBackward0")
        return out
    order = list(range(sd))
    order[d0], order[d1] = d1, d0
    shape = list(s._shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return _rebuild(s, s._sp_indices._array()[order], shape, False, "TransposeBackward0")


def transpose_(s: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """In place: `s` takes its transpose's coordinates, shape and flag (version bumped)."""
    from .sparse_functions import _become

    res = transpose(s.detach(), dim0, dim1)
    _become(s, res)
    s._shape = res._shape
    return s


def _permute_dims(s: SparseTensor, dims) -> list[int]:
    from .movement import _shape_args

    dims = list(_shape_args(tuple(dims)))
    nd, sd = len(s._shape), s.sparse_dim()
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not "
            f"equal to len(dims) = {len(dims)}")
    dims = [wrap_dim(d, max(nd, 1)) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if any(d >= sd for d in dims[:sd]):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed.Only transpositions within sparse and dense dimensions are supported.")
    return dims


def permute(s: SparseTensor, *dims) -> SparseTensor:
    """Reorder the dims: sparse among sparse (the index rows), dense among dense (the values)."""
    dims = _permute_dims(s, dims)
    sd = s.sparse_dim()
    sparse_same = dims[:sd] == list(range(sd))
    dense = [0] + [d - sd + 1 for d in dims[sd:]]
    vfn = None if dense == sorted(dense) else (lambda v: v.permute(*dense))
    return _rebuild(s, s._sp_indices._array()[dims[:sd]], [s._shape[d] for d in dims],
                    s._sp_coalesced and sparse_same, "PermuteBackward0", vfn=vfn)


def _big_t(s: SparseTensor) -> SparseTensor:
    if len(s._shape) < 2:
        return s
    if len(s._shape) > 2:
        import warnings

        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor.", UserWarning, stacklevel=user_stacklevel())
    return permute(s, *range(len(s._shape) - 1, -1, -1))


def _m_t(s: SparseTensor) -> SparseTensor:
    if len(s._shape) < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {len(s._shape)}-D tensor.")
    return transpose(s, -2, -1)


# --- unsqueeze, narrow_copy, select -------------------------------------------------------

def unsqueeze(s: SparseTensor, dim: int) -> SparseTensor:
    """A new size-1 dim: sparse (a zero index row) at or before the last sparse dim,
    otherwise dense (in the values)."""
    nd, sd = len(s._shape), s.sparse_dim()
    d = wrap_dim(dim, nd + 1)
    shape = s._shape[:d] + (1,) + s._shape[d:]
    idx = s._sp_indices._array()
    if d <= sd:
        idx = np.insert(idx, d, 0, axis=0)
        return _rebuild(s, idx, shape, _fresh(idx.shape[1]), "UnsqueezeBackward0")
    return _rebuild(s, idx, shape, _fresh(idx.shape[1]), "UnsqueezeBackward0",
                    vfn=lambda v: v.unsqueeze(d - sd + 1))


def narrow_copy(s: SparseTensor, dim: int, start: int, length: int) -> SparseTensor:
    """Entries with `start <= index < start + length` along `dim`, re-based to 0."""
    nd, sd = len(s._shape), s.sparse_dim()
    if not 0 <= dim < nd:
        raise RuntimeError(f"Dimension {dim} out of range. Expecting 0 <= dim < {nd}.")
    size = s._shape[dim]
    if start < 0 or length < 0 or start + length > size:
        raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a "
                           f"subset of range(0, {size}).")
    shape = s._shape[:dim] + (length,) + s._shape[dim + 1:]
    idx = s._sp_indices._array()
    if dim >= sd:
        return _rebuild(s, idx, shape, s._sp_coalesced, "NarrowCopyBackward0",
                        vfn=lambda v: v.narrow(dim - sd + 1, start, length).clone())
    keep = np.nonzero((idx[dim] >= start) & (idx[dim] < start + length))[0]
    new = idx[:, keep].copy()
    new[dim] -= start
    return _rebuild(s, new, shape, s._sp_coalesced, "NarrowCopyBackward0", pos=keep)


def select(s: SparseTensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`: sparse while a sparse dim is left, else dense."""
    nd, sd = len(s._shape), s.sparse_dim()
    d = wrap_dim(dim, max(nd, 1))
    size = s._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(s._shape)} at dimension {d}")
    index %= size
    idx = s._sp_indices._array()
    shape = s._shape[:d] + s._shape[d + 1:]
    if d >= sd:
        return _rebuild(s, idx, shape, _fresh(idx.shape[1]), "SelectBackward0",
                        vfn=lambda v: v.select(d - sd + 1, index))
    keep = np.nonzero(idx[d] == index)[0]
    if sd == 1:  # no sparse dim left: the dense sum of the matching values
        from .creation import as_tensor

        v = apply(gather_p, values(s), as_tensor(keep.reshape(1, -1))).sum(0)
        if v.grad_fn is not None:
            rename_node(v.grad_fn, "SelectBackward0")
        return v
    new = np.delete(idx[:, keep], d, axis=0)
    return _rebuild(s, new, shape, _fresh(len(keep)), "SelectBackward0", pos=keep)


# --- index_select ---------------------------------------------------------------------------

def _threads(n: int) -> int:
    from ._parallel import workers  # (torch.get_num_threads())

    return max(1, min(-(-n // _GRAIN), workers()))


def _plan(dim_idx: np.ndarray, nidx: np.ndarray, size: int,
          coalesced_dim0: bool) -> tuple[bool, bool]:
    """How PyTorch's index_select orders its matches: (by index position first, else by
    entry first; whether the searched side was put in order by an unstable sort). Both
    follow from its chosen search: nested loops, binary search into a sorted side or count
    tables, picked from the sizes and thread counts."""
    nnz, n = len(dim_idx), len(nidx)
    if nnz <= _BRUTE_FORCE and n <= _BRUTE_FORCE and nnz * n <= _BRUTE_FORCE:
        return nnz >= n, False
    t_nnz, t_idx = _threads(nnz), _threads(n)
    if nnz <= size:
        major = (nnz // t_nnz <= n // t_idx) or (
            coalesced_dim0
            and n * math.log2(nnz) / t_idx <= (nnz // t_nnz + n) * math.log2(n))
        return major, not (major and coalesced_dim0)  # (a coalesced dim 0 is in order)

    def per_thread(a: np.ndarray, t: int) -> np.ndarray:
        chunk = -(-len(a) // t)
        return np.stack([np.bincount(a[k * chunk:(k + 1) * chunk], minlength=size)
                         for k in range(t)])

    dim_pt, idx_pt = per_thread(dim_idx, t_nnz), per_thread(nidx, t_idx)
    idx_work = int((idx_pt * dim_pt.sum(0)).sum(1).max()) * n // t_idx
    dim_work = int((dim_pt * idx_pt.sum(0)).sum(1).max()) * nnz // t_nnz
    return idx_work <= dim_work, False


def _matches(outer: np.ndarray, inner: np.ndarray,
             unstable: bool) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) with outer[i] == inner[j], ordered by i, then j (or, when `unstable`, the
    j of one i where PyTorch's unstable sort of `inner` leaves them)."""
    if unstable:
        from .sorting import _sort_kernel

        order = _sort_kernel(inner, dim=0, descending=False, stable=False)[1]
    else:
        order = np.argsort(inner, kind="stable")
    srt = inner[order]
    lo = np.searchsorted(srt, outer, "left")
    counts = np.searchsorted(srt, outer, "right") - lo
    total = int(counts.sum())
    i = np.repeat(np.arange(len(outer)), counts)
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, order[np.repeat(lo, counts) + within]


def index_select(s: SparseTensor, dim: int, index: Tensor) -> SparseTensor:
    """The slices at `index` along `dim`: along a sparse dim, every entry whose coordinate
    is selected (once per selection), in PyTorch's order; along a dense dim, the values'."""
    nd, sd = len(s._shape), s.sparse_dim()
    if nd == 0:
        raise IndexError("index_select() cannot be applied to a 0-dim tensor.")
    if (not isinstance(index, Tensor) or not index._strided or index.ndim != 1
            or index._dtype is not dt.int64):
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) "
                         "long-tensor.")
    d = wrap_dim(dim, nd)
    size = s._shape[d]
    raw = index._array()
    bad = np.nonzero((raw < -size) | (raw >= size))[0]
    if len(bad):
        raise IndexError(f"index_select(): index contains {int(raw[bad[0]])} that is out of "
                         f"range for tensor of size {list(s._shape)} at dimension {d}")
    nidx = np.where(raw < 0, raw + size, raw).astype(np.int64)
    shape = s._shape[:d] + (len(nidx),) + s._shape[d + 1:]
    idx = s._sp_indices._array()
    if d >= sd:
        from .creation import as_tensor

        sel = as_tensor(nidx)
        return _rebuild(s, idx, shape, _fresh(idx.shape[1]), "IndexSelectBackward0",
                        vfn=lambda v: v.index_select(d - sd + 1, sel))
    dim_idx = idx[d]
    major, unstable = _plan(dim_idx, nidx, size, s._sp_coalesced and d == 0)
    if major:
        res_pos, pos = _matches(nidx, dim_idx, unstable)
    else:
        pos, res_pos = _matches(dim_idx, nidx, unstable)
    new = idx[:, pos].copy()
    new[d] = res_pos
    return _rebuild(s, new, shape, _fresh(len(pos)), "IndexSelectBackward0", pos=pos)


SPARSE_METHODS = {
    "transpose": transpose,
    "swapaxes": transpose,
    "swapdims": transpose,
    "transpose_": transpose_,
    "permute": permute,
    "T": property(_big_t),
    "mT": property(_m_t),
    "unsqueeze": unsqueeze,
    "narrow_copy": narrow_copy,
    "select": select,
    "index_select": index_select,
}

for _name, _fn in SPARSE_METHODS.items():
    setattr(SparseTensor, _name, _fn)
del _name, _fn

TENSOR_METHODS: dict = {}
__all__: list[str] = []
