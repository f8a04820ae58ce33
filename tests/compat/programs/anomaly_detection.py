"""Anomaly detection on synthetic data, as practitioners write it in torch: Gaussian blobs with
planted outliers and a sine signal with injected spikes and level shifts (seeded generator);
a dense and a 1-d convolutional autoencoder trained a few Adam steps with per-sample MSE
(reduction="none"); a variational AE's ELBO score; Mahalanobis distance via inv / cholesky /
cholesky_solve / cov; k-NN scores with cdist + topk(largest=False); isolation-style random
splits with rand / searchsorted; thresholds from quantile / nanquantile / kthvalue / median;
a robust z-score with MAD; EWMA and rolling statistics with unfold / cumsum / conv1d;
hand-written metrics (ROC AUC with argsort / cumsum / trapezoid, average precision,
precision@k, best-threshold F1, a bincount confusion matrix, histc / histogram, bucketize);
flagging with where / nonzero / masked_select / isin / unique; and the usual mistakes."""

import math
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = torch.Generator().manual_seed(1234)


def show(name, t, k=5, fmt=".5g"):
    vals = [f"{v:{fmt}}" for v in t.detach().flatten()[:k].tolist()]
    print(f"{name} {tuple(t.shape)} {t.dtype} [{', '.join(vals)}]")


# 1. Synthetic data ------------------------------------------------------------------
n_in, n_out, d = 300, 15, 4
centers = torch.tensor([[0.0, 0.0, 0.0, 0.0], [4.0, 4.0, 0.0, -2.0]])
assign = torch.randint(0, 2, (n_in,), generator=gen)
inliers = centers[assign] + 0.7 * torch.randn(n_in, d, generator=gen)
outliers = torch.empty(n_out, d).uniform_(-8.0, 10.0, generator=gen)
X = torch.cat([inliers, outliers])
y = torch.cat([torch.zeros(n_in, dtype=torch.long), torch.ones(n_out, dtype=torch.long)])
perm = torch.randperm(X.shape[0], generator=gen)
X, y = X[perm], y[perm]
print("X", tuple(X.shape), X.dtype, "anomalies", int(y.sum()),
      "rate", f"{y.float().mean().item():.4f}")
show("X[0]", X[0])
print("cluster sizes", torch.bincount(assign).tolist())

T = 400
t = torch.arange(T, dtype=torch.float32)
signal = torch.sin(2 * math.pi * t / 50) + 0.1 * torch.randn(T, generator=gen)
spike_idx = torch.tensor([37, 120, 121, 250, 333])
signal[spike_idx] += torch.tensor([3.0, -2.5, 2.8, 4.0, -3.5])
signal[300:320] += 1.5  # level shift
sig_labels = torch.zeros(T, dtype=torch.long)
sig_labels[spike_idx] = 1
sig_labels[300:320] = 1
show("signal", signal[35:40])
print("signal anomalies", int(sig_labels.sum()), "of", T)


# 2. Evaluation metrics written by hand ----------------------------------------------
def roc_auc(scores, labels):
    order = torch.argsort(scores, descending=True, stable=True)
    lab = labels[order].float()
    tps = torch.cumsum(lab, 0)
    fps = torch.cumsum(1 - lab, 0)
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    return torch.trapezoid(tpr, fpr)


def average_precision(scores, labels):
    order = torch.argsort(scores, descending=True, stable=True)
    lab = labels[order].float()
    tps = torch.cumsum(lab, 0)
    precision = tps / torch.arange(1, len(lab) + 1)
    return (precision * lab).sum() / lab.sum()


def precision_at_k(scores, labels, k):
    top = torch.topk(scores, k).indices
    return labels[top].float().mean()


def best_f1(scores, labels):
    thr = torch.unique(scores)
    pred = scores[None, :] >= thr[:, None]
    pos = labels.bool()[None, :]
    tp = (pred & pos).sum(1).float()
    fp = (pred & ~pos).sum(1).float()
    fn = (~pred & pos).sum(1).float()
    f1 = 2 * tp / (2 * tp + fp + fn)
    best, idx = torch.max(f1, dim=0)
    return best, thr[idx]


