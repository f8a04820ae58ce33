"""Clustering and mixture models on synthetic blobs: k-means++ and Lloyd iterations,
mini-batch k-means, EM for a full-covariance Gaussian mixture, the same mixture as a
MixtureSameFamily fitted by gradient on unconstrained parameters, BIC/AIC over k,
silhouette scores, cluster relabelling against the truth, PCA projections, and the
mistakes people make with these APIs."""

import itertools
import math

import torch
from torch.distributions import (
    Categorical,
    MixtureSameFamily,
    MultivariateNormal,
    biject_to,
    constraints,
    transform_to,
)

torch.manual_seed(0)


def fmt(t, digits=4):
    return [round(v, digits) for v in t.reshape(-1).tolist()]


# --- 1. synthetic blobs ----------------------------------------------------------------
print("== data")
true_means = torch.tensor([[0.0, 0.0], [5.0, 5.0], [-4.0, 4.0]])
true_covs = torch.stack([
    torch.tensor([[1.0, 0.3], [0.3, 0.5]]),
    torch.tensor([[0.6, -0.2], [-0.2, 0.8]]),
    torch.tensor([[0.4, 0.0], [0.0, 1.2]]),
])
counts = [120, 90, 60]
parts, labels = [], []
for k, n in enumerate(counts):
    mvn = MultivariateNormal(true_means[k], covariance_matrix=true_covs[k])
    parts.append(mvn.sample((n,)))
    labels.append(torch.full((n,), k, dtype=torch.long))
X = torch.cat(parts)
y = torch.cat(labels)
perm = torch.randperm(X.shape[0])
X, y = X[perm], y[perm]
# a blob drawn the manual way: mean + randn @ L^T
L_extra = torch.linalg.cholesky(true_covs[0])
manual = true_means[0] + torch.randn(5, 2) @ L_extra.T
print("X", X.shape, X.dtype, "y", y.shape, y.dtype)
print(f"X mean {fmt(X.mean(0))} std {fmt(X.std(0))}")
print(f"manual blob mean {fmt(manual.mean(0))}")
print("first labels", y[:10].tolist())
N, D = X.shape


# --- 2. k-means++ ------------------------------------------------------------------------
print("== k-means++")


def kmeanspp(X, k, gen):
    n = X.shape[0]
    first = torch.randint(n, (1,), generator=gen)
    centers = X[first]
    for _ in range(1, k):
        d2 = torch.cdist(X, centers).pow(2).min(dim=1).values
        idx = torch.multinomial(d2 / d2.sum(), 1, generator=gen)
        centers = torch.cat([centers, X[idx]])
    return centers


gen = torch.Generator().manual_seed(42)
C0 = kmeanspp(X, 3, gen)
print(f"init centers {fmt(C0)}")
for mode in ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist"]:
    d = torch.cdist(X, C0, p=2, compute_mode=mode)
    print(f"cdist {mode}: shape {tuple(d.shape)} sum {d.sum().item():.6g}")
d1 = torch.cdist(X, C0, p=1)
dinf = torch.cdist(X, C0, p=float("inf"))
print(f"cdist p=1 sum {d1.sum().item():.6g}  p=inf sum {dinf.sum().item():.6g}")
dmin, amin = torch.cdist(X, C0).min(dim=1, keepdim=True)
print("min keepdim", dmin.shape, amin.shape, amin.dtype, f"{dmin.sum().item():.6g}")
print("argmin keepdim", torch.cdist(X, C0).argmin(dim=1, keepdim=True)[:5].flatten().tolist())


# --- 3. Lloyd iterations, four ways to update the centroids --------------------------------
print("== Lloyd")


def update_scatter_add(X, assign, k):
    sums = torch.zeros(k, X.shape[1]).scatter_add_(0, assign[:, None].expand(-1, X.shape[1]), X)
    cnt = torch.zeros(k).scatter_add_(0, assign, torch.ones(X.shape[0]))
    return sums, cnt


def update_index_add(X, assign, k):
    sums = torch.zeros(k, X.shape[1]).index_add_(0, assign, X)
    cnt = torch.bincount(assign, minlength=k).float()
    return sums, cnt


def update_bincount(X, assign, k):
    sums = torch.stack([torch.bincount(assign, weights=X[:, j], minlength=k)
                        for j in range(X.shape[1])], dim=1)
    cnt = torch.bincount(assign, minlength=k).to(X.dtype)
    return sums, cnt


