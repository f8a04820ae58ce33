"""Survival analysis and point processes as practitioners write them by hand (pycox /
torchsurv style): a synthetic cohort with Weibull event times drawn by inverse CDF, right
censoring and rounded (tied) times; the Cox partial likelihood with Breslow and Efron ties
(argsort, logcumsumexp, unique tie groups, index_add_ / scatter_add_); a linear Cox model
fitted by LBFGS and a DeepSurv MLP trained with Adam; Harrell's concordance index by
broadcasting; Kaplan-Meier and Nelson-Aalen curves read with searchsorted / bucketize; a
discrete-time hazard model with masked BCE; parametric Weibull / log-normal / gamma /
log-logistic AFT models fitted by LBFGS; a Hawkes process likelihood and thinning
simulation; the IPCW integrated Brier score; and the usual mistakes with their messages."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (
    AffineTransform,
    ExpTransform,
    Gamma,
    LogNormal,
    SigmoidTransform,
    TransformedDistribution,
    Uniform,
    Weibull,
)

torch.manual_seed(0)


def show(name, t, k=6):
    vals = [f"{v:.5g}" for v in t.detach().flatten()[:k].tolist()]
    print(f"{name} {tuple(t.shape)} {t.dtype} [{', '.join(vals)}]")


# 1. Synthetic cohort ------------------------------------------------------------------
N, P = 300, 4
X = torch.randn(N, P, dtype=torch.float64)
beta_true = torch.tensor([0.8, -0.5, 0.0, 0.3], dtype=torch.float64)
k_true, lam_true = 1.5, 5.0
eta_true = X @ beta_true
U = torch.rand(N, dtype=torch.float64)
# Weibull proportional hazards: S(t|x) = exp(-(t/lam)^k * exp(eta)); invert at U.
t_event = lam_true * (-torch.log(U) * torch.exp(-eta_true)) ** (1.0 / k_true)
t_cens = -torch.log(torch.rand(N, dtype=torch.float64)) * 8.0  # exponential, mean 8
time = torch.minimum(t_event, t_cens)
event = (t_event <= t_cens).to(torch.float64)
time = torch.clamp(torch.round(time * 4) / 4, min=0.25)  # quarter-year visits -> ties
uniq_t, t_counts = torch.unique(time, return_counts=True)
print(f"cohort N={N} events={int(event.sum())} censored={int((1 - event).sum())}")
print(f"distinct times {uniq_t.numel()}, largest tie group {int(t_counts.max())}")
show("time", time)
show("event", event)
print(f"median follow-up {time.median().item():.4f}, mean {time.mean().item():.4f}")


# 2. Cox partial likelihood: Breslow and Efron ties ------------------------------------
def cox_breslow_simple(risk, time, event):
    """The one-liner from DeepSurv code: exact for no ties, approximate otherwise."""
    order = torch.argsort(time, descending=True)
    r, e = risk[order], event[order]
    log_cum = torch.logcumsumexp(r, dim=0)
    return -((r - log_cum) * e).sum() / e.sum()


def cox_breslow(risk, time, event):
    uniq, inv, counts = torch.unique(time, return_inverse=True, return_counts=True)
    G = uniq.numel()
    exp_r = torch.exp(risk)
    group_sum = torch.zeros(G, dtype=risk.dtype).index_add_(0, inv, exp_r)
    # risk set of group g = everyone with time >= uniq[g]: reverse cumulative sum
    risk_set = torch.flip(torch.cumsum(torch.flip(group_sum, [0]), 0), [0])
    d = torch.zeros(G, dtype=risk.dtype).scatter_add_(0, inv, event)
    ll = (risk * event).sum() - (d * torch.log(risk_set)).sum()
    return -ll / event.sum()


def cox_efron(risk, time, event):
    uniq, inv, counts = torch.unique(time, return_inverse=True, return_counts=True)
    G = uniq.numel()
    exp_r = torch.exp(risk)
    group_sum = torch.zeros(G, dtype=risk.dtype).index_add_(0, inv, exp_r)
    risk_set = torch.flip(torch.cumsum(torch.flip(group_sum, [0]), 0), [0])
    d = torch.zeros(G, dtype=risk.dtype).index_add_(0, inv, event)
    tie_sum = torch.zeros(G, dtype=risk.dtype).index_add_(0, inv, exp_r * event)
    dmax = int(d.max())
    ell = torch.arange(dmax, dtype=risk.dtype)
    frac = ell[None, :] / d.clamp(min=1)[:, None]  # (G, dmax)
    mask = ell[None, :] < d[:, None]
    denom = risk_set[:, None] - frac * tie_sum[:, None]
    log_terms = torch.where(mask, torch.log(denom.clamp(min=1e-300)), torch.zeros_like(denom))
    ll = (risk * event).sum() - log_terms.sum()
    return -ll / event.sum()


risk0 = X @ beta_true
print(f"Cox NLL at truth: simple {cox_breslow_simple(risk0, time, event).item():.6f}, "
      f"Breslow {cox_breslow(risk0, time, event).item():.6f}, "
      f"Efron {cox_efron(risk0, time, event).item():.6f}")
ordr = torch.argsort(time, descending=True, stable=True)
print("argsort head", ordr[:8].tolist())
lcse = torch.logcumsumexp(risk0.requires_grad_()[ordr], dim=0)
show("logcumsumexp", lcse)
print("logcumsumexp grad_fn", type(lcse.grad_fn).__name__)
lcse.sum().backward()
show("d sum(logcumsumexp) / d risk", risk0.grad)
risk0 = risk0.detach()

# linear Cox model by LBFGS on the Efron likelihood
beta = torch.zeros(P, dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([beta], lr=1.0, max_iter=50, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = cox_efron(X @ beta, time, event)
    loss.backward()
    return loss


opt.step(closure)
with torch.no_grad():
    nll_b = cox_breslow(X @ beta, time, event)
    nll_e = cox_efron(X @ beta, time, event)
print(f"Cox fit beta {[round(v, 4) for v in beta.tolist()]}")
print(f"  NLL Efron {nll_e.item():.6f}, Breslow at same beta {nll_b.item():.6f}")
# standard errors from the observed information (Hessian of the summed NLL)
H = torch.autograd.functional.hessian(
    lambda b: cox_efron(X @ b, time, event) * event.sum(), beta.detach())
se = torch.sqrt(torch.diagonal(torch.linalg.inv(H)))
print(f"  std errors {[round(v, 4) for v in se.tolist()]}")
print(f"  hazard ratios {[round(v, 4) for v in torch.exp(beta.detach()).tolist()]}")


# 3. Concordance index -------------------------------------------------------------------
def concordance(risk, time, event):
    t_i, t_j = time[:, None], time[None, :]
    comparable = torch.logical_and(t_i < t_j, event[:, None] == 1)
    r_i, r_j = risk[:, None], risk[None, :]
    conc = (r_i > r_j).to(torch.float64) + 0.5 * (r_i == r_j).to(torch.float64)
    return (conc * comparable).sum() / comparable.sum(), int(comparable.sum())


c_true, n_pairs = concordance(risk0, time, event)
c_fit, _ = concordance(X @ beta.detach(), time, event)
c_rand, _ = concordance(torch.zeros(N, dtype=torch.float64), time, event)
print(f"C-index truth {c_true.item():.5f}, Cox {c_fit.item():.5f}, constant {c_rand.item():.4f}"
      f" over {n_pairs} comparable pairs")
upper = torch.triu(torch.ones(N, N, dtype=torch.bool), diagonal=1)
tied_pairs = torch.logical_and(upper, time[:, None] == time[None, :])
print(f"tied-time pairs (upper triangle) {int(tied_pairs.sum())} of {int(upper.sum())}")


# 4. DeepSurv ------------------------------------------------------------------------------
torch.manual_seed(1)
Xf = X.float()
time_f, event_f = time.float(), event.float()
net = nn.Sequential(nn.Linear(P, 16), nn.SELU(), nn.Dropout(0.1), nn.Linear(16, 1, bias=False))
adam = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-3)
for epoch in range(60):
    net.train()
    adam.zero_grad()
    loss = cox_breslow(net(Xf).squeeze(-1), time_f, event_f)
    loss.backward()
    adam.step()
    if epoch % 20 == 0 or epoch == 59:
        print(f"DeepSurv epoch {epoch:2d} loss {loss.item():.5f}")
net.eval()
with torch.no_grad():
    risk_net = net(Xf).squeeze(-1)
c_net, _ = concordance(risk_net.double(), time, event)
print(f"DeepSurv C-index {c_net.item():.4f}, risk dtype {risk_net.dtype}")


# 5. Kaplan-Meier and Nelson-Aalen --------------------------------------------------------
def kaplan_meier(time, event):
    uniq, inv = torch.unique(time, return_inverse=True)
    d = torch.zeros_like(uniq).scatter_add_(0, inv, event)
    # at risk: number with time >= t, i.e. N - (number strictly before t)
    sorted_t, _ = torch.sort(time)
    n_risk = time.numel() - torch.searchsorted(sorted_t, uniq, right=False)
    surv = torch.cumprod(1 - d / n_risk, dim=0)
    cumhaz = torch.cumsum(d / n_risk, dim=0)
    # Greenwood variance
    gw = torch.cumsum(d / (n_risk * (n_risk - d).clamp(min=1)), dim=0)
    return uniq, surv, cumhaz, n_risk, gw


km_t, km_s, na_h, n_risk, gw = kaplan_meier(time, event)
show("KM times", km_t)
show("KM survival", km_s)
show("at risk", n_risk)
show("Nelson-Aalen", na_h)
print(f"Greenwood se at last time {(km_s[-1] * torch.sqrt(gw[-1])).item():.5f}")
query = torch.tensor([0.0, 1.0, 2.5, 5.0, 10.0, 100.0], dtype=torch.float64)
idx = torch.searchsorted(km_t, query, right=True) - 1
s_at = torch.where(idx >= 0, km_s[idx.clamp(min=0)], torch.ones_like(query))
print("KM at", query.tolist(), "->", [f"{v:.4f}" for v in s_at.tolist()])
median_idx = torch.searchsorted(-km_s, torch.tensor([-0.5], dtype=torch.float64))
print(f"KM median survival {km_t[median_idx.clamp(max=km_t.numel() - 1)].item():.4f}")
print(f"exp(-NA) vs KM max gap {(torch.exp(-na_h) - km_s).abs().max().item():.4e}")
idx_i32 = torch.searchsorted(km_t, query, out_int32=True)
print("searchsorted int32", idx_i32.dtype, idx_i32.tolist())
side = torch.searchsorted(km_t, torch.tensor([1.0, 2.0], dtype=torch.float64), side="right")
print("searchsorted side=right", side.tolist())


# 6. Discrete-time hazard model -------------------------------------------------------------
torch.manual_seed(2)
cuts = torch.tensor([0.5, 1.0, 2.0, 3.0, 5.0, 8.0])
n_bins = cuts.numel() + 1
bin_idx = torch.bucketize(time_f, cuts)  # right=False: t == cut goes to the lower bin
print("bins", bin_idx[:12].tolist(), "counts", torch.bincount(bin_idx, minlength=n_bins).tolist())
print("bucketize right=True",
      torch.bucketize(torch.tensor([0.5, 1.0, 1.5]), cuts, right=True).tolist())
j = torch.arange(n_bins)
at_risk_mask = (j[None, :] <= bin_idx[:, None]).float()
target = ((j[None, :] == bin_idx[:, None]) & (event_f[:, None] == 1)).float()
lin = nn.Linear(P, 1)
bin_bias = nn.Parameter(torch.zeros(n_bins))
opt_d = torch.optim.Adam(list(lin.parameters()) + [bin_bias], lr=0.05)
for step in range(80):
    opt_d.zero_grad()
    logits = lin(Xf) + bin_bias[None, :]
    bce = F.binary_cross_entropy_with_logits(logits, target, weight=at_risk_mask, reduction="sum")
    loss_d = bce / at_risk_mask.sum()
    loss_d.backward()
    opt_d.step()
    if step % 40 == 0 or step == 79:
        print(f"discrete hazard step {step:2d} loss {loss_d.item():.5f}")
with torch.no_grad():
    hz = torch.sigmoid(lin(Xf) + bin_bias[None, :])
    surv_d = torch.cumprod(1 - hz, dim=1)
show("baseline hazard per bin", torch.sigmoid(bin_bias.detach()))
show("discrete S(t|x0)", surv_d[0], k=7)
print(f"discrete coef {[round(v, 3) for v in lin.weight.detach().flatten().tolist()]}")
plain = F.binary_cross_entropy_with_logits(logits.detach(), target, reduction="none")
print(f"masked mean BCE {((plain * at_risk_mask).sum() / at_risk_mask.sum()).item():.5f}")


# 7. Parametric AFT models by LBFGS on distribution log_prob --------------------------------
def censored_nll(dist, t, e):
    if isinstance(dist, Gamma):
        # torch has no derivative of the regularized incomplete gamma in its first
        # argument, so the gamma model is fitted on the observed events only.
        return -(e * dist.log_prob(t)).sum()
    log_s = torch.log1p(-dist.cdf(t).clamp(max=1 - 1e-12))
    return -(e * dist.log_prob(t) + (1 - e) * log_s).sum()


def fit(make_dist, n_par, name):
    theta = torch.zeros(n_par + 2, dtype=torch.float64, requires_grad=True)
    lbfgs = torch.optim.LBFGS([theta], lr=1, max_iter=100, tolerance_grad=1e-9,
                              line_search_fn="strong_wolfe")

    def clos():
        lbfgs.zero_grad()
        loss = censored_nll(make_dist(theta), time, event)
        loss.backward()
        return loss

    lbfgs.step(clos)
    with torch.no_grad():
        d = make_dist(theta)
        nll = censored_nll(d, time, event)
    aic = 2 * nll + 2 * theta.numel()
    print(f"{name:12s} NLL {nll.item():.5f} AIC {aic.item():.4f} "
          f"shape {math.exp(theta[-1].item()):.4f}")
    return theta.detach(), d


def weibull_aft(th):
    scale = torch.exp(th[0] + X @ th[1:P + 1])
    return Weibull(scale, torch.exp(th[-1]))


def lognormal_aft(th):
    return LogNormal(th[0] + X @ th[1:P + 1], torch.exp(th[-1]))


def gamma_aft(th):
    conc = torch.exp(th[-1])
    return Gamma(conc, conc * torch.exp(-(th[0] + X @ th[1:P + 1])))


def loglogistic_aft(th):
    base = Uniform(torch.zeros(N, dtype=torch.float64), torch.ones(N, dtype=torch.float64))
    transforms = [SigmoidTransform().inv,
                  AffineTransform(th[0] + X @ th[1:P + 1], torch.exp(-th[-1])),
                  ExpTransform()]
    return TransformedDistribution(base, transforms)


th_w, d_w = fit(weibull_aft, P, "Weibull")
th_l, d_l = fit(lognormal_aft, P, "LogNormal")
th_g, d_g = fit(gamma_aft, P, "Gamma")
th_ll, d_ll = fit(loglogistic_aft, P, "LogLogistic")
print(f"Weibull AFT coef {[round(v, 4) for v in th_w[1:P + 1].tolist()]}")
# PH coefficients from the AFT fit: beta_PH = -k * beta_AFT
print(f"  implied PH coef {[round(v, 4) for v in (-math.exp(th_w[-1]) * th_w[1:P + 1]).tolist()]}")
half = torch.full((N,), 0.5, dtype=torch.float64)
for nm, d in [("Weibull", d_w), ("LogNormal", d_l), ("LogLogistic", d_ll)]:
    med = d.icdf(half)
    print(f"{nm:12s} median time subj0 {med[0].item():.4f}, "
          f"cohort median {med.median().item():.4f}")
s_w = 1 - d_w.cdf(torch.full((N,), 3.0, dtype=torch.float64))
s_g = 1 - d_g.cdf(torch.full((N,), 3.0, dtype=torch.float64))
print(f"S(3) Weibull mean {s_w.mean().item():.5f}, Gamma mean {s_g.mean().item():.5f}")
print(f"Weibull mean/variance subj0 {d_w.mean[0].item():.4f} {d_w.variance[0].item():.4f}")
print(f"LogNormal entropy subj0 {d_l.entropy()[0].item():.5f}")
try:
    d_g.icdf(half)
except NotImplementedError as exc:
    print("Gamma.icdf", type(exc).__name__, exc)
torch.manual_seed(3)
draws = d_w.sample((2,))
print("Weibull sample", tuple(draws.shape), draws.dtype, f"{draws[0, :3].tolist()[0]:.4f}")
rs = d_w.rsample()
print("rsample grad_fn", rs.requires_grad)


# 8. Integrated Brier score with IPCW ----------------------------------------------------------
cens_t, cens_s, _, _, _ = kaplan_meier(time, 1 - event)


def km_at(tq, t_grid, s_grid):
    i = torch.searchsorted(t_grid, tq, right=True) - 1
    return torch.where(i >= 0, s_grid[i.clamp(min=0)], torch.ones_like(tq))


def brier_curve(surv_fn, grid):
    G_T = km_at(time, cens_t, cens_s).clamp(min=1e-8)
    out = []
    for t in grid:
        s = surv_fn(t)
        died = (time <= t) & (event == 1)
        alive = time > t
        G_t = km_at(t.reshape(1), cens_t, cens_s).clamp(min=1e-8)
        bs = torch.where(died, s**2 / G_T, torch.zeros_like(s)) + torch.where(
            alive, (1 - s) ** 2 / G_t, torch.zeros_like(s))
        out.append(bs.mean())
    return torch.stack(out)


grid = torch.linspace(0.5, 6.0, 23, dtype=torch.float64)
bs_w = brier_curve(lambda t: 1 - d_w.cdf(t.expand(N)), grid)
bs_km = brier_curve(lambda t: km_at(t.reshape(1), km_t, km_s).expand(N), grid)
ibs_w = torch.trapezoid(bs_w, grid) / (grid[-1] - grid[0])
ibs_km = torch.trapezoid(bs_km, grid) / (grid[-1] - grid[0])
show("Brier(t) Weibull", bs_w)
print(f"IBS Weibull {ibs_w.item():.5f}, KM {ibs_km.item():.5f}, "
      f"dx form {torch.trapezoid(bs_w, dx=0.25).item():.5f}")


# 9. Hawkes process: exponential kernel --------------------------------------------------------
def hawkes_simulate(mu, alpha, beta_, T, gen):
    """Ogata's thinning: propose at the current intensity bound, accept with prob lambda/bound."""
    events, t = [], 0.0
    while True:
        past = torch.tensor(events, dtype=torch.float64)
        lam_bar = mu + alpha * torch.exp(-beta_ * (t - past)).sum().item()
        u = torch.rand(2, generator=gen, dtype=torch.float64)
        t = t - math.log(u[0].item()) / lam_bar
        if t > T:
            break
        lam_t = mu + alpha * torch.exp(-beta_ * (t - past)).sum().item()
        if u[1].item() * lam_bar <= lam_t:
            events.append(t)
    return torch.tensor(events, dtype=torch.float64)


