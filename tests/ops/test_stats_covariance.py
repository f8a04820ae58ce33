"""cov and corrcoef (covariance.py) against torch: weights and their checks, corrections, dtypes."""

import warnings

import numpy as np
import torch

import ember

from helpers import assert_same, check_op, rand_array, same_message


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


def test_cov_result_is_squeezed_as_torch_squeezes_it():
    # PyTorch ends cov with squeeze(): every result's node is SqueezeBackward0, and one
    # variable (a 1-D input, or one row) gives a 0-d tensor
    for shape in ((3, 5), (5,), (1, 5), (2, 1), (0, 3)):
        for kw in ({}, {"fweights": lambda L, n=shape[-1]: L.arange(1, n + 1)},
                   {"aweights": lambda L, n=shape[-1]: L.linspace(0.5, 1.5, n)}):
            if shape == (2, 1) and kw:
                continue  # (one observation, one kind of weights: the next test)
            outs = []
            for L in (ember, torch):
                x = L.tensor(rand_array(shape), requires_grad=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # (too few observations)
                    outs.append(L.cov(x, **{k: f(L) for k, f in kw.items()}))
            assert_same(*outs)
            assert outs[0].grad_fn.name() == outs[1].grad_fn.name() == "SqueezeBackward0"


def test_cov_one_observation_one_kind_of_weights_leaves_the_input_alone():
    # PyTorch's shortcut writes zeros into the caller's input (a torch bug ember does not
    # copy); the result is the same: 0 (fweights) or nan (aweights: 0 / 0)
    for kw, dtype in (({"fweights": lambda L: L.tensor([2])}, "float32"),
                      ({"aweights": lambda L: L.tensor([0.5])}, "float32"),
                      ({"fweights": lambda L: L.tensor([3])}, "int64")):
        res = []
        for L in (ember, torch):
            x = L.tensor([[3, 5]], dtype=getattr(L, dtype)).T
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (degrees of freedom <= 0 for aweights)
                res.append(L.cov(x, **{k: f(L) for k, f in kw.items()}))
            if L is ember:
                assert x.tolist() == [[3], [5]] and x._version == 0
        assert_same(res[0], res[1])


def test_corrcoef_clips_complex_parts_each():
    # rounding can put a complex coefficient's real part past 1: PyTorch clips real and
    # imaginary parts to [-1, 1] on their own (a diagonal of exactly 1 here)
    x = np.array([[0.3 + 1.2j, -1.1 + 0.4j, 0.7 - 0.9j, 2.0 + 0.1j],
                  [1.0 - 0.5j, 0.2 + 0.3j, -0.4 + 1.5j, 0.9 - 1.0j],
                  [0.1 + 0.1j, 1.4 - 0.2j, -0.6 - 0.8j, 0.5 + 0.5j]], np.complex64)
    e, t = ember.corrcoef(ember.tensor(x)), torch.corrcoef(torch.tensor(x))
    # (values: the complex64 product adds in another order than torch's; a few ulps)
    assert_same(e, t, rtol=1e-6, atol=1e-6)
    for part in ("real", "imag"):
        v = getattr(e, part).numpy()
        assert np.abs(v).max() <= 1.0
