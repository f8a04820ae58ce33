"""Quantitative finance on simulated markets, as quants write it in torch: geometric Brownian
motion and GARCH(1,1) paths; log returns with diff(prepend=...); rolling statistics with
unfold; EWMA by a loop and by cumprod weights; drawdowns with cummax; Sharpe and Sortino
ratios; historical value-at-risk and expected shortfall with quantile interpolation modes;
GARCH(1,1) maximum likelihood (Gaussian and Student-t) with softplus / sigmoid constrained
parameters fitted by LBFGS(strong_wolfe) and Adam; Monte-Carlo option pricing with
antithetic variates against Black-Scholes (ndtr, Normal.cdf); Greeks by autograd; implied
volatility by guarded Newton steps; mean-variance portfolios (cov with aweights, corrcoef,
solve, pinv, the efficient frontier, a simplex projection); an LSTM one-step forecaster; and
the usual mistakes with their exception types and messages."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, StudentT

torch.manual_seed(7)


def show(name, t, k=5, fmt=".5g"):
    vals = [f"{v:{fmt}}" for v in t.detach().flatten()[:k].tolist()]
    print(f"{name} {tuple(t.shape)} {t.dtype} [{', '.join(vals)}]")


# 1. Geometric Brownian motion and log returns ------------------------------------
n_assets, n_days, dt = 4, 500, 1.0 / 252
mu = torch.tensor([0.08, 0.05, 0.12, 0.03], dtype=torch.float64)
sigma = torch.tensor([0.20, 0.15, 0.35, 0.10], dtype=torch.float64)
z = torch.randn(n_days, n_assets, dtype=torch.float64)
increments = (mu - 0.5 * sigma**2) * dt + sigma * math.sqrt(dt) * z
S0 = torch.tensor([100.0, 50.0, 20.0, 10.0], dtype=torch.float64)
prices = S0 * torch.exp(torch.cumsum(increments, dim=0))
prices = torch.cat([S0[None], prices])
show("prices[-1]", prices[-1])
log_ret = torch.diff(torch.log(prices), dim=0)
show("log returns", log_ret[:2])
print("max |log_ret - increments|", f"{(log_ret - increments).abs().max().item():.3g}")
simple_ret = prices[1:] / prices[:-1] - 1
show("simple returns", simple_ret[:2])
print("log1p check", torch.allclose(torch.log1p(simple_ret), log_ret))
d0 = torch.diff(prices[:, 0], prepend=prices[:1, 0])
d1 = torch.diff(prices[:5, 0], n=2, append=prices[5:6, 0])
print("diff prepend/append shapes", tuple(d0.shape), tuple(d1.shape), f"{d0[0].item():.4g}")
show("second differences", d1)
ann_vol = log_ret.std(dim=0) * math.sqrt(252)
show("annualised vol", ann_vol)
ann_mu = log_ret.mean(dim=0) * 252 + 0.5 * ann_vol**2
show("annualised drift", ann_mu)

# 2. GARCH(1,1) returns -------------------------------------------------------------
omega_true, alpha_true, beta_true = 2e-6, 0.08, 0.90
T = 300
eps = torch.randn(T, dtype=torch.float64)
var_t = omega_true / (1 - alpha_true - beta_true)
rets = []
for t in range(T):
    r = math.sqrt(var_t) * eps[t].item()
    rets.append(r)
    var_t = omega_true + alpha_true * r * r + beta_true * var_t
garch_ret = torch.tensor(rets, dtype=torch.float64)
show("garch returns", garch_ret)
kurt = ((garch_ret - garch_ret.mean()) ** 4).mean() / garch_ret.var(correction=0) ** 2
print(f"garch sample var {garch_ret.var().item():.5g} kurtosis {kurt.item():.5g}")

# 3. Rolling windows ----------------------------------------------------------------
w = 20
win = log_ret[:, 0].unfold(0, w, 1)
print("windows", tuple(win.shape), win.stride(), win.is_contiguous())
roll_mean = win.mean(-1)
roll_std = win.std(-1, correction=1)
roll_std0 = torch.std(win, dim=-1, correction=0)
show("rolling mean", roll_mean)
show("rolling std", roll_std)
print("std ratio", f"{(roll_std / roll_std0)[0].item():.6g}", f"{math.sqrt(w / (w - 1)):.6g}")
zscore = (log_ret[w - 1 :, 0] - roll_mean) / roll_std
show("z-scores", zscore)
print("|z|>2 count", int((zscore.abs() > 2).sum()))
win_step = log_ret.unfold(0, 21, 5)
print("monthly windows", tuple(win_step.shape), win_step.stride())
show("monthly var", torch.var(win_step, dim=-1, correction=0)[:, 1])
vmin, vmax = torch.std_mean(win_step, dim=-1)
show("std_mean std", vmin[0])
show("std_mean mean", vmax[0])
roll_max = prices[:, 0].unfold(0, 10, 1).max(dim=-1)
print("rolling max", roll_max.values[:3].tolist().__len__(), roll_max.indices[:8].tolist())

# 4. Exponentially weighted moving averages -----------------------------------------
lam = 0.94
x = log_ret[:, 0]
ewma_loop = torch.empty_like(x)
m = x[0]
for t in range(x.shape[0]):
    m = lam * m + (1 - lam) * x[t] if t > 0 else x[0]
    ewma_loop[t] = m
n = 60
weights = torch.cumprod(torch.full((n,), lam, dtype=torch.float64), 0) / lam
weights = (1 - lam) * weights.flip(0)
ewma_conv = (x.unfold(0, n, 1) * weights).sum(-1) / weights.sum()
show("ewma loop", ewma_loop[-3:])
show("ewma cumprod", ewma_conv[-3:])
print("ewma max gap", f"{(ewma_loop[n - 1 :] - ewma_conv).abs().max().item():.3g}")
rm_var = torch.zeros_like(x)
rm_var[0] = x[:20].var()
for t in range(1, x.shape[0]):
    rm_var[t] = lam * rm_var[t - 1] + (1 - lam) * x[t - 1] ** 2
show("riskmetrics vol", rm_var[-3:].sqrt() * math.sqrt(252))
print("ewma grad_fn", ewma_conv.grad_fn, rm_var.requires_grad)

# 5. Drawdowns ------------------------------------------------------------------------
equity = prices / prices[0]
peak, peak_idx = torch.cummax(equity, dim=0)
drawdown = equity / peak - 1
mdd, mdd_end = drawdown.min(dim=0)
show("max drawdown", mdd)
print("mdd end", mdd_end.tolist(), "peak idx", peak_idx[mdd_end, torch.arange(n_assets)].tolist())
trough_min, trough_idx = torch.cummin(equity[:, 2], dim=0)
print("cummin", f"{trough_min[-1].item():.5g}", int(trough_idx[-1]))
underwater = (drawdown < 0).to(torch.int64)
print("days underwater", underwater.sum(0).tolist())
calmar = ann_mu / mdd.abs()
show("calmar", calmar)

# 6. Sharpe and Sortino -----------------------------------------------------------------
rf = 0.02 / 252
excess = simple_ret - rf
sharpe = excess.mean(0) / excess.std(0) * math.sqrt(252)
downside = torch.clamp(excess, max=0.0)
sortino = excess.mean(0) / downside.pow(2).mean(0).sqrt() * math.sqrt(252)
show("sharpe", sharpe)
show("sortino", sortino)
print("best asset", int(sharpe.argmax()),
      "ranking", torch.argsort(sortino, descending=True).tolist())
hit = (simple_ret > 0).float().mean(0)
show("hit rate", hit)

# 7. Value-at-risk and expected shortfall ----------------------------------------------
losses = -simple_ret
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    v = torch.quantile(losses, 0.99, dim=0, interpolation=mode)
    show(f"VaR99 {mode}", v)
qs = torch.tensor([0.95, 0.975, 0.99], dtype=torch.float64)
var_q = torch.quantile(losses, qs, dim=0, keepdim=True)
print("VaR grid", tuple(var_q.shape))
show("VaR grid asset0", var_q[:, 0, 0])
var95 = torch.quantile(losses, 0.95, dim=0)
es95 = torch.where(losses >= var95, losses, torch.nan).nanmean(0)
show("ES95", es95)
print("median", f"{torch.nanquantile(losses[:, 0], 0.5).item():.5g}",
      f"{losses[:, 0].median().item():.5g}")
gauss_var = -(simple_ret.mean(0) + simple_ret.std(0) * Normal(0.0, 1.0).icdf(torch.tensor(0.01)))
show("gaussian VaR99", gauss_var)
q32 = torch.quantile(losses.float()[:, 0], torch.tensor([0.1, 0.5, 0.9]))
show("float32 quantiles", q32)
exceed = (losses[:, 0] > torch.quantile(losses[:, 0], 0.95)).sum()
print("VaR95 exceedances", int(exceed), "of", losses.shape[0])
wv = torch.full((n_assets,), 0.25, dtype=torch.float64, requires_grad=True)
pvar = torch.quantile(-(simple_ret @ wv), 0.99)
(mvar,) = torch.autograd.grad(pvar, wv)
print(f"portfolio VaR99 {pvar.item():.5g}", type(pvar.grad_fn).__name__)
show("marginal VaR", mvar)
print(f"euler allocation gap {abs((wv * mvar).sum().item() - pvar.item()) < 1e-12}")

# 8. GARCH(1,1) maximum likelihood --------------------------------------------------------
r = garch_ret * 100.0  # percent returns keep the optimiser well scaled


def unpack(raw):
    omega = F.softplus(raw[0])
    persistence = torch.sigmoid(raw[1])
    share = torch.sigmoid(raw[2])
    return omega, persistence * share, persistence * (1 - share)


def garch_var(raw, r):
    omega, alpha, beta = unpack(raw)
    h = [r.var()]
    for t in range(1, r.shape[0]):
        h.append(omega + alpha * r[t - 1] ** 2 + beta * h[-1])
    return torch.stack(h)


def gauss_nll(raw, r):
    h = garch_var(raw, r)
    return 0.5 * (math.log(2 * math.pi) + torch.log(h) + r**2 / h).sum()


raw0 = torch.tensor([-1.0, 2.0, -1.0], dtype=torch.float64)
raw = raw0.clone().requires_grad_(True)
opt = torch.optim.LBFGS([raw], lr=1.0, max_iter=30, line_search_fn="strong_wolfe")
calls = 0


def closure():
    global calls
    calls += 1
    opt.zero_grad()
    loss = gauss_nll(raw, r)
    loss.backward()
    return loss


for _ in range(2):
    final = opt.step(closure)
om, al, be = unpack(raw.detach())
print(f"LBFGS nll {gauss_nll(raw.detach(), r).item():.6g} omega {om.item():.4g} "
      f"alpha {al.item():.4g} beta {be.item():.4g} evals>0 {calls > 0}")
print("LBFGS state keys", sorted(opt.state[raw].keys())[:4])
print("grad norm small", bool(raw.grad.norm() < 1e-2))

raw_a = raw0.clone().requires_grad_(True)
adam = torch.optim.Adam([raw_a], lr=0.1)
for step in range(60):
    adam.zero_grad()
    loss = gauss_nll(raw_a, r)
    loss.backward()
    adam.step()
    if step % 20 == 0:
        print(f"adam step {step} nll {loss.item():.6g}")
oma, ala, bea = unpack(raw_a.detach())
print(f"adam omega {oma.item():.3g} alpha {ala.item():.3g} beta {bea.item():.3g}")

# Student-t innovations: distributions vs lgamma written out
def t_nll(params, r, manual=False):
    raw, nu_raw = params[:3], params[3]
    nu = 2.0 + F.softplus(nu_raw)
    h = garch_var(raw, r)
    scale = torch.sqrt(h * (nu - 2) / nu)
    if manual:
        zz = r / scale
        lp = (torch.lgamma((nu + 1) / 2) - torch.lgamma(nu / 2) - 0.5 * torch.log(nu * math.pi)
              - torch.log(scale) - (nu + 1) / 2 * torch.log1p(zz**2 / nu))
        return -lp.sum()
    return -StudentT(nu, 0.0, scale).log_prob(r).sum()


p = torch.cat([raw.detach(), torch.tensor([1.5], dtype=torch.float64)]).requires_grad_(True)
l_dist, l_man = t_nll(p, r), t_nll(p, r, manual=True)
print(f"student-t nll {l_dist.item():.6g} manual {l_man.item():.6g}")
g_dist = torch.autograd.grad(l_dist, p)[0]
g_man = torch.autograd.grad(t_nll(p, r, manual=True), p)[0]
show("t grad", g_dist)
print("grads agree", torch.allclose(g_dist, g_man))
opt_t = torch.optim.LBFGS([p], max_iter=25, line_search_fn="strong_wolfe")


def closure_t():
    opt_t.zero_grad()
    loss = t_nll(p, r)
    loss.backward()
    return loss


opt_t.step(closure_t)
print(f"student-t fit nll {t_nll(p.detach(), r).item():.5g} "
      f"nu {(2 + F.softplus(p[3])).item():.3g}")
h_fit = garch_var(raw.detach(), r)
show("conditional vol", h_fit.sqrt()[-4:])
fc = [h_fit[-1]]
for _ in range(4):
    fc.append(om + (al + be) * fc[-1])
show("variance forecast", torch.stack(fc))
print(f"long-run vol {math.sqrt((om / (1 - al - be)).item()):.4g}")

# 9. Monte-Carlo option pricing and Black-Scholes ------------------------------------------
S, K, Tm, rate, vol = 100.0, 105.0, 0.5, 0.03, 0.25


def bs_call(S, K, T, r, v):
    d1 = (torch.log(S / K) + (r + 0.5 * v**2) * T) / (v * torch.sqrt(T))
    d2 = d1 - v * torch.sqrt(T)
    return S * torch.special.ndtr(d1) - K * torch.exp(-r * T) * torch.special.ndtr(d2)


def bs_put(S, K, T, r, v):
    N = Normal(torch.zeros_like(S), torch.ones_like(S))
    d1 = (torch.log(S / K) + (r + 0.5 * v**2) * T) / (v * torch.sqrt(T))
    d2 = d1 - v * torch.sqrt(T)
    return K * torch.exp(-r * T) * N.cdf(-d2) - S * N.cdf(-d1)


tt = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
call = bs_call(tt(S), tt(K), tt(Tm), tt(rate), tt(vol))
put = bs_put(tt(S), tt(K), tt(Tm), tt(rate), tt(vol))
print(f"BS call {call.item():.6g} put {put.item():.6g}")
parity = call - put - (S - K * math.exp(-rate * Tm))
print(f"put-call parity gap {abs(parity.item()) < 1e-10}")
n_paths = 20000
zmc = torch.randn(n_paths, dtype=torch.float64)
ST = S * torch.exp((rate - 0.5 * vol**2) * Tm + vol * math.sqrt(Tm) * zmc)
ST_anti = S * torch.exp((rate - 0.5 * vol**2) * Tm - vol * math.sqrt(Tm) * zmc)
disc = math.exp(-rate * Tm)
pay = disc * torch.clamp(ST - K, min=0)
pay_av = 0.5 * (pay + disc * F.relu(ST_anti - K))
print(f"MC call {pay.mean().item():.4g} se {(pay.std() / math.sqrt(n_paths)).item():.3g}")
print(f"antithetic call {pay_av.mean().item():.4g} se "
      f"{(pay_av.std() / math.sqrt(n_paths)).item():.3g}")
print(f"variance reduction {(pay.var() / pay_av.var()).item():.4g}")
strikes = torch.linspace(80, 120, 5, dtype=torch.float64)
mc_strip = (disc * (ST[:, None] - strikes).clamp(min=0)).mean(0)
bs_strip = bs_call(tt(S), strikes, tt(Tm), tt(rate), tt(vol))
show("MC strip", mc_strip)
show("BS strip", bs_strip)
n_steps = 50
zpath = torch.randn(2000, n_steps, dtype=torch.float64)
dtp = Tm / n_steps
paths = S * torch.exp(torch.cumsum((rate - 0.5 * vol**2) * dtp + vol * math.sqrt(dtp) * zpath, 1))
asian = disc * (paths.mean(1) - K).clamp(min=0)
barrier = disc * torch.where(paths.max(1).values < 130, (paths[:, -1] - K).clamp(min=0), 0.0)
print(f"asian call {asian.mean().item():.4g} up-and-out {barrier.mean().item():.4g} "
      f"knocked {int((paths.amax(1) >= 130).sum())}")

# 10. Greeks by autograd ----------------------------------------------------------------------
Sg = tt(S).requires_grad_(True)
vg = tt(vol).requires_grad_(True)
price = bs_call(Sg, tt(K), tt(Tm), tt(rate), vg)
delta, vega = torch.autograd.grad(price, (Sg, vg), create_graph=True)
(gamma,) = torch.autograd.grad(delta, Sg)
d1 = (math.log(S / K) + (rate + 0.5 * vol**2) * Tm) / (vol * math.sqrt(Tm))
pdf = math.exp(-0.5 * d1 * d1) / math.sqrt(2 * math.pi)
print(f"delta {delta.item():.6g} formula {0.5 * (1 + math.erf(d1 / math.sqrt(2))):.6g}")
print(f"gamma {gamma.item():.6g} formula {pdf / (S * vol * math.sqrt(Tm)):.6g}")
print(f"vega {vega.item():.6g} formula {S * pdf * math.sqrt(Tm):.6g}")
print("delta grad_fn", type(delta.grad_fn).__name__ if delta.grad_fn else None)
Sv = torch.linspace(80, 120, 5, dtype=torch.float64, requires_grad=True)
pv = bs_call(Sv, tt(K), tt(Tm), tt(rate), tt(vol))
(dv,) = torch.autograd.grad(pv.sum(), Sv)
show("strip deltas", dv)
Sp = tt(S).requires_grad_(True)
mc_price = (disc * F.relu(Sp * torch.exp((rate - 0.5 * vol**2) * Tm
                                          + vol * math.sqrt(Tm) * zmc) - K)).mean()
mc_price.backward()
print(f"pathwise MC delta {Sp.grad.item():.4g}")

# 11. Implied volatility by Newton steps -------------------------------------------------------
true_vols = torch.tensor([0.15, 0.25, 0.40, 0.60, 0.05], dtype=torch.float64)
Ks = torch.tensor([90.0, 100.0, 110.0, 120.0, 150.0], dtype=torch.float64)
market = bs_call(tt(S), Ks, tt(Tm), tt(rate), true_vols)
iv = torch.full_like(market, 0.3)
for it in range(20):
    ivr = iv.clone().requires_grad_(True)
    model = bs_call(tt(S), Ks, tt(Tm), tt(rate), ivr)
    (vega_k,) = torch.autograd.grad(model.sum(), ivr)
    step = torch.where(vega_k > 1e-8, (model.detach() - market) / vega_k, torch.zeros_like(iv))
    iv = torch.clamp(iv - step, 1e-4, 5.0)
    if it in (0, 3):
        show(f"iv iter {it}", iv)
show("implied vols", iv, fmt=".4g")
print("recovered", torch.isclose(iv, true_vols, atol=1e-6).tolist())
bad = torch.tensor([0.001, 200.0], dtype=torch.float64)
strikes2 = torch.tensor([90.0, 100.0], dtype=torch.float64)
intrinsic = torch.clamp(S - strikes2 * math.exp(-rate * Tm), min=0)
valid = (bad > intrinsic) & (bad < S)
print("arbitrage-free quotes", valid.tolist())

# 12. Portfolio optimisation ---------------------------------------------------------------------
R = simple_ret.T  # (assets, days)
decay = torch.pow(0.99, torch.arange(R.shape[1] - 1, -1, -1, dtype=torch.float64))
Sigma = torch.cov(R) * 252
Sigma_w = torch.cov(R, aweights=decay) * 252
Sigma_f = torch.cov(R, fweights=torch.ones(R.shape[1], dtype=torch.int64) * 2, correction=0) * 252
show("cov diag", torch.diagonal(Sigma))
show("ew cov diag", Sigma_w.diag())
show("fweights cov diag", Sigma_f.diagonal())
corr = torch.corrcoef(R)
show("corr row0", corr[0])
print("corr diag ones", torch.allclose(corr.diag(), torch.ones(4, dtype=torch.float64)))
mu_hat = R.mean(1) * 252
ones = torch.ones(n_assets, dtype=torch.float64)
w_mv = torch.linalg.solve(Sigma, ones)
w_mv = w_mv / w_mv.sum()
show("min-variance weights", w_mv)
w_tan = torch.linalg.solve(Sigma, mu_hat - 0.02)
w_tan = w_tan / w_tan.sum()
show("tangency weights", w_tan)
w_pinv = torch.linalg.pinv(Sigma) @ ones
print("pinv matches solve", torch.allclose(w_pinv / w_pinv.sum(), w_mv))
print(f"min-var vol {torch.sqrt(w_mv @ Sigma @ w_mv).item():.5g}")
A = torch.stack([mu_hat, ones])
M = A @ torch.linalg.solve(Sigma, A.T)
targets = torch.linspace(0.0, 0.2, 5, dtype=torch.float64)
frontier = []
for tgt in targets:
    lam_ = torch.linalg.solve(M, torch.stack([tgt, torch.tensor(1.0, dtype=torch.float64)]))
    wf = torch.linalg.solve(Sigma, A.T @ lam_)
    frontier.append(torch.sqrt(wf @ Sigma @ wf))
show("frontier vols", torch.stack(frontier))
lstsq_w = torch.linalg.lstsq(Sigma, ones[:, None]).solution.squeeze(1)
print("lstsq agrees", torch.allclose(lstsq_w / lstsq_w.sum(), w_mv))
evals = torch.linalg.eigvalsh(Sigma)
show("cov eigenvalues", evals)
print(f"condition number {torch.linalg.cond(Sigma).item():.5g}")


def project_simplex(v):
    u, _ = torch.sort(v, descending=True)
    css = torch.cumsum(u, dim=0) - 1
    idx = torch.arange(1, v.shape[0] + 1, dtype=v.dtype)
    cond = u - css / idx > 0
    rho = int(torch.nonzero(cond).max())
    theta = css[rho] / (rho + 1)
    return torch.clamp(v - theta, min=0)


w_long = project_simplex(w_tan)
show("long-only tangency", w_long)
print(f"long-only sum {w_long.sum().item():.6g} zeros {int((w_long == 0).sum())}")
wl = torch.full((n_assets,), 0.25, dtype=torch.float64)
for _ in range(100):
    wl = wl.requires_grad_(True)
    obj = wl @ Sigma @ wl - 0.5 * (mu_hat @ wl)
    (g,) = torch.autograd.grad(obj, wl)
    wl = project_simplex(wl.detach() - 0.5 * g)
show("projected-gradient weights", wl)
risk_contrib = wl * (Sigma @ wl) / (wl @ Sigma @ wl)
show("risk contributions", risk_contrib)

# 13. LSTM one-step forecaster ---------------------------------------------------------------------
torch.manual_seed(11)
series = (garch_ret * 100).float()
L = 10
Xw = series.unfold(0, L, 1)[:-1].unsqueeze(-1)  # (N, L, 1)
yw = series[L:].unsqueeze(-1)
print("lstm data", tuple(Xw.shape), tuple(yw.shape), Xw.dtype)


class Forecaster(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1])


net = Forecaster()
print("lstm params", sum(p.numel() for p in net.parameters()),
      [tuple(p.shape) for p in net.lstm.parameters()])
opt_l = torch.optim.Adam(net.parameters(), lr=1e-2)
n_train = 220
for epoch in range(30):
    opt_l.zero_grad()
    pred = net(Xw[:n_train])
    loss = F.mse_loss(pred, yw[:n_train])
    loss.backward()
    opt_l.step()
    if epoch % 10 == 0:
        print(f"lstm epoch {epoch} mse {loss.item():.4g}")
with torch.no_grad():
    test_pred = net(Xw[n_train:])
    test_mse = F.mse_loss(test_pred, yw[n_train:])
    naive = F.mse_loss(torch.zeros_like(yw[n_train:]), yw[n_train:])
print(f"test mse {test_mse.item():.3g} naive {naive.item():.3g}")
out, (hn, cn) = net.lstm(Xw[:3])
print("lstm out", tuple(out.shape), tuple(hn.shape), tuple(cn.shape), type(out.grad_fn).__name__)

# 14. Typical mistakes -----------------------------------------------------------------
def attempt(label, fn):
    try:
        res = fn()
        print(label, "ok", res)
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, str(e).split("\n")[0])


attempt("unfold step 0", lambda: log_ret[:, 0].unfold(0, 5, 0))
attempt("unfold size too big", lambda: log_ret[:10, 0].unfold(0, 20, 1))
attempt("unfold float window", lambda: log_ret[:, 0].unfold(0, 252 / 12, 1))
attempt("diff 1-d prepend", lambda: torch.diff(prices, dim=0, prepend=prices[0]))
attempt("diff prepend shape", lambda: torch.diff(prices, dim=0, prepend=prices[:1, :2]))
attempt("cov float correction", lambda: torch.cov(R, correction=0.5))
attempt("cov list aweights", lambda: torch.cov(R, aweights=decay.tolist()))
attempt("quantile list q", lambda: torch.quantile(losses[:, 0], [0.95, 0.99]))
attempt("quantile q>1", lambda: torch.quantile(losses[:, 0], 1.5))
attempt("quantile bad mode", lambda: torch.quantile(losses[:, 0], 0.5, interpolation="cubic"))
attempt("quantile int", lambda: torch.quantile(torch.arange(10), 0.5))
n_obs = R.shape[1]
neg_fw = -torch.ones(n_obs, dtype=torch.int64)
attempt("cov negative fweights", lambda: torch.cov(R, fweights=neg_fw))
attempt("cov float fweights", lambda: torch.cov(R, fweights=torch.ones(n_obs, dtype=torch.float64)))
attempt("cov negative aweights", lambda: torch.cov(R, aweights=-decay))
attempt("cov 3-d", lambda: torch.cov(torch.zeros(2, 3, 4)))
attempt("diff n=-1", lambda: torch.diff(prices[:, 0], n=-1))
attempt("cummax bad dim", lambda: torch.cummax(equity, dim=2))
attempt("solve singular", lambda: torch.linalg.solve(torch.ones(3, 3, dtype=torch.float64),
                                                      torch.ones(3, dtype=torch.float64)))
raw_bad = raw0.clone().requires_grad_(True)
opt_bad = torch.optim.LBFGS([raw_bad], line_search_fn="strong_wolfe")


def bad_closure():
    opt_bad.zero_grad()
    gauss_nll(raw_bad, r[:20]).backward()


attempt("LBFGS closure returns None", lambda: opt_bad.step(bad_closure))
attempt("LBFGS without closure", lambda: opt_bad.step())
opt_armijo = torch.optim.LBFGS([raw_bad], line_search_fn="armijo")
attempt("LBFGS bad line search", lambda: opt_armijo.step(lambda: gauss_nll(raw_bad, r[:20])))
attempt("StudentT bad df", lambda: StudentT(torch.tensor(-1.0), validate_args=True))
attempt("Normal bad scale", lambda: Normal(0.0, -1.0))
attempt("grad of non-scalar", lambda: torch.autograd.grad(pv, Sv))
attempt("LSTM unbatched wrong dims", lambda: net.lstm(torch.zeros(2, 3, 4, 1)))
attempt("LSTM feature mismatch", lambda: net.lstm(torch.zeros(2, 5, 3)))
