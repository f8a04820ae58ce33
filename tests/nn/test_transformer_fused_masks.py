"""Masks on PyTorch's inference fast paths, against torch: the encoder's nested-tensor path
(left-alignment check, its errors, which tokens it keeps) and the fused layer/attention kernels
(masks merged as `merge_masks` does, any nonzero float read as masked, the kernels' shape
errors)."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, copy_module_state, rand_array

# float32 attention, LayerNorm and feed-forward add in another order than torch's kernels
TOL = {"rtol": 1e-4, "atol": 1e-5}
X = rand_array((2, 5, 8))


def _pair(make):
    mods = {}
    for L in (ember, torch):
        L.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mods[L] = make(L).eval()
    copy_module_state(mods[ember], mods[torch])
    return mods


def _outcome(L, mod, call, grad, autocast=False):
    """The call's output as numpy (NaN -> 7), or its exception type and first message line."""
    try:
        with warnings.catch_warnings(), L.set_grad_enabled(grad):
            warnings.simplefilter("ignore")
            if autocast:
                with L.autocast("cpu", dtype=L.bfloat16):
                    out = call(L, mod)
            else:
                out = call(L, mod)
        return out.detach().float().nan_to_num(7.0).numpy()
    except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
        return type(e).__name__, str(e).splitlines()[0]


def _same_outcome(mods, call, grad=False, autocast=False):
    got, want = (_outcome(L, mods[L], call, grad, autocast) for L in (ember, torch))
    if isinstance(want, tuple):
        assert got == want
    else:
        assert isinstance(got, np.ndarray), got
        np.testing.assert_allclose(got, want, **TOL)
    return want


def _mask(L, shape, kind="bool"):
    m = np.zeros(shape, dtype=bool)
    m.reshape(-1)[-1] = True
    if kind == "bool":
        return L.tensor(m)
    return L.tensor(np.where(m, -1.5, 0.0).astype(np.float32))


def _encoder(L, mask_check=True):
    layer = L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return L.nn.TransformerEncoder(layer, 2, mask_check=mask_check)


BAD_PADDING = [(5, 2), (2, 4), (1, 5), (2, 5, 1), (5,)]


@pytest.mark.parametrize("shape", BAD_PADDING)
@pytest.mark.parametrize("setting", ["grad", "no_grad", "attn_mask", "autocast"])
def test_encoder_misshapen_padding_mask_raises_as_torch(shape, setting):
    # the left-alignment check runs (and raises) before grad mode, the attention mask and
    # autocast are looked at
    mods = _pair(_encoder)
    attn = setting == "attn_mask"

    def call(L, m):
        mask = L.zeros(5, 5, dtype=L.bool) if attn else None
        return m(L.tensor(X), mask=mask, src_key_padding_mask=_mask(L, shape))

    want = _same_outcome(mods, call, grad=setting != "no_grad", autocast=setting == "autocast")
    assert want[0] == "RuntimeError"


@pytest.mark.parametrize("shape", BAD_PADDING + [(2, 5)])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_without_mask_check_as_torch(shape, grad):
    _same_outcome(_pair(lambda L: _encoder(L, mask_check=False)),
                  lambda L, m: m(L.tensor(X), src_key_padding_mask=_mask(L, shape)), grad)


@pytest.mark.parametrize("mask_check", [True, False])
def test_encoder_nested_path_keeps_the_first_tokens_as_torch(mask_check):
    # a padding mask with a gap (not left-aligned) and finite float values: without the check
    # torch keeps each row's first (number of unpadded) tokens and zeroes the rest
    pad = np.array([[0, -1.0, 0, 0, 0], [0, 0, 0, -2.0, -3.0]], dtype=np.float32)
    mods = _pair(lambda L: _encoder(L, mask_check))
    out = _same_outcome(mods, lambda L, m: m(L.tensor(X), src_key_padding_mask=L.tensor(pad)))
    assert (out[1, 3:] == 0).all() != mask_check  # (the check sends it down the slow path)


FUSED_PADDING = [(2, 5), (5, 2), (1, 5), (4, 5), (2, 5, 1), (5,), (2, 1, 5), (2, 1, 1, 5),
                 (2, 2, 5, 5)]
ATTN = [None, (5, 5), (4, 5, 5), (5, 4), (2, 5, 5)]


def _layer(L):
    return L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


def _mha(L):
    return L.nn.MultiheadAttention(8, 2, batch_first=True)


@pytest.mark.parametrize("padding", FUSED_PADDING + [None])
@pytest.mark.parametrize("attn", ATTN)
@pytest.mark.parametrize("module", ["layer", "mha"])
def test_fused_kernels_merge_and_check_masks_as_torch(padding, attn, module):
    # a misshapen mask the unfused path rejects may be reinterpreted by merge_masks' views
    # (torch computes with it) or fail with the fused kernel's own message
    mods = _pair(_layer if module == "layer" else _mha)

    def call(L, m):
        kpm = None if padding is None else _mask(L, padding)
        # (every 7th entry masked: no query loses all its keys)
        am = None if attn is None else L.tensor(np.arange(np.prod(attn)).reshape(attn) % 7 == 3)
        x = L.tensor(X)
        if module == "layer":
            return m(x, src_mask=am, src_key_padding_mask=kpm)
        return m(x, x, x, attn_mask=am, key_padding_mask=kpm)[0]

    _same_outcome(mods, call)


