"""tensor_predicates.py against torch: is_same_size, the conj / neg bits, is_nonzero,
is_signed (and positive)."""

import torch

import ember


def test_predicates():
    for L in (torch, ember):
        x = L.ones(2, 3)
        assert L.is_same_size(x, L.zeros(2, 3)) and not x.is_same_size(L.zeros(3, 2))
        assert not L.is_conj(x) and not x.is_conj() and not L.is_neg(x) and not x.is_neg()
        assert L.resolve_conj(x) is x and L.resolve_neg(x) is x
        assert L.positive(x) is x
        assert L.ones(1).is_nonzero() and not L.zeros(1, 1).is_nonzero()
    for e, t in [(ember.bool, torch.bool), (ember.uint8, torch.uint8), (ember.int8, torch.int8),
                 (ember.float16, torch.float16), (ember.complex64, torch.complex64)]:
        assert ember.is_signed(ember.ones(1, dtype=e)) == torch.is_signed(torch.ones(1, dtype=t))
