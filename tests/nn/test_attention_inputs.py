"""scaled_dot_product_attention and multi_head_attention_forward against torch: the causal
flag with a mask, grouped-query heads, 16-bit inputs and autocast, and every input check
(exception type and words)."""

import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import ember
from ember.nn import functional as F

from helpers import assert_same, check_op, rand_array

TOL = {"rtol": 1e-4, "atol": 1e-5}
sdpa_t = torch.nn.functional.scaled_dot_product_attention


def _raises_like_torch(fn_e, fn_t):
    """Both calls raise the same exception type with the same words."""
    with pytest.raises(Exception) as want:
        fn_t()
    with pytest.raises(Exception) as got:
        fn_e()
    assert type(got.value).__name__ == type(want.value).__name__, got.value
    assert str(got.value).replace("ember.", "torch.") == str(want.value)


def _qkv(q_shape, kv_shape, v_last=None):
    v_shape = kv_shape[:-1] + (v_last or kv_shape[-1],)
    return (rand_array(q_shape), rand_array(kv_shape, seed=1), rand_array(v_shape, seed=2))


@pytest.mark.parametrize("mask", ["bool", "float"])
def test_causal_flag_and_mask_both_apply_in_the_fused_kernel(mask):
    # PyTorch 2.13's CPU flash kernel takes is_causal together with an attn_mask
    q, k, v = _qkv((2, 3, 5, 4), (2, 3, 6, 4))
    m = rand_array((5, 6), seed=3) if mask == "float" else rand_array((5, 6), np.bool_, seed=3)
    m[:, 0] = True if mask == "bool" else m[:, 0]
    out_e, _ = check_op(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, ember.tensor(m), is_causal=True),
        lambda a, b, c: sdpa_t(a, b, c, torch.tensor(m), is_causal=True), q, k, v, **TOL)
    assert out_e.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"


@pytest.mark.parametrize("case", ["3-d", "dropout", "3-d mask"])
def test_causal_flag_and_mask_raise_in_the_composite(case):
    lead = (3,) if case == "3-d" else (2, 3)
    q, k, v = _qkv(lead + (5, 4), lead + (6, 4))
    m = rand_array((1, 5, 6) if case == "3-d mask" else (5, 6), seed=3)
    p = 0.5 if case == "dropout" else 0.0
    _raises_like_torch(
        lambda: F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v, m)), p, True),
        lambda: sdpa_t(*map(torch.tensor, (q, k, v, m)), p, True))


@pytest.mark.parametrize("v_heads", [2, 1])  # the fused kernel; the composite
def test_grouped_query_heads(v_heads):
    q, k, v = rand_array((2, 4, 3, 8)), rand_array((2, 2, 5, 8), seed=1), \
        rand_array((2, v_heads, 5, 8), seed=2)
    out_e, out_t = check_op(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True),
        lambda a, b, c: sdpa_t(a, b, c, enable_gqa=True), q, k, v, **TOL)
    assert out_e.grad_fn.name() == out_t.grad_fn.name()


def _low(a, dtype):
    return a.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_composite_computes_in_float32_and_rounds_once(dtype):
    # 3-D inputs take PyTorch's math path, which upcasts 16-bit inputs to float32. NOTE: the
    # float32 products and sums run in another order than torch's BLAS, which can move a
    # result across a 16-bit rounding boundary: allow one element in a hundred to differ
    q, k, v = (_low(a, dtype) for a in _qkv((4, 17, 8), (4, 17, 8)))
    e = F.scaled_dot_product_attention(*(ember.tensor(a) for a in (q, k, v)))
    t = sdpa_t(*(torch.tensor(a.astype(np.float32)).to(getattr(torch, dtype)) for a in (q, k, v)))
    a, b = e.float().numpy(), t.float().numpy()
    assert str(e.dtype).replace("ember.", "torch.") == str(t.dtype)
    assert (a != b).mean() <= 0.01
    np.testing.assert_allclose(a, b, rtol=2 ** -7, atol=1e-3)


