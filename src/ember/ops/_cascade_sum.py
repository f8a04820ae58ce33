"""nll_loss's reduced loss for float16 / bfloat16, summed as torch's CPU kernel sums it.

torch's `nll_loss` (reduction "mean" / "sum") adds the picked losses in a cascade of
partial sums held in the input's own type: level 0 takes each loss, and after row `b`
(not ignored) level `j` is added into level `j + 1` while `b` is a multiple of
`16 ** (j + 1)`; the levels are then added in order. In 16 bits every one of these
additions rounds, so the result can sit several 16-bit ulps from the float32 sum (a mean
of eight bfloat16 losses: 2.40625 where the float32 mean rounds to 2.421875). This module
repeats those additions, vectorised across the groups of each level.
"""

from __future__ import annotations

import numpy as np

_LEVELS = 8  # (torch's cascade_sum_num_levels)


def _level_power(rows: int) -> int:
    """log2 of the group size: 4 unless the batch is beyond 2 ** 32 rows."""
    return max(4, (max(rows, 1) - 1).bit_length() // _LEVELS)


def _group_sums(values, flush, low, subtract: bool):
    """(sums of the flushed groups, the unflushed remainder): `values` added in order
    from 0, rounding to `low` after each step, a group ending after each `flush` item."""
    nflush = int(np.count_nonzero(flush))
    gid = np.cumsum(flush) - flush  # (the group of each item)
    starts = np.searchsorted(gid, np.arange(nflush + 1))
    pos = np.arange(values.size) - starts[gid]
    width = int(pos.max()) + 1 if values.size else 0
    grid = np.zeros((nflush + 1, width), np.float32)
    grid[gid, pos] = values
    acc = np.zeros(nflush + 1, np.float32)
    for c in range(width):  # (padding adds or takes 0: the sum is unchanged)
        step = acc - grid[:, c] if subtract else acc + grid[:, c]
        acc = step.astype(low).astype(np.float32)
    return acc[:nflush], acc[nflush]


def cascade_total(values, rows, total_rows: int, low, subtract: bool = False):
    """torch's cascaded sum in `low` (its sign flipped when `subtract`) of `values` (float32
    holding `low` values, one per row not ignored), `rows` their row indices among
    `total_rows`; a float32."""
    power = _level_power(total_rows)
    items = np.asarray(values, np.float32)
    where = np.asarray(rows, np.int64)
    partials = []
    for level in range(_LEVELS):
        if level == _LEVELS - 1:  # (the last level keeps everything)
            flush = np.zeros(where.size, bool)
        else:
            flush = where % (1 << (power * (level + 1))) == 0
        sums, rest = _group_sums(items, flush, low, subtract and level == 0)
        partials.append(rest)
        items, where = sums, where[flush]
    total = np.float32(0)
    for p in partials:
        total = np.float32(low.type(total + p))
    return total


def nll_reduce_low(picked, weights, rows, total_rows: int, reduction: str, low):
    """nll_loss's reduced value in 16 bits as torch computes it.

    `picked`: the log-probabilities at the targets of the rows not ignored (float32 holding
    `low` values), `weights`: their class weights (or None), `rows`: those rows' indices,
    `total_rows`: the row count with ignored rows; returns a 0-d array of dtype `low`.
    """
    low = np.dtype(low)
    picked = np.asarray(picked, np.float32)
    if weights is not None:
        w = np.asarray(weights, np.float32)
        products = (picked * w).astype(low).astype(np.float32)
        loss = cascade_total(products, rows, total_rows, low, True)
        count = cascade_total(w, rows, total_rows, low)
    else:
        loss = cascade_total(picked, rows, total_rows, low, True)
        count = np.float32(low.type(rows.size))
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # (0 / 0 is NaN, as in torch)
            loss = np.float32(loss) / np.float32(count)
    return np.asarray(loss, np.float32).astype(low)


def nll_mean_grad_low(g, w, ignored, n: int, low, weighted: bool):
    """nll_loss's backward coefficient for reduction "mean" in 16 bits, as torch's CPU
    kernel rounds it: -(g / total_weight) rounded to `low`, then times the class weight
    and rounded again (`total_weight` as the forward finds it: the cascaded 16-bit sum of
    the weights when `weighted`, else the count of rows not ignored, rounded).

    `g`: the 0-d incoming gradient (float32), `w`: each row's weight (0 where ignored) or
    None, `ignored`: the mask of ignored rows or None, `n`: the row count; a 0-d or
    per-row float32 array.
    """
    low = np.dtype(low)
    rows = np.arange(n) if ignored is None else np.flatnonzero(~ignored)
    if weighted:
        total = cascade_total(w[rows].astype(low).astype(np.float32), rows, n, low)
    else:
        total = np.float32(low.type(rows.size))
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.negative(np.float32(g) / total).astype(low).astype(np.float32)
    if w is None:
        return np.asarray(step)
    return (w.astype(np.float32) * step).astype(low).astype(np.float32)
