"""torch.nn.attention.flex_attention run eagerly on the CPU, against torch 2.13 in-process:
the BlockMask tables bit for bit, the attention values to float32 tolerance."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as TF

import ember
import ember.nn.attention.flex_attention as EF

# NOTE: float32 scores, a softmax and two matrix products whose sums run in another order
# than PyTorch's: a few ulp of the largest term
RTOL, ATOL = 2e-5, 2e-6


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """torch's eager flex_attention compiles; its dynamo, rechecking the guards of compiles
    earlier tests left in this worker (q, k, v aliased or not), can fail with a TypeError
    of its own: each test starts it afresh."""
    torch._dynamo.reset()
    yield


def _np(t):
    return t.detach().numpy()


def _pair(*shape, dtype="float32", seed=0):
    """The same random tensor in torch and in ember."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return torch.tensor(a), ember.tensor(a)


def _mods(T, doc_ids, bias):
    """The masks and score mods of attention-gym, written once for torch or ember (T)."""
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def sliding(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= 3)

    def prefix_lm(b, h, q_idx, kv_idx):
        return (kv_idx < 5) | (q_idx >= kv_idx)

    def document(b, h, q_idx, kv_idx):
        return (doc_ids[b, q_idx] == doc_ids[b, kv_idx]) & (q_idx >= kv_idx)

    def alibi(score, b, h, q_idx, kv_idx):
        slope = T.exp2(-((h + 1) * 8.0 / 4))
        return score + slope * (kv_idx - q_idx)

    def relative(score, b, h, q_idx, kv_idx):
        return score + (q_idx - kv_idx) * 0.1

    def softcap(score, b, h, q_idx, kv_idx):
        return 5.0 * T.tanh(score / 5.0)

    def table(score, b, h, q_idx, kv_idx):
        return score + bias[h, q_idx, kv_idx]

    def causal_where(score, b, h, q_idx, kv_idx):
        return T.where(q_idx >= kv_idx, score, -float("inf"))

    return dict(causal=causal, sliding=sliding, prefix_lm=prefix_lm, document=document,
                alibi=alibi, relative=relative, softcap=softcap, table=table,
                causal_where=causal_where)