def test_bfloat16_fused_kernel_rounds_the_weights_and_the_result_as_torchs():
    # PyTorch's CPU flash kernel: float32 scores and sums, the unnormalised weights rounded to
    # bfloat16 for their product with v, one rounding at the end. Rounding after every op (the
    # composite in bfloat16) differs from it in about a third of the elements. NOTE: its exp
    # is a vectorised approximation, so a few elements still differ by one bfloat16 unit
    rng = np.random.default_rng(0)
    q, k, v = (_low(rng.standard_normal((4, 4, 17, 8)) * 2, "bfloat16") for _ in range(3))
    e = F.scaled_dot_product_attention(*(ember.tensor(a) for a in (q, k, v)), is_causal=True)
    t = sdpa_t(*(torch.tensor(a.astype(np.float32)).bfloat16() for a in (q, k, v)),
               is_causal=True)
    a, b = e.float().numpy(), t.float().numpy()
    assert e.grad_fn is None and (a != b).mean() <= 0.03
    np.testing.assert_allclose(a, b, rtol=2 ** -7, atol=1e-2)


def test_autocast_runs_attention_inside_without_recasting_its_float32_steps():
    # autocast casts the inputs to bfloat16 once; the kernel's float32 steps stay float32
    # (PyTorch's autocast redispatches below itself), so it equals a bfloat16 call
    q = ember.tensor(rand_array((2, 4, 6, 8)))
    with ember.autocast("cpu", dtype=ember.bfloat16):
        got = F.scaled_dot_product_attention(q, q, q)
    low = q.bfloat16()
    assert got.dtype == ember.bfloat16
    assert ember.equal(got, F.scaled_dot_product_attention(low, low, low))


def test_float32_mask_on_bfloat16_inputs():
    q, k, v = (_low(a, "bfloat16") for a in _qkv((2, 2, 3, 8), (2, 2, 5, 8)))
    m = rand_array((3, 5), seed=4)
    e = F.scaled_dot_product_attention(*(ember.tensor(a) for a in (q, k, v)), ember.tensor(m))
    t = sdpa_t(*(torch.tensor(a.astype(np.float32)).bfloat16() for a in (q, k, v)),
               torch.tensor(m))
    assert_same(e, t, rtol=2 ** -7, atol=1e-2)


SDPA_ERRORS = {
    "value dtype": lambda m, q, k, v: (q, k, v.double()),
    "key dtype": lambda m, q, k, v: (q, k.half(), v),
    "rank": lambda m, q, k, v: (q[0, 0, 0], k[0, 0, 0], v[0, 0, 0]),
    "mask int64": lambda m, q, k, v: (q, k, v, m.ones(3, 5, dtype=m.int64)),
    "mask float64": lambda m, q, k, v: (q, k, v, m.ones(3, 5, dtype=m.float64)),
    "mask float16 on bfloat16": lambda m, q, k, v: (
        q.bfloat16(), k.bfloat16(), v.bfloat16(), m.ones(3, 5, dtype=m.float16)),
    "mask last dim": lambda m, q, k, v: (q, k, v, m.ones(3, 4, dtype=m.bool)),
    "mask batch": lambda m, q, k, v: (q, k, v, m.ones(3, 2, 3, 5)),
    "mask 3-d on 3-d": lambda m, q, k, v: (q[0], k[0], v[0], m.ones(4, 3, 5)),
    "mask larger than scores": lambda m, q, k, v: (q[:1], k[:1], v[:1], m.zeros(2, 2, 3, 5)),
    "heads without gqa": lambda m, q, k, v: (m.cat([q, q], 1), k, v),
    # integer, bool and complex inputs leave the fused kernel; the composite refuses them
    "int64 inputs": lambda m, q, k, v: (q.long(), k.long(), v.long()),
    "int32 inputs 3-d": lambda m, q, k, v: (q[0].int(), k[0].int(), v[0].int()),
    "bool inputs": lambda m, q, k, v: (q.bool(), k.bool(), v.bool()),
    "complex inputs": lambda m, q, k, v: (q.cfloat(), k.cfloat(), v.cfloat()),
    "dropout above 1": lambda m, q, k, v: (q, k, v, None, 1.5),
    "dropout above 1 3-d": lambda m, q, k, v: (q[0], k[0], v[0], None, 1.5),
    "negative dropout on the fused kernel": lambda m, q, k, v: (q, k, v, None, -0.1),
    "fewer values than keys 3-d": lambda m, q, k, v: (q[0], k[0], v[0, :, :4]),
}


@pytest.mark.parametrize("name", SDPA_ERRORS)
def test_sdpa_input_checks_are_torchs(name):
    q, k, v = _qkv((2, 2, 3, 8), (2, 2, 5, 8))

    def call(m, fn):
        return lambda: fn(*SDPA_ERRORS[name](m, *(m.tensor(a) for a in (q, k, v))))

    _raises_like_torch(call(ember, F.scaled_dot_product_attention), call(torch, sdpa_t))


