"""`explain_tensor(t)`: the storage, strides and offset behind a tensor, and whether it views.

A tensor is metadata over a flat storage: element `t[i, j]` lives at storage index
`offset + i*stride[0] + j*stride[1]`. This prints that arithmetic for a given tensor:
its shape, dtype, device, strides, storage offset and contiguity; the storage index of
every element, drawn as a grid; which storage elements it reads (and how often, for an
expanded tensor); and whether `.view(shape)` would work, and, when not, which dims would
have to merge across a jump in memory. (Not called `explain`: that is
`torch._dynamo.explain`.)
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from .. import _view
from .._tensor import Tensor

_MAX_COLS = 12  # grid columns and storage elements shown before "..."
_MAX_ROWS = 8
_MAX_SLICES = 3  # 2-D slices of a higher-dimensional tensor
_MAX_STORAGE = 48


@dataclass(frozen=True)
class TensorExplanation:
    """What `explain_tensor` found; `str()` (or `print`) gives the whole explanation."""

    shape: tuple[int, ...]
    dtype: object
    device: object
    stride: tuple[int, ...]
    storage_offset: int
    storage_size: int  # in elements of the tensor's dtype
    itemsize: int
    is_contiguous: bool
    indices: tuple[int, ...]  # storage index of each element, in row-major order
    view_shape: tuple[int, ...] | None  # the shape asked of `.view` (-1 resolved)
    view_stride: tuple[int, ...] | None  # its strides, or None when `.view` must fail
    view_reason: str  # why it works, or why not
    values: tuple | None  # the storage's values (small CPU tensors), else None

    @property
    def view_ok(self) -> bool:
        return self.view_stride is not None

    @property
    def reads(self) -> list[int]:
        """How many times the tensor reads each storage element."""
        counts = [0] * self.storage_size
        for i in self.indices:
            counts[i] += 1
        return counts

    def __str__(self) -> str:
        return "\n".join(_describe(self))

    __repr__ = __str__


def explain_tensor(t: Tensor, view: Sequence[int] | int | None = None) -> TensorExplanation:
    """Explain `t`'s layout, and whether `t.view(view)` (default: `t.view(-1)`) would work."""
    if not isinstance(t, Tensor):
        raise TypeError(f"explain_tensor() expects a tensor, but got {type(t).__name__}")
    shape = tuple(t.shape)
    stride = tuple(t.stride())
    offset = t.storage_offset()
    itemsize = t.element_size()
    storage_size = t.untyped_storage().nbytes() // itemsize
    indices = tuple(offset + sum(i * s for i, s in zip(idx, stride))
                    for idx in itertools.product(*(range(n) for n in shape)))
    target = (-1,) if view is None else (view,) if isinstance(view, int) else tuple(view)
    view_shape, view_stride, reason = _explain_view(shape, stride, target)
    values = None
    if t.device.type == "cpu" and storage_size <= _MAX_STORAGE and not t.is_complex():
        flat = t.detach().as_strided((storage_size,), (1,), 0)  # the whole storage
        values = tuple(flat.tolist())
    return TensorExplanation(shape, t.dtype, t.device, stride, offset, storage_size, itemsize,
                             t.is_contiguous(), indices, view_shape, view_stride, reason, values)


def _runs(shape, stride) -> list[list[int]]:
    """The dims grouped into runs that are contiguous with each other in memory: within a
    run, stepping dim d moves exactly as far as walking all of dim d+1 (size-1 dims join
    any run). `.view` can split and merge dims only within a run."""
    runs: list[list[int]] = []
    prev = None
    for d, n in enumerate(shape):
        if n == 1 and runs:
            runs[-1].append(d)
            continue
        if prev is None or stride[prev] != shape[d] * stride[d]:
            runs.append([d])
        else:
            runs[-1].append(d)
        prev = d
    return runs


def _explain_view(shape, stride, target):
    """(shape asked, its strides or None, the reason in words)."""
    total = _view.numel(shape)
    try:
        new = _view.infer_size(target, total)
    except RuntimeError as e:
        return None, None, f"no shape {list(target)} holds {total} elements ({e})"
    new_stride = _view.view_strides(shape, stride, new)
    if new_stride is not None:
        how = "no copy: " + ("the tensor is contiguous" if _view.is_contiguous(shape, stride)
                             else "every merged or split dim lies within one run of memory")
        return new, new_stride, how
    # A view fails when one new dim would have to cover dims from two runs. Find the first
    # run boundary (counted from the right, in elements) that the new shape does not keep.
    runs = _runs(shape, stride)
    kept = {_view.numel(new[j:]) for j in range(len(new) + 1)}
    inner = 1
    for left, right in zip(reversed(runs[:-1]), reversed(runs[1:])):
        inner *= _view.numel([shape[d] for d in right])
        if inner in kept:
            continue
        d, e = left[-1], right[0]
        while shape[d] == 1 and d > left[0]:
            d -= 1
        j = next(j for j in range(len(new)) if _view.numel(new[j + 1:]) < inner)
        return new, None, (
            f"new dim {j} (size {new[j]}) would merge dims {d} and {e}, which needs one step "
            f"along dim {d} to equal a whole walk of dim {e} (stride[{d}] == size[{e}] * "
            f"stride[{e}]), but {stride[d]} != {shape[e]} * {stride[e]}: no single stride "
            f"reaches those elements in order. .reshape({_shape_arg(new)}) copies them (as "
            f"does .contiguous().view(...))")
    return new, None, "the elements are not evenly spaced in storage"  # (not reached)