def lloyd(X, C, update, iters=20):
    k = C.shape[0]
    for it in range(iters):
        n_iter = it + 1
        assign = torch.cdist(X, C).argmin(dim=1)
        sums, cnt = update(X, assign, k)
        empty = cnt == 0
        newC = torch.where(empty[:, None], C, sums / cnt.clamp(min=1)[:, None])
        shift = (newC - C).norm(dim=1).max().item()
        C = newC
        if shift < 1e-6:
            break
    inertia = torch.cdist(X, C).min(dim=1).values.pow(2).sum()
    return C, assign, inertia, n_iter


for name, update in [("scatter_add_", update_scatter_add), ("index_add_", update_index_add),
                     ("bincount", update_bincount)]:
    C, assign, inertia, it = lloyd(X, C0.clone(), update)
    print(f"{name}: iters {it} inertia {inertia.item():.6g} centers {fmt(C, 3)}")

assign = torch.cdist(X, C).argmin(dim=1)
means_sr = torch.zeros(3, D).scatter_reduce(
    0, assign[:, None].expand(-1, D), X, reduce="mean", include_self=False)
print(f"scatter_reduce mean {fmt(means_sr, 3)}")
print(f"matches Lloyd: {torch.allclose(means_sr, C, atol=1e-5)}")
for red in ["sum", "amax", "amin", "prod"]:
    r = torch.zeros(3).scatter_reduce(0, assign, X[:, 0], reduce=red, include_self=False)
    print(f"scatter_reduce {red}: {fmt(r, 3)}")

# empty cluster: a center far away from all points gets no members
C_bad = torch.cat([C0[:2], torch.tensor([[100.0, 100.0]])])
a_bad = torch.cdist(X, C_bad).argmin(dim=1)
cnt_bad = torch.bincount(a_bad, minlength=3)
print("counts with far center", cnt_bad.tolist())
far = torch.cdist(X, C_bad).min(dim=1).values.argmax()
C_fix = C_bad.clone()
C_fix[cnt_bad == 0] = X[far]
print(f"reseeded empty center at point {far.item()}: {fmt(C_fix[2], 3)}")
C_e, a_e, in_e, it_e = lloyd(X, C_fix, update_index_add)
print(f"after reseed: iters {it_e} inertia {in_e.item():.6g}")


# --- 4. mini-batch k-means -----------------------------------------------------------------
print("== mini-batch k-means")
torch.manual_seed(1)
Cm = C0.clone()
seen = torch.zeros(3)
for _ in range(30):
    batch = X[torch.randperm(N)[:32]]
    a = torch.cdist(batch, Cm).argmin(1)
    for k in range(3):
        members = batch[a == k]
        if members.shape[0] == 0:
            continue
        seen[k] += members.shape[0]
        lr = members.shape[0] / seen[k]
        Cm[k] = (1 - lr) * Cm[k] + lr * members.mean(0)
inertia_mb = torch.cdist(X, Cm).min(1).values.pow(2).sum()
print(f"mini-batch centers {fmt(Cm, 3)} inertia {inertia_mb.item():.6g} seen {seen.tolist()}")


# --- 5. EM for a full-covariance GMM (float64) ----------------------------------------------
print("== EM")
Xd = X.double()


def log_gauss(X, mu, cov):
    L, info = torch.linalg.cholesky_ex(cov)
    assert int(info.max()) == 0
    diff = (X[None] - mu[:, None]).transpose(-1, -2)            # K, D, N
    z = torch.linalg.solve_triangular(L, diff, upper=False)       # K, D, N
    maha = z.pow(2).sum(1)                                        # K, N
    logdet = 2 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
    return (-0.5 * (D * math.log(2 * math.pi) + logdet[:, None] + maha)).T  # N, K


