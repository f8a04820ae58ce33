"""Convolutions of non-finite inputs and weights: which positions come out NaN or infinite.

PyTorch's convolutions differ by path here (fuzz/KNOWN_DIFFERENCES.toml, conv-nonfinite-
weight-in-padding): the float64 forward and the float32 forward it runs without oneDNN
(batch 1, ungrouped, kernel at most 3, small input) build im2col columns with zeros in
the padding and multiply a non-finite weight by them (NaN at every output whose window
overhangs the border through that tap), as ember does; its oneDNN float32 forward mostly
skips padded taps, depending on the CPU. Every backward path of PyTorch accumulates the
input gradient by col2im, so a weight tap never meets the padding there: ember's input
gradient does the same. The comparisons are of where values are NaN or infinite; finite
values are compared with a tolerance (BLAS sums on both sides).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

CASES = [  # (nd, spatial size, kernel, padding, stride, dilation, groups)
    (1, (9,), 3, 1, 1, 1, 1),
    (2, (7, 7), 3, 1, 1, 1, 1),
    (2, (7, 7), 3, 2, 1, 2, 1),
    (2, (8, 8), 3, 1, 2, 1, 1),
    (2, (7, 7), 3, 1, 1, 1, 4),
    (2, (9, 9), 5, 2, 1, 1, 1),
    (3, (5, 5, 5), 3, 1, 1, 1, 1),
]


def _classes(a: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a), 1, np.where(np.isinf(a), 2, 0))


def _run(L, nd, x, w, dtype, **kw):
    xt = L.tensor(x, dtype=dtype, requires_grad=True)
    wt = L.tensor(w, dtype=dtype, requires_grad=True)
    y = getattr(L.nn.functional, f"conv{nd}d")(xt, wt, None, **kw)
    g = np.random.default_rng(5).standard_normal(tuple(y.shape))
    (y * L.tensor(g, dtype=dtype)).sum().backward()
    return [t.detach().numpy() for t in (y, xt.grad, wt.grad)]


def _arrays(nd, size, k, groups, bad):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4) + size)
    w = rng.standard_normal((4, 4 // groups) + (k,) * nd)
    if bad == "w-corner":  # a tap that falls in the padding at the low border
        w[(0, 0) + (0,) * nd] = np.nan
    elif bad == "w-inf":
        w[(1, 0) + (k - 1,) * nd] = np.inf
    elif bad == "x-inf":
        x[(0, 1) + (0,) * nd] = np.inf
        x[(0, 2) + tuple(s // 2 for s in size)] = -np.inf
    else:  # a NaN input in the middle
        x[(0, 0) + tuple(s // 2 for s in size)] = np.nan
    return x, w


@pytest.mark.parametrize("bad", ["w-corner", "w-inf", "x-inf", "x-nan"])
@pytest.mark.parametrize("case", CASES, ids=[f"conv{c[0]}d-k{c[2]}-p{c[3]}-s{c[4]}-d{c[5]}-g{c[6]}"
                                             for c in CASES])
def test_nonfinite_positions_match_torch_float64(case, bad):
    """Forward, input and weight gradients: the same NaN and infinite positions as PyTorch's
    float64 path (the one it runs on every machine), and the same finite values."""
    nd, size, k, pad, stride, dil, groups = case
    x, w = _arrays(nd, size, k, groups, bad)
    kw = dict(padding=pad, stride=stride, dilation=dil, groups=groups)
    got = _run(ember, nd, x, w, ember.float64, **kw)
    want = _run(torch, nd, x, w, torch.float64, **kw)
    for name, e, t in zip(("output", "input grad", "weight grad"), got, want):
        np.testing.assert_array_equal(_classes(e), _classes(t), err_msg=name)
        fin = np.isfinite(t)
        np.testing.assert_allclose(e[fin], t[fin], rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("channels", [4, 64])
def test_input_grad_never_multiplies_a_weight_by_the_padding(channels):
    """A NaN weight tap reaches only the inputs some window reads through it: the input row
    and column no window reaches through the top-left tap stay finite (in float32 too, on
    the wide-channel paths that would otherwise take a full convolution)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, channels, 10, 10))
    w = rng.standard_normal((channels, channels, 3, 3))
    w[:, :, 0, 0] = np.nan
    grads = []
    for L in (ember, torch):
        xt = L.tensor(x, dtype=L.float32, requires_grad=True)
        L.nn.functional.conv2d(xt, L.tensor(w, dtype=L.float32), padding=1).sum().backward()
        grads.append(xt.grad.numpy())
    nan_e, nan_t = np.isnan(grads[0]), np.isnan(grads[1])
    np.testing.assert_array_equal(nan_e, nan_t)
    assert not nan_e[:, :, -1, :].any() and not nan_e[:, :, :, -1].any()
    assert nan_e[:, :, :-1, :-1].all()
