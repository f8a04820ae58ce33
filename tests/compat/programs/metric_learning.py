"""Face-verification / retrieval style metric learning on synthetic clustered data.

An embedding MLP is trained with triplet losses (online hard-negative mining by cdist,
swap, p=1/2, a custom cosine distance), then an ArcFace/CosFace margin head with a
label-smoothed, class-weighted cross-entropy. Then a tour of the loss zoo a practitioner
reaches for (pairwise, ranking, multi-class / multi-label margin, count and regression
likelihoods, KL, BCE with pos_weight, NLL on images, Huber / SmoothL1 / L1), each in module
and functional form with all three reductions, input gradients and grad_fn names, and the
mistakes these losses catch. Retrieval metrics (recall@k, mAP) close it."""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fmt(t, nd=4):
    """A short list of rounded floats."""
    return [round(v, nd) for v in t.detach().reshape(-1).tolist()]


def show_error(label, fn):
    try:
        fn()
        print(label, "no error")
    except Exception as e:  # noqa: BLE001 - we print what the user would see
        print(label, type(e).__name__, str(e).splitlines()[0][:150])


# ---------------------------------------------------------------- data: 6 identities
n_ids, per_id, dim_in, dim_emb = 6, 8, 16, 8
centers = torch.randn(n_ids, dim_in) * 0.6
labels = torch.arange(n_ids).repeat_interleave(per_id)
x = centers[labels] + 1.0 * torch.randn(n_ids * per_id, dim_in)
print("data", x.shape, labels.shape, torch.bincount(labels).tolist(), f"{x.std().item():.4f}")


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim_in, 32), nn.ReLU(), nn.Linear(32, dim_emb))

    def forward(self, inp):
        return F.normalize(self.net(inp), p=2, dim=1)


model = Embedder()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)


def hard_triplets(emb, lab, p=2.0):
    """Online mining: hardest positive and hardest negative for every anchor, by cdist."""
    d = torch.cdist(emb, emb, p=p)
    same = lab[:, None] == lab[None, :]
    eye = torch.eye(len(lab), dtype=torch.bool)
    pos_d = d.masked_fill(~same | eye, -1.0)
    neg_d = d.masked_fill(same, float("inf"))
    return pos_d.argmax(dim=1), neg_d.argmin(dim=1), d


# ---------------------------------------------------------------- triplet training
for p_norm, swap in ((2.0, False), (1.0, True)):
    crit = nn.TripletMarginLoss(margin=0.3, p=p_norm, swap=swap)
    for step in range(15):
        emb = model(x)
        pi, ni, d = hard_triplets(emb, labels, p=p_norm)
        loss = crit(emb, emb[pi], emb[ni])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 7 == 0:
            print(f"triplet p={p_norm} swap={swap} step {step:2d} loss {loss.item():.4f}",
                  loss.grad_fn.__class__.__name__)
    print("  pairwise dist", d.shape, f"{d.diagonal().abs().max().item():.4f}")

emb = model(x).detach()
a, pp, nn_ = emb[:6], emb[6:12], emb[12:18]
for p_norm in (1, 2):
    for swap in (False, True):
        m = nn.TripletMarginLoss(margin=1.0, p=p_norm, swap=swap, reduction="none")(a, pp, nn_)
        f = F.triplet_margin_loss(a, pp, nn_, margin=1.0, p=p_norm, swap=swap)
        print(f"triplet p={p_norm} swap={swap}", fmt(m), f"{f.item():.5f}")


def cosine_distance(u, v):
    return 1.0 - F.cosine_similarity(u, v)


ai = a.clone().requires_grad_(True)
for red in ("none", "mean", "sum"):
    crit = nn.TripletMarginWithDistanceLoss(distance_function=cosine_distance, margin=0.5,
                                            swap=True, reduction=red)
    out = crit(ai, pp, nn_)
    print("triplet-cos", red, fmt(out), out.grad_fn.__class__.__name__)
out = F.triplet_margin_with_distance_loss(ai, pp, nn_, distance_function=nn.PairwiseDistance())
out.backward()
print("triplet-pairwise", f"{out.item():.5f}", f"grad norm {ai.grad.norm().item():.5f}")
out = F.triplet_margin_with_distance_loss(a, pp, nn_)
print("triplet-default", f"{out.item():.5f}")