def confusion(pred, labels):
    return torch.bincount(labels * 2 + pred, minlength=4).reshape(2, 2)


def report(name, scores, labels, k=15):
    auc = roc_auc(scores, labels)
    ap = average_precision(scores, labels)
    p_at_k = precision_at_k(scores, labels, k)
    f1, thr = best_f1(scores, labels)
    print(f"{name:>12}: AUC {auc.item():.4f} AP {ap.item():.4f} P@{k} {p_at_k.item():.4f} "
          f"F1 {f1.item():.4f} @ {thr.item():.4g}")
    cm = confusion((scores >= thr).long(), labels)
    print(f"{'':>12}  confusion {cm.tolist()} dtype {cm.dtype}")
    return auc


# 3. Dense autoencoder ---------------------------------------------------------------
mean, std = X.mean(0), X.std(0)
Xn = (X - mean) / std
show("std", std)


class AE(nn.Module):
    def __init__(self, d, h=8, z=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, z))
        self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        return self.dec(self.enc(x))


ae = AE(d)
opt = torch.optim.Adam(ae.parameters(), lr=1e-2)
for step in range(60):
    opt.zero_grad()
    loss = F.mse_loss(ae(Xn), Xn)
    loss.backward()
    opt.step()
    if step % 20 == 0 or step == 59:
        print(f"ae step {step:2d} loss {loss.item():.5f}")
ae.eval()
with torch.no_grad():
    recon = ae(Xn)
    err = F.mse_loss(recon, Xn, reduction="none").mean(dim=1)
print("recon err", tuple(err.shape), err.dtype, err.requires_grad)
show("recon err", err)
ae_auc = report("dense AE", err, y)

# 4. Variational AE and its ELBO score ----------------------------------------------


class VAE(nn.Module):
    def __init__(self, d, h=16, z=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.Tanh())
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.Tanh(), nn.Linear(h, d))

    def forward(self, x):
        hdn = self.body(x)
        mu, logvar = self.mu(hdn), self.logvar(hdn)
        zs = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(zs), mu, logvar


def neg_elbo(x, xr, mu, logvar):
    rec = F.mse_loss(xr, x, reduction="none").sum(-1)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=-1)
    return rec + kl, rec, kl


vae = VAE(d)
vopt = torch.optim.Adam(vae.parameters(), lr=5e-3)
for step in range(40):
    vopt.zero_grad()
    xr, mu_z, lv = vae(Xn)
    score, rec, kl = neg_elbo(Xn, xr, mu_z, lv)
    loss = score.mean()
    loss.backward()
    vopt.step()
    if step % 20 == 0 or step == 39:
        print(f"vae step {step:2d} -elbo {loss.item():.4f} rec {rec.mean().item():.4f} "
              f"kl {kl.mean().item():.4f}")
print("vae loss grad_fn", type(loss.grad_fn).__name__)
vae.eval()
with torch.no_grad():
    torch.manual_seed(5)
    draws = torch.stack([neg_elbo(Xn, *vae(Xn))[0] for _ in range(8)])
    vae_score = draws.mean(0)
print("vae draws", tuple(draws.shape))
report("VAE ELBO", vae_score, y)

# 5. Mahalanobis distance -----------------------------------------------------------
Xd = X.double()
mu_x = Xd.mean(0)
S = torch.cov(Xd.T)
print("cov", tuple(S.shape), S.dtype, "symmetric", torch.allclose(S, S.T))
show("cov diag", torch.diagonal(S))
S_inv = torch.linalg.inv(S)
diff = Xd - mu_x
m_inv = torch.einsum("ni,ij,nj->n", diff, S_inv, diff)
L = torch.linalg.cholesky(S)
print("cholesky lower", torch.allclose(L, torch.tril(L)),
      "reconstructs", torch.allclose(L @ L.T, S))
