"""The scatter family on float16 / bfloat16 against torch: scatter_add, scatter_reduce and
scatter_'s reduce accumulate in float32 and round once, index_add / index_reduce /
index_put(accumulate=True) round after every step. Exact: one dtype, one order of adds."""

import warnings

import pytest
import torch

import ember

from helpers import assert_same, to_ember

LOW = ["float16", "bfloat16"]


def _inputs(dtype: str, n: int = 3000, near_one: bool = False, seed: int = 0):
    """(x, index, src) in torch: many sources per slot, so per-step rounding would show."""
    g = torch.Generator().manual_seed(seed)
    d = getattr(torch, dtype)
    src = torch.rand(n, generator=g) * 0.02 + 0.995 if near_one else torch.randn(n, generator=g)
    return (torch.randn(3, generator=g).to(d), torch.randint(0, 3, (n,), generator=g),
            src.to(d))


def _exact(e, t):
    assert_same(e, t, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_rounds_once(dtype, reduce, include_self):
    x, i, s = _inputs(dtype, near_one=reduce == "prod")
    t = x.scatter_reduce(0, i, s, reduce, include_self=include_self)
    e = to_ember(x).scatter_reduce(0, to_ember(i), to_ember(s), reduce,
                                   include_self=include_self)
    _exact(e, t)


@pytest.mark.parametrize("dtype", LOW)
def test_scatter_add_rounds_once(dtype):
    x, i, s = _inputs(dtype)
    _exact(to_ember(x).scatter_add(0, to_ember(i), to_ember(s)), x.scatter_add(0, i, s))
    # in place and along dim 1 of a 2-D target, as a message-passing layer would
    x2, i2, s2 = x.view(1, 3).expand(2, 3).clone(), i.view(1, -1).repeat(2, 1), s.view(1, -1)
    s2 = s2.repeat(2, 1)
    e2 = to_ember(x2)
    e2.scatter_add_(1, to_ember(i2), to_ember(s2))
    _exact(e2, x2.scatter_add_(1, i2, s2))


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_argument_rounds_once(dtype, reduce):
    x, i, s = _inputs(dtype, near_one=reduce == "multiply")
    with warnings.catch_warnings():  # (the deprecation: tests/test_user_warnings.py)
        warnings.simplefilter("ignore")
        t = x.clone().scatter_(0, i, s, reduce=reduce)
        e = to_ember(x).scatter_(0, to_ember(i), to_ember(s), reduce=reduce)
    _exact(e, t)
    # a number: converted to the tensor's dtype first, then accumulated in float32
    t = x.clone().scatter_(0, i, 0.001, reduce="add")
    _exact(to_ember(x).scatter_(0, to_ember(i), 0.001, reduce="add"), t)


@pytest.mark.parametrize("dtype", LOW)
def test_index_ops_round_every_step(dtype):
    x, i, s = _inputs(dtype)
    _, _, near = _inputs(dtype, near_one=True)
    ex, ei, es, en = to_ember(x), to_ember(i), to_ember(s), to_ember(near)
    _exact(ex.index_add(0, ei, es), x.index_add(0, i, s))
    _exact(ex.clone().index_put_((ei,), es, accumulate=True),
           x.clone().index_put_((i,), s, accumulate=True))
    with warnings.catch_warnings():  # (index_reduce is "in beta")
        warnings.simplefilter("ignore")
        _exact(ex.index_reduce(0, ei, es, "mean"), x.index_reduce(0, i, s, "mean"))
        _exact(ex.clone().index_reduce_(0, ei, en, "prod"), x.index_reduce(0, i, near, "prod"))


def test_float32_scatter_unchanged():
    x, i, s = _inputs("float32", n=20000)
    _exact(to_ember(x).scatter_add(0, to_ember(i), to_ember(s)), x.scatter_add(0, i, s))
    _exact(to_ember(x).scatter_reduce(0, to_ember(i), to_ember(s), "mean"),
           x.scatter_reduce(0, i, s, "mean"))


def test_index_reduce_gradient():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    src = torch.tensor([[2.0, 1.0], [0.5, 3.0], [4.0, 4.0]], requires_grad=True)
    idx = torch.tensor([0, 0, 2])
    ex, esrc = (to_ember(a.detach(), requires_grad=True) for a in (x, src))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = x.index_reduce(0, idx, src, "prod", include_self=False)
        e = ex.index_reduce(0, ember.tensor([0, 0, 2]), esrc, "prod", include_self=False)
    _exact(e, t)
    (t * torch.arange(6.0).view(3, 2)).sum().backward()
    (e * ember.arange(6.0).view(3, 2)).sum().backward()
    _exact(ex.grad, x.grad)
    _exact(esrc.grad, src.grad)
