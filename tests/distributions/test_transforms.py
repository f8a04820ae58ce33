"""Transforms against torch.distributions.transforms: forward and inverse values, log |det J|
with gradients, domains, signs, shapes, caching and composition."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import transforms as T

from helpers import assert_same, check_op, rand_array

X = rand_array((3, 4), np.float64, low=-3.0, high=3.0)
UNIT = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=1)
POS = rand_array((3, 4), np.float64, low=0.1, high=5.0, seed=2)
LOC = rand_array((4,), np.float64, seed=3)
SCALE = rand_array((4,), np.float64, low=0.5, high=2.0, seed=4)

MAKERS = {
    "exp": (lambda D: D.ExpTransform(), X, POS),
    "sigmoid": (lambda D: D.SigmoidTransform(), X, UNIT),
    "tanh": (lambda D: D.TanhTransform(), X, UNIT * 2 - 1),
    "affine": (lambda D: D.AffineTransform(1.5, -2.0), X, X),
    "compose": (lambda D: D.ComposeTransform([D.AffineTransform(0.5, 3.0), D.TanhTransform(),
                                               D.AffineTransform(1.0, 0.5)]), X, UNIT + 0.5),
}


@pytest.mark.parametrize("name", MAKERS)
def test_forward_inverse_and_log_det_match_torch(name):
    make, x, y = MAKERS[name]
    E, D = ember.distributions, torch.distributions
    check_op(lambda a: make(E)(a), lambda a: make(D)(a), x)
    check_op(lambda b: make(E).inv(b), lambda b: make(D).inv(b), y)
    check_op(lambda a: make(E).log_abs_det_jacobian(a, make(E)(a)),
             lambda a: make(D).log_abs_det_jacobian(a, make(D)(a)), x)
    te, tt = make(E), make(D)
    assert te.sign == tt.sign and te.bijective == tt.bijective
    assert repr(te.domain) == repr(tt.domain) and repr(te.codomain) == repr(tt.codomain)
    assert repr(te) == repr(tt).replace("torch.", "ember.")


def test_affine_with_tensor_parameters_over_event_dims():
    for event_dim in (0, 1):
        check_op(lambda a, loc, s, k=event_dim: T.AffineTransform(loc, s, event_dim=k)
                 .log_abs_det_jacobian(a, a),
                 lambda a, loc, s, k=event_dim: torch.distributions.AffineTransform(
                     loc, s, event_dim=k).log_abs_det_jacobian(a, a), X, LOC, SCALE)
    t = T.AffineTransform(ember.tensor(LOC), ember.tensor(-SCALE), event_dim=1)
    assert_same(t.sign, torch.tensor(-SCALE).sign())
    assert t.forward_shape((2, 1, 4)) == (2, 1, 4) and t.domain.event_dim == 1
    assert T.AffineTransform(0.0, ember.ones(5)).forward_shape((3, 1)) == (3, 5)


def test_the_sigmoid_stays_inside_the_unit_interval():
    x = ember.tensor([-200.0, 0.0, 200.0])
    assert_same(T.SigmoidTransform()(x), torch.distributions.SigmoidTransform()(
        torch.tensor([-200.0, 0.0, 200.0])), rtol=0, atol=0)
    assert np.isfinite(T.SigmoidTransform().inv(ember.tensor([0.0, 1.0])).numpy()).all()


def test_inverse_of_inverse_caching_and_equality():
    t = T.ExpTransform()
    assert t.inv.inv is t and t.inv.sign == 1
    assert t == T.ExpTransform() and t != T.SigmoidTransform()
    cached = T.ExpTransform(cache_size=1)
    x = ember.tensor([0.5])
    y = cached(x)
    assert cached.inv(y) is x and cached(x) is y
    assert T.ExpTransform().inv(y) is not x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
    assert isinstance(c.inv, T.ComposeTransform) and c.inv.inv is c
    assert T.identity_transform(x) is x


def test_compose_event_dims_follow_torch():
    for lib, D in ((ember, ember.distributions), (torch, torch.distributions)):
        c = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(lib.zeros(3), 2.0,
                                                                     event_dim=1)])
        assert (c.domain.event_dim, c.codomain.event_dim) == (1, 1)
        assert repr(c.domain).startswith("IndependentConstraint(Real(), 1)")
