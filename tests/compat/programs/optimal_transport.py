"""Optimal transport and distribution distances as practitioners write them in plain torch
(POT / geomloss style): cdist cost matrices (p = 1, 2, inf, 0.5, compute modes, gradients
at coincident points), Sinkhorn in the plain and log domains, batched Sinkhorn with bmm and
einsum, transport-plan marginals, Sinkhorn divergence, exact 1-D Wasserstein by sort /
searchsorted / cumsum, sliced Wasserstein with seeded random projections, MMD with Gaussian
and inverse-multiquadric kernels, energy distance, a gradient flow by Adam, gradients through
the Sinkhorn loop and by the implicit function theorem, a second-order term by create_graph,
float64 next to float32, and the usual mistakes."""

import itertools
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def fmt(t, n=6):
    return [f"{v:.5g}" for v in t.detach().flatten()[:n].tolist()]


# 1. Cost matrices with cdist -----------------------------------------------------------
x = torch.randn(5, 3, dtype=torch.float64)
y = torch.randn(4, 3, dtype=torch.float64)
for p in [1.0, 2.0, float("inf"), 0.5]:
    C = torch.cdist(x, y, p=p)
    ref = (x[:, None, :] - y[None, :, :]).abs()
    if p == float("inf"):
        ref = ref.amax(-1)
    else:
        ref = ref.pow(p).sum(-1).pow(1 / p)
    print(f"cdist p={p}", tuple(C.shape), C.dtype, fmt(C, 4), torch.allclose(C, ref))

xf, yf = x.float(), y.float()
for mode in [
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
]:
    C = torch.cdist(xf, yf, compute_mode=mode)
    print(f"mode {mode[:20]}", C.dtype, fmt(C, 3), f"{C.sum().item():.4f}")

# batched cdist with broadcasting batch dims
xb = torch.randn(2, 1, 6, 3)
yb = torch.randn(1, 3, 5, 3)
Cb = torch.cdist(xb, yb)
print("batched cdist", tuple(Cb.shape), f"{Cb.mean().item():.5f}")

# gradients through cdist, including coincident points
a = torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0]], dtype=torch.float64, requires_grad=True)
b = torch.tensor([[0.0, 0.0], [2.0, 2.0]], dtype=torch.float64)
for p in [1.0, 2.0, float("inf"), 0.5, 3.0]:
    a.grad = None
    D = torch.cdist(a, b, p=p)
    D.sum().backward()
    print(f"cdist grad p={p}", type(D.grad_fn).__name__, fmt(a.grad))
a.grad = None
D = torch.cdist(a, a)
D.pow(2).sum().backward()
print("self-distance grad", fmt(D.diagonal()), fmt(a.grad))


# squared Euclidean cost written by hand, the way many OT codes do
def sq_cost(u, v):
    return (u * u).sum(-1)[:, None] + (v * v).sum(-1)[None, :] - 2 * u @ v.T


print("sq cost vs cdist^2", torch.allclose(sq_cost(x, y), torch.cdist(x, y) ** 2))


# 2. Sinkhorn, plain domain -------------------------------------------------------------
def sinkhorn(a, b, C, eps, iters=200, tol=1e-9):
    K = torch.exp(-C / eps)
    u = torch.ones_like(a)
    v = torch.ones_like(b)
    for it in range(iters):
        u = a / (K @ v)
        v = b / (K.T @ u)
        # POT-style stopping rule: the row marginal's error, checked every 10 iterations
        if it % 10 == 9 and torch.linalg.norm(u * (K @ v) - a, ord=1) < tol:
            break
    P = u[:, None] * K * v[None, :]
    return P, it + 1


n, m = 6, 7
X = torch.randn(n, 2, dtype=torch.float64)
Y = torch.randn(m, 2, dtype=torch.float64) + torch.tensor([1.0, 0.5], dtype=torch.float64)
a_w = torch.full((n,), 1.0 / n, dtype=torch.float64)
b_w = torch.softmax(torch.randn(m, dtype=torch.float64), 0)
C = torch.cdist(X, Y) ** 2
for eps in [1.0, 0.3, 0.1]:
    P, its = sinkhorn(a_w, b_w, C, eps)
    err_a = torch.linalg.norm(P.sum(1) - a_w).item()
    err_b = torch.linalg.norm(P.sum(0) - b_w, ord=1).item()
    cost = (P * C).sum().item()
    print(
        f"sinkhorn eps={eps}: iters={its} cost={cost:.5f} marginals ok="
        f"{err_a < 1e-8 and err_b < 1e-8} max P={P.max().item():.5f}",
        torch.allclose(P.sum(0), b_w),
        torch.allclose(P.sum(1), a_w, atol=1e-6),
    )


