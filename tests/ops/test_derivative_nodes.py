"""The node a create_graph=True gradient ends in: PyTorch differentiates many activations
with one derivative op (tanh_backward ...), so `grad(f(x).sum(), x, create_graph=True)`
has grad_fn `TanhBackwardBackward0`, not the last step of ember's composite VJP. Names,
requires_grad, values and second derivatives against torch."""

import numpy as np
import pytest
import torch

import ember

X = [0.3, -0.7, 1.2, 0.0, -3.5, 2.5, float("nan")]

OPS = {
    "tanh": lambda m, x: m.tanh(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "expit": lambda m, x: m.special.expit(x),
    "logit of sigmoid": lambda m, x: m.logit(m.sigmoid(x)),
    "softplus": lambda m, x: m.nn.functional.softplus(x),
    "softplus beta": lambda m, x: m.nn.functional.softplus(x, beta=2.0, threshold=1.0),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "gelu tanh": lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
    "elu": lambda m, x: m.nn.functional.elu(x, alpha=0.5),
    "selu": lambda m, x: m.nn.functional.selu(x),
    "celu": lambda m, x: m.nn.functional.celu(x, alpha=2.0),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x, -0.5, 1.0),
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x),
    "relu": lambda m, x: m.relu(x),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "exp": lambda m, x: m.exp(x),
    "exp2": lambda m, x: m.exp2(x),
    "log1p": lambda m, x: m.log1p(x.abs()),
    "sin": lambda m, x: m.sin(x),
    "cos": lambda m, x: m.cos(x),
    "pow": lambda m, x: x ** 3,
    "softmax": lambda m, x: m.softmax(x, 0),
    "log_softmax": lambda m, x: m.log_softmax(x, 0),
}


def name(node):
    return None if node is None else type(node).__name__


def run(m, op, dtype):
    x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
    y = OPS[op](m, x)
    w = m.linspace(-1, 2, len(X), dtype=getattr(m, dtype))
    (g,) = m.autograd.grad(y, x, w, create_graph=True)
    second = None
    if g.requires_grad:
        (second,) = m.autograd.grad(g, x, w, allow_unused=True, materialize_grads=True)
    return name(y.grad_fn), name(g.grad_fn), g.requires_grad, g.detach().numpy(), (
        None if second is None else second.numpy())


# The gradient at a NaN x of these is torch's vectorised loop's (0 or NaN); on this short
# input torch runs its scalar loop, which gives the cotangent there (test_activation.py
# compares them on inputs torch vectorises).
_NAN_SCALAR_LOOP = ("elu", "selu", "celu", "hardtanh", "relu6", "hardswish")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", list(OPS))
def test_double_backward_node_as_torch(op, dtype):
    e, t = run(ember, op, dtype), run(torch, op, dtype)
    assert e[:3] == t[:3]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    n = len(X) - 1 if op in _NAN_SCALAR_LOOP else len(X)  # (X ends with its NaN)
    np.testing.assert_allclose(e[3][:n], t[3][:n], **tol)
    if t[4] is not None:
        np.testing.assert_allclose(e[4], t[4], **tol)


def test_first_order_gradient_keeps_no_graph():
    x = ember.tensor(X, requires_grad=True)
    (g,) = ember.autograd.grad(ember.tanh(x).sum(), x)
    assert g.grad_fn is None and not g.requires_grad
