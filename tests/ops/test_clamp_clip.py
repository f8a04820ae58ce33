"""clamp with two number bounds on a float tensor (ops/ternary.py), which runs as one
np.clip: against PyTorch bit for bit over values at, between and beyond the bounds, signed
zeros, infinities and NaN, with bounds that take the two-compare route (a zero bound, where
a tie keeps the input's sign; NaN) beside it."""

import numpy as np
import torch

import ember


def _bits(t) -> bytes:
    return np.ascontiguousarray(t.numpy()).tobytes()


def test_number_bounds_match_pytorch_bit_for_bit():
    base = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 0.25, 1e-45, -3e38, np.inf,
                     -np.inf, 1e-40, 0.1], np.float64)
    bounds = [(-1.0, 1.0), (0.5, 0.25), (-np.inf, np.inf), (0.1, 2.0), (1e-50, 1.0),
              (0.0, 1.0), (-1.0, -0.0), (-0.5, 1e30), (3, 7), (np.float32(0.25), 0.5)]
    for dtype in (np.float32, np.float64):
        a = np.tile(base, 3).astype(dtype)
        for x, y in ((ember.tensor(a), torch.tensor(a)),  # and a strided view
                     (ember.tensor(a)[::2], torch.tensor(a)[::2])):
            for lo, hi in bounds:
                assert _bits(x.clamp(lo, hi)) == _bits(y.clamp(lo, hi)), (dtype, lo, hi)
    a = np.array([np.nan, 1.0, -2.0], np.float32)
    for lo, hi in ((-1.0, 1.0), (np.nan, 1.0), (-1.0, np.nan)):
        got, want = ember.tensor(a).clamp(lo, hi).numpy(), torch.tensor(a).clamp(lo, hi).numpy()
        assert np.array_equal(got, want, equal_nan=True), (lo, hi)


def test_gradient_is_unchanged_by_the_route():
    a = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0], np.float32)
    x, y = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    x.clamp(-1.0, 1.0).sum().backward()
    y.clamp(-1.0, 1.0).sum().backward()
    assert np.array_equal(x.grad.numpy(), y.grad.numpy())
