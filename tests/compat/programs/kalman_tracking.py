"""Tracking and state-space inference as practitioners write it: simulated constant-velocity
and coordinated-turn targets; a batched Kalman filter over many tracks (bmm, solve / inv
gains, Joseph-form updates, cholesky / cholesky_ex / cholesky_solve / solve_triangular);
the RTS smoother; log-likelihoods by logdet, slogdet and MultivariateNormal(scale_tril);
noise parameters learned by gradient descent through the filter (softplus and matrix_exp of
a skew-symmetric generator); an extended Kalman filter with jacrev / jacobian; an unscented
transform; a particle filter (multinomial and systematic resampling, logsumexp, ESS);
Hungarian data association on a cdist cost matrix with chi-square gating; and the usual
linear-algebra mistakes with their exception types and messages."""

import math

import torch
import torch.nn.functional as F
from torch.distributions import Chi2, MultivariateNormal

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def show(name, t, k=6):
    vals = [f"{v:.5g}" for v in t.detach().flatten()[:k].tolist()]
    print(f"{name} {tuple(t.shape)} {t.dtype} [{', '.join(vals)}]")


def sym(P):
    return 0.5 * (P + P.transpose(-1, -2))


# 1. Simulate constant-velocity tracks ------------------------------------------
B, T, dt = 8, 30, 0.5
Fm = torch.tensor([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1.0]])
Hm = torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
q_true, r_true = 0.3, 0.8
G = torch.tensor([[dt**2 / 2, 0], [0, dt**2 / 2], [dt, 0], [0, dt]])
Q_true = q_true**2 * G @ G.T
R_true = r_true**2 * torch.eye(2)

x0 = torch.cat([10 * torch.randn(B, 2), 2 * torch.randn(B, 2)], dim=-1)
states, obs = [], []
x = x0
for _ in range(T):
    x = x @ Fm.T + (q_true * torch.randn(B, 2)) @ G.T
    states.append(x)
    obs.append(x @ Hm.T + r_true * torch.randn(B, 2))
X_true = torch.stack(states, dim=1)  # (B, T, 4)
Z = torch.stack(obs, dim=1)  # (B, T, 2)
show("true states", X_true[0, :2])
show("measurements", Z[0, :3])
print("track shapes", tuple(X_true.shape), tuple(Z.shape), Z.dtype)


# 2. Batched Kalman filter -------------------------------------------------------
def kalman_filter(Z, Fm, Hm, Q, R, x0, P0, gain="solve", joseph=True):
    Bn, Tn, m = Z.shape
    n = Fm.shape[-1]
    Fb = Fm.expand(Bn, n, n)
    Hb = Hm.expand(Bn, m, n)
    x, P = x0.clone(), P0.clone()
    I = torch.eye(n).expand(Bn, n, n)
    xs_f, Ps_f, xs_p, Ps_p = [], [], [], []
    loglik = torch.zeros(Bn)
    for t in range(Tn):
        x = torch.bmm(Fb, x.unsqueeze(-1)).squeeze(-1)
        P = torch.bmm(torch.bmm(Fb, P), Fb.transpose(-1, -2)) + Q
        xs_p.append(x)
        Ps_p.append(P)
        y = Z[:, t] - (Hb @ x.unsqueeze(-1)).squeeze(-1)
        S = sym(Hb @ P @ Hb.transpose(-1, -2) + R)
        PHt = P @ Hb.transpose(-1, -2)
        if gain == "solve":
            K = torch.linalg.solve(S, PHt.transpose(-1, -2)).transpose(-1, -2)
        elif gain == "inv":
            K = PHt @ torch.linalg.inv(S)
        else:
            L = torch.linalg.cholesky(S)
            K = torch.cholesky_solve(PHt.transpose(-1, -2), L).transpose(-1, -2)
        x = x + (K @ y.unsqueeze(-1)).squeeze(-1)
        if joseph:
            IKH = I - K @ Hb
            P = IKH @ P @ IKH.transpose(-1, -2) + K @ R @ K.transpose(-1, -2)
        else:
            P = (I - K @ Hb) @ P
        P = sym(P)
        L = torch.linalg.cholesky(S)
        w = torch.linalg.solve_triangular(L, y.unsqueeze(-1), upper=False).squeeze(-1)
        loglik = (
            loglik
            - 0.5 * (w * w).sum(-1)
            - torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
            - 0.5 * m * math.log(2 * math.pi)
        )
        xs_f.append(x)
        Ps_f.append(P)
    return (
        torch.stack(xs_f, 1),
        torch.stack(Ps_f, 1),
        torch.stack(xs_p, 1),
        torch.stack(Ps_p, 1),
        loglik,
    )