def hawkes_loglik(ts, mu, alpha, beta_, T):
    dt_ = ts[:, None] - ts[None, :]
    kern = torch.tril(torch.exp(-beta_ * dt_.clamp(min=0)), diagonal=-1)
    lam = mu + alpha * kern.sum(dim=1)
    compensator = mu * T + (alpha / beta_) * (1 - torch.exp(-beta_ * (T - ts))).sum()
    return torch.log(lam).sum() - compensator


gen = torch.Generator().manual_seed(7)
T_h = 60.0
ts = hawkes_simulate(0.5, 0.8, 1.5, T_h, gen)
print(f"Hawkes events {ts.numel()}, first {[round(v, 4) for v in ts[:4].tolist()]}")
ll_true = hawkes_loglik(ts, 0.5, 0.8, 1.5, T_h)
print(f"Hawkes loglik at truth {ll_true.item():.5f}")
raw = torch.zeros(3, dtype=torch.float64, requires_grad=True)
opt_h = torch.optim.Adam([raw], lr=0.05)
for it in range(150):
    opt_h.zero_grad()
    mu_h, a_h, b_h = F.softplus(raw).unbind()
    nll_h = -hawkes_loglik(ts, mu_h, a_h, b_h, T_h)
    nll_h.backward()
    opt_h.step()
    if it % 50 == 0 or it == 149:
        print(f"Hawkes it {it:3d} NLL {nll_h.item():.5f}")