sol = torch.cholesky_solve(diff.T, L)
m_chol = (diff.T * sol).sum(0)
zt = torch.linalg.solve_triangular(L, diff.T, upper=False)
m_tri = zt.pow(2).sum(0)
print("mahalanobis agree", torch.allclose(m_inv, m_chol), torch.allclose(m_inv, m_tri))
show("mahalanobis^2", m_inv)
report("Mahalanobis", m_inv.float(), y)
corr = torch.corrcoef(Xd.T)
show("corrcoef row0", corr[0])
w_cov = torch.cov(Xd.T, correction=0, aweights=torch.exp(-m_inv / 10))
show("weighted cov diag", torch.diagonal(w_cov))
print("chi2 cut (d=4, 97.5%) flags", int((m_inv > 11.143).sum()))

# 6. k-NN distance scores ----------------------------------------------------------
dist = torch.cdist(Xn, Xn)
dist.fill_diagonal_(float("inf"))
knn_d, knn_i = torch.topk(dist, k=5, dim=1, largest=False)
print("knn", tuple(knn_d.shape), knn_i.dtype, knn_i[0].tolist())
show("knn d[0]", knn_d[0])
knn_score = knn_d[:, -1]
report("kNN (k=5)", knn_score, y)
report("kNN mean", knn_d.mean(1), y)
lof_like = knn_d.mean(1) / knn_d.mean(1)[knn_i].mean(1)
report("LOF-ish", lof_like, y)

# 7. Isolation-style random splits -------------------------------------------------


def isolation_depth(data, n_trees=30, max_depth=8, g=None):
    n = data.shape[0]
    depths = torch.zeros(n)
    for _ in range(n_trees):
        idx_groups = [torch.arange(n)]
        depth = torch.zeros(n)
        for _level in range(max_depth):
            new_groups = []
            for grp in idx_groups:
                if grp.numel() <= 1:
                    continue
                feat = torch.randint(0, data.shape[1], (1,), generator=g).item()
                col = data[grp, feat]
                lo, hi = col.min(), col.max()
                if hi <= lo:
                    continue
                cut = lo + (hi - lo) * torch.rand(1, generator=g)
                bounds = torch.cat([cut, hi[None] + 1])
                side = torch.searchsorted(bounds, col.contiguous(), right=True)
                for s in (0, 1):
                    sub = grp[side == s]
                    if sub.numel() > 0:
                        depth[sub] += 1
                        new_groups.append(sub)
            idx_groups = new_groups
        depths += depth
    return depths / n_trees


g_iso = torch.Generator().manual_seed(99)
iso_depth = isolation_depth(Xn, g=g_iso)
show("isolation depth", iso_depth)
report("isolation", -iso_depth, y)

# 8. Thresholds -------------------------------------------------------------------
q = torch.tensor([0.5, 0.9, 0.95, 0.99])
show("err quantiles", torch.quantile(err, q))
for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
    print(f"q95 {mode:>8} {torch.quantile(err, 0.95, interpolation=mode).item():.5g}")
err_nan = err.clone()
err_nan[::50] = float("nan")
print("quantile with nan", torch.quantile(err_nan, 0.95).item())
print(f"nanquantile {torch.nanquantile(err_nan, 0.95).item():.5g}")
show("nanquantile dim", torch.nanquantile(err_nan.reshape(5, -1), q, dim=1, keepdim=True)[:, :, 0])
k95 = int(0.95 * err.numel())
kv = torch.kthvalue(err, k95)
print(f"kthvalue k={k95} {kv.values.item():.5g} at {kv.indices.item()}", type(kv).__name__)
med = torch.median(err)
med_v, med_i = torch.median(Xn, dim=0)
print(f"median {med.item():.5g}", [f"{v:.4g}" for v in med_v.tolist()], med_i.tolist())
print(f"nanmedian {torch.nanmedian(err_nan).item():.5g}")
thr95 = torch.quantile(err, 0.95)
level = torch.tensor([0.9, 0.95], dtype=torch.float64, requires_grad=True)
soft_thr = torch.quantile(m_inv, level)  # (float64: err's last bits are the BLAS's)
soft_thr.sum().backward()
print("d threshold / d level", [f"{v:.5g}" for v in level.grad.tolist()],
      type(soft_thr.grad_fn).__name__)
