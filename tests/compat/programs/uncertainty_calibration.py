"""Uncertainty and calibration around a small classifier: synthetic two-moons / blob data,
MC dropout with BatchNorm kept in eval, a deep ensemble (predictive entropy, mutual
information / BALD), temperature scaling fitted with L-BFGS (strong Wolfe), vector and
Dirichlet scaling, expected calibration error four ways (bucketize, histc, scatter_add_,
bincount with weights), reliability bins, Brier score, NLL, AUROC by hand, an evidential
Dirichlet head, a Laplace last layer (torch.func.hessian, inverse, cholesky,
MultivariateNormal), conformal prediction sets, kl_div both ways, and the usual mistakes."""

import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.distributions import Dirichlet, MultivariateNormal, kl_divergence
from torch.func import hessian

torch.manual_seed(0)

# ---------------------------------------------------------------------------------------
# 1. Data: two moons plus a third Gaussian blob, three classes
# ---------------------------------------------------------------------------------------


def two_moons_and_blob(n_per_class):
    t = torch.rand(n_per_class) * math.pi
    upper = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
    t = torch.rand(n_per_class) * math.pi
    lower = torch.stack([1.0 - torch.cos(t), 0.5 - torch.sin(t)], dim=1)
    blob = torch.randn(n_per_class, 2) * 0.35 + torch.tensor([2.6, 1.2])
    x = torch.cat([upper, lower, blob]) + 0.3 * torch.randn(3 * n_per_class, 2)
    y = torch.arange(3).repeat_interleave(n_per_class)
    perm = torch.randperm(3 * n_per_class)
    return x[perm], y[perm]


x_train, y_train = two_moons_and_blob(80)
x_val, y_val = two_moons_and_blob(40)
x_test, y_test = two_moons_and_blob(40)
mean, std = x_train.mean(0), x_train.std(0)
x_train, x_val, x_test = [(x - mean) / std for x in (x_train, x_val, x_test)]
print("train", tuple(x_train.shape), x_train.dtype, "labels", torch.bincount(y_train).tolist())
print("val", tuple(x_val.shape), "test", tuple(x_test.shape))
print(f"standardized: |mean| < 1e-6 {bool(x_train.mean(0).abs().max() < 1e-6)} "
      f"std {x_train.std().item():.4f}")

# ---------------------------------------------------------------------------------------
# 2. A classifier with BatchNorm and dropout
# ---------------------------------------------------------------------------------------


class Net(nn.Module):
    def __init__(self, hidden=32, p=0.2):
        super().__init__()
        self.body = nn.Sequential(
            # no bias before BatchNorm: its mean subtraction would cancel it
            nn.Linear(2, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(p),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(p),
        )
        self.head = nn.Linear(hidden, 3)

    def features(self, x):
        return self.body(x)

    def forward(self, x):
        return self.head(self.body(x))


def train(model, steps=120, lr=0.03):
    opt = optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x_train), y_train)
        loss.backward()
        opt.step()
    return loss.item()


torch.manual_seed(1)
model = Net()
print(model)
final = train(model, steps=60, lr=0.05)
model.eval()
with torch.no_grad():
    logits_val = model(x_val)
    logits_test = model(x_test)
acc = (logits_test.argmax(1) == y_test).float().mean().item()
print(f"final train loss {final:.4f} test accuracy {acc:.4f}")

# ---------------------------------------------------------------------------------------
# 3. MC dropout: dropout on, BatchNorm frozen
# ---------------------------------------------------------------------------------------


def enable_mc_dropout(net):
    net.eval()
    for m in net.modules():
        if isinstance(m, nn.Dropout):
            m.train()


enable_mc_dropout(model)
print("modes", [(type(m).__name__, m.training) for m in model.body])
torch.manual_seed(2)
with torch.no_grad():
    mc = torch.stack([F.softmax(model(x_test), dim=-1) for _ in range(30)])
model.eval()
print("mc samples", tuple(mc.shape))


def entropy(p, dim=-1):
    return -(p * torch.log(p.clamp_min(1e-12))).sum(dim)


def decompose(samples):
    mean_p = samples.mean(0)
    total = entropy(mean_p)
    aleatoric = entropy(samples).mean(0)
    return mean_p, total, aleatoric, total - aleatoric


