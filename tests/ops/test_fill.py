"""fill_, zero_, the functional fill and the random fills under autograd: PyTorch's node per
overload (FillBackward0-3 / ZeroBackward0, RandomBackward0-2, BernoulliBackward1-2), and fill_
with a 0-d tensor, whose value gets the sum of the gradient."""

import pytest
import torch

import ember

from helpers import assert_same

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


def test_functional_fill_makes_a_new_tensor_like_torch():
    e = ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).t()
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).t()
    for value in (2.5, True, 7):
        got, want = ember.fill(e, value), torch.fill(t, value)
        assert_same(got, want, check_stride=True)
    assert e.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]  # the input is untouched
    ei, ti = ember.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    assert_same(ember.fill(ei, 2.5), torch.fill(ti, 2.5))  # truncated, as fill_
    assert_same(ember.fill(ei, ember.tensor(-2.5)), torch.fill(ti, torch.tensor(-2.5)))
    u8 = (ember.tensor([1], dtype=ember.uint8), torch.tensor([1], dtype=torch.uint8))
    assert_same(ember.fill(u8[0], ember.tensor(-1)), torch.fill(u8[1], torch.tensor(-1)))
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t"):
        ember.fill(u8[0], 300)
    with pytest.raises(RuntimeError, match="0-dimension value tensor but got tensor with 1"):
        ember.fill(ei, ember.tensor([2.5]))
    with pytest.raises(TypeError, match="fill\\(\\) received an invalid combination"):
        ember.fill(ei, "a")


def test_functional_fill_gradients_and_node_names():
    e = ember.randn(2, 3, requires_grad=True)
    v = ember.tensor(2.0, requires_grad=True)
    r = ember.fill(e, 3.0)
    assert r.grad_fn.name() == "FillBackward0"
    r = ember.fill(e, v)
    assert r.grad_fn.name() == "FillBackward1"
    (r * ember.arange(6.0).view(2, 3)).sum().backward()
    assert v.grad.item() == 15.0 and e.grad.tolist() == [[0.0] * 3] * 2