x0_est = torch.cat([Z[:, 0], torch.zeros(B, 2)], -1)
P0 = torch.diag(torch.tensor([4.0, 4.0, 9.0, 9.0])).expand(B, 4, 4).contiguous()
results = {}
for gain in ["solve", "inv", "cholesky"]:
    xf, Pf, xp, Pp, ll = kalman_filter(Z, Fm, Hm, Q_true, R_true, x0_est, P0, gain=gain)
    results[gain] = (xf, Pf, xp, Pp, ll)
    rmse = (xf[..., :2] - X_true[..., :2]).pow(2).sum(-1).mean().sqrt()
    print(
        f"gain={gain:8s} rmse={rmse.item():.5f} loglik[0]={ll[0].item():.5f} "
        f"sum={ll.sum().item():.5f}"
    )
xf, Pf, xp, Pp, ll = results["solve"]
xf_std, Pf_std, *_ = kalman_filter(Z, Fm, Hm, Q_true, R_true, x0_est, P0, joseph=False)
print("joseph vs standard agree to 1e-10", bool((Pf - Pf_std).abs().max() < 1e-10))
print("raw-measurement rmse", f"{(Z - X_true[..., :2]).pow(2).sum(-1).mean().sqrt().item():.5f}")
show("filtered P[0,-1] diag", torch.diagonal(Pf[0, -1]))
print(
    "P symmetric",
    torch.allclose(Pf, Pf.transpose(-1, -2)),
    "P dtype",
    Pf.dtype,
    "shape",
    tuple(Pf.shape),
)
Lf, info = torch.linalg.cholesky_ex(Pf.reshape(-1, 4, 4))
print("cholesky_ex info", info.shape, int(info.abs().sum()), info.dtype)
eig_min = torch.linalg.eigvalsh(Pf[:, -1]).min(dim=-1).values
show("min eigenvalue of final P per track", eig_min)


# 3. Rauch-Tung-Striebel smoother -------------------------------------------------
def rts_smoother(xf, Pf, xp, Pp, Fm):
    Bn, Tn, n = xf.shape
    xs, Ps = [xf[:, -1]], [Pf[:, -1]]
    for t in range(Tn - 2, -1, -1):
        # C = Pf F^T Pp^{-1}, solved with the transpose trick
        C = torch.linalg.solve(Pp[:, t + 1], (Pf[:, t] @ Fm.T).transpose(-1, -2)).transpose(-1, -2)
        x_s = xf[:, t] + (C @ (xs[0] - xp[:, t + 1]).unsqueeze(-1)).squeeze(-1)
        P_s = Pf[:, t] + C @ (Ps[0] - Pp[:, t + 1]) @ C.transpose(-1, -2)
        xs.insert(0, x_s)
        Ps.insert(0, sym(P_s))
    return torch.stack(xs, 1), torch.stack(Ps, 1)


