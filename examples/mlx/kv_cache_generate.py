"""Text generation with a KV cache, the way mlx-lm writes a Llama.

A tiny Llama (grouped-query attention, `nn.RoPE` or `mx.fast.rope` with an offset,
`mx.fast.rms_norm`, SwiGLU, tied or untied embeddings) with weights drawn from seeded keys
decodes through two caches: one that preallocates and writes by slice assignment, one that
grows by `mx.concatenate`; prefill then one-token steps equal the full forward. Samplers
(greedy, temperature, top-k, top-p, min-p, a repetition penalty; compiled ones holding the
random state) run in an `mx.async_eval` loop; a sliding-window cache, left-padded batches
with per-sequence rope offsets and quantized keys / values follow; a one-layer draft model
speculates for the target; the model is cast to bfloat16 / float16, saved to .safetensors
and reloaded with `load_weights`; typical mistakes are caught.
Run on ember with `python -m ember.run kv_cache_generate.py`.
"""

import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map

import mlx.core as mx
import mlx.nn as nn


def r4(a, n=4):
    return [round(v, 4) for v in a.reshape(-1)[:n].tolist()]


def try_(label, fn, tmp=None):
    try:
        out = fn()
        mx.eval(out)
        print(f"{label}: no error")
    except Exception as e:  # noqa: BLE001
        msg = str(e) if tmp is None else str(e).replace(tmp, "<tmp>")
        print(f"{label}: {type(e).__name__}: {msg}")


class PreallocCache:
    """Keys / values in buffers grown `step` positions at a time, written by slicing."""

    step = 16

    def __init__(self):
        self.keys = self.values = None
        self.offset = 0

    def update_and_fetch(self, k, v):
        prev, n = self.offset, k.shape[2]
        if self.keys is None or prev + n > self.keys.shape[2]:
            grow = (n + self.step - 1) // self.step * self.step
            shape = (*k.shape[:2], grow, k.shape[3])
            new_k, new_v = mx.zeros(shape, k.dtype), mx.zeros(shape, v.dtype)
            if self.keys is None:
                self.keys, self.values = new_k, new_v
            else:
                self.keys = mx.concatenate([self.keys[..., :prev, :], new_k], axis=2)
                self.values = mx.concatenate([self.values[..., :prev, :], new_v], axis=2)
        self.offset += n
        self.keys[..., prev:self.offset, :] = k
        self.values[..., prev:self.offset, :] = v
        return self.keys[..., :self.offset, :], self.values[..., :self.offset, :]

    def trim(self, n):
        self.offset -= n

    @property
    def rope_offset(self):
        return self.offset


class BatchCache(PreallocCache):
    """Left-padded prompts: each sequence's positions start after its padding."""

    def __init__(self, left_padding):
        super().__init__()
        self.left_padding = mx.array(left_padding)

    @property
    def rope_offset(self):
        return self.offset - self.left_padding


class RotatingCache(PreallocCache):
    """A sliding window of `size` positions; decoding overwrites the oldest slot."""

    def __init__(self, size):
        super().__init__()
        self.size = self.step = size

    def update_and_fetch(self, k, v):
        if k.shape[2] > 1:  # a prompt no longer than the window: as the growing cache
            return super().update_and_fetch(k, v)
        if self.keys.shape[2] < self.size:
            pad = mx.zeros((*k.shape[:2], self.size - self.keys.shape[2], k.shape[3]), k.dtype)
            self.keys = mx.concatenate([self.keys, pad], axis=2)
            self.values = mx.concatenate([self.values, pad.astype(v.dtype)], axis=2)
        slot = self.offset % self.size
        self.keys[..., slot:slot + 1, :] = k
        self.values[..., slot:slot + 1, :] = v
        self.offset += 1
        n = min(self.offset, self.size)
        return self.keys[..., :n, :], self.values[..., :n, :]


class ConcatCache:
    """Keys / values that grow by concatenation on every call."""

    def __init__(self):
        self.keys = self.values = None
        self.offset = 0

    def update_and_fetch(self, k, v):
        if self.keys is not None:
            k = mx.concatenate([self.keys, k], axis=2)
            v = mx.concatenate([self.values, v], axis=2)
        self.keys, self.values, self.offset = k, v, k.shape[2]
        return k, v

    def trim(self, n):
        self.offset -= n
        self.keys, self.values = self.keys[..., :self.offset, :], self.values[..., :self.offset, :]

    @property
    def rope_offset(self):
        return self.offset