def em(X, K, iters=40, reg=1e-6, seed=0):
    g = torch.Generator().manual_seed(seed)
    mu = kmeanspp(X, K, g)
    cov = torch.cov(X.T).expand(K, D, D).clone()
    logw = torch.full((K,), -math.log(K), dtype=X.dtype)
    prev = -math.inf
    for it in range(iters):
        n_iter = it + 1
        lp = log_gauss(X, mu, cov) + logw
        ll = torch.logsumexp(lp, dim=1)
        resp = (lp - ll[:, None]).exp()
        total = ll.sum().item()
        nk = resp.sum(0)
        mu = torch.einsum("nk,nd->kd", resp, X) / nk[:, None]
        diff = X[None] - mu[:, None]
        cov = torch.einsum("nk,knd,kne->kde", resp, diff, diff) / nk[:, None, None]
        cov = cov + reg * torch.eye(D, dtype=X.dtype).expand(K, D, D)
        logw = (nk / X.shape[0]).log()
        if abs(total - prev) < 1e-8 * abs(total):
            break
        prev = total
    return mu, cov, logw, total, n_iter, resp


mu, cov, logw, ll, it, resp = em(Xd, 3)
order = mu[:, 0].argsort()
print(f"EM iters {it} loglik {ll:.4f}")
print(f"weights {fmt(logw.exp()[order])}")
print(f"means {fmt(mu[order], 3)}")
print(f"covs {fmt(cov[order], 3)}")
sign, logabsdet = torch.linalg.slogdet(cov)
print(f"slogdet sign {sign.tolist()} logabsdet {fmt(logabsdet[order])}")
Lc = torch.linalg.cholesky(cov)
Ld = torch.diag_embed(torch.diagonal(Lc, dim1=-2, dim2=-1))
print(f"diag_embed(diag(L)) {fmt(Ld[order[0]])}")
print(f"resp rows sum to 1: {torch.allclose(resp.sum(1), torch.ones(N, dtype=torch.float64))}")
hard = resp.argmax(1)
print("hard counts", torch.bincount(hard, minlength=3)[order].tolist())

# --- 6. BIC / AIC over k ---------------------------------------------------------------------
print("== model selection")
for K in range(1, 5):
    m_, c_, w_, ll_, it_, _ = em(Xd, K, seed=K)
    p = K * D + K * D * (D + 1) // 2 + (K - 1)
    bic = -2 * ll_ + p * math.log(N)
    aic = -2 * ll_ + 2 * p
    print(f"K={K} params {p} loglik {ll_:.3f} BIC {bic:.3f} AIC {aic:.3f}")


# --- 7. MixtureSameFamily fitted by gradient ------------------------------------------------
print("== MixtureSameFamily by gradient")
torch.manual_seed(3)
K = 3
print("simplex", transform_to(constraints.simplex),
      "tril", transform_to(constraints.lower_cholesky),
      "positive", biject_to(constraints.positive))
tr_tril = transform_to(constraints.lower_cholesky)
tr_simplex = transform_to(constraints.simplex)
init_L = torch.eye(D).expand(K, D, D)
u_tril = tr_tril.inv(init_L).clone().requires_grad_()
u_w = tr_simplex.inv(torch.full((K,), 1.0 / K)).clone().requires_grad_()
u_mu = C0.clone().requires_grad_()
print("unconstrained shapes", tuple(u_tril.shape), tuple(u_w.shape))
opt = torch.optim.Adam([u_tril, u_w, u_mu], lr=0.05)


def model():
    return MixtureSameFamily(Categorical(probs=tr_simplex(u_w)),
                             MultivariateNormal(u_mu, scale_tril=tr_tril(u_tril)))


for step in range(150):
    opt.zero_grad()
    nll = -model().log_prob(X).mean()
    nll.backward()
    opt.step()
    if step % 50 == 0 or step == 149:
        print(f"step {step} nll {nll.item():.4f}")
gmm = model()
print(gmm.batch_shape, gmm.event_shape, gmm.mixture_distribution.probs.shape)
o = gmm.component_distribution.mean[:, 0].argsort()
print(f"weights {fmt(gmm.mixture_distribution.probs[o].detach(), 3)}")
print(f"means {fmt(gmm.component_distribution.mean[o].detach(), 2)}")
print(f"part variances {fmt(gmm.component_distribution.variance[o].detach(), 2)}")
print(f"part entropies {fmt(gmm.component_distribution.entropy()[o].detach(), 3)}")
print(f"mixture mean {fmt(gmm.mean.detach(), 3)} variance {fmt(gmm.variance.detach(), 3)}")
print(f"categorical entropy {gmm.mixture_distribution.entropy().item():.4f}")
with torch.no_grad():
    s = gmm.sample((1000,))
    print("sample", s.shape, f"mean {fmt(s.mean(0), 2)}")
    post = gmm.component_distribution.log_prob(X[:, None]) + gmm.mixture_distribution.logits
    print(f"posterior argmax counts {torch.bincount(post.argmax(1), minlength=K)[o].tolist()}")
    comp_rs = gmm.component_distribution.rsample((4,))
    print("component rsample", comp_rs.shape)
