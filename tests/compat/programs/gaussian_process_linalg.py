"""Numerical linear algebra as ML users write it: Gaussian-process regression (RBF and Matern
kernels from torch.cdist, jittered Cholesky, cholesky_ex, cholesky_solve, solve_triangular,
log marginal likelihood fit with Adam through softplus, predictive mean/variance); PCA by
svd and by eigh of the covariance (sign-fixed components, pca_lowrank / svd_lowrank);
least squares (lstsq drivers, ridge by solve, pinv, matrix_rank, cond); det / slogdet, inv,
qr modes, lu_factor / lu_solve, matrix_exp, matrix_power, matrix/vector norms, products
(cross, vecdot, multi_dot, householder_product, kron), batched and broadcast solves,
gradcheck through cholesky / eigh / svd / solve, and the usual linear-algebra mistakes."""

import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def show(name, t):
    print(name, tuple(t.shape), t.dtype, [round(v, 4) for v in t.detach().flatten()[:6].tolist()])


def fix_sign(vecs):
    # make the largest-magnitude entry of each column positive
    idx = vecs.abs().argmax(dim=-2, keepdim=True)
    signs = torch.sign(torch.gather(vecs, -2, idx))
    return vecs * signs


# 1. Gaussian-process regression on a 1-D dataset --------------------
x_train = torch.linspace(-3, 3, 20, dtype=torch.float64).unsqueeze(-1)  # 1-D inputs
y_train = torch.sin(x_train).squeeze(-1) + 0.1 * torch.randn(20, dtype=torch.float64)
x_test = torch.linspace(-3.5, 3.5, 7, dtype=torch.float64).unsqueeze(-1)


def rbf(a, b, lengthscale, variance):
    d2 = torch.cdist(a, b).pow(2)
    return variance * torch.exp(-0.5 * d2 / lengthscale ** 2)


def matern52(a, b, lengthscale, variance):
    r = torch.cdist(a, b, p=2) / lengthscale
    s5 = math.sqrt(5.0) * r
    return variance * (1 + s5 + 5.0 / 3.0 * r ** 2) * torch.exp(-s5)


def neg_mll(kernel, raw, x, y):
    ls, var, noise = F.softplus(raw)
    K = kernel(x, x, ls, var) + (noise + 1e-6) * torch.eye(len(x), dtype=x.dtype)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
    logdet = 2 * torch.log(torch.diagonal(L)).sum()
    n = len(x)
    return 0.5 * (y @ alpha.squeeze(-1)) + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi)