class Attention(nn.Module):
    def __init__(self, dims, heads, kv_heads, traditional, fast_rope, gqa):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dims // heads
        self.scale, self.fast_rope, self.gqa, self.traditional = (
            self.head_dim ** -0.5, fast_rope, gqa, traditional)
        self.q_proj = nn.Linear(dims, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dims, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dims, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, dims, bias=False)
        self.rope = nn.RoPE(self.head_dim, traditional=traditional, base=500.0, scale=1.0)

    def _rope(self, x, offset):
        if self.fast_rope:
            return mx.fast.rope(x, self.head_dim, traditional=self.traditional, base=500.0,
                                scale=0.5, offset=offset)
        return self.rope(x, offset=offset)

    def __call__(self, x, mask=None, cache=None):
        B, L, _ = x.shape
        q = self.q_proj(x).reshape(B, L, self.heads, -1).transpose(0, 2, 1, 3)
        k = self.k_proj(x).reshape(B, L, self.kv_heads, -1).transpose(0, 2, 1, 3)
        v = self.v_proj(x).reshape(B, L, self.kv_heads, -1).transpose(0, 2, 1, 3)
        offset = 0 if cache is None else cache.rope_offset
        q, k = self._rope(q, offset), self._rope(k, offset)
        if cache is not None:
            k, v = cache.update_and_fetch(k, v)
        rep = self.heads // self.kv_heads
        if self.gqa == "repeat":
            k, v = mx.repeat(k, rep, axis=1), mx.repeat(v, rep, axis=1)
        if self.gqa == "reshape":  # queries grouped under their key head, by hand
            qg = q.reshape(B, self.kv_heads, rep, L, -1) * self.scale
            scores = qg @ mx.expand_dims(k, 2).swapaxes(-1, -2)
            if isinstance(mask, str):
                mask = mx.triu(mx.full((L, k.shape[2]), -mx.inf), k=k.shape[2] - L + 1)
            if mask is not None:
                scores = scores + mask
            o = (mx.softmax(scores, axis=-1, precise=True) @ mx.expand_dims(v, 2))
            o = o.reshape(B, self.heads, L, -1)
        else:
            o = mx.fast.scaled_dot_product_attention(q, k, v, scale=self.scale, mask=mask)
        return self.o_proj(o.transpose(0, 2, 1, 3).reshape(B, L, -1))


class Block(nn.Module):
    def __init__(self, dims, hidden, **kw):
        super().__init__()
        self.self_attn = Attention(dims, **kw)
        self.input_norm = mx.ones((dims,))
        self.post_norm = mx.ones((dims,))
        self.gate_proj = nn.Linear(dims, hidden, bias=False)
        self.up_proj = nn.Linear(dims, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dims, bias=False)

    def __call__(self, x, mask, cache):
        h = x + self.self_attn(mx.fast.rms_norm(x, self.input_norm, 1e-5), mask, cache)
        y = mx.fast.rms_norm(h, self.post_norm, 1e-5)
        return h + self.down_proj(nn.silu(self.gate_proj(y)) * self.up_proj(y))


class Llama(nn.Module):
    def __init__(self, vocab=48, dims=32, layers=2, heads=4, kv_heads=2, hidden=64, tie=True,
                 traditional=False, fast_rope=False, gqa="native"):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dims)
        self.layers = [Block(dims, hidden, heads=heads, kv_heads=kv_heads,
                             traditional=traditional, fast_rope=fast_rope, gqa=gqa)
                       for _ in range(layers)]
        self.norm = nn.RMSNorm(dims, eps=1e-5)
        if not tie:
            self.lm_head = nn.Linear(dims, vocab, bias=False)

    def __call__(self, tokens, cache=None, mask="auto"):
        L = tokens.shape[1]
        offset = 0 if cache is None else cache[0].offset
        if mask == "auto":
            if L == 1:
                mask = None
            elif offset == 0:
                mask = "causal"
            else:  # a chunk after a cached prefix: additive, queries end-aligned
                mask = mx.triu(mx.full((L, offset + L), -mx.inf), k=offset + 1)
        x = self.embed_tokens(tokens)
        for layer, c in zip(self.layers, cache or [None] * len(self.layers)):
            x = layer(x, mask, c)
        x = self.norm(x)
        return self.lm_head(x) if "lm_head" in self else self.embed_tokens.as_linear(x)