xs, Ps = rts_smoother(xf, Pf, xp, Pp, Fm)
rmse_f = (xf[..., :2] - X_true[..., :2]).pow(2).sum(-1).mean().sqrt()
rmse_s = (xs[..., :2] - X_true[..., :2]).pow(2).sum(-1).mean().sqrt()
print(f"filter rmse {rmse_f.item():.5f} smoother rmse {rmse_s.item():.5f}")
show("smoothed x[0,0]", xs[0, 0])
tr_f = torch.diagonal(Pf, dim1=-2, dim2=-1).sum(-1).mean()
tr_s = torch.diagonal(Ps, dim1=-2, dim2=-1).sum(-1).mean()
print(f"mean trace filtered {tr_f.item():.5f} smoothed {tr_s.item():.5f}")

# 4. Log-likelihood three ways ---------------------------------------------------
S_all = Hm @ Pp @ Hm.T + R_true  # (B, T, 2, 2)
innov = Z - (xp @ Hm.T)
ld1 = torch.logdet(S_all)
sign, ld2 = torch.linalg.slogdet(S_all)
print("logdet == slogdet", torch.allclose(ld1, ld2), "signs", sign.unique().tolist())
maha = (
    (innov.unsqueeze(-2) @ torch.linalg.solve(S_all, innov.unsqueeze(-1))).squeeze(-1).squeeze(-1)
)
ll_manual = -0.5 * (maha + ld1 + 2 * math.log(2 * math.pi)).sum(-1)
mvn = MultivariateNormal(torch.zeros(2), scale_tril=torch.linalg.cholesky(S_all))
ll_mvn = mvn.log_prob(innov).sum(-1)
print("batch_shape", tuple(mvn.batch_shape), "event_shape", tuple(mvn.event_shape))
show("loglik filter", ll)
show("loglik manual", ll_manual)
show("loglik mvn", ll_mvn)
print("mvn matches filter", bool((ll_mvn - ll).abs().max() < 1e-9))
show("mvn entropy", mvn.entropy()[0, :4])
mvn_cov = MultivariateNormal(torch.zeros(2), covariance_matrix=S_all[0, 5])
print(
    "covariance_matrix path",
    f"{mvn_cov.log_prob(innov[0, 5]).item():.6f}",
    f"{mvn_cov.scale_tril[1, 0].item():.6f}",
    f"{mvn_cov.precision_matrix[0, 1].item():.6f}",
)

# 5. Learn the noise parameters through the filter --------------------------------
raw_q = torch.tensor(0.0, requires_grad=True)
raw_r = torch.tensor([0.0, -0.4], requires_grad=True)
theta = torch.tensor(0.3, requires_grad=True)  # rotation of the measurement-noise axes
opt = torch.optim.Adam([raw_q, raw_r, theta], lr=0.1)


def noise_mats(raw_q, raw_r, theta):
    q = F.softplus(raw_q)
    A = torch.zeros(2, 2)
    A = A + theta * torch.tensor([[0.0, -1.0], [1.0, 0.0]])  # skew-symmetric generator
    Rot = torch.linalg.matrix_exp(A)
    R = Rot @ torch.diag(F.softplus(raw_r) ** 2) @ Rot.T
    return q**2 * G @ G.T, R


for step in range(25):
    opt.zero_grad()
    Q, R = noise_mats(raw_q, raw_r, theta)
    *_, ll_fit = kalman_filter(Z, Fm, Hm, Q, R, x0_est, P0, gain="cholesky")
    loss = -ll_fit.mean()
    loss.backward()
    if step % 6 == 0 or step == 24:
        print(
            f"step {step:2d} nll {loss.item():.5f} q {F.softplus(raw_q).item():.5f} "
            f"r {[round(v, 4) for v in F.softplus(raw_r).tolist()]} "
            f"dtheta {theta.grad.item():.4e}"
        )
    opt.step()
print("loss grad_fn", type(loss.grad_fn).__name__)
Q_fit, R_fit = noise_mats(raw_q, raw_r, theta)
show("fitted R", R_fit.detach())
Rot = torch.linalg.matrix_exp(theta.detach() * torch.tensor([[0.0, -1.0], [1.0, 0.0]]))
th = torch.tensor(0.4, requires_grad=True)
E = torch.linalg.matrix_exp(th * torch.tensor([[0.1, -1.0], [1.0, 0.2]]))
E[0, 1].backward()
print("matrix_exp grad_fn", type(E.grad_fn).__name__, f"d/dtheta {th.grad.item():.6f}")
print(
    "rotation orthogonal",
    torch.allclose(Rot @ Rot.T, torch.eye(2)),
    f"det {torch.linalg.det(Rot).item():.6f}",
)


