"""csrc/gelu.h's GELU and its derivative (one C pass each, eager's native kernels and
compiled programs' fused loops alike) against the NumPy bodies of ops/gelu.py: the
same float32 operations in the same order with ember_math.h's exp for NumPy's, so within a
few ulps (special values, subnormals, the tails where exp underflows, sizes that split over
threads: the same value classes everywhere), and eager's native results bit for bit those
of a compiled program."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.ops import gelu as act
from native._differential import assert_bits, threads

from helpers import assert_ulp

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 13.3, -13.3, -20.0, 20.0,
            3e38, -3e38, 1e-20, -1e-20]
# measured: 4 ulps at most on 200,000 normal draws (times 4) and the specials
GELU_ULPS = 4
WHY = "ember_math.h's float exp in C against NumPy's in the NumPy body"


def _x(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:len(SPECIALS)] = np.array(SPECIALS, np.float32)[:n]
    return x


@pytest.mark.parametrize("n", [1, 17, 4096, 70_001])
def test_gelu_is_the_numpy_body_within_a_few_ulps(n):
    x = _x(n)
    g = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    assert act._activation_lib(x) is not None  # (the C path runs at every size)
    with np.errstate(all="ignore"):
        want, got = np.empty_like(x), np.empty_like(x)
        act._gelu_body(want, x)
        act._gelu_body_native(got, x)
        assert_ulp(got, want, GELU_ULPS, WHY)
        y = want
        want_g, got_g = np.empty_like(x), np.empty_like(x)
        act._gelu_grad_body(want_g, g, x, y)
        act._gelu_grad_body_native(got_g, g, x, y)
        # g (Phi(x) + x phi(x)) cancels near GELU's turning point (x = -0.75): ulps of the
        # larger term there
        with np.errstate(all="ignore"):
            terms = np.abs(g) * np.maximum(np.abs(y / x), np.abs(x) * 0.4)
        assert_ulp(got_g, want_g, GELU_ULPS, WHY, scale=np.nan_to_num(terms))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_eager_gelu_and_its_gradient_native_or_not(n_threads):
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
    assert_ulp(on[0], off[0], GELU_ULPS, WHY)
    with np.errstate(all="ignore"):
        scale = 0.5 * np.maximum(np.abs(off[0] / x0), np.abs(x0) * 0.4)
    assert_ulp(on[1], off[1], GELU_ULPS, WHY, scale=np.nan_to_num(scale))


@pytest.mark.parametrize("shape", [(3, 5), (64, 300)], ids=str)
def test_eager_gelu_is_the_compiled_fused_loop_bit_for_bit(shape):
    """Both call gelu.h: a compiled GELU and its backward give eager's native bits."""
    x0 = _x(int(np.prod(shape)), seed=3).reshape(shape)

    def step(x):
        y = ember.nn.functional.gelu(x)
        y.backward(ember.ones_like(y) * 0.5)
        return y

    x = ember.tensor(x0, requires_grad=True)
    want_y, want_g = step(x).detach().numpy(), x.grad.numpy().copy()
    f = ember.compile(step)
    for _ in range(2):
        x.grad = None
        got_y = f(x).detach().numpy()
    assert_bits(got_y, want_y)
    assert_bits(x.grad.numpy(), want_g)
    (program,) = f.programs.values()
    # (one loop: the backward's product by the incoming gradient merged between them)
    (line,) = [ln for ln in program.code.splitlines() if "gelu_backward" in ln]
    assert "fused C loop: gelu," in line


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("view", ["transposed", "flipped", "strided"])
def test_a_views_gelu_has_the_contiguous_bits_and_torchs_layout(view, n_threads):
    """A view is computed in one C pass over a copy: its values do not depend on the
    layout, and the result is laid out as the input (PyTorch's empty_like)."""
    import torch

    x0 = _x(96 * 130, seed=4).reshape(96, 130)
    pick = {"transposed": lambda t: t.t(), "flipped": lambda t: t.flip(1),
            "strided": lambda t: t[::2, 1::3]}[view]
    with threads(n_threads):
        x = pick(ember.tensor(x0, requires_grad=True).detach().requires_grad_())
        want_x = ember.tensor(np.ascontiguousarray(x.detach().numpy()), requires_grad=True)
        y, want = ember.nn.functional.gelu(x), ember.nn.functional.gelu(want_x)
        g = ember.ones_like(y) * 0.25
        (gx,) = ember.autograd.grad(y, x, g)
        (want_gx,) = ember.autograd.grad(want, want_x, g)
    assert_bits(y.detach().numpy(), want.detach().numpy())
    assert_bits(gx.numpy(), want_gx.numpy())
    assert y.stride() == torch.nn.functional.gelu(pick(torch.tensor(x0))).stride()