@pytest.mark.parametrize("which", ["padding", "attn", "both"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_layer_reads_nonzero_float_masks_as_masked(which, dtype):
    # torch's fused layer kernel turns a float mask into a boolean one (nonzero = masked), so
    # -1.5 masks a key fully there, where the unfused path only adds -1.5 to its score
    pad = np.array([[0, 0, 0, -1.5, -2.0], [0, -0.5, 0, 0, 0]], dtype=dtype)
    attn = np.zeros((5, 5), dtype=dtype)
    attn[0, 1] = -1.0
    mods = _pair(_layer)

    def call(L, m):
        kw = {}
        if which in ("padding", "both"):
            kw["src_key_padding_mask"] = L.tensor(pad)
        if which in ("attn", "both"):
            kw["src_mask"] = L.tensor(attn)
        return m(L.tensor(X), **kw)

    fused = _same_outcome(mods, call)
    for L in (ember, torch):
        mods[L].train()
    unfused = _same_outcome(mods, call, grad=True)
    if dtype == "float32":
        assert not np.allclose(fused, unfused, atol=1e-3)
    else:  # (the unfused path wants a float mask of the query's dtype)
        assert unfused[0] == "RuntimeError"


def test_fused_attention_int_mask_still_rejected():
    mods = _pair(_mha)
    got = _same_outcome(mods, lambda L, m: m(L.tensor(X), L.tensor(X), L.tensor(X),
                                             key_padding_mask=L.zeros(2, 5, dtype=L.long))[0])
    assert got == ("AssertionError", "only bool and floating types of key_padding_mask are "
                                     "supported")


def test_encoder_fast_path_output_zeroes_padding_as_torch():
    pad = np.array([[False] * 5, [False] * 3 + [True] * 2])
    mods = _pair(_encoder)
    outs = []
    for L in (ember, torch):
        with L.no_grad():
            outs.append(mods[L](L.tensor(X), src_key_padding_mask=L.tensor(pad)))
    assert_same(outs[0], outs[1], **TOL)
    assert (outs[0].numpy()[1, 3:] == 0).all()


def test_encoder_nested_path_with_every_row_padded_raises_as_torch():
    mods = _pair(_encoder)
    got = _same_outcome(mods, lambda L, m: m(L.tensor(X),
                                             src_key_padding_mask=L.ones(2, 5, dtype=L.bool)))
    assert got[0] == "RuntimeError"
    pad = np.zeros((2, 5), dtype=bool)
    pad[1] = True  # one row fully padded is fine: its output is zeros
    out = _same_outcome(mods, lambda L, m: m(L.tensor(X), src_key_padding_mask=L.tensor(pad)))
    assert (out[1] == 0).all()


# bfloat16/float16 results: each op rounds to 8 (11) significant bits, in another order than
# torch's fused kernels, so values agree to a few units of the low-precision ulp
LOW_TOL = {"bfloat16": 5e-2, "float16": 5e-3}


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("x_dtype", ["float32", "low", "float64"])
@pytest.mark.parametrize("call", ["layer", "layer_pad", "encoder", "encoder_pad", "mha",
                                  "mha_pad", "mha_weights"])
def test_fused_paths_under_cpu_autocast_as_torch(low, x_dtype, call):
    # torch's fast-path checks ask is_autocast_enabled(), which names CUDA: under CPU autocast
    # the fused kernels run, in autocast's dtype, and the encoder's nested path fails
    module = {"layer": _layer, "encoder": _encoder, "mha": _mha}[call.split("_")[0]]
    mods = _pair(module)
    pad = np.zeros((2, 5), dtype=bool)
    pad[1, 3:] = True

    def run(L, m):
        dtype = getattr(L, low if x_dtype == "low" else x_dtype)
        x = L.tensor(X).to(dtype)
        kpm = L.tensor(pad) if call.endswith("pad") else None
        if call.startswith("mha"):
            out = m(x, x, x, key_padding_mask=kpm)
            return out[1] if call == "mha_weights" else out[0]
        return m(x, src_key_padding_mask=kpm)

    outs = []
    for L in (ember, torch):
        try:
            with L.no_grad(), L.autocast("cpu", dtype=getattr(L, low)), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = run(L, mods[L])
            outs.append((str(out.dtype).split(".")[-1], out.float().numpy()))
        except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
            outs.append((type(e).__name__, str(e).splitlines()[0]))
    (got_kind, got), (want_kind, want) = outs
    assert got_kind == want_kind
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=LOW_TOL[low], atol=LOW_TOL[low])