# 3. Sinkhorn, log domain ---------------------------------------------------------------
def sinkhorn_log(a, b, C, eps, iters=500, tol=1e-10):
    log_a, log_b = a.log(), b.log()
    f = torch.zeros_like(a)
    g = torch.zeros_like(b)
    it = 0
    while it < iters:
        it += 1
        f = eps * log_a - eps * torch.logsumexp((g[None, :] - C) / eps, dim=1)
        g = eps * log_b - eps * torch.logsumexp((f[:, None] - C) / eps, dim=0)
        logP = (f[:, None] + g[None, :] - C) / eps
        err = (logP.exp().sum(1) - a).abs().sum()
        if err < tol:
            break
    return f, g, logP, it


for eps in [0.1, 0.01]:
    f, g, logP, its = sinkhorn_log(a_w, b_w, C, eps)
    P = logP.exp()
    print(
        f"log sinkhorn eps={eps}: iters={its} cost={(P * C).sum().item():.5f} "
        f"dual={(f @ a_w + g @ b_w).item():.5f} argmax={P.argmax(1).tolist()}"
    )
    rows = torch.softmax((g[None, :] - C) / eps, dim=1)  # conditional plan P(j | i)
    print(
        "  row-softmax sums",
        fmt(rows.sum(1), 3),
        "matches",
        torch.allclose(rows * a_w[:, None], P, atol=1e-8),
    )
    lsm = torch.log_softmax((f[:, None] - C) / eps, dim=0)
    print("  log_softmax col", fmt(lsm[:, 0], 3))

# float32 next to float64: the log domain survives a small eps, the plain domain does not
for dt in [torch.float32, torch.float64]:
    Cd, ad, bd = C.to(dt), a_w.to(dt), b_w.to(dt)
    f, g, logP, its = sinkhorn_log(ad, bd, Cd, 0.05, iters=300, tol=1e-5)
    K = torch.exp(-Cd / 0.005)
    print(
        f"{dt}: log-domain cost {(logP.exp() * Cd).sum().item():.4f} iters={its}; "
        f"plain kernel zeros={int((K == 0).sum())} min={K.min().item():.3g}"
    )


# 4. Batched Sinkhorn with bmm / einsum ---------------------------------------------------
B = 3
Xs = torch.randn(B, 5, 2)
Ys = torch.randn(B, 4, 2) * 1.5
ab = torch.full((B, 5), 0.2)
bb = torch.full((B, 4), 0.25)
Cs = torch.cdist(Xs, Ys).pow(2)
Ks = torch.exp(-Cs / 0.5)
u = torch.ones_like(ab)
v = torch.ones_like(bb)
for _ in range(100):
    u = ab / torch.bmm(Ks, v.unsqueeze(-1)).squeeze(-1)
    v = bb / torch.einsum("bij,bi->bj", Ks, u)
Ps = u.unsqueeze(-1) * Ks * v.unsqueeze(-2)
marg = torch.stack([(Ps.sum(-1) - ab).norm(dim=-1), (Ps.sum(-2) - bb).norm(dim=-1)], -1)
print("batched plan", tuple(Ps.shape), Ps.dtype, "costs", fmt(torch.einsum("bij,bij->b", Ps, Cs)))
print("batched marginal errors < 1e-3:", bool((marg < 1e-3).all()), "mass", fmt(Ps.sum((1, 2)), 3))
print(
    "bmm vs einsum",
    torch.allclose(torch.bmm(Ks, v.unsqueeze(-1)).squeeze(-1), torch.einsum("bij,bj->bi", Ks, v)),
)


# 5. Sinkhorn divergence (debiased) -----------------------------------------------------
def ot_eps(x, y, a, b, eps, iters=300):
    Cxy = torch.cdist(x, y) ** 2 / 2
    f, g, logP, _ = sinkhorn_log(a, b, Cxy, eps, iters=iters, tol=1e-12)
    return (f * a).sum() + (g * b).sum()


def sinkhorn_divergence(x, y, a, b, eps):
    return ot_eps(x, y, a, b, eps) - 0.5 * ot_eps(x, x, a, a, eps) - 0.5 * ot_eps(y, y, b, b, eps)


