"""Ranking, retrieval and classification metrics written in plain torch, with ties.

Evaluation code in the style of torchmetrics and research repositories: recall@k,
mAP, nDCG, ROC-AUC by ranks, confusion matrices, quantiles and histograms. Scores are
rounded on purpose so that ties decide the order of indices everywhere.
"""

import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def show(name, t):
    """Print a tensor's shape, dtype and values (floats to 4 decimals)."""
    if t.dtype.is_floating_point:
        vals = [f"{v:.4f}" for v in t.flatten().tolist()]
    else:
        vals = [str(v) for v in t.flatten().tolist()]
    print(f"{name}: shape={tuple(t.shape)} dtype={t.dtype} [{', '.join(vals)}]")


def catch(name, fn):
    """Run fn and print the exception type and message a user would see."""
    try:
        out = fn()
        print(f"{name}: no error -> {out}")
    except Exception as e:  # noqa: BLE001
        msg = str(e).split("\n")[0]
        print(f"{name}: {type(e).__name__}: {msg}")


print("== topk with ties ==")
# quantized scores: many ties per row
scores = torch.randint(0, 4, (5, 8)).float() / 4
show("scores", scores)
for largest in (True, False):
    for sorted_ in (True, False):
        for dim in (0, 1, -1):
            v, i = torch.topk(scores, 3, dim=dim, largest=largest, sorted=sorted_)
            if not sorted_:
                # unsorted order is unspecified: compare as sets via sort of values
                v, order = v.sort(dim=dim, descending=largest, stable=True)
                i = i.gather(dim, order)
                show(f"topk(l={largest},s={sorted_},d={dim}) vals", v)
            else:
                show(f"topk(l={largest},s={sorted_},d={dim}) vals", v)
                show(f"topk(l={largest},s={sorted_},d={dim}) idx", i)
v, i = scores.topk(2)
show("method topk idx", i)
ret = torch.topk(torch.tensor([1, 3, 3, 2, 3, 1]), 2)
print(type(ret).__name__, ret.values.tolist(), ret.indices.tolist())
show("topk int ties", torch.topk(torch.tensor([5, 1, 5, 5, 0, 1]), 4).indices)
show("topk float ties", torch.topk(torch.tensor([0.5, 0.1, 0.5, 0.5, 0.0, 0.1]), 4).indices)
show("topk smallest ties", torch.topk(torch.tensor([0.5, 0.1, 0.5, 0.5, 0.0, 0.1]), 3,
                                      largest=False).indices)
nan_s = torch.tensor([0.2, float("nan"), 0.9, 0.2, float("nan")])
show("topk with nan", torch.topk(nan_s, 3).indices)
show("topk smallest with nan", torch.topk(nan_s, 4, largest=False).indices)
catch("topk bool", lambda: torch.topk(torch.tensor([True, False, True, True]), 2))

print("== recall@k / precision@k ==")
n_q, n_items = 6, 10
sim = torch.randint(0, 5, (n_q, n_items)).float() / 5
relevant = torch.rand(n_q, n_items) < 0.3
relevant[:, 0] = True
for k in (1, 3, 5):
    top_idx = sim.topk(k, dim=1).indices
    hits = relevant.gather(1, top_idx)
    recall = hits.sum(1).float() / relevant.sum(1).float()
    precision = hits.float().mean(1)
    print(f"k={k} recall={recall.mean():.5f} precision={precision.mean():.5f}")
    show(f"  hits@{k}", hits.int().sum(1))

print("== sort / argsort ==")
x = torch.tensor([3.0, -0.0, 1.0, 0.0, float("nan"), 1.0, -1.0, float("nan"), 3.0, 0.0])
for desc in (False, True):
    for stable in (False, True):
        sv, si = torch.sort(x, descending=desc, stable=stable)
        show(f"sort desc={desc} stable={stable} vals", sv)
        show(f"sort desc={desc} stable={stable} idx", si)
        print("  signbit:", torch.signbit(sv).int().tolist())