def test_negative_dropout_is_no_dropout_in_the_composite():
    q, k, v = _qkv((2, 3, 8), (2, 5, 8))  # (3-D: the composite, which skips dropout_p <= 0)
    e = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), dropout_p=-0.1)
    t = sdpa_t(*map(torch.tensor, (q, k, v)), dropout_p=-0.1)
    assert_same(e, t, **TOL)  # (products and a softmax summed in another order)


EMPTY = {  # (query, key, value shapes, keyword arguments)
    "no keys": ((2, 3, 4, 8), (2, 3, 0, 8), (2, 3, 0, 6), {}),
    "no keys 3-d causal": ((3, 4, 8), (3, 0, 8), (3, 0, 8), {"is_causal": True}),
    "no queries": ((2, 3, 0, 8), (2, 3, 5, 8), (2, 3, 5, 8), {}),
    "empty batch": ((0, 3, 4, 8), (0, 3, 4, 8), (0, 3, 4, 8), {}),
    "empty value dim": ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 0), {}),
    # the other checks are not reached: mask shape, heads, sizes, causal with a mask, dropout
    "no keys, mask of the wrong shape": ((2, 3, 4, 8), (2, 3, 0, 8), (2, 3, 0, 8),
                                         {"attn_mask": "zeros(5, 7)"}),
    "no keys, heads that do not divide": ((2, 3, 4, 8), (2, 2, 0, 8), (2, 2, 0, 8),
                                          {"enable_gqa": True}),
    "no keys, other head dim": ((2, 3, 4, 8), (2, 3, 0, 5), (2, 3, 0, 8), {}),
    "no keys, causal and a mask": ((1, 2, 4, 8), (1, 2, 0, 8), (1, 2, 0, 8),
                                   {"is_causal": True, "attn_mask": "zeros(4, 0)"}),
    "no keys, dropout above 1": ((1, 2, 4, 8), (1, 2, 0, 8), (1, 2, 0, 8), {"dropout_p": 2.0}),
    "no keys, broadcast batch": ((1, 2, 4, 8), (3, 2, 0, 8), (3, 2, 0, 8), {}),
}


@pytest.mark.parametrize("name", EMPTY)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_empty_inputs_give_zeros_before_other_checks(name, dtype):
    *shapes, kw = EMPTY[name]
    res = []
    for m in (torch, ember):
        args = [m.zeros(s, dtype=getattr(m, dtype)) for s in shapes]
        if dtype != "int64":
            args[0].requires_grad_()
        kws = dict(kw)
        if "attn_mask" in kw:  # ("zeros(a, b)": a float32 mask of that shape)
            kws["attn_mask"] = m.zeros(eval(kw["attn_mask"][5:]))
        out = m.nn.functional.scaled_dot_product_attention(*args, **kws)
        if out.grad_fn is not None:
            out.sum().backward()
        res.append((tuple(out.shape), str(out.dtype).split(".")[1], out.tolist(),
                    out.grad_fn and out.grad_fn.name(),
                    args[0].grad is not None and args[0].grad.tolist()))
    assert res[1] == res[0]


def test_grouped_query_heads_that_do_not_divide_raise_as_torch():
    q, k, v = _qkv((2, 3, 3, 8), (2, 2, 5, 8))
    _raises_like_torch(
        lambda: F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), enable_gqa=True),
        lambda: sdpa_t(*map(torch.tensor, (q, k, v)), enable_gqa=True))


# --- multi_head_attention_forward -----------------------------------------------------------

def _mha(m, **kw):
    """(function, its positional weights) of a 2-head attention over embeddings of 8."""
    g = np.random.default_rng(5)
    w_in, b_in = g.standard_normal((24, 8)) * 0.3, g.standard_normal(24) * 0.1
    w_out, b_out = g.standard_normal((8, 8)) * 0.3, g.standard_normal(8) * 0.1
    args = [m.tensor(a, dtype=m.float32) for a in (w_in, b_in)]
    bias_k = kw.pop("bias_k", None)
    bias_v = kw.pop("bias_v", None)
    args += [None if bias_k is None else m.tensor(bias_k), None if bias_v is None else
             m.tensor(bias_v), False, 0.0]
    args += [m.tensor(a, dtype=m.float32) for a in (w_out, b_out)]
    fn = m.nn.functional.multi_head_attention_forward
    return lambda q, k, v, **more: fn(q, k, v, 8, 2, *args, **{**kw, **more})


