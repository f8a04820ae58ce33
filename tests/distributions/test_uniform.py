"""Uniform against torch.distributions.Uniform."""

import numpy as np

import ember

from helpers import check_dist, rand_array

LOW = rand_array((3,), np.float32, low=-3, high=-1.5)
HIGH = rand_array((3,), np.float32, low=1, high=3, seed=1)
VALUE = rand_array((4, 3), np.float32, low=-1, high=1, seed=2)


def test_statistics_scores_and_samples():
    check_dist(lambda D, lo, hi: D.Uniform(lo, hi),
               ["mean", "variance", "stddev", "entropy", ("log_prob", VALUE), ("cdf", VALUE),
                ("icdf", np.float32(0.3) * np.ones(3, np.float32)), ("rsample", (6,)),
                ("sample", (2,))], LOW, HIGH)


def test_statistics_of_samples():
    ember.manual_seed(0)
    x = ember.distributions.Uniform(2.0, 4.0).sample((10000,)).numpy()
    assert x.min() >= 2 and x.max() < 4
    assert abs(x.mean() - 3) < 0.03 and abs(x.var() - 1 / 3) < 0.02