flags = err > thr95
print("flagged at q95", int(flags.sum()), "true", int(y[flags].sum()))

# 9. Robust z-score with MAD -------------------------------------------------------
med_x = Xn.median(dim=0).values
mad = (Xn - med_x).abs().median(dim=0).values
robust_z = 0.6745 * (Xn - med_x) / mad
rz = robust_z.abs().amax(dim=1)
show("MAD", mad)
show("robust z", rz)
print("robust |z|>3.5", int((rz > 3.5).sum()))
report("robust z", rz, y)

# 10. Time series: rolling stats, EWMA, conv1d -----------------------------------
w = 25
win = signal.unfold(0, w, 1)
print("windows", tuple(win.shape), win.stride())
roll_mean = win.mean(-1)
roll_std = win.std(-1)
cs = torch.cumsum(F.pad(signal, (1, 0)), 0)
roll_mean_cs = (cs[w:] - cs[:-w]) / w
print("cumsum rolling mean matches", torch.allclose(roll_mean, roll_mean_cs, atol=1e-5))
kernel = torch.full((1, 1, w), 1.0 / w)
roll_mean_conv = F.conv1d(signal.view(1, 1, -1), kernel).flatten()
print("conv1d rolling mean matches", torch.allclose(roll_mean, roll_mean_conv, atol=1e-5))
z_roll = torch.zeros(T)
z_roll[w:] = (signal[w:] - roll_mean[:-1]) / roll_std[:-1]
show("rolling z", z_roll[w : w + 5])
alpha = 0.1
ewma = torch.empty(T)
ewma[0] = signal[0]
for i in range(1, T):
    ewma[i] = alpha * signal[i] + (1 - alpha) * ewma[i - 1]
wts = (1 - alpha) ** torch.arange(T - 1, -1, -1, dtype=torch.float64)
ewma_closed = torch.cumsum(wts * signal.double(), 0) * alpha / wts
ewma_closed += (1 - alpha) ** torch.arange(1, T + 1) * signal[0]
print("ewma closed form matches", bool((ewma.double() - ewma_closed).abs().max() < 1e-4))
show("ewma", ewma[295:300])
resid = (signal - ewma).abs()
report("EWMA resid", resid, sig_labels, k=25)
report("rolling z", z_roll.abs(), sig_labels, k=25)
diff1 = torch.diff(signal, prepend=signal[:1])
report("|diff|", diff1.abs(), sig_labels, k=25)

# 11. 1-d convolutional autoencoder on windows ---------------------------------
seg = 32
windows = signal.unfold(0, seg, 8).unsqueeze(1)
win_lab = sig_labels.unfold(0, seg, 8).amax(-1)
print("segments", tuple(windows.shape), "anomalous", int(win_lab.sum()))


class ConvAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(1, 8, 5, stride=2, padding=2), nn.ReLU(),
                                 nn.Conv1d(8, 4, 5, stride=2, padding=2), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose1d(4, 8, 4, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose1d(8, 1, 4, stride=2, padding=1))

    def forward(self, x):
        return self.dec(self.enc(x))


cae = ConvAE()
print("conv AE params", sum(p.numel() for p in cae.parameters()))
copt = torch.optim.Adam(cae.parameters(), lr=1e-2)
train_mask = win_lab == 0
for step in range(40):
    copt.zero_grad()
    out = cae(windows[train_mask])
    per_sample = F.mse_loss(out, windows[train_mask], reduction="none").mean(dim=(1, 2))
    loss = per_sample.mean()
    loss.backward()
    copt.step()
    if step % 20 == 0 or step == 39:
        print(f"conv ae step {step:2d} loss {loss.item():.5f} shape {tuple(out.shape)}")
