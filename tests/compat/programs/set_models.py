"""Models of sets and variable-length sequences in plain PyTorch: synthetic sets of
different sizes padded with pad_sequence (batch_first, padding_value, padding_side), masks
from lengths, masked mean / max pooling (masked_fill with -inf, amax, nan_to_num,
torch.masked), PyG-style segment pooling over a flat batch with a batch index vector
(scatter_reduce_ with include_self=False, index_add_, bincount, segment_reduce), Deep Sets
and a Set Transformer (ISAB / PMA with nn.MultiheadAttention, key_padding_mask,
need_weights with average_attn_weights both ways), an LSTM set encoder through
pack_padded_sequence / pad_packed_sequence (enforce_sorted=False), permutation-invariance
checks, nn.TransformerEncoder with src_key_padding_mask and enable_nested_tensor,
scaled_dot_product_attention with a boolean attn_mask and a fully masked row, and the
typical masking / packing mistakes."""

import warnings

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import (
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
)

torch.manual_seed(0)
D_IN, HID = 2, 16


def fmt(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in t.flatten().tolist()) + "]"


# ---------------------------------------------------------------- data: variable-size sets
def make_batch(n_sets: int, lo: int = 2, hi: int = 9):
    """Sets of 2-d points; targets: max of the first coordinate, sum of the second, size."""
    lengths = torch.randint(lo, hi, (n_sets,))
    sets = [torch.randn(int(n), D_IN) for n in lengths]
    y = torch.stack([torch.stack([s[:, 0].max(), s[:, 1].sum(), torch.tensor(float(len(s)))])
                     for s in sets])
    return sets, lengths, y


sets, lengths, y = make_batch(4)
print("lengths", lengths.tolist(), lengths.dtype)
padded = pad_sequence(sets, batch_first=True)
print("padded", tuple(padded.shape), padded.dtype)
padded_m1 = pad_sequence(sets, batch_first=True, padding_value=-1.0)
print("padding -1 count", int((padded_m1 == -1.0).all(-1).sum()))
left = pad_sequence(sets, batch_first=True, padding_side="left")
print("left padded first rows zero", (left[:, 0] == 0).all(-1).tolist())
time_major = pad_sequence(sets)
print("time-major", tuple(time_major.shape))
ints = pad_sequence([torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6])],
                    batch_first=True, padding_value=-100)
print("int pad\n", ints)
L = padded.shape[1]
mask = torch.arange(L)[None] < lengths[:, None]
print("mask\n", mask.int())
print("mask dtype", mask.dtype, "sum", mask.sum().item())

# ---------------------------------------------------------------- masked pooling
m = mask.unsqueeze(-1)
mean_pool = (padded * m).sum(1) / m.sum(1).clamp(min=1)
print("masked mean", fmt(mean_pool))
max_pool = padded.masked_fill(~m, float("-inf")).amax(dim=1)
print("masked max", fmt(max_pool))
empty_mask = mask.clone()
empty_mask[1] = False
mx = padded.masked_fill(~empty_mask.unsqueeze(-1), float("-inf")).amax(dim=1)
print("empty set max", mx[1].tolist())
print("nan_to_num", fmt(torch.nan_to_num(mx, neginf=0.0)[1]))
mean_empty = (padded * empty_mask.unsqueeze(-1)).sum(1) / empty_mask.sum(1, keepdim=True)
print("empty mean", mean_empty[1].tolist(), "->", torch.nan_to_num(mean_empty, nan=0.0)[1].tolist())
print("max matches target", torch.allclose(max_pool[:, 0], y[:, 0]))
# the same pooling with torch.masked (identity fill, then the plain reduction)
print("masked.mean", fmt(torch.masked.mean(padded, 1, mask=m)))
print("masked.amax empty set", torch.masked.amax(padded, 1, mask=empty_mask[..., None])[1].tolist())
print("masked.std", fmt(torch.masked.std(padded, 1, mask=m, unbiased=False)))
print("masked.softmax\n", torch.masked.softmax(padded[..., 0], 1, mask=mask))
print("masked.logsumexp", fmt(torch.masked.logsumexp(padded[..., 0], 1, mask=mask)))
print("masked.argmax", torch.masked.argmax(padded[..., 0], 1, mask=mask))
print("masked.sum int", torch.masked.sum(mask.int(), 1, mask=mask), "cumsum",
      torch.masked.cumsum(torch.ones(L), 0, mask=mask[2]).tolist())
