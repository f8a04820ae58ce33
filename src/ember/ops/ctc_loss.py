"""The CTC loss (connectionist temporal classification): a per-sample alpha / beta
recursion in log space over the blank-extended targets (in float64 here), with
its gradient as the second primitive (PyTorch's form, exp(lp) minus the posterior, which
assumes log-probabilities from log_softmax); forward-mode and vmap rules beside them.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._batching import batch_size, batched
from .creation import zeros, zeros_like
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp, nondifferentiable

_NEG = -np.inf


def _ctc_tables(work, parts, input_lengths, blank: int, with_beta: bool):
    """Log-space forward (alpha) and backward (beta) tables of every sample at once, (T, N, S)
    over the blank-extended targets padded to the longest (S = 2 L + 1); both include the
    emissions. Each sample's entries are its own recursion's, element for element: padded
    positions have no emission (-inf), so they stay -inf and feed nothing, and a sample's
    beta starts at its own last frame. Returns (ext, valid, la, lb)."""
    T, B, _ = work.shape
    S = 2 * max((p.size for p in parts), default=0) + 1
    ext = np.full((B, S), blank, dtype=np.int64)
    valid = np.zeros((B, S), bool)
    for b, tgt in enumerate(parts):
        ext[b, 1:2 * tgt.size + 1:2] = tgt
        valid[b, :2 * tgt.size + 1] = True
    skip = np.zeros((B, S), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2]) & valid[:, 2:]
    em = work[:, np.arange(B)[:, None], ext]  # (T, N, S)
    em[:, ~valid] = _NEG
    la = np.full((T, B, S), _NEG)
    if T:
        la[0, :, :2] = em[0, :, :2]
    shifted = np.full((B, S), _NEG)
    for t in range(1, T):
        prev = la[t - 1]
        one = shifted.copy()
        one[:, 1:] = prev[:, :-1]
        two = shifted.copy()
        two[:, 2:] = prev[:, :-2]
        la[t] = np.logaddexp(np.logaddexp(prev, one), np.where(skip, two, _NEG)) + em[t]
    if not with_beta:
        return ext, valid, la, None
    lb = np.full((T, B, S), _NEG)
    lengths = np.asarray(input_lengths, dtype=np.int64)
    ends = np.arange(S)[None, :] >= (valid.sum(1) - 2)[:, None]  # the last two positions
    skip_next = np.zeros((B, S), bool)
    skip_next[:, :-2] = skip[:, 2:]
    for t in range(T - 1, -1, -1):
        first = (lengths == t + 1)[:, None] & ends  # where a sample's last frame is t
        row = np.where(first, em[t], _NEG)
        if t + 1 < T:
            nxt = lb[t + 1]
            one = shifted.copy()
            one[:, :-1] = nxt[:, 1:]
            two = shifted.copy()
            two[:, :-2] = nxt[:, 2:]
            rec = np.logaddexp(np.logaddexp(nxt, one), np.where(skip_next, two, _NEG)) + em[t]
            row = np.where((lengths > t + 1)[:, None], rec, row)
        lb[t] = row
    return ext, valid, la, lb


def _ctc_split(targets, target_lengths):
    if targets.ndim == 2:
        return [targets[i, :n] for i, n in enumerate(target_lengths)]
    starts = np.concatenate(([0], np.cumsum(target_lengths)[:-1]))
    return [targets[s:s + n] for s, n in zip(starts, target_lengths)]


def _ctc_run(lp, targets, *, input_lengths, target_lengths, blank, zero_infinity, with_grad):
    """Each sample's loss (a float64 per sample, cast to lp's dtype) and, `with_grad`, the
    (T, N, C) float64 gradient of every loss."""
    work = lp.astype(np.float64)
    parts = [t.astype(np.int64) for t in _ctc_split(targets, target_lengths)]
    ext, valid, la, lb = _ctc_tables(work, parts, input_lengths, blank, with_grad)
    nll = np.empty(len(parts))
    for i, tgt in enumerate(parts):
        t_len, n = input_lengths[i], 2 * tgt.size + 1
        if t_len == 0:
            nll[i] = 0.0 if tgt.size == 0 else np.inf
        else:
            last = la[t_len - 1, i]
            nll[i] = -np.logaddexp(last[n - 1], last[n - 2] if n > 1 else _NEG)
    grad = _ctc_grad(work, ext, valid, la, lb, nll, input_lengths) if with_grad else None
    if zero_infinity:
        lost = np.isinf(nll)
        nll[lost] = 0.0
        if grad is not None:
            grad[:, lost] = 0.0
    return nll.astype(lp.dtype), grad


def _ctc_grad(work, ext, valid, la, lb, nll, input_lengths):
    """PyTorch's gradient, exp(lp) - exp(log sum_{s: ext_s = c} alpha beta + nll - lp), over
    each sample's live frames (zero after them). The sums over the positions of one label
    run as one sample's own would, position after position (`reduceat` over the positions
    grouped by sample and label, in order)."""
    T, B, C = work.shape
    S = ext.shape[1]
    b, s = np.nonzero(valid)  # (row-major: by sample, then position)
    label = ext[b, s]
    order = np.lexsort((s, label, b))
    b, s, label = b[order], s[order], label[order]
    starts = np.flatnonzero(np.r_[True, (b[1:] != b[:-1]) | (label[1:] != label[:-1])])
    ab = (la + lb).reshape(T, B * S)[:, b * S + s]
    lcab = np.full((T, B, C), _NEG)
    if T and b.size:
        lcab[:, b[starts], label[starts]] = np.logaddexp.reduceat(ab, starts, axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        grad = np.exp(work) - np.exp(lcab + nll[None, :, None] - work)
    grad[np.arange(T)[:, None] >= np.asarray(input_lengths, dtype=np.int64)[None, :]] = 0.0
    return grad


def _ctc_kernel(lp, targets, **params):
    return _ctc_run(lp, targets, with_grad=False, **params)[0]


def _ctc_grad_kernel(g, lp, targets, **params):
    _, grad = _ctc_run(lp, targets, with_grad=True, **params)
    out = grad * g.astype(np.float64)[None, :, None]
    return out.astype(lp.dtype)


ctc_loss_p = Primitive("ctc_loss", _ctc_kernel,
                       lambda lp, targets, **p: ((lp._shape[1],), lp._dtype),
                       grad_name="CtcLossBackward0")
ctc_grad_p = Primitive("ctc_loss_backward", _ctc_grad_kernel,
                       lambda g, lp, targets, **p: (lp._shape, lp._dtype))
nondifferentiable(ctc_grad_p)
defvjp(ctc_loss_p, lambda g, out, lp, targets, **p: apply(ctc_grad_p, g, lp, targets, **p),
       None, reads=((0, 1), ()))


def _lengths(x, name: str) -> tuple[int, ...]:
    if isinstance(x, Tensor):
        if x._dtype._kind != 1:
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in x.reshape(-1).tolist())
    return tuple(int(v) for v in x)


def _ctc_check(lp: Tensor, targets: Tensor, in_len, tgt_len, blank: int) -> None:
    """The checks of ATen's ctc_loss_allocate_outputs, in its order and words."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs'{where}")
    if not 1 <= targets.ndim <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{where}")
    batch, labels = lp._shape[1], lp._shape[2]
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(in_len) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgt_len) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for n in tgt_len:
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {n}{where}")
    size = sum(tgt_len) if targets.ndim == 1 else batch
    if targets._shape[0] != size:
        raise RuntimeError(f"Expected tensor to have size {size} at dimension 0, but got size "
                           f"{targets._shape[0]} for argument #2 'targets'{where}")
    longest = max(tgt_len, default=0)
    if targets.ndim == 2 and targets._shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {targets._shape[1]} for argument #2 'targets'{where}")
    for n in in_len:
        if n < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                               f"value {n}{where}")
        if n > lp._shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp._shape[0]}, "
                               f"but got value {n}{where}")


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of (T, N, C) log-probabilities against padded or concatenated targets."""
    from ._common import type_name
    from .creation import tensor
    from .ternary import where

    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    in_len = _lengths([input_lengths] if isinstance(input_lengths, int) else input_lengths,
                      "input_lengths")
    tgt_len = _lengths([target_lengths] if isinstance(target_lengths, int) else target_lengths,
                       "target_lengths")
    # NOTE: as ATen: an unbatched input is a batch of one whose targets are concatenated
    # (1-D targets are not unsqueezed).
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp._dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for '
                                  f"'{type_name(lp._dtype)}'")
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    _ctc_check(lp, targets, in_len, tgt_len, int(blank))
    res = apply(ctc_loss_p, lp, targets.to(dt.int64), input_lengths=in_len,
                target_lengths=tgt_len, blank=int(blank), zero_infinity=bool(zero_infinity))
    if zero_infinity:  # (the kernel already gives 0 and a zero gradient: torch's node)
        res = where(res == math.inf, zeros((), dtype=res.dtype), res)
    if reduction == "mean":
        denom = tensor([max(n, 1) for n in tgt_len], dtype=res.dtype)
        return (res / denom).mean()
    if reduction == "sum":
        return res.sum()
    return res.squeeze(0) if unbatched else res

# --- forward mode and vmap -------------------------------------------------------------------
# The CTC tangent contracts the per-sample gradient (the backward kernel at g = 1) with the
# tangent of the log-probabilities; vmap folds the batch into the loss's own batch dim.

def _ctc_jvp(primals, tangents, out, **params):
    """PyTorch's CTC gradient is exp(lp) - (the true derivative's magnitude), the form that
    assumes lp comes from log_softmax; the tangent takes the true derivative, the backward
    kernel's gradient at g = 1 less exp(lp) over each sample's live time steps (none for a
    loss zero_infinity zeroed)."""
    from .creation import arange, tensor

    lp, targets = primals
    grad = bind(ctc_grad_p, zeros_like(out) + 1, lp, targets, **params)
    live = arange(lp._shape[0]).reshape(-1, 1, 1) < tensor(
        params["input_lengths"]).reshape(1, -1, 1)
    if params["zero_infinity"]:
        live = live & (out != 0).reshape(1, -1, 1)
    return ((grad - lp.exp() * live.to(lp.dtype)) * tangents[0]).sum((0, 2))


def _ctc_fold(args, dims, params):
    """log-probs (T, N, C) with the batch folded into N, targets likewise (padded rows or
    the concatenation, element after element) and the lengths repeated per element."""
    lp, targets = args[-2:]
    size = batch_size(args, dims)
    lp = batched(lp, dims[-2], size).movedim(0, 1)
    lp = lp.reshape((lp._shape[0], -1) + tuple(lp._shape[3:]))
    tg = batched(targets, dims[-1], size)
    tg = tg.reshape((-1,) + tuple(tg._shape[2:]))
    p = dict(params, input_lengths=params["input_lengths"] * size,
             target_lengths=params["target_lengths"] * size)
    return size, lp, tg, p


def _ctc_batch(args, dims, **params):
    size, lp, tg, p = _ctc_fold(args, dims, params)
    return bind(ctc_loss_p, lp, tg, **p).reshape(size, -1), 0


def _ctc_grad_batch(args, dims, **params):
    size, lp, tg, p = _ctc_fold(args, dims, params)
    g = batched(args[0], dims[0], size).reshape(-1)
    out = bind(ctc_grad_p, g, lp, tg, **p)
    return out.reshape((out._shape[0], size, -1) + tuple(out._shape[2:])), 1


defjvp(ctc_loss_p, _ctc_jvp)
defbatch(ctc_loss_p, _ctc_batch)
defbatch(ctc_grad_p, _ctc_grad_batch)
