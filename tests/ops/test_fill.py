"""fill_, zero_ and the random fills under autograd: PyTorch's node per overload
(FillBackward2 / FillBackward3 / ZeroBackward0, RandomBackward0-2, BernoulliBackward1-2),
and fill_ with a 0-d tensor, whose value gets the sum of the gradient."""

import pytest
import torch

import ember

FILLS = {
    "fill_number": lambda m, v: v.fill_(1.5),
    "fill_tensor": lambda m, v: v.fill_(m.tensor(2.0)),
    "fill_tensor_int": lambda m, v: v.fill_(m.tensor(3)),
    "zero_": lambda m, v: v.zero_(),
    "random_": lambda m, v: v.random_(),
    "random_to": lambda m, v: v.random_(5),
    "random_from_to": lambda m, v: v.random_(1, 5),
    "random_from_kw": lambda m, v: v.random_(**{"from": 1, "to": 5}),
    "bernoulli_": lambda m, v: v.bernoulli_(),
    "bernoulli_float": lambda m, v: v.bernoulli_(0.3),
    "bernoulli_tensor": lambda m, v: v.bernoulli_(m.full((3,), 0.5)),
    "copy_": lambda m, v: v.copy_(m.ones(3)),
}


@pytest.mark.parametrize("name", FILLS)
def test_fill_node_names_match_torch(name):
    names = []
    for m in (ember, torch):
        m.manual_seed(0)
        v = m.ones(3, requires_grad=True) * 2
        names.append(FILLS[name](m, v).grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "float16"])
def test_fill_with_a_tensor_casts_as_torch(dtype):
    got = []
    for m in (ember, torch):
        x = m.zeros(3, dtype=getattr(m, dtype))
        got.append(x.fill_(m.tensor(-1.7)).tolist())
    assert got[0] == got[1]


def test_fill_with_a_tensor_passes_the_gradient_sum_to_it():
    res = []
    for m in (ember, torch):
        value = m.tensor(2.0, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = (w * 2).fill_(value)
        (y * m.arange(3.0)).sum().backward()
        res.append((y.tolist(), value.grad.item(), w.grad.tolist()))
    assert res[0] == res[1]