mv, mi = padded.masked_fill(~m, float("-inf")).max(dim=1)
print("argmax in set", (mi < lengths[:, None]).all().item(), mi.tolist())

# ---------------------------------------------------------------- flat batch + segment pooling
flat = torch.cat(sets)
batch = torch.repeat_interleave(torch.arange(len(sets)), lengths)
print("flat", tuple(flat.shape), "batch", batch.tolist())
B = len(sets)
seg_sum = torch.zeros(B, D_IN).index_add_(0, batch, flat)
seg_max = torch.zeros(B, D_IN).scatter_reduce_(0, batch[:, None].expand_as(flat), flat,
                                               reduce="amax", include_self=False)
seg_min = torch.zeros(B, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat,
                                              reduce="amin", include_self=False)
seg_mean = torch.zeros(B, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat,
                                               reduce="mean", include_self=False)
counts = torch.bincount(batch, minlength=B)
print("counts", counts.tolist(), "equal lengths", torch.equal(counts, lengths))
print("seg sum", fmt(seg_sum))
print("sum vs padded", torch.allclose(seg_sum, padded.sum(1), atol=1e-6))
print("max vs padded", torch.allclose(seg_max, max_pool))
print("seg min", fmt(seg_min))
print("mean vs padded", torch.allclose(seg_mean, mean_pool, atol=1e-6))
seg_incl = torch.zeros(B + 1, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat,
                                                   reduce="amax", include_self=True)
print("include_self amax (clipped at 0, empty row)", fmt(seg_incl[-2:]))
empty_seg = torch.full((B + 1, D_IN), 7.0).scatter_reduce(
    0, batch[:, None].expand(-1, D_IN), flat, reduce="amax", include_self=False)
print("untouched row keeps its value", empty_seg[-1].tolist())
sc_add = torch.zeros(B, D_IN).scatter_add(0, batch[:, None].expand(-1, D_IN), flat)
print("scatter_add == index_add", torch.allclose(sc_add, seg_sum))
seg_sm = torch.segment_reduce(flat[:, 0], "max", lengths=lengths)
print("segment_reduce max", fmt(seg_sm))
print("segment_reduce amax == max", torch.equal(
    torch.segment_reduce(flat, "amax", lengths=lengths),
    torch.segment_reduce(flat, "max", lengths=lengths)))
print("segment_reduce mean, offsets", fmt(torch.segment_reduce(
    flat, "mean", offsets=torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)]))))
# to_dense_batch and back: masked_scatter fills the padded layout in row-major order
dense = torch.zeros_like(padded).masked_scatter(m.expand_as(padded), flat)
print("to_dense_batch == pad_sequence", torch.equal(dense, padded),
      "back to flat", torch.equal(padded[mask], flat))
offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
print("offsets", offsets.tolist())
# gradient through scatter_reduce amax: flows to the argmax element of each segment
flat_g = flat.clone().requires_grad_()
out = torch.zeros(B, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat_g,
                                          reduce="amax", include_self=False)
out.sum().backward()
print("amax grad nonzeros", int(flat_g.grad.count_nonzero()), "grad_fn", out.grad_fn.name())
flat_g.grad = None
out = torch.zeros(B, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat_g,
                                          reduce="mean", include_self=False)
out.sum().backward()
print("mean grad", fmt(flat_g.grad[:6, 0]))


