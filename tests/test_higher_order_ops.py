"""cond and while_loop in eager mode against torch 2.13: results, node names, gradients,
argument checks. (torch compiles these with dynamo even in eager mode: a second a call.)"""

import pytest
import torch

import ember

from helpers import assert_same, same_message

X = [0.5, -1.25, 2.0]


@pytest.mark.parametrize("positive", [True, False])
def test_cond_runs_the_chosen_branch_with_gradients(positive):
    out = []
    for L in (torch, ember):
        x = L.tensor(X if positive else [-v for v in X], requires_grad=True)
        r = L.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos() * 2, (x,))
        assert r.grad_fn.name() == "CondAutogradOpBackward"
        r.sum().backward()
        out.append((r, x.grad))
    assert_same(out[1][0], out[0][0])
    assert_same(out[1][1], out[0][1])


def test_cond_nested_outputs_and_python_pred():
    res = []
    for L in (torch, ember):
        x = L.tensor(X, requires_grad=True)
        r = L.cond(L.tensor(False), lambda x, y: (x + y, x.clone()),
                   lambda x, y: (x - y, y.clone()), [x, x * 3])
        assert type(r) is tuple and all(t.grad_fn.name() == "CondAutogradOpBackward" for t in r)
        c = L.cond(True, lambda x: x.sin(), lambda x: x.cos(), (x,))
        assert c.grad_fn.name() == "SinBackward0"  # (a constant pred just calls the branch)
        res.append((*r, c, L.cond(1, lambda: 5, lambda: 6)))
    for e, t in zip(res[1], res[0]):
        assert_same(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.cond("a", lambda x: x, lambda x: x, (L.ones(1),)),
    lambda L: L.cond(L.ones(2) > 0, lambda x: x, lambda x: x, (L.ones(1),)),
    lambda L: L.cond(L.tensor(True), 3, lambda x: x, (L.ones(1),)),
    lambda L: L.cond(L.tensor(True), lambda x: x, lambda x: x, (3,)),
    lambda L: L.cond(L.tensor(True), lambda x: x, lambda x: x, L.tensor([1.0, 2.0])),
    lambda L: L.while_loop(3, lambda x: (x,), (L.ones(1),)),
])
def test_argument_checks_in_torchs_words(call):
    same_message(call)


def test_while_loop_matches_torch_with_gradients():
    res = []
    for L in (torch, ember):
        x = L.tensor(X, requires_grad=True)
        i, y = L.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (L.tensor(0), x))
        assert i.grad_fn is None and y.grad_fn.name() == "WhileLoopAutogradOpBackward"
        y.sum().backward()
        res.append((i, y, x.grad))
        # no iteration: fresh copies of the inputs
        j, z = L.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (L.tensor(5), x))
        assert z is not x and z.tolist() == x.tolist()
    for e, t in zip(res[1], res[0]):
        assert_same(e, t)
    assert ember.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)) == (3,)


def test_while_loop_refusals():
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor"):
        ember.while_loop(lambda x: x, lambda x: (x + 1,), (ember.ones(2),))
    with pytest.raises(AssertionError, match="body_fn should return a tuple"):
        ember.while_loop(lambda x: x.sum() < 3, lambda x: x + 1, (ember.ones(1),))
    with pytest.raises(AssertionError, match="can only be of"):
        ember.while_loop(lambda x: True, lambda x: (x,), ("a",))
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        ember.while_loop(lambda x: True, lambda x: (x,), ember.ones(1))
