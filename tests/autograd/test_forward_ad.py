"""forward_ad: dual tensors give J v as torch's forward mode does."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def jvp_of(m, fn, *shapes):
    fw = m.autograd.forward_ad
    xs = [m.tensor(rand_array(s, np.float64, seed=i)) for i, s in enumerate(shapes)]
    vs = [m.tensor(rand_array(s, np.float64, seed=10 + i)) for i, s in enumerate(shapes)]
    with fw.dual_level():
        duals = [fw.make_dual(x, v) for x, v in zip(xs, vs)]
        out = fn(*duals)
        primal, tangent = fw.unpack_dual(out)
    return primal, tangent


@pytest.mark.parametrize("fn,shapes", [
    (lambda x: x.exp() * x.sin(), [(4,)]),
    (lambda x, w: (x @ w).tanh(), [(3, 4), (4, 2)]),
    (lambda x: x[1:, ::2].sum(0) ** 2, [(3, 4)]),
])
def test_tangents_match_torch(fn, shapes):
    assert_same(jvp_of(ember, fn, *shapes), jvp_of(torch, fn, *shapes))


def test_unpacking_a_dual_gives_its_own_tangent_and_no_tangent_outside_a_level():
    fw = ember.autograd.forward_ad
    x, v = ember.ones(3, dtype=ember.float64), ember.full((3,), 2.0, dtype=ember.float64)
    with fw.dual_level():
        d = fw.make_dual(x, v)
        assert fw.unpack_dual(d).tangent.tolist() == [2.0] * 3
        assert fw.unpack_dual(ember.ones(2)).tangent is None
    assert fw.unpack_dual(d * 2).tangent is None


def test_make_dual_errors():
    for m in (ember, torch):
        fw = m.autograd.forward_ad
        with pytest.raises(RuntimeError, match="no level exists"):
            fw.make_dual(m.ones(2), m.ones(2))
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="different size"):
                fw.make_dual(m.ones(2), m.ones(3))
