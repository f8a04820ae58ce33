"""Lazy modules and uninitialized parameters against torch: repr, state_dict, the random
numbers their initialization draws, and the errors."""

import io

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def _pair(make):
    """The same lazy module built after the same seed in both libraries."""
    torch.manual_seed(0)
    t = make(torch)
    ember.manual_seed(0)
    return make(ember), t


def test_lazy_linear_materialises_like_torch():
    e, t = _pair(lambda L: L.nn.LazyLinear(4))
    assert repr(e) == repr(t) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert repr(e.weight) == repr(t.weight) == "<UninitializedParameter>"
    assert e.has_uninitialized_params() and t.has_uninitialized_params()
    x = rand_array((3, 5))
    torch.manual_seed(1)
    ember.manual_seed(1)
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)))
    assert type(e) is ember.nn.Linear and type(t) is torch.nn.Linear
    assert type(e.weight) is ember.nn.Parameter
    assert repr(e) == repr(t)
    # the initialization drew exactly torch's numbers
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())
    np.testing.assert_array_equal(e.bias.detach().numpy(), t.bias.detach().numpy())
    assert not e._forward_pre_hooks


def test_lazy_linear_without_bias_and_dtype():
    e, t = _pair(lambda L: L.nn.LazyLinear(2, bias=False, dtype=L.float64))
    x = rand_array((2, 3), np.float64)
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)))
    assert e.bias is None and e.weight.dtype is ember.float64


@pytest.mark.parametrize("name, shape, kw", [
    ("LazyConv1d", (2, 3, 9), {"kernel_size": 3}),
    ("LazyConv2d", (2, 3, 6, 5), {"kernel_size": 2, "padding": 1, "groups": 3}),
    ("LazyConv2d", (3, 6, 5), {"kernel_size": (3, 1), "bias": False}),
    ("LazyConv3d", (1, 2, 4, 4, 4), {"kernel_size": 2}),
])
def test_lazy_conv_matches_torch(name, shape, kw):
    e, t = _pair(lambda L: getattr(L.nn, name)(6, **kw))
    assert repr(e) == repr(t)
    x = rand_array(shape)
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    assert repr(e) == repr(t)
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())


def test_lazy_conv_bad_input_rank():
    for L in (torch, ember):
        with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D"):
            L.nn.LazyConv2d(2, 3)(L.zeros(5, 5))


def test_state_dict_of_lazy_modules():
    e, t = _pair(lambda L: L.nn.LazyLinear(3))
    sd_e, sd_t = e.state_dict(), t.state_dict()
    assert list(sd_e) == list(sd_t) == ["weight", "bias"]
    assert all(type(v).__name__ == "UninitializedParameter" for v in sd_e.values())
    # a lazy module takes an initialized state dict: its shapes come from it
    src_t = torch.nn.Linear(5, 3)
    src_e = ember.nn.Linear(5, 3)
    src_e.load_state_dict({k: ember.tensor(v.detach().numpy())
                           for k, v in src_t.state_dict().items()})
    res_e = e.load_state_dict(src_e.state_dict())
    res_t = t.load_state_dict(src_t.state_dict())
    assert str(res_e) == str(res_t)
    assert type(e).__name__ == type(t).__name__ == "LazyLinear"  # until its first forward
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())
    assert tuple(e.weight.shape) == (3, 5)
    # lazy into lazy stays lazy
    e2, t2 = _pair(lambda L: L.nn.LazyLinear(3))
    e2.load_state_dict(ember.nn.LazyLinear(3).state_dict())
    t2.load_state_dict(torch.nn.LazyLinear(3).state_dict())
    assert type(e2.weight).__name__ == type(t2.weight).__name__ == "UninitializedParameter"


def test_uninitialized_parameter_placeholder():
    for L in (torch, ember):
        p = L.nn.parameter.UninitializedParameter()
        assert p.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            _ = p.shape
        p.materialize((2, 3))
        assert type(p) is L.nn.Parameter and tuple(p.shape) == (2, 3)
        b = L.nn.parameter.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    assert ember.nn.parameter.is_lazy(ember.nn.parameter.UninitializedParameter())


def test_lazy_sequential_and_saving():
    e, t = _pair(lambda L: L.nn.Sequential(L.nn.LazyLinear(4), L.nn.ReLU(), L.nn.LazyLinear(2)))
    x = rand_array((2, 6))
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    assert repr(e) == repr(t)
    buf = io.BytesIO()
    ember.save(e.state_dict(), buf)
    buf.seek(0)
    loaded = torch.load(buf)
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())


@pytest.mark.parametrize("use", [
    lambda L, m: sum(p.numel() for p in m.parameters()),  # counting before the first forward
    lambda L, m: m.weight + 1,
    lambda L, m: m.weight.sum(),
    lambda L, m: L.nn.init.xavier_uniform_(m.weight),
    lambda L, m: m.weight.dim(),
    lambda L, m: m.weight.clone(),
])
def test_using_an_uninitialized_parameter_is_refused(use):
    for L in (torch, ember):
        m = L.nn.LazyLinear(3)
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in "):
            use(L, m)


def test_optimizer_made_before_the_first_forward():
    e, t = _pair(lambda L: L.nn.LazyLinear(2))
    opt_e, opt_t = ember.optim.Adam(e.parameters(), lr=0.1), torch.optim.Adam(t.parameters(),
                                                                               lr=0.1)
    x = rand_array((4, 3))
    for m, opt, L in ((e, opt_e, ember), (t, opt_t, torch)):
        L.manual_seed(1)
        for _ in range(2):
            opt.zero_grad()
            m(L.tensor(x)).pow(2).sum().backward()
            opt.step()
    # NOTE: Adam's update goes through sqrt and division: a few ulps
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert sum(p.numel() for p in e.parameters()) == 8