# ---------------------------------------------------------------- models
class DeepSets(nn.Module):
    """rho(sum/max over phi(x)), masked so padding never contributes."""

    def __init__(self, pool: str = "sum"):
        super().__init__()
        self.pool = pool
        self.phi = nn.Sequential(nn.Linear(D_IN, HID), nn.ReLU(), nn.Linear(HID, HID))
        self.rho = nn.Sequential(nn.Linear(HID + 1, HID), nn.ReLU(), nn.Linear(HID, 3))

    def forward(self, x, mask):
        h = self.phi(x)
        m = mask.unsqueeze(-1)
        if self.pool == "sum":
            z = h.masked_fill(~m, 0.0).sum(1)
        else:
            z = h.masked_fill(~m, float("-inf")).amax(1)
        n = mask.sum(1, keepdim=True).float()
        return self.rho(torch.cat([z, n / 8], dim=1))


class MAB(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, q, kv, key_padding_mask=None, need_weights=False, average=True):
        a, w = self.attn(q, kv, kv, key_padding_mask=key_padding_mask,
                         need_weights=need_weights, average_attn_weights=average)
        h = self.ln1(q + a)
        return self.ln2(h + self.ff(h)), w


class ISAB(nn.Module):
    def __init__(self, dim: int, heads: int, n_induce: int):
        super().__init__()
        self.inducing = nn.Parameter(torch.randn(1, n_induce, dim) * 0.1)
        self.mab0, self.mab1 = MAB(dim, heads), MAB(dim, heads)

    def forward(self, x, pad_mask):
        i = self.inducing.expand(x.shape[0], -1, -1)
        h, _ = self.mab0(i, x, key_padding_mask=pad_mask)
        out, _ = self.mab1(x, h)
        return out


class PMA(nn.Module):
    def __init__(self, dim: int, heads: int, n_seeds: int):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, n_seeds, dim) * 0.1)
        self.mab = MAB(dim, heads)

    def forward(self, x, pad_mask, need_weights=False, average=True):
        s = self.seeds.expand(x.shape[0], -1, -1)
        return self.mab(s, x, key_padding_mask=pad_mask, need_weights=need_weights,
                        average=average)


class SetTransformer(nn.Module):
    def __init__(self, dim: int = HID, heads: int = 4):
        super().__init__()
        self.embed = nn.Linear(D_IN, dim)
        self.isab = ISAB(dim, heads, n_induce=4)
        self.pma = PMA(dim, heads, n_seeds=1)
        self.head = nn.Linear(dim + 1, 3)

    def forward(self, x, mask, need_weights=False, average=True):
        pad = ~mask
        h = self.isab(self.embed(x), pad)
        z, w = self.pma(h, pad, need_weights=need_weights, average=average)
        n = mask.sum(1, keepdim=True).float()
        out = self.head(torch.cat([z.squeeze(1), n / 8], dim=1))
        return (out, w) if need_weights else out


def batch_of(n_sets: int):
    s, ln, t = make_batch(n_sets)
    x = pad_sequence(s, batch_first=True)
    mk = torch.arange(x.shape[1])[None] < ln[:, None]
    return x, mk, ln, t


torch.manual_seed(1)
deep_sum, deep_max, st = DeepSets("sum"), DeepSets("max"), SetTransformer()
for name, model in [("deepsets-sum", deep_sum), ("deepsets-max", deep_max), ("settf", st)]:
    n_params = sum(p.numel() for p in model.parameters())
    print(name, "params", n_params)

