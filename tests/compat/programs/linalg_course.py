"""A numerical linear algebra course, exercise by exercise: Gaussian elimination and LU by
hand against lu_factor / lu_unpack / lu_solve / linalg.lu, solve (left/right, batched,
broadcast, solve_ex, LinAlgError), triangular solves, Cholesky by hand and its solves,
QR by Gram-Schmidt and Householder against linalg.qr / geqrf + householder_product, least
squares with each LAPACK driver, power / inverse / Rayleigh-quotient iteration against
eigh, eig of non-symmetric matrices, SVD and low-rank approximation, rank / pinv / cond /
norms, determinants with negative sign, matrix functions, products and Kronecker
structure, Jacobi / Gauss-Seidel / conjugate gradients by hand, gradients against finite
differences, and the mistakes students make."""

import math

import torch

torch.manual_seed(0)
f64, c128 = torch.float64, torch.complex128


def r(t, d=4):
    return t.detach().round(decimals=d)


def fix_cols(V):
    # eigen/singular vectors are defined up to sign (phase): make each column's
    # largest-magnitude entry real and positive
    idx = V.abs().argmax(dim=-2, keepdim=True)
    ph = torch.gather(V, -2, idx)
    return V * (ph.conj() / ph.abs())


def sort_complex(z):
    # order eigenvalues by (real, imag) after rounding, so ties are stable
    zr = z.detach().real.round(decimals=8).tolist()
    zi = z.detach().imag.round(decimals=8).tolist()
    order = sorted(range(len(zr)), key=lambda i: (zr[i], zi[i]))
    return z[order]


def cfmt(z, d=4):
    return "[" + ", ".join(f"{v.real:.{d}f}{v.imag:+.{d}f}j" for v in z.tolist()) + "]"


# 1. Gaussian elimination with partial pivoting, by hand ----------------------
A = torch.tensor([[2.0, 1.0, 1.0, 0.0], [4.0, 3.0, 3.0, 1.0],
                  [8.0, 7.0, 9.0, 5.0], [6.0, 7.0, 9.0, 8.0]], dtype=f64)
b = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=f64)


def lu_by_hand(M):
    n = M.shape[0]
    U, L, perm = M.clone(), torch.eye(n, dtype=M.dtype), list(range(n))
    swaps = []
    for k in range(n - 1):
        p = k + int(U[k:, k].abs().argmax())
        swaps.append(p + 1)  # LAPACK's 1-based pivot convention
        if p != k:
            U[[k, p]] = U[[p, k]]
            L[[k, p], :k] = L[[p, k], :k]
            perm[k], perm[p] = perm[p], perm[k]
        for i in range(k + 1, n):
            L[i, k] = U[i, k] / U[k, k]
            U[i, k:] -= L[i, k] * U[k, k:]
    swaps.append(n)
    return perm, L, U, swaps


perm, L_h, U_h, swaps = lu_by_hand(A)
print("hand perm", perm, "pivots", swaps)
print("hand L\n", r(L_h), "\nhand U\n", r(U_h))
LU, piv = torch.linalg.lu_factor(A)
print("lu_factor pivots", piv.tolist(), piv.dtype, "matches hand", piv.tolist() == swaps)
P, L, U = torch.lu_unpack(LU, piv)
print("lu_unpack L == hand", torch.allclose(L, L_h), "U == hand", torch.allclose(U, U_h))
print("P^T A == L U", torch.allclose(P.T @ A, L @ U), "P dtype", P.dtype)
print("P rows", P.argmax(dim=0).tolist())
P2, L2, U2 = torch.linalg.lu(A)
print("linalg.lu agrees", torch.equal(P2, P), torch.allclose(L2, L), torch.allclose(U2, U))
LUx, pivx, info = torch.linalg.lu_factor_ex(A)
print("lu_factor_ex info", info.item(), info.dtype)
x = torch.linalg.lu_solve(LU, piv, b.unsqueeze(-1))
print("lu_solve x", r(x.squeeze(-1), 5))
xa = torch.linalg.lu_solve(LU, piv, b.unsqueeze(-1), adjoint=True)
print("adjoint solve A^T x = b", torch.allclose(A.T @ xa, b.unsqueeze(-1)))
xr = torch.linalg.lu_solve(LU, piv, b.unsqueeze(0), left=False)
print("left=False x A = b", torch.allclose(xr @ A, b.unsqueeze(0)), tuple(xr.shape))
det_from_lu = LU.diagonal().prod() * (-1) ** (piv != torch.arange(1, 5)).sum()
print("det from LU", round(det_from_lu.item(), 6), "det", round(torch.linalg.det(A).item(), 6))
# rectangular and batched LU
Ar = torch.randn(3, 5, dtype=f64)
Pr, Lr, Ur = torch.linalg.lu(Ar)
print("wide lu shapes", tuple(Pr.shape), tuple(Lr.shape), tuple(Ur.shape),
      torch.allclose(Pr @ Lr @ Ur, Ar))
At = torch.randn(5, 3, dtype=f64)
print("tall lu shapes", [tuple(t.shape) for t in torch.linalg.lu(At)])
Ab = torch.randn(3, 4, 4, dtype=f64)
LUb, pivb = torch.linalg.lu_factor(Ab)
print("batched pivots", pivb.tolist())
Bb = torch.randn(3, 4, 2, dtype=f64)
print("batched lu_solve", torch.allclose(Ab @ torch.linalg.lu_solve(LUb, pivb, Bb), Bb))
P3, L3, U3 = torch.lu_unpack(LUb, pivb, unpack_data=False)
print("unpack pivots only", tuple(P3.shape), L3.numel(), U3.numel())
print("empty lu", [tuple(t.shape) for t in torch.linalg.lu(torch.zeros(0, 3, dtype=f64))],
      torch.linalg.lu_factor(torch.zeros(3, 0, dtype=f64)).pivots.shape)
# float32 LU of the same system
LU32, piv32 = torch.linalg.lu_factor(A.float())
print("float32 lu", LU32.dtype, piv32.tolist(), r(LU32.diagonal()))