for eps in [1.0, 0.1]:
    S_xy = sinkhorn_divergence(X, Y, a_w, b_w, eps)
    S_xx = sinkhorn_divergence(X, X, a_w, a_w, eps)
    print(f"S_eps={eps}: S(x,y)={S_xy.item():.5f} |S(x,x)|<1e-10: {abs(S_xx.item()) < 1e-10}")


# 6. Exact 1-D Wasserstein ----------------------------------------------------------------
u1 = torch.randn(200, dtype=torch.float64)
v1 = torch.randn(300, dtype=torch.float64) * 0.5 + 1.0


def wasserstein_1d(u, v, p=1):
    us, _ = torch.sort(u)
    vs, _ = torch.sort(v)
    allv = torch.cat([us, vs]).sort().values
    deltas = allv[1:] - allv[:-1]
    cu = torch.searchsorted(us, allv[:-1], right=True).to(u.dtype) / len(u)
    cv = torch.searchsorted(vs, allv[:-1], right=True).to(v.dtype) / len(v)
    return ((cu - cv).abs().pow(p) * deltas).sum().pow(1 / p)


def wasserstein_quantile(u, v, p=2, q=1000):
    qs = (torch.arange(q, dtype=u.dtype) + 0.5) / q
    return (torch.quantile(u, qs) - torch.quantile(v, qs)).abs().pow(p).mean().pow(1 / p)


print(
    f"W1 cdf={wasserstein_1d(u1, v1).item():.5f} W2 cdf={wasserstein_1d(u1, v1, 2).item():.5f}"
    f" W2 quantile={wasserstein_quantile(u1, v1).item():.5f}"
)
# equal sizes: W_p is the distance between sorted samples
w = torch.randn(200, dtype=torch.float64) + 0.3
w1_sorted = (u1.sort()[0] - w.sort()[0]).abs().mean()
print(f"W1 sorted={w1_sorted.item():.5f} cdf={wasserstein_1d(u1, w).item():.5f}")

# histograms on a common grid: W1 = L1 distance of the CDFs times the bin width
edges = torch.linspace(-4, 4, 41, dtype=torch.float64)
hu = torch.histc(u1, bins=40, min=-4, max=4)
hv = torch.histc(v1, bins=40, min=-4, max=4)
hu, hv = hu / hu.sum(), hv / hv.sum()
w1_hist = (torch.cumsum(hu, 0) - torch.cumsum(hv, 0)).abs().sum() * (edges[1] - edges[0])
print(
    f"W1 histogram={w1_hist.item():.5f}", "nonzero bins", int((hu > 0).sum()), int((hv > 0).sum())
)
idx = torch.bucketize(torch.tensor([-5.0, -0.1, 0.0, 0.05, 3.99, 4.0], dtype=torch.float64), edges)
print("bucketize", idx.tolist(), idx.dtype)
ss = torch.searchsorted(
    edges, torch.tensor([[-0.1, 0.0], [2.5, 9.0]], dtype=torch.float64), out_int32=True
)
print("searchsorted 2-D values", ss.tolist(), ss.dtype)
perm = torch.randperm(41)
shuffled = edges[perm]
ss = torch.searchsorted(
    shuffled, torch.tensor([0.0, 1.1], dtype=torch.float64), sorter=perm.argsort()
)
print("searchsorted sorter", ss.tolist(), shuffled[perm.argsort()][ss].tolist())
print(
    "searchsorted side=right",
    torch.searchsorted(edges, torch.tensor([0.0, 0.2], dtype=torch.float64), side="right").tolist(),
)


# 7. Sliced Wasserstein with seeded projections -------------------------------------------
def sliced_wasserstein(x, y, n_proj=50, p=2, generator=None):
    d = x.shape[1]
    theta = torch.randn(d, n_proj, generator=generator, dtype=x.dtype)
    theta = theta / theta.norm(dim=0, keepdim=True)
    px, py = (x @ theta).sort(0).values, (y @ theta).sort(0).values
    return (px - py).abs().pow(p).mean().pow(1 / p)


gen = torch.Generator().manual_seed(42)
Xs2 = torch.randn(128, 4)
Ys2 = torch.randn(128, 4) + torch.tensor([1.0, 0.0, -1.0, 0.5])
sw = [sliced_wasserstein(Xs2, Ys2, generator=gen).item() for _ in range(3)]
gen.manual_seed(42)
sw_again = sliced_wasserstein(Xs2, Ys2, generator=gen).item()
print("sliced W2", [f"{s:.5f}" for s in sw], "reseeded equal:", sw_again == sw[0])
print("sliced W2 self", f"{sliced_wasserstein(Xs2, Xs2, generator=gen).item():.3g}")


