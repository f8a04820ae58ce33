"""cov and corrcoef (covariance.py) against torch: weights and their checks, corrections, dtypes."""

import numpy as np
import torch

import ember

from helpers import assert_same, check_op, same_message


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


def test_cov_weight_checks_in_torch_words():
    x = [[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 4.0, 0.0]]
    bad = [
        {"fweights": lambda L: L.ones(4)},  # float frequencies
        {"fweights": lambda L: L.ones(4, dtype=L.bool)},
        {"fweights": lambda L: L.ones(2, 2, dtype=L.long)},
        {"fweights": lambda L: L.ones(3, dtype=L.long)},  # 3 weights for 4 observations
        {"fweights": lambda L: L.tensor(2)},  # a 0-d weight is one weight, not broadcast
        {"fweights": lambda L: L.tensor([1, -1, 1, 1])},
        {"aweights": lambda L: L.ones(4, dtype=L.long)},
        {"aweights": lambda L: L.ones(4, dtype=L.complex64)},
        {"aweights": lambda L: L.ones(2, 2)},
        {"aweights": lambda L: L.ones(5)},
        {"aweights": lambda L: L.tensor([1.0, float("nan"), 1.0, 1.0])},
        {"fweights": lambda L: L.ones(3), "aweights": lambda L: L.ones(2)},  # fweights first
    ]
    for kw in bad:
        same_message(lambda L, kw=kw: L.cov(L.tensor(x), **{k: f(L) for k, f in kw.items()}))
    for w in (lambda L: L.ones(4, dtype=L.uint8), lambda L: L.ones(4, dtype=L.int32)):
        assert_same(ember.cov(ember.tensor(x), fweights=w(ember)),
                    torch.cov(torch.tensor(x), fweights=w(torch)))


def test_cov_warns_when_degrees_of_freedom_run_out():
    import warnings

    for call in (lambda L: L.cov(L.tensor([3.0])), lambda L: L.cov(L.ones(2, 3), correction=3),
                 lambda L: L.cov(L.ones(2, 1), fweights=L.tensor([1]))):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            assert_same(call(ember), call(torch))
        texts = [str(w.message) for w in got]
        assert len(texts) == 2 and texts[0] == texts[1].split(" (Triggered")[0], texts
        assert texts[0].startswith("cov(): degrees of freedom is <= 0.")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.cov(ember.ones(2, 3))


def test_cov_argument_types():
    x = np.arange(24.0).reshape(4, 6)
    for kw in ({"correction": 0.5}, {"correction": True}, {"correction": None},
               {"fweights": [1] * 6}, {"aweights": np.ones(6)}):
        same_message(lambda L, kw=kw: L.cov(L.tensor(x), **kw), TypeError)
        same_message(lambda L, kw=kw: L.tensor(x).cov(**kw), TypeError)
    same_message(lambda L: L.cov(x.tolist()), TypeError)
    # an integer-like correction is an int to PyTorch's parser
    assert_same(ember.cov(ember.tensor(x), correction=np.int64(0)),
                torch.cov(torch.tensor(x), correction=np.int64(0)))