# 2. solve: right-hand sides, left=False, batches, broadcasting --------------------
x = torch.linalg.solve(A, b)
print("solve", r(x, 5), "residual small", (A @ x - b).abs().max().item() < 1e-12)
X = torch.linalg.solve(A, torch.eye(4, dtype=f64))
print("solve for inverse", torch.allclose(X, torch.linalg.inv(A)))
Y = torch.linalg.solve(A, torch.ones(2, 4, dtype=f64), left=False)
print("solve left=False", tuple(Y.shape), r(Y[0], 5))
Ab = torch.randn(2, 1, 3, 3, dtype=f64) + 3 * torch.eye(3, dtype=f64)
Bb = torch.randn(5, 3, 2, dtype=f64)
Xb = torch.linalg.solve(Ab, Bb)
print("broadcast solve", tuple(Xb.shape), torch.allclose(Ab @ Xb, Bb))
vb = torch.randn(2, 3, dtype=f64)
print("batched vector rhs", tuple(torch.linalg.solve(Ab[:, 0], vb).shape))
S = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=f64)
Xs, info = torch.linalg.solve_ex(S, torch.ones(2, dtype=f64))
print("solve_ex singular info", info.item(), info.dtype)
Xs, info = torch.linalg.solve_ex(torch.stack([torch.eye(2, dtype=f64), S]),
                                 torch.ones(2, 2, dtype=f64))
print("solve_ex batch info", info.tolist())
try:
    torch.linalg.solve_ex(S, torch.ones(2, dtype=f64), check_errors=True)
except torch.linalg.LinAlgError as e:
    print("solve_ex check_errors", type(e).__name__, "|", e)
try:
    torch.linalg.solve(S, torch.ones(2, dtype=f64))
except torch.linalg.LinAlgError as e:
    print("solve singular", type(e).__name__, isinstance(e, RuntimeError), "|", e)
x32 = torch.linalg.solve(A.float(), b.float())
print("float32 solve", x32.dtype, r(x32, 3))
Ac = torch.tensor([[2 + 1j, 1 - 1j], [0.5j, 3 + 0j]], dtype=c128)
xc = torch.linalg.solve(Ac, torch.tensor([1 + 0j, 1j], dtype=c128))
print("complex solve", cfmt(xc), xc.dtype)

# 3. triangular solves --------------------
Lt = torch.tril(torch.randn(4, 4, dtype=f64)) + 4 * torch.eye(4, dtype=f64)
Ut = Lt.T.contiguous()
B = torch.randn(4, 2, dtype=f64)


def forward_sub(L, b, unit=False):
    x = torch.zeros_like(b)
    for i in range(L.shape[0]):
        s = b[i] - L[i, :i] @ x[:i]
        x[i] = s if unit else s / L[i, i]
    return x


xh = forward_sub(Lt, B)
xl = torch.linalg.solve_triangular(Lt, B, upper=False)
print("forward substitution", torch.allclose(xh, xl), r(xl[:, 0]))
xu = torch.linalg.solve_triangular(Ut, B, upper=True)
print("back substitution", torch.allclose(Ut @ xu, B), r(xu[:, 1]))
xr = torch.linalg.solve_triangular(Ut, B.T, upper=True, left=False)
print("right solve", torch.allclose(xr @ Ut, B.T), tuple(xr.shape))
xunit = torch.linalg.solve_triangular(Lt, B, upper=False, unitriangular=True)
print("unitriangular", torch.allclose(xunit, forward_sub(Lt, B, unit=True)), r(xunit[:, 0]))
xt, Ac_ = torch.triangular_solve(B, Ut, upper=True)
print("triangular_solve (old API)", torch.allclose(xt, xu), torch.equal(Ac_, Ut))
xtt = torch.triangular_solve(B, Lt, upper=False, transpose=True).solution
print("triangular_solve transpose", torch.allclose(Lt.T @ xtt, B))

# 4. Cholesky --------------------
G = torch.randn(5, 5, dtype=f64)
SPD = G @ G.T + 5 * torch.eye(5, dtype=f64)


def cholesky_by_hand(M):
    n = M.shape[0]
    L = torch.zeros_like(M)
    for j in range(n):
        L[j, j] = torch.sqrt(M[j, j] - (L[j, :j] ** 2).sum())
        for i in range(j + 1, n):
            L[i, j] = (M[i, j] - L[i, :j] @ L[j, :j]) / L[j, j]
    return L


Lc = torch.linalg.cholesky(SPD)
print("cholesky by hand agrees", torch.allclose(cholesky_by_hand(SPD), Lc))
print("cholesky diag", r(Lc.diagonal()))
Uc = torch.linalg.cholesky(SPD, upper=True)
print("upper is L^T", torch.allclose(Uc, Lc.T), torch.allclose(Uc.T @ Uc, SPD))
rhs = torch.randn(5, 3, dtype=f64)
xs = torch.cholesky_solve(rhs, Lc)
print("cholesky_solve", torch.allclose(SPD @ xs, rhs), r(xs[:, 0]))
print("cholesky_solve upper", torch.allclose(torch.cholesky_solve(rhs, Uc, upper=True), xs))
Ci = torch.cholesky_inverse(Lc)
print("cholesky_inverse", torch.allclose(Ci, torch.linalg.inv(SPD)), r(Ci.diagonal()))
print("cholesky_inverse upper", torch.allclose(torch.cholesky_inverse(Uc, upper=True), Ci))
indef = SPD.clone()
indef[2, 2] = -1.0
Lbad, info = torch.linalg.cholesky_ex(indef)
print("cholesky_ex indefinite info", info.item(), info.dtype)
Lb, infob = torch.linalg.cholesky_ex(torch.stack([SPD, indef, -SPD]))
print("cholesky_ex batch info", infob.tolist())
try:
    torch.linalg.cholesky(indef)
except torch.linalg.LinAlgError as e:
    print("cholesky indefinite", type(e).__name__, "|", e)
try:
    torch.linalg.cholesky_ex(indef, check_errors=True)
except RuntimeError as e:
    print("cholesky_ex check_errors", type(e).__name__, "|", e)
print("float32 cholesky", r(torch.linalg.cholesky(SPD.float()).diagonal(), 3))
Hc = torch.tensor([[4.0, 1 - 2j], [1 + 2j, 6.0]], dtype=c128)
Lh = torch.linalg.cholesky(Hc)
print("hermitian cholesky", cfmt(Lh.flatten()), torch.allclose(Lh @ Lh.mH, Hc))

# 5. QR: Gram-Schmidt, Householder, LAPACK --------------------
M = torch.randn(6, 4, dtype=f64)


