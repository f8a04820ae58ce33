"""amax / amin and max() / min() on values where the answer is a choice: a zero result of
mixed-sign zeros (IEEE 754-2019's rule, the same on every CPU and with native kernels on or
off) and NaN propagation; the values themselves against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native


def _signs(t) -> list[bool]:
    return np.signbit(t.numpy()).reshape(-1).tolist()


@pytest.mark.parametrize("mode", ["numpy", "native"])
def test_a_zero_extremum_takes_the_ieee_sign(mode):
    if mode == "native" and not native.available():  # (NumPy's line loads no native code)
        pytest.skip("native kernels unavailable")
    # rows long enough to reach the native kernel and NumPy's vector lanes; the +0.0 and
    # -0.0 at positions that the lanes of np.maximum.reduce would otherwise decide between
    n = 4096
    rows = np.full((6, n), -1.0, np.float32)
    rows[0, [5, 700]] = [0.0, -0.0]
    rows[1, [5, 700]] = [-0.0, 0.0]
    rows[2, [5, 700]] = [-0.0, -0.0]
    rows[3, [5, 700]] = [0.0, 0.0]
    rows[4, 9] = 0.0
    rows[5, 9] = -0.0
    for dtype in (np.float32, np.float64):
        x = ember.tensor(rows.astype(dtype))
        with native.use(mode):
            for t in (x, x.t().contiguous().t()):  # (lines, and columns of a transposed copy)
                assert _signs(t.amax(1)) == [False, False, True, False, False, True]
                assert _signs((-t).amin(1)) == [True, True, False, True, True, False]
            assert _signs(x[2].amax()) == [True] and _signs(x[0].max()) == [False]
            assert _signs((-x[3]).min()) == [True] and _signs((-x[1]).amin()) == [True]


@pytest.mark.parametrize("mode", ["numpy", "native"])
def test_extrema_propagate_nan_and_match_torch(mode):
    if mode == "native" and not native.available():
        pytest.skip("native kernels unavailable")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 300)).astype(np.float32)
    a[3, 17] = np.nan
    a[5, 299] = np.inf
    a[7, 0] = -np.inf
    x, tx = ember.tensor(a), torch.tensor(a)
    with native.use(mode):
        for dim in (0, 1):
            for name in ("amax", "amin"):
                got = getattr(x, name)(dim).numpy()
                want = getattr(tx, name)(dim).numpy()
                np.testing.assert_array_equal(got, want)  # (NaN where torch has NaN)
        assert np.isnan(x.amax().item()) and np.isnan(x.min().item())
        assert np.isnan(x.t().amax(1).numpy()[17]) and np.isnan(x.t().amin(0).numpy()[3])