show("argsort", torch.argsort(x))
show("argsort desc stable", torch.argsort(x, descending=True, stable=True))
xi = torch.tensor([[4, 1, 4, 2, 1], [0, 0, 7, 7, 3]])
show("int sort dim=1 idx", xi.sort(dim=1).indices)
show("int sort dim=0 desc idx", xi.sort(dim=0, descending=True).indices)
show("int argsort stable desc", xi.argsort(dim=-1, descending=True, stable=True))
xb = torch.tensor([True, False, True, False, False, True])
sv, si = xb.sort(stable=True)
show("bool sort vals", sv)
show("bool sort idx", si)
show("bool argsort desc", torch.argsort(xb, descending=True, stable=True))
show("int8 sort", torch.tensor([3, -2, 3, 0, -2], dtype=torch.int8).sort(stable=True).indices)
show("float64 msort", torch.msort(torch.tensor([[2.0, 1.0], [1.0, 2.0], [0.5, 0.5]],
                                               dtype=torch.float64)))

print("== mAP ==")
q_scores = torch.randint(0, 6, (4, 12)).float() / 6
q_rel = (torch.rand(4, 12) < 0.35).float()
q_rel[:, 3] = 1.0
order = q_scores.argsort(dim=1, descending=True, stable=True)
rel_sorted = q_rel.gather(1, order)
cum_hits = rel_sorted.cumsum(dim=1)
ranks = torch.arange(1, 13, dtype=torch.float32)
prec_at = cum_hits / ranks
ap = (prec_at * rel_sorted).sum(1) / rel_sorted.sum(1).clamp(min=1)
show("order", order)
show("AP", ap)
print(f"mAP = {ap.mean():.5f}")

print("== nDCG ==")
gains = torch.randint(0, 4, (4, 12)).float()
discounts = torch.log2(torch.arange(12, dtype=torch.float32) + 2)
show("discounts", discounts[:6])
pred_order = q_scores.argsort(dim=1, descending=True, stable=True)
dcg = ((2 ** gains.gather(1, pred_order) - 1) / discounts).cumsum(1)
ideal = (2 ** gains.sort(dim=1, descending=True).values - 1) / discounts
idcg = ideal.cumsum(1)
for k in (3, 5, 10):
    ndcg = dcg[:, k - 1] / idcg[:, k - 1].clamp(min=1e-12)
    print(f"nDCG@{k}: {[round(v, 5) for v in ndcg.tolist()]}")