torch.manual_seed(2)
train = [batch_of(16) for _ in range(6)]
for name, model in [("deepsets-sum", deep_sum), ("deepsets-max", deep_max), ("settf", st)]:
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(12):
        x, mk, ln, t = train[step % len(train)]
        pred = model(x, mk)
        loss = F.mse_loss(pred, t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 0 or step == 11:
            print(f"{name} step {step:2d} loss {loss.item():.4f}")

# attention weights of the pooling block
st.eval()
x, mk, ln, t = batch_of(3)
with torch.no_grad():
    out, w_avg = st(x, mk, need_weights=True, average=True)
    _, w_heads = st(x, mk, need_weights=True, average=False)
print("pma weights avg", tuple(w_avg.shape), "per head", tuple(w_heads.shape))
print("lengths", ln.tolist())
print("weights avg\n", w_avg.squeeze(1))
print("row sums", fmt(w_avg.sum(-1)))
print("padding weight zero", bool((w_avg.squeeze(1)[~mk] == 0).all()))
print("heads mean == avg", torch.allclose(w_heads.mean(1), w_avg, atol=1e-6))
print("head 0\n", w_heads[:, 0, 0])
mha = st.pma.mab.attn
q = torch.randn(2, 3, HID)
a_none, w_none = mha(q, q, q, need_weights=False)
print("need_weights False ->", w_none, tuple(a_none.shape))
a_unb, w_unb = mha(q[0], q[0], q[0])
print("unbatched", tuple(a_unb.shape), tuple(w_unb.shape))
kp = torch.tensor([[False] * 3, [False] * 2 + [True]])
merged, mask_type = mha.merge_masks(None, kp, q)
print("merge_masks padding only: type", mask_type, tuple(merged.shape))
merged, mask_type = mha.merge_masks(torch.ones(3, 3, dtype=torch.bool).triu(1), kp, q)
print("merge_masks causal + padding: type", mask_type, tuple(merged.shape))
print(merged[1, 0].int())

# ---------------------------------------------------------------- permutation invariance
x1 = torch.randn(1, 7, D_IN)
mk1 = torch.ones(1, 7, dtype=torch.bool)
perm = torch.randperm(7)
print("perm", perm.tolist())
for name, model in [("deepsets-sum", deep_sum), ("deepsets-max", deep_max), ("settf", st)]:
    model.eval()
    with torch.no_grad():
        a, b = model(x1, mk1), model(x1[:, perm], mk1)
    print(name, "invariant", torch.allclose(a, b, atol=1e-5), f"{(a - b).abs().max().item():.1e}"
          if (a - b).abs().max().item() > 1e-6 else "0")
# padding invariance: the same set with extra padding rows gives the same output
x_pad = torch.cat([x1, torch.randn(1, 3, D_IN)], dim=1)
mk_pad = torch.arange(10)[None] < torch.tensor([7])[:, None]
with torch.no_grad():
    for name, model in [("deepsets-sum", deep_sum), ("deepsets-max", deep_max), ("settf", st)]:
        print(name, "padding invariant", torch.allclose(model(x1, mk1), model(x_pad, mk_pad),
                                                        atol=1e-5))
# the ISAB block itself is permutation equivariant
with torch.no_grad():
    h = st.isab(st.embed(x1), ~mk1)
    hp = st.isab(st.embed(x1[:, perm]), ~mk1)
print("isab equivariant", torch.allclose(h[:, perm], hp, atol=1e-5))

# ---------------------------------------------------------------- LSTM over packed sets
torch.manual_seed(3)
lstm = nn.LSTM(D_IN, 8, batch_first=True)
x, mk, ln, t = batch_of(5)
print("lengths", ln.tolist())
packed = pack_padded_sequence(x, ln, batch_first=True, enforce_sorted=False)
print("packed data", tuple(packed.data.shape), "batch_sizes", packed.batch_sizes.tolist())
print("sorted_indices", packed.sorted_indices.tolist())
print("unsorted_indices", packed.unsorted_indices.tolist())
out_p, (h_n, c_n) = lstm(packed)
print("out is packed", type(out_p).__name__, tuple(out_p.data.shape))
unpacked, out_len = pad_packed_sequence(out_p, batch_first=True)
print("unpacked", tuple(unpacked.shape), "lengths", out_len.tolist(), out_len.dtype)
print("padding zeros", bool((unpacked[~mk[:, :unpacked.shape[1]]] == 0).all()))
last = unpacked[torch.arange(len(ln)), out_len - 1]
print("h_n equals last valid output", torch.allclose(last, h_n[0], atol=1e-6))
print("h_n", fmt(h_n[0, :, :3]))
unp_total, _ = pad_packed_sequence(out_p, batch_first=True, total_length=10, padding_value=-1.0)
print("total_length", tuple(unp_total.shape), "pad value", unp_total[0, -1, 0].item())
seq = [x[i, :ln[i]] for i in range(len(ln))]
ps = pack_sequence(seq, enforce_sorted=False)
print("pack_sequence same data", torch.equal(ps.data, packed.data))
gru = nn.GRU(D_IN, 4, batch_first=True, bidirectional=True)
og, hg = gru(packed)
ug, _ = pad_packed_sequence(og, batch_first=True)
print("bi-GRU", tuple(ug.shape), tuple(hg.shape))
enc = nn.Linear(8, 3)
opt = torch.optim.SGD(list(lstm.parameters()) + list(enc.parameters()), lr=0.05)
for step in range(5):
    x, mk, ln, t = train[step]
    _, (h_n, _) = lstm(pack_padded_sequence(x, ln, batch_first=True, enforce_sorted=False))
    loss = F.mse_loss(enc(h_n[0]), t)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"lstm step {step} loss {loss.item():.4f}")

