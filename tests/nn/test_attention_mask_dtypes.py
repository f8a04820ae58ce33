"""Float masks of another dtype than the input, against torch: the explicit-weights path's
check, the encoder layer's inference kernel that accepts them, and the stacks' causal hint
(a mask equal to the causal one is dropped for causal masking, dtype and all)."""

import pytest
import torch

import ember

from helpers import copy_module_state, rand_array, same_message, same_result

# float32 layers (matmuls, LayerNorm, softmax) add in another order than torch's kernels
TOL = {"rtol": 1e-4, "atol": 1e-5}
X = rand_array((2, 4, 8))


def _causal(L, dtype):
    return L.nn.Transformer.generate_square_subsequent_mask(4).to(dtype)


def _mods(make):
    """The same seeded module in both libraries, torch's state copied into ember's."""
    mods = {}
    for L in (ember, torch):
        L.manual_seed(0)
        mods[L] = make(L)
    copy_module_state(mods[ember], mods[torch])
    return mods


@pytest.mark.parametrize("dtype", ["float64", "float16"])
@pytest.mark.parametrize("which", ["attn_mask", "key_padding_mask", "both"])
@pytest.mark.parametrize("batched", [True, False])
def test_attention_weights_path_rejects_another_float_dtype_as_torch(dtype, which, batched):
    mods = _mods(lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True))

    def call(L):
        d = getattr(L, dtype)
        x = L.tensor(X) if batched else L.tensor(X[0])
        kw = {}
        if which in ("attn_mask", "both"):
            kw["attn_mask"] = _causal(L, d)
        if which in ("key_padding_mask", "both"):
            kw["key_padding_mask"] = L.zeros(x.shape[:-2] + (4,), dtype=d)
        return mods[L](x, x, x, **kw)

    msg = same_message(call)
    assert msg.startswith("Input dtypes must be the same, got: input ")


@pytest.mark.parametrize("dtype", ["float64", "float16"])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_layer_inference_reads_other_float_masks_as_torch(dtype, grad):
    mods = _mods(lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
                 .eval())
    keep = [[False] * 3 + [True], [False] * 4]

    def call(L):
        d = getattr(L, dtype)
        pad = L.zeros(2, 4, dtype=d).masked_fill(L.tensor(keep), float("-inf"))
        with L.set_grad_enabled(grad):
            return mods[L](L.tensor(X), src_mask=_causal(L, d),
                           src_key_padding_mask=pad).detach()

    if grad:  # parameters need grad: no fused kernel, so attention checks the mask's dtype
        same_message(call)
    else:
        same_result(call, **TOL)


@pytest.mark.parametrize("stack", ["encoder", "decoder"])
@pytest.mark.parametrize("hint", [None, False])
@pytest.mark.parametrize("mask", ["causal", "causal_bool", "zeros", "causal_3d"])
def test_stacks_detect_a_causal_mask_as_torch(stack, hint, mask):
    def make(L):
        if stack == "encoder":
            layer = L.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
            return L.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        return L.nn.TransformerDecoder(
            L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), 2)

    mods = _mods(make)

    def call(L):
        m = {"causal": _causal(L, L.float64), "zeros": L.zeros(4, 4, dtype=L.float64),
             "causal_bool": _causal(L, L.float32).isinf(),
             "causal_3d": _causal(L, L.float64).expand(4, 4, 4)}[mask]
        x = L.tensor(X)
        if stack == "encoder":
            return mods[L](x, mask=m, is_causal=hint)
        return mods[L](x, x, tgt_mask=m, tgt_is_causal=hint)

    if mask == "causal_bool" or (mask == "causal" and hint is None):
        same_result(call, **TOL)  # a float64 causal mask is replaced by causal masking
    else:
        assert "attn_mask dtype" in same_message(call)


def test_decoder_causal_hint_on_an_integer_mask_fails_as_torch():
    # the detection builds a causal mask of the given dtype: -inf does not fit an int64
    mods = _mods(lambda L: L.nn.TransformerDecoder(
        L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), 1))
    same_message(lambda L: mods[L](L.tensor(X), L.tensor(X),
                                   tgt_mask=_causal(L, L.float32).isinf().long()))