print("== ROC-AUC via ranks ==")
y_score = torch.randint(0, 7, (20,)).float() / 7
y_true = (torch.rand(20) < 0.45).long()
y_true[0], y_true[1] = 1, 0
# naive ranks: argsort of argsort (ties broken by position)
naive_rank = y_score.argsort(stable=True).argsort(stable=True).float() + 1
show("naive ranks", naive_rank)
# tie-averaged ranks
uniq, inv, counts = torch.unique(y_score, return_inverse=True, return_counts=True)
show("uniq", uniq)
show("inv", inv)
show("counts", counts)
first_rank = torch.cumsum(counts, 0) - counts + 1
avg_per_val = first_rank.float() + (counts.float() - 1) / 2
avg_rank = avg_per_val[inv]
show("avg ranks", avg_rank)
sum_by_val = torch.zeros(len(uniq)).scatter_add(0, inv, naive_rank)
show("scatter_add rank sums", sum_by_val)
avg_rank2 = (sum_by_val / counts.float())[inv]
print("avg ranks agree:", torch.equal(avg_rank, avg_rank2))
n_pos = int(y_true.sum())
n_neg = len(y_true) - n_pos
auc = (avg_rank[y_true == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
auc_naive = (naive_rank[y_true == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
print(f"AUC tie-avg={auc:.5f} naive={auc_naive:.5f} n_pos={n_pos} n_neg={n_neg}")
# pairwise check
diff = y_score[y_true == 1][:, None] - y_score[y_true == 0][None, :]
auc_pair = ((diff > 0).float() + 0.5 * (diff == 0).float()).mean()
print(f"AUC pairwise={auc_pair:.5f}")

print("== unique ==")
lab = torch.tensor([3, 1, 3, 0, 1, 1, 7, 0])
u, inv, cnt = torch.unique(lab, sorted=True, return_inverse=True, return_counts=True)
show("unique", u)
show("inverse", inv)
show("counts", cnt)
show("unique(sorted=False) sorted", torch.unique(lab, sorted=False).sort().values)
u2, inv2 = lab.unique(return_inverse=True)
show("method unique inv", inv2)
rows = torch.tensor([[1, 2], [0, 5], [1, 2], [0, 4], [0, 5]])
ur, ir, cr = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
show("unique rows", ur)
show("rows inverse", ir)
show("rows counts", cr)
uc, ic, cc = torch.unique(rows.T, dim=1, return_inverse=True, return_counts=True)
show("unique cols(dim=1)", uc)
show("cols inverse", ic)
show("cols counts", cc)
uf = torch.unique(torch.tensor([0.5, -0.0, 0.0, 0.5, 2.0]))
show("unique float", uf)
ub = torch.unique(torch.tensor([True, False, True]), return_counts=True)
show("unique bool", ub[0])
show("unique bool counts", ub[1])
seq = torch.tensor([1, 1, 2, 2, 2, 1, 3, 3, 1])
o, oi, oc = torch.unique_consecutive(seq, return_inverse=True, return_counts=True)
show("unique_consecutive", o)
show("uc inverse", oi)
show("uc counts", oc)
m2 = torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]])
show("unique_consecutive dim=0", torch.unique_consecutive(m2, dim=0))

# rows with NaN and signed zeros: each NaN row is its own group, -0.0 groups with 0.0
zr = torch.tensor([[0.0, 1.0], [-0.0, 1.0], [float("nan"), 2.0], [0.0, 1.0], [float("nan"), 2.0],
                   [-0.0, 0.5]] * 4)
uz, iz, cz = torch.unique(zr, dim=0, return_inverse=True, return_counts=True)
show("unique rows nan/-0", uz)
show("rows nan/-0 inverse", iz)
show("rows nan/-0 counts", cz)
half_scores = (torch.randint(-2, 3, (70,)) / 4).half()
half_scores[::9] = float("nan")
uh, ih, ch = torch.unique(half_scores, return_inverse=True, return_counts=True)
show("unique half nan", uh)
show("unique half inverse", ih)
show("unique half counts", ch)
zf = torch.tensor([0.0, -0.0] * 20)[torch.randperm(40)]
print("unique zero sign:", torch.signbit(torch.unique(zf)).tolist())

print("== bincount / histc / histogram ==")
cls = torch.tensor([0, 2, 2, 5, 1, 2])
show("bincount", torch.bincount(cls))
show("bincount minlength", torch.bincount(cls, minlength=8))
w = torch.tensor([0.5, 1.0, 0.25, 2.0, 1.5, 0.75])
show("bincount weights", torch.bincount(cls, weights=w))
show("bincount weights f64", torch.bincount(cls, weights=w.double(), minlength=7))
show("bincount empty", torch.bincount(torch.tensor([], dtype=torch.long), minlength=3))
data = torch.randn(200)
show("histc", torch.histc(data, bins=8, min=-2, max=2))
show("histc auto range", torch.histc(torch.tensor([1.0, 2.0, 1.0, 4.0]), bins=4))
show("histc equal", torch.histc(torch.tensor([3.0, 3.0, 3.0]), bins=3))
hist, edges = torch.histogram(data, bins=6)
show("histogram counts", hist)
show("histogram edges", edges)
hist, edges = torch.histogram(data, bins=5, range=(-1.0, 1.0), density=True)
show("histogram density", hist)
print(f"density integral={(hist * edges.diff()).sum():.5f}")
hist, edges = torch.histogram(data, bins=torch.tensor([-3.0, -1.0, 0.0, 0.5, 3.0]))
show("histogram tensor bins", hist)
hw, _ = torch.histogram(torch.tensor([0.0, 1.0, 1.0, 2.0]), bins=2,
                        weight=torch.tensor([1.0, 2.0, 3.0, 4.0]))
show("histogram weighted", hw)

print("== bucketize / searchsorted ==")
bounds = torch.tensor([0.0, 0.25, 0.5, 0.5, 1.0])
vals = torch.tensor([-1.0, 0.0, 0.25, 0.3, 0.5, 0.99, 1.0, 2.0])
show("bucketize", torch.bucketize(vals, bounds))
show("bucketize right", torch.bucketize(vals, bounds, right=True))
show("bucketize int32", torch.bucketize(vals, bounds, out_int32=True))
show("searchsorted left", torch.searchsorted(bounds, vals))
show("searchsorted right", torch.searchsorted(bounds, vals, side="right"))
show("searchsorted right=True", torch.searchsorted(bounds, vals, right=True))
unsorted = torch.tensor([0.5, 0.0, 1.0, 0.25, 0.5])
sorter = torch.argsort(unsorted, stable=True)
show("searchsorted sorter", torch.searchsorted(unsorted, vals, sorter=sorter))
show("searchsorted sorter right", torch.searchsorted(unsorted, vals, side="right",
                                                     sorter=sorter))
r = torch.searchsorted(bounds, vals, out_int32=True)
print("out_int32 dtype:", r.dtype)
b2 = torch.tensor([[0, 2, 4], [1, 1, 3]])
show("searchsorted 2d", torch.searchsorted(b2, torch.tensor([[2, 3], [1, 5]])))
show("searchsorted scalar", torch.searchsorted(bounds, 0.5))

print("== kthvalue / median / mode ==")
t = torch.tensor([[2.0, 1.0, 2.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 6.0, 4.0]])
for k in (1, 2, 3, 4):
    r = torch.kthvalue(t, k, dim=1)
    show(f"kthvalue k={k} vals", r.values)
    show(f"kthvalue k={k} idx", r.indices)
r = t.kthvalue(2, dim=0, keepdim=True)
show("kthvalue dim0 keepdim idx", r.indices)
med = torch.median(t, dim=1)
show("median vals", med.values)
show("median idx", med.indices)
print("median all:", torch.median(t).item())
zm = torch.tensor([[0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 0.0, -0.0, 0.0] * 3, [-0.0, 0.0, 0.5] * 9])
print("median zeros:", torch.median(zm).item(), torch.median(zm.T).item(),
      torch.nanmedian(zm[:, 1:]).item(), torch.median(zm[1]).item())
med0 = t.median(dim=0)
show("median dim0 idx", med0.indices)
tn = torch.tensor([[1.0, float("nan"), 1.0, 3.0], [2.0, 2.0, float("nan"), float("nan")]])
r = torch.median(tn, dim=1)
show("median nan vals", r.values)
show("median nan idx", r.indices)
r = torch.nanmedian(tn, dim=1)
show("nanmedian vals", r.values)
show("nanmedian idx", r.indices)
print("nanmedian all:", torch.nanmedian(tn).item())
ti = torch.tensor([[3, 1, 3, 1, 2], [4, 4, 0, 0, 9]])
r = torch.mode(ti, dim=1)
show("mode vals", r.values)
show("mode idx", r.indices)
r = torch.mode(torch.tensor([1.0, 2.0, 2.0, 1.0, 3.0, 1.0, 2.0]))
print("mode float:", r.values.item(), r.indices.item())
r = ti.median(dim=1)
show("int median idx", r.indices)

print("== quantile ==")
qd = torch.tensor([1.0, 2.0, 2.0, 4.0, 7.0, 9.0, 10.0])
qs = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
    show(f"quantile {interp}", torch.quantile(qd, qs, interpolation=interp))
q2 = torch.tensor([[1.0, 5.0, 2.0, 8.0], [3.0, float("nan"), 1.0, 2.0]])
show("quantile dim1", torch.quantile(q2, 0.5, dim=1))
show("nanquantile dim1", torch.nanquantile(q2, 0.5, dim=1))
show("nanquantile keepdim", torch.nanquantile(q2, qs[:3], dim=1, keepdim=True))
for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
    show(f"nanquantile {interp}", torch.nanquantile(q2, 0.4, dim=1, interpolation=interp))
show("nearest half", torch.quantile(torch.tensor([0.0, 1.0, 2.0, 3.0]),
                                    torch.tensor([0.5, 1 / 6, 0.833333]),
                                    interpolation="nearest"))
show("quantile f64", torch.quantile(qd.double(), 0.3))
zq = torch.tensor([[0.0, -0.0, 0.5, -0.0, 0.0, 1.0, -0.0, 0.0] * 5, [-0.0, 0.0] * 20])
for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
    show(f"quantile zeros {interp}", torch.quantile(zq, torch.tensor([0.0, 0.1, 0.3]), dim=1,
                                                    interpolation=interp))
    show(f"nanquantile zeros {interp}", torch.nanquantile(zq, 0.2, dim=1,
                                                          interpolation=interp))

print("== cummax / cummin ==")
c = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 0.0, 5.0])
r = torch.cummax(c, 0)
show("cummax vals", r.values)
show("cummax idx", r.indices)
r = torch.cummin(c, 0)
show("cummin vals", r.values)
show("cummin idx", r.indices)
ci = torch.tensor([[2, 2, 1, 2], [0, 1, 1, 0]])
show("cummax int idx", ci.cummax(dim=1).indices)
show("cummin int dim0", ci.cummin(dim=0).indices)
ch16 = torch.tensor([0.0, -0.0, 0.5, -0.0, 0.0, 1.0]).half()
r = torch.cummax(ch16, 0)
show("cummax half vals", r.values)
show("cummax half idx", r.indices)
show("cummin half vals", torch.cummin(ch16, 0).values)
show("cummin bf16 vals", torch.cummin(ch16.bfloat16(), 0).values)
cn = torch.tensor([1.0, float("nan"), 2.0, float("nan"), 0.0])
show("cummax nan idx", torch.cummax(cn, 0).indices)
show("cummin nan idx", torch.cummin(cn, 0).indices)

