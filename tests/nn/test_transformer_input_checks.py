"""Inputs of the wrong width or batch are refused up front, in torch's words: nn.Transformer
checks batch sizes and feature widths before running its encoder, and multi-head attention
with separate key/value widths (kdim, vdim) checks each projection against its input."""

import pytest
import torch

import ember


def same_message(call, kind: type = RuntimeError) -> str:
    """`call(L)` raises `kind` in ember and torch with the same words (sizes print as
    `torch.Size` under `ember.run`, so ember's `ember.Size` is read as torch's); those words."""
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(kind) as info:
            call(lib)
        msgs.append(str(info.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1], msgs
    return msgs[1]


def _transformer(L, batch_first: bool):
    L.manual_seed(0)
    return L.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=batch_first)


@pytest.mark.parametrize("batch_first,src,tgt,words", [
    (True, (2, 5, 8), (3, 4, 8), "batch number"),
    (False, (5, 2, 8), (4, 3, 8), "batch number"),
    (True, (2, 5, 6), (2, 4, 6), "feature number"),
    (False, (5, 2, 8), (4, 2, 6), "feature number"),
    (True, (5, 6), (4, 6), "feature number"),  # unbatched: only the widths are checked
])
def test_transformer_checks_batch_and_width_before_running(batch_first, src, tgt, words):
    msg = same_message(lambda L: _transformer(L, batch_first)(L.zeros(src), L.zeros(tgt)))
    assert words in msg


def test_transformer_unbatched_inputs_of_other_lengths_still_run():
    # NOTE: torch compares batch sizes only for 3-D inputs; dim 0 of 2-D ones is the length
    for L in (torch, ember):
        assert tuple(_transformer(L, True)(L.zeros(5, 8), L.zeros(3, 8)).shape) == (3, 8)


def _mha_call(L, key_width: int, value_width: int, bias: bool = True):
    L.manual_seed(0)
    mha = L.nn.MultiheadAttention(8, 2, bias=bias, kdim=3, vdim=5, batch_first=True)
    return mha(L.zeros(2, 4, 8), L.zeros(2, 6, key_width), L.zeros(2, 6, value_width))


@pytest.mark.parametrize("key_width,value_width,bias,words", [
    (8, 5, True, "expecting key weights shape of (8, 8), but got torch.Size([8, 3])"),
    (3, 3, True, "expecting value weights shape of (8, 3), but got torch.Size([8, 5])"),
    (8, 8, False, "expecting key weights shape"),
])
def test_attention_with_kdim_vdim_checks_each_projection(key_width, value_width, bias, words):
    msg = same_message(lambda L: _mha_call(L, key_width, value_width, bias), AssertionError)
    assert msg.startswith(words)


def test_attention_separate_projection_biases_are_checked():
    def call(L):
        L.manual_seed(0)
        f = L.nn.functional
        w = [L.zeros(8, n) for n in (8, 3, 5)]
        return f.multi_head_attention_forward(
            L.zeros(4, 2, 8), L.zeros(6, 2, 3), L.zeros(6, 2, 5), 8, 2, None, L.zeros(21),
            None, None, False, 0.0, L.zeros(8, 8), None, use_separate_proj_weight=True,
            q_proj_weight=w[0], k_proj_weight=w[1], v_proj_weight=w[2])
    assert same_message(call, AssertionError) == \
        "expecting query bias shape of (8,), but got torch.Size([7])"