def gram_schmidt(M, modified):
    Q, R = torch.zeros_like(M), torch.zeros(M.shape[1], M.shape[1], dtype=M.dtype)
    for j in range(M.shape[1]):
        v = M[:, j].clone()
        for i in range(j):
            R[i, j] = Q[:, i] @ (v if modified else M[:, j])
            v = v - R[i, j] * Q[:, i]
        R[j, j] = v.norm()
        Q[:, j] = v / R[j, j]
    return Q, R


def householder_qr(M):
    m, n = M.shape
    R, Q = M.clone(), torch.eye(m, dtype=M.dtype)
    for k in range(n):
        x = R[k:, k]
        v = x.clone()
        v[0] += math.copysign(x.norm().item(), x[0].item())
        v = v / v.norm()
        R[k:, :] -= 2 * torch.outer(v, v @ R[k:, :])
        Q[:, k:] -= 2 * torch.outer(Q[:, k:] @ v, v)
    return Q, R


def positive_diag(Q, R):
    s = torch.sign(R.diagonal())
    return Q[:, :len(s)] * s, R[:len(s)] * s.unsqueeze(-1)


Qt, Rt = torch.linalg.qr(M)
for name, (Q_, R_) in [("classical GS", gram_schmidt(M, False)),
                       ("modified GS", gram_schmidt(M, True)),
                       ("householder", positive_diag(*householder_qr(M)))]:
    Qp, Rp = positive_diag(Qt, Rt)
    print(name, "matches linalg.qr", torch.allclose(Q_[:, :4], Qp), torch.allclose(R_[:4], Rp))
print("R diag |.|", r(Rt.diagonal().abs()))
for mode in ["reduced", "complete", "r"]:
    Q_, R_ = torch.linalg.qr(M, mode=mode)
    print("qr", mode, tuple(Q_.shape), tuple(R_.shape))
Qc, Rc = torch.linalg.qr(M, mode="complete")
print("complete Q orthogonal", torch.allclose(Qc.T @ Qc, torch.eye(6, dtype=f64)))
# loss of orthogonality on a Hilbert matrix: classical GS loses it, modified GS keeps more
H = 1.0 / (torch.arange(8, dtype=f64).unsqueeze(0) + torch.arange(8, dtype=f64).unsqueeze(1) + 1)
for name, mod in [("classical", False), ("modified", True)]:
    Qg, _ = gram_schmidt(H, mod)
    loss = (Qg.T @ Qg - torch.eye(8, dtype=f64)).norm().item()
    print("hilbert orthogonality", name, loss > 1e-3, loss < 1e-1)
Qh, _ = torch.linalg.qr(H)
print("householder orthogonality", (Qh.T @ Qh - torch.eye(8, dtype=f64)).norm().item() < 1e-13)
a, tau = torch.geqrf(M)
print("geqrf", tuple(a.shape), tuple(tau.shape), r(tau))
Qhp = torch.linalg.householder_product(a, tau)
print("householder_product == Q", torch.allclose(Qhp, Qt), torch.allclose(a.triu()[:4], Rt))
print("orgqr", torch.allclose(torch.orgqr(a, tau), Qhp))
C = torch.randn(6, 2, dtype=f64)
print("ormqr Q^T C", torch.allclose(torch.ormqr(a, tau, C, transpose=True), Qc.T @ C))
Mc = torch.randn(4, 3, dtype=c128)
Qz, Rz = torch.linalg.qr(Mc)
print("complex qr", Qz.dtype, torch.allclose(Qz.mH @ Qz, torch.eye(3, dtype=c128)),
      r(Rz.diagonal().abs()))
Qb, Rb = torch.linalg.qr(torch.randn(2, 5, 3))
print("batched float32 qr", tuple(Qb.shape), tuple(Rb.shape), Qb.dtype)

# 6. least squares: polynomial fitting --------------------
t = torch.linspace(0, 1, 12, dtype=f64)
y = 1.0 - 2.0 * t + 3.0 * t ** 2 + 0.05 * torch.sin(17 * t)
V = torch.linalg.vander(t, N=3)
print("vander", tuple(V.shape), r(V[-1]))
print("vander default", tuple(torch.linalg.vander(t[:4]).shape), torch.vander(t[:3], N=2).tolist())
for driver in ["gels", "gelsy", "gelsd", "gelss"]:
    res = torch.linalg.lstsq(V, y.unsqueeze(-1), driver=driver)
    print(driver, r(res.solution.squeeze(-1), 5), "residuals", r(res.residuals, 6),
          "rank", res.rank.tolist() if res.rank.numel() else "-",
          "sv", r(res.singular_values) if res.singular_values.numel() else "-")
coef_ne = torch.linalg.solve(V.T @ V, V.T @ y)
print("normal equations", r(coef_ne, 5))
Qv, Rv = torch.linalg.qr(V)
coef_qr = torch.linalg.solve_triangular(Rv, (Qv.T @ y).unsqueeze(-1), upper=True)
print("via qr", r(coef_qr.squeeze(-1), 5))
print("cond(V) vs cond(V^T V)", r(torch.linalg.cond(V), 3), r(torch.linalg.cond(V.T @ V), 2))
Vd = torch.cat([V, V[:, 1:2] * 2], dim=1)  # a repeated column: rank deficient
for driver in ["gelsy", "gelsd", "gelss"]:
    res = torch.linalg.lstsq(Vd, y.unsqueeze(-1), driver=driver, rcond=1e-10)
    print("deficient", driver, "rank", res.rank.item(), "fit",
          r((Vd @ res.solution - y.unsqueeze(-1)).norm(), 5))
sol_min = torch.linalg.lstsq(Vd, y.unsqueeze(-1), driver="gelsd").solution
print("min-norm solution", r(sol_min.squeeze(-1), 5),
      torch.allclose(sol_min, torch.linalg.pinv(Vd) @ y.unsqueeze(-1)))
Vb = torch.randn(3, 10, 2)
yb = torch.randn(3, 10, 1)
rb = torch.linalg.lstsq(Vb, yb)
print("batched float32 lstsq", tuple(rb.solution.shape), rb.solution.dtype,
      tuple(rb.residuals.shape), tuple(rb.rank.shape))
rb = torch.linalg.lstsq(Vb.double(), yb.double(), driver="gelsd")
print("batched gelsd", tuple(rb.residuals.shape), rb.rank.tolist(),
      tuple(rb.singular_values.shape))