print("== confusion matrix / F1 ==")
n_cls = 4
y_t = torch.randint(0, n_cls, (40,))
y_p = torch.where(torch.rand(40) < 0.6, y_t, torch.randint(0, n_cls, (40,)))
y_p[y_p == 3] = 2  # class 3 is never predicted -> zero division
cm = torch.bincount(y_t * n_cls + y_p, minlength=n_cls * n_cls).reshape(n_cls, n_cls)
show("confusion bincount", cm)
cm2 = torch.zeros(n_cls, n_cls, dtype=torch.long)
cm2.index_put_((y_t, y_p), torch.ones(40, dtype=torch.long), accumulate=True)
print("index_put_ agrees:", torch.equal(cm, cm2))
cmf = torch.zeros(n_cls, n_cls).index_put_((y_t, y_p), torch.tensor(1.0), accumulate=True)
show("index_put_ float", cmf)
tp = cm.diag().float()
fp = cm.sum(0).float() - tp
fn = cm.sum(1).float() - tp
prec = tp / (tp + fp)
rec = tp / (tp + fn)
show("precision raw", prec)
prec = torch.nan_to_num(prec, nan=0.0)
f1 = torch.where(prec + rec > 0, 2 * prec * rec / (prec + rec), torch.zeros_like(prec))
show("f1", f1)
print(f"macro F1={f1.mean():.5f} micro acc={tp.sum() / cm.sum():.5f}")
support = cm.sum(1)
print(f"weighted F1={(f1 * support).sum() / support.sum():.5f}")

