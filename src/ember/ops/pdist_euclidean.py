"""pdist for p = 2 as one graph node (PyTorch's PdistBackward0) with PyTorch's gradient.

The composite (composite.pdist: vector_norm of input[i] - input[j] over the pairs i < j)
records a gather per side, and its backward scatters each side's (pairs, M) gradient back
with index adds: 20-100x PyTorch's time for 64 rows. Here, for float32 / float64 CPU input
in plain eager mode, the forward runs the composite's kernels on arrays (the same bits) and
records one node whose backward is PyTorch's loop (`_backward_kernel`; csrc/pdist.c in C):
each pair's (g * d) / dist added to its first row and subtracted from its second, in pair
order, which is PyTorch's gradient bit for bit (the composite's added the two sides'
scatters apart, a few ulps away). A gradient with create_graph=True is the composite's
(differentiable again; PyTorch's pdist has no double backward).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._core import dispatch
from .._core.primitive import primitives
from .._tensor import Tensor, _wrap
from ..native import calls
from .one_node import differentiable_grad, plain_call, plain_eager
from .reduce import reduce_p
from .registry import Primitive, defvjp


def composite(x: Tensor) -> Tensor:
    """The norms of the row differences of every pair i < j, row-major, as ember ops."""
    from .composite import triu_indices
    from .stats import vector_norm

    i, j = triu_indices(x._shape[0], x._shape[0], 1, device=x.device)
    return vector_norm(x[i] - x[j], 2.0, -1)


_BLOCK = 1 << 16  # differences made and reduced at a time: they stay in cache


def _forward_kernel(x: np.ndarray) -> np.ndarray:
    """`composite`'s kernels on the array: its differences (row i less each later row,
    rather than two gathers) and their norms, a block of rows of pairs at a time (each
    pair's norm is its own row's reduction, whatever the block)."""
    from .stats import VECTOR_NORM

    n, m = x.shape
    out = np.empty(n * (n - 1) // 2, x.dtype)
    rows = max(1, _BLOCK // m)
    k, i = 0, 0
    while i < n - 1:
        end, size = i, 0
        while end < n - 1 and (size == 0 or size + n - 1 - end <= rows):
            size += n - 1 - end
            end += 1
        d = np.empty((size, m), x.dtype)
        at = 0
        for r in range(i, end):
            np.subtract(x[r], x[r + 1:], out=d[at:at + n - 1 - r])
            at += n - 1 - r
        out[k:k + size] = dispatch._cpu[reduce_p](d, fn=VECTOR_NORM, ord=2.0, dims=(1,),
                                                  keepdim=False)
        k, i = k + size, end
    return out


def _backward_kernel(x: np.ndarray, g: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """PyTorch's pdist gradient for p = 2: for each pair k = (i, j) in order, res =
    (g[k] * (x[i] - x[j])) / dist[k] (0 where dist[k] is 0) added to row i and subtracted
    from row j, each step rounded. Row i's own pairs come after every pair that subtracts
    from it, so they are added to it in order as one in-order sum down the rows."""
    n = x.shape[0]
    out = np.zeros_like(x)
    k = 0
    for i in range(n - 1):
        end = k + n - 1 - i
        dk = dist[k:end, None]
        zero = dk == 0
        res = np.multiply(g[k:end, None], np.subtract(x[i], x[i + 1:]))
        res = np.where(zero, 0, np.divide(res, np.where(zero, 1, dk))).astype(x.dtype)
        out[i + 1:] -= res
        # (accumulate adds in order; a reduction down a single column would be pairwise)
        out[i] = np.add.accumulate(np.concatenate([out[i:i + 1], res]), axis=0)[-1]
        k = end
    return out


def _backward_native(x: np.ndarray, g: np.ndarray, dist: np.ndarray) -> np.ndarray | None:
    """`_backward_kernel` in C (csrc/pdist.c), or None where native kernels are off."""
    sfx = calls.suffix(x, g, dist)
    lib = None if sfx is None else native.library("pdist")
    if lib is None:
        return None
    x, g, dist = (np.ascontiguousarray(a) for a in (x, g, dist))
    out = np.empty_like(x)
    calls.entry(lib, f"pdist2_backward_{sfx}", [calls.P] * 4 + [calls.I64] * 2)(
        calls.ptr(x), calls.ptr(g), calls.ptr(dist), calls.ptr(out), x.shape[0], x.shape[1])
    return out


def backward(x: np.ndarray, g: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """The gradient of pdist (p = 2) with respect to `x`, for the cotangent `g`."""
    out = _backward_native(x, g, dist)
    if out is None:
        out = dispatch.run_quiet(_backward_kernel, x, g, dist)
    return out


def _array(t: Tensor) -> np.ndarray:
    return t._np if t._np is not None else t._array()


def _eval(prim, args: tuple, params: dict) -> Tensor:
    (x,) = args
    out = _wrap(dispatch.run_quiet(_forward_kernel, _array(x)))
    if grad_mode.state.enabled and x._requires_grad:
        dispatch.autograd.record(prim, dispatch.vjp_rules[prim], args, params, out)
    return out


def _vjp(g: Tensor, out: Tensor, x: Tensor) -> Tensor:
    if grad_mode.state.enabled:  # (create_graph: the composite's differentiable gradient)
        return differentiable_grad(composite, x, g)
    return _wrap(backward(_array(x), _array(g), _array(out)))


_pdist2_p = Primitive("pdist_p2", None, grad_name="PdistBackward0", impl=_eval)
primitives.remove(_pdist2_p)  # (eager only: under a transform the composite runs)
defvjp(_pdist2_p, _vjp, reads=((0,),), save_output=True)


def pdist2(x: Tensor) -> Tensor | None:
    """pdist(x, 2) of a checked (N, M) input with N >= 2 and M >= 1, as one node; None
    where the composite runs (another dtype or device, an interpreter or saved-tensor
    hooks active)."""
    if x._dtype not in (dt.float32, dt.float64) or x.device.type != "cpu" or \
            not plain_eager() or x._shape[0] < 2 or not x._shape[1]:
        return None
    if plain_call(x):
        return _wrap(dispatch.run_quiet(_forward_kernel, _array(x)))
    return dispatch.bind(_pdist2_p, x)
