"""MLX is silent: ember's own warnings stay inside the face.

ember's ops warn as PyTorch's do (`var` with `ddof >= n`, a cast of complex values to a real
type, an empty reduction, NumPy's floating-point warnings in a kernel ...). MLX gives no
warning for any of these (its core has no Python warnings at all; its Python layers,
`mlx.nn` and `mlx.optimizers`, call `warnings.warn` nowhere), so a program run on the MLX
face with warnings as errors would fail where it runs on MLX. Every public mx function and
method (`_lazy.lazy`) and every run of the pending graph therefore runs with one "ignore"
filter in place of the process's filters.

The filters are swapped, not copied: CPython's C warning machinery reads
`warnings.filters` at every warning, so binding the module attribute to another list is
all `catch_warnings` does that this needs, at a tenth of its cost (the wrapper runs on
every op). As with `catch_warnings`, the swap is process-wide for its duration: a warning
another thread issues meanwhile is not shown.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

_SILENT: list = [("ignore", None, Warning, None, 0)]


def silently(fn: Callable, *args, **kwargs):
    """`fn(*args, **kwargs)` with every warning ignored (nested calls: one swap)."""
    saved = warnings.filters
    if saved is _SILENT:
        return fn(*args, **kwargs)
    warnings.filters = _SILENT
    try:
        return fn(*args, **kwargs)
    finally:
        warnings.filters = saved