mu_h, a_h, b_h = F.softplus(raw.detach()).tolist()
print(f"Hawkes fit mu {mu_h:.4f} alpha {a_h:.4f} beta {b_h:.4f} branching {a_h / b_h:.4f}")
print("softplus grad_fn", type(F.softplus(raw).grad_fn).__name__)
# residual analysis: compensator increments are Exp(1) under the fitted model
cum = torch.cumsum(torch.exp(-b_h * (ts[:, None] - ts[None, :]).clamp(min=0)).tril(-1), 0)
print(f"compensator helper shape {tuple(cum.shape)}")


# 10. More of the toolbox: tie groups, running extremes, cumulative hazards, printing -------
order_t = torch.argsort(time, stable=True)
t_sorted = time[order_t]
vals, inv_c, cnt_c = torch.unique_consecutive(t_sorted, return_inverse=True, return_counts=True)
print(f"unique_consecutive groups {vals.numel()}, first counts {cnt_c[:6].tolist()}")
grp_max = torch.full((vals.numel(),), float("-inf"), dtype=torch.float64).scatter_reduce(
    0, inv_c, risk0[order_t], reduce="amax", include_self=False)
grp_mean = torch.zeros(vals.numel(), dtype=torch.float64).scatter_reduce(
    0, inv_c, risk0[order_t], reduce="mean", include_self=False)
