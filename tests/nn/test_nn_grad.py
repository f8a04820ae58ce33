"""ember.nn.grad (torch.nn.grad): convolution gradients against torch 2.13."""

import numpy as np
import pytest
import torch

import ember

# NOTE: float64 throughout; the sums run in a different order from oneDNN's: 1e-12.
TOL = dict(rtol=1e-12, atol=1e-12)


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


CASES = [  # nd, input shape, weight shape, kwargs
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, groups=2)),
    (1, (1, 3, 8), (2, 3, 2), dict(padding=1, dilation=2)),
    (2, (2, 2, 7, 6), (3, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0))),
    (3, (1, 2, 5, 4, 4), (2, 1, 2, 2, 2), dict(groups=2, stride=2)),
]


@pytest.mark.parametrize("nd,xs,ws,kw", CASES)
def test_conv_input_and_weight_grads(nd, xs, ws, kw):
    torch.manual_seed(nd)
    x = torch.randn(xs, dtype=torch.float64)
    w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
    out = getattr(torch.nn.functional, f"conv{nd}d")(x, w, **kw)
    go = torch.randn(out.shape, dtype=torch.float64, requires_grad=True)
    t_in = getattr(torch.nn.grad, f"conv{nd}d_input")(x.shape, w, go, **kw)
    t_w = getattr(torch.nn.grad, f"conv{nd}d_weight")(x, w.shape, go, **kw)
    we, goe = E(w, True), E(go, True)
    e_in = getattr(ember.nn.grad, f"conv{nd}d_input")(tuple(x.shape), we, goe, **kw)
    e_w = getattr(ember.nn.grad, f"conv{nd}d_weight")(E(x), tuple(w.shape), goe, **kw)
    for e, t in ((e_in, t_in), (e_w, t_w)):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    # differentiable again: d/d(grad_output, weight) of sum(input grad ** 2)
    (t_in ** 2).sum().backward()
    (e_in ** 2).sum().backward()
    np.testing.assert_allclose(goe.grad.numpy(), go.grad.numpy(), **TOL)
    np.testing.assert_allclose(we.grad.numpy(), w.grad.numpy(), **TOL)


def test_functional_grad_is_the_module():
    assert ember.nn.functional.grad is ember.nn.grad
    assert torch.nn.functional.grad is torch.nn.grad
