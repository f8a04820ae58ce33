"""`hash_tensor` against torch 2.13: the hash is integer arithmetic on bit patterns (no
float rounding), so every result is compared bit for bit; refusals by type and message."""

import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")


def _pair(make):
    return make(torch), make(ember)


INPUTS = {
    "float32 matrix": lambda L: L.arange(12.0).reshape(3, 4) / 7 - 0.5,
    "float16 specials": lambda L: L.tensor([-0.0, NAN, 1.5, INF, -INF, 6e-8], dtype=L.float16),
    "bfloat16": lambda L: L.tensor([[1.5, 2.5], [-3.0, 1e-30]], dtype=L.bfloat16),
    "float64": lambda L: L.tensor([1.0, 2.0, -0.0, 1e308], dtype=L.float64),
    "bool": lambda L: L.tensor([[True, False, True], [True, True, True]]),
    "uint8": lambda L: L.tensor([1, 255, 7], dtype=L.uint8),
    "int8 negative": lambda L: L.tensor([-1, 2, -128], dtype=L.int8),
    "int16": lambda L: L.tensor([[1, -2], [300, -301]], dtype=L.int16),
    "int32": lambda L: L.tensor([-1, -2, 5], dtype=L.int32),
    "int64": lambda L: L.tensor([[2**62, -(2**63)], [3, 4]]),
    "0-d": lambda L: L.tensor(3.0),
    "transposed": lambda L: (L.arange(6.0).reshape(2, 3) + 0.25).t(),
    "stepped": lambda L: L.arange(20, dtype=L.int64).reshape(4, 5)[::2, 1::2],
}

CALLS = {
    "all": lambda L, x: L.hash_tensor(x),
    "dim 0": lambda L, x: L.hash_tensor(x, 0),
    "dim -1 keepdim": lambda L, x: L.hash_tensor(x, -1, keepdim=True),
    "dims tuple": lambda L, x: L.hash_tensor(x, dim=(0, -1)),
    "dims empty": lambda L, x: L.hash_tensor(x, dim=[]),
    "method": lambda L, x: x.hash_tensor(0, keepdim=True),
}


def _same(theirs, ours) -> None:
    assert ours.dtype is ember.uint64 and theirs.dtype is torch.uint64
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("name", list(INPUTS))
def test_hash_equals_torch_bit_for_bit(name, call):
    t, e = _pair(INPUTS[name])
    try:
        theirs = CALLS[call](torch, t)
    except RuntimeError as error:  # (dims (0, -1) of a 1-d tensor repeat a dim)
        with pytest.raises(RuntimeError, match=str(error)):
            CALLS[call](ember, e)
        return
    _same(theirs, CALLS[call](ember, e))


def test_hash_worked_by_hand():
    # 1.0 and 2.0 as float64 bits: 0x3FF0... ^ 0x4000... = 0x7FF0...
    assert ember.hash_tensor(ember.tensor([1.0, 2.0])).item() == 0x7FF0000000000000
    # -1 as int64 is all ones: XOR with 2 flips bit 1
    assert ember.hash_tensor(ember.tensor([-1, 2])).item() == 0xFFFFFFFFFFFFFFFD
    # an even number of equal elements cancels
    assert ember.hash_tensor(ember.ones(2, 3)).item() == 0


def test_empty_rows_and_out():
    t, e = _pair(lambda L: L.ones(0, 3))
    _same(torch.hash_tensor(t, 1), ember.hash_tensor(e, 1))
    o_t, o_e = torch.empty(0, dtype=torch.uint64), ember.empty(0, dtype=ember.uint64)
    torch.hash_tensor(torch.ones(2, 3), 1, out=o_t)
    ember.hash_tensor(ember.ones(2, 3), 1, out=o_e)
    _same(o_t, o_e)


def test_not_differentiable():
    x = ember.randn(2, 3, requires_grad=True)
    h = ember.hash_tensor(x)
    assert not h.requires_grad and h.grad_fn is None


REFUSALS = {
    "empty without dim": lambda L: L.hash_tensor(L.ones(2, 0)),
    "zero-size dim": lambda L: L.hash_tensor(L.ones(2, 0), 1),
    "mode": lambda L: L.hash_tensor(L.ones(2), mode=1),
    "dim range": lambda L: L.hash_tensor(L.ones(2), dim=3),
    "int keepdim": lambda L: L.hash_tensor(L.ones(2), 0, keepdim=1),
    "list input": lambda L: L.hash_tensor([1.0]),
    "uint16": lambda L: L.hash_tensor(L.tensor([1, 2], dtype=L.uint16)),
    "uint64": lambda L: L.hash_tensor(L.tensor([1, 2], dtype=L.uint64)),
    "complex": lambda L: L.hash_tensor(L.tensor([1 + 2j])),
    "out dtype": lambda L: L.hash_tensor(L.ones(2, 3), 1, out=L.empty(0, dtype=L.int64)),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusals_as_torch(name):
    with pytest.raises(Exception) as theirs:  # noqa: PT011 (the type is what is compared)
        REFUSALS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        REFUSALS[name](ember)
    assert str(ours.value) == str(theirs.value)
