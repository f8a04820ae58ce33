"""In-place elementwise ops whose operand partly overlaps the tensor they write
(`x[1:] += x[:-1]`, `x -= x[0]`): refused as torch refuses them, while an operand that is the
written memory itself, or apart from it, or a view torch does not check, goes through."""

from __future__ import annotations

import pytest
import torch

import ember

CASES = {
    "add_ shifted": lambda q: q[1:].add_(q[:-1]),
    "iadd shifted": lambda q: q[1:].__iadd__(q[:-1]),
    "sub_ 0-d element": lambda q: q.sub_(q[0]),
    "isub 0-d element": lambda q: q.__isub__(q[0]),
    "sub_ first row": lambda q: q.view(2, 3).sub_(q.view(2, 3)[0]),
    "mul_ itself": lambda q: q.mul_(q),
    "mul_ disjoint": lambda q: q[3:].mul_(q[:3]),
    "pow_ shifted": lambda q: q[1:].pow_(q[:-1]),
    "lerp_ shifted": lambda q: q[1:].lerp_(q[:-1], 0.5),
    "addcmul_ shifted": lambda q: q[:3].addcmul_(q[3:], q[1:4]),
    "addcdiv_ disjoint": lambda q: q[:3].addcdiv_(q[3:], q[3:] + 1),
    "lt_ shifted": lambda q: q[1:].lt_(q[:-1]),
    "transpose add_": lambda q: q[:4].view(2, 2).add_(q[:4].view(2, 2).t()),
    "strided not checked": lambda q: q.view(2, 3)[:, 1:].add_(q.view(2, 3)[:, :-1]),
    "reinterpreted view": lambda q: q[1:].add_(q[:-1].view(ember.int32 if isinstance(
        q, ember.Tensor) else torch.int32).view(q.dtype)),
    "neg_ of a view": lambda q: q[1:].neg_(),
    "clamp_ by elements": lambda q: q[1:].clamp_(q[0], q[5]),
    # out= that partly overlaps an operand, refused alike (same memory or apart goes)
    "add out shifted": lambda q: _lib(q).add(q[:-1], 1, out=q[1:]),
    "exp out shifted": lambda q: _lib(q).exp(q[:-1], out=q[1:]),
    "sigmoid out interleaved": lambda q: _lib(q).sigmoid(q[::2], out=q[1::2]),
    "sqrt out transposed": lambda q: _lib(q).sqrt(q.view(2, 3).t(), out=q.view(3, 2)),
    "neg out itself": lambda q: _lib(q).neg(q, out=q),
    "mul out disjoint": lambda q: _lib(q).mul(q[:3], q[3:], out=q[:3]),
    "maximum out shifted": lambda q: _lib(q).maximum(q[:-1], q[1:], out=q[1:]),
    "where out shifted": lambda q: _lib(q).where(q[:-1] > 2, q[:-1], q[1:], out=q[1:]),
    "clamp out shifted": lambda q: _lib(q).clamp(q[:-1], 0, 3, out=q[1:]),
    "lerp out shifted": lambda q: _lib(q).lerp(q[:-1], q[1:], 0.5, out=q[1:]),
    "addcmul out shifted": lambda q: _lib(q).addcmul(q[:-1], q[:-1], q[1:], out=q[:-1]),
    "cat out over inputs": lambda q: _lib(q).cat([q[:2], q[2:4]], out=q[0:4]),
    "cat out apart": lambda q: _lib(q).cat([q[:2]], out=q[4:6]),
    "stack out over inputs": lambda q: _lib(q).stack([q[:2], q[2:4]], out=q[1:5].view(2, 2)),
}


def _lib(q):
    return ember if isinstance(q, ember.Tensor) else torch


@pytest.mark.parametrize("name", list(CASES))
def test_partial_overlap_matches_torch(name):
    def run(lib):
        q = lib.arange(6.)
        try:
            CASES[name](q)
        except RuntimeError as e:
            return "RuntimeError", str(e), q.tolist()
        return q.tolist()
    want = run(torch)
    if name == "strided not checked":  # torch visits in its own order there: ember reads
        assert run(ember) == [0.0, 1.0, 3.0, 3.0, 7.0, 9.0]  # the values from before
        return
    assert run(ember) == want