show("max risk per tie group", grp_max)
show("mean risk per tie group", grp_mean)
run_max, run_arg = torch.cummax(risk0[order_t], dim=0)
print("cummax argmax head", run_arg[:8].tolist())
run_min = torch.cummin(risk0[order_t], dim=0).values
print(f"cummin last {run_min[-1].item():.5f}")
# Weibull baseline hazard h(t) = k/lam (t/lam)^(k-1), cumulated numerically and exactly
tt = torch.linspace(0.0, 6.0, 61, dtype=torch.float64)
k_hat, lam_hat = math.exp(th_w[-1].item()), math.exp(th_w[0].item())
h_t = k_hat / lam_hat * (tt / lam_hat) ** (k_hat - 1)
H_num = torch.cumulative_trapezoid(h_t, tt)
H_exact = (tt[1:] / lam_hat) ** k_hat
print(f"cumulative hazard at 6: numeric {H_num[-1].item():.5f}, exact {H_exact[-1].item():.5f}")
print(f"max |diff(S)| on KM {torch.diff(km_s).abs().max().item():.5f}")
print("KM head", km_s[:4])
print("bins float32 risk", risk_net[:3])
lcs32 = torch.logcumsumexp(risk_net[torch.argsort(time_f, descending=True)], dim=0)
print(f"float32 logcumsumexp tail {lcs32[-1].item():.6f} {lcs32[-2].item():.6f}, "
      f"simple Breslow on net {cox_breslow_simple(risk_net, time_f, event_f).item():.6f}")