# 6. Extended Kalman filter on a coordinated-turn target ---------------------------
def ct_step(s, dt=0.5):
    px, py, v, h, w = s.unbind(-1)
    return torch.stack(
        [px + v * torch.cos(h) * dt, py + v * torch.sin(h) * dt, v, h + w * dt, w], -1
    )


def range_bearing(s):
    px, py = s[..., 0], s[..., 1]
    return torch.stack([torch.sqrt(px**2 + py**2), torch.atan2(py, px)], -1)


s = torch.tensor([20.0, 5.0, 3.0, 0.5, 0.12])
truth, meas = [], []
R_rb = torch.diag(torch.tensor([0.5**2, 0.02**2]))
for _ in range(20):
    s = ct_step(s) + torch.tensor([0, 0, 0.05, 0.01, 0.005]) * torch.randn(5)
    truth.append(s)
    meas.append(range_bearing(s) + torch.tensor([0.5, 0.02]) * torch.randn(2))
truth, meas = torch.stack(truth), torch.stack(meas)
show("ct truth[-1]", truth[-1])

Q_ct = torch.diag(torch.tensor([1e-3, 1e-3, 0.05**2, 0.01**2, 0.005**2]))
x_e = torch.tensor([19.0, 6.0, 2.5, 0.4, 0.1])
P_e = torch.diag(torch.tensor([4.0, 4.0, 1.0, 0.1, 0.01]))
for t in range(20):
    Fj = torch.func.jacrev(ct_step)(x_e)
    x_e = ct_step(x_e)
    P_e = Fj @ P_e @ Fj.T + Q_ct
    Hj = torch.autograd.functional.jacobian(range_bearing, x_e)
    innov = meas[t] - range_bearing(x_e)
    innov[1] = torch.remainder(innov[1] + math.pi, 2 * math.pi) - math.pi
    S = Hj @ P_e @ Hj.T + R_rb
    K = torch.linalg.solve(S, Hj @ P_e).T
    x_e = x_e + K @ innov
    P_e = sym((torch.eye(5) - K @ Hj) @ P_e)
    if t in (0, 19):
        show(f"ekf t={t} Fj row0", Fj[0])
        show(f"ekf t={t} Hj row1", Hj[1])
show("ekf final state", x_e)
print(f"ekf position error {(x_e[:2] - truth[-1, :2]).norm().item():.5f}")
J_vmap = torch.func.vmap(torch.func.jacrev(range_bearing))(truth[:3])
print("vmapped jacobians", tuple(J_vmap.shape))
show("vmapped J[2]", J_vmap[2])


# 7. Unscented transform -----------------------------------------------------------
def sigma_points(mu, P, alpha=1e-1, beta=2.0, kappa=0.0):
    n = mu.shape[-1]
    lam = alpha**2 * (n + kappa) - n
    L = torch.linalg.cholesky((n + lam) * P)
    pts = torch.cat([mu.unsqueeze(0), mu + L.T, mu - L.T], 0)
    wm = torch.full((2 * n + 1,), 1 / (2 * (n + lam)))
    wc = wm.clone()
    wm[0] = lam / (n + lam)
    wc[0] = lam / (n + lam) + (1 - alpha**2 + beta)
    return pts, wm, wc


