"""An in-place write of a batched value into an unbatched tensor inside vmap fails with
PyTorch's words: the kernel's broadcast error for ops with a plain pointwise rule, the
op's own "in a vmap" refusal, or the fallback's "aten::op_ ... at level N"."""

from __future__ import annotations

import warnings

import pytest
import torch

import ember

I3 = [0, 1, 2]

CASES = {
    # the kernel's broadcast error (the batch in front of the operands' common rank)
    "add_": lambda m, t: m.zeros(3).add_(t),
    "add_ alpha": lambda m, t: m.zeros(3).add_(t, alpha=2),
    "add_ of a batched scalar": lambda m, t: m.zeros(3).add_(t.sum()),
    "add_ into a matrix": lambda m, t: m.zeros(2, 3).add_(t),
    "add_ into a column": lambda m, t: m.zeros(3, 1).add_(t),
    "add_ that cannot broadcast": lambda m, t: m.zeros(4).add_(t),
    "+=": lambda m, t: m.zeros(3).__iadd__(t),
    "atan2_": lambda m, t: m.zeros(3).atan2_(t),
    "bitwise_and_": lambda m, t: m.zeros(3, dtype=m.long).bitwise_and_(t.long()),
    "gcd_": lambda m, t: m.zeros(3, dtype=m.long).gcd_(t.long()),
    # a dedicated rule: "in a vmap"
    "sub_": lambda m, t: m.zeros(3).sub_(t),
    "mul_": lambda m, t: m.zeros(3).mul_(t),
    "mul_ by a batched scalar": lambda m, t: m.zeros(3).mul_(t.sum()),
    "div_ floor": lambda m, t: m.zeros(3).div_(t, rounding_mode="floor"),
    "logical_or_": lambda m, t: m.zeros(3).logical_or_(t),
    "copy_": lambda m, t: m.zeros(3).copy_(t),
    "fill_": lambda m, t: m.zeros(3).fill_(t.sum()),
    "masked_fill_": lambda m, t: m.zeros(3).masked_fill_(t > 0, 1.0),
    "index_add_": lambda m, t: m.zeros(3).index_add_(0, m.tensor(I3), t),
    "scatter_add_": lambda m, t: m.zeros(3).scatter_add_(0, m.tensor(I3), t),
    "index_put_": lambda m, t: m.zeros(3).index_put_((m.tensor(I3),), t),
    # the per-example fallback: "aten::op_ ... at level N"
    "pow_": lambda m, t: m.zeros(3).pow_(t),
    "fmod_": lambda m, t: m.zeros(3).fmod_(t),
    "lt_": lambda m, t: m.zeros(3).lt_(t),
    "clamp_": lambda m, t: m.zeros(3).clamp_(max=t),
    "addcmul_": lambda m, t: m.zeros(3).addcmul_(t, m.ones(3)),
    "lerp_": lambda m, t: m.zeros(3).lerp_(m.ones(3), t),
    "index_copy_": lambda m, t: m.zeros(3).index_copy_(0, m.tensor(I3), t),
    "scatter_": lambda m, t: m.zeros(3).scatter_(0, m.tensor(I3), t),
    "masked_scatter_": lambda m, t: m.zeros(3).masked_scatter_(t > 0, t),
}


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's fallback announces itself)
        with pytest.raises(Exception) as info:
            fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", list(CASES))
def test_writing_into_an_unbatched_tensor(name):
    op = CASES[name]

    def run(m):
        return _error(lambda: m.func.vmap(lambda t: op(m, t))(m.ones(2, 3)))

    assert run(ember) == run(torch)


def _setitem(m, key, size=5):
    def f(t):
        z = m.zeros(size)
        z[key(m)] = t
        return z
    return f


@pytest.mark.parametrize("key", [lambda m: slice(1, 4), lambda m: [0, 1, 2],
                                 lambda m: m.tensor([True, True, True, False, False])])
def test_setitem_basic_and_advanced_keys(key):
    def run(m):
        return _error(lambda: m.func.vmap(_setitem(m, key))(m.ones(2, 3)))

    assert run(ember) == run(torch)


def test_the_level_counts_the_transforms_around_the_vmap():
    def run(m):
        f = m.func.vmap(lambda t: m.zeros(3).pow_(t))
        nested = m.func.vmap(m.func.vmap(lambda t: m.zeros(3).pow_(t)))
        in_grad = m.func.grad(lambda x: f(x).sum())
        return (_error(lambda: f(m.ones(2, 3))), _error(lambda: nested(m.ones(2, 2, 3))),
                _error(lambda: in_grad(m.ones(2, 3))))

    ours, theirs = run(ember), run(torch)
    assert [msg.split("at level ")[1][0] for _, msg in theirs] == ["1", "2", "2"]
    assert ours == theirs


def test_a_batched_self_still_takes_the_write():
    def run(m):
        return m.func.vmap(lambda t: t.mul_(m.arange(3.0)).pow_(2))(m.ones(2, 3) * 2)

    assert run(ember).tolist() == run(torch).tolist()