def _both_mods(B=2, H=4, L=24):
    docs = np.repeat(np.array([[0, 0, 1, 1, 1, 2], [0, 1, 1, 2, 2, 2]]), L // 6, axis=1)[:B]
    bias = np.random.default_rng(5).standard_normal((H, L, L)).astype("float32")
    return (_mods(torch, torch.tensor(docs), torch.tensor(bias)),
            _mods(ember, ember.tensor(docs), ember.tensor(bias)))


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


def _repr(block_mask):
    """repr with ember's Size named as torch's (ember.run prints it so)."""
    return repr(block_mask).replace("ember.Size", "torch.Size")


def _same_tables(e, t):
    assert e.shape == t.shape and e.BLOCK_SIZE == t.BLOCK_SIZE
    assert e.seq_lengths == t.seq_lengths
    for name in TF.BlockMask._TENSOR_ATTRS:
        te, tt = getattr(e, name), getattr(t, name)
        assert (te is None) == (tt is None), name
        if tt is not None:
            assert te.dtype == ember.int32 and tt.dtype == torch.int32
            np.testing.assert_array_equal(te.numpy(), tt.numpy(), err_msg=name)


@pytest.mark.parametrize("mask", ["causal", "sliding", "prefix_lm", "document"])
@pytest.mark.parametrize("B,H,Q,KV,BS", [(2, 2, 24, 24, 4), (1, None, 10, 10, 4),
                                         (2, 1, 24, 18, (8, 3)), (None, None, 7, 24, 128)])
def test_block_mask_tables_bit_for_bit(mask, B, H, Q, KV, BS):
    tm, em = _both_mods(L=24)
    t = TF.create_block_mask(tm[mask], B, H, Q, KV, device="cpu", BLOCK_SIZE=BS)
    e = EF.create_block_mask(em[mask], B, H, Q, KV, device="cpu", BLOCK_SIZE=BS)
    _same_tables(e, t)
    assert _repr(e) == repr(t)
    assert str(e) == str(t) and e.to_string(grid_size=2) == t.to_string(grid_size=2)
    assert e.sparsity() == t.sparsity() and e.numel() == t.numel()
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    assert e.to_dense().dtype == ember.int32
    np.testing.assert_array_equal(
        EF.create_mask(em[mask], B, H, Q, KV, device="cpu").numpy(),
        TF.create_mask(tm[mask], B, H, Q, KV, device="cpu").numpy())


def test_block_mask_indexing_and_adjust():
    tm, em = _both_mods()
    t = TF.create_block_mask(tm["document"], 2, 3, 24, 24, device="cpu", BLOCK_SIZE=4)
    e = EF.create_block_mask(em["document"], 2, 3, 24, 24, device="cpu", BLOCK_SIZE=4)
    for ie, it in [(0, 0), (-1, -1), ((1, 2), (1, 2)), ((slice(0, 2), slice(1, 3)),) * 2,
                   ((0, slice(None), ember.tensor([1, 3])),
                    (0, slice(None), torch.tensor([1, 3])))]:
        se, st = e[ie], t[it]
        _same_tables(se, st)
        assert _repr(se) == repr(st)
    _same_tables(e._adjust(16, 20), t._adjust(16, 20))
    kvn_np = np.array([[[1, 2, 0]]], dtype="int32")
    kvi_np = np.array([[[[2, 0, 1], [0, 1, 2], [1, 2, 0]]]], dtype="int32")
    _same_tables(EF.BlockMask.from_kv_blocks(ember.tensor(kvn_np), ember.tensor(kvi_np),
                                             BLOCK_SIZE=2),
                 TF.BlockMask.from_kv_blocks(torch.tensor(kvn_np), torch.tensor(kvi_np),
                                             BLOCK_SIZE=2))


def test_many_heads_print_a_limit():
    tm, em = _both_mods()
    t = TF.create_block_mask(tm["sliding"], 2, 3, 24, 24, device="cpu", BLOCK_SIZE=2)
    e = EF.create_block_mask(em["sliding"], 2, 3, 24, 24, device="cpu", BLOCK_SIZE=2)
    assert str(e) == str(t)
    assert e.to_string(limit=6, grid_size=-1) == t.to_string(limit=6, grid_size=-1)
    assert e.to_string(grid_size=(5, 7)) == t.to_string(grid_size=(5, 7))


@pytest.mark.parametrize("score,mask", [
    (None, None), (None, "causal"), (None, "sliding"), (None, "prefix_lm"),
    (None, "document"), ("alibi", None), ("alibi", "causal"), ("relative", "sliding"),
    ("softcap", None), ("softcap", "document"), ("table", "prefix_lm"),
    ("causal_where", None), ("causal_where", "sliding")])
def test_attention_values_and_lse(score, mask):
    tm, em = _both_mods()
    (tq, eq), (tk, ek), (tv, ev) = (_pair(2, 4, 24, 8, seed=s) for s in range(3))
    tb = eb = None
    if mask is not None:
        tb = TF.create_block_mask(tm[mask], 2, 4, 24, 24, device="cpu", BLOCK_SIZE=8)
        eb = EF.create_block_mask(em[mask], 2, 4, 24, 24, device="cpu", BLOCK_SIZE=8)
    w = _quiet()
    to, tl = TF.flex_attention(tq, tk, tv, score and tm[score], tb,
                               return_aux=TF.AuxRequest(lse=True))
    w.__exit__(None, None, None)
    w = _quiet()
    eo, el = EF.flex_attention(eq, ek, ev, score and em[score], eb,
                               return_aux=EF.AuxRequest(lse=True))
    w.__exit__(None, None, None)
    assert eo.dtype == ember.float32 and el.lse.dtype == ember.float32
    assert el.max_scores is None and eo.shape == to.shape and el.lse.shape == tl.lse.shape
    np.testing.assert_allclose(_np(eo), _np(to), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_np(el.lse), _np(tl.lse), rtol=RTOL, atol=ATOL)


def test_fully_masked_rows_give_zero_and_minus_inf():
    def late(b, h, q_idx, kv_idx):
        return kv_idx > q_idx + 5  # rows q >= 11 keep nothing
    (tq, eq) = _pair(1, 2, 16, 4)
    tb = TF.create_block_mask(late, 1, 2, 16, 16, device="cpu", BLOCK_SIZE=4)
    eb = EF.create_block_mask(late, 1, 2, 16, 16, device="cpu", BLOCK_SIZE=4)
    w = _quiet()
    to, tl = TF.flex_attention(tq, tq, tq, block_mask=tb, return_lse=True, scale=0.3)
    eo, el = EF.flex_attention(eq, eq, eq, block_mask=eb, return_lse=True, scale=0.3)
    w.__exit__(None, None, None)
    assert (eo[:, :, 11:] == 0).all().item() and ember.isneginf(el[:, :, 10:]).all().item()
    np.testing.assert_allclose(_np(eo), _np(to), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(np.isinf(_np(el)), np.isinf(_np(tl)))
    np.testing.assert_allclose(_np(el), _np(tl), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("Hq,Hkv", [(4, 2), (6, 1), (4, 4)])
def test_gqa_and_value_dim(Hq, Hkv):
    tm, em = _both_mods(H=Hq)
    (tq, eq), (tk, ek), (tv, ev) = (_pair(2, Hq, 12, 8, seed=1), _pair(2, Hkv, 18, 8, seed=2),
                                    _pair(2, Hkv, 18, 5, seed=3))
    w = _quiet()
    to = TF.flex_attention(tq, tk, tv, tm["alibi"], enable_gqa=True)
    eo = EF.flex_attention(eq, ek, ev, em["alibi"], enable_gqa=True)
    w.__exit__(None, None, None)
    assert tuple(eo.shape) == tuple(to.shape) == (2, Hq, 12, 5)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_result_dtypes(dtype):
    tq, eq = _pair(1, 2, 8, 4, seed=4)
    td, ed = getattr(torch, dtype), getattr(ember, dtype)
    w = _quiet()
    to, tl = TF.flex_attention(tq.to(td), tq.to(td), tq.to(td), return_lse=True)
    eo, el = EF.flex_attention(eq.to(ed), eq.to(ed), eq.to(ed), return_lse=True)
    w.__exit__(None, None, None)
    assert repr(eo.dtype)[6:] == repr(to.dtype)[6:] and repr(el.dtype)[6:] == repr(tl.dtype)[6:]
    # NOTE: float64 works in float64 (1e-12); half types round the probabilities and the
    # product to their 8/11-bit mantissas: one ulp of the output (2**-7 relative)
    tol = 1e-12 if dtype == "float64" else 2 ** -7
    np.testing.assert_allclose(_np(eo.double()), _np(to.double()), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(el.double()), _np(tl.double()), rtol=RTOL, atol=ATOL)


def test_gradients_to_captured_tensors():
    L = 12
    b_np = np.random.default_rng(7).standard_normal((2, L, L)).astype("float32")
    tbias, ebias = (torch.tensor(b_np, requires_grad=True),
                    ember.tensor(b_np, requires_grad=True))
    (tq, eq), (tk, ek), (tv, ev) = (_pair(1, 2, L, 4, seed=s) for s in range(3))
    tb = TF.create_block_mask(lambda b, h, q, k: q >= k, 1, 2, L, L, device="cpu",
                              BLOCK_SIZE=4)
    eb = EF.create_block_mask(lambda b, h, q, k: q >= k, 1, 2, L, L, device="cpu",
                              BLOCK_SIZE=4)
    w = _quiet()
    to, tl = TF.flex_attention(tq, tk, tv, lambda s, b, h, q, k: s + tbias[h, q, k], tb,
                               return_lse=True)
    eo, el = EF.flex_attention(eq, ek, ev, lambda s, b, h, q, k: s + ebias[h, q, k], eb,
                               return_lse=True)
    w.__exit__(None, None, None)
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    assert type(el.grad_fn).__name__ == type(tl.grad_fn).__name__ == "MulBackward0"
    (to.pow(2).sum() + tl.sum()).backward()
    (eo.pow(2).sum() + el.sum()).backward()
    np.testing.assert_allclose(ebias.grad.numpy(), tbias.grad.numpy(), rtol=1e-4, atol=1e-5)


def _reference(q, k, v, bias, keep, scale):
    """PyTorch composite attention in float64: masked softmax(q k^T scale + bias) v."""
    s = (q @ k.transpose(-2, -1)) * scale + bias
    s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, -1) @ v


def test_gradients_to_q_k_v_of_the_composite():
    # PyTorch refuses q/k/v that require grad on the CPU (checked below); ember's
    # composite is differentiable, checked here against PyTorch's own composite
    L = 10
    arrays = [np.random.default_rng(s).standard_normal((1, 2, L, 4)) for s in range(3)]
    bias = np.random.default_rng(9).standard_normal((2, L, L))
    keep = np.tril(np.ones((L, L), dtype=bool))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    eb = ember.tensor(bias)
    _reference(*ts, torch.tensor(bias), torch.tensor(keep), 0.5).pow(2).sum().backward()
    out, _ = EF._math_attention(*es, lambda s, b, h, q, k: s + eb[h, q, k],
                                lambda b, h, q, k: q >= k, 0.5)
    out.pow(2).sum().backward()
    for e, t in zip(es, ts):
        # NOTE: float64 with sums in another order: 1e-12
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def _same_error(call_t, call_e):
    with pytest.raises(Exception) as want:
        call_t()
    with pytest.raises(Exception) as got:
        call_e()
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def test_errors_match():
    tq, eq = _pair(1, 2, 8, 4)
    tk3, ek3 = _pair(1, 3, 8, 4)
    tk5, ek5 = _pair(1, 2, 8, 5)
    w = _quiet()
    for mod in (TF, EF):
        mod._WARNINGS_SHOWN.add("flex_attention_performance")
    cases = [
        lambda M, q, k3, k5: M.flex_attention(q, k3, k3),
        lambda M, q, k3, k5: M.flex_attention(q, k3, k3, enable_gqa=True),
        lambda M, q, k3, k5: M.flex_attention(q, k5, k5),
        lambda M, q, k3, k5: M.flex_attention(q[0], q[0], q[0]),
        lambda M, q, k3, k5: M.flex_attention(q, q, q, return_lse=True,
                                              return_aux=M.AuxRequest(lse=True)),
        lambda M, q, k3, k5: M.flex_attention(q, q, q,
                                              return_aux=M.AuxRequest(max_scores=True)),
        lambda M, q, k3, k5: M.flex_attention(q, q, q, kernel_options={"BACKEND": "X"}),
        lambda M, q, k3, k5: M.flex_attention(q.requires_grad_(), q, q),
        lambda M, q, k3, k5: M.flex_attention(q[..., :6, :], q, q, block_mask=M.create_block_mask(
            lambda b, h, i, j: i >= j, 1, 1, 8, 8, device="cpu", BLOCK_SIZE=4)),
        lambda M, q, k3, k5: M.flex_attention(q, q, q, block_mask=M.create_block_mask(
            lambda b, h, i, j: i >= j, 1, 1, 4, 4, device="cpu", BLOCK_SIZE=4)),
        lambda M, q, k3, k5: M.flex_attention(q, q, q, block_mask=M.create_block_mask(
            lambda b, h, i, j: i >= j, 2, 1, 8, 8, device="cpu", BLOCK_SIZE=4)[0]),
        lambda M, q, k3, k5: M.create_block_mask(lambda b, h, i: i, 1, 1, 8, 8),
        lambda M, q, k3, k5: M.create_mask(lambda a, b, h, i, j, k: i, 1, 1, 8, 8),
        lambda M, q, k3, k5: M.or_masks(1),
        lambda M, q, k3, k5: M.and_masks(None),
    ]
    for case in cases:
        _same_error(lambda c=case: c(TF, tq.detach().clone(), tk3, tk5),
                    lambda c=case: c(EF, eq.detach().clone(), ek3, ek5))
    w.__exit__(None, None, None)


def test_create_block_mask_refuses_a_score_mod():
    def score(s, b, h, q, k):
        return s
    with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod"):
        EF.create_block_mask(score, 1, 1, 4, 4)
    with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod"):
        TF.create_block_mask(score, 1, 1, 4, 4, device="cpu")


def test_warnings_match():
    tq, eq = _pair(1, 1, 4, 4)
    out = []
    for M, q in ((TF, tq), (EF, eq)):
        M._WARNINGS_SHOWN.clear()
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            M.flex_attention(q, q, q, return_lse=True)
            M.flex_attention(q, q, q, return_lse=True)  # (once per process)
            try:
                M.create_block_mask(M.noop_mask, 1, 1, 4, 4, device="cpu", _compile=True)
            except TypeError:
                # (torch then compiles create_block_mask, which fails now and then in a
                # worker where other compiles ran before; its warning came first)
                assert M is TF
        # (torch's compile machinery adds warnings of its own: only flex's are compared)
        out.append([(w.category, str(w.message)) for w in got if str(w.message).startswith(
            ("return_lse", "flex_attention called", "_compile flag"))])
    assert out[0] == out[1] and [c for c, _ in out[1]] == \
        [FutureWarning, UserWarning, DeprecationWarning]


def test_combined_masks():
    tm, em = _both_mods()
    for combine in ("and_masks", "or_masks"):
        t = getattr(TF, combine)(tm["sliding"], tm["prefix_lm"], TF.noop_mask)
        e = getattr(EF, combine)(em["sliding"], em["prefix_lm"], EF.noop_mask)
        np.testing.assert_array_equal(EF.create_mask(e, 2, 1, 24, 24).numpy(),
                                      TF.create_mask(t, 2, 1, 24, 24, device="cpu").numpy())
        assert e.__name__ == t.__name__
    assert EF.create_mask(EF.noop_mask, None, None, 3, 5).shape == (1, 1, 3, 5)


def test_module_surface():
    for name in TF.__all__:
        assert hasattr(EF, name), name
    assert EF._score_mod_signature is not None and EF._mask_mod_signature is not None
    assert EF.AuxRequest._fields == TF.AuxRequest._fields
    assert EF.AuxOutput._fields == TF.AuxOutput._fields


@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (0, 2, 1, 3), (2, 0, 1, 3), (0, 1, 3, 2),
                                  (1, 0, 2, 3)])