# ---------------------------------------------------------------- ArcFace / CosFace head
class MarginHead(nn.Module):
    def __init__(self, n_cls, d, s=16.0, m=0.3, kind="arc"):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_cls, d) * 0.1)
        self.s, self.m, self.kind = s, m, kind

    def forward(self, e, y):
        cos = F.linear(F.normalize(e), F.normalize(self.weight)).clamp(-1 + 1e-7, 1 - 1e-7)
        onehot = F.one_hot(y, cos.shape[1]).to(cos.dtype)
        if self.kind == "arc":
            theta = torch.acos(cos)
            target = torch.cos(theta + self.m)
        else:
            target = cos - self.m
        return self.s * (onehot * target + (1 - onehot) * cos)


class_w = torch.linspace(0.5, 1.5, n_ids)
for kind in ("arc", "cos"):
    torch.manual_seed(1)
    head = MarginHead(n_ids, dim_emb, kind=kind)
    opt2 = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.05,
                           momentum=0.9)
    ce = nn.CrossEntropyLoss(weight=class_w, label_smoothing=0.1)
    for step in range(12):
        logits = head(model(x), labels)
        loss = ce(logits, labels)
        opt2.zero_grad()
        loss.backward()
        opt2.step()
        if step % 5 == 0:
            print(f"{kind}face step {step:2d} loss {loss.item():.4f}",
                  f"acc {(logits.argmax(1) == labels).float().mean().item():.3f}")
    print(f"{kind}face grad_fn", loss.grad_fn.__class__.__name__,
          f"head grad norm {head.weight.grad.norm().item():.4f}")

# ---------------------------------------------------------------- the loss zoo
torch.manual_seed(2)
print("--- pairwise / ranking")
x1 = torch.randn(5, 4, requires_grad=True)
x2 = torch.randn(5, 4)
y_pm = torch.tensor([1, -1, 1, -1, -1])
for red in ("none", "mean", "sum"):
    m = nn.CosineEmbeddingLoss(margin=0.2, reduction=red)(x1, x2, y_pm)
    f = F.cosine_embedding_loss(x1, x2, y_pm, margin=0.2, reduction=red)
    print("cosine_embedding", red, fmt(m), torch.allclose(m, f), m.grad_fn.__class__.__name__)
F.cosine_embedding_loss(x1, x2, y_pm.float()).backward()
print("  grad norm", f"{x1.grad.norm().item():.5f}")

s1 = torch.randn(6, requires_grad=True)
s2 = torch.randn(6)
y_rank = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
for red in ("none", "mean", "sum"):
    m = nn.MarginRankingLoss(margin=0.5, reduction=red)(s1, s2, y_rank)
    print("margin_ranking", red, fmt(m), m.grad_fn.__class__.__name__)
F.margin_ranking_loss(s1, s2, y_rank, margin=0.5, reduction="sum").backward()
print("  grad", fmt(s1.grad))

dists = torch.rand(8, requires_grad=True) * 2
y_h = torch.tensor([1, -1, 1, -1, 1, -1, -1, 1])
for red in ("none", "mean", "sum"):
    m = nn.HingeEmbeddingLoss(margin=1.2, reduction=red)(dists, y_h)
    f = F.hinge_embedding_loss(dists, y_h, margin=1.2, reduction=red)
    print("hinge_embedding", red, fmt(m), torch.allclose(m, f), m.grad_fn.__class__.__name__)

print("--- multi-class / multi-label margins")
scores = torch.randn(4, 5, requires_grad=True)
cls = torch.tensor([1, 0, 4, 2])
wts = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5])
for p_ in (1, 2):
    for red in ("none", "mean", "sum"):
        m = nn.MultiMarginLoss(p=p_, margin=0.8, weight=wts, reduction=red)(scores, cls)
        print(f"multi_margin p={p_}", red, fmt(m), m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.multi_margin_loss(scores, cls, p=2, margin=0.8, weight=wts), scores)[0]
print("  grad", fmt(g))
print("  1-d", f"{F.multi_margin_loss(scores[0], cls[0]).item():.5f}")

