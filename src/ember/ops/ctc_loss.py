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


def _ctc_tables(lp, ext, skip, t_len):
    """Log-space forward (alpha) and backward (beta) tables; both include the emissions."""
    n = ext.size
    em = lp[:t_len][:, ext]
    la = np.full((t_len, n), _NEG)
    lb = np.full((t_len, n), _NEG)
    la[0, :min(2, n)] = em[0, :min(2, n)]
    for t in range(1, t_len):
        prev = la[t - 1]
        one = np.concatenate(([_NEG], prev[:-1]))
        two = np.where(skip, np.concatenate(([_NEG, _NEG], prev[:-2]))[:n], _NEG)
        la[t] = np.logaddexp(np.logaddexp(prev, one), two) + em[t]
    lb[t_len - 1, max(n - 2, 0):] = em[t_len - 1, max(n - 2, 0):]
    skip_next = np.concatenate((skip[2:], [False, False]))[:n]
    for t in range(t_len - 2, -1, -1):
        nxt = lb[t + 1]
        one = np.concatenate((nxt[1:], [_NEG]))
        two = np.where(skip_next, np.concatenate((nxt[2:], [_NEG, _NEG]))[:n], _NEG)
        lb[t] = np.logaddexp(np.logaddexp(nxt, one), two) + em[t]
    return la, lb


def _ctc_sample(lp, target, t_len: int, blank: int, with_grad: bool):
    ext = np.full(2 * target.size + 1, blank, dtype=np.int64)
    ext[1::2] = target
    skip = np.zeros(ext.size, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    if t_len == 0:
        return (0.0 if target.size == 0 else np.inf), np.zeros_like(lp)
    la, lb = _ctc_tables(lp, ext, skip, t_len)
    nll = -np.logaddexp(la[-1, -1], la[-1, -2] if ext.size > 1 else _NEG)
    if not with_grad:
        return nll, None
    # PyTorch's gradient: exp(lp) - exp(log sum_{s: ext_s = c} alpha beta + nll - lp).
    grad = np.zeros_like(lp)
    lcab = np.full((t_len, lp.shape[1]), _NEG)
    for c in np.unique(ext):
        cols = ext == c
        lcab[:, c] = np.logaddexp.reduce(la[:, cols] + lb[:, cols], axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        grad[:t_len] = np.exp(lp[:t_len]) - np.exp(lcab + nll - lp[:t_len])
    return nll, grad


def _ctc_split(targets, target_lengths):
    if targets.ndim == 2:
        return [targets[i, :n] for i, n in enumerate(target_lengths)]
    starts = np.concatenate(([0], np.cumsum(target_lengths)[:-1]))
    return [targets[s:s + n] for s, n in zip(starts, target_lengths)]


def _ctc_run(lp, targets, *, input_lengths, target_lengths, blank, zero_infinity, with_grad):
    work = lp.astype(np.float64)
    parts = _ctc_split(targets, target_lengths)
    losses, grads = [], []
    for i, tgt in enumerate(parts):
        nll, grad = _ctc_sample(work[:, i], tgt.astype(np.int64), input_lengths[i], blank,
                                with_grad)
        if zero_infinity and np.isinf(nll):
            nll = 0.0
            grad = None if grad is None else np.zeros_like(grad)
        losses.append(nll)
        grads.append(grad)
    return np.asarray(losses, dtype=lp.dtype), grads


def _ctc_kernel(lp, targets, **params):
    return _ctc_run(lp, targets, with_grad=False, **params)[0]


def _ctc_grad_kernel(g, lp, targets, **params):
    _, grads = _ctc_run(lp, targets, with_grad=True, **params)
    out = np.stack(grads, axis=1) * g.astype(np.float64)[None, :, None]
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
