"""log_softmax then nll_loss: their two backward kernels as one primitive.

Eager runs nll_loss's backward (a zero matrix with one gradient per row, at the target) and
then log_softmax's (g - exp(out) * sum(g)). A compiled graph that holds both, the first
read by nothing else, runs this instead (`graph/patterns.py`): one pass that reads `out`
and writes dx, with no zero matrix written and read again. It computes what the pair
computes, bit for bit: the NumPy kernel is the pair's NumPy kernels, and the C kernel
(csrc/nll_softmax.c) does the C backward's arithmetic with the row's one gradient in place of
the zeros. With `logits=True` its fourth operand is log_softmax's input rather than its
output (when nothing else reads the log-probabilities): the C kernel computes each one in a
register, as the forward kernel would, so neither is written out. Not differentiable: it
exists only inside compiled programs.
"""

from __future__ import annotations

import numpy as np

from .. import native
from ..native import calls
from .nn_ops import _check_classes, _nll_backward_kernel, nll_coefficients
from .registry import Primitive, batch_by_loop, nondifferentiable
from .softmax import _softmax_backward_kernel, _softmax_kernel


def _kernel(g, target, weight, out, *, reduction, ignore_index, logits=False):
    if logits:
        out = _softmax_kernel(out, dim=1, log=True)
    _check_classes(target, out.shape[1], ignore_index)
    gin = _nll_backward_kernel(g, target, weight, reduction=reduction,
                               ignore_index=ignore_index, in_shape=out.shape)
    return _softmax_backward_kernel(gin, out, dim=1, log=True)


def _native(lib, g, target, weight, out, *, reduction, ignore_index, logits=False):
    sfx = calls.suffix(out, g)
    if sfx is None or out.ndim != 2:
        return NotImplemented
    rows, n = out.shape
    P, I64 = calls.P, calls.I64
    if weight is None and reduction != "none" and g.__class__ is np.ndarray and g.ndim == 0 \
            and rows < _EXACT_COUNT and \
            target.dtype == np.int64 and target.flags.c_contiguous and \
            out.flags.c_contiguous:  # (the usual loss: its coefficient found in C)
        dx = np.empty_like(out)
        bad = calls.entry(lib, f"nll_log_softmax_backward_reduced_{sfx}",
                          [P, P, P, calls.INT, P, I64, I64, I64, calls.INT], I64)(
            calls.ptr(out), calls.ptr(target), calls.ptr(g), int(reduction == "mean"),
            calls.ptr(dx), rows, n, ignore_index, int(logits))
        if bad >= 0:
            _check_classes(target, n, ignore_index)  # (raises, naming the target)
        return dx
    if weight is not None:  # (the weights are read at the targets: checked first)
        _check_classes(target, n, ignore_index)
    coef, safe = nll_coefficients(g, target, weight, reduction, ignore_index, n)
    coef = np.asarray(coef, out.dtype)  # (0-d: one number for every row)
    safe = np.ascontiguousarray(safe, np.int64)
    y = np.ascontiguousarray(out)
    dx = np.empty_like(y)
    bad = calls.entry(lib, f"nll_log_softmax_backward_{sfx}", [P, P, P, I64, P, I64, I64, I64,
                                                                   calls.INT], I64)(
        calls.ptr(y), calls.ptr(safe), calls.ptr(coef), int(coef.ndim > 0), calls.ptr(dx),
        rows, n, ignore_index, int(logits))
    if bad >= 0:
        _check_classes(target, n, ignore_index)  # (raises, naming the target)
    return dx


_EXACT_COUNT = 1 << 24  # (rows counted exactly in float32, as the NumPy sum of ones is)


nll_log_softmax_backward_p = Primitive(
    "nll_log_softmax_backward", _kernel,
    lambda g, target, weight, out, *, reduction, ignore_index, logits=False:
    (out._shape, out._dtype))
nondifferentiable(nll_log_softmax_backward_p)
batch_by_loop(nll_log_softmax_backward_p, "bound only inside compiled programs, which run "
                                          "no transform")
native.register(nll_log_softmax_backward_p, "nll_softmax", _native)
