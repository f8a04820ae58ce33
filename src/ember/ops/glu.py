"""GLU's gate for float16 / bfloat16 halves: a * sigmoid(b) as one elementwise node with
PyTorch's reduced-precision kernels. Forward in float, rounded once; backward as PyTorch's
glu_backward: s = sigmoid(b) rounded to the dtype, the first half's gradient s * g (rounded
once), the second's (1 - s) * s * a * g in float, left to right, rounded once. (float32 and
float64 GLU stay the composite in nn.functional, whose roundings are already PyTorch's.)"""

from __future__ import annotations

import numpy as np

from ._common import type_name
from .binary import binary_p, member
from .registry import bind, defjvp, defvjp

_F32 = np.dtype(np.float32)


def _glu_kernel(a, b):
    work = _F32 if a.dtype.itemsize == 2 else a.dtype  # (16-bit halves in float)
    with np.errstate(over="ignore"):
        out = a.astype(work) * (1 / (1 + np.exp(-b.astype(work))))
    return out.astype(a.dtype)


glu_fn = member("glu", _glu_kernel, "GluBackward0")


def _second_half_grad(g, out, a, b):
    s = b.sigmoid().float()
    return ((1 - s) * s * a.float() * g.float()).to(a.dtype)


def _no_jvp(primals, tangents, out):
    """PyTorch has no forward-mode kernel for 16-bit GLU (its float32 / float64 one is the
    composite's)."""
    raise NotImplementedError(
        f"\"glu_jvp_cpu\" not implemented for '{type_name(primals[0]._dtype)}'")


defvjp(glu_fn, lambda g, out, a, b: b.sigmoid() * g, _second_half_grad, reads=((1,), (0, 1)))
defjvp(glu_fn, _no_jvp)


def glu_halves(a, b):
    """a * sigmoid(b) for 16-bit halves of one input (same shape and dtype)."""
    return bind(binary_p, a, b, fn=glu_fn)