print("== cosine retrieval ==")
emb = torch.randn(6, 5)
emb[3] = emb[1]  # duplicate -> tie
nrm = F.normalize(emb, dim=1)
show("norms", nrm.norm(dim=1))
cos = nrm @ nrm.T
cos.masked_fill_(torch.eye(6, dtype=torch.bool), float("-inf"))
show("cos row1", cos[1])
nn_idx = cos.argmax(dim=1)
show("nearest", nn_idx)
show("top2", cos.topk(2, dim=1).indices)
cs = F.cosine_similarity(emb[:, None, :], emb[None, :, :], dim=-1)
print(f"cosine_similarity [1,3]={cs[1, 3]:.5f} [0,2]={cs[0, 2]:.5f}")
queries = torch.randn(3, 5)
d = torch.cdist(queries, emb)
show("cdist", d)
show("cdist nearest", d.argmin(dim=1))
show("cdist top3", d.topk(3, dim=1, largest=False).indices)
d1 = torch.cdist(queries, emb, p=1)
show("cdist p=1 argsort", d1.argsort(dim=1))
dinf = torch.cdist(queries, emb, p=float("inf"))
show("cdist p=inf", dinf)
dup = torch.cdist(emb, emb)
show("self cdist row1 argsort", dup[1].argsort(stable=True))

print("== isin ==")
retrieved = torch.tensor([[4, 2, 9], [1, 1, 0]])
gt = torch.tensor([2, 1, 7])
show("isin", torch.isin(retrieved, gt))
show("isin invert", torch.isin(retrieved, gt, invert=True))
show("isin scalar", torch.isin(retrieved, 1))
show("isin float", torch.isin(torch.tensor([0.5, float("nan"), -0.0]),
                              torch.tensor([0.0, float("nan")])))

print("== argmax / argmin ==")
a = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, float("nan"), 5.0, float("nan")],
                  [0.0, 0.0, -1.0, -1.0]])
show("argmax dim1", a.argmax(dim=1))
show("argmin dim1", a.argmin(dim=1))
show("argmax dim0", torch.argmax(a, dim=0))
print("argmax flat:", torch.argmax(a).item(), "argmin flat:", torch.argmin(a).item())
show("argmax keepdim", a.argmax(dim=1, keepdim=True))
show("max idx ties", a.max(dim=1).indices)
show("min idx ties", a.min(dim=1).indices)
ai = torch.tensor([[7, 7, 2], [1, 3, 3]])
show("int argmax", ai.argmax(1))
show("int argmin", ai.argmin(1))
print("bool argmax:", torch.tensor([False, True, True]).int().argmax().item())