mc_mean, mc_total, mc_alea, mc_bald = decompose(mc)
print(f"mc dropout accuracy {(mc_mean.argmax(1) == y_test).float().mean().item():.4f}")
print(f"mc predictive entropy mean {mc_total.mean().item():.4f} max {mc_total.max().item():.4f}")
print(f"mc BALD mean {mc_bald.mean().item():.4f}  top-5 idx {mc_bald.topk(5).indices.tolist()}")
print("entropy via special.entr [:4]", torch.special.entr(mc_mean).sum(-1)[:4])
print("mc std of p(true class) [:4]", mc.std(0).gather(1, y_test[:, None]).squeeze(1)[:4])

# ---------------------------------------------------------------------------------------
# 4. A deep ensemble
# ---------------------------------------------------------------------------------------

members = []
for seed in range(4):
    torch.manual_seed(100 + seed)
    m = Net(hidden=16, p=0.1)
    train(m, steps=80)
    m.eval()
    members.append(m)
with torch.no_grad():
    ens = torch.stack([F.softmax(m(x_test), dim=-1) for m in members])
ens_mean, ens_total, ens_alea, ens_bald = decompose(ens)
print("ensemble", tuple(ens.shape), "member accuracies",
      [round((p.argmax(1) == y_test).float().mean().item(), 4) for p in ens])
print(f"ensemble entropy {ens_total.mean().item():.4f} aleatoric {ens_alea.mean().item():.4f} "
      f"mutual information {ens_bald.mean().item():.4f}")
disagree = (ens.argmax(-1) != ens_mean.argmax(-1)).any(0)
print("points with member disagreement", int(disagree.sum()))

# ---------------------------------------------------------------------------------------
# 5. Calibration metrics
# ---------------------------------------------------------------------------------------


def ece_bucketize(probs, labels, n_bins=10):
    conf, pred = probs.max(1)
    correct = (pred == labels).float()
    edges = torch.linspace(0, 1, n_bins + 1)
    idx = torch.bucketize(conf, edges[1:-1], right=False)
    count = torch.zeros(n_bins).scatter_add_(0, idx, torch.ones_like(conf))
    conf_sum = torch.zeros(n_bins).scatter_add_(0, idx, conf)
    acc_sum = torch.zeros(n_bins).scatter_add_(0, idx, correct)
    gap = (conf_sum - acc_sum).abs()
    denom = count.clamp_min(1)
    return (gap.sum() / len(labels)).item(), count, acc_sum / denom, conf_sum / denom


def ece_bincount(probs, labels, n_bins=10):
    conf, pred = probs.max(1)
    correct = (pred == labels).to(conf.dtype)
    idx = (conf * n_bins).long().clamp(max=n_bins - 1)
    n = torch.bincount(idx, minlength=n_bins)
    s_conf = torch.bincount(idx, weights=conf, minlength=n_bins)
    s_acc = torch.bincount(idx, weights=correct, minlength=n_bins)
    return ((s_conf - s_acc).abs().sum() / len(labels)).item(), n


def brier(probs, labels):
    onehot = F.one_hot(labels, probs.shape[1]).float()
    return ((probs - onehot) ** 2).sum(1).mean().item()


def nll(probs, labels):
    return F.nll_loss(torch.log(probs.clamp_min(1e-12)), labels).item()


probs_test = F.softmax(logits_test, dim=1)
e1, count, bin_acc, bin_conf = ece_bucketize(probs_test, y_test)
e2, n2 = ece_bincount(probs_test, y_test)
conf_hist = torch.histc(probs_test.max(1).values, bins=10, min=0, max=1)
print(f"ECE bucketize {e1:.5f} bincount {e2:.5f}")
print("bin counts", count.long().tolist(), n2.tolist(), conf_hist.long().tolist())
print("reliability acc ", bin_acc)
print("reliability conf", bin_conf)
print(f"brier {brier(probs_test, y_test):.5f} nll {nll(probs_test, y_test):.5f}")
print(f"ensemble ECE {ece_bucketize(ens_mean, y_test)[0]:.5f} brier {brier(ens_mean, y_test):.5f}"
      f" nll {nll(ens_mean, y_test):.5f}")

# ---------------------------------------------------------------------------------------
# 6. Temperature, vector and Dirichlet scaling on validation logits
# ---------------------------------------------------------------------------------------

