"""The element a stable sort puts at a given position, found without sorting: median and
nanmedian along a dim answer PyTorch's nth_element (linear time) with the index a stable
argsort would give them, and a sort of every slice cost them 5-10x torch's time."""

from __future__ import annotations

import numpy as np


def stable_pick(w: np.ndarray, k, axis: int) -> np.ndarray:
    """The index (kept dim) a stable argsort of `w` along `axis` puts at position `k` (a
    number, or one per slice with the kept dim), NaN last. Slices of more than 32 find it
    in linear time: the value there by selection, and its first occurrence where exactly k
    elements are smaller (no tie before it); the other slices are sorted."""
    n = w.shape[axis]
    if n <= 32:
        order = np.argsort(w, axis=axis, kind="stable")
        if isinstance(k, np.ndarray):
            return np.take_along_axis(order, k, axis=axis)
        return np.take(order, [k], axis=axis)
    rows = np.moveaxis(w, axis, -1)
    shape = rows.shape[:-1] + (1,)
    rows = rows.reshape(-1, n)
    if isinstance(k, np.ndarray):
        ks, k = np.unique(k), np.moveaxis(k, axis, -1).reshape(-1, 1)
    else:
        ks, k = k, np.full((rows.shape[0], 1), k, np.intp)
    v = np.take_along_axis(np.partition(rows, ks, axis=1), k, axis=1)
    idx = np.argmax(rows == v, axis=1, keepdims=True)
    later = k[:, 0] - np.count_nonzero(rows < v, axis=1)  # which of the equal ones
    tied = later != 0
    if tied.any():  # the later-th occurrence: its column among the row's equal ones
        eq = rows[tied] == v[tied]
        count = np.count_nonzero(eq, axis=1)
        start = np.cumsum(count) - count
        # (a NaN at k equals nothing: 0 here, replaced by the caller's NaN rule)
        cols = np.append(np.nonzero(eq)[1], 0)
        idx[tied, 0] = np.where(later[tied] < count,
                                cols[np.minimum(start + later[tied], cols.size - 1)], 0)
    return np.moveaxis(idx.reshape(shape), -1, axis)