def draw_weights(model, seed):
    """Every parameter drawn from its own key, split off one seeded key."""
    flat = tree_flatten(model.parameters())
    keys = mx.random.split(mx.random.key(seed), len(flat))
    new = [(name, 0.3 * mx.random.normal(p.shape, key=keys[i]) if p.ndim == 2 else p)
           for i, (name, p) in enumerate(flat)]
    model.load_weights(new)
    mx.eval(model.parameters())
    return model


def count(model):
    return sum(p.size for _, p in tree_flatten(model.parameters()))


def attention_checks():
    print("== rope and attention ==")
    x = mx.random.normal((1, 4, 6, 16), key=mx.random.key(1))
    for trad in (False, True):
        for base, scale in ((10000.0, 1.0), (500.0, 0.25)):
            rope = nn.RoPE(16, traditional=trad, base=base, scale=scale)
            full = rope(x)
            steps = mx.concatenate([rope(x[:, :, i:i + 1], offset=i) for i in range(6)], axis=2)
            fast = mx.fast.rope(x[:, :, 2:], 16, traditional=trad, base=base, scale=scale,
                                offset=2)
            print(f"rope trad={trad} base={base} scale={scale}: steps "
                  f"{mx.abs(full - steps).max().item():.1e}, fast offset "
                  f"{mx.allclose(fast, full[:, :, 2:], atol=1e-5).item()}", r4(full[0, 1, 3]))
    half = mx.fast.rope(x, 8, traditional=False, base=1e4, scale=1.0, offset=0)
    print("rope on 8 of 16 dims, tail untouched:", mx.array_equal(half[..., 8:], x[..., 8:]).item())
    k1, k2, k3 = mx.random.split(mx.random.key(2), 3)
    q = mx.random.normal((2, 4, 5, 8), key=k1)
    k = mx.random.normal((2, 2, 7, 8), key=k2)
    v = mx.random.normal((2, 2, 7, 8), key=k3)
    sdpa = mx.fast.scaled_dot_product_attention
    native = sdpa(q, k, v, scale=0.35, mask="causal")
    rep = sdpa(q, mx.repeat(k, 2, axis=1), mx.repeat(v, 2, axis=1), scale=0.35, mask="causal")
    add = mx.triu(mx.full((5, 7), -mx.inf), k=3)
    boolean = mx.tril(mx.ones((5, 7), dtype=mx.bool_), k=2)
    print("gqa native vs repeat:", mx.allclose(native, rep, atol=1e-5).item(), native.shape)
    print("causal is end-aligned:", mx.allclose(native, sdpa(q, k, v, scale=0.35, mask=add),
                                                atol=1e-5).item(),
          "bool mask same:", mx.allclose(native, sdpa(q, k, v, scale=0.35, mask=boolean),
                                         atol=1e-5).item())
    none = sdpa(q, k, v, scale=0.35)
    print("no mask:", r4(none[1, 3, 4]), "causal:", r4(native[1, 3, 0]))
    per_head = mx.zeros((4, 5, 7)) + mx.arange(4).reshape(4, 1, 1) * -0.5
    print("per-head additive mask:", r4(sdpa(q, k, v, scale=0.35, mask=per_head)[0, 2, 1]))


def sample_min_p(logits, min_p=0.1):
    probs = mx.softmax(logits, axis=-1)
    floor = min_p * probs.max(axis=-1, keepdims=True)
    return mx.where(probs < floor, -mx.inf, logits)


def sample_top_k(logits, k=5):
    drop = mx.argpartition(-logits, kth=k - 1, axis=-1)[..., k:]
    return mx.put_along_axis(logits, drop, mx.array(-mx.inf, logits.dtype), axis=-1)


def sample_top_p(logits, p=0.8):
    probs = mx.softmax(logits, axis=-1)
    order = mx.argsort(probs, axis=-1)  # ascending, as mlx-lm sorts
    sorted_p = mx.take_along_axis(probs, order, axis=-1)
    keep = mx.cumsum(sorted_p, axis=-1) > 1 - p
    sorted_logits = mx.where(keep, mx.take_along_axis(logits, order, axis=-1), -mx.inf)
    return mx.put_along_axis(mx.zeros_like(logits), order, sorted_logits, axis=-1)


def repetition_penalty(logits, seen, penalty=1.5):
    if not seen:
        return logits
    idx = mx.array(seen)
    picked = logits[:, idx]
    logits[:, idx] = mx.where(picked < 0, picked * penalty, picked / penalty)
    return logits