pts, wm, wc = sigma_points(x_e, P_e)
Y = range_bearing(pts)
y_mean = torch.einsum("i,ij->j", wm, Y)
dY = Y - y_mean
y_cov = torch.einsum("i,ij,ik->jk", wc, dY, dY)
cross = torch.einsum("i,ij,ik->jk", wc, pts - x_e, dY)
print("sigma points", tuple(pts.shape), f"weights sum {wm.sum().item():.6f}")
show("ut mean", y_mean)
show("ut cov", y_cov)
show("ut cross cov", cross[:2])
Hj = torch.autograd.functional.jacobian(range_bearing, x_e)
show("linearised cov", Hj @ P_e @ Hj.T)
Ly = torch.linalg.cholesky(y_cov + R_rb)
Ku = torch.linalg.solve_triangular(
    Ly, torch.linalg.solve_triangular(Ly, cross.T, upper=False), upper=False, left=True
)
Ku2 = torch.cholesky_solve(cross.T, Ly).T
print(
    "ukf gain agree",
    torch.allclose(Ku.T, cross @ torch.linalg.inv(y_cov + R_rb)),
    torch.allclose(Ku2, torch.linalg.solve(y_cov + R_rb, cross.T).T),
)
U = torch.linalg.cholesky(y_cov + R_rb, upper=True)
w_up = torch.linalg.solve_triangular(U, torch.ones(2, 1), upper=True)
show("upper solve", w_up)
w_right = torch.linalg.solve_triangular(U, torch.ones(3, 2), upper=True, left=False)
show("right solve", w_right)
Lunit = torch.tensor([[2.0, 0.0], [0.7, 5.0]])
show(
    "unitriangular solve",
    torch.linalg.solve_triangular(Lunit, torch.ones(2, 1), upper=False, unitriangular=True),
)

# 8. Particle filter on a 1-D nonlinear model ---------------------------------------
torch.manual_seed(1)
Np, Tp = 500, 15
x_t = torch.tensor(0.1)
xs_true, ys = [], []
for k in range(1, Tp + 1):
    x_t = (
        0.5 * x_t
        + 25 * x_t / (1 + x_t**2)
        + 8 * math.cos(1.2 * k)
        + math.sqrt(2.0) * torch.randn(())
    )
    xs_true.append(x_t)
    ys.append(x_t**2 / 20 + torch.randn(()))
xs_true, ys = torch.stack(xs_true), torch.stack(ys)


def systematic(weights, n):
    u = (torch.arange(n) + torch.rand(())) / n
    c = torch.cumsum(weights, 0)
    c[-1] = 1.0
    return torch.searchsorted(c, u)


for scheme in ["multinomial", "systematic"]:
    torch.manual_seed(2)
    parts = 2 * torch.randn(Np)
    logw = torch.full((Np,), -math.log(Np))
    ests, ess_log, n_res = [], [], 0
    total_ll = torch.tensor(0.0)
    for k in range(1, Tp + 1):
        parts = (
            0.5 * parts
            + 25 * parts / (1 + parts**2)
            + 8 * math.cos(1.2 * k)
            + math.sqrt(2.0) * torch.randn(Np)
        )
        logw = logw - 0.5 * (ys[k - 1] - parts**2 / 20) ** 2
        lse = torch.logsumexp(logw, 0)
        total_ll = total_ll + lse - 0.5 * math.log(2 * math.pi)
        logw = logw - lse
        w = logw.exp()
        ests.append((w * parts).sum())
        ess = 1.0 / (w**2).sum()
        ess_log.append(ess.item())
        if ess < Np / 2:
            n_res += 1
            if scheme == "multinomial":
                idx = torch.multinomial(w, Np, replacement=True)
            else:
                idx = systematic(w, Np)
            parts = parts[idx]
            logw = torch.full((Np,), -math.log(Np))
    ests = torch.stack(ests)
    print(
        f"{scheme}: resampled {n_res} times, "
        f"rmse {(ests - xs_true).pow(2).mean().sqrt().item():.5f}, "
        f"loglik {total_ll.item():.5f}, min ESS {min(ess_log):.2f}"
    )
    show(f"{scheme} estimates", ests, k=5)