for name, kernel in [("rbf", rbf), ("matern52", matern52)]:
    raw = torch.tensor([0.0, 0.0, -2.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([raw], lr=0.05)
    for step in range(60):
        opt.zero_grad()
        loss = neg_mll(kernel, raw, x_train, y_train)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == 59:
            print(f"{name} step {step:2d} nmll {loss.item():.4f} grad {raw.grad.norm().item():.4f}")
    ls, var, noise = F.softplus(raw.detach())
    print(name, "hyper", f"{ls.item():.4f} {var.item():.4f} {noise.item():.4f}")
    K = kernel(x_train, x_train, ls, var) + noise * torch.eye(20, dtype=torch.float64)
    L, info = torch.linalg.cholesky_ex(K)
    print(name, "cholesky_ex info", info.item(), info.dtype, L.is_contiguous())
    Ks = kernel(x_test, x_train, ls, var)
    v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
    mean = Ks @ torch.cholesky_solve(y_train.unsqueeze(-1), L).squeeze(-1)
    var_pred = kernel(x_test, x_test, ls, var).diagonal() - (v ** 2).sum(0)
    show(f"{name} mean", mean)
    show(f"{name} var", var_pred)
    # same solve through the upper factor, from the right
    U = L.mT
    w = torch.linalg.solve_triangular(U, Ks, upper=True, left=False)
    print(name, "right-solve agrees", torch.allclose(w, v.T), w.shape)
    u_chol = torch.linalg.cholesky(K, upper=True)
    print(name, "upper factor matches", torch.allclose(u_chol, U))

# 2-D inputs in float32, batched over two lengthscales
x2, ls2 = torch.rand(12, 2), torch.tensor([0.5, 1.5]).view(2, 1, 1)
K2 = torch.exp(-0.5 * torch.cdist(x2, x2).pow(2).unsqueeze(0) / ls2 ** 2) + 1e-3 * torch.eye(12)
L2, info2 = torch.linalg.cholesky_ex(K2)
print("batched K", K2.shape, K2.dtype, "info", info2.tolist())
print("logdet from chol", (2 * L2.diagonal(dim1=-2, dim2=-1).log().sum(-1)).round(decimals=3))
print("logdet", torch.logdet(K2.double()).round(decimals=3))

# 2. PCA: svd vs eigh of the covariance --------------------
data = torch.randn(30, 5, dtype=torch.float64) @ torch.tensor(
    [[3.0, 0, 0, 0, 0], [1.0, 2.0, 0, 0, 0], [0, 0.5, 1.0, 0, 0], [0, 0, 0, 0.3, 0],
     [0, 0, 0, 0.1, 0.1]], dtype=torch.float64)
centered = data - data.mean(0)
U, S, Vh = torch.linalg.svd(centered, full_matrices=False)
print("svd shapes", U.shape, S.shape, Vh.shape)
print("singular values", S.round(decimals=4))
cov = torch.cov(centered.T)
evals, evecs = torch.linalg.eigh(cov)
print("eigh ascending", evals.round(decimals=4))
print("eigvalsh U", torch.linalg.eigvalsh(cov, UPLO="U").round(decimals=4))
print("explained ratio", (evals.flip(0) / evals.sum()).round(decimals=4))
comps_svd, comps_eig = fix_sign(Vh.T), fix_sign(evecs.flip(-1))
print("components agree", torch.allclose(comps_svd, comps_eig, atol=1e-8))
show("first component", comps_svd[:, 0])
print("projection var", (centered @ comps_svd[:, :2]).var(0).round(decimals=4))
print("svdvals", torch.linalg.svdvals(centered).round(decimals=4),
      "full svd", [t.shape for t in torch.linalg.svd(centered)])
torch.manual_seed(5)
Ul, Sl, Vl = torch.pca_lowrank(data, q=3, center=True, niter=4)
print("pca_lowrank", Ul.shape, Sl.shape, Vl.shape, (Sl - S[:3]).abs().max().item() < 1e-6)
Us, Ss, Vs = torch.svd_lowrank(centered, q=2, niter=3)
print("svd_lowrank", Ss.round(decimals=4), Vs.shape)
Uo, So, Vo = torch.svd(centered, some=True)
print("torch.svd V not Vh", torch.allclose(fix_sign(Vo), comps_svd))

# 3. Least squares, ridge, pinv, rank, cond --------------------
A = torch.randn(8, 3, dtype=torch.float64)
b = A @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 0.01 * torch.randn(8).double()
for driver in ["gelsy", "gelsd", "gelss", "gels"]:
    res = torch.linalg.lstsq(A, b.unsqueeze(-1), driver=driver)
    print(driver, res.solution.squeeze(-1).round(decimals=4), tuple(res.residuals.shape),
          res.rank.tolist() if res.rank.numel() else "no rank",
          tuple(res.singular_values.shape))
sol = torch.linalg.lstsq(A, b.unsqueeze(-1)).solution
lam = 0.1
w_ridge = torch.linalg.solve(A.T @ A + lam * torch.eye(3, dtype=torch.float64), A.T @ b)
print("ridge", w_ridge.round(decimals=4))
print("pinv", torch.allclose(torch.linalg.pinv(A) @ b, sol.squeeze(-1)))
low = A[:, :2] @ torch.randn(2, 4, dtype=torch.float64)
print("matrix_rank", torch.linalg.matrix_rank(low).item(),
      torch.linalg.matrix_rank(low, rtol=0.5).item(),
      torch.linalg.matrix_rank(low, hermitian=False, atol=1e-6).item())
print("pinv rtol", torch.linalg.pinv(low, rtol=1e-8).shape,
      torch.linalg.pinv(cov, hermitian=True).diagonal().round(decimals=4))
print("cond", torch.linalg.cond(cov).round(decimals=4).item(),
      torch.linalg.cond(cov, "fro").round(decimals=4).item(),
      torch.linalg.cond(A, 2).round(decimals=4).item())

# 4. det / slogdet / inv / qr / lu / matrix functions / norms --------------------
M = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
(sign, logabs), det = torch.linalg.slogdet(M), torch.linalg.det(M)
(det + logabs).backward()
print("slogdet", sign.item(), round(logabs.item(), 4), "det", round(det.item(), 4))
show("grad det+logabs", M.grad)
print("inv_ex", [t.dtype for t in torch.linalg.inv_ex(M.detach())])
for mode in ["reduced", "complete", "r"]:
    Q, R = torch.linalg.qr(A, mode=mode)
    print("qr", mode, tuple(Q.shape), tuple(R.shape), R.diagonal().abs().round(decimals=4))
LU, piv = torch.linalg.lu_factor(M.detach())
print("lu_factor", LU.shape, piv.dtype, piv.tolist(),
      torch.linalg.lu_solve(LU, piv, b[:4].unsqueeze(-1)).squeeze(-1).round(decimals=4))
print("lu reconstructs", torch.allclose(torch.linalg.multi_dot(torch.linalg.lu(M.detach())), M))
gen_skew = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
print("matrix_exp rotation", torch.linalg.matrix_exp(gen_skew * math.pi / 2).round(decimals=4))
rots = torch.stack([gen_skew * t for t in (0.01, 0.5, 2.0, 12.0)]) + 0.1 * torch.eye(2)
print("matrix_exp batch", torch.matrix_exp(rots)[:, 0].round(decimals=5),
      rots.double().matrix_exp().dtype)
print("matrix_power -2, 0", torch.linalg.matrix_power(cov[:2, :2], -2).round(decimals=4),
      torch.linalg.matrix_power(cov[:2, :2], 0))
for ord_ in ["fro", "nuc", 2, -2, math.inf, -math.inf, 1]:
    print("matrix_norm", ord_, round(torch.linalg.matrix_norm(cov, ord=ord_).item(), 4))
vecs = torch.randn(3, 4)
print("vector_norm", torch.linalg.vector_norm(vecs, ord=1, dim=1).round(decimals=4),
      torch.linalg.vector_norm(vecs, ord=math.inf).round(decimals=4),
      torch.linalg.vector_norm(vecs, ord=0, dim=(0, 1)),
      torch.linalg.vector_norm(vecs, ord=3, dim=0, keepdim=True).shape)
print("linalg.norm", torch.linalg.norm(vecs).round(decimals=4),
      torch.linalg.norm(vecs, "nuc").round(decimals=4),
      torch.linalg.norm(vecs, 2, dim=1).round(decimals=4),
      torch.linalg.norm(vecs, dtype=torch.float64).dtype)
a3, b3 = torch.randn(4, 3), torch.randn(4, 3)
print("cross", torch.linalg.cross(a3, b3).shape, torch.linalg.vecdot(a3, b3).round(decimals=4))
print("multi_dot", torch.linalg.multi_dot([torch.randn(3, 5), torch.randn(5, 2),
                                            torch.randn(2, 4)]).shape)
h, tau = torch.randn(4, 2, dtype=torch.float64), torch.tensor([1.2, 0.7], dtype=torch.float64)
Hq = torch.linalg.householder_product(h, tau)
print("householder_product", Hq.shape, Hq[0].round(decimals=4),
      torch.equal(torch.orgqr(h, tau), Hq))
print("kron", torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])).shape,
      "trace", torch.trace(cov).round(decimals=4).item())