# 8. MMD with Gaussian and inverse-multiquadric kernels ------------------------------------
def gaussian_kernel(d2, sigma):
    return torch.exp(-d2 / (2 * sigma**2))


def imq_kernel(d2, c):
    return c / (c + d2)


def mmd2_unbiased(x, y, kernel, *args):
    nx, ny = len(x), len(y)
    Kxx = kernel(torch.cdist(x, x) ** 2, *args)
    Kyy = kernel(torch.cdist(y, y) ** 2, *args)
    Kxy = kernel(torch.cdist(x, y) ** 2, *args)
    sxx = (Kxx.sum() - Kxx.diagonal().sum()) / (nx * (nx - 1))
    syy = (Kyy.sum() - Kyy.diagonal().sum()) / (ny * (ny - 1))
    return sxx + syy - 2 * Kxy.mean()


def mmd2_pdist(x, y, sigma):
    # upper-triangle distances from pdist, the same pairs by tril_indices
    n = len(x)
    kxx = gaussian_kernel(F.pdist(x) ** 2, sigma).sum() * 2 / (n * (n - 1))
    ii, jj = torch.tril_indices(len(y), len(y), offset=-1)
    dyy = (y[ii] - y[jj]).pow(2).sum(-1)
    kyy = gaussian_kernel(dyy, sigma).sum() * 2 / (len(y) * (len(y) - 1))
    kxy = gaussian_kernel(torch.cdist(x, y) ** 2, sigma).mean()
    return kxx + kyy - 2 * kxy


P1 = torch.randn(60, 3)
Q1 = torch.randn(50, 3) * 1.2 + 0.3
Q0 = torch.randn(50, 3)
for sigma in [0.5, 1.0, 2.0]:
    m1 = mmd2_unbiased(P1, Q1, gaussian_kernel, sigma).item()
    m0 = mmd2_unbiased(P1, Q0, gaussian_kernel, sigma).item()
    mp = mmd2_pdist(P1, Q1, sigma).item()
    print(f"MMD^2 gauss sigma={sigma}: shifted={m1:.5f} same={m0:.5f} pdist={mp:.5f}")
print(
    f"MMD^2 imq c=1: shifted={mmd2_unbiased(P1, Q1, imq_kernel, 1.0).item():.5f}"
    f" same={mmd2_unbiased(P1, Q0, imq_kernel, 1.0).item():.5f}"
)
print(
    "pdist",
    tuple(F.pdist(P1).shape),
    "tril_indices",
    tuple(torch.tril_indices(50, 50, -1).shape),
    "triu_indices",
    torch.triu_indices(3, 4, 1).tolist(),
)
# median heuristic for the bandwidth
med = torch.median(F.pdist(torch.cat([P1, Q1])))
print(f"median heuristic {med.item():.5f}")


# 9. Energy distance ---------------------------------------------------------------------
def energy_distance(x, y):
    return 2 * torch.cdist(x, y).mean() - torch.cdist(x, x).mean() - torch.cdist(y, y).mean()


print(
    f"energy shifted={energy_distance(P1, Q1).item():.5f} same={energy_distance(P1, Q0).item():.5f}"
    f" 1-D={energy_distance(u1[:, None], v1[:, None]).item():.5f}"
)


# 10. Gradient flow: move a point cloud by Adam to match a target ---------------------------
torch.manual_seed(1)
target = torch.cat(
    [
        torch.randn(40, 2) * 0.3 + torch.tensor([2.0, 0.0]),
        torch.randn(40, 2) * 0.3 + torch.tensor([-2.0, 0.0]),
    ]
)
cloud = (torch.randn(80, 2) * 0.5).requires_grad_()
opt = torch.optim.Adam([cloud], lr=0.05)
wx = torch.full((80,), 1 / 80)


def sinkhorn_loss(x, y, eps=0.1, iters=30):
    Cxy = torch.cdist(x, y) ** 2 / 2
    f = torch.zeros(len(x))
    g = torch.zeros(len(y))
    la = math.log(1 / len(x))
    for _ in range(iters):
        f = -eps * torch.logsumexp((g[None, :] - Cxy) / eps + la, dim=1)
        g = -eps * torch.logsumexp((f[:, None] - Cxy) / eps + la, dim=0)
    return f.mean() + g.mean()