w_small = torch.tensor([0.1, 0.2, 0.3, 0.4])
print(
    "systematic idx",
    systematic(w_small, 8).tolist(),
    "searchsorted right",
    torch.searchsorted(
        torch.cumsum(w_small, 0), torch.tensor([0.1, 0.3, 0.35]), right=True
    ).tolist(),
)
print("multinomial no replacement", torch.multinomial(w_small, 4).tolist())


# 9. Data association: Hungarian method on a cdist cost matrix ------------------
def hungarian(cost):
    n, m = cost.shape  # n <= m
    INF = float("inf")
    u = torch.zeros(n + 1)
    v = torch.zeros(m + 1)
    p = torch.zeros(m + 1, dtype=torch.long)  # p[j]: row matched to column j (1-based)
    way = torch.zeros(m + 1, dtype=torch.long)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = torch.full((m + 1,), INF)
        used = torch.zeros(m + 1, dtype=torch.bool)
        while True:
            used[j0] = True
            i0 = int(p[j0])
            cur = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (cur < minv[1:])
            minv[1:] = torch.where(better, cur, minv[1:])
            way[1:] = torch.where(better, torch.tensor(j0), way[1:])
            cand = torch.where(free, minv[1:], torch.tensor(INF))
            j1 = int(torch.argmin(cand)) + 1
            delta = cand[j1 - 1]
            used_idx = used.nonzero().squeeze(-1)
            u[p[used_idx]] += delta
            v[used_idx] -= delta
            minv[1:] = torch.where(free, minv[1:] - delta, minv[1:])
            j0 = j1
            if int(p[j0]) == 0:
                break
        while True:
            j1 = int(way[j0])
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    assign = torch.full((n,), -1, dtype=torch.long)
    for j in range(1, m + 1):
        if int(p[j]) > 0:
            assign[int(p[j]) - 1] = j - 1
    return assign


pred_pos = xp[:5, 10, :2]  # five predicted tracks
perm = torch.tensor([3, 0, 4, 1, 2])
dets = Z[perm, 10] + 0.1 * torch.randn(5, 2)
cost = torch.cdist(pred_pos, dets)
show("cost row0", cost[0], k=5)
assign = hungarian(cost)
print(
    "hungarian assignment",
    assign.tolist(),
    "total cost",
    f"{cost[torch.arange(5), assign].sum().item():.5f}",
)
print("greedy argmin", cost.argmin(dim=1).tolist(), "argmin dim0", cost.argmin(dim=0).tolist())
cost_rect = torch.cdist(pred_pos[:3], dets)
print("rectangular assignment", hungarian(cost_rect).tolist())

# Mahalanobis gating
S_gate = S_all[:5, 10]
diff = dets.unsqueeze(0) - pred_pos.unsqueeze(1)  # (tracks, dets, 2)
L_gate = torch.linalg.cholesky(S_gate)
sol = torch.linalg.solve_triangular(L_gate.unsqueeze(1), diff.unsqueeze(-1), upper=False)
d2 = sol.squeeze(-1).pow(2).sum(-1)
show("mahalanobis d2 row0", d2[0], k=5)
chi2 = Chi2(torch.tensor(2.0))
try:
    gate = chi2.icdf(torch.tensor(0.99))
    print("chi2 icdf", f"{gate.item():.5f}")
except NotImplementedError as e:
    print("chi2 icdf: NotImplementedError", e)
    gate = torch.tensor(-2 * math.log(1 - 0.99))
try:
    print("chi2 cdf at gate", f"{chi2.cdf(gate).item():.6f}")
except NotImplementedError as e:
    print("chi2 cdf: NotImplementedError", e)
print(
    "chi2 log_prob",
    f"{chi2.log_prob(torch.tensor(3.0)).item():.6f}",
    "mean",
    chi2.mean.item(),
    "df",
    chi2.df.item(),
)
in_gate = d2 < gate
print("gated pairs", int(in_gate.sum()), in_gate.nonzero()[:6].tolist())
gated_cost = torch.where(in_gate, cost, torch.tensor(1e6))
print("gated assignment", hungarian(gated_cost).tolist())

