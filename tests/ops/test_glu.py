"""GLU of float16 / bfloat16 inputs: one node computing as PyTorch's reduced-precision
kernels (forward in float rounded once; backward from sigmoid(b) rounded to the dtype)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, same_message

_WHY = "sigmoid's exp is PyTorch's vectorised expf (SLEEF) against NumPy's: a float ulp " \
       "apart at most, which rounding to 16 bits almost always hides"


def _glu_both(dtype: str, shape=(64, 200), dim=-1):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    half = list(shape)
    half[dim] //= 2
    g = rng.standard_normal(half).astype(np.float32)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        out = lib.nn.functional.glu(t, dim)
        out.backward(lib.tensor(g).to(getattr(lib, dtype)))
        res.append((out, t.grad))
    return res


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_16bit_glu_and_its_gradient_round_as_torch(dtype, dim):
    """Was a bfloat16 sigmoid times a bfloat16 half: a quarter of the outputs and a third of
    the second half's gradients an ulp off."""
    (eo, eg), (to, tg) = _glu_both(dtype, dim=dim)
    assert eo.grad_fn.name() == to.grad_fn.name() == "GluBackward0"
    for e, t in ((eo, to), (eg, tg)):
        assert e.dtype == getattr(ember, dtype)
        assert_ulp(e.detach().float().numpy().astype(getattr(np, dtype, None) or np.float32),
                   t.detach().float().numpy().astype(getattr(np, dtype, None) or np.float32),
                   1, _WHY)
        assert (e.detach().float().numpy() != t.detach().float().numpy()).mean() < 0.01


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16bit_glu_has_no_forward_mode_as_in_torch(dtype):
    same_message(lambda L: L.func.jvp(L.nn.functional.glu, (L.ones(2, 4, dtype=getattr(
        L, dtype)),), (L.ones(2, 4, dtype=getattr(L, dtype)),)), NotImplementedError)


def test_16bit_glu_batches_under_vmap_as_the_loop():
    x = ember.randn(3, 4, 6).bfloat16()
    looped = ember.stack([ember.nn.functional.glu(r) for r in x])
    assert ember.equal(ember.func.vmap(ember.nn.functional.glu)(x), looped)
