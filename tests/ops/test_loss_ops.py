"""The fused pointwise losses: values, grad_fn names, gradients (both arguments) and second
derivatives against torch, for every reduction."""

import numpy as np
import pytest
import torch

import ember

from helpers import check_grads, check_op, rand_array

EF, TF = ember.nn.functional, torch.nn.functional

CASES = {
    "mse_loss": (lambda F: F.mse_loss, "MseLossBackward0", {}),
    "smooth_l1_loss": (lambda F: F.smooth_l1_loss, "SmoothL1LossBackward0", {"beta": 0.7}),
    "huber_loss": (lambda F: F.huber_loss, "HuberLossBackward0", {"delta": 0.6}),
    "binary_cross_entropy": (lambda F: F.binary_cross_entropy, "BinaryCrossEntropyBackward0", {}),
    "binary_cross_entropy_with_logits": (lambda F: F.binary_cross_entropy_with_logits,
                                         "BinaryCrossEntropyWithLogitsBackward0", {}),
    "soft_margin_loss": (lambda F: F.soft_margin_loss, "SoftMarginLossBackward0", {}),
}


NO_TARGET_GRAD = {"soft_margin_loss"}


def _inputs(name):
    x, t = rand_array((4, 5)), rand_array((4, 5), seed=1)
    if name == "binary_cross_entropy":
        x = 1 / (1 + np.exp(-x))
    if name in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
        t = 1 / (1 + np.exp(-t))
    if name == "soft_margin_loss":
        t = np.sign(t)
    return x.astype(np.float32), t.astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(name, reduction):
    get, grad_name, kw = CASES[name]
    x, t = _inputs(name)
    if name in NO_TARGET_GRAD:
        out, _ = check_op(lambda a: get(EF)(a, ember.tensor(t), reduction=reduction, **kw),
                          lambda a: get(TF)(a, torch.tensor(t), reduction=reduction, **kw), x)
        with pytest.raises(RuntimeError):
            get(EF)(ember.tensor(x), ember.tensor(t, requires_grad=True))
    else:
        out, _ = check_op(lambda a, b: get(EF)(a, b, reduction=reduction, **kw),
                          lambda a, b: get(TF)(a, b, reduction=reduction, **kw), x, t,
                          rtol=1e-5, atol=1e-6)
    assert type(out.grad_fn).__name__ == grad_name


@pytest.mark.parametrize("name", list(CASES))
def test_finite_differences_and_second_derivative(name):
    get, _, kw = CASES[name]
    x, t = (a.astype(np.float64) for a in _inputs(name))
    both = name not in NO_TARGET_GRAD
    if both:
        check_grads(lambda a, b: get(EF)(a, b, **kw), x, t, rtol=1e-4, atol=1e-6)
    else:
        check_grads(lambda a: get(EF)(a, ember.tensor(t), **kw), x, rtol=1e-4, atol=1e-6)
    grads = []
    for lib, F in ((ember, EF), (torch, TF)):
        a = lib.tensor(x, requires_grad=True)
        b = lib.tensor(t, requires_grad=both)
        (ga,) = lib.autograd.grad(get(F)(a, b, **kw), a, create_graph=True)
        grads.append(lib.autograd.grad((ga * ga).sum(), (a, b) if both else (a,)))
    for e, tt in zip(*grads):
        np.testing.assert_allclose(e.numpy(), tt.numpy(), rtol=1e-6, atol=1e-9)


def test_bce_clamps_the_logs_like_torch():
    x = np.array([0.0, 1.0, 0.5], np.float32)
    t = np.array([1.0, 0.0, 0.5], np.float32)
    e = EF.binary_cross_entropy(ember.tensor(x), ember.tensor(t), reduction="none")
    tt = TF.binary_cross_entropy(torch.tensor(x), torch.tensor(t), reduction="none")
    np.testing.assert_allclose(e.numpy(), tt.numpy(), rtol=1e-6)


def test_losses_on_meta_have_torch_shapes():
    x = ember.empty(3, 4, device="meta")
    assert EF.mse_loss(x, x).shape == () and EF.mse_loss(x, x, reduction="none").shape == (3, 4)