for step in range(41):
    opt.zero_grad()
    loss = sinkhorn_loss(cloud, target) + 0.5 * mmd2_unbiased(cloud, target, gaussian_kernel, 0.5)
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(
            f"flow step {step:2d} loss {loss.item():.4f} grad norm {cloud.grad.norm().item():.4f}"
        )
print(
    "cloud mean |x|",
    f"{cloud.detach()[:, 0].abs().mean().item():.4f}",
    "left/right",
    int((cloud[:, 0] < 0).sum()),
    int((cloud[:, 0] > 0).sum()),
)


# 11. Differentiating through Sinkhorn -----------------------------------------------------
Xg = X.clone().requires_grad_()
eps = 0.5
Cg = torch.cdist(Xg, Y) ** 2
f, g, logP, _ = sinkhorn_log(a_w, b_w, Cg, eps, iters=100, tol=0.0)
loss = (logP.exp() * Cg).sum()
(gx_unroll,) = torch.autograd.grad(loss, Xg)
print("unrolled grad", fmt(gx_unroll), type(loss.grad_fn).__name__)

# envelope theorem: gradient of the dual objective = P-weighted cost gradient
with torch.no_grad():
    f, g, logP, _ = sinkhorn_log(a_w, b_w, torch.cdist(X, Y) ** 2, eps, iters=500, tol=1e-13)
    P_star = logP.exp()
Xe = X.clone().requires_grad_()
(P_star * torch.cdist(Xe, Y) ** 2).sum().backward()
print("envelope grad", fmt(Xe.grad))


# implicit-function gradient of the dual potentials with respect to the cost,
# solving the linearised optimality conditions with torch.linalg.solve
def dual_residual(f, g, Cm):
    logP = (f[:, None] + g[None, :] - Cm) / eps
    Pm = logP.exp()
    return torch.cat([Pm.sum(1) - a_w, Pm.sum(0)[:-1] - b_w[:-1]])


Cm = torch.cdist(X, Y) ** 2
f_s, g_s = f.detach(), g.detach()
z = torch.cat([f_s, g_s[:-1]])


def res_z(zz):
    return dual_residual(zz[:n], torch.cat([zz[n:], g_s[-1:]]), Cm)


J = torch.autograd.functional.jacobian(res_z, z)
print(
    "jacobian",
    tuple(J.shape),
    f"cond={torch.linalg.cond(J).item():.4g}",
    f"resid={res_z(z).norm().item():.1e}",
)
# d(w . f)/dC by implicit differentiation: lambda solves J^T lambda = d(w . f)/dz
wts = torch.arange(1.0, n + 1, dtype=torch.float64)
rhs = torch.cat([wts, torch.zeros(m - 1, dtype=torch.float64)])
lam = torch.linalg.solve(J.T, rhs)
Cv = Cm.clone().requires_grad_()
r = dual_residual(f_s, g_s, Cv)
(dC,) = torch.autograd.grad(r, Cv, grad_outputs=-lam)
# compare with finite differences of the converged solve
h = 1e-6
Cp = Cm.clone()
i0, j0 = divmod(int(P_star.argmax()), m)
Cp[i0, j0] += h
fp, gp, _, _ = sinkhorn_log(a_w, b_w, Cp, eps, iters=2000, tol=1e-14)
Cp[i0, j0] -= 2 * h
fm, gm, _, _ = sinkhorn_log(a_w, b_w, Cp, eps, iters=2000, tol=1e-14)
# fix the gauge (g[-1] constant) before differencing
fd = (wts @ (fp + gp[-1]) - wts @ (fm + gm[-1])) / (2 * h)
print(
    f"implicit d(w.f)/dC[{i0},{j0}]={dC[i0, j0].item():.5f} finite-diff={fd.item():.5f}",
    f"max |dC|={dC.abs().max().item():.5f}",
)


# 12. Second-order term with create_graph -------------------------------------------------
# cdist's backward is not itself differentiable, so smooth distances are written by hand
def smooth_dist(u, v, delta=1e-9):
    return ((u[:, None, :] - v[None, :, :]).pow(2).sum(-1) + delta).sqrt()


def energy_smooth(u, v):
    return 2 * smooth_dist(u, v).mean() - smooth_dist(u, u).mean() - smooth_dist(v, v).mean()


def imq_mmd_smooth(u, v, c=1.0):
    kxx = imq_kernel(smooth_dist(u, u) ** 2, c)
    kyy = imq_kernel(smooth_dist(v, v) ** 2, c)
    return kxx.mean() + kyy.mean() - 2 * imq_kernel(smooth_dist(u, v) ** 2, c).mean()