print("rounded times", torch.unique(time[:10], sorted=True))
rate = event.sum() / time.sum()
exp_model = torch.distributions.Exponential(rate)
s2 = 1 - exp_model.cdf(torch.tensor(2.0))
print(f"exponential MLE rate {rate.item():.5f}, S(2) {s2.item():.5f}, "
      f"median {exp_model.icdf(torch.tensor(0.5)).item():.5f}")
w0 = Weibull(torch.tensor(lam_hat, dtype=torch.float64), torch.tensor(k_hat, dtype=torch.float64))
g0 = Gamma(torch.tensor(2.0, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64))
kl = torch.distributions.kl_divergence
g1 = Gamma(torch.tensor(1.5, dtype=torch.float64), rate)
print(f"KL(Exponential || Gamma) {kl(exp_model, g0).item():.5f}, "
      f"KL(Gamma || Gamma') {kl(g0, g1).item():.5f}")
s3 = torch.special.gammaincc(g0.concentration, g0.rate * 3)
print(f"Gamma survival by gammaincc {s3.item():.6f}"
      f" vs 1 - cdf {(1 - g0.cdf(torch.tensor(3.0, dtype=torch.float64))).item():.6f}")
print(Weibull(torch.tensor([lam_hat]), torch.tensor([k_hat])))
print(exp_model.batch_shape, exp_model.event_shape, exp_model.support)


