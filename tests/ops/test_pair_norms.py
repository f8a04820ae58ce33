"""The per-pair sums of cdist's direct route (ops/_pair_norms.py): C's pow, in-order sums
and the p = 2 sum of squares, each against the numbers PyTorch's kernel computes."""

import math

import numpy as np
import torch

import ember
from ember.ops._pair_norms import c_pow, in_order_sum, p_root, squared_sum

from helpers import TORCH_VECTOR_KERNELS, assert_same, assert_ulp, check_grads, rand_array


def test_c_pow_float64_within_an_ulp_of_cs_pow():
    # float64 is NumPy's power (one vector call), one ulp from C's pow on some elements:
    # a per-element call of C's pow cost 40x
    x = np.abs(rand_array(2000, np.float64, seed=1)) * 10
    for e in (3.0, 0.5, 1.5, 1 / 3):
        want = np.array([math.pow(v, e) for v in x])
        got = c_pow(ember.tensor(x), e).numpy()
        assert (np.abs(got - want) <= np.spacing(want)).all()
    assert c_pow(ember.tensor([1e200, 0.0, math.inf]), 3.0).tolist() == [math.inf, 0.0, math.inf]


def test_c_pow_float32_rounds_the_double_power_once():
    x = np.abs(rand_array(2000, np.float32, seed=2)) * 10
    want = np.power(x.astype(np.float64), 3.0).astype(np.float32)
    got = c_pow(ember.tensor(x), 3.0)
    assert got.dtype == ember.float32 and np.array_equal(got.numpy(), want)


def test_c_pow_differentiates_as_pow():
    x = np.abs(rand_array((3, 4), np.float64, seed=3)) + 0.5
    check_grads(lambda t: c_pow(t, 2.5), x)


def test_in_order_sum_adds_left_to_right():
    # 1 then sixteen 2^-24: each tiny term is lost in order, kept by a pairwise sum
    t = np.full((2, 17), 2.0 ** -24, np.float32)
    t[:, 0] = 1.0
    assert in_order_sum(ember.tensor(t)).tolist() == [1.0, 1.0]
    x = rand_array((3, 5, 40), seed=4)
    assert np.array_equal(in_order_sum(ember.tensor(x)).numpy(),
                          np.add.accumulate(x, axis=-1)[..., -1])
    check_grads(in_order_sum, rand_array((2, 9), np.float64, seed=5))


def test_squared_sum_and_root_match_torchs_cdist():
    a, b = rand_array((6, 11), seed=6), rand_array((5, 11), seed=7)
    d = ember.tensor(a).unsqueeze(-2) - ember.tensor(b).unsqueeze(-3)
    want = torch.cdist(torch.tensor(a), torch.tensor(b),
                       compute_mode="donot_use_mm_for_euclid_dist")
    assert_ulp(squared_sum(d).sqrt(), want, 0 if TORCH_VECTOR_KERNELS else 2,
               "torch's scalar kernels fuse no multiply-add in the sum of squares")
    s = in_order_sum(c_pow(d.abs(), 3.0))
    want3 = torch.cdist(torch.tensor(a), torch.tensor(b), p=3.0)
    assert_ulp(p_root(s, 3.0), want3, 1, "powf is not correctly rounded")
    assert_same(p_root(ember.tensor([8.0], dtype=ember.float64), 3.0),
                torch.tensor([math.pow(8.0, 1 / 3)], dtype=torch.float64))


def test_in_order_sum_over_blocks_with_a_last_single_row(monkeypatch):
    # blocks of 2 rows over 5: the last block's one row is summed in order too
    from ember.ops import _pair_norms

    monkeypatch.setattr(_pair_norms, "_BLOCK", 2)
    t = np.full((5, 17), 2.0 ** -24, np.float32)
    t[:, 0] = 1.0
    assert in_order_sum(ember.tensor(t)).tolist() == [1.0] * 5
