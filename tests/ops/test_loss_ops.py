"""The fused pointwise losses: values, grad_fn names, gradients (both arguments) and second
derivatives against torch, for every reduction."""

import warnings

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


def _top_nodes(fn) -> list[str]:
    """The node a gradient's grad_fn names and, under a broadcast's sum or a mean's division,
    the one beneath it (further down is ember's composite, where PyTorch has one kernel)."""
    names = [fn.name()]
    while names[-1] in ("SumBackward1", "ViewBackward0", "DivBackward1"):
        fn = fn.next_functions[0][0]
        names.append(fn.name())
    return names


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CASES))
def test_create_graph_gradients_record_torchs_nodes(name, reduction):
    # A create_graph gradient ends in PyTorch's backward kernel's node
    # (MseLossBackwardBackward0, ...), a mean divided last (DivBackward1), a broadcast
    # target's summed back (SumBackward1)
    get, _, kw = CASES[name]
    x, t = (a.astype(np.float64) for a in _inputs(name))
    both = name not in NO_TARGET_GRAD
    if name in ("binary_cross_entropy", "binary_cross_entropy_with_logits",
                "soft_margin_loss"):  # (no broadcast target)
        t = t[:1].repeat(len(x), 0)
    else:
        t = t[:1]  # (broadcast over the rows)
    got = []
    for lib, F in ((ember, EF), (torch, TF)):
        a = lib.tensor(x, requires_grad=True)
        b = lib.tensor(t, requires_grad=both)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the broadcast target's size warning)
            loss = get(F)(a, b, reduction=reduction, **kw)
        grads = lib.autograd.grad(loss.sum(), (a, b) if both else (a,), create_graph=True)
        got.append([_top_nodes(g.grad_fn) for g in grads])
    assert got[0] == got[1]


def test_bce_clamps_the_logs_like_torch():
    x = np.array([0.0, 1.0, 0.5], np.float32)
    t = np.array([1.0, 0.0, 0.5], np.float32)
    e = EF.binary_cross_entropy(ember.tensor(x), ember.tensor(t), reduction="none")
    tt = TF.binary_cross_entropy(torch.tensor(x), torch.tensor(t), reduction="none")
    np.testing.assert_allclose(e.numpy(), tt.numpy(), rtol=1e-6)


def test_losses_on_meta_have_torch_shapes():
    x = ember.empty(3, 4, device="meta")
    assert EF.mse_loss(x, x).shape == () and EF.mse_loss(x, x, reduction="none").shape == (3, 4)


def _grads_both(name, reduction, a0, b0, g0=None, **kw):
    """(input grad, target grad) of loss `name` in torch and in ember, as NumPy arrays."""
    out = []
    for L in (torch, ember):
        a, b = L.tensor(a0, requires_grad=True), L.tensor(b0, requires_grad=True)
        loss = getattr(L.nn.functional, name)(a, b, reduction=reduction, **kw)
        g = L.tensor(g0) if reduction == "none" else L.tensor(1.7)
        out.append([t.numpy() for t in L.autograd.grad(loss, (a, b), g)])
    return out


REGRESSION = {"mse_loss": {}, "smooth_l1_loss": {"beta": 0.3}, "huber_loss": {"delta": 0.3}}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(REGRESSION))
def test_target_gradient_of_an_exact_prediction_is_plus_zero(name, reduction):
    # PyTorch's target gradient is the input's kernel with the operands swapped, not its
    # negation: where input == target both gradients are +0 (ember gave the target -0)
    a0 = np.array([0.25, -1.5, 2.0, 0.0], np.float32)
    g0 = np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    (ti, tt), (ei, et) = _grads_both(name, reduction, a0, a0.copy(), g0, **REGRESSION[name])
    np.testing.assert_array_equal(np.signbit(et), np.signbit(tt))
    np.testing.assert_array_equal(np.signbit(ei), np.signbit(ti))
    assert not np.signbit(et).any()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(REGRESSION) + ["binary_cross_entropy"])
