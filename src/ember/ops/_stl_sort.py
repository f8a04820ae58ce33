"""libstdc++'s selection and sorting algorithms (`std::nth_element`, `std::partial_sort`,
`std::sort`), step for step, on a Python list with a strict less-than `lt`.

PyTorch's CPU topk runs them on (value, index) pairs (ATen's TopKImpl.h), and its CPU sort
with stable=False runs `std::sort` on them; where values tie, or with `sorted=False`, which
index comes out where is whatever these steps leave, so ember replays them for those rows
(sorting.py). Ranges are [first, last) as in C++. `sort_rows` replays `std::sort` on many
rows at once: in C (native/csrc/pair_sort.c) when native kernels are on, else with NumPy.
"""

from __future__ import annotations


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _move_median_to_first(q, result, a, b, c, lt):
    if lt(q[a], q[b]):
        if lt(q[b], q[c]):
            q[result], q[b] = q[b], q[result]
        elif lt(q[a], q[c]):
            q[result], q[c] = q[c], q[result]
        else:
            q[result], q[a] = q[a], q[result]
    elif lt(q[a], q[c]):
        q[result], q[a] = q[a], q[result]
    elif lt(q[b], q[c]):
        q[result], q[c] = q[c], q[result]
    else:
        q[result], q[b] = q[b], q[result]


def _unguarded_partition(q, first, last, pivot, lt):
    while True:
        while lt(q[first], q[pivot]):
            first += 1
        last -= 1
        while lt(q[pivot], q[last]):
            last -= 1
        if not first < last:
            return first
        q[first], q[last] = q[last], q[first]
        first += 1


def _partition_pivot(q, first, last, lt):
    mid = first + (last - first) // 2
    _move_median_to_first(q, first, first + 1, mid, last - 1, lt)
    return _unguarded_partition(q, first + 1, last, first, lt)


def _unguarded_linear_insert(q, last, lt):
    val = q[last]
    nxt = last - 1
    while lt(val, q[nxt]):
        q[last] = q[nxt]
        last = nxt
        nxt -= 1
    q[last] = val


def _insertion_sort(q, first, last, lt):
    if first == last:
        return
    for i in range(first + 1, last):
        if lt(q[i], q[first]):
            val = q[i]
            q[first + 1:i + 1] = q[first:i]
            q[first] = val
        else:
            _unguarded_linear_insert(q, i, lt)


def _push_heap(q, first, hole, top, value, lt):
    parent = (hole - 1) // 2
    while hole > top and lt(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[first + hole] = value


def _adjust_heap(q, first, hole, length, value, lt):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if lt(q[first + second], q[first + second - 1]):
            second -= 1
        q[first + hole] = q[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        q[first + hole] = q[first + second - 1]
        hole = second - 1
    _push_heap(q, first, hole, top, value, lt)


def _make_heap(q, first, last, lt):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(q, first, parent, length, q[first + parent], lt)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(q, first, last, result, lt):
    value = q[result]
    q[result] = q[first]
    _adjust_heap(q, first, 0, last - first, value, lt)


def _heap_select(q, first, middle, last, lt):
    _make_heap(q, first, middle, lt)
    for i in range(middle, last):
        if lt(q[i], q[first]):
            _pop_heap(q, first, middle, i, lt)


def _sort_heap(q, first, last, lt):
    while last - first > 1:
        last -= 1
        _pop_heap(q, first, last, last, lt)


def partial_sort(q, first, middle, last, lt):
    _heap_select(q, first, middle, last, lt)
    _sort_heap(q, first, middle, lt)


def nth_element(q, first, nth, last, lt):
    if first == last or nth == last:
        return
    depth = _lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last, lt)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, lt)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last, lt)


def _introsort_loop(q, first, last, depth, lt):
    while last - first > 16:
        if depth == 0:
            partial_sort(q, first, last, last, lt)
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, lt)
        _introsort_loop(q, cut, last, depth, lt)
        last = cut


def sort(q, first, last, lt):
    if first == last:
        return
    _introsort_loop(q, first, last, _lg(last - first) * 2, lt)
    if last - first > 16:
        _insertion_sort(q, first, first + 16, lt)
        for i in range(first + 16, last):
            _unguarded_linear_insert(q, i, lt)
    else:
        _insertion_sort(q, first, last, lt)


# --- std::sort on many rows at once, with NumPy ---------------------------------------------

def sort_rows(keys):
    """The order in which `std::sort` leaves the (key, index) pairs of each row of `keys`
    (a 2-D array of non-negative integers below 2**31, such as ranks; the comparator is
    `<` on keys): a 2-D int64 array of indices.

    The same steps as `sort` above, but each partition of every segment longer than 16 is
    done for all segments at once, one level of the recursion at a time (the segments of a
    level are disjoint and each child gets the same depth budget, so the order in which
    C++ visits them does not matter). Hoare's partition pairs the k-th element from the
    left that is not less than the pivot with the k-th from the right that is not greater,
    while the first lies left of the second, so its swaps are found with counts rather than
    a scan. The final insertion sort is stable, so it is a stable sort of what the
    partitions leave.
    """
    import numpy as np

    from ._pair_sort_native import sort_rows as native_rows

    rows, n = keys.shape
    # (csrc/pair_sort.c: these steps in C, on the keys as doubles, which hold them exactly)
    got = native_rows(keys.astype(np.float64), False)
    if got is not None:
        return got
    # each pair packed in one int64, key above index, so that a swap moves one array
    q = np.ascontiguousarray((keys.astype(np.int64) << 32) | np.arange(n, dtype=np.int64))
    q = q.reshape(-1)
    if n > 16:
        first = np.arange(rows, dtype=np.int64) * n
        _introsort_rows(q, first, first + n, np.full(rows, _lg(n) * 2))
    q = q.reshape(rows, n)
    order = np.argsort(q >> 32, axis=1, kind="stable")
    return np.take_along_axis(q, order, axis=1) & 0xFFFFFFFF


