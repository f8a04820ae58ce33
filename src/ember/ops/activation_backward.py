"""The fused derivative kernels of the activations, members of the small
`activation_backward` family: ReLU's and threshold's (PyTorch's threshold_backward) here,
GELU's (gelu_backward) in `gelu.py`; their batch rule, and `threshold_grad`, the select
that hardtanh, leaky_relu and relu differentiate with."""

from __future__ import annotations

import numpy as np

from .. import native
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..native import calls
from ._batching import front
from ._common import same_meta
from .registry import Family, Member, apply, bind, defbatch, defjvp, deflower, defvjp

# ReLU's and GELU's derivatives as fused kernels (PyTorch's threshold_backward and
# gelu_backward), so that double backward and forward mode see one op each.
activation_backward_p = Family("activation_backward")


def _backward_batch(args, dims, **params):
    """vmap of a derivative kernel: batch axes to the front, every input expanded to the one
    broadcast shape (the kernels read their inputs elementwise, shaped alike)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    logical = [tuple(a.shape[:d]) + tuple(a.shape[d + 1:]) if d is not None else tuple(a.shape)
               for a, d in zip(args, dims)]
    full = tuple(broadcast_shapes(*logical))
    moved = []
    for a, d, shape in zip(args, dims, logical):
        if d is not None:
            a = front(a, d).reshape((size,) + (1,) * (len(full) - len(shape)) + shape)
        moved.append(a.expand((size,) + full).contiguous())
    return bind(activation_backward_p, *moved, **params), 0


defbatch(activation_backward_p, _backward_batch)


def _backward(name: str, kernel, meta, grad_name: str) -> Member:
    return Member(activation_backward_p, name, kernel, meta, grad_name=grad_name)


def opmath_threshold(threshold, np_dtype: np.dtype):
    """A threshold as PyTorch's kernels compare with it: in float32 for float16 / bfloat16
    inputs (the type they compute in), else in the input's own type."""
    if np_dtype.itemsize == 2 and np_dtype.kind in "fV":
        return np.float32(threshold)
    return threshold


def _threshold_backward_kernel(g, x, *, threshold):
    """g where x > threshold, else 0 (NaN x keeps g, as PyTorch's `x <= t ? 0 : g`).

    A bitwise select: g's bits ANDed with all-ones or zero, branch-free (a NumPy `where`
    on a random mask costs several times more) and exact for inf / NaN gradients."""
    # (the bool mask turned into 0 / -1 words by one subtract that casts in its loop: 3x
    # faster than an astype first; asarray: on 0-d inputs it gives a NumPy scalar)
    keep = np.asarray(np.subtract(np.less_equal(x, opmath_threshold(threshold, x.dtype)), 1,
                                  dtype=np.dtype(f"i{g.dtype.itemsize}")))
    return np.bitwise_and(g.view(keep.dtype), keep,
                          out=keep if keep.shape == g.shape else None).view(g.dtype)


def _threshold_backward_native(lib, g, x, *, threshold):
    """The same select in C (csrc/activation.c): one pass, split over the native pool, for
    float32 / float64 operands of one shape and layout (C-contiguous) of 64K elements or
    more (below that NumPy's three loops cost less than the call's setup)."""
    if g.size < _NATIVE_MIN:
        return NotImplemented
    sfx = calls.suffix(g, x)
    if sfx is None or g.shape != x.shape or not (
            g.flags.c_contiguous and x.flags.c_contiguous) or not isinstance(
            threshold, (int, float)):
        return NotImplemented
    out = np.empty_like(g)
    calls.entry(lib, f"threshold_backward_{sfx}", [calls.P] * 3 + [calls.I64, calls.F64])(
        calls.ptr(g), calls.ptr(x), calls.ptr(out), g.size, threshold)
    return out


_NATIVE_MIN = 1 << 16

# ReLU's and threshold's derivative as one primitive (PyTorch's threshold_backward).
threshold_backward_p = _backward("threshold_backward", _threshold_backward_kernel,
                                 lambda g, x, *, threshold: same_meta(g),
                                 "ThresholdBackwardBackward0")
native.register(threshold_backward_p, "activation", _threshold_backward_native,
                min_size=(globals(), "_NATIVE_MIN"))
# (the kernel's bitwise select: g's bits where x > 0, else +0.0; NaN x keeps g)
deflower(threshold_backward_p, "EMBER_PICK({1} <= 0, ({T})0, {0})", params={"threshold": 0},
         support="#define EMBER_PICK(c, a, b) "
                 "_Generic((a), float: ember_pickf, double: ember_pick)(c, a, b)\n")


def threshold_grad(g: Tensor, x: Tensor, threshold) -> Tensor:
    """g where x > threshold, else 0 (the fused kernel, bound)."""
    return apply(activation_backward_p, g, x, fn=threshold_backward_p, threshold=threshold)


defvjp(threshold_backward_p,
       lambda v, out, g, x, *, threshold: threshold_grad(v, x, threshold),
       lambda v, out, g, x, *, threshold: _zeros_like(x), reads=((1,), (1,)))


def _threshold_backward_jvp(primals, tangents, out, *, threshold):
    # linear in g, piecewise constant in x
    t = tangents[0]
    return _zeros_like(out) if t is None else threshold_grad(t, primals[1], threshold)


defjvp(threshold_backward_p, _threshold_backward_jvp)


def _zeros_like(x: Tensor) -> Tensor:
    from .creation import zeros_like

    return zeros_like(x)