with torch.no_grad():
    seg_err = F.mse_loss(cae(windows), windows, reduction="none").mean(dim=(1, 2))
show("segment err", seg_err)
report("conv AE", seg_err, win_lab, k=5)
pos = (torch.arange(windows.shape[0])[:, None] * 8 + torch.arange(seg)).flatten()
sq = (cae(windows).detach() - windows).squeeze(1).pow(2)
pt_err = torch.zeros(T).index_add_(0, pos, sq.flatten())
counts = torch.zeros(T).index_add_(0, pos, torch.ones(windows.shape[0] * seg))
pt_score = torch.where(counts > 0, pt_err / counts.clamp(min=1), torch.zeros(()))
report("conv AE pts", pt_score, sig_labels, k=25)

# 11b. More detectors: PCA, Gaussian likelihood, KDE, spectral residual, forecaster -----
Xc = Xn - Xn.mean(0)
U, Sv, Vh = torch.linalg.svd(Xc, full_matrices=False)
print("singular values", Sv)
explained = Sv**2 / (Sv**2).sum()
print("explained", explained.cumsum(0))
P = Vh[:2].T @ Vh[:2]
pca_err = (Xc - Xc @ P).pow(2).sum(1)
report("PCA (2 pc)", pca_err, y)
evals, evecs = torch.linalg.eigh(torch.cov(Xc.T))
print("eigh ascending", evals, torch.allclose(evals.flip(0), Sv**2 / (Xc.shape[0] - 1), rtol=1e-4))
mvn = torch.distributions.MultivariateNormal(Xn.mean(0), covariance_matrix=torch.cov(Xn.T))
nll = -mvn.log_prob(Xn)
show("gaussian nll", nll)
print("mvn batch/event", tuple(mvn.batch_shape), tuple(mvn.event_shape),
      f"entropy {mvn.entropy().item():.5g}")
report("Gaussian NLL", nll, y)
bw = 0.5
kde = torch.logsumexp(-torch.cdist(Xn, Xn).pow(2) / (2 * bw**2), dim=1) - math.log(Xn.shape[0])
report("KDE", -kde, y)
pd = F.pdist(Xn[:6])
print("pdist", pd.shape, f"{pd.min().item():.4g} {pd.max().item():.4g}")
spec = torch.fft.rfft(signal)
amp, phase = spec.abs(), spec.angle()
log_amp = torch.log(amp + 1e-8)
avg_log = F.avg_pool1d(log_amp.view(1, 1, -1), 3, stride=1, padding=1,
                       count_include_pad=False).flatten()
sal = torch.fft.irfft(torch.exp(log_amp - avg_log) * torch.exp(1j * phase), n=T).abs()
print("saliency", sal.shape, sal.dtype)
report("spectral res", sal, sig_labels, k=25)
padded = F.pad(signal.view(1, 1, -1), (4, 4), mode="replicate").flatten()
roll_med = padded.unfold(0, 9, 1).median(-1).values
report("rolling med", (signal - roll_med).abs(), sig_labels, k=25)
roll_max = F.max_pool1d(signal.abs().view(1, 1, -1), 9, stride=1, padding=4).flatten()
print("rolling max", roll_max.shape, f"{roll_max.max().item():.4f}")
lag = 10
inputs = signal.unfold(0, lag, 1)[:-1].unsqueeze(-1)
targets = signal[lag:]
lstm = nn.LSTM(1, 16, batch_first=True)
head = nn.Linear(16, 1)
fopt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=2e-2)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(inputs, targets), batch_size=64,
                                     shuffle=True, generator=torch.Generator().manual_seed(3))
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        fopt.zero_grad()
        out, _ = lstm(xb)
        pred = head(out[:, -1]).squeeze(-1)
        loss = F.huber_loss(pred, yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lstm.parameters(), 1.0)
        fopt.step()
        total += loss.item() * len(xb)
    print(f"forecaster epoch {epoch} loss {total / len(inputs):.5f}")