def _tensors(m, *arrays):
    return [a if a is None else m.tensor(a) for a in arrays]


MHA_ERRORS = {
    "4-d query": ({}, ((1, 4, 2, 8), (1, 5, 2, 8), (1, 5, 2, 8)), {}),
    "2-d key for a batched query": ({}, ((4, 2, 8), (5, 8), (5, 8)), {}),
    "3-d key for an unbatched query": ({}, ((4, 8), (5, 2, 8), (5, 2, 8)), {}),
    "1-d padding mask for a batched query": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
                                             {"key_padding_mask": (5,)}),
    "2-d padding mask for an unbatched query": ({}, ((4, 8), (5, 8), (5, 8)),
                                                {"key_padding_mask": (1, 5)}),
    "4-d attn_mask": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"attn_mask": (1, 4, 4, 5)}),
    "unbatched 3-d attn_mask": ({}, ((4, 8), (5, 8), (5, 8)), {"attn_mask": (3, 4, 5)}),
    "batched 3-d attn_mask": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"attn_mask": (2, 4, 5)}),
    "2-d attn_mask": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"attn_mask": (5, 4)}),
    "padding mask batch": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
                           {"key_padding_mask": (3, 5)}),
    "padding mask length": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
                            {"key_padding_mask": (2, 4)}),
    "key and value shapes": ({}, ((4, 2, 8), (5, 2, 8), (6, 2, 8)), {}),
    "bias_k without bias_v": ({"bias_k": np.zeros((1, 1, 8), np.float32)},
                              ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {}),
    "bias and static_k": ({"bias_k": np.zeros((1, 1, 8), np.float32),
                           "bias_v": np.zeros((1, 1, 8), np.float32)},
                          ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"static_k": (4, 5, 4)}),
    "static_k heads": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"static_k": (3, 5, 4)}),
    "static_v head size": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"static_v": (4, 5, 3)}),
}


@pytest.mark.parametrize("name", MHA_ERRORS)
def test_multi_head_attention_input_checks_are_torchs(name):
    kw, shapes, extra = MHA_ERRORS[name]
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    more = {}
    for key, shape in extra.items():
        more[key] = rand_array(shape, np.bool_ if key == "key_padding_mask" else np.float32,
                               seed=9)

    def call(m):
        fn = _mha(m, **dict(kw))
        return lambda: fn(*_tensors(m, *arrays), **{k: m.tensor(a) for k, a in more.items()})

    _raises_like_torch(call(ember), call(torch))


def test_static_keys_and_values_replace_the_projected_ones():
    q = rand_array((4, 2, 8))
    sk, sv = rand_array((4, 6, 4), seed=1), rand_array((4, 6, 4), seed=2)
    kv = rand_array((5, 2, 8), seed=3)
    check_op(lambda a, b, c, d: _mha(ember)(a, b, b, static_k=c, static_v=d),
             lambda a, b, c, d: _mha(torch)(a, b, b, static_k=c, static_v=d),
             q, kv, sk, sv, **TOL)


def test_mismatched_mask_dtypes_warn_as_torch():
    q = rand_array((4, 2, 8))
    pad, mask = np.zeros((2, 4), bool), np.zeros((4, 4), np.float32)
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            _mha(m)(*_tensors(m, q, q, q), key_padding_mask=m.tensor(pad),
                    attn_mask=m.tensor(mask))
        assert [str(w.message) for w in got] == [
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same "
            "type for both instead."], m


def test_query_key_and_value_on_different_devices_are_refused_in_torchs_words():
    # (after the dtype check, before the ranks; a meta tensor stands for a second device)
    def calls(L):
        m = lambda *s: L.empty(*s, device="meta")  # noqa: E731
        o = L.ones
        sdpa = L.nn.functional.scaled_dot_product_attention
        yield lambda: sdpa(m(1, 2, 3), o(1, 2, 3), o(1, 2, 3))
        yield lambda: sdpa(o(1, 2, 3), m(1, 2, 3), o(1, 2, 3))
        yield lambda: sdpa(o(1, 2, 3), o(1, 2, 3), m(1, 2))
        yield lambda: sdpa(o(1, 2, 3).double(), m(1, 2, 3), o(1, 2, 3))

    for got, want in zip(calls(ember), calls(torch)):
        msgs = []
        for call in (got, want):
            with pytest.raises(RuntimeError) as info:
                call()
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1], msgs