def make_sampler(temp=0.0, top_k=0, top_p=1.0, min_p=0.0, penalty=1.0):
    def sampler(logits, key, seen):
        logits = repetition_penalty(logits, seen, penalty) if penalty != 1.0 else logits
        if temp == 0:
            return mx.argmax(logits, axis=-1)
        logits = logits * (1 / temp)
        if min_p:
            logits = sample_min_p(logits, min_p)
        if top_k:
            logits = sample_top_k(logits, top_k)
        if top_p < 1.0:
            logits = sample_top_p(logits, top_p)
        return mx.random.categorical(logits, key=key)
    return sampler


def generate(model, prompt, steps, sampler, seed=0, cache_cls=PreallocCache, chunk=None):
    cache = [cache_cls() for _ in model.layers]
    chunk = chunk or prompt.shape[1]
    for s in range(0, prompt.shape[1], chunk):  # chunked prefill
        logits = model(prompt[:, s:s + chunk], cache)
    keys, seen = mx.random.split(mx.random.key(seed), steps), prompt[0].tolist()
    y = sampler(logits[:, -1, :], keys[0], seen)
    mx.async_eval(y)
    out = []
    for i in range(1, steps + 1):
        seen = seen + [y.item()]
        out.append(seen[-1])
        if i == steps:
            break
        next_y = sampler(model(y[:, None], cache)[:, -1, :], keys[i], seen)
        mx.async_eval(next_y)
        y = next_y
    return out, cache


def speculative(target, draft, prompt, steps, n_draft=3, seed=0, greedy=False):
    """Draft proposes n_draft tokens, target checks them in one pass; rejections rewind."""
    tc, dc = [PreallocCache() for _ in target.layers], [PreallocCache() for _ in draft.layers]
    t_logits = target(prompt, tc)[:, -1]
    draft(prompt, dc)  # the draft's cache holds the prompt too
    key, out, accepted = mx.random.key(seed), [], 0
    y = mx.argmax(t_logits, axis=-1) if greedy else mx.random.categorical(t_logits, key=key)
    while len(out) < steps:
        out.append(y.item())
        proposals, q_probs, tok = [], [], y
        for _ in range(n_draft):
            key, sub = mx.random.split(key)
            lg = draft(tok[:, None], dc)[:, -1]
            tok = mx.argmax(lg, axis=-1) if greedy else mx.random.categorical(lg, key=sub)
            proposals.append(tok)
            q_probs.append(mx.softmax(lg, axis=-1))
        verify = mx.concatenate([y[:, None]] + [t[:, None] for t in proposals], axis=1)
        p_probs = mx.softmax(target(verify, tc), axis=-1)
        n_ok = 0
        for j, tok in enumerate(proposals):
            key, sub = mx.random.split(key)
            t = tok.item()
            if greedy:
                ok = mx.argmax(p_probs[0, j]).item() == t
            else:
                ratio = p_probs[0, j, t] / q_probs[j][0, t]
                ok = (mx.random.uniform(key=sub) < mx.minimum(ratio, 1.0)).item()
            if not ok:
                break
            n_ok += 1
        accepted += n_ok
        out.extend(p.item() for p in proposals[:n_ok])
        key, sub = mx.random.split(key)
        if greedy:
            y = mx.argmax(p_probs[:, n_ok], axis=-1)
        elif n_ok < n_draft:  # resample from the residual max(p - q, 0)
            resid = mx.maximum(p_probs[:, n_ok] - q_probs[n_ok], 0.0)
            y = mx.random.categorical(mx.log(resid), key=sub)
        else:
            y = mx.random.categorical(mx.log(p_probs[:, n_ok]), key=sub)
        for c in tc:
            c.trim(n_draft - n_ok)
        for c in dc:
            c.trim(n_draft - n_ok - 1) if n_ok < n_draft else None
        if n_ok == n_draft:  # the draft never saw its own last proposal
            draft(proposals[-1][:, None], dc)
    return out[:steps], accepted


def window_mask(n, w):
    i, j = mx.arange(n)[:, None], mx.arange(n)[None]
    return mx.where((j <= i) & (j > i - w), 0.0, -mx.inf)


@partial(mx.compile, inputs=mx.random.state, outputs=mx.random.state)
def compiled_categorical(logits, temp):
    return mx.random.categorical(logits * (1 / temp))


@mx.compile
def compiled_min_p(logits, min_p):
    probs = mx.softmax(logits, axis=-1)
    return mx.where(probs < min_p * probs.max(axis=-1, keepdims=True), -mx.inf, logits)


