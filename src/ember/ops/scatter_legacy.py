"""scatter / scatter_ with the deprecated `reduce='add' | 'multiply'` (ATen's scatter.reduce
and scatter.value_reduce overloads).

They reduce like scatter_reduce(include_self=True) with sum / prod, but PyTorch gives them no
derivative: the output still requires grad, under a `NotImplemented` node whose backward
raises "derivative for aten::scatter is not implemented" (and forward mode refuses), so they
are a member of the scatter family of their own rather than scatter_reduce's.
"""

from __future__ import annotations

import numpy as np

from .index import scatter_accumulator, scatter_p, scatter_target, src_part
from .registry import Member, derivative_not_implemented


def _legacy_kernel(a, idx, src, *, dim, reduce):
    # (float16 / bfloat16 accumulate in float32 and round once, as PyTorch's kernel does)
    acc = scatter_accumulator(a)
    flat, key, ishape = scatter_target(acc, idx, dim)
    (np.add if reduce == "add" else np.multiply).at(flat, key, src_part(src, ishape))
    return acc.astype(a.dtype, copy=False)


scatter_legacy_fn = Member(scatter_p, "scatter_legacy", _legacy_kernel,
                           lambda x, idx, src, *, dim, reduce: (x._shape, x._dtype))
derivative_not_implemented(scatter_legacy_fn, "scatter", (True, False, True))