def _introsort_rows(q, first, last, depth):
    import numpy as np

    while len(first):
        heap = depth == 0
        for f, e in zip(first[heap].tolist(), last[heap].tolist()):  # (depth spent: rare)
            part = q[f:e].tolist()
            partial_sort(part, 0, e - f, e - f, lambda x, y: x >> 32 < y >> 32)
            q[f:e] = part
        first, last, depth = first[~heap], last[~heap], depth[~heap] - 1
        cut = _partition_rows(q, first, last)
        first, last = np.concatenate([first, cut]), np.concatenate([cut, last])
        depth = np.concatenate([depth, depth])
        keep = np.flatnonzero(last - first > 16)
        keep = keep[np.argsort(first[keep], kind="stable")]
        first, last, depth = first[keep], last[keep], depth[keep]


def _partition_rows(q, first, last):
    """`_partition_pivot` on every segment [first, last) (sorted, disjoint): the cuts.

    With cl, cr the running counts (from the array's start) of left and right stoppers,
    the left stopper at x, the i-th of its segment, and the i-th right stopper from the
    segment's end are swapped while cl[x] + cr[x] <= T, T = cr at the segment's end + cl at
    its start; the right stopper at y is swapped while cl[y - 1] + cr[y] > T.
    """
    import numpy as np

    if not len(first):
        return first
    # median of three to the front
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    ka, kb, kc = q[a] >> 32, q[b] >> 32, q[c] >> 32
    to = np.where(ka < kb, np.where(kb < kc, b, np.where(ka < kc, c, a)),
                  np.where(ka < kc, a, np.where(kb < kc, c, b)))
    q[first], q[to] = q[to], q[first]
    # bounds over the whole array; the pieces between segments get ones no element passes
    edges = np.empty(2 * len(first) + 2, np.int64)
    edges[0], edges[1:-1:2], edges[2:-1:2], edges[-1] = 0, first, last, len(q)
    sizes = np.diff(edges)
    pv = q[first] >> 32
    lo = np.full(len(sizes), np.iinfo(np.int64).max)
    hi = np.full(len(sizes), -1)
    lo[1::2], hi[1::2] = pv << 32, ((pv + 1) << 32) - 1
    stop_l = q >= np.repeat(lo, sizes)  # key >= pivot: the left scan stops here
    stop_l[first] = False
    stop_r = q <= np.repeat(hi, sizes)  # key <= pivot: the right scan stops here
    cl = np.cumsum(stop_l, dtype=np.int32)
    cr = np.cumsum(stop_r, dtype=np.int32)
    cl0 = cl[first]
    t = np.zeros(len(sizes), np.int32)
    t[1::2] = cr[last - 1] + cl0
    t = np.repeat(t, sizes)
    s = cl + cr
    lc = np.flatnonzero(stop_l & (s <= t))
    rc = np.flatnonzero(stop_r & (s - stop_l > t))
    done = np.searchsorted(lc, last) - np.searchsorted(lc, first)
    s0 = np.cumsum(done) - done
    rc = rc[np.repeat(2 * s0 + done - 1, done) - np.arange(len(lc))]  # partners, in order
    q[lc], q[rc] = q[rc], q[lc]
    # the left scan then stops at the next stopper, or at the last swapped right one
    nl = cl[last - 1] - cl0
    lpos = np.flatnonzero(stop_l)
    nxt = np.where(done < nl, lpos[np.minimum(cl0 + done, len(lpos) - 1)], last)
    prev = np.where(done > 0, rc[np.maximum(s0 + done - 1, 0)], last)
    return np.minimum(nxt, prev)


def aten_quick_select(vals: list, k: int, gt) -> list:
    """The positions (0..n-1) of `vals` after ATen's own quickselect for `kthvalue` (the
    Sedgewick partition of SortingUtils.h, not std::nth_element) puts the k-th (0-based)
    element in place; `gt(x, y)` is its "greater, or NaN" test. Where values tie, which index
    lands at k is whatever these steps leave."""
    a = list(vals)
    idx = list(range(len(a)))

    def swap(i, j):
        a[i], a[j] = a[j], a[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(a[lo], a[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)  # median of three as the pivot, moved to a[lo]
        if gt(a[lo + 1], a[hi]):
            swap(lo + 1, hi)
        if gt(a[lo], a[hi]):
            swap(lo, hi)
        if gt(a[lo + 1], a[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, a[lo]
        while True:
            i += 1
            while gt(piv, a[i]):
                i += 1
            j -= 1
            while gt(a[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx
