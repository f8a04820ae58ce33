"""The transforms beyond exp / affine / sigmoid / tanh against torch: forward and inverse
values, log |det J| with gradients, shapes, domains / codomains, signs, caching, reprs, and
the errors of bad shapes; the new constraints (one_hot, multinomial, corr_cholesky, cat,
stack, positive_semidefinite) on valid and invalid values."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import transforms as T

from helpers import assert_same, check_op, rand_array

X = rand_array((3, 4), np.float64, low=-3.0, high=3.0)
POS = rand_array((3, 4), np.float64, low=0.1, high=5.0, seed=2)
SIMPLEX = rand_array((3, 5), np.float64, low=0.05, high=1.0, seed=3)
SIMPLEX = SIMPLEX / SIMPLEX.sum(-1, keepdims=True)
SQ = rand_array((2, 3, 3), np.float64, seed=4)
VEC6 = rand_array((2, 6), np.float64, low=-2.0, high=2.0, seed=5)
EXPONENT = rand_array((4,), np.float64, low=0.3, high=2.5, seed=6)


def _tril(L, m):
    return m.tril(-1) + m.diagonal(dim1=-2, dim2=-1).exp().diag_embed()


def _pd(L, m):
    t = _tril(L, m)
    return t @ t.mT


def _corr(D, v):
    return D.CorrCholeskyTransform()(v)


# name: (make(D, lib), x, y for the inverse, whether log |det J| exists)
MAKERS = {
    "power": (lambda D, L: D.PowerTransform(L.tensor(EXPONENT)), POS, POS, True),
    "power_scalar": (lambda D, L: D.PowerTransform(2.5), POS, POS, True),
    "softplus": (lambda D, L: D.SoftplusTransform(), X, POS, True),
    "abs": (lambda D, L: D.AbsTransform(), X, POS, False),
    "stick_breaking": (lambda D, L: D.StickBreakingTransform(), X, SIMPLEX, True),
    "softmax": (lambda D, L: D.SoftmaxTransform(), X, SIMPLEX, False),
    "lower_cholesky": (lambda D, L: D.LowerCholeskyTransform(), SQ, None, False),
    "positive_definite": (lambda D, L: D.PositiveDefiniteTransform(), SQ, None, False),
    "corr_cholesky": (lambda D, L: D.CorrCholeskyTransform(), VEC6, None, True),
    "independent": (lambda D, L: D.IndependentTransform(D.SoftplusTransform(), 1), X, POS,
                    True),
    "reshape": (lambda D, L: D.ReshapeTransform((4,), (2, 2)), X, X.reshape(3, 2, 2), True),
    "cat": (lambda D, L: D.CatTransform([D.ExpTransform(), D.SoftplusTransform(),
                                         D.AffineTransform(1.0, 2.0)], dim=1,
                                        lengths=[1, 2, 1]), X, POS, True),
    "cat_event": (lambda D, L: D.CatTransform([D.IndependentTransform(D.ExpTransform(), 1),
                                               D.SoftmaxTransform()], dim=-1,
                                              lengths=[2, 2]), X, None, False),
    "cat_event_ladj": (lambda D, L: D.CatTransform([D.IndependentTransform(D.ExpTransform(),
                                                                           1),
                                                    D.IndependentTransform(
                                                        D.SoftplusTransform(), 1)],
                                                   dim=-1, lengths=[1, 3]), X, POS, True),
    "stack": (lambda D, L: D.StackTransform([D.ExpTransform(), D.SoftplusTransform(),
                                             D.SigmoidTransform()], dim=0), X, POS[:, :] * 0.19,
              True),
    "cdf": (lambda D, L: D.CumulativeDistributionTransform(D.Normal(L.tensor(0.5), 2.0)), X,
            POS * 0.19, True),
}
_INPUTS = {"lower_cholesky": lambda L, m: _tril(L, m), "positive_definite": _pd}


def _libs(name):
    return [(ember.distributions, ember), (torch.distributions, torch)]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_values_inverse_and_log_det_match_torch(name):
    make, x, y, has_ladj = MAKERS[name]
    (E, LE), (D, LT) = _libs(name)
    # NOTE: ember's pow VJP takes `exponent - 1` in the promoted dtype; torch in the float32
    # exponent's (a 0-d tensor from broadcast_all(2.5)): ~3e-8 apart in float64 gradients
    tol = {"grad_rtol": 1e-7} if name == "power_scalar" else {}
    check_op(lambda a: make(E, LE)(a), lambda a: make(D, LT)(a), x, **tol)
    if name in _INPUTS:
        fn = _INPUTS[name]
        check_op(lambda a: make(E, LE).inv(fn(LE, a)), lambda a: make(D, LT).inv(fn(LT, a)), x)
    elif name == "corr_cholesky":
        check_op(lambda a: make(E, LE).inv(make(E, LE)(a)),
                 lambda a: make(D, LT).inv(make(D, LT)(a)), x)
    elif y is not None:
        check_op(lambda b: make(E, LE).inv(b), lambda b: make(D, LT).inv(b), y, **tol)
    if has_ladj:
        check_op(lambda a: make(E, LE).log_abs_det_jacobian(a, make(E, LE)(a)),
                 lambda a: make(D, LT).log_abs_det_jacobian(a, make(D, LT)(a)), x, **tol)
    te, tt = make(E, LE), make(D, LT)
    assert te.bijective == tt.bijective
    assert repr(te.domain) == repr(tt.domain) and repr(te.codomain) == repr(tt.codomain)
    assert te.domain.event_dim == tt.domain.event_dim
    assert te.codomain.event_dim == tt.codomain.event_dim
    assert repr(te) == repr(tt).replace("torch.", "ember.")
    shape = tuple(x.shape)
    assert te.forward_shape(shape) == tt.forward_shape(shape)
    out = tuple(tt.forward_shape(shape))
    assert te.inverse_shape(out) == tt.inverse_shape(out)
    # the result keeps the argument's kind: a tuple stays a tuple, a Size a Size
    for arg, targ in ((shape, shape), (ember.Size(shape), torch.Size(shape))):
        got, want = te.forward_shape(arg), tt.forward_shape(targ)
        assert (type(got).__name__, tuple(got)) == (type(want).__name__, tuple(want))
    signs = []
    for t in (te, tt):
        try:
            signs.append(t.sign)
        except NotImplementedError:
            signs.append(None)
    if isinstance(signs[1], torch.Tensor):
        assert_same(signs[0], signs[1])
    else:
        assert signs[0] == signs[1]


def test_signs_equality_and_caching():
    assert T.SoftplusTransform().sign == 1 and T.SoftplusTransform() == T.SoftplusTransform()
    p = T.PowerTransform(ember.tensor([2.0, -1.0]))
    assert_same(p.sign, torch.tensor([1.0, -1.0]))
    assert p == T.PowerTransform(ember.tensor([2.0, -1.0])) and p != T.PowerTransform(3.0)
    assert T.IndependentTransform(T.ExpTransform(), 1).sign == 1
    for t in (T.PowerTransform(2.0), T.ReshapeTransform((4,), (2, 2)),
              T.IndependentTransform(T.ExpTransform(), 1),
              T.CatTransform([T.ExpTransform()], 0, [3]),
              T.StackTransform([T.ExpTransform()] * 3, 0)):
        cached = t.with_cache(1)
        x = ember.rand(3, 4) + 0.1
        y = cached(x)
        assert cached.inv(y) is x and cached.with_cache(1) is cached
    with pytest.raises(NotImplementedError):
        T.StickBreakingTransform().sign  # noqa: B018


@pytest.mark.parametrize("call", [
    lambda D: D.ReshapeTransform((4,), (3,)),
    lambda D: D.ReshapeTransform((4,), (2, 2)).forward_shape((3, 5)),
    lambda D: D.ReshapeTransform((4,), (2, 2)).inverse_shape((2,)),
    lambda D: D.CorrCholeskyTransform().forward_shape((5,)),
    lambda D: D.CorrCholeskyTransform().inverse_shape((2, 3)),
    lambda D: D.StickBreakingTransform().forward_shape(()),
    lambda D: D.IndependentTransform(D.ExpTransform(), 2)(
        (torch if D is torch.distributions else ember).ones(3)),
    lambda D: D.CatTransform([D.ExpTransform()], 0, [2])(
        (torch if D is torch.distributions else ember).ones(3)),
    lambda D: D.StackTransform([D.ExpTransform()] * 2, 0)(
        (torch if D is torch.distributions else ember).ones(3)),
    lambda D: D.CatTransform([D.ExpTransform()], 0, [1, 2]),
    # a dim out of range: the maps name "tensor", log_abs_det_jacobian its x and y
    lambda D: D.CatTransform([D.ExpTransform()], dim=3)(
        (torch if D is torch.distributions else ember).ones(1)),
    lambda D: D.CatTransform([D.ExpTransform()], dim=3).inv(
        (torch if D is torch.distributions else ember).ones(1)),
    lambda D: D.CatTransform([D.ExpTransform()], dim=3).log_abs_det_jacobian(
        (torch if D is torch.distributions else ember).ones(1),
        (torch if D is torch.distributions else ember).ones(1)),
    lambda D: D.CatTransform([D.ExpTransform()], dim=0, lengths=[2]).inv(
        (torch if D is torch.distributions else ember).ones(1)),
], ids=lambda f: None)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as t_info:
        call(torch.distributions)
    with pytest.raises(Exception) as e_info:
        call(ember.distributions)
    assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


CHECKS = {
    "one_hot": (lambda C: C.one_hot, [[0, 1, 0], [1, 1, 0], [0.5, 0.5, 0], [0, 0, 0]]),
    "multinomial": (lambda C: C.multinomial(3), [[1, 2, 0], [2, 2, 0], [-1, 1, 1], [0, 0, 0]]),
    "corr_cholesky": (lambda C: C.corr_cholesky, None),
    "psd": (lambda C: C.positive_semidefinite, [[[1, 0], [0, 0]], [[1, 2], [2, 1]]]),
    "cat": (lambda C: C.cat([C.positive, C.real, C.unit_interval], 0, [1, 1, 2]),
            [1.0, -2.0, 0.5, 0.2]),
    "cat_bad": (lambda C: C.cat([C.positive, C.real, C.unit_interval], 0, [1, 1, 2]),
                [-1.0, -2.0, 1.5, 0.2]),
    "stack": (lambda C: C.stack([C.positive, C.real, C.unit_interval], 0),
              [[1.0, -2.0], [-2.0, 3.0], [0.5, 1.5]]),
    "stack_last": (lambda C: C.stack([C.positive, C.real], -1), [[1.0, -2.0], [-2.0, 3.0]]),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_new_constraints_check_like_torch(name):
    make, value = CHECKS[name]
    if value is None:
        v = torch.distributions.CorrCholeskyTransform()(torch.tensor(VEC6))
        value = torch.cat([v, v * 1.1]).numpy()
    ce, ct = make(ember.distributions.constraints), make(torch.distributions.constraints)
    assert_same(ce.check(ember.tensor(np.array(value, np.float64))),
                ct.check(torch.tensor(np.array(value, np.float64))))
    assert ce.event_dim == ct.event_dim and ce.is_discrete == ct.is_discrete
    assert repr(ce).split("(")[0] == repr(ct).split("(")[0].replace("torch.", "ember.")
