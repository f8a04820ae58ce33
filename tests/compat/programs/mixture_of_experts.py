"""A sparse Mixture-of-Experts transformer block as in Switch / GShard / Mixtral code: a router
nn.Linear with softmax gating, top-k routing (sorted and unsorted topk) with renormalised
weights, noisy top-k gating from a seeded torch.Generator, expert capacity with token
dropping (one_hot + cumsum + masks + torch.where), dispatch and combine by index
(index_select, index_add_, scatter_add_, scatter_reduce_ sum/amax/mean with include_self,
gather, bincount with minlength, stable argsort, unique with counts and inverse), experts as
a batched weight tensor (bmm and einsum) and as an nn.ModuleList of SwiGLU MLPs, the
load-balancing and router z-losses, a few AdamW steps with foreach gradient clipping,
forward hooks counting routed tokens, activation checkpointing around the expert block,
split / chunk / tensor_split / repeat_interleave by counts, and the usual routing mistakes."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
D, H, E, TOP_K, T = 8, 16, 4, 2, 12

# ---- routing basics on a fixed batch of tokens ----------------------------------------------
x = torch.randn(T, D)
router = nn.Linear(D, E, bias=False)
logits = router(x)
probs = F.softmax(logits, dim=-1, dtype=torch.float32)
print("router", logits.shape, logits.dtype, probs[0], probs.sum(-1).allclose(torch.ones(T)))
top_w, top_i = torch.topk(probs, TOP_K, dim=-1)
print("topk sorted", top_i[:4].tolist(), top_w[:2])
uw, ui = probs.topk(TOP_K, dim=-1, sorted=False)
print("unsorted same set", torch.equal(ui.sort(-1).values, top_i.sort(-1).values),
      torch.allclose(uw.sort(-1).values, top_w.sort(-1).values))
lw, li = probs.topk(1, dim=-1, largest=False)
print("smallest", li.squeeze(-1).tolist(), lw.dtype)
top_w = top_w / top_w.sum(dim=-1, keepdim=True)
print("renormalised", top_w[:3], top_w.sum(-1).allclose(torch.ones(T)))

# Noisy top-k gating (Shazeer et al.): a seeded generator gives reproducible noise.
gen = torch.Generator().manual_seed(1234)
noise_std = F.softplus(torch.linspace(-1.0, 1.0, E))
noise = torch.randn(logits.shape, generator=gen) * noise_std
noisy = logits + noise
gen2 = torch.Generator()
gen2.manual_seed(1234)
print("noise reproducible", torch.equal(noise, torch.randn(T, E, generator=gen2) * noise_std))
print("noisy top1", noisy.argmax(-1).tolist(), gen.initial_seed())
mask = torch.full_like(noisy, float("-inf"))
kept = mask.scatter(1, noisy.topk(TOP_K, dim=1).indices, noisy.gather(1, noisy.topk(TOP_K).indices))
gates = kept.softmax(-1)
print("noisy gates", gates[0], (gates > 0).sum(1).tolist())

# ---- expert capacity and token dropping (Switch Transformer) ---------------------------------
capacity = int(1.0 * T / E)
expert_idx = probs.argmax(dim=-1)
onehot = F.one_hot(expert_idx, num_classes=E)
print("one_hot", onehot.shape, onehot.dtype, onehot.sum(0).tolist())
position = torch.cumsum(onehot, dim=0) * onehot
print("position dtype", position.dtype, position.max().item())
keep = (position <= capacity) & (position > 0)
dropped = onehot.bool() & ~keep
print("capacity", capacity, "kept", keep.sum().item(), "dropped", dropped.sum().item())
tok_keep = keep.any(dim=1)
gate_val = probs.gather(1, expert_idx.unsqueeze(1)).squeeze(1)
gate_val = torch.where(tok_keep, gate_val, torch.zeros(()))
print("gate after drop", gate_val.masked_fill(~tok_keep, -1.0)[:6])
rows, cols = keep.nonzero(as_tuple=True)
print("nonzero", rows.tolist(), cols.tolist())
slot = (position - 1).clamp(min=0).sum(1)
print("slot", slot.tolist(), slot.dtype)

# Dispatch by sorting tokens per expert.
order = torch.argsort(expert_idx, stable=True)
counts = torch.bincount(expert_idx, minlength=E)
print("order", order.tolist(), "counts", counts.tolist())
uniq, inv, cnt = torch.unique(expert_idx, sorted=True, return_inverse=True, return_counts=True)
print("unique", uniq.tolist(), inv.tolist(), cnt.tolist())
grouped = x.index_select(0, order)
chunks = torch.split(grouped, counts.tolist())
print("split sizes", [c.shape[0] for c in chunks], type(chunks).__name__)
ts = torch.tensor_split(grouped, counts.cumsum(0)[:-1])
print("tensor_split", [t.shape[0] for t in ts], all(torch.equal(a, b) for a, b in zip(chunks, ts)))
print("chunk", [c.shape for c in grouped.chunk(5)])
expert_of_row = torch.repeat_interleave(torch.arange(E), counts, output_size=T)
print("repeat_interleave", expert_of_row.tolist(), torch.equal(expert_of_row, expert_idx[order]))
print("repeat scalar", torch.arange(3).repeat_interleave(2).tolist(),
      torch.tensor([[1, 2], [3, 4]]).repeat_interleave(torch.tensor([1, 2]), dim=0).tolist())

# Batched experts: weight tensor (E, D, H) applied with bmm on capacity-padded buffers.
W1 = torch.randn(E, D, H) * 0.2
W2 = torch.randn(E, H, D) * 0.2
buf = torch.zeros(size=(E, capacity, D))
flat_slot = expert_idx * capacity + slot
buf.view(E * capacity, D).index_add_(0, flat_slot[tok_keep], x[tok_keep])
h = torch.bmm(buf, W1).relu()
out_b = torch.bmm(h, W2)
h_e = torch.einsum("ecd,edh->ech", buf, W1).relu()
out_e = torch.einsum("ech,ehd->ecd", h_e, W2)
print("bmm", out_b.shape, torch.allclose(out_b, out_e, atol=1e-6))
combined = out_b.reshape(E * capacity, D)[flat_slot] * gate_val.unsqueeze(1)
combined = combined * tok_keep.unsqueeze(1)
print("combined", combined[0], combined[~tok_keep].abs().sum().item())

# Combine with scatter_add_ / scatter_reduce_ over top-2 assignments.
tok = torch.arange(T).repeat_interleave(TOP_K)
flat_e = top_i.reshape(-1)
flat_w = top_w.reshape(-1)
contrib = torch.einsum("nd,ndh->nh", x[tok], W1[flat_e])
y = torch.zeros(T, H).scatter_add_(0, tok.unsqueeze(1).expand(-1, H), contrib * flat_w[:, None])
y2 = torch.zeros(T, H).index_add_(0, tok, contrib, alpha=1.0)
print("scatter_add_", y.shape, y[0, :4])
load = torch.zeros(E)
for how in ["sum", "amax", "mean"]:
    a = torch.ones(E).scatter_reduce_(0, flat_e, flat_w, reduce=how)
    b = torch.ones(E).scatter_reduce_(0, flat_e, flat_w, reduce=how, include_self=False)
    print(f"scatter_reduce_ {how}", a, b)
load_w = torch.bincount(flat_e, weights=flat_w, minlength=E + 1)
print("index_add_ vs y", y2[1, :3], load_w)
# Expert-choice routing: each expert takes its top-`capacity` tokens instead.
ec_w, ec_i = probs.t().topk(capacity, dim=1)
picked = torch.zeros(T, dtype=torch.long).index_put_(
    (ec_i.flatten(),), torch.ones(E * capacity, dtype=torch.long), accumulate=True)
print("expert choice", ec_i.tolist(), picked.tolist(), ec_w.sum(1))


# ---- an MoE block with SwiGLU experts, trained a few steps ------------------------------------
class SwiGLU(nn.Module):
    def __init__(self, d: int, h: int):
        super().__init__()
        self.w1 = nn.Linear(d, h, bias=False)
        self.w3 = nn.Linear(d, h, bias=False)
        self.w2 = nn.Linear(h, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    def __init__(self, d: int, h: int, n_experts: int, k: int):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList([SwiGLU(d, h) for _ in range(n_experts)])
        self.norm = nn.LayerNorm(d)

    def route(self, x):
        logits = self.gate(x)
        probs = logits.softmax(-1)
        w, idx = probs.topk(self.k, dim=-1)
        return logits, probs, w / w.sum(-1, keepdim=True), idx

    def experts_forward(self, x, w, idx):
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.where(idx == e)
            if tok.numel() == 0:
                continue
            y = expert(x[tok]) * w[tok, slot].unsqueeze(-1)
            out.index_add_(0, tok, y.to(out.dtype))
        return out

    def forward(self, x, use_ckpt=False):
        b, t, d = x.shape
        flat = self.norm(x).reshape(-1, d)
        logits, probs, w, idx = self.route(flat)
        if use_ckpt:
            out = checkpoint(self.experts_forward, flat, w, idx, use_reentrant=False)
        else:
            out = self.experts_forward(flat, w, idx)
        n_e = probs.shape[-1]
        frac = F.one_hot(idx[:, 0], n_e).float().mean(0)
        aux = n_e * (frac * probs.mean(0)).sum()
        z = torch.logsumexp(logits, dim=-1).pow(2).mean()
        return x + out.view(b, t, d), aux, z, idx


torch.manual_seed(1)
moe = SparseMoE(D, H, E, TOP_K)
print("params", sum(p.numel() for p in moe.parameters()), len(list(moe.experts)))
routed = torch.zeros(E, dtype=torch.long)


def count_hook(i):
    def hook(module, inputs, output):
        routed[i] += inputs[0].shape[0]
    return hook


handles = [ex.register_forward_hook(count_hook(i)) for i, ex in enumerate(moe.experts)]
opt = torch.optim.AdamW(moe.parameters(), lr=1e-2, weight_decay=0.01, betas=(0.9, 0.95))
data = torch.randn(2, 6, D)
target = torch.randn(2, 6, D)
for step in range(4):
    opt.zero_grad(set_to_none=True)
    out, aux, z, idx = moe(data, use_ckpt=step % 2 == 1)
    mse = F.mse_loss(out, target)
    loss = mse + 0.01 * aux + 1e-3 * z
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(moe.parameters(), max_norm=0.5, foreach=True)
    opt.step()
    util = torch.bincount(idx.flatten(), minlength=E).float() / idx.numel()
    print(f"step {step} loss {loss.item():.4f} aux {aux.item():.4f} z {z.item():.4f} "
          f"norm {norm.item():.4f} util {[round(u, 3) for u in util.tolist()]}")
print("routed by hooks", routed.tolist(), routed.sum().item())
for hd in handles:
    hd.remove()
print("gate grad", moe.gate.weight.grad is None, moe.gate.weight.grad.shape)

moe.eval()
with torch.no_grad():
    out, aux, z, idx = moe(data)
    print("eval", out.shape, out.requires_grad, aux.item() > 0, round(z.item(), 4))
    print("eval out", out[0, 0, :4])
print("routed after remove", routed.sum().item())

# ---- the usual mistakes ------------------------------------------------------------------------
def attempt(name, fn):
    try:
        fn()
        print(name, "ok")
    except Exception as e:  # noqa: BLE001
        print(name, type(e).__name__, e)


attempt("topk k>dim", lambda: probs.topk(E + 1, dim=-1))
attempt("scatter_add_ int32", lambda: torch.zeros(E).scatter_add_(0, flat_e.int(), flat_w))
attempt("scatter_add_ shape", lambda: torch.zeros(E).scatter_add_(0, flat_e.view(T, 2), flat_w))
attempt("bincount negative", lambda: torch.bincount(torch.tensor([0, -1, 2])))
attempt("bincount 2d", lambda: torch.bincount(top_i))
attempt("repeat_interleave", lambda: torch.repeat_interleave(torch.arange(3), torch.tensor([1, 2])))
attempt("index_add_ shape", lambda: torch.zeros(T, D).index_add_(0, tok, torch.ones(T, D)))
attempt("one_hot small", lambda: F.one_hot(expert_idx, num_classes=2))
attempt("split sizes", lambda: torch.split(grouped, [5, 5]))
attempt("gather dtype", lambda: probs.gather(1, top_i.float()))
attempt("bmm float64 experts", lambda: torch.bmm(buf, W1.double()))
attempt("matmul out dtype", lambda: torch.matmul(x, W1[0], out=torch.empty(T, H).double()))