# ---------------------------------------------------------------- TransformerEncoder
torch.manual_seed(4)
layer = nn.TransformerEncoderLayer(HID, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=True)
for w in caught:
    print("warning:", w.category.__name__, str(w.message))
print("use_nested_tensor", encoder.use_nested_tensor)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    layer_nf = nn.TransformerEncoderLayer(HID, 4, dim_feedforward=32, dropout=0.0,
                                          batch_first=True, norm_first=True)
    enc_nf = nn.TransformerEncoder(layer_nf, num_layers=2, enable_nested_tensor=True)
for w in caught:
    print("warning:", w.category.__name__, str(w.message))
print("norm_first use_nested_tensor", enc_nf.use_nested_tensor)
emb = nn.Linear(D_IN, HID)
x, mk, ln, t = batch_of(3)
encoder.eval()
with torch.no_grad():
    h = encoder(emb(x), src_key_padding_mask=~mk)
print("encoder out", tuple(h.shape))
print("padded positions", h[~mk].abs().sum().item() == 0, "(zeros if the nested fast path ran)")
pooled = (h * mk.unsqueeze(-1)).sum(1) / mk.sum(1, keepdim=True)
print("pooled", fmt(pooled[:, :4]))
encoder.train()
h_tr = encoder(emb(x), src_key_padding_mask=~mk)
print("train-mode valid positions equal", torch.allclose(h_tr[mk], h[mk], atol=1e-5))
print("train grad_fn", type(h_tr.grad_fn).__name__)
with torch.no_grad():
    h_nf = enc_nf(emb(x), src_key_padding_mask=~mk)
print("norm_first out", tuple(h_nf.shape), fmt(h_nf[0, 0, :3]))
try:
    encoder(emb(x), src_key_padding_mask=(~mk).float())
    print("float key padding mask accepted")
except Exception as e:
    print("float padding mask:", type(e).__name__, e)