print("has_rsample", gmm.has_rsample, gmm.component_distribution.has_rsample)
try:
    gmm.rsample()
except NotImplementedError as e:
    print("rsample on mixture: NotImplementedError", e)


# --- 8. silhouette, unique, mode, confusion, relabelling ------------------------------------
print("== evaluation")


def silhouette(X, labels):
    d = torch.cdist(X, X)
    k = int(labels.max()) + 1
    onehot = torch.nn.functional.one_hot(labels, k).to(X.dtype)
    sums = d @ onehot
    cnt = onehot.sum(0)
    own = cnt[labels]
    a = sums.gather(1, labels[:, None]).squeeze(1) / (own - 1).clamp(min=1)
    other = sums / cnt
    other = other.masked_fill(onehot.bool(), float("inf"))
    b = other.min(1).values
    return ((b - a) / torch.maximum(a, b)).mean()


print(f"silhouette Lloyd {silhouette(X, assign).item():.4f}")
print(f"silhouette truth {silhouette(X, y).item():.4f}")
vals, inv, cnts = torch.unique(assign, return_inverse=True, return_counts=True)
print("unique", vals.tolist(), cnts.tolist(), bool((vals[inv] == assign).all()))
vals2, cnts2 = torch.unique(y, sorted=True, return_counts=True)
print("truth unique", vals2.tolist(), cnts2.tolist())
m, mi = torch.mode(assign)
print("mode", m.item(), mi.dtype)
majority = torch.stack([torch.mode(y[assign == k]).values for k in range(3)])
print("majority truth label per cluster", majority.tolist())
conf = torch.bincount(y * 3 + assign, minlength=9).reshape(3, 3)
print("confusion\n", conf)
best, best_perm = -1, None
for p in itertools.permutations(range(3)):
    score = conf[torch.arange(3), torch.tensor(p)].sum().item()
    if score > best:
        best, best_perm = score, p
print(f"best permutation {best_perm} accuracy {best / N:.4f}")
relabel = torch.empty(3, dtype=torch.long)
relabel[torch.tensor(best_perm)] = torch.arange(3)
print("relabelled accuracy", f"{(relabel[assign] == y).float().mean().item():.4f}")


# --- 9. projections and statistics ----------------------------------------------------------
print("== projections")
X4 = torch.cat([X, 0.1 * torch.randn(N, 2)], dim=1) @ torch.linalg.qr(torch.randn(4, 4)).Q
cov4 = torch.cov(X4.T)
corr4 = torch.corrcoef(X4.T)
print(f"cov trace {cov4.trace().item():.4f} corr diag {fmt(corr4.diagonal())}")
w_cov = torch.cov(X4.T, correction=0, aweights=torch.rand(N))
print(f"weighted cov trace {w_cov.trace().item():.4f}")
evals, evecs = torch.linalg.eigh(cov4)
print(f"eigh eigenvalues {fmt(evals)}")
Xc = X4 - X4.mean(0)
U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
print(f"svd singular^2/(n-1) {fmt(S.pow(2) / (N - 1))}")
proj_svd = Xc @ Vh[:2].T
proj_eig = Xc @ evecs[:, [-1, -2]]
print(f"|proj| agree: {torch.allclose(proj_svd.abs(), proj_eig.abs(), atol=1e-3)}")
U2, S2, V2 = torch.pca_lowrank(X4, q=2, niter=4)
print("pca_lowrank", U2.shape, S2.shape, V2.shape, f"S {fmt(S2, 2)}")
print(f"explained ratio {fmt(S[:2].pow(2).sum() / S.pow(2).sum())}")


