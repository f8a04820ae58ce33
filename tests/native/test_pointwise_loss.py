"""csrc/pointwise_loss.c's MSE, smooth L1 and Huber terms against their NumPy twins
(ops/loss_ops.py): the same operations in the same order, each Python parameter rounded to
the array's type first on both sides, so bit for bit, reduced or not; and what eager runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import loss_ops
from native._differential import assert_bits, layouts, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

SHAPES = [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)]
LOSSES = [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.7}), ("smooth_l1_loss", {"beta": 3}),
          ("huber_loss", {"delta": 0.6}), ("huber_loss", {"delta": 1e30})]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    if x.size > 12:  # (differences at the parameters' edges: |d| = 0.7, 3, 0.6 exactly)
        x.reshape(-1)[8:12] = [0.7, 3.0, -0.6, 0.6] if seed == 0 else 0.0
    return with_specials(x.astype(dtype))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,params", LOSSES, ids=lambda v: str(v) if isinstance(v, dict)
                         else v)
def test_native_terms_are_the_numpy_kernels_bits(name, params, shape, dtype, reduction,
                                                 n_threads):
    member = getattr(loss_ops, f"{name}_p")
    numpy_kernel, native_kernel = native.twins(member)
    a0, b0 = _values(shape, dtype, 0), _values(shape, dtype, 1)[::-1].copy()
    with np.errstate(all="ignore"):
        want = numpy_kernel(a0, b0, reduction=reduction, **params)
    for a in layouts(a0).values():
        with threads(n_threads), np.errstate(all="ignore"):
            got = native_kernel(native.library("pointwise_loss"), a, b0, reduction=reduction,
                                **params)
        assert_bits(np.asarray(got), np.asarray(want))


def test_what_the_c_kernel_declines_goes_to_numpy():
    lib = native.library("pointwise_loss")
    _, native_kernel = native.twins(loss_ops.smooth_l1_loss_p)
    a = np.linspace(-2, 2, 10, dtype=np.float32)
    for args, params in [((a, a.astype(np.float64)), {"beta": 1.0}),  # (mixed dtypes)
                         ((a, a[:1]), {"beta": 1.0}),  # (a broadcast target)
                         ((a.astype(np.float16), a.astype(np.float16)), {"beta": 1.0}),
                         ((a, a), {"beta": np.float64(0.5)})]:  # (NumPy would widen to it)
        assert native_kernel(lib, *args, reduction="none", **params) is NotImplemented


@pytest.mark.parametrize("name,params", LOSSES[:4], ids=lambda v: str(v) if isinstance(v, dict)
                         else v)
def test_eager_losses_match_torch(name, params):
    # (values within the float32 sum's rounding of torch's, which adds in another order;
    # the elementwise terms equal)
    rng = np.random.default_rng(2)
    x, t = (rng.standard_normal((64, 32)).astype(np.float32) * 2 for _ in range(2))
    for reduction in ("none", "mean", "sum"):
        e = getattr(ember.nn.functional, name)(ember.tensor(x), ember.tensor(t),
                                               reduction=reduction, **params)
        w = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t),
                                               reduction=reduction, **params)
        if reduction == "none":
            assert_bits(e.numpy(), w.numpy())
        else:
            np.testing.assert_allclose(e.numpy(), w.numpy(), rtol=2e-6, atol=0)