with torch.inference_mode():
    fc = head(lstm(inputs)[0][:, -1]).squeeze(-1)
fc_err = torch.cat([torch.zeros(lag), (fc - targets).abs()])
print("forecast err", fc_err.shape, fc_err.requires_grad, torch.is_inference(fc))
report("LSTM fcast", fc_err, sig_labels, k=25)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "detector.pt")
    torch.save({"model": ae.state_dict(), "mean": mean, "std": std, "thr": thr95}, path)
    ckpt = torch.load(path)
    ae2 = AE(d)
    print("load", ae2.load_state_dict(ckpt["model"]), sorted(ckpt)[:3])
    with torch.no_grad():
        err2 = F.mse_loss(ae2((X - ckpt["mean"]) / ckpt["std"]), Xn, reduction="none").mean(1)
    print("reloaded flags equal", torch.equal(err2 > ckpt["thr"], flags))
print("top-5 errors", torch.topk(err, 5))

# 12. Flagged points, histograms, buckets --------------------------------------
flag = m_inv.float() > torch.quantile(m_inv.float(), 0.95)
idx = torch.nonzero(flag).squeeze(1)
print("flagged idx", idx.tolist()[:8], idx.dtype)
print("nonzero as_tuple", len(torch.nonzero(flag, as_tuple=True)), torch.argwhere(flag).shape)
sel = torch.masked_select(m_inv.float(), flag)
show("flagged scores", sel.sort(descending=True).values)
labels_pred = torch.where(flag, torch.tensor(1), torch.tensor(0))
print("where dtype", labels_pred.dtype, "sum", int(labels_pred.sum()))
true_idx = torch.nonzero(y).flatten()
hit = torch.isin(idx, true_idx)
print("isin hits", int(hit.sum()), "of", idx.numel(), hit.dtype)
print("isin invert", torch.isin(idx, true_idx, invert=True).sum().item())
vals, cnts = torch.unique(labels_pred * 2 + y, return_counts=True)
print("outcome codes", vals.tolist(), cnts.tolist())
u, inv, c = torch.unique(knn_i[:, 0], sorted=True, return_inverse=True, return_counts=True)
print("nearest-neighbour hubs", u.numel(), int(c.max()), tuple(inv.shape))
h = torch.histc(err, bins=10, min=0, max=float(err.max()))
print("histc", h.tolist(), h.dtype)
hist, edges = torch.histogram(err, bins=8)
print("histogram", hist.tolist())
show("edges", edges, k=9, fmt=".4g")
custom_edges = torch.tensor([0.0, 0.1, 0.5, 1.0, 5.0, 100.0])
hist_d, edges_d = torch.histogram(err, bins=custom_edges, density=True)
show("density", hist_d, k=5, fmt=".4g")
boundaries = torch.tensor([0.1, 0.5, 1.0, 5.0])
b = torch.bucketize(err, boundaries)
print("bucketize", torch.bincount(b, minlength=5).tolist(), b.dtype)
b_right = torch.bucketize(err, boundaries, right=True)
print("bucketize right", torch.bincount(b_right, minlength=5).tolist())
sev = torch.bucketize(rz, torch.tensor([2.0, 3.5, 6.0]), out_int32=True)
print("severity", sev.dtype, torch.bincount(sev.long()).tolist())
print("weighted bincount", [f"{v:.4g}" for v in torch.bincount(b, weights=err).tolist()])

# 13. Typical mistakes --------------------------------------------------------


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", out if not torch.is_tensor(out) else tuple(out.shape))
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, str(e).split("\n")[0])