# ---------------------------------------------------------------- scaled_dot_product_attention
torch.manual_seed(5)
q = torch.randn(2, 2, 4, 8)
k = torch.randn(2, 2, 5, 8)
v = torch.randn(2, 2, 5, 8)
klen = torch.tensor([5, 3])
attn_mask = (torch.arange(5)[None] < klen[:, None])[:, None, None, :]
o = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
print("sdpa", tuple(o.shape), fmt(o[1, 0, 0, :4]))
scores = q @ k.transpose(-2, -1) / 8 ** 0.5
ref = scores.masked_fill(~attn_mask, float("-inf")).softmax(-1) @ v
print("sdpa == manual", torch.allclose(o, ref, atol=1e-5))
float_mask = torch.zeros(2, 1, 1, 5).masked_fill(~attn_mask, float("-inf"))
o2 = F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask)
print("additive mask same", torch.allclose(o, o2, atol=1e-6))
full = attn_mask.expand(2, 2, 4, 5).clone()
full[0, :, 1] = False  # query 1 of the first batch sees nothing
o3 = F.scaled_dot_product_attention(q, k, v, attn_mask=full)
print("sdpa fully masked row", o3[0, 0, 1, :4].tolist())
man = scores.masked_fill(~full, float("-inf")).softmax(-1)
print("manual softmax row", man[0, 0, 1].tolist())
print("nan_to_num then @v", (torch.nan_to_num(man) @ v)[0, 0, 1, :4].tolist())
mha2 = nn.MultiheadAttention(8, 2, batch_first=True)
qq = torch.randn(2, 3, 8)
kpm = torch.tensor([[False, False, False], [True, True, True]])
with torch.no_grad():
    a, w = mha2(qq, qq, qq, key_padding_mask=kpm)
print("mha fully padded: out nan", torch.isnan(a[1]).all().item(), "weights nan",
      torch.isnan(w[1]).all().item())
with torch.no_grad():
    a, w = mha2(qq, qq, qq, key_padding_mask=kpm, need_weights=False)
print("mha need_weights=False fully padded out nan", torch.isnan(a[1]).all().item())
causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
tri = torch.ones(4, 4, dtype=torch.bool).tril()
print("is_causal == tril mask", torch.allclose(
    causal, F.scaled_dot_product_attention(q, q, q, attn_mask=tri), atol=1e-6))

# ---------------------------------------------------------------- typical mistakes
print("-- mistakes")
mha3 = nn.MultiheadAttention(HID, 4, batch_first=True)
xq = torch.randn(2, 5, HID)
good = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
try:
    mha3(xq, xq, xq, key_padding_mask=good.int())
except Exception as e:
    print("int key_padding_mask:", type(e).__name__, e)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a_f, _ = mha3(xq, xq, xq, key_padding_mask=good.float())
for w in caught:
    print("warning:", w.category.__name__, str(w.message))
print("float key_padding_mask is additive: out finite", torch.isfinite(a_f).all().item())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        mha3(xq, xq, xq, key_padding_mask=good, attn_mask=torch.zeros(5, 5))
        print("bool padding + float attn_mask accepted")
    except Exception as e:
        print("mixed mask types:", type(e).__name__, e)
for w in caught:
    print("warning:", w.category.__name__, str(w.message))
try:
    mha3(xq, xq, xq, key_padding_mask=good[:, :4])
except Exception as e:
    print("wrong padding mask shape:", type(e).__name__, e)
try:
    mha3(xq, xq, xq, key_padding_mask=good.T)
except Exception as e:
    print("transposed padding mask:", type(e).__name__, e)
try:
    mha3(xq, xq, xq, attn_mask=torch.zeros(4, 5, dtype=torch.bool))
except Exception as e:
    print("wrong attn_mask shape:", type(e).__name__, e)
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(2, 1, 3, 5, dtype=torch.bool))
except Exception as e:
    print("sdpa mask shape:", type(e).__name__, str(e).split("\n")[0])
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(2, 1, 1, 5, dtype=torch.int64))
except Exception as e:
    print("sdpa int mask:", type(e).__name__, str(e).split("\n")[0])
try:
    oc = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=True)
    print("mask and is_causal accepted on CPU", tuple(oc.shape))
except Exception as e:
    print("mask and is_causal:", type(e).__name__, str(e).split("\n")[0])
x, mk, ln, t = batch_of(4)
try:
    pack_padded_sequence(x, ln, batch_first=True)
except Exception as e:
    print("unsorted enforce_sorted=True:", type(e).__name__, e)
try:
    pack_padded_sequence(x, ln.float(), batch_first=True, enforce_sorted=False)
    print("float lengths accepted")