# L-BFGS stops when the loss stops changing: fit in float64 so that test is not decided by
# the last bit of a float32 loss
val64, test64 = logits_val.double(), logits_test.double()
log_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
lbfgs = optim.LBFGS([log_t], lr=0.5, max_iter=50, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = F.cross_entropy(val64 / log_t.exp(), y_val)
    loss.backward()
    return loss


before = F.cross_entropy(val64, y_val).item()
lbfgs.step(closure)
T = log_t.exp().item()
after = F.cross_entropy(val64 / T, y_val).item()
print(f"temperature {T:.4f} val nll {before:.4f} -> {after:.4f}")
print("lbfgs state keys", sorted(lbfgs.state[log_t].keys())[:4],
      "func evals", lbfgs.state[log_t]["func_evals"], "n_iter", lbfgs.state[log_t]["n_iter"])
scaled = F.softmax(logits_test / T, dim=1)
print(f"after T: ECE {ece_bucketize(scaled, y_test)[0]:.5f} nll {nll(scaled, y_test):.5f}")

w = torch.ones(3, dtype=torch.float64, requires_grad=True)
b = torch.zeros(3, dtype=torch.float64, requires_grad=True)
vec_opt = optim.LBFGS([w, b], max_iter=40, line_search_fn="strong_wolfe")


def vec_closure():
    vec_opt.zero_grad()
    loss = F.cross_entropy(val64 * w + b, y_val) + 1e-2 * (b ** 2).sum()
    loss.backward()
    return loss


vec_opt.step(vec_closure)
print("vector scaling w", w.detach(), "b", b.detach())

dir_layer = nn.Linear(3, 3).double()
with torch.no_grad():
    dir_layer.weight.copy_(torch.eye(3))
    dir_layer.bias.zero_()
dir_opt = optim.LBFGS(dir_layer.parameters(), max_iter=40, line_search_fn="strong_wolfe")
log_p_val = F.log_softmax(val64, dim=1)


def dir_closure():
    dir_opt.zero_grad()
    # ODIR: off-diagonal and intercept terms regularized, the diagonal pulled towards 1
    diag = torch.diagonal(dir_layer.weight)
    off = dir_layer.weight - torch.diag(diag)
    reg = off.pow(2).sum() + dir_layer.bias.pow(2).sum() + (diag - 1).pow(2).sum()
    loss = F.cross_entropy(dir_layer(log_p_val), y_val) + 1e-2 * reg
    loss.backward()
    return loss


dir_opt.step(dir_closure)
with torch.no_grad():
    dir_probs = F.softmax(dir_layer(F.log_softmax(test64, dim=1)), dim=1).float()
print(f"dirichlet scaling diag {torch.diagonal(dir_layer.weight).detach()} "
      f"nll {nll(dir_probs, y_test):.5f}")

# ---------------------------------------------------------------------------------------
# 7. AUROC by hand: is the prediction wrong? scored by uncertainty
# ---------------------------------------------------------------------------------------


def auroc(scores, positives):
    order = torch.argsort(scores, descending=True, stable=True)
    s, pos = scores[order], positives[order].float()
    _, counts = torch.unique(s, return_counts=True, sorted=True)
    counts = counts.flip(0)
    ends = counts.cumsum(0) - 1
    tp = pos.cumsum(0)[ends]
    fp = (1 - pos).cumsum(0)[ends]
    tpr = torch.cat([torch.zeros(1), tp / tp[-1]])
    fpr = torch.cat([torch.zeros(1), fp / fp[-1]])
    return torch.trapezoid(tpr, fpr).item(), len(counts)


wrong = mc_mean.argmax(1) != y_test
score_q = torch.round(mc_total * 20) / 20
print("wrong predictions", int(wrong.sum()))
a1, distinct = auroc(score_q, wrong)
a2, _ = auroc(mc_bald, wrong)
print(f"AUROC entropy(rounded) {a1:.4f} ({distinct} distinct scores) BALD {a2:.4f}")

# ---------------------------------------------------------------------------------------
# 8. Evidential deep learning: a Dirichlet head
# ---------------------------------------------------------------------------------------


def edl_loss(alpha, y, epoch_frac):
    s = alpha.sum(1, keepdim=True)
    onehot = F.one_hot(y, 3).float()
    fit = (onehot * (torch.digamma(s) - torch.digamma(alpha))).sum(1)
    alpha_t = onehot + (1 - onehot) * alpha
    k = torch.tensor(3.0)
    st = alpha_t.sum(1)
    kl = (torch.lgamma(st) - torch.lgamma(k) - torch.lgamma(alpha_t).sum(1)
          + ((alpha_t - 1) * (torch.digamma(alpha_t) - torch.digamma(st)[:, None])).sum(1))
    return (fit + min(1.0, epoch_frac) * 0.1 * kl).mean()


torch.manual_seed(3)
edl = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3), nn.Softplus())
opt = optim.Adam(edl.parameters(), lr=0.02)
for step in range(100):
    opt.zero_grad()
    loss = edl_loss(edl(x_train) + 1, y_train, step / 50)
    loss.backward()
    opt.step()