tags = torch.tensor([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [0, 1, 2, 3, 4], [4, 2, -1, 3, 3]])
for red in ("none", "mean", "sum"):
    m = nn.MultiLabelMarginLoss(reduction=red)(scores, tags)
    print("multilabel_margin", red, fmt(m), m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.multilabel_margin_loss(scores, tags), scores)[0]
print("  grad", fmt(g))
print("  1-d", f"{F.multilabel_margin_loss(scores[0], tags[0]).item():.5f}")
hard = torch.tensor([[0.5, 0.5, -0.5, 1.5, 0.0]], requires_grad=True)  # a hinge exactly at 0
g_mm = torch.autograd.grad(F.multi_margin_loss(hard, torch.tensor([0])), hard)[0]
one_label = torch.tensor([[0, -1, 0, 0, 0]])
g_ml = torch.autograd.grad(F.multilabel_margin_loss(hard, one_label), hard)[0]
print("  at the hinge", fmt(g_mm), fmt(g_ml))

multi_hot = torch.tensor([[1, 0, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 1], [1, 1, 0, 0, 1]])
tag_w = torch.tensor([1.0, 0.5, 2.0, 1.0, 1.0])
for red in ("none", "mean", "sum"):
    m = nn.MultiLabelSoftMarginLoss(weight=tag_w, reduction=red)(scores, multi_hot.float())
    f = F.multilabel_soft_margin_loss(scores, multi_hot, weight=tag_w, reduction=red)
    print("multilabel_soft_margin", red, fmt(m), torch.allclose(m, f), m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.multilabel_soft_margin_loss(scores, multi_hot.float()), scores)[0]
print("  grad norm", f"{g.norm().item():.5f}")

for red in ("none", "mean", "sum"):
    m = nn.SoftMarginLoss(reduction=red)(scores, multi_hot.float() * 2 - 1)
    print("soft_margin", red, fmt(m)[:6], m.grad_fn.__class__.__name__)

print("--- likelihoods")
rates = torch.randn(6, requires_grad=True)
counts = torch.tensor([0.0, 1.0, 3.0, 2.0, 7.0, 1.0])
for log_input in (True, False):
    for full in (False, True):
        inp = rates if log_input else rates.exp()
        m = nn.PoissonNLLLoss(log_input=log_input, full=full, reduction="none")(inp, counts)
        f = F.poisson_nll_loss(inp, counts, log_input=log_input, full=full, reduction="sum")
        print(f"poisson log_input={log_input} full={full}", fmt(m), f"{f.item():.5f}",
              m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.poisson_nll_loss(rates.exp(), counts, log_input=False, full=True),
                        rates)[0]
print("  grad", fmt(g))

mu = torch.randn(5, 3, requires_grad=True)
obs = torch.randn(5, 3)
var_full = torch.rand(5, 3) + 0.1
var_homo = torch.rand(5, 1) + 0.1
for var, name in ((var_full, "full var"), (var_homo, "homoscedastic"), (0.5, "scalar")):
    for full in (False, True):
        for red in ("none", "mean", "sum"):
            m = nn.GaussianNLLLoss(full=full, eps=1e-3, reduction=red)(mu, obs, var)
            if red == "none":
                print(f"gaussian {name} full={full}", red, m.shape, fmt(m)[:4])
            else:
                print(f"gaussian {name} full={full}", red, f"{m.item():.5f}",
                      m.grad_fn.__class__.__name__)
vt = var_full.clone().requires_grad_(True)
gm, gv = torch.autograd.grad(F.gaussian_nll_loss(mu, obs, vt, full=True), (mu, vt))
print("  grads", f"{gm.norm().item():.5f} {gv.norm().item():.5f}")

logp = F.log_softmax(torch.randn(4, 6, requires_grad=True), dim=1)
q = F.softmax(torch.randn(4, 6), dim=1)
for red in ("none", "batchmean", "sum"):
    m = nn.KLDivLoss(reduction=red)(logp, q)
    print("kl_div", red, fmt(m)[:4], m.grad_fn.__class__.__name__)
m_lt = nn.KLDivLoss(reduction="batchmean", log_target=True)(logp, q.log())
same = torch.allclose(m_lt, F.kl_div(logp, q, reduction="batchmean"))
print("kl_div log_target", f"{m_lt.item():.5f}", same)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m_mean = F.kl_div(logp, q, reduction="mean")
print("kl_div mean", f"{m_mean.item():.5f}", len(caught),
      caught[0].category.__name__ if caught else None)