def _shape_arg(shape) -> str:
    return ", ".join(str(n) for n in shape)


def _grid(shape, indices, letters) -> list[str]:
    """The storage index of each element: a row per index of the second-to-last dim, a
    column per index of the last, one such grid per index of the leading dims."""
    if not shape:
        return [f"    {indices[0]}"]
    if not indices:
        return ["    (no elements)"]
    cols = shape[-1]
    rows = shape[-2] if len(shape) >= 2 else 1
    lead = shape[:-2]
    row_name, col_name = (letters[-2] if len(shape) >= 2 else ""), letters[-1]
    shown = min(cols, _MAX_COLS)
    width = max(max((len(str(i)) for i in indices), default=1),
                len(f"{col_name}={shown - 1}")) + 1
    more = " ..." if cols > shown else ""
    lines = []
    for k, prefix in enumerate(itertools.product(*(range(n) for n in lead))):
        if k == _MAX_SLICES:
            lines.append(f"    ... ({_view.numel(lead) - k} more)")
            break
        if lead:
            lines.append("    " + ", ".join(f"{c}={i}" for c, i in zip(letters, prefix)) + ":")
        head = "".join(f"{col_name + '=' + str(j):>{width}}" for j in range(shown))
        lines.append("    " + " " * (len(row_name) + 2 + len(str(rows - 1))) + head + more)
        base = k * rows * cols
        for i in range(min(rows, _MAX_ROWS)):
            cells = "".join(f"{indices[base + i * cols + j]:>{width}}" for j in range(shown))
            label = f"{row_name}={i}" if row_name else ""
            lines.append(f"    {label:<{len(row_name) + 2 + len(str(rows - 1))}}" + cells + more)
        if rows > _MAX_ROWS:
            lines.append(f"    ... ({rows - _MAX_ROWS} more rows)")
    return lines


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _describe(x: TensorExplanation) -> list[str]:
    letters = "ijklmnop"[:len(x.shape)] if len(x.shape) <= 8 else \
        [f"i{d}" for d in range(len(x.shape))]
    formula = " + ".join([str(x.storage_offset)]
                         + [f"{d}*{s}" for d, s in zip(letters, x.stride)])
    where = (f"  element [{', '.join(letters)}] is storage[{formula}]:" if x.shape
             else f"  its one element is storage[{x.storage_offset}]:")
    contiguous = _view.contiguous_strides(x.shape)
    lines = [
        f"tensor of shape {tuple(x.shape)}, {x.dtype}, on {x.device}",
        f"  stride {tuple(x.stride)}, storage offset {x.storage_offset}",
        "  contiguous: " + ("yes" if x.is_contiguous else
                            f"no (row-major strides for this shape are {contiguous})"),
        f"  storage: {_plural(x.storage_size, 'element')} of {_plural(x.itemsize, 'byte')} "
        f"({_plural(x.storage_size * x.itemsize, 'byte')})",
        where,
        *_grid(x.shape, x.indices, letters),
    ]
    reads = x.reads
    n_read = sum(1 for r in reads if r)
    many = any(r > 1 for r in reads)
    lines.append(f"  it reads {n_read} of the {_plural(x.storage_size, 'storage element')}"
                 + (" (some more than once: a stride of 0)" if many else "")
                 + " (x: once, a number: that many times, .: not at all)")
    shown = min(x.storage_size, _MAX_COLS * 2)
    more = " ..." if x.storage_size > shown else ""
    rows = [("    index ", [str(i) for i in range(shown)]),
            ("    read  ", ["." if r == 0 else ("x" if r == 1 else str(r))
                            for r in reads[:shown]])]
    if x.values is not None:
        rows.append(("    value ", [f"{v:g}" if isinstance(v, float) else str(v)
                                    for v in x.values[:shown]]))
    width = max((len(c) for _, row in rows for c in row), default=1)
    for name, row in rows:
        lines.append(name + " ".join(f"{c:>{width}}" for c in row) + more)
    if x.view_shape is None:
        verdict = f".view: {x.view_reason}"
    elif x.view_ok:
        verdict = (f".view({_shape_arg(x.view_shape)}) works, with stride "
                   f"{tuple(x.view_stride)} ({x.view_reason})")
    else:
        verdict = f".view({_shape_arg(x.view_shape)}) fails: {x.view_reason}"
    lines.extend(textwrap.wrap(verdict, 92, initial_indent="  ", subsequent_indent="    "))
    return lines
