"""ember.masked against torch.masked 2.13: values, dtypes, gradients and errors."""

import math

import numpy as np
import pytest
import torch

import ember

G = torch.Generator().manual_seed(0)
X = torch.randn(3, 4, 5, dtype=torch.float64, generator=G)
MASK = torch.rand(3, 4, 5, generator=G) > 0.4
MASK[1, 2] = False  # a row with nothing masked in
ROW_MASK = torch.rand(4, 5, generator=G) > 0.5  # broadcast against X
INTS = torch.randint(-6, 7, (3, 4, 5), dtype=torch.int32, generator=G)


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def _same(e, t):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    # NOTE: float64 reductions of a few terms; the order of additions may differ: 1e-12
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


def _compare(name, x, *args, grad=True, **kw):
    xt = x.clone().requires_grad_(grad)
    xe = E(x, grad)
    ekw = {k: E(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    if "dtype" in kw:
        ekw["dtype"] = getattr(ember, str(kw["dtype"]).split(".")[-1])
    t = getattr(torch.masked, name)(xt, *args, **kw)
    e = getattr(ember.masked, name)(xe, *args, **ekw)
    _same(e, t)
    if grad:
        w = torch.randn(t.shape, dtype=t.dtype, generator=torch.Generator().manual_seed(1))
        (t.nan_to_num(0.0, 0.0, 0.0) * w).sum().backward()
        (e.nan_to_num(0.0, 0.0, 0.0) * E(w)).sum().backward()
        _same(xe.grad, xt.grad)


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "logsumexp", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim", [None, 1, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(name, dim, keepdim):
    _compare(name, X, dim, keepdim=keepdim, mask=MASK)
    _compare(name, X, dim, keepdim=keepdim, mask=ROW_MASK)  # mask broadcast
    _compare(name, X, dim, keepdim=keepdim)  # no mask: the plain reduction


@pytest.mark.parametrize("ord", [2.0, 1.0, math.inf, -math.inf, 3.0])
def test_norm_and_normalize(ord):
    _compare("norm", X, ord, 2, mask=MASK)
    _compare("norm", X, ord, (0, 1), keepdim=True, mask=ROW_MASK)
    if ord != -math.inf:
        _compare("normalize", X, ord, 1, mask=MASK)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 2, -2])
def test_normalizations(name, dim):
    _compare(name, X, dim, mask=MASK)
    _compare(name, X, dim, mask=ROW_MASK)


@pytest.mark.parametrize("name", ["argmax", "argmin", "median"])
def test_index_like(name):
    # argmax/argmin return the index in the input's dtype (torch.masked casts it)
    _compare(name, X, 2, grad=False, mask=MASK)
    _compare(name, X, 1, keepdim=True, grad=False, mask=ROW_MASK)
    _compare(name, X, 2, grad=False, mask=MASK, dtype=torch.float32)


def test_var_corrections():
    _compare("var", X, 2, unbiased=False, mask=MASK)
    _compare("std", X, 1, correction=2, keepdim=True, mask=MASK)
    _compare("var", X, 2, correction=0, mask=MASK)


def test_integer_inputs():
    for name in ("sum", "prod", "amax", "amin"):
        _compare(name, INTS, 1, grad=False, mask=MASK)
        _compare(name, INTS.to(torch.uint8), 2, grad=False, mask=MASK)
    _compare("var", INTS, 1, grad=False, mask=MASK)  # computed in float32
    _compare("median", INTS, 2, grad=False, mask=MASK[:, :, :1].expand(3, 4, 5) | True)
    _compare("sum", X, 1, grad=False, mask=MASK.int())  # non-bool masks are cast to bool


def test_logaddexp():
    y = torch.randn(3, 4, 5, dtype=torch.float64, generator=G)
    t = torch.masked.logaddexp(X, y, input_mask=MASK, other_mask=ROW_MASK)
    e = ember.masked.logaddexp(E(X), E(y), input_mask=E(MASK), other_mask=E(ROW_MASK))
    _same(e, t)


@pytest.mark.parametrize("call", [
    lambda m, x, mask: m.sum(x, 1, mask=mask[None]),  # mask with more dims
    lambda m, x, mask: m.sum(x, (1, 1), mask=mask),  # a repeated dim
    lambda m, x, mask: m.amax(x, 3, mask=mask),  # dim out of range
    lambda m, x, mask: m.mean(x.long(), 1, mask=mask),  # integer mean
    lambda m, x, mask: m.var(x, 1, unbiased=True, correction=1, mask=mask),
    lambda m, x, mask: m.median(x.long(), 2, mask=mask),  # fully masked integer row
    lambda m, x, mask: m.norm(x.long(), -math.inf, 1, mask=mask),
    lambda m, x, mask: m.amax(x > 0, 1, mask=mask),  # no identity for bool
    lambda m, x, mask: m.logsumexp(x > 0, 1, mask=mask),
    lambda m, x, mask: m.argmin(x > 0, 1, mask=mask),
])
def test_errors(call):
    with pytest.raises(Exception) as want:
        call(torch.masked, X, MASK)
    with pytest.raises(Exception) as got:
        call(ember.masked, E(X), E(MASK))
    assert type(got.value) is type(want.value)
    # (outside `ember.run` ember's dtypes print as ember.int64)
    assert str(got.value).replace("ember.", "torch.") == str(want.value)


def test_masked_tensor_is_absent():
    with pytest.raises(AttributeError, match="masked_tensor is not implemented in ember"):
        ember.masked.masked_tensor(E(X), E(MASK))