print("== more edge cases ==")
show("bincount int weights", torch.bincount(torch.tensor([0, 2, 2]),
                                           weights=torch.tensor([1, 2, 3])))
show("bincount bool weights", torch.bincount(torch.tensor([0, 2, 2]),
                                            weights=torch.tensor([True, False, True])))
show("bincount uint8", torch.bincount(torch.tensor([0, 2, 2], dtype=torch.uint8)))
hist, edges = torch.histogram(torch.tensor([1.0, 1.0, 1.0]), bins=3, density=True)
show("histogram constant", hist)
show("histogram constant edges", edges)
show("histc out of range", torch.histc(torch.tensor([-1.0, 2.0, 30.0, 3.0]), bins=3, min=0, max=3))
show("isin assume_unique", torch.isin(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1, 3]),
                                      assume_unique=True))
show("isin int vs float", torch.isin(torch.tensor([1, 2, 3]), torch.tensor([1.0, 2.5])))
show("normalize zero rows", F.normalize(torch.zeros(2, 3), dim=1))
show("normalize p=1", F.normalize(torch.tensor([[3.0, -4.0]]), p=1, dim=1))
show("cosine zero vec", F.cosine_similarity(torch.zeros(2, 3), torch.ones(2, 3)))
show("cdist p=0", torch.cdist(torch.tensor([[0.0, 0.0], [1.0, 1.0]]),
                              torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), p=0))
show("cdist mm", torch.cdist(queries, emb, compute_mode="use_mm_for_euclid_dist"))
show("argmax nan cols", torch.argmax(torch.tensor([[float("nan"), 1.0], [2.0, float("nan")]]), 0))
show("argmin all nan", torch.argmin(torch.tensor([float("nan"), float("nan")])))
show("argmax signed zeros", torch.argmax(torch.tensor([-0.0, 0.0])))
show("median all nan row", torch.nanmedian(torch.full((2, 3), float("nan")), 1).indices)
show("searchsorted nan", torch.searchsorted(torch.tensor([1.0, float("nan")]),
                                            torch.tensor([float("nan"), 2.0])))

print("== gradients through ranking ops with ties ==")
tv = torch.tensor([[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 0.0, 2.0]], requires_grad=True)
for name, fn in [
    ("max", lambda x: x.max()),
    ("amax dim", lambda x: x.amax(dim=1).sum()),
    ("max dim", lambda x: x.max(dim=1).values.sum()),
    ("median", lambda x: x.median()),
    ("median dim", lambda x: x.median(dim=1).values.sum()),
    ("kthvalue", lambda x: x.kthvalue(2, dim=1).values.sum()),
    ("topk", lambda x: (x.topk(2, dim=1).values * torch.tensor([1.0, 10.0])).sum()),
    ("sort", lambda x: (x.sort(dim=1, descending=True).values * torch.arange(4.0)).sum()),
    ("cummax", lambda x: x.cummax(dim=1).values.sum()),
    ("quantile", lambda x: x.quantile(0.4, dim=1).sum()),
    ("nanquantile", lambda x: x.nanquantile(torch.tensor([0.25, 0.5]), dim=1).sum()),
    ("mode", lambda x: x.mode(dim=1).values.sum()),
    ("logsumexp", lambda x: torch.logsumexp(x, dim=1).sum()),
]:
    out = fn(tv)
    (g,) = torch.autograd.grad(out, tv)
    print(f"{name}: grad_fn={type(out.grad_fn).__name__} out={out.item():.5f}")
    show(f"  {name} grad", g)
margin = F.margin_ranking_loss(tv[0], tv[1], torch.tensor([1.0, -1.0, 1.0, -1.0]), margin=0.5)
print(f"margin ranking loss={margin.item():.5f} grad_fn={type(margin.grad_fn).__name__}")

