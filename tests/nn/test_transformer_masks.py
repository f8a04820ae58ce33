"""The encoder stack and layer turn their two masks into float masks as torch does: a
boolean key padding mask beside a float attention mask (the usual pairing with
`generate_square_subsequent_mask`) warns once, in torch's words, and gives torch's values."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, copy_module_state, rand_array

# (softmax and the layers' products are float32 reductions: their last bits follow the
# kernels' order)
TOL = {"rtol": 1e-4, "atol": 1e-5}
PAD = [[False, False, False, True], [True, False, False, False]]


def _masks(L, pad_float: bool, attn_float: bool):
    pad = L.tensor(PAD)
    if pad_float:
        pad = L.zeros(2, 4).masked_fill(pad, float("-inf"))
    attn = L.nn.Transformer.generate_square_subsequent_mask(4)
    return pad, attn if attn_float else attn.isinf()


def _run(L, module, src, **masks):
    """module(src, **masks) and the messages of the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(L.tensor(src), **masks)
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("pad_float,attn_float", [(False, True), (True, False), (False, False),
                                                  (True, True)])
def test_encoder_stack_warns_once_for_mismatched_masks(pad_float, attn_float):
    t_enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
        enable_nested_tensor=False)
    e_enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                             batch_first=True), 2,
                                  enable_nested_tensor=False)
    copy_module_state(e_enc, t_enc)
    src = rand_array((2, 4, 8))
    results = []
    for L, enc in ((ember, e_enc), (torch, t_enc)):
        pad, attn = _masks(L, pad_float, attn_float)
        results.append(_run(L, enc, src, mask=attn, src_key_padding_mask=pad))
    (e_out, e_warn), (t_out, t_warn) = results
    assert e_warn == t_warn
    assert len(t_warn) == (pad_float != attn_float)
    assert_same(e_out, t_out, **TOL)


def test_encoder_layer_names_its_own_masks():
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    e_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    copy_module_state(e_layer, t_layer)
    src = rand_array((2, 4, 8))
    results = []
    for L, layer in ((ember, e_layer), (torch, t_layer)):
        pad, attn = _masks(L, False, True)
        results.append(_run(L, layer, src, src_mask=attn, src_key_padding_mask=pad))
    (e_out, e_warn), (t_out, t_warn) = results
    assert e_warn == t_warn == ["Support for mismatched src_key_padding_mask and src_mask is "
                                "deprecated. Use same type for both instead."]
    assert_same(e_out, t_out, **TOL)


def test_encoder_fast_path_still_sees_a_canonical_float_padding_mask():
    # in inference the stack drops padded tokens (torch's nested tensor path) and returns
    # zeros there; a boolean mask turned float first must still select the same tokens
    t_enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2).eval()
    e_enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                  2).eval()
    copy_module_state(e_enc, t_enc)
    src = rand_array((2, 4, 8))
    keep = np.array([[False, False, True, True], [False] * 4])
    outs = []
    for L, enc in ((ember, e_enc), (torch, t_enc)):
        with L.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the nested tensors' prototype warning)
            outs.append(enc(L.tensor(src), src_key_padding_mask=L.tensor(keep)))
    assert_same(outs[0], outs[1], **TOL)
    assert not outs[0][0, 2:].numpy().any()