def test_output_follows_query_layout(perm):
    # the query is stored in `perm` order; the output is (B, H, L, Ev) with Ev != E
    inv = np.argsort(perm)
    tq, eq = _pair(*np.array([2, 3, 5, 4])[list(perm)], seed=2)
    tq, eq = tq.permute(*inv), eq.permute(*inv)
    (tk, ek), (tv, ev) = _pair(2, 3, 6, 4, seed=3), _pair(2, 3, 6, 1, seed=4)
    w = _quiet()
    to = TF.flex_attention(tq, tk, tv)
    eo = EF.flex_attention(eq, ek, ev)
    w.__exit__(None, None, None)
    assert eo.stride() == to.stride()
    np.testing.assert_allclose(_np(eo), _np(to), rtol=RTOL, atol=ATOL)


def test_decoding_one_query_against_a_padded_batch():
    lengths_np = np.array([5, 8])
    tl, el = torch.tensor(lengths_np), ember.tensor(lengths_np)
    (tq, eq), (tk, ek) = _pair(2, 2, 1, 4, seed=6), _pair(2, 2, 8, 4, seed=7)
    tb = TF.create_block_mask(lambda b, h, q, k: k < tl[b], 2, None, 1, 8, device="cpu",
                              BLOCK_SIZE=4)
    eb = EF.create_block_mask(lambda b, h, q, k: k < el[b], 2, None, 1, 8, device="cpu",
                              BLOCK_SIZE=4)
    _same_tables(eb, tb)
    assert str(eb) == str(tb)  # (a negative sparsity, as PyTorch prints for Q_LEN < block)
    w = _quiet()
    to = TF.flex_attention(tq, tk, tk, block_mask=tb)
    eo = EF.flex_attention(eq, ek, ek, block_mask=eb)
    w.__exit__(None, None, None)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=RTOL, atol=ATOL)


def test_compiled_flex_attention_does_not_warn():
    # PyTorch under torch.compile takes its fused path, silently; ember's compiled call
    # gives the eager values
    _, eq = _pair(1, 2, 16, 8, seed=8)
    bm = EF.create_block_mask(lambda b, h, q, k: q >= k, 1, 1, 16, 16, BLOCK_SIZE=8)

    def rel(s, b, h, q, k):
        return s + (q - k) * 0.1

    EF._WARNINGS_SHOWN.clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = ember.compile(EF.flex_attention)(eq, eq, eq, score_mod=rel, block_mask=bm)
    assert not [w for w in got if "flex_attention" in str(w.message)]
    assert "flex_attention_performance" not in EF._WARNINGS_SHOWN
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        want = EF.flex_attention(eq, eq, eq, score_mod=rel, block_mask=bm)
    assert [w.category for w in got] == [UserWarning]
    np.testing.assert_allclose(_np(out), _np(want), rtol=RTOL, atol=ATOL)