except Exception as e:
    print("float lengths:", type(e).__name__, e)
try:
    pack_padded_sequence(x, ln.tolist(), batch_first=True, enforce_sorted=False)
    print("list lengths accepted")
except Exception as e:
    print("list lengths:", type(e).__name__, e)
try:
    pack_padded_sequence(x, ln.to(torch.int32), batch_first=True, enforce_sorted=False)
    print("int32 lengths accepted")
except Exception as e:
    print("int32 lengths:", type(e).__name__, e)
try:
    pack_padded_sequence(x, ln.to("meta"), batch_first=True, enforce_sorted=False)
except Exception as e:
    print("meta lengths:", type(e).__name__, str(e).split("\n")[0])
try:
    bad = ln.clone()
    bad[0] = 0
    pack_padded_sequence(x, bad, batch_first=True, enforce_sorted=False)
except Exception as e:
    print("zero length:", type(e).__name__, e)
try:
    pk = pack_padded_sequence(x, ln[:3], batch_first=True, enforce_sorted=False)
    print("3 lengths for 4 sets packs the first 3:", pk.batch_sizes.tolist())
except Exception as e:
    print("lengths count:", type(e).__name__, e)
try:
    pack_padded_sequence(x.transpose(0, 1), ln.sort(descending=True).values)  # time-major
    pack_padded_sequence(x, ln.sort(descending=True).values)  # forgot batch_first
except Exception as e:
    print("forgot batch_first:", type(e).__name__, e)
try:
    pad_sequence([torch.randn(3, 2), torch.randn(4, 3)], batch_first=True)
except Exception as e:
    print("pad mismatched features:", type(e).__name__, e)
try:
    pad_sequence([torch.randn(3, 2)], batch_first=True, padding_side="middle")
except Exception as e:
    print("padding_side:", type(e).__name__, e)
try:
    padded.masked_fill(mask, 0.0)
except Exception as e:
    print("mask missing feature dim:", type(e).__name__, e)
try:
    padded.masked_fill(mask.float().unsqueeze(-1), 0.0)
except Exception as e:
    print("float mask in masked_fill:", type(e).__name__, e)
try:
    torch.zeros_like(padded).masked_scatter(m.float(), flat)
except Exception as e:
    print("float mask in masked_scatter:", type(e).__name__, e)
try:
    padded[mask.int()]
    print("int mask indexes rows")
except Exception as e:
    print("int mask as index:", type(e).__name__, e)
try:
    torch.zeros(B, D_IN).scatter_reduce(0, batch, flat, reduce="amax")
except Exception as e:
    print("index not expanded:", type(e).__name__, e)
try:
    r = torch.zeros(B, D_IN).scatter_reduce(0, batch[:, None].expand(-1, D_IN), flat,
                                            reduce="max")
    print("reduce='max' accepted (includes self):", fmt(r[:, 0]))
except Exception as e:
    print("reduce='max':", type(e).__name__, e)
try:
    torch.zeros(B, D_IN).index_add_(0, batch.float(), flat)
except Exception as e:
    print("float index:", type(e).__name__, e)
src_g = flat.clone().requires_grad_()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    legacy = torch.zeros(B, D_IN).scatter(0, batch[:, None].expand(-1, D_IN), src_g, reduce="add")
print("scatter(reduce='add') warned", len(caught) > 0, "equals index_add",
      torch.allclose(legacy, seg_sum), "grad_fn", legacy.grad_fn.name())
try:
    legacy.sum().backward()
except RuntimeError as e:
    print("backward through scatter(reduce='add'):", e)
acc = torch.ones(B, D_IN).requires_grad_().clone()
acc.scatter_(0, batch[:, None].expand(-1, D_IN), 2.0, reduce="multiply")
print("scatter_ value multiply", fmt(acc[:, 0]))
try:
    acc.sum().backward()
except RuntimeError as e:
    print("backward through scatter_(reduce='multiply'):", e)
