"""Losses on edge input against torch: 0-d operands, weights of another dtype or size, and
the weighted means of mse / l1. Same values, dtypes and gradients, or the same exception."""

import warnings

import pytest
import torch

import ember

from helpers import assert_same

POINTWISE = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
             "binary_cross_entropy_with_logits", "soft_margin_loss", "poisson_nll_loss"]


def _both(fn):
    """fn(lib) for torch and ember, each under the same warning capture."""
    out = []
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append((fn(m), sorted({w.category.__name__ for w in caught})))
    return out


@pytest.mark.parametrize("name", POINTWISE)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_losses_on_0d_tensors(name, reduction):
    def run(m):
        x = m.tensor(0.3, requires_grad=True)
        loss = getattr(m.nn.functional, name)(x, m.tensor(0.7), reduction=reduction)
        loss.backward()
        return loss, x.grad

    (t, t_warn), (e, e_warn) = _both(run)
    assert e_warn == t_warn
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


def test_mse_loss_module_on_0d_tensors():
    # (1 - 3)^2 = 4, d/dx = 2 (1 - 3) = -4
    x = ember.tensor(1.0, requires_grad=True)
    loss = ember.nn.MSELoss()(x, ember.tensor(3.0))
    loss.backward()
    assert loss.shape == () and float(loss) == 4.0 and float(x.grad) == -4.0
    assert_same(loss, torch.nn.MSELoss()(torch.tensor(1.0), torch.tensor(3.0)))


def test_mse_loss_0d_against_a_vector_broadcasts_with_a_warning():
    (t, t_warn), (e, e_warn) = _both(
        lambda m: m.nn.functional.mse_loss(m.tensor(1.0), m.arange(3.0), reduction="none"))
    assert e_warn == t_warn == ["UserWarning"]
    assert_same(e, t)


# --- class weights of another dtype -----------------------------------------------------------

CLASS_WEIGHTED = {
    "cross_entropy": lambda m, w: m.nn.functional.cross_entropy(
        m.ones(2, 3), m.tensor([0, 1]), weight=w),
    "cross_entropy_none": lambda m, w: m.nn.functional.cross_entropy(
        m.ones(2, 3), m.tensor([0, 1]), weight=w, reduction="none"),
    "cross_entropy_smoothing": lambda m, w: m.nn.functional.cross_entropy(
        m.ones(2, 3), m.tensor([0, 1]), weight=w, label_smoothing=0.1),
    "cross_entropy_1d": lambda m, w: m.nn.functional.cross_entropy(
        m.ones(3), m.tensor(1), weight=w),
    "cross_entropy_4d": lambda m, w: m.nn.functional.cross_entropy(
        m.ones(2, 3, 2, 2), m.zeros(2, 2, 2, dtype=m.int64), weight=w),
    "nll_loss": lambda m, w: m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0, 1]), weight=w),
    "CrossEntropyLoss": lambda m, w: m.nn.CrossEntropyLoss(weight=w)(
        m.ones(2, 3), m.tensor([0, 1])),
    "NLLLoss": lambda m, w: m.nn.NLLLoss(weight=w)(m.ones(2, 3), m.tensor([0, 1])),
    "multi_margin_loss": lambda m, w: m.nn.functional.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), weight=w),
}


@pytest.mark.parametrize("case", sorted(CLASS_WEIGHTED))
@pytest.mark.parametrize("wdtype", ["float64", "float16", "int64"])
def test_class_weight_of_another_dtype_is_refused(case, wdtype):
    errors = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            CLASS_WEIGHTED[case](m, m.ones(3, dtype=getattr(m, wdtype)))
        errors.append(str(info.value))
    assert errors[1] == errors[0]  # e.g. "expected scalar type Float but found Double"


