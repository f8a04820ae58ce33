"""Tabular data and a recommender on synthetic user/item interactions: NaN-aware
preprocessing (isnan, nan_to_num, nanmean, nanmedian, nanquantile with its interpolation
modes, standardisation with std(correction=), bucketize/searchsorted binning, one_hot), a
torch.utils.data pipeline (TensorDataset, random_split with a generator, Subset,
ConcatDataset, WeightedRandomSampler, BatchSampler, a custom collate_fn, drop_last), a
wide-and-deep factorization machine (Embedding with padding_idx and max_norm, EmbeddingBag
over multi-hot genres with offsets and per_sample_weights, Bilinear, the FM pairwise term),
BCEWithLogitsLoss with pos_weight and weight, a BPR loss with logsigmoid, MarginRankingLoss,
Adagrad plus SparseAdam on a sparse embedding, ReduceLROnPlateau with early stopping, ROC-AUC,
precision@k and NDCG computed in torch, histc/histogram, a model summary, and the usual
mistakes (embedding index out of range, BCE target dtype/shape, pos_weight of wrong size)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Subset,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

torch.manual_seed(0)
N_USERS, N_ITEMS, N_GENRES, N = 30, 40, 6, 480


def fmt(xs, digits=4):
    return "[" + ", ".join(f"{x:.{digits}f}" for x in xs) + "]"


# -- a table of mixed features with missing values -----------------------------------------
age = torch.randint(18, 70, (N,)).float()
income = torch.randn(N).exp() * 30.0
score = torch.randn(N, 3)
age[torch.rand(N) < 0.1] = float("nan")
income[torch.rand(N) < 0.15] = float("nan")
score[torch.rand(N, 3) < 0.05] = float("nan")
print("missing", torch.isnan(age).sum().item(), torch.isnan(income).sum().item(),
      torch.isnan(score).sum(0).tolist())
print("nanmean", f"{age.nanmean().item():.4f}", fmt(score.nanmean(0).tolist()))
med = income.nanmedian()
vals, idx = score.nanmedian(dim=0)
print("nanmedian", f"{med.item():.4f}", fmt(vals.tolist()), idx.tolist())
for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
    q = torch.nanquantile(income, torch.tensor([0.1, 0.5, 0.9]), interpolation=mode)
    print("nanquantile", mode, fmt(q.tolist()))
print("quantile nan", torch.quantile(income, 0.5).item())
age = torch.where(torch.isnan(age), age.nanmean(), age)
income = torch.log1p(torch.nan_to_num(income, nan=med.item()))
score = torch.nan_to_num(score, nan=0.0, posinf=1.0, neginf=-1.0)
dense = torch.cat([age[:, None], income[:, None], score], dim=1)
mu, sd = dense.mean(0), dense.std(0, correction=0)
print("std c0/c1", fmt(sd.tolist()), fmt(dense.std(0, correction=1)[:2].tolist()))
dense = (dense - mu) / sd
print("dense", tuple(dense.shape), dense.dtype, fmt(dense[0].tolist()))
edges = torch.tensor([25.0, 35.0, 50.0, 60.0])
age_bin = torch.bucketize(age, edges)
age_bin_r = torch.bucketize(age, edges, right=True)
print("bucketize", torch.bincount(age_bin, minlength=5).tolist(),
      (age_bin != age_bin_r).sum().item(), age_bin.dtype)
ss = torch.searchsorted(edges, torch.tensor([[25.0, 40.0], [61.0, 10.0]]), side="right",
                        out_int32=True)
print("searchsorted", ss.tolist(), ss.dtype)
age_onehot = F.one_hot(age_bin, num_classes=5)
print("one_hot", tuple(age_onehot.shape), age_onehot.dtype, age_onehot.sum(0).tolist())

# -- interactions: users, items, multi-hot genres, clicks ---------------------------------
users = torch.randint(1, N_USERS, (N,))          # 0 is the padding id
items = torch.randint(0, N_ITEMS, (N,))
taste = torch.randn(N_USERS, 4)
item_vec = torch.randn(N_ITEMS, 4)
logit = (taste[users] * item_vec[items]).sum(1) + 0.5 * dense[:, 1] - 1.2
clicks = torch.bernoulli(torch.sigmoid(logit))
n_genres = torch.randint(1, 4, (N,))
genres = torch.randint(0, N_GENRES, (int(n_genres.sum()),))
offsets = torch.cat([torch.zeros(1, dtype=torch.long), n_genres.cumsum(0)[:-1]])
print("clicks", clicks.sum().item(), clicks.dtype, "genres", genres.numel(), offsets[:5].tolist())
row = torch.arange(N)
feats = torch.stack([users, items, age_bin], 1)
data = TensorDataset(feats, dense, row, clicks)
gen = torch.Generator().manual_seed(42)
train, val, test = random_split(data, [0.7, 0.15, 0.15], generator=gen)
print("split", len(train), len(val), len(test), train.indices[:5])
extra = Subset(data, list(range(5)))
both = ConcatDataset([val, extra])
print("concat", len(both), both.cumulative_sizes, both[len(val)][2].item())

labels = clicks[train.indices]
class_w = 1.0 / torch.bincount(labels.long()).double()
weights = class_w[labels.long()]
sampler = WeightedRandomSampler(weights, num_samples=len(train), replacement=True,
                                generator=torch.Generator().manual_seed(1))
print("sampler", len(sampler), list(sampler)[:6])


def collate(batch):
    f, d, r, y = zip(*batch)
    r = torch.stack(r)
    bag = [genres[offsets[i]:offsets[i] + n_genres[i]] for i in r.tolist()]
    lens = torch.tensor([len(b) for b in bag])
    offs = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)[:-1]])
    return torch.stack(f), torch.stack(d), torch.cat(bag), offs, torch.stack(y)


loader = DataLoader(train, batch_size=32, sampler=sampler, collate_fn=collate, drop_last=True)
f, d, g, o, y = next(iter(loader))
print("batch", tuple(f.shape), tuple(d.shape), tuple(g.shape), o[:4].tolist(), y.mean().item())
bs = BatchSampler(range(10), batch_size=4, drop_last=False)
print("batch_sampler", list(bs), len(BatchSampler(range(10), 4, drop_last=True)))


# -- a wide-and-deep factorization machine ------------------------------------------------
class WideDeepFM(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.user = nn.Embedding(N_USERS, dim, padding_idx=0, max_norm=2.0)
        self.item = nn.Embedding(N_ITEMS, dim, sparse=True)
        self.agebin = nn.Embedding(5, dim)
        self.genre = nn.EmbeddingBag(N_GENRES, dim, mode="sum")
        self.wide = nn.Linear(5 + 5, 1)
        self.cross = nn.Bilinear(dim, dim, 4)
        self.deep = nn.Sequential(nn.Linear(4 * dim + 5 + 4, 16), nn.ReLU(), nn.Dropout(0.1),
                                  nn.Linear(16, 1))

    def forward(self, f, d, g, o, gw=None):
        fields = torch.stack([self.user(f[:, 0]), self.item(f[:, 1]), self.agebin(f[:, 2]),
                              self.genre(g, o, per_sample_weights=gw)], 1)   # (B, 4, D)
        s = fields.sum(1)
        fm = 0.5 * (s.pow(2) - fields.pow(2).sum(1)).sum(1, keepdim=True)
        cross = self.cross(fields[:, 0], fields[:, 1])
        wide = self.wide(torch.cat([F.one_hot(f[:, 2], 5).float(), d], 1))
        deep = self.deep(torch.cat([fields.flatten(1), d, cross], 1))
        return (wide + fm + deep).squeeze(1)


torch.manual_seed(3)
model = WideDeepFM()
print("params", sum(p.numel() for p in model.parameters()),
      [n for n, m in model.named_modules() if isinstance(m, (nn.Embedding, nn.EmbeddingBag))])
print("padding row", model.user.weight[0].abs().sum().item(), model.item.weight.requires_grad)
pos = clicks[train.indices].sum()
pos_weight = (len(train) - pos) / pos
crit = nn.BCEWithLogitsLoss(pos_weight=pos_weight.reshape(1))
dense_params = [p for n, p in model.named_parameters() if not n.startswith("item.")]
opt = torch.optim.Adagrad(dense_params, lr=0.05, initial_accumulator_value=0.1)
sparse_opt = torch.optim.SparseAdam(list(model.item.parameters()), lr=0.01)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
val_loader = DataLoader(val, batch_size=64, collate_fn=collate)
best, bad, patience = float("inf"), 0, 3
for epoch in range(1, 9):
    model.train()
    total = 0.0
    for f, d, g, o, y in loader:
        opt.zero_grad()
        sparse_opt.zero_grad()
        loss = crit(model(f, d, g, o), y)
        loss.backward()
        opt.step()
        sparse_opt.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        vl = sum(crit(model(f, d, g, o), y).item() for f, d, g, o, y in val_loader)
    sched.step(vl)
    print(f"epoch {epoch} train {total / len(loader):.4f} val {vl:.4f}",
          f"lr {opt.param_groups[0]['lr']:.4f}")
    if vl < best - 1e-4:
        best, bad = vl, 0
    else:
        bad += 1
        if bad >= patience:
            print("early stop at", epoch)
            break
print("grad sparse", model.item.weight.grad.is_sparse, model.user.weight.grad is not None)
norms = model.user.weight.norm(dim=1)
print("max_norm", f"{norms.max().item():.4f}", model.user.weight[0].abs().sum().item())

# -- metrics in torch ---------------------------------------------------------------------
model.eval()
test_loader = DataLoader(test, batch_size=100, collate_fn=collate)
with torch.no_grad():
    f, d, g, o, y = next(iter(test_loader))
    w = torch.rand(g.shape)
    scores = model(f, d, g, o, gw=None)
    print("per_sample_weights", fmt(model.genre(g, o, per_sample_weights=w)[0, :3].tolist()))
order = scores.argsort(descending=True)
ys = y[order]
tpr = ys.cumsum(0) / ys.sum()
fpr = (1 - ys).cumsum(0) / (1 - ys).sum()
auc = torch.trapz(tpr, fpr)
ranks = scores.argsort().argsort().double() + 1
auc2 = (ranks[y == 1].sum() - ys.sum() * (ys.sum() + 1) / 2) / (ys.sum() * (1 - ys).sum())
print("auc", f"{auc.item():.4f}", f"{auc2.item():.4f}", auc2.dtype)
top = scores.topk(10)
print("precision@10", y[top.indices].mean().item(), top.indices.dtype)
gains = ys[:10] / torch.log2(torch.arange(2, 12).float())
ideal = y.sort(descending=True).values[:10] / torch.log2(torch.arange(2, 12).float())
print("ndcg@10", f"{(gains.sum() / ideal.sum()).item():.4f}")
print("histc", torch.histc(torch.sigmoid(scores), bins=5, min=0, max=1).tolist())
hist, bin_edges = torch.histogram(scores, bins=4)
print("histogram", hist.tolist(), fmt(bin_edges.tolist()))

# -- pairwise ranking losses -------------------------------------------------------------
u = torch.randint(1, N_USERS, (64,))
i_pos, i_neg = torch.randint(0, N_ITEMS, (64,)), torch.randint(0, N_ITEMS, (64,))
ue = model.user(u)
x_pos = (ue * model.item(i_pos)).sum(1)
x_neg = (ue * model.item(i_neg)).sum(1)
bpr = -F.logsigmoid(x_pos - x_neg).mean()
mrl = nn.MarginRankingLoss(margin=0.5)(x_pos, x_neg, torch.ones(64))
mrl_sum = F.margin_ranking_loss(x_pos, x_neg, -torch.ones(64), margin=0.1, reduction="sum")
print("bpr", f"{bpr.item():.4f}", "margin", f"{mrl.item():.4f}", f"{mrl_sum.item():.4f}")
bpr.backward()
print("bpr grad", model.item.weight.grad.is_sparse, tuple(model.item.weight.grad.shape))
pre = nn.Embedding.from_pretrained(model.agebin.weight.detach(), freeze=False, padding_idx=4,
                                   max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)
pre(age_bin[:20]).sum().backward()
print("from_pretrained", f"{pre.weight.abs().sum(1).max().item():.4f}",
      pre.weight.grad[:, 0].tolist())
bag = nn.EmbeddingBag.from_pretrained(pre.weight.detach(), mode="max", padding_idx=0,
                                      include_last_offset=True)
print("bag max", fmt(bag(torch.tensor([0, 1, 2, 0, 3]), torch.tensor([0, 2, 2, 5]))[:, 0].tolist()))
q = torch.nanquantile(torch.stack([income[:8], score[:8, 0]]), 0.25, dim=1, keepdim=True)
print("nanquantile dim", tuple(q.shape), fmt(q.flatten().tolist()))
cnt, be = torch.histogram(income, bins=3, range=(0.0, 6.0), weight=torch.ones(N) * 2, density=True)
print("histogram density", fmt(cnt.tolist()), fmt(be.tolist(), 1))
vals, counts = torch.unique(age_bin, return_counts=True)
print("unique", vals.tolist(), counts.tolist(),
      fmt(torch.renorm(dense[:3], 2, 0, 1.0).norm(dim=1).tolist()))
wl = F.binary_cross_entropy_with_logits(scores, y, weight=torch.linspace(0.5, 1.5, len(y)),
                                        pos_weight=torch.tensor([2.0]), reduction="none")
print("weighted bce", tuple(wl.shape), fmt(wl[:3].tolist()))

# -- typical mistakes ---------------------------------------------------------------------
mistakes = [
    ("index out of range", lambda: model.user(torch.tensor([N_USERS]))),
    ("float indices", lambda: model.user(torch.tensor([1.0]))),
    ("bce long target", lambda: crit(scores, y.long())),
    ("bce target shape", lambda: crit(scores, y[:, None])),
    ("pos_weight size", lambda: F.binary_cross_entropy_with_logits(
        scores[:, None].expand(-1, 3), y[:, None].expand(-1, 3), pos_weight=torch.ones(2))),
    ("bag offsets", lambda: model.genre(g, torch.tensor([1, 2]))),
    ("bilinear shape", lambda: model.cross(torch.randn(2, 8), torch.randn(2, 7))),
    ("margin shape", lambda: F.margin_ranking_loss(x_pos, x_neg[:10], torch.ones(64))),
]
for name, fn in mistakes:
    try:
        fn()
        print(name, "no error")
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
