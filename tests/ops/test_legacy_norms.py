"""torch.frobenius_norm / torch.nuclear_norm against torch 2.13: values, gradients, node
names, argument forms and refusals."""

import pytest
import torch

import ember

from helpers import same_message

A = [[0.0, 1.0, 2.0], [3.0, -4.0, 5.0]]
B = [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 0.0]]]


def pair(values, dtype="float32"):
    return (torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True),
            ember.tensor(values, dtype=getattr(ember, dtype), requires_grad=True))


@pytest.mark.parametrize("name,args,kwargs", [
    ("frobenius_norm", ((0, 1),), {}),
    ("frobenius_norm", (0,), {"keepdim": True}),
    ("frobenius_norm", ((),), {}),
    ("frobenius_norm", ((-1,),), {}),
    ("nuclear_norm", (), {}),
    ("nuclear_norm", (True,), {}),
    ("nuclear_norm", ((1, 0),), {}),
    ("nuclear_norm", (), {"keepdim": True}),
])
@pytest.mark.parametrize("values", [A, B])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_gradients_and_nodes_as_torch(name, args, kwargs, values, dtype):
    t, e = pair(values, dtype)
    rt, re = getattr(torch, name)(t, *args, **kwargs), getattr(ember, name)(e, *args, **kwargs)
    # an SVD and a square root: a few ulps
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert re.shape == rt.shape and re.dtype is getattr(ember, dtype)
    assert re.detach().numpy() == pytest.approx(rt.detach().numpy(), rel=tol)
    assert re.grad_fn.name() == rt.grad_fn.name()
    rt.sum().backward()
    re.sum().backward()
    assert e.grad.numpy() == pytest.approx(t.grad.numpy(), rel=tol, abs=tol)


@pytest.mark.parametrize("call", [
    lambda m, x: m.frobenius_norm(x, (0, 1, 2)),
    lambda m, x: m.frobenius_norm(x.int(), (0,)),
    lambda m, x: m.frobenius_norm(x.bool(), (0,)),
    lambda m, x: m.nuclear_norm(x, dim=(0,)),
    lambda m, x: m.nuclear_norm(x, 0),
    lambda m, x: m.nuclear_norm(x.long()),
    lambda m, x: m.nuclear_norm(x[0]),
])
def test_refusals_as_torch(call):
    same_message(lambda L: call(L, L.tensor(A)))