def more_caches(model, prompt, greedy):
    print("== sliding window, batches, quantized keys ==")
    toks = mx.concatenate([prompt, mx.array([greedy[:6]])], axis=1)
    full = model(toks, mask=window_mask(13, 8))  # every position sees the last 8 only
    cache = [RotatingCache(8) for _ in model.layers]
    outs = [model(toks[:, :7], cache)] + [model(toks[:, i:i + 1], cache) for i in range(7, 13)]
    diff = mx.abs(mx.concatenate(outs, axis=1) - full).max().item()
    print(f"rotating window 8: max diff < 1e-4 {diff < 1e-4}, buffer {cache[0].keys.shape}, "
          f"offset {cache[0].offset}, differs from unwindowed "
          f"{not mx.allclose(full, model(toks), atol=1e-3).item()}")
    short = mx.array([[8, 30, 2, 44]])
    pad = 3
    batch = mx.concatenate([mx.pad(short, [(0, 0), (pad, 0)]), prompt], axis=0)
    keep = mx.arange(7)[None, :] >= mx.array([pad, 0])[:, None]
    causal = mx.tril(mx.ones((7, 7), dtype=mx.bool_))
    mask = keep[:, None, None, :] & causal[None, None]
    cache = [BatchCache([pad, 0]) for _ in model.layers]
    logits = model(batch, cache, mask=mask)
    one = model(short)
    print("batched left-padded prefill:", mask.shape, mask.dtype, "rows match single runs",
          mx.allclose(logits[0, pad:], one[0], atol=1e-4).item(),
          mx.allclose(logits[1], model(prompt)[0], atol=1e-4).item())
    step_mask = mx.concatenate([keep, mx.ones((2, 1), dtype=mx.bool_)], axis=1)[:, None, None]
    nxt = mx.argmax(logits[:, -1], axis=-1)
    step = model(nxt[:, None], cache, mask=step_mask)
    alone = model(mx.concatenate([short, nxt[:1, None]], axis=1))
    print("batched step:", nxt.tolist(), "rope offsets", cache[0].rope_offset.tolist(),
          "matches", mx.allclose(step[0, -1], alone[0, -1], atol=1e-4).item())
    k1, k2, k3 = mx.random.split(mx.random.key(12), 3)
    q = mx.random.normal((1, 4, 3, 32), key=k1)
    k = mx.random.normal((1, 2, 9, 32), key=k2)
    v = mx.random.normal((1, 2, 9, 32), key=k3)
    kq, vq = mx.quantize(k, group_size=32, bits=8), mx.quantize(v, group_size=32, bits=8)
    qg = (q * 32 ** -0.5).reshape(1, 2, 2, 3, 32)
    scores = mx.quantized_matmul(qg, *(mx.expand_dims(a, -3) for a in kq), transpose=True,
                                 group_size=32, bits=8)
    scores = scores + window_mask(9, 9)[-3:]
    p = mx.softmax(scores, axis=-1, precise=True)
    o = mx.quantized_matmul(p, *(mx.expand_dims(a, -3) for a in vq), transpose=False,
                            group_size=32, bits=8).reshape(1, 4, 3, 32)
    exact = mx.fast.scaled_dot_product_attention(q, k, v, scale=32 ** -0.5, mask="causal")
    print("quantized KV:", [a.shape for a in kq], o.dtype,
          f"max diff below 0.05: {mx.abs(o - exact).max().item() < 0.05}")

    print("== gated delta rule: a recurrent state instead of a KV cache ==")
    ks = mx.random.split(mx.random.key(13), 5)
    q = mx.random.normal((2, 9, 2, 8), key=ks[0])
    k = mx.random.normal((2, 9, 2, 8), key=ks[1])
    k = k * mx.rsqrt((k * k).sum(-1, keepdims=True))  # unit keys, as Qwen3-Next normalises
    v = mx.random.normal((2, 9, 4, 6), key=ks[2])
    gamma = mx.exp(-mx.random.uniform(0.0, 0.5, (2, 9, 4), key=ks[3]))
    beta = mx.sigmoid(mx.random.normal((2, 9, 4), key=ks[4]))
    y, state = mx.fast.gated_delta_update(q, k, v, gamma, beta)
    print("outputs", y.shape, y.dtype, "state", state.shape, state.dtype, r4(y[0, -1, 0]))
    ys, s = [], None
    for a, b in ((0, 5), (5, 6), (6, 7), (7, 8), (8, 9)):  # a prompt, then one token a step
        y_t, s = mx.fast.gated_delta_update(q[:, a:b], k[:, a:b], v[:, a:b], gamma[:, a:b],
                                            beta[:, a:b], s)
        ys.append(y_t)
    print("prefill + steps equal the full pass:",
          mx.allclose(mx.concatenate(ys, axis=1), y, atol=1e-5).item(),
          mx.allclose(s, state, atol=1e-5).item())
    pad = mx.arange(9)[None] >= mx.array([[3], [0]])  # the first sequence left-padded by 3
    y_m, s_m = mx.fast.gated_delta_update(q, k, v, gamma, beta, mask=pad)
    alone = mx.fast.gated_delta_update(q[:1, 3:], k[:1, 3:], v[:1, 3:], gamma[:1, 3:],
                                       beta[:1, 3:])
    print("padded steps output zeros:", (y_m[0, :3] == 0).all().item(), "state as unpadded:",
          mx.allclose(s_m[0], alone[1][0], atol=1e-5).item())
    per_key = mx.exp(-mx.random.uniform(0.0, 0.5, (2, 9, 4, 8), key=ks[3]))
    print("per-key decay:", r4(mx.fast.gated_delta_update(q, k, v, per_key, beta)[0][1, -1, 3]))
    half = [a.astype(mx.bfloat16) for a in (q, k, v, gamma, beta)]
    y_h, s_h = mx.fast.gated_delta_update(*half)
    print("bfloat16:", y_h.dtype, s_h.dtype, f"max diff {mx.abs(y_h - y).max().item():.2f}")

    print("== compiled samplers and a generation stream ==")
    lg = model(prompt)[:, -1]
    mx.random.seed(21)
    first = [compiled_categorical(lg, 0.7).item() for _ in range(6)]
    mx.random.seed(21)
    again = [compiled_categorical(lg, 0.7).item() for _ in range(6)]
    print("compiled categorical:", first, "reseeded same:", first == again)
    print("compiled min_p kept:", mx.isfinite(compiled_min_p(lg, 0.05)).sum().item(),
          mx.isfinite(compiled_min_p(lg, 0.3)).sum().item())
    stream = mx.new_stream(mx.default_device())
    with mx.stream(stream):
        cache = [PreallocCache() for _ in model.layers]
        y, out = mx.argmax(model(prompt, cache)[:, -1], axis=-1), []
        mx.async_eval(y)
        for _ in range(6):
            nxt = mx.argmax(model(y[:, None], cache)[:, -1], axis=-1)
            mx.async_eval(nxt)
            out.append(y.item())
            y = nxt
    print("on", stream, "greedy", out, "same:", out == greedy[:6])