# 11. Log-rank test, DeepHit-style PMF model, bootstrap and time-dependent AUC --------------
group = (X[:, 0] > 0).long()
uniq_e, inv_e = torch.unique(time, return_inverse=True)
d_all = torch.zeros(uniq_e.numel(), dtype=torch.float64).index_add_(0, inv_e, event)
d_g1 = torch.zeros_like(d_all).index_add_(0, inv_e, event * group)
n_all = (time[None, :] >= uniq_e[:, None]).sum(1).double()
n_g1 = ((time[None, :] >= uniq_e[:, None]) & (group[None, :] == 1)).sum(1).double()
expected = d_all * n_g1 / n_all
var = d_all * (n_g1 / n_all) * (1 - n_g1 / n_all) * (n_all - d_all) / (n_all - 1).clamp(min=1)
chi2 = (d_g1.sum() - expected.sum()) ** 2 / var.sum()
pval = 1 - torch.distributions.Chi2(torch.tensor(1.0, dtype=torch.float64)).cdf(chi2)
print(f"log-rank: observed {d_g1.sum().item():.0f}, expected {expected.sum().item():.4f}, "
      f"chi2 {chi2.item():.4f}, p {pval.item():.4e}")

torch.manual_seed(4)
ds = torch.utils.data.TensorDataset(Xf, bin_idx, event_f)
loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True,
                                     generator=torch.Generator().manual_seed(5))
