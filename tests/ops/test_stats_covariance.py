"""cov and corrcoef (stats.py) against torch: weights, corrections, dtypes."""

import numpy as np
import torch

import ember

from helpers import assert_same, check_op


def test_cov_with_weights_and_correction():
    x = np.array([[1.0, 2.0, 4.0, 0.5], [3.0, 1.0, 0.0, 2.0], [0.5, 0.5, 1.0, 9.0]])
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 0.25])
    for kw in ({}, {"correction": 0}, {"correction": 2}):
        check_op(lambda v, kw=kw: ember.cov(v, **kw), lambda v, kw=kw: torch.cov(v, **kw), x)
    check_op(lambda v, a: ember.cov(v, fweights=ember.tensor(fw), aweights=a),
             lambda v, a: torch.cov(v, fweights=torch.tensor(fw), aweights=a), x, aw)
    check_op(lambda v: ember.cov(v, fweights=ember.tensor(fw), correction=0),
             lambda v: torch.cov(v, fweights=torch.tensor(fw), correction=0), x)
    check_op(lambda v: ember.corrcoef(v), lambda v: torch.corrcoef(v), x)


def test_fuzz_found_cov_weights_widen_the_input():
    e = ember.cov(ember.tensor([-0.009, 0.0, 1.5], dtype=ember.bfloat16),
                  aweights=ember.tensor([0.25, 0.75, 1.0]))
    t = torch.cov(torch.tensor([-0.009, 0.0, 1.5], dtype=torch.bfloat16),
                  aweights=torch.tensor([0.25, 0.75, 1.0]))
    assert_same(e, t)