sq = torch.arange(16.0).view(4, 4)
print("diagonal +1", sq.diagonal(offset=1), "-2", torch.diagonal(sq, -2),
      "tril", torch.tril(sq, -1).sum().item(), "triu", torch.triu(sq, 1).sum().item())
print("diag_embed", torch.diag_embed(torch.tensor([1.0, 2.0]), offset=1).shape)

# batched and broadcast solves
Ab, Bb = torch.randn(3, 1, 4, 4) + 4 * torch.eye(4), torch.randn(2, 4, 2)
Xb = torch.linalg.solve(Ab, Bb)
print("broadcast solve", Xb.shape, torch.allclose(Ab @ Xb, Bb.expand(3, 2, 4, 2), atol=1e-5))
print("solve left=False", torch.linalg.solve(Ab[0, 0], torch.randn(4, 4), left=False).shape,
      torch.linalg.det(Ab).shape)
print("float32 vs float64 det", torch.linalg.det(Ab[0, 0]).dtype,
      torch.linalg.det(Ab[0, 0].double()).dtype)
singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
print("singular det", torch.linalg.det(singular), torch.linalg.slogdet(singular),
      torch.linalg.det(singular.T.contiguous()))

# 5. gradcheck through decompositions (float64) --------------------
S0 = torch.randn(4, 4, dtype=torch.float64)
S0 = S0 @ S0.T + 4 * torch.eye(4, dtype=torch.float64)
chol_fn = lambda X: torch.linalg.cholesky(X @ X.mT + torch.eye(4, dtype=X.dtype))  # noqa: E731
eigh_fn = lambda X: (lambda w, V: (w, V.abs()))(*torch.linalg.eigh(X + X.mT))  # noqa: E731
Xg = S0.clone().requires_grad_()
Bg = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
print("gradcheck cholesky", torch.autograd.gradcheck(chol_fn, (Xg,)))
print("gradcheck eigh", torch.autograd.gradcheck(eigh_fn, (Xg,)))
print("gradcheck svdvals", torch.autograd.gradcheck(torch.linalg.svdvals, (Xg,)))
print("gradcheck solve", torch.autograd.gradcheck(torch.linalg.solve, (Xg, Bg)))
print("gradgradcheck slogdet", torch.autograd.gradgradcheck(
    lambda X: torch.linalg.slogdet(X).logabsdet, (Xg,)))

