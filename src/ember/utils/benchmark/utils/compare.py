"""`Compare`: many Measurements as PyTorch's table, one per label.

Rows are the statements (sub-label, else the statement) grouped by thread count, columns
the descriptions, each cell the median in one unit for the whole table. Replicates of the
same task are pooled first (`Measurement.merge`).
"""

from __future__ import annotations

import collections
import enum
import math

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

BEST, GOOD, BAD, VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
BOLD, TERMINATE = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _digits(x: float) -> int:
    return math.ceil(math.log10(x))


class _Column:
    """One description's cells: a fixed-point format wide enough for every value in it."""

    def __init__(self, groups: list, scale: float, trim: bool, highlight: bool) -> None:
        self.groups = groups  # the column's results, per thread-count group
        flat = [m for g in groups for m in g]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in flat if m)
        leading = [_digits(m.median / scale) if m else None for m in flat]
        units = max(d for d in leading if d is not None)
        decimals = min(max(m.significant_figures - d, 0) for d, m in zip(leading, flat)
                       if m is not None) if trim else 1
        width = units + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def cell(self, value: float | None, figures: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.cell(1, figures, None))
        if self.trim:
            value = trim_sigfig(value, figures)
        return self.template.format(
            value, f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else "")


def _paint(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


def _table(results: list, colorize: Colorize, trim: bool, highlight: bool) -> str:
    """The table of one label's results."""
    unit, scale = select_unit(min(r.median for r in results))
    row_keys = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
    row_keys.sort(key=lambda k: k[:2])  # (stable: statements keep their order)
    col_keys = ordered_unique(r.description for r in results)
    grid = [[None] * len(col_keys) for _ in row_keys]
    for r in results:
        grid[row_keys.index((r.num_threads, r.env, r.as_row_name))][
            col_keys.index(r.description)] = r
    envs = {r.env for r in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) if show_env else 0

    groups: list = []  # row indices per thread count
    starts = set()  # rows that open a thread-count group
    prior_threads, prior_env = None, None
    env_shown = []
    for i, (threads, env, _) in enumerate(row_keys):
        if threads != prior_threads:
            groups.append([])
            starts.add(i)
            prior_threads, prior_env = threads, ""
        groups[-1].append(i)
        env_shown.append(show_env and env != prior_env)
        prior_env = env
    columns = [_Column([tuple(grid[i][j] for i in g) for g in groups], scale, trim, highlight)
               for j in range(len(col_keys))]

    strings = [[""] + [str(k) if k is not None else "" for k in col_keys]]
    for i, row in enumerate(grid):
        first = next(m for m in row if m is not None)
        env = (f"({first.env})" if env_shown[i] else "").ljust(env_width + 4)
        cells = ["  " + env + first.as_row_name]
        for m, col in zip(row, columns):
            cells.append(col.cell(None, 1, None) if m is None else col.cell(
                m.median / scale, m.significant_figures,
                m.iqr / m.median if m.has_warnings else None))
        strings.append(cells)
    n = max(len(s) for s in strings)
    for s in strings:
        s.extend([""] * (n - len(s)))
    widths = [max(len(s[j]) for s in strings) for j in range(n)]
    lines = ["  |  ".join(t.center(w) for t, w in zip(strings[0], widths))]
    overall = len(lines[0])
    group_of = {i: gi for gi, g in enumerate(groups) for i in g}
    for i, (s, row) in enumerate(zip(strings[1:], grid)):
        if i in starts:
            lines.append(f"{row_keys[i][0]} threads: ".ljust(overall, "-"))
        best = [None] * len(row)
        if colorize == Colorize.ROWWISE:
            best = [min(m.median for m in row if m is not None)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            best = [min((m.median for m in col.groups[group_of[i]] if m is not None),
                        default=None) for col in columns]
        cells = [s[0].ljust(widths[0])]
        for text, w, m, b in zip(s[1:], widths[1:], row, best):
            text = text.center(w)
            if colorize != Colorize.NONE and m is not None and b is not None:
                text = _paint(text, m.median, b)
            cells.append(text)
        lines.append("  |  ".join(cells))
    label = results[0].label
    warned = highlight and any(r.has_warnings for r in results)
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n"
            + "\n".join(lines)
            + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n"
            + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
               if warned else ""))


class Compare:
    """A table per label of the given Measurements (`print(Compare(results))`)."""

    def __init__(self, results: list) -> None:
        self._results: list = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results) -> None:
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        by_label: dict = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            by_label[r.label].append(r)
        return "\n".join(_table(group, self._colorize, self._trim_significant_figures,
                                self._highlight_warnings) for group in by_label.values())
