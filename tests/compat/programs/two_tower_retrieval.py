"""A two-tower retrieval model as recommender tutorials write it in plain torch: hashed
int64 ids (multiplicative hashing that wraps, bitwise_xor, remainder), numeric features
bucketized on torch.quantile boundaries, a user tower and an item tower built from sparse
nn.Embedding (padding_idx, max_norm, scale_grad_by_freq) and nn.EmbeddingBag (sum / mean /
max, include_last_offset, per_sample_weights, padding_idx), in-batch negatives with a
temperature and the sampled-softmax log-frequency correction, SparseAdam for the sparse
tables beside Adam/Adagrad for the dense layers, inspection of the sparse gradients, an
interaction matrix as a COO tensor with duplicate entries (coalesce, torch.sparse.sum,
torch.sparse.mm), top-k retrieval that masks already-seen items, recall@k and NDCG@k,
popularity^0.75 negative sampling with torch.multinomial, then the usual mistakes."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_USERS, N_ITEMS, N_CATS, N_EVENTS, DIM = 50, 80, 7, 600, 8
USER_BUCKETS, ITEM_BUCKETS = 64, 97


def fmt(xs, digits=4):
    return "[" + ", ".join(f"{x:.{digits}f}" for x in xs) + "]"


# -- raw logs: large int64 ids as they arrive from a feature store ---------------------------
raw_user = torch.randint(0, 2**40, (N_USERS,)) * 1_000_003 + 12345
raw_item = torch.randint(0, 2**40, (N_ITEMS,)) ^ 0x5DEECE66D
item_weight = 1.0 / torch.arange(1, N_ITEMS + 1).float() ** 0.9
ev_user = torch.randint(0, N_USERS, (N_EVENTS,))
ev_item = torch.multinomial(item_weight, N_EVENTS, replacement=True)
print("raw ids", raw_user.dtype, raw_user[:2].tolist(), raw_item[:2].tolist())


# -- the hashing trick: a multiplicative hash that overflows int64 and wraps --------------
def hash_ids(ids, buckets, salt):
    h = ids * -7046029254386353131                  # 0x9E3779B97F4A7C15 as int64
    h = torch.bitwise_xor(h, h >> 29)
    h = h * -4658895280553007687                     # 0xBF58476D1CE4E5B9 as int64
    h = h ^ salt
    return torch.remainder(h, buckets - 1) + 1        # 0 stays the padding bucket


wrapped = raw_user[:3] * -7046029254386353131
print("wrap", wrapped.tolist(), (wrapped >> 29).tolist())
print("xor", torch.bitwise_xor(raw_item[:3], torch.tensor(0x7FFF)).tolist(),
      (raw_item[:3] ^ raw_user[:3]).tolist())
print("remainder", torch.remainder(torch.tensor([-7, 7, -2**63]), 5).tolist(),
      torch.remainder(wrapped, 97).tolist(), torch.fmod(wrapped, 97).tolist())
user_h = hash_ids(raw_user, USER_BUCKETS, 17)
item_h = hash_ids(raw_item, ITEM_BUCKETS, 91)
print("hashed", user_h[:8].tolist(), item_h[:8].tolist(), user_h.dtype)
print("collisions", N_USERS - torch.unique(user_h).numel(),
      N_ITEMS - torch.unique(item_h).numel(), int(user_h.min()), int(item_h.max()))

# -- numeric features bucketized on quantile boundaries -----------------------------------
user_age = torch.randint(16, 75, (N_USERS,)).float()
item_price = torch.randn(N_ITEMS).mul(0.8).exp() * 20.0
qs = torch.linspace(0, 1, 6)[1:-1]
age_edges = torch.quantile(user_age, qs)
price_edges = torch.quantile(item_price, qs, interpolation="midpoint")
age_b = torch.bucketize(user_age, age_edges)
price_b = torch.bucketize(item_price, price_edges, right=True)
print("age edges", fmt(age_edges.tolist(), 2), torch.bincount(age_b, minlength=5).tolist())
print("price edges", fmt(price_edges.tolist()), torch.bincount(price_b, minlength=5).tolist(),
      price_b.dtype)

# -- multi-valued features: item categories and a user's recent history ---------------------
n_cat = torch.randint(1, 4, (N_ITEMS,))
item_cats = torch.randint(1, N_CATS, (int(n_cat.sum()),))
cat_offsets = torch.cat([torch.zeros(1, dtype=torch.long), n_cat.cumsum(0)])  # last offset
cat_w = torch.rand(item_cats.shape[0])
hist_len = 16
history = torch.zeros(N_USERS, hist_len, dtype=torch.long)       # padded with bucket 0
for u in range(N_USERS):
    seen = ev_item[ev_user == u][-hist_len:]
    history[u, :len(seen)] = item_h[seen]
print("cats", item_cats.numel(), cat_offsets[:5].tolist(), "history", history[0].tolist(),
      (history == 0).sum().item())


class UserTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.id = nn.Embedding(USER_BUCKETS, DIM, sparse=True, padding_idx=0, max_norm=1.5)
        self.age = nn.Embedding(5, 4)
        self.hist = nn.EmbeddingBag(ITEM_BUCKETS, DIM, mode="mean", padding_idx=0, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(2 * DIM + 4, 16), nn.ReLU(), nn.Linear(16, DIM))

    def forward(self, uh, ab, hist):
        x = torch.cat([self.id(uh), self.age(ab), self.hist(hist)], dim=1)
        return F.normalize(self.mlp(x), dim=1)


class ItemTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.id = nn.Embedding(ITEM_BUCKETS, DIM, sparse=True, padding_idx=0)
        self.price = nn.Embedding(5, 4)
        self.cats = nn.EmbeddingBag(N_CATS, DIM, mode="sum", include_last_offset=True,
                                    sparse=True)
        self.mlp = nn.Sequential(nn.Linear(2 * DIM + 4, 16), nn.Tanh(), nn.Linear(16, DIM))

    def forward(self, items):
        starts, ends = cat_offsets[items], cat_offsets[items + 1]
        flat = torch.cat([item_cats[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
        wts = torch.cat([cat_w[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
        offs = torch.cat([torch.zeros(1, dtype=torch.long), (ends - starts).cumsum(0)])
        c = self.cats(flat, offs, per_sample_weights=wts)
        x = torch.cat([self.id(item_h[items]), self.price(price_b[items]), c], dim=1)
        return F.normalize(self.mlp(x), dim=1)


torch.manual_seed(1)
user_tower, item_tower = UserTower(), ItemTower()
print("padding rows", user_tower.id.weight[0].abs().sum().item(),
      item_tower.id.weight[0].abs().sum().item(), user_tower.hist.weight[0].abs().sum().item())
print(user_tower.id, item_tower.cats, sep="\n")
sparse_params = [user_tower.id.weight, user_tower.hist.weight, item_tower.id.weight,
                 item_tower.cats.weight]
sparse_ids = {id(p) for p in sparse_params}
dense_params = [p for m in (user_tower, item_tower) for p in m.parameters()
                if id(p) not in sparse_ids]
print("param counts", sum(p.numel() for p in sparse_params), sum(p.numel() for p in dense_params))
opt_sparse = torch.optim.SparseAdam(sparse_params, lr=0.02)
opt_dense = torch.optim.Adam(dense_params, lr=0.01)
item_bias = nn.Embedding(N_ITEMS, 1, sparse=True)
nn.init.zeros_(item_bias.weight)
opt_bias = torch.optim.SGD(item_bias.parameters(), lr=0.05, momentum=0.9)

# -- in-batch negatives with the sampled-softmax log-frequency correction -------------------
item_freq = torch.bincount(ev_item, minlength=N_ITEMS).float() + 1.0
item_prob = item_freq / item_freq.sum()
log_q = torch.log(item_prob)
print("log_q", fmt(log_q[:5].tolist()), f"{log_q.min().item():.4f}")
temperature = 0.1
B = 64
perm = torch.randperm(N_EVENTS)
for step in range(12):
    idx = perm[(step * B) % N_EVENTS:(step * B) % N_EVENTS + B]
    u, it = ev_user[idx], ev_item[idx]
    q = user_tower(user_h[u], age_b[u], history[u])
    k = item_tower(it)
    logits = q @ k.T / temperature
    logits = logits - log_q[it][None, :] + item_bias(it).view(1, -1)
    labels = torch.arange(len(idx))
    loss = F.cross_entropy(logits, labels)
    for opt in (opt_sparse, opt_dense, opt_bias):
        opt.zero_grad()
    loss.backward()
    if step == 0:
        g = user_tower.id.weight.grad
        print("grad", g.is_sparse, g.layout, tuple(g.shape), g.is_coalesced(), g._nnz())
        gc = g.coalesce()
        print("coalesced", gc.is_coalesced(), gc._nnz(), gc._indices()[0, :6].tolist(),
              fmt(gc._values()[:3, 0].tolist()))
        print("dense view", f"{gc.to_dense().abs().sum().item():.5f}",
              f"{g.to_dense()[0].abs().sum().item():.4f}", item_tower.cats.weight.grad.layout)
        hg = user_tower.hist.weight.grad.coalesce()
        print("hist grad", hg._nnz(), 0 in hg.indices()[0].tolist(),
              f"{torch.sparse.sum(hg).item():.5f}",
              fmt(torch.sparse.sum(hg, dim=0).to_dense()[:3].tolist(), 5))
        print("dense grads", user_tower.mlp[0].weight.grad.layout,
              user_tower.age.weight.grad.is_sparse, logits.grad_fn.name())
    for opt in (opt_sparse, opt_dense, opt_bias):
        opt.step()
    if step % 3 == 0:
        acc = (logits.argmax(1) == labels).float().mean().item()
        print(f"step {step} loss {loss.item():.4f} acc {acc:.4f}")
norms = user_tower.id.weight.detach().norm(dim=1)
print("max_norm", f"{norms.max().item():.4f}", user_tower.id.weight[0].abs().sum().item())
print("adam state", sorted(opt_sparse.state[sparse_params[0]].keys()),
      opt_sparse.state[sparse_params[0]]["step"])
buf = opt_bias.state[item_bias.weight]["momentum_buffer"]
print("momentum buffer", buf.is_sparse, buf.is_coalesced(), buf._nnz(),
      fmt(item_bias.weight[:4, 0].tolist(), 5), f"{item_bias.weight.abs().sum().item():.5f}")

# -- interaction matrix as a sparse COO tensor with duplicate entries ---------------------
inter = torch.sparse_coo_tensor(torch.stack([ev_user, ev_item]), torch.ones(N_EVENTS),
                                (N_USERS, N_ITEMS))
print("coo", inter.is_coalesced(), inter._nnz(), inter.dtype, inter.layout)
inter = inter.coalesce()
print("coalesced", inter._nnz(), inter.values().max().item(), inter.indices()[:, :4].tolist())
per_user = torch.sparse.sum(inter, dim=1)
print("per user", per_user.is_sparse, per_user.to_dense()[:6].tolist(),
      torch.sparse.sum(inter).item())
co = torch.sparse.mm(inter, torch.ones(N_ITEMS, 1))
print("sparse.mm", co[:5, 0].tolist(), torch.equal(co[:, 0], per_user.to_dense()))
batch_users = torch.tensor([3, 0, 7, 3])
rows = inter.index_select(0, batch_users)
print("index_select", tuple(rows.shape), rows.is_coalesced(), rows._nnz(),
      rows.to_dense().sum(1).tolist(), rows._indices()[1, :5].tolist())
item_user = inter.transpose(0, 1)
print("transpose", tuple(item_user.shape), item_user.is_coalesced(),
      torch.sparse.sum(item_user, dim=1).to_dense()[:5].tolist(), inter.t()._nnz())
cold = inter.narrow_copy(0, N_USERS - 10, 10)
print("narrow_copy", tuple(cold.shape), cold._nnz(), cold.is_coalesced(),
      torch.index_select(cold, 1, torch.arange(3))._nnz())
print(inter.index_select(0, torch.tensor([1])).narrow_copy(1, 0, 12))
dwell = torch.rand(N_EVENTS) * 60
events = torch.sparse_coo_tensor(torch.stack([ev_user, ev_item]),
                                 torch.stack([torch.ones(N_EVENTS), dwell], 1),
                                 (N_USERS, N_ITEMS, 2)).coalesce()
print("hybrid", events.sparse_dim(), events.dense_dim(), events._nnz(),
      fmt(torch.sparse.sum(events, dim=(0, 1)).tolist(), 1),
      fmt(events.select(2, 1).coalesce().values()[:3].tolist(), 3))
user3 = events.select(0, 3)
print("user row", tuple(user3.shape), user3._nnz(), user3.is_coalesced(),
      fmt(torch.sparse.sum(user3, dim=1).to_dense()[:4].tolist(), 3),
      tuple(inter.sum(1, keepdim=True).shape), inter.unsqueeze(0).sparse_dim())
item_vecs = torch.randn(N_ITEMS, 3)
profile = torch.sparse.mm(inter, item_vecs) / per_user.to_dense().clamp(min=1)[:, None]
print("profile", fmt(profile[0].tolist()))

# -- retrieval: top-k with the seen items masked out --------------------------------------
with torch.no_grad():
    all_items = torch.arange(N_ITEMS)
    K_ = item_tower(all_items)
    Q = user_tower(user_h, age_b, history)
    scores = Q @ K_.T
seen = torch.zeros(N_USERS, N_ITEMS, dtype=torch.bool)
split = N_EVENTS * 3 // 4
seen[ev_user[:split], ev_item[:split]] = True
masked = scores.masked_fill(seen, float("-inf"))
print("masked", torch.isinf(masked).sum().item(), f"{masked.max().item():.4f}")
hide = torch.zeros(N_USERS, N_ITEMS)
hide.scatter_(1, history.clamp(max=N_ITEMS - 1), float("-inf"))
print("scatter_", torch.isinf(hide).sum().item(), torch.isinf(hide[0]).nonzero()[:3, 0].tolist())
top = masked.topk(10, dim=1)
print("topk", top.indices[0].tolist(), fmt(top.values[0, :4].tolist()), top.indices.dtype)
relevant = torch.zeros(N_USERS, N_ITEMS, dtype=torch.bool)
relevant[ev_user[split:], ev_item[split:]] = True
relevant &= ~seen
hits = relevant.gather(1, top.indices).float()
n_rel = relevant.sum(1)
has = n_rel > 0
recall = (hits.sum(1)[has] / n_rel[has].clamp(max=10).float()).mean()
disc = 1.0 / torch.log2(torch.arange(2, 12).float())
dcg = (hits * disc).sum(1)
idcg = torch.stack([disc[:min(int(n), 10)].sum() for n in n_rel])
ndcg = (dcg[has] / idcg[has]).mean()
print("users with relevant", has.sum().item(), f"recall@10 {recall.item():.4f}",
      f"ndcg@10 {ndcg.item():.4f}")
pop_top = item_freq.topk(10).indices
pop_hits = relevant[:, pop_top].float()
print("popularity baseline", f"{(pop_hits.sum(1)[has] / n_rel[has].clamp(max=10)).mean():.4f}")

# -- negative sampling on popularity^0.75 --------------------------------------------------
neg_w = item_freq.pow(0.75)
torch.manual_seed(5)
neg = torch.multinomial(neg_w, 20, replacement=True)
neg_nr = torch.multinomial(neg_w, 20, replacement=False)
print("negatives", neg.tolist(), neg_nr.unique().numel(), neg_nr[:6].tolist())
batch_neg = torch.multinomial(neg_w.expand(4, -1), 5)
print("per-row", batch_neg.tolist(), batch_neg.dtype)
g = torch.Generator().manual_seed(7)
print("generator", torch.multinomial(neg_w / neg_w.sum(), 6, generator=g).tolist())
with torch.no_grad():
    pos_s = (Q[ev_user[:8]] * K_[ev_item[:8]]).sum(1)
    neg_s = (Q[ev_user[:8], None, :] * K_[neg[:5]][None]).sum(-1)
    bce = F.binary_cross_entropy_with_logits(torch.cat([pos_s[:, None], neg_s], 1) / temperature,
                                             torch.cat([torch.ones(8, 1), torch.zeros(8, 5)], 1))
print("sampled bce", f"{bce.item():.4f}", tuple(neg_s.shape))

# -- a dense table with Adagrad, and mean/max bags with a padding index --------------------
bag_max = nn.EmbeddingBag(ITEM_BUCKETS, 4, mode="max", padding_idx=0)
bag_mean = nn.EmbeddingBag.from_pretrained(bag_max.weight.detach().clone(), mode="mean",
                                           padding_idx=0, freeze=False)
ids = torch.tensor([3, 0, 5, 0, 0, 7, 7, 2])
offs = torch.tensor([0, 2, 3, 5])
print("max bag", fmt(bag_max(ids, offs)[:, 0].tolist()))
print("mean bag", fmt(bag_mean(ids, offs)[:, 1].tolist()))
ada = torch.optim.Adagrad(bag_mean.parameters(), lr=0.1, lr_decay=0.01)
for _ in range(3):
    ada.zero_grad()
    bag_mean(ids, offs).pow(2).sum().backward()
    ada.step()
print("adagrad", fmt(bag_mean.weight[7].tolist()), bag_mean.weight[0].abs().sum().item(),
      f"{ada.state[bag_mean.weight]['sum'][7, 0].item():.5f}")
emb = nn.Embedding(10, 3, scale_grad_by_freq=True, padding_idx=2)
emb(torch.tensor([[1, 1, 2], [1, 4, 4]])).sum().backward()
print("freq dense", emb.weight.grad[[1, 2, 4], 0].tolist())
emb_s = nn.Embedding(10, 3, sparse=True, padding_idx=2)
emb_s(torch.tensor([[1, 1, 2], [1, 4, 4]])).sum().backward()
sg = emb_s.weight.grad
print("sparse dup", sg._nnz(), sg._indices().tolist(), sg.coalesce()._values()[:, 0].tolist())


# -- typical mistakes ----------------------------------------------------------------------
def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", out.tolist() if isinstance(out, torch.Tensor) else out)
    except Exception as e:
        print(label, type(e).__name__, str(e).split("\n")[0])


freq_sparse = nn.Embedding(10, 3, scale_grad_by_freq=True, sparse=True)
attempt("freq with sparse", lambda: freq_sparse(torch.tensor([1, 1])).sum().backward())
attempt("sparseadam dense", lambda: torch.optim.SparseAdam(dense_params[:2]).step())
emb2 = nn.Embedding(10, 3, sparse=True)
emb2(torch.tensor([1, 2])).sum().backward()
attempt("adam sparse grad", lambda: torch.optim.Adam(emb2.parameters()).step())
attempt("offsets not at 0", lambda: item_tower.cats(torch.tensor([1, 2, 3]),
                                                    torch.tensor([1, 2, 3])))
attempt("index out of range", lambda: user_tower.id(torch.tensor([USER_BUCKETS])))
attempt("negative index", lambda: item_tower.id(torch.tensor([-1])))
base = torch.randn(3, 10)
attempt("max_norm non-contiguous", lambda: F.embedding(torch.tensor([1, 2]), base.t(),
                                                       max_norm=1.0).norm(dim=1))
print("renormed in place", fmt(base.norm(dim=0)[:4].tolist()))
attempt("psw with mean", lambda: user_tower.hist(torch.tensor([1, 2]), torch.tensor([0]),
                                                 per_sample_weights=torch.ones(2)))
attempt("multinomial too many", lambda: torch.multinomial(torch.tensor([1.0, 0.0, 2.0]), 3))
attempt("multinomial negative", lambda: torch.multinomial(torch.tensor([1.0, -1.0]), 1))
attempt("sparse mm shape", lambda: torch.sparse.mm(inter, torch.ones(3, 2)))
print("log zero", torch.log(torch.tensor([0.0, 1.0])).tolist(), math.isinf(log_q.min()))