attempt("quantile q>1", lambda: torch.quantile(err, 1.5))
attempt("quantile q<0 tensor", lambda: torch.quantile(err, torch.tensor([0.5, -0.1])))
attempt("quantile q percent", lambda: torch.quantile(err, 95))
attempt("quantile int input", lambda: torch.quantile(y, 0.5))
attempt("quantile q double", lambda: torch.quantile(err, torch.tensor([0.5], dtype=torch.float64)))
attempt("quantile q 2-d", lambda: torch.quantile(err, torch.tensor([[0.5]])))
attempt("quantile bad mode", lambda: torch.quantile(err, 0.5, interpolation="cubic"))
attempt("nanquantile q>1", lambda: torch.nanquantile(err, 2.0))
attempt("histc min>max", lambda: torch.histc(err, bins=10, min=5, max=1))
attempt("histc sqrt bins", lambda: torch.histc(err, bins=math.sqrt(err.numel())))
attempt("histc bins tensor", lambda: torch.histc(err, torch.tensor(10.0)))
attempt("bincount float minlength", lambda: torch.bincount(b, minlength=5.0))
attempt("bincount list weights", lambda: b.bincount(err.tolist()))
attempt("histc bins=0", lambda: torch.histc(err, bins=0))
attempt("histogram int", lambda: torch.histogram(y, bins=3))
attempt("bincount negative", lambda: torch.bincount(torch.tensor([0, 2, -1])))
attempt("bincount float", lambda: torch.bincount(err))
attempt("bincount 2-d", lambda: torch.bincount(knn_i))
attempt("cov 3-d", lambda: torch.cov(torch.randn(2, 3, 4)))
attempt("cov bad weights", lambda: torch.cov(Xd.T, fweights=torch.ones(3, dtype=torch.long)))
attempt("cholesky non-PD", lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
attempt("cholesky non-square", lambda: torch.linalg.cholesky(torch.ones(2, 3)))
attempt("inv singular", lambda: torch.linalg.inv(torch.ones(3, 3)))
attempt("kthvalue k too large", lambda: torch.kthvalue(err, err.numel() + 1))
attempt("kthvalue k=0", lambda: torch.kthvalue(err, 0))
attempt("topk k too large", lambda: torch.topk(err, err.numel() + 1, largest=False))
attempt("cdist dim mismatch", lambda: torch.cdist(Xn, Xn[:, :3]))
attempt("searchsorted dims",
        lambda: torch.searchsorted(torch.tensor([[1.0, 2.0]]), torch.tensor([1.5])))
attempt("bucketize 2-d bounds", lambda: torch.bucketize(err, torch.ones(2, 2)))
attempt("unfold too big", lambda: signal.unfold(0, T + 1, 1))
attempt("masked_select bad mask", lambda: torch.masked_select(err, err))
attempt("trapezoid size mismatch", lambda: torch.trapezoid(torch.ones(4), torch.ones(3)))
box_bool = torch.ones(1, 1, 5, dtype=torch.bool)
attempt("conv1d of a bool mask", lambda: F.conv1d(flag.view(1, 1, -1), box_bool))
attempt("dilated conv1d of int labels",
        lambda: F.conv1d(sig_labels.int().view(1, 1, -1), box_bool[..., :3].int(), dilation=2))
attempt("dilated conv1d of long labels",
        lambda: F.conv1d(sig_labels.view(1, 1, -1), box_bool[..., :3].long(), dilation=2))
attempt("trapezoid of bool labels", lambda: torch.trapezoid(y.bool()))
attempt("trapezoid bool fpr", lambda: torch.trapezoid(torch.ones(4), torch.arange(4) > 0))
attempt("cumulative_trapezoid bool", lambda: torch.cumulative_trapezoid(flag))
attempt("trapezoid complex dx", lambda: torch.trapezoid(torch.ones(4), dx=0.5j))
attempt("mse shape mismatch", lambda: F.mse_loss(torch.ones(3, 1), torch.ones(3), reduction="none"))
print("final AUC dense AE", f"{ae_auc.item():.4f}")