under = torch.linalg.lstsq(torch.randn(2, 4, dtype=f64), torch.randn(2, 1, dtype=f64))
print("underdetermined", tuple(under.solution.shape), tuple(under.residuals.shape))

# 7. eigenvalues of symmetric matrices: iterations vs eigh --------------------
T = torch.diag(torch.full((6,), 2.0, dtype=f64)) - torch.diag(torch.ones(5, dtype=f64), 1) \
    - torch.diag(torch.ones(5, dtype=f64), -1)
evals, evecs = torch.linalg.eigh(T)
exact = 2 - 2 * torch.cos(torch.arange(1, 7, dtype=f64) * math.pi / 7)
print("eigh", r(evals, 5), "analytic", torch.allclose(evals, exact))
v = torch.randn(6, dtype=f64)
history = []
for _ in range(60):
    v = T @ v
    v = v / v.norm()
    history.append((v @ T @ v).item())
print("power iteration", [round(h, 5) for h in history[::15]], "vs", round(evals[-1].item(), 5))
# this eigenvector's two largest entries are equal in exact arithmetic (which one LAPACK
# makes larger depends on its CPU's kernels), so its sign is fixed by its first entry
vi = v * v[0].sign()
print("power vector", r(vi), torch.allclose(vi, evecs[:, -1] * evecs[0, -1].sign(), atol=1e-3))
mu, v = 0.0, torch.ones(6, dtype=f64)
for _ in range(20):
    v = torch.linalg.solve(T - mu * torch.eye(6, dtype=f64), v)
    v = v / v.norm()
print("inverse iteration", round((v @ T @ v).item(), 6), round(evals[0].item(), 6))
v = torch.tensor([1.0, 0.5, 0.0, -0.5, -1.0, 0.2], dtype=f64)
v = v / v.norm()
rq = []
for _ in range(8):
    mu = v @ T @ v
    rq.append(round(mu.item(), 8))
    v = torch.linalg.solve(T - mu * torch.eye(6, dtype=f64), v)
    v = v / v.norm()
print("rayleigh quotient iteration", rq[:3], "converged to eigenvalue",
      bool((evals - rq[-1]).abs().min() < 1e-7), round(rq[-1], 6))
print("eigvalsh", r(torch.linalg.eigvalsh(T), 5))
Nsym = torch.triu(torch.randn(4, 4, dtype=f64))  # only one triangle holds the matrix
print("eigvalsh UPLO=U", r(torch.linalg.eigvalsh(Nsym, UPLO="U")))
print("eigvalsh UPLO=L", r(torch.linalg.eigvalsh(Nsym, UPLO="L")))
print("lower-case uplo", torch.equal(torch.linalg.eigvalsh(Nsym, UPLO="u"),
                                     torch.linalg.eigvalsh(Nsym, UPLO="U")))
print("symmetrised", torch.allclose(torch.linalg.eigvalsh(Nsym, UPLO="U"),
                                    torch.linalg.eigvalsh(Nsym.triu() + Nsym.triu(1).T)))
w, Q = torch.linalg.eigh(SPD, UPLO="U")
print("spectral decomposition", torch.allclose(Q @ torch.diag(w) @ Q.T, SPD), r(w, 3))
print("eigenvectors (sign-fixed)", r(fix_cols(Q)[:, 0]))
wz, Qz = torch.linalg.eigh(Hc)
print("hermitian eigh", wz.dtype, r(wz), torch.allclose(Qz @ torch.diag(wz).to(c128) @ Qz.mH, Hc))
print("float32 eigvalsh", r(torch.linalg.eigvalsh(T.float()), 4))

# 8. eig of non-symmetric matrices --------------------
Rot = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=f64)
print("rotation eigvals", cfmt(sort_complex(torch.linalg.eigvals(Rot))),
      torch.linalg.eigvals(Rot).dtype)
coeffs = [-6.0, 11.0, -6.0]  # x^3 - 6x^2 + 11x - 6 = (x-1)(x-2)(x-3)
comp = torch.zeros(3, 3, dtype=f64)
comp[1:, :2] = torch.eye(2, dtype=f64)
comp[:, 2] = -torch.tensor(coeffs, dtype=f64)
print("companion roots", cfmt(sort_complex(torch.linalg.eigvals(comp))))
Nm = torch.randn(5, 5, dtype=f64)
ev, evec = torch.linalg.eig(Nm)
print("eig", ev.dtype, evec.dtype, cfmt(sort_complex(ev)))
print("A V = V diag(w)", torch.allclose(Nm.to(c128) @ evec, evec * ev))
print("eigvectors unit norm", r(torch.linalg.vector_norm(evec, dim=0)))
print("trace = sum", round(Nm.trace().item(), 5), round(ev.sum().real.item(), 5),
      "det = prod", round(torch.linalg.det(Nm).item(), 5), round(ev.prod().real.item(), 5))
ev32 = torch.linalg.eigvals(Nm.float())
print("float32 eigvals", ev32.dtype, cfmt(sort_complex(ev32), 3))
evb = torch.linalg.eigvals(torch.randn(2, 3, 3, dtype=f64))
print("batched eigvals", tuple(evb.shape), [cfmt(sort_complex(e), 3) for e in evb])
Jordan = torch.tensor([[2.0, 1.0], [0.0, 2.0]], dtype=f64)
print("defective eigvals", cfmt(torch.linalg.eigvals(Jordan)))

# 9. SVD and low-rank approximation --------------------
Xs = torch.randn(7, 5, dtype=f64)
Us, Ss, Vhs = torch.linalg.svd(Xs, full_matrices=False)
print("svd reduced", tuple(Us.shape), tuple(Ss.shape), tuple(Vhs.shape), r(Ss))
Uf, Sf, Vhf = torch.linalg.svd(Xs)
print("svd full", tuple(Uf.shape), tuple(Vhf.shape), torch.allclose(Sf, Ss))
print("svdvals", torch.allclose(torch.linalg.svdvals(Xs), Ss))
print("U^T U = I", torch.allclose(Us.T @ Us, torch.eye(5, dtype=f64)))
print("singular vectors (sign-fixed)", r(fix_cols(Vhs.T)[:, 0]))
for k in [1, 2, 3, 4]:
    Xk = Us[:, :k] @ torch.diag(Ss[:k]) @ Vhs[:k]
    err2 = torch.linalg.matrix_norm(Xs - Xk, ord=2)
    errF = torch.linalg.matrix_norm(Xs - Xk)
    print(f"rank {k} error 2-norm {err2.item():.5f} = s{k + 1} {Ss[k].item():.5f}"
          f" fro {errF.item():.5f} = {Ss[k:].pow(2).sum().sqrt().item():.5f}")
