"""Independent against torch.distributions.Independent (a diagonal Gaussian from Normals)."""

import numpy as np
import torch

import ember

from helpers import check_dist, rand_array

LOC = rand_array((2, 3, 4), np.float64)
SCALE = rand_array((2, 3, 4), np.float64, low=0.5, high=2, seed=1)
VALUE = rand_array((5, 2, 3, 4), np.float64, seed=2)


def test_scores_and_samples():
    for n in (1, 2):
        check_dist(lambda D, m, s, n=n: D.Independent(D.Normal(m, s), n),
                   ["mean", "variance", "entropy", ("log_prob", VALUE), ("rsample", (2,))],
                   LOC, SCALE)


def test_shapes_and_support():
    d = ember.distributions.Independent(ember.distributions.Normal(ember.tensor(LOC), 1.0), 2)
    t = torch.distributions.Independent(torch.distributions.Normal(torch.tensor(LOC), 1.0), 2)
    assert d.batch_shape == t.batch_shape and d.event_shape == t.event_shape
    assert repr(d.support) == repr(t.support)
    assert d.expand((7, 2)).batch_shape == (7, 2)
    assert d.has_rsample
