"""The attention zoo: scaled_dot_product_attention with all its arguments, the SDPA
backend context and causal biases, nn.MultiheadAttention, rotary embeddings, ALiBi,
sliding-window and block-sparse masks, grouped-query attention, a KV cache and a tiny
causal language model, with the mistakes people make along the way."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.manual_seed(0)
sdpa = F.scaled_dot_product_attention


def fmt(t, digits=4):
    """A tensor's values, flattened, with `digits` significant digits."""
    return "[" + ", ".join(f"{v:.{digits}g}" for v in t.detach().flatten().tolist()) + "]"


def reference_attention(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + bias) v, written out by hand."""
    L, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        scores = scores.masked_fill(~keep, float("-inf"))
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v


def report(name, got, want):
    err = (got - want).abs().max().item()
    print(f"{name}: shape={tuple(got.shape)} close={torch.allclose(got, want, atol=1e-5)} "
          f"maxerr<1e-5={err < 1e-5}")


def show_error(label, fn):
    try:
        fn()
        print(f"{label}: no error")
    except Exception as e:  # noqa: BLE001 (printing what the user sees)
        print(f"{label}: {type(e).__name__}: {str(e).splitlines()[0]}")


print("== scaled_dot_product_attention ==")
N, H, L, S, E = 2, 4, 5, 7, 8
q = torch.randn(N, H, L, E)
k = torch.randn(N, H, S, E)
v = torch.randn(N, H, S, E)
out = F.scaled_dot_product_attention(q, k, v)
report("plain", out, reference_attention(q, k, v))
print("plain[0,0,0]:", fmt(out[0, 0, 0]))

bool_mask = torch.rand(L, S) > 0.3
bool_mask[:, 0] = True
out = sdpa(q, k, v, attn_mask=bool_mask)
report("bool mask (L,S)", out, reference_attention(q, k, v, mask=bool_mask))

float_mask = torch.randn(N, 1, L, S)
out = sdpa(q, k, v, attn_mask=float_mask)
report("float mask (N,1,L,S)", out, reference_attention(q, k, v, mask=float_mask))
print("float mask out[1,2,4]:", fmt(out[1, 2, 4]))

bool4 = torch.rand(N, 1, L, S) > 0.5
bool4[..., 0] = True
out = sdpa(q, k, v, attn_mask=bool4)
report("bool mask (N,1,L,S)", out, reference_attention(q, k, v, mask=bool4))

out = sdpa(q, k, v, is_causal=True)
report("is_causal L!=S (upper-left)", out, reference_attention(q, k, v, causal=True))
print("causal row 0 equals v[...,0,:]:", torch.allclose(out[:, :, 0], v[:, :, 0]))

out = sdpa(q, k, v, scale=0.5)
report("scale=0.5", out, reference_attention(q, k, v, scale=0.5))

# fully masked rows: a boolean mask row of all False
dead = torch.ones(L, S, dtype=torch.bool)
dead[2] = False
out = sdpa(q, k, v, attn_mask=dead)
print("fully masked row (bool, 4-D):", fmt(out[0, 0, 2]))
ref = reference_attention(q, k, v, mask=dead)
print("reference softmax gives nan:", torch.isnan(ref[0, 0, 2]).all().item())
out3 = sdpa(q[0], k[0], v[0], attn_mask=dead)
print("fully masked row (bool, 3-D):", fmt(out3[0, 2]))
neg = torch.zeros(L, S)
neg[2] = float("-inf")
out = sdpa(q, k, v, attn_mask=neg)
print("fully masked row (-inf float):", fmt(out[0, 0, 2]))

# dropout in training: the same seed gives the same mask
torch.manual_seed(123)
d1 = sdpa(q, k, v, dropout_p=0.5)
torch.manual_seed(123)
d2 = sdpa(q, k, v, dropout_p=0.5)
print("dropout reproducible with seed:", torch.equal(d1, d2))
print("dropout differs from no-dropout:", not torch.allclose(d1, sdpa(q, k, v)))
g = torch.Generator().manual_seed(7)
keep = (torch.rand(N, H, L, S, generator=g) >= 0.25).float() / 0.75
manual = (torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(E), -1) * keep) @ v
print("manual dropout with generator out[0,0,0]:", fmt(manual[0, 0, 0]))

# grouped-query attention: 8 query heads sharing 2 kv heads
qg = torch.randn(N, 8, L, E)
kg = torch.randn(N, 2, S, E)
vg = torch.randn(N, 2, S, E)
out = sdpa(qg, kg, vg, enable_gqa=True)
ref = reference_attention(qg, kg.repeat_interleave(4, dim=1), vg.repeat_interleave(4, dim=1))
report("enable_gqa 8q/2kv", out, ref)
ref_expand = reference_attention(
    qg, kg[:, :, None].expand(N, 2, 4, S, E).reshape(N, 8, S, E),
    vg[:, :, None].expand(N, 2, 4, S, E).reshape(N, 8, S, E))
print("repeat_interleave == expand+reshape:", torch.allclose(ref, ref_expand))

print("== sdpa_kernel / SDPBackend ==")
print("backend:", SDPBackend.MATH, int(SDPBackend.MATH), SDPBackend.FLASH_ATTENTION.name)
print("enabled:", torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
with sdpa_kernel(SDPBackend.MATH):
    print("inside MATH:", torch.backends.cuda.flash_sdp_enabled(),
          torch.backends.cuda.math_sdp_enabled())
print("restored:", torch.backends.cuda.flash_sdp_enabled())


@sdpa_kernel(SDPBackend.MATH)
def math_only_attention(q, k, v):
    return sdpa(q, k, v)


qr = q.detach().requires_grad_()
print("decorated grad_fn:", math_only_attention(qr, k, v).grad_fn.name())
print("default grad_fn:", sdpa(qr, k, v).grad_fn.name())
with sdpa_kernel(SDPBackend.MATH):
    out_math = sdpa(q, k, v, attn_mask=float_mask)
with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
    out_any = sdpa(q, k, v, attn_mask=float_mask)
print("MATH vs default close:", torch.allclose(out_math, out_any, atol=1e-6))
with sdpa_kernel(SDPBackend.MATH):
    out = sdpa(q, k, v, attn_mask=dead)
print("MATH fully masked row:", fmt(out[0, 0, 2]))

try:
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    ul = causal_upper_left(L, S)
    lr = causal_lower_right(L, S)
    out_ul = sdpa(q, k, v, attn_mask=ul)
    out_lr = sdpa(q, k, v, attn_mask=lr)
    report("causal_upper_left", out_ul, reference_attention(q, k, v, causal=True))
    lr_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)
    report("causal_lower_right", out_lr, reference_attention(q, k, v, mask=lr_mask))
    print("lower_right mask row 0 count:", int(lr_mask[0].sum()))
    print(lr)
    print("variant:", lr.variant, lr.seq_len_q, lr.seq_len_kv)
except ImportError as e:
    print("no causal bias:", e)

print("== nn.MultiheadAttention ==")
torch.manual_seed(1)
mha = nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True)
print("in_proj_weight:", tuple(mha.in_proj_weight.shape),
      "in_proj_bias:", tuple(mha.in_proj_bias.shape))
print("out_proj:", mha.out_proj)
print("params:", sum(p.numel() for p in mha.parameters()))
print("named:", [n for n, _ in mha.named_parameters()])
x = torch.randn(3, 6, 16)
out, w = mha(x, x, x)
print("self-attn out", tuple(out.shape), "weights", tuple(w.shape))
print("weights rows sum to 1:", torch.allclose(w.sum(-1), torch.ones(3, 6)))
print("out[0,0,:4]:", fmt(out[0, 0, :4]))

# the same computation by hand from the parameters
Wq, Wk, Wv = mha.in_proj_weight.chunk(3)
bq, bk, bv = mha.in_proj_bias.chunk(3)
def heads(t):
    return t.view(3, 6, 4, 4).transpose(1, 2)
Q, K, V = heads(x @ Wq.T + bq), heads(x @ Wk.T + bk), heads(x @ Wv.T + bv)
att = torch.softmax(Q @ K.transpose(-2, -1) / 2.0, dim=-1)
manual = mha.out_proj((att @ V).transpose(1, 2).reshape(3, 6, 16))
print("manual == module:", torch.allclose(manual, out, atol=1e-5),
      "avg weights match:", torch.allclose(att.mean(1), w, atol=1e-6))

_, w_all = mha(x, x, x, average_attn_weights=False)
print("per-head weights:", tuple(w_all.shape), torch.allclose(w_all.mean(1), w, atol=1e-6))
out_nw, w_none = mha(x, x, x, need_weights=False)
print("need_weights=False ->", w_none, torch.allclose(out_nw, out, atol=1e-5))

kpm = torch.zeros(3, 6, dtype=torch.bool)
kpm[0, 4:] = True
kpm[2, 1:3] = True
out, w = mha(x, x, x, key_padding_mask=kpm)
print("bool key_padding_mask weight on padded keys:", w[0, :, 4:].abs().max().item())
kpm_f = torch.zeros(3, 6).masked_fill(kpm, float("-inf"))
out_f, w_f = mha(x, x, x, key_padding_mask=kpm_f)
print("float kpm == bool kpm:", torch.allclose(out, out_f, atol=1e-6))

causal = nn.Transformer.generate_square_subsequent_mask(6)
print("square subsequent mask row 1:", causal[1].tolist())
out_c, w_c = mha(x, x, x, attn_mask=causal)
print("causal upper triangle zero:", w_c.triu(1).abs().max().item())
out_ic, _ = mha(x, x, x, attn_mask=causal, is_causal=True)
print("is_causal with mask equal:", torch.allclose(out_c, out_ic, atol=1e-6))
bool_causal = torch.ones(6, 6, dtype=torch.bool).triu(1)
out_b, _ = mha(x, x, x, attn_mask=bool_causal)
print("bool attn_mask == float:", torch.allclose(out_b, out_c, atol=1e-6))
mask3 = torch.zeros(3 * 4, 6, 6)
mask3[:, :, 0] = -1e4
out3, w3 = mha(x, x, x, attn_mask=mask3)
print("3-d mask first key weight max:", f"{w3[..., 0].max().item():.4g}")

torch.manual_seed(2)
cross = nn.MultiheadAttention(16, 2, kdim=10, vdim=12, batch_first=True)
print("kdim/vdim params:", [(n, tuple(p.shape)) for n, p in cross.named_parameters()])
mem_k, mem_v = torch.randn(3, 9, 10), torch.randn(3, 9, 12)
out, w = cross(x, mem_k, mem_v)
print("cross out", tuple(out.shape), "w", tuple(w.shape), "out[1,2,:3]:", fmt(out[1, 2, :3]))

torch.manual_seed(3)
extra = nn.MultiheadAttention(16, 4, add_bias_kv=True, add_zero_attn=True)
print("bias_k", tuple(extra.bias_k.shape), "bias_v", tuple(extra.bias_v.shape))
xs = torch.randn(6, 3, 16)  # (L, N, E): sequence first
out, w = extra(xs, xs, xs)
print("bias_kv+zero_attn out", tuple(out.shape), "w", tuple(w.shape))
print("weights on zero key:", fmt(w[0, :3, -1]))

# eval mode fast path must agree with the slow path
mha.eval()
with torch.no_grad():
    fast, _ = mha(x, x, x, need_weights=False)
    slow, _ = mha(x, x, x, need_weights=True)
    fast_kpm, _ = mha(x, x, x, key_padding_mask=kpm, need_weights=False)
    slow_kpm, _ = mha(x, x, x, key_padding_mask=kpm, need_weights=True)
print("eval fast == slow:", torch.allclose(fast, slow, atol=1e-5),
      "with padding:", torch.allclose(fast_kpm, slow_kpm, atol=1e-5))
mha.train()

print("== rotary embeddings ==")
def rope_freqs(dim, T, base=10000.0):
    inv = 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)
    angles = torch.outer(torch.arange(T).float(), inv)
    return torch.polar(torch.ones_like(angles), angles)

def rope_complex(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2).type_as(x)

def rope_rotate_half(x, T, base=10000.0):
    dim = x.shape[-1]
    inv = 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)
    angles = torch.outer(torch.arange(T).float(), inv)
    emb = torch.cat([angles, angles], dim=-1)
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    return x * emb.cos() + torch.cat([-x2, x1], dim=-1) * emb.sin()

T = 6
freqs = rope_freqs(E, T)
print("freqs dtype:", freqs.dtype, "shape:", tuple(freqs.shape),
      "abs==1:", torch.allclose(freqs.abs(), torch.ones(T, E // 2)))
xq = torch.randn(1, 2, T, E)
rq = rope_complex(xq, freqs)
print("rope complex norm kept:", torch.allclose(rq.norm(dim=-1), xq.norm(dim=-1), atol=1e-5))
print("rope complex pos 3:", fmt(rq[0, 0, 3]))
# interleaved pairs vs halves: permute the features to turn one into the other
perm = torch.cat([torch.arange(0, E, 2), torch.arange(1, E, 2)])
rh = rope_rotate_half(xq[..., perm], T)
print("rotate-half == complex (permuted):", torch.allclose(rh, rq[..., perm], atol=1e-5))
# relative property: <rope(q, m), rope(k, n)> depends only on m - n
a, b = torch.randn(E), torch.randn(E)
ra = rope_complex(a.expand(T, E), freqs)
rb = rope_complex(b.expand(T, E), freqs)
print("relative position:", f"{(ra[3] @ rb[1]).item():.5g}", f"{(ra[5] @ rb[3]).item():.5g}")

# a learned magnitude through torch.polar (its abs gradient carries sign(abs))
mag = torch.tensor([1.5, -0.5, 0.0, 2.0], requires_grad=True)
phase = torch.tensor([0.3, 1.1, -0.7, 2.0], requires_grad=True)
z = torch.polar(mag, phase)
(z * torch.tensor([1 + 2j, -1j, 3.0, 0.5 - 0.5j])).real.sum().backward()
print("polar", z.grad_fn.name(), "d mag:", fmt(mag.grad), "d phase:", fmt(phase.grad))

print("== ALiBi ==")
def alibi_slopes(n):
    start = 2 ** (-8 / n)
    return torch.tensor([start ** (i + 1) for i in range(n)])

slopes = alibi_slopes(H)
print("slopes:", fmt(slopes))
pos = torch.arange(L)
rel = (pos[None, :] - pos[:, None]).float()
alibi = slopes[:, None, None] * rel[None]
alibi = alibi.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
qa, ka, va = torch.randn(N, H, L, E), torch.randn(N, H, L, E), torch.randn(N, H, L, E)
out = sdpa(qa, ka, va, attn_mask=alibi)
report("alibi (H,L,L)", out, reference_attention(qa, ka, va, mask=alibi))
print("alibi out[0,3,4]:", fmt(out[0, 3, 4]))

print("== sliding window & block sparse ==")
T, W, B = 8, 3, 4
i = torch.arange(T)[:, None]
j = torch.arange(T)[None, :]
window = (j <= i) & (j > i - W)
print("window counts:", window.sum(-1).tolist())
band = torch.ones(T, T, dtype=torch.bool).tril() & ~torch.ones(T, T, dtype=torch.bool).tril(-W)
print("tril/triu band == comparison:", torch.equal(window, band))
block = (i // B == j // B) | (j % B == 0)
block &= j <= i
print("block-sparse density:", f"{block.float().mean().item():.4f}")
print(block.int())
qs, ks, vs = torch.randn(1, 2, T, E), torch.randn(1, 2, T, E), torch.randn(1, 2, T, E)
for name, m in [("window", window), ("block", block)]:
    o = sdpa(qs, ks, vs, attn_mask=m)
    report(f"{name} mask", o, reference_attention(qs, ks, vs, mask=m))

print("== half precision with finfo.min masks ==")
for dtype in (torch.float16, torch.bfloat16):
    qh, kh, vh = (t.to(dtype) for t in (qs, ks, vs))
    big_neg = torch.finfo(dtype).min
    bias = torch.zeros(T, T, dtype=dtype).masked_fill(~window, big_neg)
    oh = sdpa(qh, kh, vh, attn_mask=bias)
    print(dtype, "min:", big_neg, "out dtype:", oh.dtype, "row 5:", fmt(oh[0, 1, 5].float()))
    print("  3-D:", fmt(sdpa(qh[0], kh[0], vh[0], attn_mask=bias)[1, 5].float()))

print("== float mask gradient ==")
learned_bias = torch.zeros(L, S, requires_grad=True)
qb = q.detach().requires_grad_()
sdpa(qb, k, v, attn_mask=learned_bias).pow(2).sum().backward()
print("d bias row 0:", fmt(learned_bias.grad[0]))
print("d q[0,0,0]:", fmt(qb.grad[0, 0, 0]))

print("== layouts ==")
# (B, T, H, D) projections transposed to (B, H, T, D): non-contiguous inputs
qt = torch.randn(2, 5, 4, 8).transpose(1, 2)
kt = torch.randn(2, 7, 4, 8).transpose(1, 2)
vt = torch.randn(2, 7, 4, 8).transpose(1, 2)
print("contiguous:", qt.is_contiguous(), "out:", fmt(sdpa(qt, kt, vt)[1, 2, 3]))
print("matches contiguous:",
      torch.allclose(sdpa(qt, kt, vt), sdpa(qt.contiguous(), kt.contiguous(), vt.contiguous())))
empty_k = torch.zeros(2, 4, 0, 8)
oe = sdpa(qt, empty_k, empty_k)
print("no keys yet:", tuple(oe.shape), oe.abs().sum().item())

print("== multi-query attention ==")
mq = torch.randn(N, H, L, E)
mk, mv = torch.randn(N, 1, S, E), torch.randn(N, 1, S, E)
out = sdpa(mq, mk.expand(N, H, S, E), mv.expand(N, H, S, E))
print("MQA via broadcast == expand:",
      torch.allclose(out, reference_attention(mq, mk, mv), atol=1e-5))
out_gqa = sdpa(mq, mk, mv, enable_gqa=True)
print("MQA via enable_gqa:", torch.allclose(out, out_gqa, atol=1e-5))
qg2 = torch.randn(1, 4, 3, 8, requires_grad=True)
kg2 = torch.randn(1, 2, 5, 8, requires_grad=True)
vg2 = torch.randn(1, 2, 5, 8, requires_grad=True)
og = sdpa(qg2, kg2, vg2, enable_gqa=True)
og.pow(2).sum().backward()
print("gqa grad_fn:", og.grad_fn.name(), "dk[0,1,4]:", fmt(kg2.grad[0, 1, 4]))
print("dv[0,0,0]:", fmt(vg2.grad[0, 0, 0]))

print("== KV cache ==")
torch.manual_seed(4)
T, D = 6, 8
xq_, xk_, xv_ = torch.randn(1, 2, T, D), torch.randn(1, 2, T, D), torch.randn(1, 2, T, D)
full = sdpa(xq_, xk_, xv_, is_causal=True)
k_cache = torch.zeros(1, 2, T, D)
v_cache = torch.zeros(1, 2, T, D)
steps = []
for t in range(T):
    k_cache.index_copy_(2, torch.tensor([t]), xk_[:, :, t:t + 1])
    v_cache[:, :, t:t + 1] = xv_[:, :, t:t + 1]
    step = sdpa(xq_[:, :, t:t + 1], k_cache[:, :, :t + 1], v_cache[:, :, :t + 1])
    steps.append(step)
inc = torch.cat(steps, dim=2)
print("cache filled:", torch.equal(k_cache, xk_), torch.equal(v_cache, xv_))
print("incremental == full causal:", torch.allclose(inc, full, atol=1e-6))
print("last step:", fmt(inc[0, 1, -1]))
# prefill 4 then decode 2 with a lower-right causal mask
pre = sdpa(xq_[:, :, 4:], xk_, xv_,
                                     attn_mask=torch.ones(2, T, dtype=torch.bool).tril(T - 2))
print("decode chunk == full rows:", torch.allclose(pre, full[:, :, 4:], atol=1e-6))
with torch.inference_mode():
    kc = torch.empty(1, 2, 0, D)
    vc = torch.empty(1, 2, 0, D)
    outs = []
    for t in range(T):
        kc = torch.cat([kc, xk_[:, :, t:t + 1]], dim=2)
        vc = torch.cat([vc, xv_[:, :, t:t + 1]], dim=2)
        outs.append(sdpa(xq_[:, :, t:t + 1], kc, vc))
    cat_out = torch.cat(outs, dim=2)
print("cat cache:", tuple(kc.shape), kc.is_inference(), torch.allclose(cat_out, full, atol=1e-6))

print("== gradients through attention ==")
torch.manual_seed(5)
qq = torch.randn(1, 2, 4, 4, requires_grad=True)
kk = torch.randn(1, 2, 4, 4, requires_grad=True)
vv = torch.randn(1, 2, 4, 4, requires_grad=True)
scores = qq @ kk.transpose(-2, -1) / 2.0
print("grad_fns:", type(scores).__name__, scores.grad_fn.name(),
      scores.grad_fn.next_functions[0][0].name())
future = torch.ones(4, 4, dtype=torch.bool).triu(1)
attn = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
print("softmax grad_fn:", attn.grad_fn.name())
o = attn @ vv
print("out grad_fn:", o.grad_fn.name())
o.pow(2).sum().backward()
g_manual = [t.grad.clone() for t in (qq, kk, vv)]
for t in (qq, kk, vv):
    t.grad = None
with sdpa_kernel(SDPBackend.MATH):
    o2 = sdpa(qq, kk, vv, is_causal=True)
o2.pow(2).sum().backward()
print("sdpa grads == manual:",
      all(torch.allclose(t.grad, gm, atol=1e-5) for t, gm in zip((qq, kk, vv), g_manual)))
print("dq[0,0,1]:", fmt(qq.grad[0, 0, 1]))
print("dv[0,1,3]:", fmt(vv.grad[0, 1, 3]))
# finite difference check on one entry of q (double precision)
qd, kd, vd = qq.detach().double(), kk.detach().double(), vv.detach().double()
def loss_fn(qx):
    return sdpa(qx, kd, vd, is_causal=True).pow(2).sum()
eps = 1e-6
bump = torch.zeros_like(qd)
bump[0, 0, 2, 1] = eps
fd = (loss_fn(qd + bump) - loss_fn(qd - bump)) / (2 * eps)
print("finite difference agrees:", abs(fd.item() - qq.grad[0, 0, 2, 1].item()) < 1e-4)

print("== tiny causal LM ==")
torch.manual_seed(6)


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.h = h

    def forward(self, x):
        Bt, Tt, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(Bt, Tt, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = sdpa(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(Bt, Tt, C))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=11, d=16, h=2, T=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, T, d))
        self.block = Block(d, h)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # weight tying

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        return self.head(self.block(x))


lm = TinyLM()
print("LM params:", sum(p.numel() for p in lm.parameters()))
opt = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.1)
data = torch.randint(0, 11, (4, 9))
for step in range(6):
    logits = lm(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(lm.parameters(), max_norm=1.0)
    opt.step()
    print(f"step {step} loss {loss.item():.5f} grad_norm {norm.item():.5f}")
with torch.no_grad():
    lm.eval()
    ctx = data[:1, :3]
    for _ in range(4):
        nxt = lm(ctx)[:, -1].argmax(-1, keepdim=True)
        ctx = torch.cat([ctx, nxt], dim=1)
print("greedy:", ctx.tolist())

print("== typical mistakes ==")
show_error("mask wrong shape", lambda: sdpa(q, k, v, attn_mask=torch.zeros(L, L)))
show_error("mask int dtype",
           lambda: sdpa(q, k, v, attn_mask=torch.ones(L, S, dtype=torch.int64)))
show_error("embed_dim % heads", lambda: nn.MultiheadAttention(10, 3))
show_error("kpm wrong shape",
           lambda: mha(x, x, x, key_padding_mask=torch.zeros(3, 5, dtype=torch.bool)))
show_error("attn_mask 2-d wrong size", lambda: mha(x, x, x, attn_mask=torch.zeros(5, 6)))
show_error("attn_mask 3-d wrong batch", lambda: mha(x, x, x, attn_mask=torch.zeros(3, 6, 6)))
show_error("gqa indivisible", lambda: sdpa(
    torch.randn(1, 6, 4, 8), torch.randn(1, 4, 4, 8), torch.randn(1, 4, 4, 8), enable_gqa=True))
show_error("heads mismatch no gqa", lambda: sdpa(
    torch.randn(1, 6, 4, 8), torch.randn(1, 3, 4, 8), torch.randn(1, 3, 4, 8)))
show_error("is_causal + attn_mask", lambda: sdpa(
    q, k, v, attn_mask=bool_mask, is_causal=True))
with sdpa_kernel(SDPBackend.MATH):
    show_error("is_causal + attn_mask (MATH)", lambda: sdpa(
        q, k, v, attn_mask=bool_mask, is_causal=True))
show_error("is_causal without mask (MHA)", lambda: mha(x, x, x, is_causal=True))
show_error("dtype mismatch", lambda: sdpa(q, k.double(), v))
show_error("head dim mismatch", lambda: sdpa(q, torch.randn(N, H, S, 6), v))
show_error("integer inputs", lambda: sdpa(q.long(), k.long(), v.long()))
show_error("dropout_p > 1", lambda: sdpa(q, k, v, dropout_p=1.5))
show_error("CausalBias + is_causal", lambda: sdpa(
    q, k, v, attn_mask=causal_upper_left(L, S), is_causal=True))
with sdpa_kernel(SDPBackend.MATH):
    show_error("values shorter than keys", lambda: sdpa(q, k, v[:, :, :6]))