def main():
    mx.random.seed(0)
    attention_checks()

    print("== model ==")
    model = draw_weights(Llama(), 10)
    untied = draw_weights(Llama(tie=False), 10)
    print("tied:", count(model), "untied:", count(untied), "parameters")
    for name, p in tree_flatten(model.parameters())[:6]:
        print(f"  {name}: {p.shape} {p.dtype}")
    print("as_linear is embedding.T:", mx.allclose(
        model.embed_tokens.as_linear(mx.eye(32)[:2]), model.embed_tokens.weight[:, :2].T,
        atol=1e-6).item())
    prompt = mx.array([[5, 17, 3, 40, 22, 9, 31]])
    full = model(prompt)
    print("logits:", full.shape, full.dtype, r4(full[0, -1]))
    variants = {"repeat": Llama(gqa="repeat"), "reshape": Llama(gqa="reshape")}
    for name, m in variants.items():
        m.update(model.parameters())
        print(f"gqa {name} max diff: {mx.abs(m(prompt) - full).max().item() < 1e-4}")

    print("== cache ==")
    for cls in (PreallocCache, ConcatCache):
        for chunk in (7, 4, 1):
            cache = [cls() for _ in model.layers]
            outs = [model(prompt[:, s:s + chunk], cache) for s in range(0, 7, chunk)]
            diff = mx.abs(mx.concatenate(outs, axis=1) - full).max().item()
            c = cache[0]
            print(f"{cls.__name__} chunk {chunk}: max diff < 1e-4 {diff < 1e-4}, offset "
                  f"{c.offset}, buffer {c.keys.shape}")
    for kw in ({"traditional": True}, {"fast_rope": True},
               {"fast_rope": True, "traditional": True}):
        m = Llama(**kw)
        m.update(model.parameters())
        ref, cache = m(prompt), [PreallocCache() for _ in m.layers]
        steps = [m(prompt[:, :3], cache)] + [m(prompt[:, i:i + 1], cache) for i in range(3, 7)]
        same = mx.allclose(mx.concatenate(steps, 1), ref, atol=1e-4).item()
        print(f"{kw}: steps equal full {same}", r4(ref[0, -1], 3))
    big = [PreallocCache() for _ in model.layers]
    model(mx.zeros((1, 20), dtype=mx.int32), big)
    print("grown buffer:", big[0].keys.shape, "offset", big[0].offset)

    print("== sampling ==")
    logits = full[:, -1, :]
    print("greedy token:", mx.argmax(logits, axis=-1).tolist())
    kept = lambda lg: mx.isfinite(lg).sum().item()
    print("kept by top_k 5:", kept(sample_top_k(logits)), "top_p 0.8:", kept(sample_top_p(logits)),
          "min_p 0.1:", kept(sample_min_p(logits)))
    pen = repetition_penalty(mx.array(logits), [5, 17, 5], 2.0)
    print("penalised:", r4(logits[0, mx.array([5, 17])], 2), "->", r4(pen[0, mx.array([5, 17])], 2))
    k = mx.random.key(3)
    draws = mx.random.categorical(logits * (1 / 0.7), num_samples=8, key=k)
    print("categorical temp 0.7:", draws.tolist())
    print("split keys:", mx.random.split(k).tolist(), mx.random.split(k, 3).shape)
    samplers = {"greedy": make_sampler(), "temp 0.8": make_sampler(0.8),
                "top_k 5": make_sampler(1.0, top_k=5), "top_p 0.8": make_sampler(1.0, top_p=0.8),
                "min_p 0.2": make_sampler(1.0, min_p=0.2),
                "penalty 1.5": make_sampler(0.0, penalty=1.5)}
    for name, sampler in samplers.items():
        toks, cache = generate(model, prompt, 10, sampler, seed=4)
        print(f"{name}: {toks}")
    g1 = generate(model, prompt, 10, make_sampler(), cache_cls=ConcatCache, chunk=3)[0]
    g2 = generate(model, prompt, 10, make_sampler())[0]
    print("concat cache + chunked prefill same greedy:", g1 == g2, "cache offset", cache[0].offset)
    seq = mx.concatenate([prompt, mx.array([g2[:-1]])], axis=1)
    print("greedy equals argmax of full forward:",
          mx.argmax(model(seq)[0, 6:], axis=-1).tolist() == g2)

    more_caches(model, prompt, g2)

    print("== speculative decoding ==")
    draft = draw_weights(Llama(layers=1), 11)  # shares the target's embedding and first layer
    draft.update({"embed_tokens": model.embed_tokens.parameters(),
                  "layers": [model.layers[0].parameters()]})
    print("draft parameters:", count(draft))
    toks, acc = speculative(model, draft, prompt, 10, greedy=True)
    print("greedy speculative:", toks, "same as target:", toks == g2, "accepted", acc)
    for seed in (5, 6):
        toks, acc = speculative(model, draft, prompt, 10, seed=seed)
        print(f"sampled seed {seed}: {toks}, accepted {acc}")
    toks, acc = speculative(model, model, prompt, 9, seed=7)
    print("self-draft accepts all:", acc, len(toks))

    print("== dtypes ==")
    for dt in (mx.bfloat16, mx.float16):
        m = Llama()
        m.update(model.parameters())
        m.set_dtype(dt)
        out, cache = generate(m, prompt, 8, make_sampler(), seed=4)
        lg = m(prompt)
        print(f"{dt}: params {m.layers[0].gate_proj.weight.dtype} norm {m.norm.weight.dtype} "
              f"logits {lg.dtype} cache {cache[0].keys.dtype}, top1 agree "
              f"{(lg.argmax(-1) == full.argmax(-1)).sum().item()}/7, greedy {out}")
    half = tree_map(lambda p: p.astype(mx.float16), model.parameters())
    nbytes = lambda tree: sum(p.nbytes for _, p in tree_flatten(tree))
    print("bytes float32 / float16:", nbytes(model.parameters()), nbytes(half))
    ints = Llama()
    ints.set_dtype(mx.float16, predicate=lambda d: False)
    print("predicate refusing every dtype:", ints.norm.weight.dtype)

    print("== save / load ==")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.safetensors")
        weights = dict(tree_flatten(model.parameters()))
        mx.save_safetensors(path, weights, metadata={"arch": "llama", "layers": "2"})
        loaded, meta = mx.load(path, return_metadata=True)
        print("saved", len(loaded), "arrays, metadata", sorted(meta.items()),
              "first", sorted(loaded)[0])
        fresh = Llama().load_weights(list(loaded.items()), strict=True)
        print("reloaded equal:", mx.array_equal(fresh(prompt), full).item())
        half = {k: v.astype(mx.float16) for k, v in loaded.items()}
        mx.save_safetensors(path, half)
        print("float16 file:", mx.load(path)["norm.weight"].dtype)
        missing = [(k, v) for k, v in loaded.items() if k != "norm.weight"]
        try_("missing key strict", lambda: Llama().load_weights(missing, strict=True))
        lenient = Llama().load_weights(missing, strict=False)
        print("missing key lenient: norm weight", r4(lenient.norm.weight))
        extra = list(loaded.items()) + [("lm_head.weight", mx.zeros((48, 32)))]
        try_("extra key strict", lambda: Llama().load_weights(extra, strict=True))
        Llama().load_weights(extra, strict=False)
        print("extra key lenient: no error")
        bad = [(k, v.T if k.endswith("k_proj.weight") else v) for k, v in loaded.items()]
        try_("wrong shape", lambda: Llama().load_weights(bad))
        try_("wrong shape lenient", lambda: Llama().load_weights(bad, strict=False))
        try_("no such file", lambda: mx.load(os.path.join(d, "absent.safetensors")), d)

    print("== mistakes ==")
    q = mx.zeros((1, 4, 5, 8))
    kv = mx.zeros((1, 2, 5, 8))
    sdpa = mx.fast.scaled_dot_product_attention
    try_("rope dims 7", lambda: mx.fast.rope(q, 7, traditional=False, base=1e4, scale=1.0,
                                              offset=0))
    try_("rope dims 12 of 8", lambda: nn.RoPE(12)(q))
    try_("mask 5x6 for 5 keys", lambda: sdpa(q, kv, kv, scale=1.0, mask=mx.zeros((5, 6))))
    try_("mask of 3 heads", lambda: sdpa(q, kv, kv, scale=1.0, mask=mx.zeros((3, 5, 5))))
    try_("3 kv heads for 4", lambda: sdpa(q, mx.zeros((1, 3, 5, 8)), mx.zeros((1, 3, 5, 8)),
                                          scale=1.0))
    try_("mask int", lambda: sdpa(q, kv, kv, scale=1.0, mask=mx.zeros((5, 5), mx.int32)))
    buf = mx.zeros((1, 2, 16, 8))

    def bad_write():
        buf[..., 3:5, :] = mx.ones((1, 2, 3, 8))
        return buf
    try_("cache write of 3 into 2", bad_write)
    try_("rms_norm weight 7", lambda: mx.fast.rms_norm(q, mx.ones((7,)), 1e-5))
    try_("put_along_axis shapes", lambda: mx.put_along_axis(
        mx.zeros((2, 5)), mx.zeros((3, 2), mx.int32), mx.array(1.0), axis=-1))
    try_("categorical key batch", lambda: mx.random.categorical(
        logits, key=mx.random.split(mx.random.key(0), 2)))
    try_("rope offsets for 3 of 2", lambda: nn.RoPE(8)(kv, offset=mx.array([1, 2, 3])))
    try_("quantize keys of 8 dims", lambda: mx.quantize(kv, group_size=32, bits=8))
    try_("causal with more queries", lambda: sdpa(q, kv[:, :, :3], kv[:, :, :3], scale=1.0,
                                                  mask="causal"))
    gd = mx.fast.gated_delta_update
    qk, v6, g3 = mx.ones((1, 3, 2, 8)), mx.ones((1, 3, 3, 6)), mx.ones((1, 3, 3))
    try_("gated delta with 3-d queries", lambda: gd(qk[0], qk[0], v6[0], g3[0], g3[0]))
    try_("gated delta, 3 value heads for 2", lambda: gd(qk, qk, v6, g3, g3))
    try_("gated delta state (B, Dk, Dv)", lambda: gd(qk, qk, v6[:, :, :2], g3[..., :2],
                                                     g3[..., :2], mx.zeros((1, 2, 8, 6))))
    try_("embedding float ids", lambda: model.embed_tokens(mx.array([[1.0, 2.0]])))


if __name__ == "__main__":
    main()
