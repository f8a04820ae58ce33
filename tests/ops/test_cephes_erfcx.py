"""PyTorch's erfcx and log_ndtr replayed in the input's dtype (ops/_cephes_erfcx.py): bit for
bit against torch on the same machine, float32 and float64.

Bitwise is sound here: PyTorch's kernels for these are scalar loops over calc_erfcx and
calc_log_ndtr (no Vectorized path), calling the C library's exp, log, log1p and erfc, as
ember's kernels do; where its build contracts multiply-adds (the continued fraction above
x = 50) ember follows `ember.random.get_kernel_profile()`."""

import numpy as np
import pytest
import torch

import ember

from helpers import each_kernel_profile  # noqa: F401  (the fixture, used by pytestmark)


def _inputs() -> np.ndarray:
    """Every branch and its edges: -26.7, -6.1, -1, 0, 50, 5e7, the 100 polynomial intervals
    (y = 4 / (4 + x) crosses k / 100 at x = 400 / k - 4), inf and NaN."""
    g = np.random.default_rng(5)
    k = np.arange(1, 100)
    edges = [-30.0, -26.7, -26.69, -6.1, -6.09, -1.0, -0.99, -0.0, 0.0, 1e-30, 50.0, 50.01,
             5e7, 6e7, 1e30, np.inf, -np.inf, np.nan]
    return np.concatenate([g.uniform(-30, 60, 600), np.exp(g.uniform(-8, 5, 200)),
                           400 / k - 4, np.nextafter(400 / k - 4, 0), edges])


X = _inputs()


pytestmark = pytest.mark.usefixtures("each_kernel_profile")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erfcx", "log_ndtr"])
def test_bits(name, dtype):
    x = X.astype(dtype)
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    same = (e == t) | (np.isnan(e) & np.isnan(t))
    bad = np.nonzero(~same)[0]
    i = bad[0] if bad.size else 0
    assert bad.size == 0, f"{bad.size} differ, first at x={x[i]!r}: {e[i]!r} vs {t[i]!r}"