print(f"edl loss {loss.item():.4f}")
with torch.no_grad():
    alpha = edl(x_test) + 1
dist = Dirichlet(alpha)
print("dirichlet batch", dist.batch_shape, "event", dist.event_shape)
print("concentration[:2]", dist.concentration[:2])
print("mean[:2]", dist.mean[:2])
vacuity = 3 / alpha.sum(1)
print(f"edl accuracy {(dist.mean.argmax(1) == y_test).float().mean().item():.4f} "
      f"vacuity mean {vacuity.mean().item():.4f}")
print("entropy[:4]", dist.entropy()[:4])
fisher = torch.polygamma(1, alpha) - torch.polygamma(1, alpha.sum(1, keepdim=True))
print("Dirichlet Fisher diagonal (trigamma) [:2]", fisher[:2])
print("log_prob of mean[:4]", dist.log_prob(dist.mean)[:4])
torch.manual_seed(4)
alpha_req = alpha[:2].clone().requires_grad_(True)
draw = Dirichlet(alpha_req).rsample((5,))
print("rsample", tuple(draw.shape), "sums", draw.sum(-1)[0], draw.grad_fn is not None)
draw[..., 0].mean().backward()
print("rsample grad", alpha_req.grad)
flat = Dirichlet(torch.ones(3))
kl = kl_divergence(dist, flat)
print("KL(Dir || flat)[:4]", kl[:4], f"mean {kl.mean().item():.4f}")

# ---------------------------------------------------------------------------------------
# 9. Laplace approximation on the last layer
# ---------------------------------------------------------------------------------------

with torch.no_grad():
    phi_train = model.features(x_train)
    phi_test = model.features(x_test)
# float64: the posterior's log-determinant adds 99 logs of eigenvalues spread over decades
W_map = torch.cat([model.head.weight, model.head.bias[:, None]], 1).detach().double()
phi1 = torch.cat([phi_train, torch.ones(len(phi_train), 1)], 1).double()
phi1_test = torch.cat([phi_test, torch.ones(len(phi_test), 1)], 1).double()
prior_prec = 1.0


def neg_log_post(wflat):
    W = wflat.view(3, -1)
    nll_sum = F.cross_entropy(phi1 @ W.T, y_train, reduction="sum")
    return nll_sum + 0.5 * prior_prec * (wflat ** 2).sum()


w_flat = W_map.flatten()
H = hessian(neg_log_post)(w_flat)
print("hessian", tuple(H.shape), f"symmetric {torch.allclose(H, H.T, atol=1e-4)}")
H = 0.5 * (H + H.T)
cov = torch.linalg.inv(H)
L = torch.linalg.cholesky(cov)
err = (L @ L.T - cov).abs().max().item()
print(f"cov trace {cov.trace().item():.4f} cholesky reconstruction ok {err < 1e-10}")
post = MultivariateNormal(w_flat, scale_tril=L)
torch.manual_seed(5)
w_samples = post.sample((50,))
print("posterior samples", tuple(w_samples.shape),
      f"log_prob at MAP {post.log_prob(w_flat).item():.4f}")
la_logits = torch.einsum("nd,skd->snk", phi1_test, w_samples.view(50, 3, -1))
la_probs = F.softmax(la_logits, -1).mean(0).float()
print(f"laplace nll {nll(la_probs, y_test):.4f} ECE {ece_bucketize(la_probs, y_test)[0]:.5f}")

# ---------------------------------------------------------------------------------------
# 10. Conformal prediction sets
# ---------------------------------------------------------------------------------------

alpha_level = 0.1
p_val = F.softmax(logits_val / T, 1)
scores_lac = 1 - p_val.gather(1, y_val[:, None]).squeeze(1)
n = len(scores_lac)
q_level = math.ceil((n + 1) * (1 - alpha_level)) / n
for mode in ("linear", "lower", "higher", "nearest", "midpoint"):
    q = torch.quantile(scores_lac, q_level, interpolation=mode)
    print(f"quantile {mode:8s} {q.item():.5f}")
