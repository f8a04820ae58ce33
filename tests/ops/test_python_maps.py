"""Tensor.apply_ / map_ / map2_ against torch 2.13: the values each callable sees and
writes back (per dtype), broadcasting, views, and every refusal in torch's words."""

import pytest
import torch

import ember

from helpers import same_error, same_message


@pytest.mark.parametrize("values,dtype,fn", [
    ([0.5, -1.25, 3.0], "float32", lambda a: a * 2.5 + 1),
    ([0.5, -1.25, 3.0], "float32", lambda a: 1e40 * a),          # past float32: inf
    ([1.0, 2.0], "float16", lambda a: a + 0.1),                  # rounds on store
    ([1.0, 2.0], "bfloat16", lambda a: a + 0.1),
    ([1, -2, 7], "int64", lambda a: a * 2.7),                    # a float truncates
    ([1, 2], "uint8", lambda a: -a),                             # wraps as a C cast
    ([True, False], "bool", lambda a: not a),
    ([1 + 2j], "complex64", lambda a: a * 1j),
    ([1.0, 2.0], "float32", lambda a: type(a).__name__ == "float" and a),
    (3.0, "float32", lambda a: a + 1),
])
def test_apply_writes_what_torch_writes(values, dtype, fn):
    t = torch.tensor(values, dtype=getattr(torch, dtype)).apply_(fn)
    e = ember.tensor(values, dtype=getattr(ember, dtype)).apply_(fn)
    assert e.tolist() == t.tolist() and str(e.dtype) == str(t.dtype).replace("torch", "ember")


def test_map_and_map2_broadcast_and_write_through_views():
    base_t, base_e = torch.arange(6.0).reshape(2, 3), ember.arange(6.0).reshape(2, 3)
    for base, lib in ((base_t, torch), (base_e, ember)):
        col = base[:, 1]  # a strided view: writes reach the base
        col.map_(lib.tensor(10.0), lambda a, b: a + b)
        base.map2_(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([[1.0], [-1.0]]),
                   lambda a, b, c: a * b + c)
    assert base_e.tolist() == base_t.tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, requires_grad=True).apply_(lambda a: a),
    lambda L: L.ones(2, requires_grad=True).map_(L.ones(2), lambda a, b: a),
    lambda L: L.ones(2, requires_grad=True).map2_(L.ones(2), L.ones(2), lambda a, b, c: a),
    lambda L: L.ones(2).map_(L.ones(2, dtype=L.int64), lambda a, b: a),
    lambda L: L.ones(2).map2_(L.ones(2), L.ones(2, dtype=L.float64), lambda a, b, c: a),
    lambda L: L.ones(2, 2).map_(L.ones(3), lambda a, b: a),
])
def test_refusals_raise_torchs_types(call):
    same_error(call)


@pytest.mark.parametrize("call,kind", [
    (lambda L: L.ones(2).apply_(lambda a: "a"), TypeError),
    (lambda L: L.ones(2).apply_(lambda a: 1j), TypeError),
    (lambda L: L.ones(2, dtype=L.int64).apply_(lambda a: None), TypeError),
    (lambda L: L.ones(2, dtype=L.int64).apply_(lambda a: 2 ** 70), ValueError),
    (lambda L: L.ones(2).map_(5, lambda a, b: a), TypeError),
    (lambda L: L.ones(2, requires_grad=True).apply_(lambda a: a), RuntimeError),
    (lambda L: L.ones(2).map_(L.ones(2, dtype=L.int64), lambda a, b: a), TypeError),
    (lambda L: L.ones(2).map2_(L.ones(2), L.ones(2, dtype=L.float64), lambda a, b, c: a),
     TypeError),
])
def test_messages_as_torch(call, kind):
    same_message(call, kind)