print("  warning", str(caught[0].message)[:90] if caught else None)

print("--- BCE with logits")
logits = torch.randn(4, 3, requires_grad=True)
targets = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
pos_w = torch.tensor([3.0, 1.0, 0.5])
sample_w = torch.tensor([[1.0], [2.0], [0.5], [1.0]])
for red in ("none", "mean", "sum"):
    m = nn.BCEWithLogitsLoss(weight=sample_w, pos_weight=pos_w, reduction=red)(logits, targets)
    f = F.binary_cross_entropy_with_logits(logits, targets, weight=sample_w, pos_weight=pos_w,
                                           reduction=red)
    print("bce_logits", red, fmt(m)[:6], torch.allclose(m, f), m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.binary_cross_entropy_with_logits(logits, targets, pos_weight=pos_w),
                        logits)[0]
print("  grad", fmt(g))

print("--- NLL")
lp2 = F.log_softmax(torch.randn(6, 4, requires_grad=True), dim=1)
t2 = torch.tensor([0, 3, -100, 1, 2, 3])
cw = torch.tensor([1.0, 2.0, 0.5, 1.5])
for red in ("none", "sum", "mean"):
    m = nn.NLLLoss(weight=cw, reduction=red)(lp2, t2)
    f = F.nll_loss(lp2, t2, weight=cw, reduction=red)
    print("nll 2-d", red, fmt(m), torch.equal(m, f), m.grad_fn.__class__.__name__)
m = F.nll_loss(lp2, torch.tensor([1, 1, 1, 1, 2, 2]), ignore_index=1, reduction="mean")
print("nll ignore_index=1", f"{m.item():.5f}")
m = F.nll_loss(lp2, torch.full((6,), 2), ignore_index=2)
print("nll all ignored", m.item())
seg = torch.randn(2, 4, 3, 3, requires_grad=True)
lp4 = F.log_softmax(seg, dim=1)
t4 = torch.randint(0, 4, (2, 3, 3))
t4[0, 0, 0] = 255
for red in ("none", "sum", "mean"):
    m = nn.NLLLoss(weight=cw, ignore_index=255, reduction=red)(lp4, t4)
    print("nll 4-d", red, m.shape, fmt(m)[:5], m.grad_fn.__class__.__name__)
g = torch.autograd.grad(F.nll_loss(lp4, t4, weight=cw, ignore_index=255), seg)[0]
print("  grad norm", f"{g.norm().item():.5f}", f"{g[0, :, 0, 0].abs().sum().item():.5f}")

print("--- regression")
pred = torch.tensor([0.1, -2.0, 3.5, 0.7, -0.4, 5.0], requires_grad=True)
goal = torch.tensor([0.0, 0.5, 1.0, 0.6, -0.5, 1.0])
for d in (0.5, 1.0, 2.0):
    h = nn.HuberLoss(delta=d, reduction="none")(pred, goal)
    s = nn.SmoothL1Loss(beta=d, reduction="none")(pred, goal)
    print(f"huber delta={d}", fmt(h), f"smooth_l1 beta={d}", fmt(s))
for red in ("none", "mean", "sum"):
    m = F.huber_loss(pred, goal, delta=1.5, reduction=red)
    s = F.smooth_l1_loss(pred, goal, beta=0.0, reduction=red)
    l1 = nn.L1Loss(reduction=red)(pred, goal)
    print("reg", red, fmt(m)[:3], fmt(s)[:3], fmt(l1)[:3],
          m.grad_fn.__class__.__name__, s.grad_fn.__class__.__name__, l1.grad_fn.__class__.__name__)
for name, fn in (("huber", lambda: F.huber_loss(pred, goal, delta=1.5)),
                 ("smooth_l1", lambda: F.smooth_l1_loss(pred, goal, beta=0.5)),
                 ("l1", lambda: F.l1_loss(pred, goal))):
    print("  grad", name, fmt(torch.autograd.grad(fn(), pred)[0]))

