"""Pointwise results of operands in different memory layouts are laid out as PyTorch's
TensorIterator lays them out (the first operand with a preference decides), in eager
mode as on meta: binary arithmetic, comparisons and bitwise ops (ops/_common.iter_relayout)."""

import pytest
import torch

import ember

from helpers import assert_same


def _pair(lib, first: str, second: str):
    """Two (2, 3, 4, 5) tensors: channels-last, contiguous, transposed or broadcast."""
    base = lib.arange(120, dtype=lib.float32).reshape(2, 3, 4, 5)
    forms = {
        "cl": lambda: base.contiguous(memory_format=lib.channels_last),
        "c": lambda: base.clone(),
        "t": lambda: base.transpose(2, 3).contiguous().transpose(2, 3),
        "bc": lambda: base[:, :1].contiguous(memory_format=lib.channels_last),
        "sl": lambda: base.contiguous(memory_format=lib.channels_last)[:, 1:3],
    }
    return forms[first](), forms[second]()


OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=2),
    "gt": lambda a, b: a > b,
    "eq": lambda a, b: a == b,
    "and": lambda a, b: (a > 10) & (b > 20),
    "xor_int": lambda a, b: a.int() ^ b.int(),
}


@pytest.mark.parametrize("first,second", [("cl", "c"), ("c", "cl"), ("t", "c"), ("c", "t"),
                                          ("bc", "c"), ("c", "bc"), ("t", "cl"),
                                          ("sl", "c"), ("sl", "t")])
@pytest.mark.parametrize("op", sorted(OPS))
def test_mixed_layouts_follow_tensoriterator(op, first, second):
    fn = OPS[op]
    results = []
    for lib in (torch, ember):
        a, b = _pair(lib, first, second)
        if first == "sl" or second == "sl":
            # (a slice of 2 channels: line the shapes up)
            a, b = (x if x.shape[1] == 2 else x[:, :2] for x in (a, b))
        r = fn(lib, a, b) if op == "sub_alpha" else fn(a, b)
        results.append(r)
    t, e = results
    assert e.stride() == t.stride()
    # integers and exact float32 sums/products of small integers: equal bit for bit
    assert e.tolist() == t.tolist()


def test_channels_last_state_update_stays_channels_last():
    # a cellular-automaton step: state (channels-last) plus a contiguous masked update
    for lib in (torch, ember):
        lib.manual_seed(0)
    x = ember.zeros(2, 16, 6, 6).contiguous(memory_format=ember.channels_last)
    dx = ember.ones(2, 16, 6, 6)
    mask = (ember.arange(72).reshape(2, 1, 6, 6) % 3 == 0).float()
    y = x + dx * mask
    assert y.is_contiguous(memory_format=ember.channels_last)
    assert y.stride() == (576, 1, 96, 16)
    assert y.sum().item() == 16 * 24


def test_meta_and_eager_agree():
    a = ember.zeros(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
    b = ember.zeros(2, 3, 4, 5)
    am = ember.empty(2, 3, 4, 5, device="meta").contiguous(memory_format=ember.channels_last)
    bm = ember.empty(2, 3, 4, 5, device="meta")
    assert (a * b).stride() == (am * bm).stride() == (60, 1, 15, 3)
    assert (b * a).stride() == (bm * am).stride() == (60, 20, 5, 1)


def test_ternary_and_pointwise_losses_take_the_first_operands_layout():
    # where / clamp / lerp / addcmul and unreduced losses with a channels-last first operand
    # beside a contiguous one: TensorIterator's layout, as the binary ops
    for lib in (ember, torch):
        x = lib.arange(72.).reshape(2, 4, 3, 3).contiguous(memory_format=lib.channels_last)
        c = lib.ones(2, 4, 3, 3)
        F = lib.nn.functional
        got = [lib.where(x > 5, x, c), lib.clamp(x, c, c + 1), lib.lerp(x, c, 0.5),
               lib.addcmul(x, c, c), F.mse_loss(x, c, reduction="none"),
               lib.where(c > 5, x, c), F.mse_loss(c, x, reduction="none")]
        if lib is ember:
            mine = got
    for e, t in zip(mine, got):
        assert e.stride() == t.stride()
        assert_same(e, t)