def objective(u, v):
    return energy_smooth(u, v) + imq_mmd_smooth(u, v)


xq = torch.randn(8, 2, dtype=torch.float64, requires_grad=True)
yq = torch.randn(9, 2, dtype=torch.float64)
E = objective(xq, yq)
(gq,) = torch.autograd.grad(E, xq, create_graph=True)
pen = gq.pow(2).sum()
(gq2,) = torch.autograd.grad(pen, xq, retain_graph=True)
print(
    f"E={E.item():.5f} |grad|^2={pen.item():.5f}",
    "grad of penalty",
    fmt(gq2, 4),
    type(gq.grad_fn).__name__,
)
v_dir = torch.randn_like(xq)
(hv,) = torch.autograd.grad(gq, xq, grad_outputs=v_dir, retain_graph=True)
hv_fd = (
    torch.autograd.grad(objective(xq + 1e-6 * v_dir, yq), xq)[0]
    - torch.autograd.grad(objective(xq - 1e-6 * v_dir, yq), xq)[0]
) / 2e-6
print("HVP", fmt(hv, 4), "vs finite diff", torch.allclose(hv, hv_fd, atol=1e-5))


# 13. float64 vs float32 side by side ---------------------------------------------------------
for dt in [torch.float64, torch.float32]:
    Xd, Yd = X.to(dt), Y.to(dt)
    Cd = torch.cdist(Xd, Yd) ** 2
    P, its = sinkhorn(a_w.to(dt), b_w.to(dt), Cd, 0.3, tol=1e-6)
    sd = sinkhorn_divergence(Xd, Yd, a_w.to(dt), b_w.to(dt), 0.3)
    print(
        f"{str(dt):14s} cost={(P * Cd).sum().item():.5f} S={sd.item():.4f} "
        f"W1={wasserstein_1d(u1.to(dt), v1.to(dt)).item():.5f} "
        f"energy={energy_distance(Xd, Yd).item():.5f}"
    )


