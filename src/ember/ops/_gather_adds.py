"""The NumPy formulations behind reads and accumulating writes at index arrays (the
kernels of `index`, `index_put` and `index_add`), chosen where NumPy's own indexing is slow:

- `take`: a gather along one dim by slice copies where the index is a few runs of
  consecutive positions (np.take copies element by element along a last dim);
- `merged_slots`: several adjacent index dims merged into one, read by one `np.take`
  (NumPy's multi-index loop is several times slower);
- `add_slices` / `add_merged`: in-order adds at repeated positions, np.add.at's sums and
  bits with wide slices instead of its element loop.

Each gives the bits of the plain NumPy call it replaces (copies; adds in index order).
"""

from __future__ import annotations

import math

import numpy as np

from ._common import index_runs
from .index_key import TENSOR_SLOT

_RUN_MIN = 16  # positions per run, on average, for slice copies to beat np.take
_WIDE = 64  # elements each index position reaches, for the merged dims' take to pay


def take(a: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    """np.take(a, idx, axis) for a 1-D integer `idx` (a fresh C-order array), by one slice
    copy per run of consecutive positions where the runs are long (a circular pad's
    `[n-2, n-1, 0, ..., n-1, 0, 1]`: three copies)."""
    n = a.shape[axis] if a.ndim else 0
    # (looking for runs reads idx a few times: worth it where each position copies many)
    if idx.ndim != 1 or idx.size < 2 * _RUN_MIN or a.size < max(4096, _RUN_MIN * n):
        return np.take(a, idx, axis=axis)
    # (neither end in a run: an index of long runs has its ends in them, and the usual
    # gather, a batch of shuffled rows, pays two reads here rather than four passes)
    first, last = idx[:2].tolist(), idx[-2:].tolist()
    if first[1] - first[0] != 1 and last[1] - last[0] != 1:
        return np.take(a, idx, axis=axis)
    pos = np.where(idx < 0, idx + n, idx)
    breaks = np.flatnonzero(np.diff(pos) != 1) + 1
    if (breaks.size + 1) * _RUN_MIN > idx.size or pos.min() < 0 or pos.max() >= n:
        return np.take(a, idx, axis=axis)  # (short runs; or out of bounds: np.take's error)
    out = np.empty(a.shape[:axis] + (idx.size,) + a.shape[axis + 1:], a.dtype)
    lead = (slice(None),) * axis
    for start, end in zip([0, *breaks.tolist()], [*breaks.tolist(), idx.size]):
        first = int(pos[start])
        out[lead + (slice(start, end),)] = a[lead + (slice(first, first + end - start),)]
    return out


def merged_slots(key: tuple, idx: np.ndarray | None, shape: tuple):
    """(axis, merged shape, flat index) when the key is full slices around two or more
    adjacent integer slots, each position reaching at least _WIDE elements: those dims
    merge into one and `idx` becomes one index into it, so one `np.take` (or one run of
    adds) does what NumPy's multi-index loop and its transposed result do several times
    slower (a reflection pad reads `x[..., rows[:, None], cols]`). Else None."""
    if idx is None or idx.ndim < 2 or idx.shape[0] < 2 or idx.dtype == np.bool_:
        return None
    first = key.index(TENSOR_SLOT)
    last = first + idx.shape[0]  # (one slot's own 2-D index fails the next test)
    if last > len(key) or any(k is not TENSOR_SLOT for k in key[first:last]) or \
            any(k != slice(None) for k in key[:first] + key[last:]):
        return None
    if math.prod(shape[:first]) * math.prod(shape[last:]) < _WIDE:
        return None  # (each position a few elements: NumPy's own loop is as fast)
    dims = shape[first:last]
    # (the wrapper checked the bounds: "wrap" only turns a negative index into its place)
    flat = np.ravel_multi_index(tuple(idx), dims, mode="wrap").reshape(-1)
    merged = shape[:first] + (int(np.prod(dims)),) + shape[last:]
    return first, merged, flat


def add_merged(out: np.ndarray, key: tuple, idx: np.ndarray | None, v) -> bool:
    """out[key] += v for the keys `merged_slots` merges, as `add_slices` along the merged
    dim (np.add.at's order and bits); False, doing nothing, where it does not apply."""
    merged = merged_slots(key, idx, out.shape)
    if merged is None or np.result_type(v) != out.dtype:
        return False
    axis, shape, flat = merged
    try:
        into = out.reshape(shape, copy=False)  # (the adds must land in `out`)
    except ValueError:
        return False
    v = np.broadcast_to(v, out.shape[:axis] + idx.shape[1:] + out.shape[axis + len(idx):])
    return add_slices(into, axis, flat, v.reshape(shape[:axis] + flat.shape + shape[axis + 1:]))


def add_slices(out: np.ndarray, axis: int, idx: np.ndarray, v) -> bool:
    """out[..., idx[i], ...] += v[..., i, ...] along `axis`, in order: `np.add.at`'s sums
    and bits where the slices are wide (np.add.at goes element by element: 5-20x slower
    there). False, doing nothing, where they are not, or one index repeats so often that
    np.add.at is faster."""
    width = out.size // max(out.shape[axis], 1)
    if idx.ndim != 1 or width < 64 or \
            np.shape(v) != out.shape[:axis] + idx.shape + out.shape[axis + 1:]:
        return False
    rows, target = np.moveaxis(v, axis, 0), np.moveaxis(out, axis, 0)
    if rows.dtype != target.dtype or idx.size < 16:
        for i, at in enumerate(idx.tolist()):
            target[at] += rows[i]
        return True
    order, ordered, runs = index_runs(np.where(idx < 0, idx + target.shape[0], idx))
    sizes = np.diff(np.append(runs, idx.size))
    if sizes.max() > 4096:  # as many adds as one index's repeats: np.add.at's loop is faster
        return False
    longest = np.argsort(-sizes, kind="stable")
    # one add per depth: the j-th rows of every run at least j + 1 long (a prefix, the
    # runs being longest first), each run's rows in order, as the loop over idx adds them
    live = np.searchsorted(-sizes[longest], -np.arange(sizes.max()), "left")
    if runs.size == out.shape[axis]:
        _add_covering(out, axis, v, order, ordered, runs, longest, live)
        return True
    runs = runs[longest]
    sums = target[ordered[runs]]
    picked = rows[order]
    for depth, n in enumerate(live.tolist()):
        sums[:n] += picked[runs[:n] + depth]
    target[ordered[runs]] = sums
    return True


def _add_covering(out, axis: int, v, order, ordered, runs, longest, live) -> None:
    """`add_slices` where the runs cover every position along `axis` (a pad's gradient),
    in place along `axis` (moved to the front, a last axis's slices would be strided): the
    first row of every run is one add of the whole; the deeper ones are summed apart."""
    out += np.take(v, order[runs], axis=axis)
    if live.size < 2:
        return
    runs = runs[longest]
    lead = (slice(None),) * axis
    at = lead + (ordered[runs[:live[1]]],)
    sums = out[at]
    for depth, n in enumerate(live[1:].tolist(), 1):
        sums[lead + (slice(None, n),)] += np.take(v, order[runs[:n] + depth], axis=axis)
    out[at] = sums
