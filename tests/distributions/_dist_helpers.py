"""What the distribution tests share, on top of tests/helpers.py's `check_dist`: the draw
shapes and tolerances of exact draws, errors compared with torch's, KL pairs compared with
their gradients, and samples drawn in both libraries from generators seeded alike."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_op, rand_array

# The sample shapes a family's rsample/sample are compared at
DRAW_SHAPES = [(), (5,), (2, 3)]
# Draws equal torch's bit for bit; their gradients are summed in another order
EXACT_DRAWS = dict(rtol=0, atol=0, grad_rtol=1e-13, grad_atol=1e-15)
# Draws through a float64 log or exp of uniforms: torch's vectorised (SLEEF) kernels and
# NumPy's round a last bit apart on some CPUs (equal on an Intel Xeon, 1-2 ulp apart on an
# AMD EPYC): a few ulps, relative
LIBM_DRAWS = dict(rtol=6e-16, atol=0, grad_rtol=1e-13, grad_atol=1e-15)
# float32 values through one transcendental (a log at a parameter): 1 float32 ulp
LIBM_F32 = dict(rtol=1.2e-7, atol=1e-12)
# a and b (in (-2, 2)) make the two distributions of a KL pair
KL_ARRAYS = (rand_array((6,), np.float64), rand_array((6,), np.float64, seed=1))
# NOTE: a Beta's or Gamma's entropy and lgamma differentiate to torch's float64 trigamma /
# digamma, off by up to ~5e-10 relative (ember's within 4e-16), and sums of such terms cancel
TRIGAMMA = dict(grad_rtol=1e-8, grad_atol=1e-9)


def raises_like_torch(call, kind: type = Exception):
    """`call(L)` raises `kind` under L=torch and L=ember: the same exception type, and the
    same message once torch's module names read as ember's."""
    with pytest.raises(kind) as t_info:
        call(torch)
    with pytest.raises(kind) as e_info:
        call(ember)
    assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


def check_kl(make, *arrays, **tol):
    """`kl_divergence(*make(D, *params))` in ember and torch (D their distributions module):
    values and the gradients of the float parameters, compared by check_op."""
    check_op(lambda *p: ember.distributions.kl_divergence(*make(ember.distributions, *p)),
             lambda *p: torch.distributions.kl_divergence(*make(torch.distributions, *p)),
             *arrays, **tol)


def seeded_samples(make, params, shape, seed: int):
    """`make(D, *params).sample(shape)` in ember and torch, both generators seeded with
    `seed` (NumPy parameters become tensors of each library)."""
    draws = []
    for L in (ember, torch):
        L.manual_seed(seed)
        args = [L.tensor(p) if isinstance(p, np.ndarray) else p for p in params]
        draws.append(make(L.distributions, *args).sample(shape))
    return tuple(draws)


def assert_in_step(draw: str = "rand", n: int = 3):
    """ember's and torch's default generators stand at the same point (the streams stay in
    step): their next `n` values of `draw` (rand or randn) are equal."""
    assert_same(getattr(ember, draw)(n), getattr(torch, draw)(n), rtol=0, atol=0)
