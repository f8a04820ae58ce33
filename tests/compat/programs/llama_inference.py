"""A small LLaMA-style decoder trained briefly on arithmetic sequences, then sampled from.

nn.RMSNorm vs a hand-written one, rotary embeddings as complex numbers (polar, view_as_complex)
and in the real rotate-half form, SwiGLU, grouped-query attention (repeat_interleave, expand,
sdpa with enable_gqa / is_causal / a padding mask), a KV cache (index_copy_, slices, cat), weight
tying, AdamW groups + LambdaLR cosine + clipping + accumulation, greedy / temperature / top-k /
top-p sampling with a Generator, a repetition penalty, inference_mode, bfloat16, and mistakes.
"""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, HEADS, KV_HEADS, LAYERS, MAX_LEN = 32, 32, 4, 2, 2, 24
HEAD_DIM = DIM // HEADS


def precompute_freqs(head_dim, length, theta=10000.0):
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim)
    angles = torch.outer(torch.arange(length, dtype=torch.float32), inv)
    return torch.polar(torch.ones_like(angles), angles)  # complex64, (length, head_dim/2)


def rope_complex(x, freqs):
    """x: (B, T, H, D); rotate consecutive pairs by multiplying with unit complex numbers."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3)
    return out.type_as(x)


def rope_real(x, freqs):
    """The same rotation with real numbers: x * cos + rotate_half(x) * sin, pairwise."""
    cos = freqs.real.repeat_interleave(2, dim=-1)[None, :, None, :]
    sin = freqs.imag.repeat_interleave(2, dim=-1)[None, :, None, :]
    rotated = torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)
    return x * cos + rotated * sin


def manual_rms_norm(x, weight, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class Attention(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        if heads % kv_heads != 0:
            raise ValueError(f"heads ({heads}) must be a multiple of kv_heads ({kv_heads})")
        self.heads, self.kv_heads = heads, kv_heads
        self.wq = nn.Linear(dim, heads * HEAD_DIM, bias=False)
        self.wkv = nn.Linear(dim, 2 * kv_heads * HEAD_DIM, bias=False)
        self.wo = nn.Linear(heads * HEAD_DIM, dim, bias=False)

    def forward(self, x, freqs, start=0, use_cache=False):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.heads, HEAD_DIM)
        k, v = self.wkv(x).view(B, T, 2, self.kv_heads, HEAD_DIM).unbind(2)
        q, k = rope_complex(q, freqs[start:start + T]), rope_complex(k, freqs[start:start + T])
        if use_cache:
            self.cache_k.index_copy_(1, torch.arange(start, start + T), k)
            self.cache_v[:, start:start + T] = v
            k, v = self.cache_k[:, : start + T], self.cache_v[:, : start + T]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1, enable_gqa=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.ffn_norm = nn.RMSNorm(DIM, eps=1e-6), nn.RMSNorm(DIM, eps=1e-6)
        self.attn = Attention(DIM, HEADS, KV_HEADS)
        self.w1, self.w3 = nn.Linear(DIM, 64, bias=False), nn.Linear(DIM, 64, bias=False)
        self.w2 = nn.Linear(64, DIM, bias=False)

    def forward(self, x, freqs, start=0, use_cache=False):
        x = x + self.attn(self.attn_norm(x), freqs, start, use_cache)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))  # SwiGLU


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.RMSNorm(DIM, eps=1e-6)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.embed.weight  # weight tying
        self.register_buffer("freqs", precompute_freqs(HEAD_DIM, MAX_LEN), persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def reset_cache(self, batch):
        for a in (layer.attn for layer in self.layers):
            a.cache_k = torch.zeros(batch, MAX_LEN, a.kv_heads, HEAD_DIM)
            a.cache_v = torch.zeros_like(a.cache_k)

    def forward(self, idx, start=0, use_cache=False):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x, self.freqs, start, use_cache)
        return self.head(self.norm(x))


# -- building blocks checked against each other ---------------------------------------
x = torch.randn(2, 5, DIM)
ref = nn.RMSNorm(DIM, eps=1e-6)
print(ref, tuple(ref.normalized_shape),
      f"rmsnorm diff < 1e-6: {(ref(x) - manual_rms_norm(x, ref.weight)).abs().max().item() < 1e-6}")
plain = nn.RMSNorm([5, DIM], elementwise_affine=False)
print(plain, plain.eps, f"F.rms_norm {F.rms_norm(x, (DIM,), eps=1e-6)[0, 0, 0].item():.4f} "
      f"plain {plain(x)[1, 2, :3].tolist()[0]:.4f} {plain(x).pow(2).mean().item():.4f}")
freqs = precompute_freqs(HEAD_DIM, MAX_LEN)
print(freqs.dtype, tuple(freqs.shape), f"{freqs[3, 1].real:.4f} {freqs[3, 1].imag:.4f}",
      f"|freqs| {freqs.abs().mean().item():.4f}  angle {freqs.angle()[5, 0].item():.4f}")
q = torch.randn(2, 6, HEADS, HEAD_DIM)
rc, rr = rope_complex(q, freqs[:6]), rope_real(q, freqs[:6])
print(f"rope complex vs real < 1e-6: {(rc - rr).abs().max().item() < 1e-6}, norms kept "
      f"{torch.allclose(rc.norm(dim=-1), q.norm(dim=-1), atol=1e-5)}",
      torch.view_as_real(freqs).shape, freqs.is_complex())
kv = torch.randn(2, KV_HEADS, 6, HEAD_DIM)
cache = torch.zeros(2, KV_HEADS, 8, HEAD_DIM)
cache[:, :, :4] = kv[:, :, :4]
cache.index_copy_(2, torch.tensor([4, 5]), kv[:, :, 4:])
grown = torch.cat([kv[:, :, :4], kv[:, :, 4:]], dim=2)
print("cache index_copy_ == cat:", torch.equal(cache[:, :, :6], grown), cache[:, :, 6:].sum())
a = kv.repeat_interleave(HEADS // KV_HEADS, dim=1)
b = kv[:, :, None].expand(2, KV_HEADS, HEADS // KV_HEADS, 6, HEAD_DIM).reshape(a.shape)
print("repeat_interleave == expand+reshape:", torch.equal(a, b), tuple(a.shape))
qh = q.transpose(1, 2)
mask = torch.triu(torch.full((6, 6), float("-inf")), diagonal=1)
manual = torch.softmax(qh @ a.transpose(-2, -1) / math.sqrt(HEAD_DIM) + mask, dim=-1) @ a
fused = F.scaled_dot_product_attention(qh, kv, kv, is_causal=True, enable_gqa=True)
print(f"sdpa gqa vs manual {(fused - manual).abs().max().item() < 1e-5}, {mask[1, :3].tolist()}")
pad = torch.tensor([[False, False, True, True, True, True], [True] * 6])  # left padding
allowed = torch.ones(6, 6, dtype=torch.bool).tril() & pad[:, None, None, :]  # padded rows: none
masked = F.scaled_dot_product_attention(qh, a, a, attn_mask=allowed, scale=0.5)
dropped = F.scaled_dot_product_attention(qh, a, a, attn_mask=allowed, dropout_p=0.5)
print("padded sdpa", tuple(masked.shape), f"{masked[0, 1, 3, 2]:.4f} {masked[1, 3, 5].sum():.4f}",
      masked[0, :, :2].abs().sum().item(), dropped[0, :, :2].abs().sum().item())

# -- training: predict the next token of arithmetic sequences -----------------------------
model = Llama()
print(len(model.state_dict()), "state_dict keys;", "freqs" in model.state_dict(),
      sorted(model.state_dict())[:3], "tied:", model.head.weight is model.embed.weight)
decay = [p for p in model.parameters() if p.dim() >= 2]  # no weight decay on norm weights
no_decay = [p for p in model.parameters() if p.dim() < 2]
print(f"params {sum(p.numel() for p in model.parameters())}, "
      f"unique storages {len({p.data_ptr() for p in model.parameters()})}, "
      f"decay {len(decay)} tensors, no decay {len(no_decay)} tensors")
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0}], lr=1e-2, betas=(0.9, 0.95))
STEPS, WARMUP, ACCUM = 40, 5, 2
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / WARMUP if s < WARMUP
    else 0.5 * (1 + math.cos(math.pi * (s - WARMUP) / (STEPS - WARMUP))))
gen = torch.Generator().manual_seed(1)
for step in range(STEPS):
    for _ in range(ACCUM):  # sequences start + k * stride (mod VOCAB)
        first = torch.randint(0, VOCAB, (8, 1), generator=gen)
        seq = (first + torch.randint(1, 4, (8, 1), generator=gen) * torch.arange(17)) % VOCAB
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1)) / ACCUM
        loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    sched.step()
    if step % 10 == 0 or step == STEPS - 1:
        print(f"step {step:2d} loss {loss.item() * ACCUM:.4f} grad norm {norm.item():.4f} "
              f"lr {sched.get_last_lr()[0]:.6f}")

# -- generation ---------------------------------------------------------------------
model.eval()
prompt = torch.tensor([[2, 5, 8, 11], [7, 8, 9, 10]])
with torch.inference_mode():
    full = model(prompt)
    ids = prompt
    for _ in range(5):  # greedy decoding without a cache: the whole prefix each step
        ids = torch.cat([ids, model(ids)[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    print("greedy:", ids.tolist(), "inference:", full.is_inference(), full.requires_grad)
    with torch.inference_mode(False):  # e.g. a scoring pass that needs gradients
        print("grad enabled again:", torch.is_grad_enabled(), model(prompt).requires_grad)
    model.reset_cache(2)
    cached = model(prompt, start=0, use_cache=True)
    print(f"cache prefill matches {torch.allclose(full, cached, atol=1e-5)}")
    logits = cached[:, -1]
    out = [logits.argmax(-1)]
    for t in range(4, 9):
        logits = model(out[-1][:, None], start=t, use_cache=True)[:, -1]
        out.append(logits.argmax(-1))
    print("greedy with cache:", torch.stack(out, 1).tolist())
    g = torch.Generator().manual_seed(42)
    probs = F.softmax(logits / 0.8, dim=-1)
    print("temperature:", torch.multinomial(probs, 3, replacement=True, generator=g).tolist())
    top_v, top_i = torch.topk(logits, k=5, dim=-1)
    print("top-5 ids:", top_i.tolist(), [f"{v:.4f}" for v in top_v[0].tolist()])
    topk_logits = logits.masked_fill(logits < top_v[:, -1, None], float("-inf"))
    print("top-k sample:", torch.multinomial(topk_logits.softmax(-1), 1, generator=g).tolist())
    sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
    sorted_probs = sorted_logits.softmax(-1)
    cum = sorted_probs.cumsum(-1)  # drop a token once the ones before it hold 90%
    remove = torch.zeros_like(remove := cum - sorted_probs > 0.9).scatter(1, sorted_idx, remove)
    nucleus = logits.masked_fill(remove, float("-inf")).softmax(-1)
    print("top-p kept:", (~remove).sum(-1).tolist(), [f"{c:.4f}" for c in cum[0, :3].tolist()],
          "sampled", torch.multinomial(nucleus, 2, generator=g).tolist())
    state = g.get_state()
    first = torch.multinomial(probs[0], 4, generator=g)
    g.set_state(state)
    print("replayed:", first.tolist(), torch.equal(first, probs[0].multinomial(4, generator=g)))
    logp = F.log_softmax(model(ids[:, :-1]), dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    print(f"greedy sequence log-likelihood {logp.sum(-1).tolist()[0]:.4f}, "
          f"perplexity {torch.exp(-logp.mean()).item():.4f}")
    scores = torch.gather(logits, 1, ids)  # repetition penalty on every token seen so far
    penalised = logits.scatter(1, ids, torch.where(scores < 0, scores * 1.3, scores / 1.3))
    print(f"penalty: {logits[0, ids[0, 0]].item():.4f} -> {penalised[0, ids[0, 0]].item():.4f}")

    half = copy.deepcopy(model).to(torch.bfloat16)  # (the complex freqs buffer would lose
    half.freqs = model.freqs  # its imaginary part: keep the float32 one)
    lb = half(prompt)
    # (2 decimals: a trained float32 weight one ulp from a bfloat16 tie rounds either way)
    print(lb.dtype, half.embed.weight.dtype, half.head.weight is half.embed.weight,
          [f"{v:.2f}" for v in lb[1, -1, :4].tolist()])
    print(f"bf16 vs fp32 max logit diff < 0.25: {(lb.float() - full).abs().max().item() < 0.25}, "
          f"argmax agree {(lb.argmax(-1) == full.argmax(-1)).float().mean().item():.2f}")

# -- mistakes ---------------------------------------------------------------------------
small = torch.zeros(1, 4, 2)
mistakes = [
    ("heads not a multiple of kv heads", lambda: Attention(DIM, 6, 4)),
    ("sdpa gqa heads", lambda: F.scaled_dot_product_attention(
        torch.randn(1, 6, 3, 8), torch.randn(1, 4, 3, 8), torch.randn(1, 4, 3, 8),
        enable_gqa=True)),
    ("view_as_complex last dim 4", lambda: torch.view_as_complex(torch.randn(3, 4))),
    ("view_as_complex non-contiguous", lambda: torch.view_as_complex(torch.randn(2, 3).t())),
    ("multinomial negative", lambda: torch.multinomial(torch.tensor([0.5, -0.1, 0.6]), 1)),
    ("multinomial too many", lambda: torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 4)),
    ("multinomial all zero", lambda: torch.multinomial(torch.zeros(3), 1)),
    ("cache overflow", lambda: small.index_copy_(1, torch.tensor([4]), torch.ones(1, 1, 2))),
    ("cache slice shape", lambda: small.__setitem__((slice(None), slice(2, 6)), small + 1)),
    ("inference tensor backward", lambda: full.requires_grad_()),
    ("rmsnorm shape", lambda: nn.RMSNorm(DIM)(torch.randn(2, DIM + 1))),
    ("rms_norm int shape", lambda: F.rms_norm(x, DIM)),
    ("int attention mask", lambda: F.scaled_dot_product_attention(
        qh, a, a, attn_mask=torch.ones(6, 6, dtype=torch.long))),
    ("cache source shape", lambda: cache.index_copy_(2, torch.tensor([6]), kv)),
]
for what, fn in mistakes:
    try:
        fn()
        print(what, "-> no error")
    except Exception as e:
        print(f"{what}: {type(e).__name__}: {e}")
