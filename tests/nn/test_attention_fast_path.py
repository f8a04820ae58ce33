"""Inference calls PyTorch runs through its fused kernels (`_native_multi_head_attention`, the
encoder layer's `_transformer_encoder_layer_fwd`), against torch: those ignore the is_causal
hint and give NaN for a query whose every key is masked, where the unfused path gives zeros."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, copy_module_state, rand_array

# float32 attention (matmuls, softmax, LayerNorm) adds in another order than torch's kernels
TOL = {"rtol": 1e-4, "atol": 1e-5}
X = rand_array((2, 4, 8))
PAD = [[False, False, True, True], [True] * 4]  # batch element 1: every key masked
ROW0 = [[True] * 4, [False, True, True, True], [False] * 4, [False] * 4]  # query 0: none


def _pair(make, train=False):
    mods = {}
    for L in (ember, torch):
        L.manual_seed(0)
        mods[L] = make(L).train(train)
    copy_module_state(mods[ember], mods[torch])
    return mods


def _masks(L, which, kind):
    out = {}
    if which in ("padding", "both"):
        out["key_padding_mask"] = L.tensor(PAD)
    if which in ("attn", "both"):
        out["attn_mask"] = L.tensor(ROW0)
    if kind == "float":
        out = {k: L.zeros(v.shape).masked_fill(v, float("-inf")) for k, v in out.items()}
    return out


def _run(mods, call, grad):
    outs = []
    for L in (ember, torch):
        with L.set_grad_enabled(grad):
            outs.append(call(L, mods[L]).detach())
    nan_e, nan_t = np.isnan(outs[0].numpy()), np.isnan(outs[1].numpy())
    assert (nan_e == nan_t).all()
    assert_same(outs[0].nan_to_num(), outs[1].nan_to_num(), **TOL)
    return nan_t.any()


@pytest.mark.parametrize("which", ["padding", "attn", "both"])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("setting", ["fused", "grad", "train", "cross", "not_batch_first"])
def test_attention_fully_masked_queries_as_torch(which, kind, setting):
    mods = _pair(lambda L: L.nn.MultiheadAttention(8, 2, batch_first=setting != "not_batch_first"),
                 train=setting == "train")

    def call(L, m):
        x = L.tensor(X) if m.batch_first else L.tensor(X).transpose(0, 1)
        k = x.clone() if setting == "cross" else x
        return m(x, k, k, need_weights=False, **_masks(L, which, kind))[0]

    has_nan = _run(mods, call, grad=setting == "grad")
    # only bool masks keep torch on its fused kernel, the one that gives NaN
    assert has_nan == (setting == "fused" and kind == "bool")


@pytest.mark.parametrize("which", ["padding", "attn", "both"])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("setting", ["fused", "grad", "train", "odd_heads"])
def test_encoder_layer_fully_masked_queries_as_torch(which, kind, setting):
    heads = 1 if setting == "odd_heads" else 2
    mods = _pair(lambda L: L.nn.TransformerEncoderLayer(8, heads, 16, 0.0, batch_first=True),
                 train=setting == "train")

    def call(L, m):
        masks = _masks(L, which, kind)
        return m(L.tensor(X), src_mask=masks.get("attn_mask"),
                 src_key_padding_mask=masks.get("key_padding_mask"))

    assert _run(mods, call, grad=setting == "grad") == (setting == "fused")


@pytest.mark.parametrize("where", ["attention", "attention_weights", "layer", "encoder"])
@pytest.mark.parametrize("grad", [False, True])
def test_fused_paths_ignore_the_causal_hint_as_torch(where, grad):
    def make(L):
        if where.startswith("attention"):
            return L.nn.MultiheadAttention(8, 2, batch_first=True)
        layer = L.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
        return layer if where == "layer" else L.nn.TransformerEncoder(layer, 2)

    mods = _pair(make)

    def call(L, m):
        x = L.tensor(X)
        if where.startswith("attention"):
            return m(x, x, x, is_causal=True, need_weights=where == "attention_weights")[0]
        return m(x, is_causal=True)

    if grad:  # unfused: the hint needs its mask
        msgs = []
        for L in (ember, torch):
            with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal "
                                                   "hint") as info:
                call(L, mods[L])
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    else:
        _run(mods, call, grad=False)


@pytest.mark.parametrize("where", ["attention", "layer", "encoder"])
def test_disabling_the_fast_path_gives_torchs_unfused_results(where):
    def make(L):
        if where == "attention":
            return L.nn.MultiheadAttention(8, 2, batch_first=True)
        layer = L.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True,
                                             activation=L.nn.GELU("tanh"))
        return layer if where == "layer" else L.nn.TransformerEncoder(layer, 1)

    mods = _pair(make)

    def call(L, m):
        x, pad = L.tensor(X), L.tensor(PAD)
        if where == "attention":
            return m(x, x, x, key_padding_mask=pad, need_weights=False)[0]
        return m(x, src_key_padding_mask=pad)

    for L in (ember, torch):
        L.backends.mha.set_fastpath_enabled(False)
    try:
        assert ember.backends.mha.get_fastpath_enabled() is False
        assert not _run(mods, call, grad=False)  # unfused: zeros, no NaN; tanh gelu kept
    finally:
        for L in (ember, torch):
            L.backends.mha.set_fastpath_enabled(True)
