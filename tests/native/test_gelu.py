"""csrc/activation.c's GELU half (its passes around NumPy's exp) against the NumPy bodies of
ops/activation.py: the same float32 operations in the same order, so bit for bit equal
(special values, subnormals, the tails where exp underflows, sizes that split over threads),
and eager gelu / its gradient the same with native kernels on or off."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.ops import activation as act
from native._differential import assert_bits, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 13.3, -13.3, -20.0, 20.0,
            3e38, -3e38, 1e-20, -1e-20]


def _x(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:len(SPECIALS)] = np.array(SPECIALS, np.float32)[:n]
    return x


@pytest.mark.parametrize("n", [4096, 5001, 70_001])
def test_gelu_passes_are_numpys_bit_for_bit(n):
    x = _x(n)
    g = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    assert act._activation_lib(x) is not None  # (the C path runs at these sizes)
    with np.errstate(all="ignore"):
        want, got = np.empty_like(x), np.empty_like(x)
        act._gelu_body(want, x)
        act._gelu_body_native(got, x)
        assert_bits(got, want)
        y = want
        want_g, got_g = np.empty_like(x), np.empty_like(x)
        act._gelu_grad_body(want_g, g, x, y)
        act._gelu_grad_body_native(got_g, g, x, y)
        assert_bits(got_g, want_g)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_eager_gelu_and_its_gradient_are_the_same_native_or_not(n_threads):
    x0 = _x(7 * 14_287, seed=2).reshape(7, -1)

    def run():
        x = ember.tensor(x0, requires_grad=True)
        y = ember.nn.functional.gelu(x)
        y.backward(ember.ones_like(y) * 0.5)
        return y.detach().numpy(), x.grad.numpy()

    with threads(n_threads):
        on = run()
        with native.use("numpy"):
            off = run()
    for a, b in zip(on, off):
        assert_bits(a, b)
