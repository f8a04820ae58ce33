"""biject_to and transform_to against torch: the transform each constraint maps to (its
repr), that it lands inside the constraint, round trips for the bijections, registering a
factory, and the errors for unknown constraints and bad registrations."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array

X = rand_array((3, 4), np.float64, low=-3.0, high=3.0)
SQ = rand_array((3, 3), np.float64, seed=1)
VEC3 = rand_array((2, 3), np.float64, seed=2)

# name: (constraint from the constraints module C and library L, input)
CONSTRAINTS = {
    "real": (lambda C, L: C.real, X),
    "real_vector": (lambda C, L: C.real_vector, X),
    "positive": (lambda C, L: C.positive, X),
    "nonnegative": (lambda C, L: C.nonnegative, X),
    "greater_than": (lambda C, L: C.greater_than(1.5), X),
    "greater_than_eq": (lambda C, L: C.greater_than_eq(-1.5), X),
    "less_than": (lambda C, L: C.less_than(2.0), X),
    "unit_interval": (lambda C, L: C.unit_interval, X),
    "interval": (lambda C, L: C.interval(-1.0, 3.0), X),
    "half_open_interval": (lambda C, L: C.half_open_interval(0.0, 1.0), X),
    "tensor_interval": (lambda C, L: C.interval(L.zeros(4), L.ones(4) * 2), X),
    "simplex": (lambda C, L: C.simplex, X),
    "independent": (lambda C, L: C.independent(C.positive, 1), X),
    "lower_cholesky": (lambda C, L: C.lower_cholesky, SQ),
    "positive_definite": (lambda C, L: C.positive_definite, SQ),
    "positive_semidefinite": (lambda C, L: C.positive_semidefinite, SQ),
    "corr_cholesky": (lambda C, L: C.corr_cholesky, VEC3),
    "cat": (lambda C, L: C.cat([C.positive, C.real, C.unit_interval], 1, [1, 2, 1]), X),
    "stack": (lambda C, L: C.stack([C.positive, C.interval(-1.0, 1.0), C.real], 0), X),
}
BIJECTIVE_ONLY = {"lower_cholesky", "positive_definite", "positive_semidefinite"}


@pytest.mark.parametrize("which", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_registry_matches_torch(which, name):
    make, x = CONSTRAINTS[name]
    E, T = ember.distributions, torch.distributions
    ce, ct = make(E.constraints, ember), make(T.constraints, torch)
    fe, ft = getattr(E, which), getattr(T, which)
    if which == "biject_to" and name in BIJECTIVE_ONLY:
        with pytest.raises(NotImplementedError) as t_info:
            ft(ct)
        with pytest.raises(NotImplementedError) as e_info:
            fe(ce)
        assert str(e_info.value) == str(t_info.value)
        return
    te, tt = fe(ce), ft(ct)
    assert repr(te) == repr(tt).replace("torch.", "ember.")
    ye, yt = te(ember.tensor(x)), tt(torch.tensor(x))
    assert_same(ye, yt)
    assert bool(ce.check(ye).all()) and bool(ct.check(yt).all())
    if te.bijective:
        assert_same(te.inv(ye), tt.inv(yt), rtol=1e-8, atol=1e-8)


def test_register_a_factory_and_errors():
    from ember.distributions.constraint_registry import ConstraintRegistry

    C = ember.distributions.constraints
    reg = ConstraintRegistry()

    @reg.register(C.positive)
    def _softplus(constraint):
        return ember.distributions.SoftplusTransform()

    assert isinstance(reg(C.positive), ember.distributions.SoftplusTransform)
    for L in (ember, torch):
        D = L.distributions
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            D.biject_to(D.constraints.boolean)
        with pytest.raises(TypeError, match="Expected constraint to be either"):
            D.constraint_registry.ConstraintRegistry().register(int, lambda c: None)
