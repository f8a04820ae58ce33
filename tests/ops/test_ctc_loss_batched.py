"""The CTC kernel's tables, computed for the whole batch at once: every sample's loss and
gradient bit for bit what its own recursion gives (the per-sample reference below, ember's
kernel before it was batched), and torch's numbers, over ragged input and target lengths."""

import numpy as np
import torch

import ember
from ember.ops import ctc_loss as ctc

_NEG = -np.inf


def _reference_sample(lp, target, t_len, blank):
    """One sample's loss and gradient by its own alpha / beta recursion."""
    ext = np.full(2 * target.size + 1, blank, dtype=np.int64)
    ext[1::2] = target
    skip = np.zeros(ext.size, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    if t_len == 0:
        return (0.0 if target.size == 0 else np.inf), np.zeros_like(lp)
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
    nll = -np.logaddexp(la[-1, -1], la[-1, -2] if n > 1 else _NEG)
    grad = np.zeros_like(lp)
    lcab = np.full((t_len, lp.shape[1]), _NEG)
    for c in np.unique(ext):
        cols = ext == c
        lcab[:, c] = np.logaddexp.reduce(la[:, cols] + lb[:, cols], axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        grad[:t_len] = np.exp(lp[:t_len]) - np.exp(lcab + nll - lp[:t_len])
    return nll, grad


def _cases():
    rng = np.random.default_rng(0)
    for T, B, C, blank, flat in ((6, 5, 4, 0, False), (1, 2, 3, 2, False), (9, 7, 6, 3, True),
                                 (12, 3, 3, 0, True), (5, 1, 2, 1, False)):
        lp = rng.standard_normal((T, B, C))
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
        in_len = rng.integers(0, T + 1, B)
        in_len[0] = T
        tgt_len = rng.integers(0, min(T, 4) + 1, B)
        labels = [c for c in range(C) if c != blank]
        # repeated labels (no skip) and too-long targets (infinite losses) among them
        rows = [rng.choice(labels, int(n)) for n in tgt_len]
        if B > 1 and tgt_len[1] >= 2:
            rows[1][:] = labels[0]
        targets = np.concatenate(rows) if flat else np.stack(
            [np.pad(r, (0, max(tgt_len) - r.size), constant_values=labels[0]) for r in rows])
        yield lp, targets.astype(np.int64), tuple(int(v) for v in in_len), \
            tuple(int(v) for v in tgt_len), blank


def test_batched_tables_give_each_samples_own_bits():
    for lp, targets, in_len, tgt_len, blank in _cases():
        for zero_inf in (False, True):
            params = dict(input_lengths=in_len, target_lengths=tgt_len, blank=blank,
                          zero_infinity=zero_inf)
            losses, grads = ctc._ctc_run(lp, targets, with_grad=True, **params)
            fwd, _ = ctc._ctc_run(lp, targets, with_grad=False, **params)
            assert np.array_equal(losses, fwd)
            for i, tgt in enumerate(ctc._ctc_split(targets, tgt_len)):
                nll, grad = _reference_sample(lp[:, i], tgt, in_len[i], blank)
                if zero_inf and np.isinf(nll):
                    nll, grad = 0.0, np.zeros_like(grad)
                assert losses[i] == nll or (np.isnan(nll) and np.isnan(losses[i]))
                assert np.array_equal(grads[:, i], grad, equal_nan=True)


def test_ctc_loss_values_and_gradients_match_torch():
    for lp, targets, in_len, tgt_len, blank in _cases():
        out = []
        for lib in (ember, torch):
            x = lib.tensor(lp.astype(np.float32), requires_grad=True)
            loss = lib.nn.functional.ctc_loss(x, lib.tensor(targets), in_len, tgt_len,
                                              blank=blank, reduction="sum",
                                              zero_infinity=True)
            loss.backward()
            out.append((loss.item(), x.grad.numpy()))
        # NOTE: torch runs float32 log-space sums in its own order; ember's run in float64
        np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-4, atol=1e-5)