Sv = torch.linalg.svdvals(torch.stack([Xs, 2 * Xs]))
print("batched svdvals", tuple(Sv.shape), r(Sv[1] / Sv[0]))
Xc = torch.randn(4, 3, dtype=c128)
Uc_, Sc_, Vhc_ = torch.linalg.svd(Xc, full_matrices=False)
print("complex svd", Sc_.dtype, r(Sc_), torch.allclose((Uc_ * Sc_) @ Vhc_, Xc))
low = torch.randn(40, 3, dtype=f64) @ torch.randn(3, 30, dtype=f64)
torch.manual_seed(1)
Ul, Sl, Vl = torch.svd_lowrank(low, q=5, niter=2)
print("svd_lowrank", tuple(Ul.shape), tuple(Sl.shape), tuple(Vl.shape),
      torch.allclose(Sl[:3], torch.linalg.svdvals(low)[:3]), r(Sl[:3], 3))
print("32-bit svd", r(torch.linalg.svdvals(Xs.float()), 4))
Uo, So, Vo = torch.svd(Xs)
print("torch.svd returns V", torch.allclose(Vo.T, Vhs), tuple(Vo.shape))

# 10. rank, pseudo-inverse, conditioning, norms --------------------
D = torch.diag(torch.tensor([10.0, 1.0, 1e-3, 1e-9], dtype=f64))
print("matrix_rank", torch.linalg.matrix_rank(D).item(),
      torch.linalg.matrix_rank(D, atol=1e-2).item(),
      torch.linalg.matrix_rank(D, rtol=1e-3).item(),
      torch.linalg.matrix_rank(D, atol=0.5, rtol=1e-5).item(),
      torch.linalg.matrix_rank(D, hermitian=True).item(),
      torch.linalg.matrix_rank(-D, hermitian=True, atol=1e-2).item())
print("rank batched", torch.linalg.matrix_rank(torch.stack([D, D[[0, 0, 2, 3]]])).tolist(),
      torch.linalg.matrix_rank(low).item())
Pi = torch.linalg.pinv(Vd)
print("pinv", tuple(Pi.shape), "Penrose A A+ A = A", torch.allclose(Vd @ Pi @ Vd, Vd),
      "A+ A A+ = A+", torch.allclose(Pi @ Vd @ Pi, Pi))
Sym = torch.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 0.0]], dtype=f64)
print("pinv hermitian", r(torch.linalg.pinv(Sym, hermitian=True)),
      torch.allclose(torch.linalg.pinv(Sym, hermitian=True), torch.linalg.pinv(Sym)))
print("pinv rtol", r(torch.linalg.pinv(D, rtol=1e-4).diagonal(), 3),
      r(torch.linalg.pinv(D, atol=0.5).diagonal(), 3))
K = torch.tensor([[4.0, 1.0, 2.0], [0.5, 3.0, 1.0], [1.0, 1.0, 5.0]], dtype=f64)
for p in [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1]:
    print("cond", p, round(torch.linalg.cond(K, p).item(), 5))
print("cond Hilbert", f"{torch.linalg.cond(H).item():.3e}", "batched",
      r(torch.linalg.cond(torch.stack([K, 2 * K, K.T])), 4))
print("cond singular", torch.linalg.cond(S).item() > 1e15, torch.linalg.cond(S, 1).item())
Dsing = torch.diag(torch.tensor([2.0, 0.0], dtype=f64))
print("cond nuc singular / zero", torch.linalg.cond(Dsing, "nuc").item(),
      torch.linalg.cond(torch.zeros(2, 2, dtype=f64), "nuc").item(),
      "empty", torch.linalg.cond(torch.zeros(0, 0, dtype=f64)).item())
print("legacy tolerances: pinv(A, rcond)", r(torch.linalg.pinv(D, 1e-4).diagonal(), 3),
      "matrix_rank(A, tol)", torch.linalg.matrix_rank(D, 0.5).item(),
      torch.linalg.matrix_rank(D, tol=1e-6, hermitian=True).item())
print("empty norms",
      [torch.linalg.matrix_norm(torch.zeros(0, 3), o).item() for o in [2, 1, math.inf]])
v = torch.tensor([3.0, -4.0, 0.0, 12.0], dtype=f64)
print("vector norms", [round(torch.linalg.vector_norm(v, ord=o).item(), 4)
                       for o in [2, 1, math.inf, -math.inf, 0, 3, 0.5]])
print("matrix norms", [round(torch.linalg.matrix_norm(K, ord=o).item(), 4)
                       for o in ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]])
Kb = torch.stack([K, K.T, -K])
print("norm dims", r(torch.linalg.norm(Kb, dim=(1, 2))),
      r(torch.linalg.norm(Kb, ord=1, dim=(-1, -2))),
      r(torch.linalg.norm(Kb[0], ord=2, dim=0)), r(torch.linalg.norm(Kb, ord=math.inf, dim=2)[0]))
print("norm flat", round(torch.linalg.norm(Kb).item(), 4),
      r(torch.linalg.vector_norm(Kb, dim=(0, 2), keepdim=True).squeeze()),
      torch.linalg.norm(K.float(), "nuc").dtype,
      torch.linalg.vector_norm(K.float(), dtype=f64).dtype)
print("complex norm", torch.linalg.norm(Hc).dtype, round(torch.linalg.norm(Hc).item(), 5),
      round(torch.linalg.matrix_norm(Hc, 2).item(), 5))

# 11. determinants --------------------
Neg = torch.tensor([[0.0, 2.0, 1.0], [1.0, 0.0, 3.0], [2.0, 1.0, 0.0]], dtype=f64)
print("det", round(torch.linalg.det(Neg).item(), 6), "torch.det", round(torch.det(Neg).item(), 6))
sgn, lad = torch.linalg.slogdet(Neg)
print("slogdet", sgn.item(), round(lad.item(), 6), "logdet", round(torch.logdet(Neg).item(), 6))
print("logdet SPD vs cholesky", round(torch.logdet(SPD).item(), 5),
      round(2 * Lc.diagonal().log().sum().item(), 5))