# 6. Typical mistakes --------------------
not_pd = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
mistakes = [
    ("cholesky not PD", lambda: torch.linalg.cholesky(not_pd)),
    ("cholesky batch not PD", lambda: torch.linalg.cholesky(torch.stack([torch.eye(2), not_pd]))),
    ("solve singular", lambda: torch.linalg.solve(torch.ones(3, 3), torch.ones(3))),
    ("solve shapes", lambda: torch.linalg.solve(torch.eye(3), torch.ones(4))),
    ("lstsq shapes", lambda: torch.linalg.lstsq(torch.randn(5, 3), torch.randn(4, 1))),
    ("eigh non-square", lambda: torch.linalg.eigh(torch.randn(3, 4))),
    ("int input", lambda: torch.linalg.inv(torch.eye(3, dtype=torch.int64))),
    ("int det", lambda: torch.linalg.det(torch.ones(2, 2, dtype=torch.int32))),
    ("inv batch singular", lambda: torch.linalg.inv(torch.stack([torch.eye(2), 0 * not_pd]))),
    ("half cholesky", lambda: torch.linalg.cholesky(torch.eye(2, dtype=torch.float16))),
    ("half solve", lambda: torch.linalg.solve(torch.eye(2).half(), torch.ones(2, 1).half())),
    ("half inv", lambda: torch.linalg.inv(torch.eye(2, dtype=torch.bfloat16))),
    ("pinv of ints", lambda: torch.linalg.pinv(torch.eye(2, dtype=torch.int64))),
    ("lstsq dtypes", lambda: torch.linalg.lstsq(torch.eye(2), torch.ones(2, 1).double())),
    ("svd driver", lambda: torch.linalg.svd(torch.eye(2), driver="gesvd")),
    ("bad UPLO", lambda: torch.linalg.eigh(torch.eye(2), UPLO="X")),
    ("bad qr mode", lambda: torch.linalg.qr(torch.eye(2), mode="full")),
    ("lstsq bad driver", lambda: torch.linalg.lstsq(torch.eye(2), torch.ones(2, 1), driver="x")),
    ("matrix_norm vector", lambda: torch.linalg.matrix_norm(torch.ones(3))),
    ("cross dim 2", lambda: torch.linalg.cross(torch.ones(2, 2), torch.ones(2, 2))),
]
for label, fn in mistakes:
    try:
        fn()
        print(label, "no error")
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, "|", str(e).split("\n")[0])
print("LinAlgError is RuntimeError", issubclass(torch.linalg.LinAlgError, RuntimeError))
inv_b, info_b = torch.linalg.inv_ex(torch.stack([torch.eye(2), torch.zeros(2, 2)]))
print("inv_ex batch info", info_b.tolist())
_, info_c = torch.linalg.cholesky_ex(torch.stack([torch.eye(2), not_pd]))
print("cholesky_ex batch info", info_c.tolist())