def test_gradients_are_torchs_bit_for_bit(name, reduction):
    # The VJPs compute as PyTorch's backward kernels do: norm * slope * grad (norm = 2/n or
    # 1/n rounded once) for mse / smooth L1 / Huber, and g (x - t) / max((1 - x) x, 1e-12)
    # then / n for BCE's input. Every step is one correctly rounded float32 op, so the bits
    # agree (before, g / n came first and a quarter of the mean gradients were an ulp off).
    # NOTE: 64 elements: whole vectors on every CPU; torch's scalar tail loop orders
    # smooth L1's and Huber's products otherwise. (BCE's target gradient is -logit(x) g,
    # whose log is torch's vector math library's: compared in the next test.)
    rng = np.random.default_rng(3)
    a0 = rng.uniform(0.01, 0.99, 64).astype(np.float32)
    b0 = rng.uniform(0.0, 1.0, 64).astype(np.float32)
    g0 = rng.standard_normal(64).astype(np.float32)
    (ti, tt), (ei, et) = _grads_both(name, reduction, a0, b0, g0, **REGRESSION.get(name, {}))
    np.testing.assert_array_equal(ei, ti)
    if name != "binary_cross_entropy":
        np.testing.assert_array_equal(et, tt)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce_target_gradient_is_minus_logit_unclamped(reduction):
    # d/dt of BCE is -logit(x) g: infinite at x = 0 and x = 1 (ember clamped each log at
    # -100 there and gave +-100 g), -0 at x = 1/2
    a0 = np.array([0.0, 1.0, 0.5, 0.25, 0.9], np.float32)
    b0 = np.array([0.5, 0.5, 0.5, 0.25, 0.1], np.float32)
    g0 = np.array([2.0, -1.0, 1.0, 0.5, 3.0], np.float32)
    (_, tt), (_, et) = _grads_both("binary_cross_entropy", reduction, a0, b0, g0)
    assert np.isinf(et[:2]).all()
    np.testing.assert_array_equal(np.signbit(et), np.signbit(tt))
    np.testing.assert_allclose(et, tt, rtol=2e-7)  # (torch's vectorised log: an ulp)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_target_gradient_bits(reduction):
    # -x g, then / n for the mean: PyTorch's order (ember divided g by n first)
    rng = np.random.default_rng(4)
    a0, b0 = rng.standard_normal(50).astype(np.float32), rng.uniform(0, 1, 50).astype(np.float32)
    g0 = rng.standard_normal(50).astype(np.float32)
    (ti, tt), (ei, et) = _grads_both("binary_cross_entropy_with_logits", reduction, a0, b0, g0)
    np.testing.assert_array_equal(et, tt)
    # (torch's vectorised sigmoid is an ulp off here and there, and sigmoid(x) - t cancels)
    np.testing.assert_allclose(ei, ti, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_soft_margin_overflows_and_differentiates_as_torch(dtype, reduction):
    # torch's log1p(exp(-x t)) overflows to inf past exp's range (its gradient to NaN), and its
    # backward is (t z) * -norm / (z + 1) * g with z = exp(-t x). The values agree bit for bit
    # (the kernel rounds each of exp and log1p once); the gradient goes through ember's exp,
    # whose float32 result may be one ulp from torch's vectorised one: 2 ulp of tolerance
    x = [-100.0, -90.0, -50.0, -1.0, 0.5, 1.0, 3.0, 0.0]
    t = [1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0]
    got = []
    for lib in (ember, torch):
        xs = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.soft_margin_loss(xs, lib.tensor(t, dtype=getattr(lib, dtype)),
                                                 reduction=reduction)
        (g,) = lib.autograd.grad(out.sum(), xs)
        got.append((out.detach().double().numpy(), g.double().numpy()))
    if reduction == "none":
        np.testing.assert_array_equal(got[0][0], got[1][0])
    ulp = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=2 * ulp, atol=0)