print("batched det", r(torch.linalg.det(torch.stack([Neg, -Neg, Neg @ Neg])), 5),
      "scaling det(2A) = 8 det(A)", torch.allclose(torch.det(2 * Neg), 8 * torch.det(Neg)))
print("slogdet singular", torch.linalg.slogdet(S), torch.linalg.det(S).item())
print("complex det", cfmt(torch.linalg.det(Ac).unsqueeze(0)),
      cfmt(torch.linalg.slogdet(Ac).sign.unsqueeze(0)))
print("det float32", torch.det(Neg.float()).dtype, round(torch.det(Neg.float()).item(), 4))
print("det 0x0", torch.linalg.det(torch.zeros(0, 0, dtype=f64)).item())

# 12. matrix functions --------------------
print("matrix_power", torch.linalg.matrix_power(K, 3)[0].tolist(),
      r(torch.linalg.matrix_power(K, -2)[0], 6))
print("power 0", torch.linalg.matrix_power(K, 0).tolist())
Fib = torch.tensor([[1, 1], [1, 0]])
print("fibonacci", torch.linalg.matrix_power(Fib, 30)[0].tolist(), Fib.matrix_power(10).dtype)
theta = 0.7
E = torch.linalg.matrix_exp(theta * Rot)
print("exp of generator", r(E, 6), round(math.cos(theta), 6), round(math.sin(theta), 6))
Nil = torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]], dtype=f64)
print("exp nilpotent", r(torch.matrix_exp(Nil)).tolist())
print("exp diag", torch.allclose(torch.linalg.matrix_exp(torch.diag(exact)),
                                 torch.diag(exact.exp())))
Es = torch.linalg.matrix_exp(T)
print("exp via eigh", torch.allclose(Es, evecs @ torch.diag(evals.exp()) @ evecs.T))
eN = torch.linalg.matrix_exp(Nm) @ torch.linalg.matrix_exp(-Nm)
print("exp(A) exp(-A) = I", torch.allclose(eN, torch.eye(5, dtype=f64)))
print("exp complex",
      cfmt(torch.linalg.matrix_exp(1j * math.pi * torch.eye(2, dtype=c128)).diagonal()))
print("exp big", f"{torch.linalg.matrix_exp(20 * K).sum().item():.5e}")

# 13. products, structure --------------------
u3 = torch.tensor([1.0, 2.0, 3.0], dtype=f64)
w3 = torch.tensor([-1.0, 0.5, 2.0], dtype=f64)
cr = torch.linalg.cross(u3, w3)
print("cross", cr.tolist(), "orthogonal", (cr @ u3).item(), (cr @ w3).item())
print("cross batched", torch.linalg.cross(torch.eye(3), torch.roll(torch.eye(3), 1, 0)).tolist())
print("cross dim 0", torch.linalg.cross(torch.eye(3), torch.eye(3).flip(0), dim=0).tolist())
print("vecdot", torch.linalg.vecdot(u3, w3).item(),
      cfmt(torch.linalg.vecdot(torch.tensor([1j, 1.0], dtype=c128),
                               torch.tensor([1j, 2.0], dtype=c128)).unsqueeze(0)),
      torch.linalg.vecdot(K, K, dim=0).tolist())
chain = [torch.randn(10, 3, dtype=f64), torch.randn(3, 20, dtype=f64),
         torch.randn(20, 2, dtype=f64), torch.randn(2, 4, dtype=f64)]
md = torch.linalg.multi_dot(chain)
print("multi_dot", tuple(md.shape), torch.allclose(md, chain[0] @ chain[1] @ chain[2] @ chain[3]))
print("multi_dot vectors", round(torch.linalg.multi_dot([u3, K, w3]).item(), 4),
      tuple(torch.linalg.multi_dot([u3, K, K]).shape))
print("diagonal", torch.linalg.diagonal(K).tolist(), torch.diagonal(K, 1).tolist(),
      torch.diagonal(Kb, dim1=0, dim2=2).shape)
print("diag_embed", torch.diag_embed(u3).tolist(), tuple(torch.diag_embed(Kb, offset=-1).shape))
print("diag_embed dims", torch.diag_embed(torch.tensor([[1.0, 2.0]]), dim1=0, dim2=2).shape)
A2 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=f64)
B3 = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 1.0], [1.0, 1.0, 3.0]], dtype=f64)
Kr = torch.kron(A2, B3)
print("kron", tuple(Kr.shape), Kr[4].tolist())
Xk = torch.randn(3, 2, dtype=f64)
vec = lambda Z: Z.T.reshape(-1)  # noqa: E731  column-stacking vec
print("vec identity (A kron B) vec X = vec(B X A^T)",
      torch.allclose(Kr @ vec(Xk), vec(B3 @ Xk @ A2.T)))
ek = torch.sort(torch.linalg.eigvals(Kr).real).values
eprod = (torch.linalg.eigvals(A2).unsqueeze(1) * torch.linalg.eigvals(B3)).real.flatten()
eprod = torch.sort(eprod).values
print("kron eigenvalues = products", torch.allclose(ek, eprod), r(ek, 4))
print("kron det", round(torch.det(Kr).item(), 3),
      round((torch.det(A2) ** 3 * torch.det(B3) ** 2).item(), 3))
print("kron inverse", torch.allclose(torch.linalg.inv(Kr), torch.kron(torch.linalg.inv(A2),
                                                                      torch.linalg.inv(B3))))
Xsol = torch.linalg.solve(A2.T, torch.linalg.solve(B3, Xk), left=False)
print("kron solve without forming", torch.allclose(Kr @ vec(Xsol), vec(Xk)))
print("outer/inner", torch.outer(u3, w3).sum().item(), torch.inner(u3, w3).item(),
      torch.dot(u3, w3).item(), torch.vdot(u3, w3).item())
print("block_diag", torch.block_diag(A2, B3).shape, torch.trace(torch.block_diag(A2, B3)).item())

# 14. iterative solvers --------------------
n = 20
Pois = 2 * torch.eye(n, dtype=f64) - torch.diag(torch.ones(n - 1, dtype=f64), 1) \
    - torch.diag(torch.ones(n - 1, dtype=f64), -1)
Pois = Pois + 0.5 * torch.eye(n, dtype=f64)  # shifted so Jacobi converges quickly
rhs = torch.sin(torch.linspace(0, math.pi, n, dtype=f64)) + 0.1
exact_x = torch.linalg.solve(Pois, rhs)