qhat = torch.quantile(scores_lac, q_level, interpolation="higher")
sets = scaled >= 1 - qhat
print(f"LAC coverage {sets[torch.arange(len(y_test)), y_test].float().mean().item():.4f} "
      f"mean size {sets.sum(1).float().mean().item():.4f}")

srt, order = torch.sort(p_val, dim=1, descending=True)
cum = srt.cumsum(1)
rank = torch.argsort(order, dim=1).gather(1, y_val[:, None])
aps_scores = cum.gather(1, rank).squeeze(1)
qhat_aps = torch.quantile(aps_scores, q_level, interpolation="higher")
srt_t, order_t = torch.sort(scaled, dim=1, descending=True)
keep = (srt_t.cumsum(1) - srt_t) < qhat_aps
aps_sets = torch.zeros_like(keep).scatter(1, order_t, keep)
print(f"APS qhat {qhat_aps.item():.5f} coverage "
      f"{aps_sets.gather(1, y_test[:, None]).float().mean().item():.4f} "
      f"sizes {torch.bincount(aps_sets.sum(1), minlength=4).tolist()}")
print("two-level quantile", torch.quantile(scores_lac, torch.tensor([0.5, 0.9])))

# ---------------------------------------------------------------------------------------
# 11. KL divergence, distillation-style
# ---------------------------------------------------------------------------------------

log_p_student = F.log_softmax(logits_test, 1)
log_q_teacher = torch.log(ens_mean)
kl_prob = F.kl_div(log_p_student, ens_mean, reduction="batchmean")
kl_log = F.kl_div(log_p_student, log_q_teacher, reduction="batchmean", log_target=True)
print(f"kl_div target probs {kl_prob.item():.5f} log_target {kl_log.item():.5f}")
print("kl_div none[:2]", F.kl_div(log_p_student[:2], ens_mean[:2], reduction="none"))
kl_sum = F.kl_div(log_p_student, log_q_teacher, reduction="sum", log_target=True)
kl_module = nn.KLDivLoss(reduction="batchmean", log_target=True)
print(f"kl_div sum {kl_sum.item():.5f}")
print(f"KLDivLoss module {kl_module(log_p_student, log_q_teacher).item():.5f}")

# ---------------------------------------------------------------------------------------
# 12. Typical mistakes
# ---------------------------------------------------------------------------------------

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wrong_kl = F.kl_div(probs_test, ens_mean, reduction="mean")
print(f"kl_div with probabilities as input {wrong_kl.item():.5f} (negative: a bug)")
print("warnings", [(w.category.__name__, str(w.message)[:60]) for w in caught])

mistakes = {
    "quantile of an int tensor": lambda: torch.quantile(torch.arange(10), 0.5),
    "quantile q > 1": lambda: torch.quantile(scores_lac, 1.5),
    "quantile q < 0 tensor": lambda: torch.quantile(scores_lac, torch.tensor([-0.1, 0.5])),
    "quantile bad interpolation": lambda: torch.quantile(scores_lac, 0.5, interpolation="cubic"),
    "bucketize 2-d unsorted-free boundaries": lambda: torch.bucketize(conf_hist, torch.ones(2, 2)),
    "histc on int": lambda: torch.histc(torch.arange(5), bins=3),
    "bincount negative": lambda: torch.bincount(torch.tensor([1, -1, 2])),
    "bincount weights length": lambda: torch.bincount(torch.tensor([0, 1]), weights=torch.ones(3)),
    "lbfgs without closure": lambda: optim.LBFGS([torch.zeros(1, requires_grad=True)]).step(),
    "dirichlet negative concentration": lambda: Dirichlet(torch.tensor([1.0, -0.5])),
    "dirichlet log_prob off simplex": lambda: flat.log_prob(torch.tensor([0.5, 0.6, 0.2])),
}
for name, fn in mistakes.items():
    try:
        out = fn()
        print(f"{name}: no error -> {out}")
    except Exception as exc:  # noqa: BLE001
        print(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0][:110]}")

unsorted = torch.tensor([0.5, 0.1, 0.9])
print("bucketize unsorted boundaries (undefined, no check)",
      torch.bucketize(torch.tensor([0.05, 0.95]), torch.sort(unsorted).values).tolist())