# 14. More of the toolbox: plan entropy, sampling a coupling, unbalanced OT, barycenters,
# the Gaussian closed form, histograms, and brute-force exact OT --------------------------
P, _ = sinkhorn(a_w, b_w, C, 0.3)
H = -torch.xlogy(P, P).sum()
kl = F.kl_div((a_w[:, None] * b_w[None, :]).log(), P, reduction="sum")
print(
    f"plan entropy={H.item():.5f} KL(P|ab)={kl.item():.5f} mutual info check="
    f"{torch.isclose(kl, -H - torch.xlogy(a_w, a_w).sum() - torch.xlogy(b_w, b_w).sum()).item()}"
)
gen = torch.Generator().manual_seed(7)
pairs = torch.multinomial(P.flatten().float(), 12, replacement=True, generator=gen)
print("sampled pairs", torch.stack([pairs // m, pairs % m]).tolist())
counts = torch.bincount(pairs, minlength=n * m).view(n, m)
print("pair counts row sums", counts.sum(1).tolist(), "col argmax", counts.argmax(0).tolist())
print(
    "softmin row",
    fmt(F.softmin(C[0], dim=0), 4),
    "logaddexp",
    fmt(torch.logaddexp(f[:3], g[:3]), 3),
)


def sinkhorn_unbalanced(a, b, C, eps, tau, iters=300):
    K = torch.exp(-C / eps)
    u, v = torch.ones_like(a), torch.ones_like(b)
    power = tau / (tau + eps)
    for _ in range(iters):
        u = (a / (K @ v)) ** power
        v = (b / (K.T @ u)) ** power
    return u[:, None] * K * v[None, :]


for tau in [0.1, 1.0, 100.0]:
    Pu = sinkhorn_unbalanced(a_w, 2 * b_w, C, 0.3, tau)
    print(f"unbalanced tau={tau}: mass={Pu.sum().item():.5f} rows={fmt(Pu.sum(1), 3)}")

# 1-D barycenter: average the quantile functions, evaluated by searchsorted interpolation
grid = torch.linspace(0.0, 1.0, 11, dtype=torch.float64)


def quantile_fn(samples, qs):
    s, _ = samples.sort()
    cdf = (torch.arange(1, len(s) + 1, dtype=s.dtype) - 0.5) / len(s)
    idx = torch.searchsorted(cdf, qs).clamp(1, len(s) - 1)
    lo, hi = cdf[idx - 1], cdf[idx]
    w = ((qs - lo) / (hi - lo)).clamp(0, 1)
    return torch.lerp(s[idx - 1], s[idx], w)


bary = 0.5 * quantile_fn(u1, grid) + 0.5 * quantile_fn(v1, grid)
print("barycenter quantiles", fmt(bary, 6), "monotone", bool((bary.diff() >= 0).all()))


# Gaussian W2 in closed form, via symmetric matrix square roots from eigh
def sqrtm_psd(S):
    evals, evecs = torch.linalg.eigh(S)
    return evecs @ torch.diag_embed(evals.clamp_min(0).sqrt()) @ evecs.mT


def gaussian_w2(m1, S1, m2, S2):
    r2 = sqrtm_psd(S2)
    cross = sqrtm_psd(r2 @ S1 @ r2)
    return ((m1 - m2).pow(2).sum() + torch.trace(S1 + S2 - 2 * cross)).clamp_min(0).sqrt()


m1, m2 = X.mean(0), Y.mean(0)
S1, S2 = torch.cov(X.T), torch.cov(Y.T, correction=0)
print(
    f"Gaussian W2={gaussian_w2(m1, S1, m2, S2).item():.5f} "
    f"self<1e-6: {gaussian_w2(m1, S1, m1, S1).item() < 1e-6}"
    f" 1-D check={gaussian_w2(m1[:1], S1[:1, :1], m2[:1], S2[:1, :1]).item():.5f}"
    f" vs {((m1[0] - m2[0]) ** 2 + (S1[0, 0].sqrt() - S2[0, 0].sqrt()) ** 2).sqrt().item():.5f}"
)

# histograms with torch.histogram: explicit edges, density, weights
hist = torch.histogram(u1, bins=edges, density=True)
print(
    "histogram",
    tuple(hist.hist.shape),
    f"integral={(hist.hist * edges.diff()).sum().item():.5f}",
    fmt(hist.hist[18:22], 4),
)
hw = torch.histogram(
    u1, bins=5, range=(-2.0, 2.0), weight=torch.rand(200, dtype=torch.float64, generator=gen)
)
print("weighted histogram", fmt(hw.hist, 5), fmt(hw.bin_edges, 6))
scatter_hist = torch.zeros(40, dtype=torch.float64).scatter_add_(
    0, torch.bucketize(u1, edges[1:-1]), torch.ones_like(u1)
)
print(
    "scatter_add histogram == histc",
    torch.equal(scatter_hist, torch.histc(u1, 40, -4, 4)),
    int(scatter_hist.sum()),
)

# exact OT between 5 and 5 uniform points: the best permutation, by brute force
Xe5, Ye5 = torch.randn(5, 2, generator=gen), torch.randn(5, 2, generator=gen)
C5 = torch.cdist(Xe5, Ye5) ** 2
perms = torch.tensor(list(itertools.permutations(range(5))))
costs = C5[torch.arange(5), perms].sum(1)
best = costs.argmin()
uniform5 = torch.full((5,), 0.2)
logP5 = sinkhorn_log(uniform5, uniform5, C5, 0.01, iters=2000, tol=1e-6)[2]
print(
    "exact OT perm",
    perms[best].tolist(),
    f"cost={costs[best].item() / 5:.5f}",
    f"sinkhorn eps=0.01 cost={(logP5.exp() * C5).sum().item():.4f}",
)
# gradient through sort (W1 of equal-size samples) and through quantile
us = u1[:50].clone().requires_grad_()
(us.sort().values - v1[:50].sort().values).abs().mean().backward()
print("grad through sort", fmt(us.grad, 4), int((us.grad != 0).sum()))
uq = u1[:20].clone().requires_grad_()
torch.quantile(
    uq, torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64), interpolation="linear"
).sum().backward()
print("grad through quantile nonzero", int((uq.grad != 0).sum()), f"sum={uq.grad.sum().item():.4f}")
for how in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(
        f"quantile {how}",
        fmt(
            torch.quantile(
                u1[:20], torch.tensor([0.25, 0.7], dtype=torch.float64), interpolation=how
            )
        ),
    )


# 15. Typical mistakes ----------------------------------------------------------------------
def attempt(label, fn):
    try:
        out = fn()
        print(label, "->", out if not torch.is_tensor(out) else (tuple(out.shape), out.dtype))
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", str(e).split("\n")[0])


attempt("cdist last dims", lambda: torch.cdist(torch.randn(3, 2), torch.randn(4, 3)))
attempt("cdist p<0", lambda: torch.cdist(torch.randn(3, 2), torch.randn(4, 2), p=-1))
attempt("cdist 1-D", lambda: torch.cdist(torch.randn(3), torch.randn(4)))
attempt(
    "cdist int",
    lambda: torch.cdist(torch.ones(3, 2, dtype=torch.long), torch.ones(4, 2, dtype=torch.long)),
)
attempt(
    "cdist bad mode", lambda: torch.cdist(torch.randn(3, 2), torch.randn(4, 2), compute_mode="fast")
)
attempt("cdist batch mismatch", lambda: torch.cdist(torch.randn(2, 3, 2), torch.randn(3, 4, 2)))
attempt("pdist 3-D", lambda: F.pdist(torch.randn(2, 3, 2)))
attempt("pdist p<0", lambda: F.pdist(torch.randn(3, 2), p=-1))
attempt("logsumexp dim 2", lambda: torch.logsumexp(torch.randn(3, 4), dim=2))
attempt("logsumexp no dim", lambda: torch.logsumexp(torch.randn(3, 4)))
attempt("logsumexp float dim", lambda: torch.logsumexp(torch.randn(3, 4), 1.0))
attempt("logsumexp dims with float", lambda: torch.randn(3, 4).logsumexp(dim=(0, 1.0)))
attempt("softmax dim tuple", lambda: torch.softmax(torch.randn(3, 4), (0, 1)))
attempt("F.log_softmax float dim", lambda: F.log_softmax(torch.randn(3, 4), dim=1.0))
attempt("logsumexp int", lambda: torch.logsumexp(torch.arange(4), 0))
attempt("softmax dim -3", lambda: torch.softmax(torch.randn(3, 4), dim=-3))
attempt(
    "searchsorted unsorted",
    lambda: torch.searchsorted(torch.tensor([3.0, 1.0, 2.0]), torch.tensor([2.0])).tolist(),
)
attempt(
    "searchsorted dtype", lambda: torch.searchsorted(torch.tensor([1.0, 2.0]), torch.tensor([1, 2]))
)
attempt(
    "searchsorted int/float",
    lambda: torch.searchsorted(torch.tensor([1, 2, 3]), torch.tensor([1.5])),
)
attempt(
    "searchsorted dims",
    lambda: torch.searchsorted(torch.rand(2, 3).sort().values, torch.rand(3, 1)),
)
attempt(
    "searchsorted sorter dtype",
    lambda: torch.searchsorted(
        torch.tensor([3.0, 1.0]), torch.tensor([2.0]), sorter=torch.tensor([1.0, 0.0])
    ),
)
attempt(
    "searchsorted sorter shape",
    lambda: torch.searchsorted(
        torch.tensor([3.0, 1.0]), torch.tensor([2.0]), sorter=torch.tensor([1, 0, 2])
    ),
)
attempt(
    "searchsorted sorter range",
    lambda: torch.searchsorted(
        torch.tensor([3.0, 1.0]), torch.tensor([2.0]), sorter=torch.tensor([1, 5])
    ),
)
attempt(
    "searchsorted side+right",
    lambda: torch.searchsorted(
        torch.tensor([1.0, 2.0]), torch.tensor([1.0]), side="left", right=True
    ),
)
attempt(
    "searchsorted side bad",
    lambda: torch.searchsorted(torch.tensor([1.0, 2.0]), torch.tensor([1.0]), side="middle"),
)
attempt("bucketize 2-D boundaries", lambda: torch.bucketize(torch.tensor([1.0]), torch.rand(2, 2)))
attempt("tril_indices neg", lambda: torch.tril_indices(-1, 3))
attempt(
    "sinkhorn shape mismatch", lambda: a_w / (torch.exp(-C) @ torch.ones(n, dtype=torch.float64))
)
attempt("bmm batch mismatch", lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(3, 4, 1)))
attempt(
    "einsum operand dims",
    lambda: torch.einsum("bij,bj->bi", torch.randn(2, 3, 4), torch.randn(2, 5)),
)
attempt(
    "solve singular",
    lambda: torch.linalg.solve(
        torch.ones(3, 3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ),
)
attempt("grad of non-scalar", lambda: torch.autograd.grad(torch.cdist(Xg, Y), Xg))
attempt("quantile big", lambda: torch.quantile(torch.randn(10), 1.5))
attempt("histc int", lambda: torch.histc(torch.arange(5), bins=3))
