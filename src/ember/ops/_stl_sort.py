"""libstdc++'s selection and sorting algorithms (`std::nth_element`, `std::partial_sort`,
`std::sort`), step for step, on a Python list with a strict less-than `lt`.

PyTorch's CPU topk runs them on (value, index) pairs (ATen's TopKImpl.h); where values tie,
or with `sorted=False`, which index comes out where is whatever these steps leave, so ember
replays them for those rows (sorting.py). Ranges are [first, last) as in C++.
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