pmf_net = nn.Sequential(nn.Linear(P, 32), nn.ReLU(), nn.BatchNorm1d(32), nn.Linear(32, n_bins + 1))
opt_p = torch.optim.AdamW(pmf_net.parameters(), lr=5e-3, weight_decay=1e-2)
for ep in range(8):
    tot = 0.0
    for xb, bb, eb in loader:
        logp = F.log_softmax(pmf_net(xb), dim=1)  # last column: survives past the last bin
        log_surv = torch.logcumsumexp(logp.flip(1), 1).flip(1)  # log P(T >= bin)
        ll_event = logp.gather(1, bb[:, None]).squeeze(1)
        ll_cens = log_surv.gather(1, (bb + 1)[:, None]).squeeze(1)
        loss_p = -(eb * ll_event + (1 - eb) * ll_cens).mean()
        opt_p.zero_grad()
        loss_p.backward()
        opt_p.step()
        tot += loss_p.item() * xb.shape[0]
    if ep % 4 == 3:
        print(f"PMF epoch {ep} mean loss {tot / N:.5f}")
pmf_net.eval()
with torch.no_grad():
    pmf = F.softmax(pmf_net(Xf), dim=1)
    surv_pmf = 1 - torch.cumsum(pmf, dim=1)[:, :-1]
show("PMF S(bin|x0)", surv_pmf[0], k=7)
c_pmf, _ = concordance(-surv_pmf[:, 3].double(), time, event)
print(f"PMF C-index at bin 3 {c_pmf.item():.4f}, nll_loss check "
      f"{F.nll_loss(F.log_softmax(pmf_net(Xf), 1), bin_idx).item():.5f}")

gen_b = torch.Generator().manual_seed(11)
boot = []
for _ in range(20):
    ib = torch.randint(0, N, (N,), generator=gen_b)
    boot.append(concordance(X[ib] @ beta.detach(), time[ib], event[ib])[0])
