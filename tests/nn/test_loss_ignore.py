"""Rows whose target is `ignore_index` add exactly nothing to nll_loss / cross_entropy, even
when their scores are -inf or NaN (as in PyTorch, where such a row is skipped)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from tests.helpers import assert_same

import ember

INF, NAN = float("inf"), float("nan")
IGNORE = -100


def _scores(shape, seed=0) -> np.ndarray:
    """Random scores with poisoned positions: every row whose target is ignored has -inf,
    NaN or all -inf entries (see `_targets`)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    flat = np.moveaxis(x, 1, -1).reshape(-1, shape[1]) if x.ndim > 1 else x.reshape(1, -1)
    flat[1, 0] = -INF  # ignored row: one class at -inf (its log_softmax stays finite)
    if flat.shape[0] > 3:
        flat[3, :] = -INF  # ignored row: every class at -inf
        flat[2, 1] = NAN  # ignored row: a NaN
    if x.ndim > 1:
        moved = (shape[0],) + shape[2:] + (shape[1],)
        return np.ascontiguousarray(np.moveaxis(flat.reshape(moved), -1, 1))
    return flat.reshape(shape)


def _targets(shape, n_classes: int) -> np.ndarray:
    """Targets (class index per row) where rows 1, 2, 3 (in the flattened (M, C) order of
    `_scores`) are ignored."""
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = np.arange(int(np.prod(tshape)), dtype=np.int64) % n_classes
    t[1:4] = IGNORE
    return t.reshape(tshape) if tshape else t[:1].reshape(())


SHAPES = [(6, 4), (3, 4, 2)]
CASES = list(itertools.product(SHAPES, ("mean", "sum", "none"), (False, True)))


def _run(lib, fn, x, t, w, grad_out=None, **kw):
    xi = lib.tensor(x, requires_grad=True)
    loss = fn(lib)(xi, lib.tensor(t), weight=None if w is None else lib.tensor(w),
                   ignore_index=IGNORE, **kw)
    loss.backward(lib.ones_like(loss) if grad_out is None else lib.tensor(grad_out))
    return loss, xi.grad


def _nll(lib):
    return lib.nn.functional.nll_loss


def _ce(lib):
    return lib.nn.functional.cross_entropy


@pytest.mark.parametrize("shape, reduction, weighted", CASES)
def test_nll_loss_skips_ignored_rows_with_inf_and_nan(shape, reduction, weighted):
    x, t = _scores(shape), _targets(shape, shape[1])
    w = np.linspace(0.5, 2.0, shape[1]).astype(np.float32) if weighted else None
    e_loss, e_grad = _run(ember, _nll, x, t, w, reduction=reduction)
    t_loss, t_grad = _run(torch, _nll, x, t, w, reduction=reduction)
    assert_same(e_loss, t_loss.detach(), equal_nan=False)
    assert_same(e_grad, t_grad, equal_nan=False)
    flat = np.moveaxis(e_grad.numpy(), 1, -1).reshape(-1, shape[1])
    assert (flat[1:4] == 0).all() and np.isfinite(flat).all()


@pytest.mark.parametrize("shape, reduction, weighted", CASES)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_skips_ignored_rows_with_inf_and_nan(shape, reduction, weighted,
                                                           label_smoothing):
    x, t = _scores(shape), _targets(shape, shape[1])
    w = np.linspace(0.5, 2.0, shape[1]).astype(np.float32) if weighted else None
    e_loss, e_grad = _run(ember, _ce, x, t, w, reduction=reduction,
                          label_smoothing=label_smoothing)
    t_loss, t_grad = _run(torch, _ce, x, t, w, reduction=reduction,
                          label_smoothing=label_smoothing)
    assert np.isfinite(e_loss.detach().numpy()).all()
    assert_same(e_loss, t_loss.detach(), equal_nan=False)
    # log_softmax's backward of a row holding NaN (or only -inf) is NaN in PyTorch too
    assert_same(e_grad, t_grad)


def test_cross_entropy_issue_example():
    x = [[1.0, 2.0, 3.0], [-INF, 0.0, 1.0], [NAN, 1.0, 2.0]]
    for lib in (ember, torch):
        loss = lib.nn.functional.cross_entropy(lib.tensor(x), lib.tensor([2, IGNORE, IGNORE]))
        # only row 0 counts: -log_softmax([1, 2, 3])[2] = log(e^-2 + e^-1 + 1)
        assert loss.item() == pytest.approx(np.log(np.exp(-2) + np.exp(-1) + 1), rel=1e-6)


def test_nll_loss_1d_input_ignored_target():
    x = np.array([-INF, NAN, 0.5], np.float32)
    for reduction in ("mean", "sum", "none"):
        e_loss, e_grad = _run(ember, _nll, x, np.array(IGNORE), None, reduction=reduction)
        t_loss, t_grad = _run(torch, _nll, x, np.array(IGNORE), None, reduction=reduction)
        assert_same(e_loss, t_loss.detach())  # mean: 0 / 0 total weight is NaN in both
        assert_same(e_grad, t_grad, equal_nan=False)
        assert e_grad.tolist() == [0.0, 0.0, 0.0]


def test_nll_loss_ignored_row_gets_zero_grad_whatever_arrives():
    """With reduction='none' an ignored row's gradient is 0 even when the incoming gradient
    for it is NaN or inf."""
    x, t = _scores((6, 4)), _targets((6, 4), 4)
    g = np.array([1.0, NAN, INF, -INF, 2.0, 3.0], np.float32)
    e_loss, e_grad = _run(ember, _nll, x, t, None, grad_out=g, reduction="none")
    t_loss, t_grad = _run(torch, _nll, x, t, None, grad_out=g, reduction="none")
    assert_same(e_grad, t_grad, equal_nan=False)
    assert (e_grad.numpy()[1:4] == 0).all()