# 10. Typical mistakes ----------------------------------------------------------------
bad_P = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
for label, fn in [
    ("cholesky non-PD", lambda: torch.linalg.cholesky(bad_P)),
    ("cholesky batched non-PD", lambda: torch.linalg.cholesky(torch.stack([torch.eye(2), bad_P]))),
    ("bmm batch mismatch", lambda: torch.bmm(torch.randn(3, 4, 4), torch.randn(2, 4, 4))),
    ("bmm inner mismatch", lambda: torch.bmm(torch.randn(3, 4, 4), torch.randn(3, 3, 4))),
    ("bmm not 3-D", lambda: torch.bmm(torch.randn(4, 4), torch.randn(4, 4))),
    ("solve singular", lambda: torch.linalg.solve(torch.ones(2, 2), torch.ones(2))),
    (
        "solve batch mismatch",
        lambda: torch.linalg.solve(torch.randn(3, 2, 2), torch.randn(4, 2, 1)),
    ),
    (
        "solve_triangular batch mismatch",
        lambda: torch.linalg.solve_triangular(
            torch.eye(2).expand(3, 2, 2), torch.ones(4, 2, 1), upper=False
        ),
    ),
    (
        "solve batched singular",
        lambda: torch.linalg.solve(torch.stack([torch.eye(2), torch.ones(2, 2)]), torch.ones(2, 2)),
    ),
    ("inv singular", lambda: torch.linalg.inv(torch.zeros(3, 3))),
    ("solve non-square", lambda: torch.linalg.solve(torch.ones(2, 3), torch.ones(2))),
    (
        "mvn non-square cov",
        lambda: MultivariateNormal(torch.zeros(2), covariance_matrix=torch.ones(2, 3)),
    ),
    (
        "mvn loc/cov mismatch",
        lambda: MultivariateNormal(torch.zeros(3), covariance_matrix=torch.eye(2)),
    ),
    ("mvn non-PD cov", lambda: MultivariateNormal(torch.zeros(2), covariance_matrix=bad_P)),
    (
        "mvn two params",
        lambda: MultivariateNormal(torch.zeros(2), torch.eye(2), scale_tril=torch.eye(2)),
    ),
    (
        "solve_triangular dtype",
        lambda: torch.linalg.solve_triangular(
            torch.eye(2), torch.ones(2, 1, dtype=torch.float32), upper=True
        ),
    ),
    (
        "solve_triangular 1-D",
        lambda: torch.linalg.solve_triangular(torch.eye(2), torch.ones(2), upper=True),
    ),
    ("cholesky_solve shapes", lambda: torch.cholesky_solve(torch.ones(3, 1), torch.eye(2))),
    ("multinomial negative", lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1)),
    ("multinomial too many", lambda: torch.multinomial(torch.tensor([0.5, 0.5]), 3)),
    ("searchsorted dims", lambda: torch.searchsorted(torch.ones(2, 3), torch.ones(3, 2))),
]:
    try:
        fn()
        print(label, "no error")
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])
L_bad, info = torch.linalg.cholesky_ex(
    torch.stack([torch.eye(3), torch.diag(torch.tensor([1.0, -1.0, 2.0]))])
)
print("cholesky_ex info", info.tolist(), info.dtype)
show("cholesky_ex partial L", L_bad[1])
try:
    torch.linalg.cholesky_ex(bad_P, check_errors=True)
except Exception as e:
    print("cholesky_ex check_errors", type(e).__name__, str(e).splitlines()[0])
L_nan, info = torch.linalg.cholesky_ex(torch.tensor([[1.0, 0.0], [0.0, float("nan")]]))
print("cholesky_ex nan pivot info", int(info), L_nan.isnan().sum().item())
Lt, info = torch.linalg.cholesky_ex(bad_P + 3 * torch.eye(2))
print("jittered info", int(info), f"{Lt[1, 1].item():.6f}")
