"""FlexAttention, attention-gym style, run eagerly on the CPU: block masks for causal,
sliding-window, prefix-LM and document masking (and their combinations), score mods for
ALiBi, a learned relative-position bias and tanh soft-capping, grouped-query attention,
the logsumexp, gradients to a captured bias table, and the mistakes people make."""

import math
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import (
    AuxRequest,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    noop_mask,
    or_masks,
)

torch.manual_seed(0)
B, H, S, D = 2, 4, 64, 16
BLOCK = 16


def fmt(t, digits=4):
    """A tensor's values, flattened, with `digits` significant digits."""
    return "[" + ", ".join(f"{v:.{digits}g}" for v in t.detach().flatten().tolist()) + "]"


def reference(q, k, v, bias=None, keep=None, scale=None):
    """softmax(q k^T * scale + bias, masked) v written out by hand."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if bias is not None:
        scores = scores + bias
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


q = torch.randn(B, H, S, D)
k = torch.randn(B, H, S, D)
v = torch.randn(B, H, S, D)

# --- the first call warns that it runs unfused
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = flex_attention(q, k, v)
flex_warnings = [w for w in caught if "torch.compile" in str(w.message)]
print("warnings:", len(flex_warnings), flex_warnings[0].category.__name__)
print("first line:", str(flex_warnings[0].message).splitlines()[0])
warnings.filterwarnings("ignore")
print("plain:", tuple(out.shape), out.dtype,
      torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5))


# --- mask_mods
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


WINDOW = 12


def sliding_window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= WINDOW


PREFIX = 20


def prefix(b, h, q_idx, kv_idx):
    return kv_idx < PREFIX


lengths = torch.tensor([[10, 30, 24], [40, 8, 16]])
document_id = torch.stack([torch.repeat_interleave(torch.arange(3), row) for row in lengths])


def same_document(b, h, q_idx, kv_idx):
    return document_id[b, q_idx] == document_id[b, kv_idx]


masks = {
    "causal": causal,
    "sliding_window": and_masks(causal, sliding_window),
    "prefix_lm": or_masks(prefix, causal),
    "document": and_masks(causal, same_document),
}
block_masks = {}
for name, mask_mod in masks.items():
    bm = create_block_mask(mask_mod, B if name == "document" else None, None, S, S,
                           device="cpu", BLOCK_SIZE=BLOCK)
    block_masks[name] = bm
    dense = create_mask(mask_mod, B if name == "document" else 1, 1, S, S, device="cpu")
    print(f"{name}: shape={bm.shape} sparsity={bm.sparsity():.2f}% kept={dense.sum().item()}"
          f" mask_mod={bm.mask_mod.__name__}")
    print("  kv_num_blocks", bm.kv_num_blocks.flatten().tolist(),
          "full", bm.full_kv_num_blocks.flatten().tolist())
    print("  kv_indices row 2", bm.kv_indices[0, 0, 2].tolist(),
          "q_num_blocks", bm.q_num_blocks[0, 0].tolist())
    keep = dense if name == "document" else dense[0, 0]
    out = flex_attention(q, k, v, block_mask=bm)
    print("  matches reference:", torch.allclose(out, reference(q, k, v, keep=keep),
                                                   atol=1e-5),
          "out[0,0,5,:4]", fmt(out[0, 0, 5, :4]))

print(block_masks["sliding_window"])
print(repr(block_masks["prefix_lm"]))
print(block_masks["document"][1].to_string(grid_size=(4, 4)))
print("dense blocks:", block_masks["causal"].to_dense()[0, 0].tolist())
print("noop:", create_mask(noop_mask, 1, 1, 2, 3, device="cpu").tolist())

# --- score_mods
slopes = torch.exp2(-torch.arange(1, H + 1) * 8.0 / H)


def alibi(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)


SOFTCAP = 2.0


def softcap(score, b, h, q_idx, kv_idx):
    return SOFTCAP * torch.tanh(score / SOFTCAP)


rel_bias = torch.zeros(2 * S - 1)
with torch.no_grad():
    rel_bias.copy_(torch.randn(2 * S - 1) * 0.5)
rel_bias.requires_grad_(True)


def relative_position(score, b, h, q_idx, kv_idx):
    return score + rel_bias[q_idx - kv_idx + S - 1]


pos = torch.arange(S)
out = flex_attention(q, k, v, score_mod=alibi, block_mask=block_masks["causal"])
want = reference(q, k, v, bias=slopes.view(H, 1, 1) * (pos.view(1, -1) - pos.view(-1, 1)),
                 keep=pos.view(-1, 1) >= pos.view(1, -1))
print("alibi+causal:", torch.allclose(out, want, atol=1e-5), fmt(out[1, 3, -1, :4]))

scale = 1.0 / math.sqrt(D)
out = flex_attention(q, k, v, score_mod=softcap)
scores = q @ k.transpose(-2, -1) * scale
want = torch.softmax(SOFTCAP * torch.tanh(scores / SOFTCAP), -1) @ v
print("softcap:", torch.allclose(out, want, atol=1e-5), fmt(out[0, 1, 7, :4]))

out, aux = flex_attention(q, k, v, score_mod=relative_position,
                          block_mask=block_masks["sliding_window"],
                          return_aux=AuxRequest(lse=True))
print("relative:", out.requires_grad, type(out.grad_fn).__name__,
      "lse", tuple(aux.lse.shape), aux.lse.dtype, aux.max_scores)
print("  lse[0,0,:6]", fmt(aux.lse[0, 0, :6]))
loss = out.square().mean() + 0.01 * aux.lse.mean()
loss.backward()
print("  loss", f"{loss.item():.5f}", "grad norm", f"{rel_bias.grad.norm().item():.5f}",
      "nonzero grads", (rel_bias.grad != 0).sum().item(), "of", rel_bias.numel())
print("  grad around 0:", fmt(rel_bias.grad[S - 4:S + 2]))

# a few steps of training the bias towards a target attention output
target = flex_attention(q, k, v, score_mod=alibi).detach()
opt = torch.optim.Adam([rel_bias], lr=0.05)
for step in range(3):
    opt.zero_grad()
    out = flex_attention(q, k, v, score_mod=relative_position)
    loss = F.mse_loss(out, target)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.5f}")

# --- grouped-query attention: 4 query heads share 2 (or 1) key/value heads
for hkv in (2, 1):
    kg, vg = k[:, :hkv], v[:, :hkv]
    out = flex_attention(q, kg, vg, block_mask=block_masks["causal"], enable_gqa=True)
    rep = H // hkv
    want = reference(q, kg.repeat_interleave(rep, 1), vg.repeat_interleave(rep, 1),
                     keep=pos.view(-1, 1) >= pos.view(1, -1))
    print(f"gqa Hkv={hkv}:", tuple(out.shape), torch.allclose(out, want, atol=1e-5))

# --- rows with nothing to attend to give zeros and a -inf logsumexp
def late_start(b, h, q_idx, kv_idx):
    return kv_idx >= 48


bm = create_block_mask(and_masks(causal, late_start), 1, 1, S, S, device="cpu",
                       BLOCK_SIZE=BLOCK)
out, lse = flex_attention(q[:1, :1], k[:1, :1], v[:1, :1], block_mask=bm, return_lse=True)
print("empty rows:", (out[0, 0, :48] == 0).all().item(), torch.isinf(lse).sum().item(),
      "lse[46:50]", fmt(lse[0, 0, 46:50]))

# --- double precision and half precision
out, lse = flex_attention(q.double(), k.double(), v.double(), return_lse=True)
print("float64:", out.dtype, lse.dtype, f"{out.sum().item():.6f}")
out, lse = flex_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), return_lse=True)
print("bfloat16:", out.dtype, lse.dtype)

# --- the mistakes
tries = {
    "q requires grad": lambda: flex_attention(q.clone().requires_grad_(), k, v),
    "heads differ": lambda: flex_attention(q, k[:, :3], v[:, :3]),
    "gqa not a multiple": lambda: flex_attention(q, k[:, :3], v[:, :3], enable_gqa=True),
    "mask for a shorter sequence": lambda: flex_attention(
        torch.cat([q, q], 2), torch.cat([k, k], 2), torch.cat([v, v], 2),
        block_mask=block_masks["causal"]),
    "sliced mask": lambda: flex_attention(q, k, v, block_mask=block_masks["document"][0]),
    "max scores on cpu": lambda: flex_attention(
        q, k, v, return_aux=AuxRequest(lse=True, max_scores=True)),
    "three args": lambda: create_block_mask(lambda b, q_idx, kv_idx: q_idx >= kv_idx,
                                            1, 1, S, S, device="cpu"),
    "3-D input": lambda: flex_attention(q[0], k[0], v[0]),
}
for what, call in tries.items():
    try:
        call()
        print(what, "-> no error")
    except Exception as e:
        print(f"{what} -> {type(e).__name__}: {str(e).splitlines()[0][:120]}")
try:
    create_block_mask(alibi, 1, 1, S, S, device="cpu")
except AssertionError as e:
    print("score_mod as mask_mod ->", type(e).__name__, str(e).split("!")[0])
