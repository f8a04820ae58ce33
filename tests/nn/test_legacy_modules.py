"""nn.CrossMapLRN2d and nn.NLLLoss2d against torch 2.13."""

import warnings

import numpy as np
import pytest
import torch

import ember


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("channels", [1, 4, 6])
def test_cross_map_lrn2d_values_and_grads(size, channels):
    # NOTE: float64; the same sums in the same order, so the few-ulp tolerance covers only
    # pow's rounding
    torch.manual_seed(size * 10 + channels)
    x = torch.randn(2, channels, 3, 2, dtype=torch.float64, requires_grad=True)
    kw = dict(alpha=0.5, beta=0.75, k=1.5)
    try:
        y = torch.nn.CrossMapLRN2d(size, **kw)(x)
    except RuntimeError as want:  # (PyTorch's backward buffer cannot hold every size)
        with pytest.raises(RuntimeError):
            ember.nn.CrossMapLRN2d(size, **kw)(E(x))
        pytest.skip(str(want))
    xe = E(x, True)
    ye = ember.nn.CrossMapLRN2d(size, **kw)(xe)
    np.testing.assert_allclose(ye.detach().numpy(), y.detach().numpy(), rtol=1e-14, atol=1e-14)
    assert type(ye.grad_fn).__name__ == type(y.grad_fn).__name__ == "CrossMapLRN2dBackward"
    g = torch.randn_like(y)
    try:
        y.backward(g)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ye.backward(E(g))
        return
    ye.backward(E(g))
    np.testing.assert_allclose(xe.grad.numpy(), x.grad.numpy(), rtol=1e-13, atol=1e-13)


def test_cross_map_lrn2d_repr_and_errors():
    assert repr(ember.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError) as want:
        torch.nn.CrossMapLRN2d(3)(torch.randn(5, 3, 3))
    with pytest.raises(ValueError) as got:
        ember.nn.CrossMapLRN2d(3)(ember.randn(5, 3, 3))
    assert str(got.value) == str(want.value)


def test_nll_loss_2d_is_nll_loss_with_a_warning():
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        t = torch.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        e = ember.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert [(w.category, str(w.message)) for w in got] == \
        [(w.category, str(w.message)) for w in want]
    assert got[0].filename == __file__
    assert isinstance(e, ember.nn.NLLLoss) and repr(e) == repr(t)
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, 4).log_softmax(1)
    y = torch.randint(0, 3, (2, 4, 4))
    np.testing.assert_allclose(e(E(x), E(y)).numpy(), t(x, y).numpy(), rtol=1e-6)
