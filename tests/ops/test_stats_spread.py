"""var/std and their _mean forms warn about too few degrees of freedom naming the op the user
called, at the user's line; quantile interpolates with torch's lerp, whose formula turns at
weight 0.5, so its last bit is torch's."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _warnings(L, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(L)
    return [(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename)
            for w in caught]


@pytest.mark.parametrize("call", [
    lambda L: L.std_mean(L.ones(1, 3), 0),
    lambda L: L.var_mean(L.ones(3), correction=3),
    lambda L: L.std(L.ones(2, 1), 1),
    lambda L: L.ones(1).var(),
    lambda L: L.var_mean(L.ones(4, 2), dim=(0, 1), unbiased=True, keepdim=True),
], ids=["std_mean", "var_mean", "std", "var_method", "var_mean_ok"])
def test_degrees_of_freedom_warning_names_the_called_op(call):
    got, want = _warnings(ember, call), _warnings(torch, call)
    assert [w[:2] for w in got] == [w[:2] for w in want]
    assert all(w[2] == __file__ for w in got)  # the user's line, as torch's C++ warning


QS = np.linspace(0, 1, 41, dtype=np.float32)


@pytest.mark.parametrize("n", [2, 5, 24, 37])
@pytest.mark.parametrize("interpolation", ["linear", "midpoint"])
def test_quantile_interpolates_bit_for_bit(n, interpolation):
    # gather, one subtraction and one multiply-add in lerp's two forms: each correctly
    # rounded, so exact
    x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)

    def run(L):
        return L.quantile(L.tensor(x), L.tensor(QS), dim=0, interpolation=interpolation)

    assert_same(run(ember), run(torch), rtol=0, atol=0)


def test_quantile_gradient_and_nanquantile():
    x = np.random.default_rng(3).standard_normal(10)

    def run(L):
        t = L.tensor(x, requires_grad=True)
        r = L.quantile(t, L.tensor([0.33, 0.9], dtype=L.float64))
        r.sum().backward()
        nan = L.nanquantile(L.tensor([1.0, float("nan"), 3.0, 2.2]), 0.7)
        return r, t.grad, nan

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t, rtol=0, atol=0)