print("--- typical mistakes")
show_error("nll float target", lambda: F.nll_loss(lp2, torch.zeros(6)))
show_error("nll target out of range", lambda: F.nll_loss(lp2, torch.tensor([0, 1, 2, 3, 4, 0])))
show_error("nll batch mismatch", lambda: F.nll_loss(lp2, torch.zeros(5, dtype=torch.long)))
show_error("nll weight size", lambda: F.nll_loss(lp2, t2, weight=torch.ones(3)))
show_error("ce 1-d target for 3-d",
           lambda: F.cross_entropy(torch.randn(2, 3, 4), torch.zeros(2, dtype=torch.long)))
show_error("multi_margin p=3", lambda: F.multi_margin_loss(scores, cls, p=3))
show_error("multi_margin target 2-d", lambda: F.multi_margin_loss(scores, tags))
show_error("multi_margin target range", lambda: F.multi_margin_loss(scores, cls + 1))
show_error("multi_margin weight size", lambda: F.multi_margin_loss(scores, cls, weight=wts[:3]))
show_error("multilabel_margin shape", lambda: F.multilabel_margin_loss(scores, tags[:, :3]))
show_error("multilabel_margin range", lambda: F.multilabel_margin_loss(scores, tags + 1))
show_error("multilabel_margin float", lambda: F.multilabel_margin_loss(scores, tags.float()))
learned_w = torch.ones(4, requires_grad=True)
show_error("learnable class weight", lambda: F.nll_loss(lp2, t2, weight=learned_w))
show_error("learnable pos_weight",
           lambda: nn.BCEWithLogitsLoss(pos_weight=pos_w.requires_grad_())(logits, targets))
show_error("bce weight shape",
           lambda: F.binary_cross_entropy(logits.sigmoid(), targets, weight=torch.ones(2)))
show_error("cosine_emb 2-d target", lambda: F.cosine_embedding_loss(x1, x2, torch.ones(5, 1)))
show_error("triplet margin <= 0", lambda: F.triplet_margin_loss(a, pp, nn_, margin=0.0))
show_error("gaussian negative var", lambda: F.gaussian_nll_loss(mu, obs, -var_full))
show_error("gaussian var shape", lambda: F.gaussian_nll_loss(mu, obs, torch.ones(5, 2)))
show_error("bce target shape", lambda: F.binary_cross_entropy_with_logits(logits, targets[:, :2]))
show_error("triplet dim mismatch", lambda: F.triplet_margin_loss(a, pp[:, :4], nn_))
show_error("cosine_emb target shape", lambda: F.cosine_embedding_loss(x1, x2, torch.ones(4)))
show_error("margin_ranking sizes", lambda: F.margin_ranking_loss(s1, s2[:4], y_rank))
show_error("kl_div bad reduction", lambda: F.kl_div(logp, q, reduction="avg"))
show_error("poisson sizes", lambda: F.poisson_nll_loss(rates, counts[:4]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = F.mse_loss(torch.randn(4, 1), torch.randn(4))
    out2 = F.l1_loss(torch.randn(3), torch.randn(3, 3))
    out3 = F.huber_loss(torch.randn(2, 1), torch.randn(2))
print("broadcast warnings", len(caught), out.shape, out2.shape, out3.shape)
for w in caught:
    print("  ", w.category.__name__, str(w.message)[:110])

print("--- retrieval metrics")
with torch.no_grad():
    emb = model(x)
    sim = emb @ emb.T
    sim.fill_diagonal_(-float("inf"))
    same = labels[:, None] == labels[None, :]
    same.fill_diagonal_(False)
    for k in (1, 3, 5):
        top = sim.topk(k, dim=1).indices
        hit = torch.gather(same, 1, top).any(dim=1).float()
        print(f"recall@{k}", f"{hit.mean().item():.4f}")
    order = sim.argsort(dim=1, descending=True)[:, :-1]
    rel = torch.gather(same, 1, order).float()
    prec = rel.cumsum(1) / torch.arange(1, rel.shape[1] + 1)
    ap = (prec * rel).sum(1) / rel.sum(1).clamp(min=1)
    print("mAP", f"{ap.mean().item():.4f}", "per-id", fmt(ap.view(n_ids, per_id).mean(1), 3))
    vals, idx = torch.sort(sim[0], descending=True)
    print("nearest of 0", idx[:5].tolist(), fmt(vals[:5]))
    print("math check", f"{math.acos(0.5):.5f}", f"{torch.acos(torch.tensor(0.5)).item():.5f}")
