"""The mask helpers of PyTorch's attention and transformer code that user layers copied from
torch.nn call: MultiheadAttention.merge_masks, F._canonical_mask / F._none_or_dtype and the
torch.nn.modules.transformer helpers, against torch 2.13."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.modules.transformer as tt

import ember
import ember.nn.modules.transformer as et

KPM = torch.tensor([[False, False, True], [False, True, True]])


def E(t):
    return ember.tensor(t.numpy())


def _same(e, t):
    if t is None:
        assert e is None
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.numpy(), t.numpy())  # (copies and -inf fills: exact)


@pytest.mark.parametrize("attn", [None, "2d", "3d"])
@pytest.mark.parametrize("kpm", [None, "bool", "float"])
def test_merge_masks(attn, kpm):
    n, length, heads = 2, 3, 2
    am = {None: None, "2d": torch.triu(torch.ones(3, 3, dtype=torch.bool), 1),
          "3d": torch.rand(n * heads, length, length, generator=torch.Generator().manual_seed(0))
          > 0.5}[attn]
    pm = {None: None, "bool": KPM, "float": KPM.float() * -5.0}[kpm]
    if am is not None and pm is not None and pm.dtype.is_floating_point:
        am = am.float()
    q = torch.zeros(n, length, 4)
    tm = torch.nn.MultiheadAttention(4, heads, batch_first=True)
    em = ember.nn.MultiheadAttention(4, heads, batch_first=True)
    want = tm.merge_masks(am, pm, q)
    got = em.merge_masks(None if am is None else E(am), None if pm is None else E(pm), E(q))
    assert got[1] == want[1]
    _same(got[0], want[0])


@pytest.mark.parametrize("mask", [None, KPM, KPM.double() * -2])
@pytest.mark.parametrize("other", [None, torch.bool, torch.float32])
def test_canonical_mask(mask, other):
    def call(F, m, o, to_lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = F._canonical_mask(mask=m, mask_name="key_padding_mask",
                                    other_type=None if o is None else to_lib(o),
                                    other_name="attn_mask", target_type=to_lib(torch.float32))
        return out, [str(w.message) for w in caught]

    want, want_w = call(torch.nn.functional, mask, other, lambda d: d)
    got, got_w = call(ember.nn.functional, None if mask is None else E(mask), other,
                      lambda d: getattr(ember, str(d).split(".")[-1]))
    _same(got, want)
    assert got_w == want_w


def test_canonical_mask_refuses_integers_and_none_or_dtype():
    for lib, F in ((torch, torch.nn.functional), (ember, ember.nn.functional)):
        with pytest.raises(AssertionError, match="only bool and floating types of kpm are"):
            F._canonical_mask(lib.ones(2, dtype=lib.int64), "kpm", None, "", lib.float32)
        assert F._none_or_dtype(None) is None
        assert F._none_or_dtype(lib.ones(1, dtype=lib.float64)) is lib.float64
        with pytest.raises(RuntimeError, match="must be None or torch.Tensor"):
            F._none_or_dtype(3)


def test_transformer_module_helpers():
    for mod, lib in ((tt, torch), (et, ember)):
        causal = mod._generate_square_subsequent_mask(3)
        assert causal.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0] * 3]
        assert mod._detect_is_causal_mask(causal) is True
        assert mod._detect_is_causal_mask(causal, size=4) is False
        assert mod._detect_is_causal_mask(lib.zeros(3, 3)) is False
        assert mod._detect_is_causal_mask(lib.zeros(3, 3), is_causal=True) is True
        assert mod._detect_is_causal_mask(None) is False
        assert mod._get_seq_len(lib.zeros(5, 2, 4), batch_first=False) == 5
        assert mod._get_seq_len(lib.zeros(5, 2, 4), batch_first=True) == 2
        assert mod._get_seq_len(lib.zeros(7, 4), batch_first=True) == 7
        assert mod._get_activation_fn("gelu") is lib.nn.functional.gelu
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            mod._get_activation_fn("tanh")
        clones = mod._get_clones(lib.nn.Linear(2, 2), 3)
        assert type(clones).__name__ == "ModuleList" and len(clones) == 3
        assert clones[0].weight is not clones[1].weight
        assert lib.equal(clones[0].weight, clones[2].weight)