def jacobi(A, b, iters):
    Dg = A.diagonal()
    R = A - torch.diag(Dg)
    x, hist = torch.zeros_like(b), []
    for _ in range(iters):
        x = (b - R @ x) / Dg
        hist.append(torch.linalg.vector_norm(b - A @ x).item())
    return x, hist


def gauss_seidel(A, b, iters):
    Lw, Up = torch.tril(A), torch.triu(A, 1)
    x, hist = torch.zeros_like(b), []
    for _ in range(iters):
        x = torch.linalg.solve_triangular(Lw, (b - Up @ x).unsqueeze(-1), upper=False).squeeze(-1)
        hist.append(torch.linalg.vector_norm(b - A @ x).item())
    return x, hist


def conjugate_gradient(A, b, iters):
    x = torch.zeros_like(b)
    res = b - A @ x
    p, rs, hist = res.clone(), res @ res, []
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        res = res - alpha * Ap
        rs_new = res @ res
        hist.append(rs_new.sqrt().item())
        if rs_new.sqrt() < 1e-12:
            break
        p = res + (rs_new / rs) * p
        rs = rs_new
    return x, hist


for name, solver, iters in [("jacobi", jacobi, 40), ("gauss-seidel", gauss_seidel, 25),
                            ("conjugate gradient", conjugate_gradient, 30)]:
    xi, hist = solver(Pois, rhs, iters)
    shown = [f"{h:.3e}" for h in hist[:: max(1, len(hist) // 5)][:5]]
    print(name, "iters", len(hist), "residuals", shown,
          "error", (xi - exact_x).abs().max().item() < 1e-10 or
          f"{(xi - exact_x).abs().max().item():.2e}")
Djac = torch.diag(Pois.diagonal())
rho = torch.linalg.eigvals(torch.linalg.solve(Djac, Djac - Pois)).abs().max()
print("jacobi spectral radius", round(rho.item(), 6))
G_gs = torch.linalg.solve(torch.tril(Pois), -torch.triu(Pois, 1))
rho_gs = torch.linalg.eigvals(G_gs).abs().max()
print("gauss-seidel spectral radius", round(rho_gs.item(), 6),
      "= rho_J^2", round(rho.item() ** 2, 6))
kappa = torch.linalg.cond(Pois).item()
print("cg bound factor", round((math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1), 5))

# 15. gradients against finite differences --------------------
torch.manual_seed(3)
A0 = torch.randn(4, 4, dtype=f64) + 4 * torch.eye(4, dtype=f64)
b0 = torch.randn(4, dtype=f64)
c0 = torch.randn(4, dtype=f64)


def fd_grad(f, X, h=1e-6):
    g = torch.zeros_like(X)
    for idx in range(X.numel()):
        E_ = torch.zeros_like(X).flatten()
        E_[idx] = h
        E_ = E_.view_as(X)
        g.view(-1)[idx] = (f(X + E_) - f(X - E_)) / (2 * h)
    return g


def check(name, f, X):
    Xg = X.clone().requires_grad_()
    out = f(Xg)
    (g,) = torch.autograd.grad(out, Xg)
    fd = fd_grad(lambda Z: f(Z).detach(), X)
    print(f"grad {name}: value {out.item():.6f} grad_fn {type(out.grad_fn).__name__}",
          "matches fd", torch.allclose(g, fd, atol=1e-6, rtol=1e-5), r(g.flatten()[:3], 5))


check("c.solve(A,b)", lambda X: c0 @ torch.linalg.solve(X, b0), A0)
check("c.solve(A,b) wrt b", lambda y: c0 @ torch.linalg.solve(A0, y), b0)
check("det", torch.linalg.det, A0)
check("logabsdet", lambda X: torch.linalg.slogdet(X).logabsdet, A0)
check("eigh top eigenvalue", lambda X: torch.linalg.eigvalsh(X + X.T)[-1], A0)
check("eigh projector trace", lambda X: (lambda V: (V[:, -1:] @ V[:, -1:].T * SPD[:4, :4]).sum())(
    torch.linalg.eigh(X + X.T).eigenvectors), A0)
check("inv trace", lambda X: torch.linalg.inv(X).trace(), A0)
check("cholesky logdet", lambda X: 2 * torch.linalg.cholesky(X @ X.T).diagonal().log().sum(), A0)
check("nuclear norm", lambda X: torch.linalg.matrix_norm(X, "nuc"), A0)
check("lstsq", lambda X: torch.linalg.lstsq(X, b0.unsqueeze(-1)).solution.sum(), A0)
check("solve_triangular", lambda X: torch.linalg.solve_triangular(X.triu(), b0.unsqueeze(-1),
                                                                  upper=True).sum(), A0)
check("matrix_exp", lambda X: torch.linalg.matrix_exp(0.3 * X).trace(), A0)
check("lu_solve", lambda X: torch.linalg.lu_solve(*torch.linalg.lu_factor(X),
                                                  b0.unsqueeze(-1)).sum(), A0)
check("eigvals real sum", lambda X: torch.linalg.eigvals(X).real.pow(2).sum(), A0)
Ag = A0.clone().requires_grad_()
w_, V_ = torch.linalg.eig(Ag)
print("eig grad_fn", type(w_.grad_fn).__name__, w_.dtype, V_.requires_grad)
try:
    V_.sum().abs().backward()
    print("eig vectors backward no error")
except RuntimeError as e:
    print("eig vectors backward", type(e).__name__, "|", str(e).split("\n")[0])
x = torch.linalg.solve(Ag, b0)
print("solve grad_fn", type(x.grad_fn).__name__, type(torch.linalg.det(Ag).grad_fn).__name__,
      type(torch.linalg.eigh(Ag).eigenvalues.grad_fn).__name__)
LUg, pivg = torch.linalg.lu_factor(Ag)
print("composite grad_fns", type(torch.linalg.lu(Ag).U.grad_fn).__name__,
      type(torch.lu_unpack(LUg, pivg).L.grad_fn).__name__,
      type(torch.linalg.lu_solve(LUg, pivg, b0.unsqueeze(-1)).grad_fn).__name__,
      type(torch.linalg.solve(Ag, b0.unsqueeze(0), left=False).grad_fn).__name__,
      type(torch.linalg.solve_triangular(Ag, b0.unsqueeze(0), upper=True,
                                         left=False).grad_fn).__name__,
      type(torch.linalg.householder_product(Ag, Ag[0, :2]).grad_fn).__name__,
      type(torch.linalg.multi_dot([Ag, Ag, b0]).grad_fn).__name__,
      type(torch.linalg.cond(Ag, "nuc").grad_fn).__name__)
print("gradcheck solve", torch.autograd.gradcheck(lambda X, y: torch.linalg.solve(X, y),
                                                  (Ag, b0.clone().requires_grad_())))

# 16. typical mistakes --------------------
mistakes = [
    ("det of non-square", lambda: torch.linalg.det(torch.randn(3, 4))),
    ("slogdet of vector", lambda: torch.linalg.slogdet(torch.randn(3))),
    ("solve batch mismatch",
     lambda: torch.linalg.solve(torch.randn(2, 3, 3), torch.randn(4, 3, 1))),
    ("solve rhs size", lambda: torch.linalg.solve(torch.eye(3), torch.ones(4, 2))),
    ("solve dtype mix", lambda: torch.linalg.solve(torch.eye(2, dtype=f64), torch.ones(2))),
    ("solve non-square", lambda: torch.linalg.solve(torch.ones(2, 3), torch.ones(2))),
    ("cholesky not PD", lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("cholesky batch not PD",
     lambda: torch.linalg.cholesky(torch.stack([torch.eye(2), -torch.eye(2)]))),
    ("inv singular", lambda: torch.linalg.inv(S)),
    ("lu_solve pivots dtype", lambda: torch.linalg.lu_solve(LU, piv.long(), b.unsqueeze(-1))),
    ("lu_solve shapes", lambda: torch.linalg.lu_solve(LU, piv, torch.ones(3, 1, dtype=f64))),
    ("lu no pivot cpu", lambda: torch.linalg.lu_factor(A, pivot=False)),
    ("solve_triangular vector", lambda: torch.linalg.solve_triangular(Lt, b, upper=False)),
    ("solve_triangular no upper", lambda: torch.linalg.solve_triangular(Lt, B)),
    ("eig of float16", lambda: torch.linalg.eig(torch.eye(2, dtype=torch.float16))),
    ("eigh non-square", lambda: torch.linalg.eigh(torch.randn(2, 3))),
    ("qr bad mode", lambda: torch.linalg.qr(M, mode="economic")),
    ("svd of vector", lambda: torch.linalg.svd(torch.randn(4))),
    ("lstsq rows", lambda: torch.linalg.lstsq(torch.randn(5, 2), torch.randn(4))),
    ("lstsq int", lambda: torch.linalg.lstsq(torch.ones(3, 2, dtype=torch.int64),
                                             torch.ones(3, 1, dtype=torch.int64))),
    ("matrix_power non-square", lambda: torch.linalg.matrix_power(torch.randn(2, 3), 2)),
    ("matrix_power int negative", lambda: torch.linalg.matrix_power(Fib, -1)),
    ("matrix_exp non-square", lambda: torch.linalg.matrix_exp(torch.randn(2, 3))),
    ("cross wrong size", lambda: torch.linalg.cross(torch.randn(4), torch.randn(4))),
    ("vecdot shapes", lambda: torch.linalg.vecdot(torch.randn(3), torch.randn(4))),
    ("multi_dot one matrix", lambda: torch.linalg.multi_dot([torch.eye(2)])),
    ("multi_dot 3-D", lambda: torch.linalg.multi_dot([torch.eye(2), torch.ones(2, 2, 2)])),
    ("cond p=3", lambda: torch.linalg.cond(K, 3)),
    ("matrix_norm ord=3", lambda: torch.linalg.matrix_norm(K, ord=3)),
    ("vector_norm narrowing dtype", lambda: torch.linalg.vector_norm(K, dtype=torch.float32)),
    ("vector_norm int", lambda: torch.linalg.vector_norm(torch.arange(3))),
    ("norm ord string on vector", lambda: torch.linalg.norm(u3, "fro")),
    ("matrix_rank of vector", lambda: torch.linalg.matrix_rank(u3)),
    ("pinv int", lambda: torch.linalg.pinv(torch.eye(2, dtype=torch.int32))),
    ("cholesky_inverse non-square", lambda: torch.cholesky_inverse(torch.randn(2, 3))),
    ("householder tau too long",
     lambda: torch.linalg.householder_product(M, torch.ones(5, dtype=f64))),
    ("vander 2-D", lambda: torch.linalg.vander(torch.ones(2, 2), N=0)),
    ("det of a list", lambda: torch.linalg.det([[1.0, 2.0], [3.0, 4.0]])),
    ("eigh of a list", lambda: torch.linalg.eigh([[1.0]])),
    ("top-level det of a list", lambda: torch.det([[1.0]])),
    ("multi_dot list element", lambda: torch.linalg.multi_dot([K, [[1.0]]])),
    ("multi_dot dtypes", lambda: torch.linalg.multi_dot([K, K.float()])),
    ("lu_unpack bad pivots",
     lambda: torch.lu_unpack(LU, torch.tensor([5, 4, 4, 4], dtype=torch.int32))),
    ("lu_unpack int64 pivots", lambda: torch.lu_unpack(LU, piv.long())),
    ("householder tau dtype", lambda: torch.linalg.householder_product(M, tau.float())),
    ("householder tau batch", lambda: torch.linalg.householder_product(M, tau.expand(2, 4))),
    ("eig of nan", lambda: torch.linalg.eig(torch.tensor([[1.0, math.nan], [0.0, 1.0]]))),
    ("uplo word", lambda: torch.linalg.eigh(SPD, UPLO="upper")),
    ("pinv rcond and rtol", lambda: torch.linalg.pinv(D, 1e-4, rtol=0.1)),
    ("matrix_rank tol None", lambda: torch.linalg.matrix_rank(D, None)),
    ("vector_norm ord fro", lambda: torch.linalg.vector_norm(u3, ord="fro")),
    ("logdet of vector", lambda: torch.logdet(u3)),
    ("lstsq of vector", lambda: torch.linalg.lstsq(u3, u3)),
    ("matrix_power of vector", lambda: torch.linalg.matrix_power(u3, 2)),
    ("matrix_norm ord None", lambda: torch.linalg.matrix_norm(K, ord=None)),
    ("matrix_norm empty -2", lambda: torch.linalg.matrix_norm(torch.zeros(0, 3), -2)),
]
for label, fn in mistakes:
    try:
        fn()
        print(label, "no error")
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, "|", str(e).split("\n")[0])