boot = torch.stack(boot)
lo, hi = torch.quantile(boot, torch.tensor([0.025, 0.975], dtype=torch.float64))
print(f"bootstrap C-index mean {boot.mean().item():.4f} sd {boot.std().item():.4f} "
      f"95% [{lo.item():.4f}, {hi.item():.4f}]")


def td_auc(risk, t0):
    cases = (time <= t0) & (event == 1)
    controls = time > t0
    w = 1 / km_at(time, cens_t, cens_s).clamp(min=1e-8)
    gt = (risk[:, None] > risk[None, :]).double() + 0.5 * (risk[:, None] == risk[None, :]).double()
    pair_w = (cases.double() * w)[:, None] * controls.double()[None, :]
    return (gt * pair_w).sum() / pair_w.sum()


aucs = torch.stack([td_auc(X @ beta.detach(), torch.tensor(t0, dtype=torch.float64))
                    for t0 in (1.0, 2.0, 4.0)])
print("time-dependent AUC", [f"{v:.4f}" for v in aucs.tolist()])
cuts_q = torch.quantile(time[event == 1], torch.linspace(0, 1, 5, dtype=torch.float64))
print("event-time quantile cuts", cuts_q.tolist())


# 12. Typical mistakes ------------------------------------------------------------------------
def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok {out}")
    except Exception as exc:  # noqa: BLE001
        print(f"{label}: {type(exc).__name__}: {exc}")


attempt("logcumsumexp on int", lambda: torch.logcumsumexp(torch.arange(5), dim=0))
attempt("logcumsumexp on bool", lambda: torch.logcumsumexp(torch.ones(3, dtype=torch.bool), 0))
attempt("searchsorted unsorted", lambda: torch.searchsorted(
    torch.tensor([3.0, 1.0, 2.0, 5.0, 4.0]), torch.tensor([0.0, 1.5, 2.5, 4.5, 6.0])).tolist())
attempt("searchsorted bad batch", lambda: torch.searchsorted(
    torch.zeros(2, 3), torch.zeros(3, 2)))
attempt("searchsorted dtype", lambda: torch.searchsorted(
    torch.arange(4.0), torch.arange(3)).tolist())
attempt("searchsorted bad side", lambda: torch.searchsorted(
    torch.arange(4.0), torch.tensor([1.0]), side="middle"))
attempt("Weibull negative scale", lambda: Weibull(torch.tensor([-1.0]), torch.tensor([1.5]),
                                                   validate_args=True))
attempt("Weibull log_prob negative t", lambda: Weibull(
    torch.tensor([1.0]), torch.tensor([1.5]), validate_args=True).log_prob(torch.tensor([-0.5])))
attempt("cumprod dim out of range", lambda: torch.cumprod(torch.ones(3, 4), dim=2))
attempt("cumsum without dim (NumPy habit)", lambda: time.cumsum())
attempt("cummax with dim None", lambda: torch.cummax(risk0, None))
attempt("logcumsumexp with a tuple dim", lambda: risk0.logcumsumexp((0,)))
attempt("cumprod with a float dim", lambda: torch.cumprod(km_s, 0.0))
attempt("cumsum dtype as a string", lambda: event.cumsum(0, dtype="float"))
attempt("cumsum dim out of range", lambda: torch.ones(3).cumsum(dim=-2))
attempt("bucketize 2-D boundaries", lambda: torch.bucketize(torch.ones(3), torch.ones(2, 2)))
attempt("trapezoid mismatched x", lambda: torch.trapezoid(torch.ones(5), torch.ones(4)))
attempt("unique dim out of range", lambda: torch.unique(torch.ones(3), dim=1))
attempt("index_add_ wrong index dtype", lambda: torch.zeros(3).index_add_(
    0, torch.tensor([0.0, 1.0]), torch.ones(2)))
attempt("KL Weibull-Gamma", lambda: kl(w0, g0))
attempt("BCE logits shape", lambda: F.binary_cross_entropy_with_logits(
    torch.zeros(4, 3), torch.zeros(4)))