@pytest.mark.parametrize("case", sorted(CLASS_WEIGHTED))
def test_class_weight_of_the_input_dtype_still_works(case):
    (t, _), (e, _) = _both(lambda m: CLASS_WEIGHTED[case](m, m.tensor([0.5, 2.0, 1.0])))
    assert_same(e, t)


def test_nll_loss_float64_input_with_float32_weight_is_refused():
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
            m.nn.functional.nll_loss(m.ones(2, 3, dtype=m.float64), m.tensor([0, 1]),
                                     weight=m.ones(3))


# --- elementwise weights: BCE keeps the input's dtype; mse / l1 take the weighted mean -------

ELEMENT_WEIGHTED = {
    "bce": lambda m, w, r: m.nn.functional.binary_cross_entropy(
        m.tensor([0.2, 0.5, 0.9]), m.tensor([0.0, 1.0, 1.0]), weight=w, reduction=r),
    "bce_logits": lambda m, w, r: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([-1.0, 0.5, 2.0]), m.tensor([0.0, 1.0, 1.0]), weight=w, reduction=r),
    "bce_logits_pos_weight": lambda m, w, r: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([-1.0, 0.5, 2.0]), m.tensor([0.0, 1.0, 1.0]), pos_weight=w, reduction=r),
    "mse": lambda m, w, r: m.nn.functional.mse_loss(
        m.tensor([1.0, 2.0, 3.0]), m.zeros(3), weight=w, reduction=r),
    "l1": lambda m, w, r: m.nn.functional.l1_loss(
        m.tensor([1.0, -2.0, 3.0]), m.zeros(3), weight=w, reduction=r),
    "huber": lambda m, w, r: m.nn.functional.huber_loss(
        m.tensor([0.5, -2.0, 3.0]), m.zeros(3), weight=w, reduction=r),
}


@pytest.mark.parametrize("case", sorted(ELEMENT_WEIGHTED))
@pytest.mark.parametrize("wdtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_elementwise_weights(case, wdtype, reduction):
    (t, _), (e, _) = _both(lambda m: ELEMENT_WEIGHTED[case](
        m, m.tensor([1.0, 2.0, 0.5], dtype=getattr(m, wdtype)), reduction))
    assert_same(e, t)


def test_weighted_mse_mean_divides_by_the_weight_sum():
    # (1*1 + 4*2 + 9*0.5) / (1 + 2 + 0.5) = 13.5 / 3.5
    loss = ember.nn.functional.mse_loss(ember.tensor([1.0, 2.0, 3.0]), ember.zeros(3),
                                        weight=ember.tensor([1.0, 2.0, 0.5]))
    assert abs(float(loss) - 13.5 / 3.5) < 1e-6


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weight_of_another_size_is_refused(name):
    for m in (torch, ember):
        with pytest.raises(ValueError, match="Weights and input must have the same size."):
            getattr(m.nn.functional, name)(m.ones(3), m.ones(3), weight=m.ones(2))


@pytest.mark.parametrize("ishape,tshape", [((3, 4), (2, 3, 4)), ((3, 4), (4,)), ((4,), (3, 4)),
                                           ((2, 3, 4), (3, 4)), ((), ()), ((4,), (4,))])
def test_multilabel_soft_margin_sums_over_the_inputs_last_dim(ishape, tshape):
    # the class dim is input.dim() - 1 even when the target broadcasts the loss to more dims
    # (and a 0-d input is refused by its size lookup, after the loss)
    def run(lib):
        lib.manual_seed(0)
        x = lib.rand(ishape, requires_grad=True)
        try:
            out = lib.nn.functional.multilabel_soft_margin_loss(x, lib.rand(tshape),
                                                                reduction="none")
        except Exception as e:  # the comparison is of the exception itself
            return type(e).__name__, str(e)
        (g,) = lib.autograd.grad(out.sum(), x)
        grads = [round(v, 5) for v in g.reshape(-1).tolist()]
        return tuple(out.shape), round(out.sum().item(), 4), grads

    assert run(ember) == run(torch)
