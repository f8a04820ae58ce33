"""forward_ad: dual tensors give J v as torch's forward mode does."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def jvp_of(m, fn, *shapes):
    fw = m.autograd.forward_ad
    xs = [m.tensor(rand_array(s, np.float64, seed=i)) for i, s in enumerate(shapes)]
    vs = [m.tensor(rand_array(s, np.float64, seed=10 + i)) for i, s in enumerate(shapes)]
    with fw.dual_level():
        duals = [fw.make_dual(x, v) for x, v in zip(xs, vs)]
        out = fn(*duals)
        primal, tangent = fw.unpack_dual(out)
    return primal, tangent


@pytest.mark.parametrize("fn,shapes", [
    (lambda x: x.exp() * x.sin(), [(4,)]),
    (lambda x, w: (x @ w).tanh(), [(3, 4), (4, 2)]),
    (lambda x: x[1:, ::2].sum(0) ** 2, [(3, 4)]),
])
def test_tangents_match_torch(fn, shapes):
    assert_same(jvp_of(ember, fn, *shapes), jvp_of(torch, fn, *shapes))


def test_unpacking_a_dual_gives_its_own_tangent_and_no_tangent_outside_a_level():
    fw = ember.autograd.forward_ad
    x, v = ember.ones(3, dtype=ember.float64), ember.full((3,), 2.0, dtype=ember.float64)
    with fw.dual_level():
        d = fw.make_dual(x, v)
        assert fw.unpack_dual(d).tangent.tolist() == [2.0] * 3
        assert fw.unpack_dual(ember.ones(2)).tangent is None
    assert fw.unpack_dual(d * 2).tangent is None


def test_make_dual_errors():
    for m in (ember, torch):
        fw = m.autograd.forward_ad
        with pytest.raises(RuntimeError, match="no level exists"):
            fw.make_dual(m.ones(2), m.ones(2))
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="different size"):
                fw.make_dual(m.ones(2), m.ones(3))


def _in_level(body):
    """call(L) that runs body(L, fw) inside one dual level."""
    def call(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            return body(L, fw)
    return call


def _x(L):
    return L.tensor([0.3, -0.7], dtype=L.float64)


LEVEL_ERRORS = {
    # name -> (exception type, call(L)): torch's checks on levels and make_dual's arguments
    "exit with no level": (RuntimeError, lambda L: L.autograd.forward_ad.exit_dual_level()),
    "nested level": (RuntimeError, _in_level(lambda L, fw: fw.enter_dual_level())),
    "exit another level": (RuntimeError,
                           _in_level(lambda L, fw: fw.exit_dual_level(level=1))),
    "make_dual at an unknown level": (
        RuntimeError, _in_level(lambda L, fw: fw.make_dual(_x(L), _x(L), level=3))),
    "make_dual at level -1": (
        RuntimeError, _in_level(lambda L, fw: fw.make_dual(_x(L), _x(L), level=-1))),
    "unpack_dual at an unknown level": (
        RuntimeError, _in_level(lambda L, fw: fw.unpack_dual(fw.make_dual(_x(L), _x(L)) * 2,
                                                             level=2))),
    "dual of a dual": (RuntimeError, _in_level(
        lambda L, fw: fw.make_dual(fw.make_dual(_x(L), _x(L)), _x(L)))),
    "make_dual of a number": (AttributeError, _in_level(lambda L, fw: fw.make_dual(1.0, _x(L)))),
}


@pytest.mark.parametrize("name", list(LEVEL_ERRORS))
def test_level_and_make_dual_errors_match_torch(name):
    from helpers import same_message

    kind, call = LEVEL_ERRORS[name]
    same_message(call, kind)


def test_unpack_dual_at_another_level_of_a_plain_tensor_is_no_error():
    for L in (ember, torch):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            assert fw.unpack_dual(_x(L), level=2).tangent is None


def test_a_failed_exit_leaves_the_level_open():
    for L in (ember, torch):
        fw = L.autograd.forward_ad
        fw.enter_dual_level()
        with pytest.raises(RuntimeError, match="not the last one"):
            fw.exit_dual_level(level=1)
        assert fw.unpack_dual(fw.make_dual(_x(L), _x(L))).tangent is not None
        fw.exit_dual_level(level=0)


def test_an_integer_tangent_is_refused():
    for L in (ember, torch):
        fw = L.autograd.forward_ad
        with fw.dual_level(), pytest.raises(ValueError, match="Expected tangent to be floating"):
            fw.make_dual(_x(L), L.ones(2, dtype=L.int64))


@pytest.mark.parametrize("make", [
    lambda L, d: d,
    lambda L, d: d * 3,
    lambda L, d: (d * 2).sum(),  # a 0-d tangent prints as its number: tangent=-0.8
    lambda L, d: d.view(2, 1).expand(2, 3),
])
def test_repr_of_a_dual_shows_its_tangent(make):
    def call(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            return repr(make(L, fw.make_dual(_x(L), L.tensor([1.0, -1.4], dtype=L.float64))))
    assert call(ember).replace("ember.", "torch.") == call(torch)


def test_custom_function_forward_and_jvp_see_no_tangents():
    # torch runs a Function's forward, setup_context and jvp with forward grad off: the saved
    # inputs are plain tensors there, even though the caller passed duals
    seen = {}

    def make(L):
        fw = L.autograd.forward_ad

        class Scale(L.autograd.Function):
            @staticmethod
            def forward(x):
                seen[L, "forward"] = fw.unpack_dual(x).tangent
                return x * 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                seen[L, "jvp"] = fw.unpack_dual(x).tangent
                return t * 3

        with fw.dual_level():
            out = Scale.apply(fw.make_dual(_x(L), _x(L)))
            return fw.unpack_dual(out).tangent

    assert_same(make(ember), make(torch))
    assert seen[ember, "forward"] is None and seen[ember, "jvp"] is None
    assert seen[torch, "forward"] is None and seen[torch, "jvp"] is None
