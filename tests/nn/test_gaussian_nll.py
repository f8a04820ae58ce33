"""gaussian_nll_loss against torch: the shapes `var` may take (same, one dim short, one
dim of size 1) and the words for any other, the reduction check, and the gradient that
reaches `var` through the clamp at `eps` as if it were the identity."""

import pytest
import torch

import ember

from helpers import assert_same, same_message

IN = [[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]]
TARGET = [[0.4, -0.5, 1.0], [0.0, 0.2, 1.3]]


@pytest.mark.parametrize("var_shape", [(2, 3), (2,), (2, 1), (1, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_var_shapes_that_broadcast(var_shape, full):
    def run(L):
        var = L.linspace(0.5, 2.0, 6)[:int(torch.Size(var_shape).numel())].reshape(var_shape)
        return L.nn.functional.gaussian_nll_loss(L.tensor(IN), L.tensor(TARGET), var,
                                                 full=full, reduction="none")

    # (log, a division and a product: each correctly rounded, so no tolerance beyond
    # float32's own)
    assert_same(run(ember), run(torch))


@pytest.mark.parametrize("var_shape", [(3,), (1, 1), (2, 2), (), (1,), (2, 3, 1)])
def test_var_of_another_shape_is_refused_in_torch_words(var_shape):
    msg = same_message(lambda L: L.nn.functional.gaussian_nll_loss(
        L.tensor(IN), L.tensor(TARGET), L.ones(var_shape)), ValueError)
    assert msg == "var is of incorrect size"


def test_negative_var_is_checked_before_its_shape():
    msg = same_message(lambda L: L.nn.functional.gaussian_nll_loss(
        L.tensor(IN), L.tensor(TARGET), -L.ones(3)), ValueError)
    assert msg == "var has negative entry/entries"
    same_message(lambda L: L.nn.functional.gaussian_nll_loss(
        L.tensor(IN), L.tensor(TARGET), -0.5), ValueError)


@pytest.mark.parametrize("reduction", ["avg", "batchmean", "Mean"])
def test_unknown_reduction_names_itself(reduction):
    msg = same_message(lambda L: L.nn.GaussianNLLLoss(reduction=reduction)(
        L.tensor(IN), L.tensor(TARGET), L.ones(2, 3)), ValueError)
    assert msg == f"{reduction} is not valid"


@pytest.mark.parametrize("var", [[[0.0, 1e-8, 0.5], [2.0, 0.0, 1.0]], [0.0, 3e-4]])
def test_gradient_passes_the_eps_clamp_unchanged(var):
    # var entries below eps are clamped for the value, but (as torch clamps a copy with
    # autograd off) their gradient is d loss / d var at the clamped value, not zero
    def run(L):
        v = L.tensor(var, requires_grad=True)
        x = L.tensor(IN, requires_grad=True)
        loss = L.nn.functional.gaussian_nll_loss(x, L.tensor(TARGET), v, eps=1e-3)
        loss.backward()
        return loss, v.grad, x.grad

    for e, t in zip(run(ember), run(torch)):
        # (the mean is a float32 reduction: its last bit may follow another order)
        assert_same(e, t, rtol=1e-6, atol=0)


def test_float_var_and_the_input_are_left_untouched():
    def run(L):
        x = L.tensor(IN)
        v = L.tensor([[1e-9, 1.0, 2.0], [0.0, 1.0, 1.0]])
        loss = L.nn.functional.gaussian_nll_loss(x, L.tensor(TARGET), v, reduction="sum")
        return loss, v, L.nn.functional.gaussian_nll_loss(x, L.tensor(TARGET), 0.25)

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t, rtol=1e-6, atol=0)