print("== typical mistakes ==")
catch("topk k too large", lambda: torch.topk(torch.arange(4.0), 5))
catch("topk k too large dim", lambda: torch.randn(2, 3).topk(4, dim=1))
catch("topk negative k", lambda: torch.topk(torch.arange(4.0), -1))
catch("quantile q>1", lambda: torch.quantile(qd, 1.5))
catch("quantile q<0 tensor", lambda: torch.quantile(qd, torch.tensor([0.5, -0.1])))
catch("quantile q=2", lambda: torch.nanquantile(qd, 2.0))
catch("quantile q long", lambda: torch.quantile(qd, 1.23456789))
catch("quantile bad interp", lambda: torch.quantile(qd, 0.5, interpolation="cubic"))
catch("quantile int", lambda: torch.quantile(torch.tensor([1, 2, 3]), 0.5))
catch("quantile q dtype", lambda: torch.quantile(qd, torch.tensor([0.5], dtype=torch.float64)))
catch("bincount negative", lambda: torch.bincount(torch.tensor([0, -1, 2])))
catch("bincount float", lambda: torch.bincount(torch.tensor([0.0, 1.0])))
catch("bincount 2d", lambda: torch.bincount(torch.tensor([[0, 1]])))
catch("bincount weights len", lambda: torch.bincount(torch.tensor([0, 1]),
                                                     weights=torch.tensor([1.0])))
catch("histc int", lambda: torch.histc(torch.tensor([1, 2, 3]), bins=3))
catch("histc bad range", lambda: torch.histc(torch.tensor([1.0]), bins=3, min=2, max=1))
catch("kthvalue k too large", lambda: torch.kthvalue(torch.arange(3.0), 4))
catch("searchsorted side", lambda: torch.searchsorted(bounds, vals, side="middle"))
catch("searchsorted conflict", lambda: torch.searchsorted(bounds, vals, side="left",
                                                          right=True))
catch("searchsorted dims", lambda: torch.searchsorted(b2, vals))
catch("bucketize 2d bounds", lambda: torch.bucketize(vals, b2))
catch("unique_consecutive dim", lambda: torch.unique_consecutive(m2, dim=2))
catch("histc nan", lambda: torch.histc(torch.tensor([0.5, float("nan"), 1.0]), bins=4))
catch("median bool dim", lambda: torch.tensor([True, False]).median(0))
catch("median bool", lambda: torch.tensor([True, False]).median())
catch("unique dim of scalar", lambda: torch.unique(torch.tensor(1.0), dim=0))
catch("unique empty other dim", lambda: torch.unique(torch.zeros(0, 3), dim=1))
catch("unique_consecutive empty", lambda: torch.unique_consecutive(torch.zeros(0, 0), dim=0))
catch("topk out tensor", lambda: torch.topk(scores, 2, out=torch.empty(0)))
catch("median out no dim", lambda: torch.median(scores, out=torch.empty(0)))
catch("cummax out tensor", lambda: torch.cummax(scores, 1, out=torch.empty(0)))
catch("histc out dtype", lambda: torch.histc(scores, 4, out=torch.empty(0, dtype=torch.float64)))
catch("argsort out dtype", lambda: torch.argsort(scores, stable=True,
                                                 out=torch.empty(0, dtype=torch.int32)))
idx_out = torch.empty(0, dtype=torch.long)
torch.argsort(scores, dim=1, descending=True, stable=True, out=idx_out)
show("argsort out", idx_out[:2])
vals_out, ind_out = torch.empty(0), torch.empty(0, dtype=torch.long)
r = torch.topk(scores, 2, dim=0, largest=False, out=(vals_out, ind_out))
print(type(r).__name__, r.indices is ind_out)
show("topk out idx", ind_out)
h_out = (torch.empty(0), torch.empty(0))
r = torch.histogram(data, bins=4, range=(-2.0, 2.0), out=h_out)
print(type(r).__name__, r.hist is h_out[0], [f"{v:.1f}" for v in h_out[0].tolist()])
bad_out = (torch.empty(0, dtype=torch.float64), torch.empty(0))
catch("histogram out dtype", lambda: torch.histogram(data, 4, out=bad_out))
catch("histogram int", lambda: torch.histogram(torch.tensor([1, 2]), bins=2))
catch("mode empty", lambda: torch.mode(torch.tensor([])))
catch("median empty dim", lambda: torch.median(torch.empty(0, 3), dim=0))
catch("argmax empty", lambda: torch.argmax(torch.tensor([])))
catch("cdist dim", lambda: torch.cdist(torch.randn(3, 4), torch.randn(2, 5)))
print("math check:", math.isclose(float(torch.log2(torch.tensor(3.0))), math.log2(3),
                                   rel_tol=1e-6))