# --- 10. more of torch.distributions around the mixture -------------------------------------
print("== distributions")
comp = gmm.component_distribution
with torch.no_grad():
    prec = comp.precision_matrix
    print(f"precision[0] {fmt(prec[o[0]], 3)} stddev {fmt(comp.stddev[o], 3)}")
    mvn_p = MultivariateNormal(comp.loc, precision_matrix=prec)
    same = torch.allclose(mvn_p.log_prob(X[:5, None]), comp.log_prob(X[:5, None]), atol=1e-4)
    print(f"same log_prob via precision: {same}")
    kl = torch.distributions.kl_divergence(comp, MultivariateNormal(torch.zeros(2), torch.eye(2)))
    print(f"KL to N(0, I) {fmt(kl[o], 3)}")
    ind = torch.distributions.Independent(torch.distributions.Normal(comp.loc, comp.stddev), 1)
    print("diagonal approx", ind.batch_shape, ind.event_shape,
          f"{fmt(ind.log_prob(X[:3, None]), 3)}")
    sb = biject_to(constraints.simplex)
    z = torch.tensor([0.3, -0.2])
    w = sb(z)
    print(sb, f"{fmt(w)} ladj {sb.log_abs_det_jacobian(z, w).item():.5f} inv {fmt(sb.inv(w))}")
    pd = transform_to(constraints.positive_definite)
    M = pd(torch.tensor([[0.1, 0.0], [0.5, -0.3]]))
    print(f"positive_definite transform {fmt(M)}",
          f"check {constraints.positive_definite.check(M).item()}")
    print("simplex check",
          constraints.simplex.check(torch.tensor([[0.2, 0.8], [0.5, 0.6]])).tolist())
    print("lower_cholesky check", constraints.lower_cholesky.check(comp.scale_tril).tolist())
    labels_s = gmm.mixture_distribution.sample((2000,))
    print("mixture label counts", torch.bincount(labels_s, minlength=K)[o].tolist())
    lp_batch = torch.vmap(gmm.log_prob)(X[:6])
    print(f"vmap log_prob {fmt(lp_batch, 4)}")
    top = torch.topk(resp.max(1).values, 3, largest=False)
    print(f"least certain points {top.indices.tolist()} {fmt(top.values, 4)}")
    kv = torch.kthvalue(torch.cdist(X, C)[:, 0], 5)
    print(f"5th nearest to center 0: {kv.values.item():.4f} at {kv.indices.item()}")
    hist = torch.histc(torch.cdist(X, C).min(1).values, bins=6, min=0, max=3)
    print("distance histogram", hist.tolist())
    edges = torch.linspace(0, 3, 7)
    print("bucketize", torch.bincount(torch.bucketize(torch.cdist(X, C).min(1).values, edges),
                                      minlength=8).tolist())


# --- 11. typical mistakes -------------------------------------------------------------------
print("== mistakes")


def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok {out}")
    except Exception as e:
        print(f"{label}: {type(e).__name__}: {e}")


attempt("non-PD covariance", lambda: MultivariateNormal(
    torch.zeros(2), covariance_matrix=torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
attempt("cholesky non-PD", lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
attempt("cholesky_ex info", lambda: torch.linalg.cholesky_ex(
    torch.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item())
attempt("negative probs", lambda: Categorical(probs=torch.tensor([0.5, -0.1, 0.6]),
                                               validate_args=True))
attempt("cdist feature mismatch", lambda: torch.cdist(torch.randn(4, 3), torch.randn(5, 2)))
attempt("multinomial all-zero", lambda: torch.multinomial(torch.zeros(4), 1))
attempt("multinomial too many", lambda: torch.multinomial(torch.tensor([1.0, 0.0, 1.0]), 3))
attempt("mixture batch mismatch", lambda: MixtureSameFamily(
    Categorical(probs=torch.ones(3) / 3),
    MultivariateNormal(torch.zeros(4, 2), scale_tril=torch.eye(2).expand(4, 2, 2))).sample())
attempt("bincount negative", lambda: torch.bincount(torch.tensor([0, -1, 2])))
attempt("bincount weights mismatch", lambda: torch.bincount(torch.tensor([0, 1]),
                                                              weights=torch.ones(3)))
attempt("scatter_reduce bad reduce", lambda: torch.zeros(3).scatter_reduce(
    0, torch.tensor([0, 1]), torch.ones(2), reduce="median"))
attempt("solve_triangular no upper", lambda: torch.linalg.solve_triangular(
    torch.eye(2), torch.ones(2, 1)))
