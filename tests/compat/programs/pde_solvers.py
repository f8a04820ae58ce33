"""Numerical PDE solvers with torch as a numerical library.

Heat, wave, Burgers and advection equations by finite differences, Crank-Nicolson
with tridiagonal solves, FFT Poisson, iterative solvers, sparse Laplacians, eigenmodes,
convergence tables, quadrature, exact solutions from special functions, and autograd
through a solver step. Ends with the mistakes people make and the errors they get.
"""

import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=5, sci_mode=False)
DT = torch.float64


def section(title):
    print(f"\n== {title} ==")


# ---------------------------------------------------------------- 1-d heat, explicit
section("1-d heat equation, explicit FTCS")
L, nx = 1.0, 41
x = torch.linspace(0, L, nx, dtype=DT)
dx = (x[1] - x[0]).item()
alpha = 0.5
dt = 0.4 * dx * dx / alpha
u0 = torch.sin(math.pi * x)
u = u0.clone()
nt = 200
for _ in range(nt):
    u[1:-1] = u[1:-1] + alpha * dt / dx**2 * (u[2:] - 2 * u[1:-1] + u[:-2])
t_end = nt * dt
exact = torch.sin(math.pi * x) * math.exp(-alpha * math.pi**2 * t_end)
err = (u - exact).abs().max()
print(f"t_end={t_end:.5f} max|u|={u.max().item():.6f} err={err.item():.4e}")
print("u[::8] =", u[::8])

# periodic with roll
u = torch.exp(-100 * (x[:-1] - 0.5) ** 2)
mass0 = u.sum().item()
for _ in range(300):
    lap = torch.roll(u, 1) - 2 * u + torch.roll(u, -1)
    u = u + alpha * dt / dx**2 * lap
print(f"periodic roll: mass drift={abs(u.sum().item() - mass0):.3e} peak={u.max().item():.6f}")
print(f"argmax={u.argmax().item()} min={u.min().item():.6f}")

# conv1d Laplacian with padding modes
kern = torch.tensor([[[1.0, -2.0, 1.0]]], dtype=DT)
v = torch.exp(-50 * (x - 0.3) ** 2).reshape(1, 1, -1)
for mode in ["circular", "replicate", "reflect"]:
    w = v.clone()
    for _ in range(100):
        w = w + alpha * dt / dx**2 * F.conv1d(F.pad(w, (1, 1), mode=mode), kern)
    print(f"conv1d pad={mode:9s} sum={w.sum().item():.6f} max={w.max().item():.6f} "
          f"edge=({w[0, 0, 0].item():.5f}, {w[0, 0, -1].item():.5f})")
w_zero = F.conv1d(F.pad(v, (1, 1), mode="constant", value=0.0), kern)
print("constant pad lap shape", tuple(w_zero.shape), f"{w_zero.abs().sum().item():.5f}")

# ---------------------------------------------------------------- 2-d heat
section("2-d heat equation")
n2 = 32
g = torch.linspace(0, 1, n2, dtype=DT)
X, Y = torch.meshgrid(g, g, indexing="ij")
h = (g[1] - g[0]).item()
T = torch.exp(-80 * ((X - 0.5) ** 2 + (Y - 0.4) ** 2))
lap5 = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], dtype=DT)
lap5 = lap5.reshape(1, 1, 3, 3)
dt2 = 0.2 * h * h
Tc = T.clone()[None, None]
Ts = T.clone()
for _ in range(50):
    Tc = Tc + dt2 / h**2 * F.conv2d(F.pad(Tc, (1, 1, 1, 1), mode="circular"), lap5)
    lap = (torch.roll(Ts, 1, 0) + torch.roll(Ts, -1, 0) + torch.roll(Ts, 1, 1)
           + torch.roll(Ts, -1, 1) - 4 * Ts)
    Ts = Ts + dt2 / h**2 * lap
print(f"conv2d matches roll: {(Tc[0, 0] - Ts).abs().max().item() < 1e-12}")
print(f"T mean={Ts.mean().item():.6f} max={Ts.max().item():.6f} std={Ts.std().item():.6f}")
T32 = T.float()[None, None]
k32 = lap5.float()
for _ in range(50):
    T32 = T32 + 0.2 * F.conv2d(F.pad(T32, (1, 1, 1, 1), mode="replicate"), k32)
print(f"float32 replicate: dtype={T32.dtype} max={T32.max().item():.5f} "
      f"mean={T32.mean().item():.5f}")
Tr = F.pad(T[None, None], (2, 2, 2, 2), mode="reflect")
print("reflect pad shape", tuple(Tr.shape), f"corner={Tr[0, 0, 0, 0].item():.5e}")

# ---------------------------------------------------------------- Crank-Nicolson
section("Crank-Nicolson")
N = 49
xi = torch.linspace(0, 1, N + 2, dtype=DT)[1:-1]
hh = 1.0 / (N + 1)
r = alpha * 0.01 / hh**2
main = torch.full((N,), 1 + r, dtype=DT)
off = torch.full((N - 1,), -r / 2, dtype=DT)
A = torch.diag(main) + torch.diag(off, 1) + torch.diag(off, -1)
B = torch.diag(torch.full((N,), 1 - r, dtype=DT)) + torch.diag(-off, 1) + torch.diag(-off, -1)
print(f"r={r:.4f} A sym={torch.allclose(A, A.T)} cond={torch.linalg.cond(A).item():.5f}")
u = torch.sin(math.pi * xi) + 0.5 * torch.sin(3 * math.pi * xi)
LU, piv = torch.linalg.lu_factor(A)
print("pivots[:5]", piv[:5].tolist(), "dtype", piv.dtype)
u_lu = u.clone()
u_sv = u.clone()
for _ in range(20):
    u_lu = torch.linalg.lu_solve(LU, piv, (B @ u_lu).unsqueeze(-1)).squeeze(-1)
    u_sv = torch.linalg.solve(A, B @ u_sv)
t = 20 * 0.01
ex = (torch.sin(math.pi * xi) * math.exp(-alpha * math.pi**2 * t)
      + 0.5 * torch.sin(3 * math.pi * xi) * math.exp(-alpha * 9 * math.pi**2 * t))
print(f"lu agrees with solve: {torch.allclose(u_lu, u_sv, rtol=0, atol=1e-12)} "
      f"err={(u_lu - ex).abs().max().item():.4e}")
# batched tridiagonal with diag_embed
diags = torch.stack([main, main * 2, main * 3])
Ab = (torch.diag_embed(diags) + torch.diag_embed(off.expand(3, -1), offset=1)
      + torch.diag_embed(off.expand(3, -1), offset=-1))
rhs = torch.ones(3, N, 1, dtype=DT)
sol = torch.linalg.solve(Ab, rhs)
print("batched", tuple(Ab.shape), "sol mid", sol[:, N // 2, 0])
print("residual small", bool(torch.linalg.norm(Ab @ sol - rhs) < 1e-12))
print("diagonal offsets", torch.diagonal(Ab[0], 1)[:3], torch.diagonal(Ab[0], -1).shape)
P, Lm, Um = torch.linalg.lu(A[:4, :4])
print("lu L diag", torch.diagonal(Lm), "U[0]", Um[0])

# ---------------------------------------------------------------- FFT Poisson
section("Poisson by FFT")
n = 64
Lx = 2 * math.pi
xs = torch.arange(n, dtype=DT) * Lx / n
XX, YY = torch.meshgrid(xs, xs, indexing="xy")
phi_exact = torch.sin(XX) * torch.cos(2 * YY)
f = -5 * phi_exact
k = torch.fft.fftfreq(n, d=Lx / n) * 2 * math.pi
KX, KY = torch.meshgrid(k, k, indexing="xy")
K2 = KX**2 + KY**2
K2[0, 0] = 1.0
fh = torch.fft.fftn(f)
phih = -fh / K2
phih[0, 0] = 0
phi = torch.fft.ifftn(phih).real
print(f"fftn Poisson exact to 1e-12: {(phi - phi_exact).abs().max().item() < 1e-12} "
      f"dtype={phih.dtype}")
kr = torch.fft.rfftfreq(n, d=Lx / n) * 2 * math.pi
KXr, KYr = torch.meshgrid(k, kr, indexing="ij")
K2r = KXr**2 + KYr**2
K2r[0, 0] = 1
fr = torch.fft.rfft2(f)
phir = -fr / K2r
phir[0, 0] = 0
phi2 = torch.fft.irfft2(phir, s=(n, n))
print(f"rfft2 shape={tuple(fr.shape)} ok={torch.allclose(phi2, phi_exact, atol=1e-12)}")
print("fftfreq", torch.fft.fftfreq(8))
print("rfftfreq", torch.fft.rfftfreq(8, d=0.5))
print("fftshift", torch.fft.fftshift(torch.fft.fftfreq(6)))
print("ifftshift", torch.fft.ifftshift(torch.arange(6)))
spec = torch.fft.fft(torch.cos(3 * xs), norm="ortho")
print("peak modes", (spec.abs() > 1).nonzero().flatten().tolist(),
      f"{spec.abs().max().item():.5f}")
sig32 = torch.sin(torch.linspace(0, 4 * math.pi, 16))
S = torch.fft.rfft(sig32, norm="forward")
print("rfft f32", S.dtype, S.abs()[:4])
# spectral derivative
uu = torch.exp(torch.sin(xs))
du = torch.fft.ifft(1j * k * torch.fft.fft(uu)).real
print(f"spectral d/dx err below 1e-10: {(du - torch.cos(xs) * uu).abs().max().item() < 1e-10}")

# ---------------------------------------------------------------- iterative solvers
section("Jacobi / Gauss-Seidel / CG")
m = 16
hj = 1.0 / (m + 1)
src = torch.ones(m, m, dtype=DT)
U = torch.zeros(m + 2, m + 2, dtype=DT)
for it in range(2000):  # noqa: B007 (it is printed after the loop)
    Un = U.clone()
    Un[1:-1, 1:-1] = 0.25 * (U[2:, 1:-1] + U[:-2, 1:-1] + U[1:-1, 2:] + U[1:-1, :-2]
                             + hj * hj * src)
    diff = torch.linalg.norm(Un - U)
    U = Un
    if diff < 1e-8:
        break
print(f"Jacobi iters={it + 1} center={U[m // 2, m // 2].item():.6f} last diff={diff.item():.3e}")
# Gauss-Seidel 1-d
nn1 = 20
h1 = 1.0 / (nn1 + 1)
b1 = torch.full((nn1,), h1 * h1, dtype=DT)
v = torch.zeros(nn1, dtype=DT)
for sweep in range(500):  # noqa: B007
    old = v.clone()
    for i in range(nn1):
        left = v[i - 1] if i > 0 else 0.0
        right = v[i + 1] if i < nn1 - 1 else 0.0
        v[i] = 0.5 * (left + right + b1[i])
    if torch.allclose(v, old, rtol=0, atol=1e-10):
        break
xg = torch.arange(1, nn1 + 1, dtype=DT) * h1
print(f"GS sweeps={sweep + 1} err={(v - xg * (1 - xg) / 2).abs().max().item():.3e}")
print("isclose count", torch.isclose(v, xg * (1 - xg) / 2, atol=1e-6).sum().item())


def lap_matvec(p):
    q = 4 * p.clone()
    q[1:, :] -= p[:-1, :]
    q[:-1, :] -= p[1:, :]
    q[:, 1:] -= p[:, :-1]
    q[:, :-1] -= p[:, 1:]
    return q


bcg = hj * hj * src
xcg = torch.zeros_like(bcg)
rcg = bcg - lap_matvec(xcg)
pcg = rcg.clone()
rs = torch.sum(rcg * rcg)
hist = []
for it in range(200):  # noqa: B007
    Ap = lap_matvec(pcg)
    a = rs / torch.sum(pcg * Ap)
    xcg = xcg + a * pcg
    rcg = rcg - a * Ap
    rs_new = torch.dot(rcg.flatten(), rcg.flatten())
    hist.append(torch.sqrt(rs_new).item())
    if torch.linalg.vector_norm(rcg) < 1e-12:
        break
    pcg = rcg + (rs_new / rs) * pcg
    rs = rs_new
print(f"CG iters={it + 1} |x-jacobi|={(xcg - U[1:-1, 1:-1]).abs().max().item():.3e}")
print("CG residuals", " ".join(f"{r_:.3e}" for r_ in hist[:4]))
print(f"vector_norm ord=inf {torch.linalg.vector_norm(xcg, ord=float('inf')).item():.6f} "
      f"ord=1 {torch.linalg.vector_norm(xcg, ord=1).item():.6f}")
print(f"matrix norms fro={torch.linalg.norm(xcg).item():.6f} "
      f"nuc={torch.linalg.norm(xcg, 'nuc').item():.6f} 2={torch.linalg.norm(xcg, 2).item():.6f}")

# two-grid cycles: weighted-Jacobi smoothing, full-weighting restriction by a strided
# convolution, linear prolongation by interpolate, exact coarse solve
nf = 63
hf = 1.0 / (nf + 1)
xf = torch.arange(1, nf + 1, dtype=DT) * hf
rhs_f = math.pi**2 * torch.sin(math.pi * xf) + 4 * math.pi**2 * torch.sin(2 * math.pi * xf)


def apply_a(v_, hh_):
    vp = F.pad(v_.reshape(1, 1, -1), (1, 1)).flatten()
    return (2 * vp[1:-1] - vp[:-2] - vp[2:]) / hh_**2


def smooth(v_, f_, hh_, sweeps):
    for _ in range(sweeps):
        v_ = v_ + (2.0 / 3.0) * (hh_**2 / 2) * (f_ - apply_a(v_, hh_))
    return v_


nc = (nf - 1) // 2
Ac = (torch.diag(torch.full((nc,), 2.0, dtype=DT)) - torch.diag(torch.ones(nc - 1, dtype=DT), 1)
      - torch.diag(torch.ones(nc - 1, dtype=DT), -1)) / (2 * hf) ** 2
fw = torch.tensor([[[0.25, 0.5, 0.25]]], dtype=DT)
vmg = torch.zeros(nf, dtype=DT)
for cyc in range(6):
    vmg = smooth(vmg, rhs_f, hf, 3)
    res = rhs_f - apply_a(vmg, hf)
    rc = F.conv1d(res.reshape(1, 1, -1), fw, stride=2).flatten()
    ec = torch.linalg.solve(Ac, rc)
    ec_full = F.pad(ec.reshape(1, 1, -1), (1, 1))
    ef = F.interpolate(ec_full, size=2 * (nc + 1) + 1, mode="linear", align_corners=True)
    vmg = smooth(vmg + ef.flatten()[1:-1], rhs_f, hf, 3)
    rn = torch.linalg.vector_norm(rhs_f - apply_a(vmg, hf)) * math.sqrt(hf)
    print(f"  cycle {cyc}: |r|={rn.item():.3e}" if rn > 1e-8 else f"  cycle {cyc}: |r|<1e-8")
exact_mg = torch.sin(math.pi * xf) + torch.sin(2 * math.pi * xf)
print(f"two-grid error vs exact={(vmg - exact_mg).abs().max().item():.4e}")
pooled = F.avg_pool1d(rhs_f.reshape(1, 1, -1)[..., :-1], 2).flatten()
print("avg_pool restriction", tuple(pooled.shape), f"{pooled.abs().max().item():.4e}")

# ---------------------------------------------------------------- wave equation
section("wave equation, leapfrog")
nw = 101
xw = torch.linspace(0, 1, nw, dtype=DT)
dxw = 1.0 / (nw - 1)
c = 1.0
dtw = 0.5 * dxw / c
C2 = (c * dtw / dxw) ** 2
u_prev = torch.sin(2 * math.pi * xw)
u_cur = u_prev.clone()
u_cur[1:-1] = u_prev[1:-1] + 0.5 * C2 * (u_prev[2:] - 2 * u_prev[1:-1] + u_prev[:-2])
energies = []
for n in range(1, 200):
    u_next = torch.zeros_like(u_cur)
    u_next[1:-1] = (2 * u_cur[1:-1] - u_prev[1:-1]
                    + C2 * (u_cur[2:] - 2 * u_cur[1:-1] + u_cur[:-2]))
    u_prev, u_cur = u_cur, u_next
    if n % 50 == 0:
        ut = (u_cur - u_prev) / dtw
        ux = torch.diff(u_cur) / dxw
        energies.append(0.5 * (ut**2).sum().item() * dxw + 0.5 * (ux**2).sum().item() * dxw)
tw = 200 * dtw
exw = torch.sin(2 * math.pi * xw) * math.cos(2 * math.pi * tw)
print(f"t={tw:.4f} err={(u_cur - exw).abs().max().item():.4e}")
print("energies", " ".join(f"{e:.5f}" for e in energies))

# ---------------------------------------------------------------- Burgers
section("Burgers equation, upwind")
nb = 200
xb = torch.linspace(0, 2 * math.pi, nb + 1, dtype=DT)[:-1]
dxb = xb[1].item()
ub = 1.0 + 0.5 * torch.sin(xb)
nu = 0.02
dtb = 0.4 * dxb
for _ in range(150):
    back = (ub - torch.roll(ub, 1)) / dxb
    fwd = (torch.roll(ub, -1) - ub) / dxb
    conv = torch.where(ub > 0, ub * back, ub * fwd)
    diffu = nu * (torch.roll(ub, -1) - 2 * ub + torch.roll(ub, 1)) / dxb**2
    ub = ub - dtb * conv + dtb * diffu
    ub = torch.clamp(ub, min=-5.0, max=5.0)
print(f"Burgers max={ub.max().item():.6f} min={ub.min().item():.6f} mean={ub.mean().item():.6f}")
grad_b = torch.diff(ub, append=ub[:1]) / dxb
print(f"steepest slope={grad_b.min().item():.5f} at x={xb[grad_b.argmin()].item():.5f}")
s = torch.sign(torch.tensor([-2.0, 0.0, 3.0, -0.0]))
print("sign", s, "signbit", torch.signbit(s))
ub2 = torch.sin(xb).float()
flux = 0.5 * ub2**2
lf = 0.5 * (flux + torch.roll(flux, -1)) - 0.5 * ub2.abs().max() * (torch.roll(ub2, -1) - ub2)
print("LF flux float32", lf.dtype, f"{lf.sum().item():.4f}", f"{lf.max().item():.5f}")

# ---------------------------------------------------------------- gradient / diff
section("torch.gradient and torch.diff")
xa = torch.linspace(0, 1, 21, dtype=DT)
fa = torch.sin(2 * xa) + xa**3
dfa = 2 * torch.cos(2 * xa) + 3 * xa**2
(g1,) = torch.gradient(fa, spacing=xa[1].item())
(g2,) = torch.gradient(fa, spacing=xa[1].item(), edge_order=2)
(g3,) = torch.gradient(fa, spacing=(xa,), edge_order=2)
print(f"edge_order=1 err={(g1 - dfa).abs().max().item():.4e} "
      f"edge_order=2 err={(g2 - dfa).abs().max().item():.4e} "
      f"coords err={(g3 - dfa).abs().max().item():.4e}")
xn = torch.tensor([0.0, 0.1, 0.3, 0.6, 1.0, 1.5], dtype=DT)
(gn,) = torch.gradient(xn**2, spacing=(xn,))
print("nonuniform", gn)
F2 = X**2 * Y
gx, gy = torch.gradient(F2, spacing=h)
print(f"2-d grad x err={(gx - 2 * X * Y)[1:-1, 1:-1].abs().max().item():.3e} "
      f"y err={(gy - X**2)[:, 1:-1].abs().max().item():.3e}")
(gd,) = torch.gradient(F2, dim=1, spacing=[2.0 * h], edge_order=2)
print(f"dim=1 spacing list err={(gd - 0.5 * X**2).abs().max().item():.3e}")
gl = torch.gradient(torch.tensor([1.0, 4.0, 9.0, 16.0, 25.0]))
print("float32 gradient", gl[0])
print("diff prepend", torch.diff(torch.tensor([1, 4, 9, 16]), prepend=torch.tensor([0])))
print("diff n=2", torch.diff(fa[:6], n=2))
print("diff dim0", torch.diff(torch.arange(12.0).reshape(3, 4) ** 2, dim=0,
                              append=torch.zeros(1, 4)))
# advection with gradient, RK2
na = 128
xadv = torch.linspace(0, 1, na + 1, dtype=DT)[:-1]
ua = torch.exp(-200 * (xadv - 0.3) ** 2)
dxa = 1.0 / na
dta = 0.2 * dxa
for _ in range(100):
    (ux,) = torch.gradient(ua, spacing=dxa)
    um = ua - 0.5 * dta * ux
    (umx,) = torch.gradient(um, spacing=dxa)
    ua = ua - dta * umx
print(f"advection peak={ua.max().item():.5f} at {xadv[ua.argmax()].item():.5f}")

# ---------------------------------------------------------------- sparse Laplacian
section("sparse 2-d Laplacian")
ms = 8
Ns = ms * ms
rows, cols, vals = [], [], []
for i in range(ms):
    for j in range(ms):
        p = i * ms + j
        rows.append(p)
        cols.append(p)
        vals.append(4.0)
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            ii, jj = i + di, j + dj
            if 0 <= ii < ms and 0 <= jj < ms:
                rows.append(p)
                cols.append(ii * ms + jj)
                vals.append(-1.0)
idx = torch.tensor([rows, cols])
Lsp = torch.sparse_coo_tensor(idx, torch.tensor(vals, dtype=DT), (Ns, Ns))
print("nnz", Lsp._nnz(), "is_coalesced", Lsp.is_coalesced(), "layout", Lsp.layout)
Lc = Lsp.coalesce()
print("coalesced", Lc.is_coalesced(), "indices", tuple(Lc.indices().shape))
dup = torch.sparse_coo_tensor(torch.tensor([[0, 0, 1], [1, 1, 0]]), torch.tensor([1.0, 2.0, 3.0]),
                              (2, 2)).coalesce()
print("dup summed", dup.values(), dup.to_dense())
Ld = Lsp.to_dense()
vec = torch.randn(Ns, 3, dtype=DT)
y1 = torch.sparse.mm(Lsp, vec)
y2 = Ld @ vec
print(f"sparse.mm ok={torch.allclose(y1, y2)} sym={torch.equal(Ld, Ld.T)}")
Lcsr = Lsp.to_sparse_csr()
print("csr", Lcsr.layout, "crow[:5]", Lcsr.crow_indices()[:5].tolist(),
      "col[:5]", Lcsr.col_indices()[:5].tolist())
y3 = Lcsr @ vec
y4 = torch.mm(Lcsr, vec)
print(f"csr matmul ok={torch.allclose(y3, y2)} mm ok={torch.allclose(y4, y2)}")
y5 = torch.sparse.mm(Lc, vec)
print("spmm", tuple(y5.shape), f"{y5.sum().item():.6f}")
absL = Lcsr.abs()
print("Gershgorin radius bound", absL.to_dense().sum(1).max().item(), absL.layout,
      "negatives", int(Lcsr.signbit().values().sum()))
bsp = torch.ones(Ns, dtype=DT) / (ms + 1) ** 2
xsp = torch.linalg.solve(Ld, bsp)
print(f"dense solve of sparse system: max={xsp.max().item():.6f}")
print(f"sparse sum={torch.sparse.sum(Lsp).item():.1f}")
# 1-d Laplacian from its diagonals, and the 2-d one as a Kronecker sum
ones = torch.ones(3, ms, dtype=DT) * torch.tensor([[-1.0], [2.0], [-1.0]], dtype=DT)
T1d = torch.sparse.spdiags(ones, torch.tensor([-1, 0, 1]), (ms, ms))
print("spdiags nnz", T1d._nnz(), "coalesced", T1d.is_coalesced(), "row1", T1d.to_dense()[1, :4])
T1c = torch.sparse.spdiags(ones, torch.tensor([-1, 0, 1]), (ms, ms), layout=torch.sparse_csr)
print("spdiags csr crow", T1c.crow_indices()[:4].tolist(), "layout", T1c.layout)
I1 = torch.eye(ms, dtype=DT)
L2 = torch.kron(T1d.to_dense(), I1) + torch.kron(I1, T1d.to_dense())
print(f"kron sum equals stencil matrix: {torch.equal(L2, Ld)}")

# ---------------------------------------------------------------- eigenmodes
section("eigenmodes")
w_, V_ = torch.linalg.eigh(Ld)
print("smallest eigenvalues", w_[:4])
ex_w = sorted(4 - 2 * math.cos(p_ * math.pi / (ms + 1)) - 2 * math.cos(q_ * math.pi / (ms + 1))
              for p_ in range(1, ms + 1) for q_ in range(1, ms + 1))
print(f"eig matches analytic: {torch.allclose(w_, torch.tensor(ex_w, dtype=DT), atol=1e-12)}")
w1 = torch.linalg.eigvalsh(A)
print("CN eig min/max", f"{w1.min().item():.6f} {w1.max().item():.6f}")
orth = (V_.T @ V_ - torch.eye(Ns, dtype=DT)).abs().max().item()
print(f"orthonormal={orth < 1e-12}")
mode = V_[:, 0].reshape(ms, ms)
mode = mode * torch.sign(mode.sum())
print("mode0 row", mode[ms // 2, :4])
wl, Vl = torch.linalg.eigh(Ld.float(), UPLO="U")
print("float32 eigh", wl.dtype, wl[:3])

# ---------------------------------------------------------------- convergence table
section("convergence orders and Richardson")


def heat_cn_err(nx_):
    xx = torch.linspace(0, 1, nx_ + 2, dtype=DT)[1:-1]
    hx = 1.0 / (nx_ + 1)
    dt_ = hx
    rr = dt_ / hx**2
    Am = (torch.diag(torch.full((nx_,), 1 + rr, dtype=DT))
          + torch.diag(torch.full((nx_ - 1,), -rr / 2, dtype=DT), 1)
          + torch.diag(torch.full((nx_ - 1,), -rr / 2, dtype=DT), -1))
    Bm = 2 * torch.eye(nx_, dtype=DT) - Am
    uu_ = torch.sin(math.pi * xx)
    steps = round(0.1 / dt_)
    for _ in range(steps):
        uu_ = torch.linalg.solve(Am, Bm @ uu_)
    ex_ = torch.sin(math.pi * xx) * math.exp(-math.pi**2 * steps * dt_)
    return (uu_ - ex_).abs().max().item()


errs = torch.tensor([heat_cn_err(nn_) for nn_ in (9, 19, 39, 79)], dtype=DT)
orders = torch.log2(errs[:-1] / errs[1:])
print("h       err        order")
for i, nn_ in enumerate((9, 19, 39, 79)):
    o = f"{orders[i - 1].item():.3f}" if i else "  -  "
    print(f"1/{nn_ + 1:<4d} {errs[i].item():.4e} {o}")


def trap(fun, a, b, n_):
    xx = torch.linspace(a, b, n_ + 1, dtype=DT)
    return torch.trapezoid(fun(xx), xx).item()


I_ex = 1 - math.cos(1.0)
T1 = trap(torch.sin, 0, 1, 8)
T2 = trap(torch.sin, 0, 1, 16)
R = (4 * T2 - T1) / 3
print(f"trapezoid h={T1 - I_ex:.4e} h/2={T2 - I_ex:.4e} richardson={R - I_ex:.4e}")

# ---------------------------------------------------------------- quadrature
section("quadrature")
xq = torch.linspace(0, math.pi, 101, dtype=DT)
print(f"trapezoid dx={torch.trapezoid(torch.sin(xq), dx=math.pi / 100).item():.8f}")
ct = torch.cumulative_trapezoid(torch.cos(xq), xq)
print(f"cumulative err={(ct - torch.sin(xq[1:])).abs().max().item():.4e} shape={tuple(ct.shape)}")
yy2 = torch.stack([torch.sin(xq), torch.cos(xq) ** 2])
print("batched trapezoid", torch.trapezoid(yy2, xq, dim=-1))
print("cumtrapz dx", torch.cumulative_trapezoid(torch.tensor([1.0, 2.0, 4.0, 7.0]), dx=0.5))
print("trapz f32", torch.trapezoid(torch.tensor([1.0, 2.0, 3.0])),
      torch.trapz(torch.arange(5.0), dx=2.0))

# ---------------------------------------------------------------- special functions
section("exact solutions from torch.special")
xe = torch.linspace(-2, 2, 9, dtype=DT)
D, te = 0.1, 0.5
heat_step = 0.5 * torch.special.erfc(-xe / (2 * math.sqrt(D * te)))
print("erfc step", heat_step)
print("erf", torch.special.erf(torch.tensor([0.1, 0.5, 1.0, 2.0], dtype=DT)))
print("erfinv", torch.special.erfinv(torch.tensor([0.0, 0.5, 0.9], dtype=DT)))
rr_ = torch.linspace(0, 10, 6, dtype=DT)
print("j0", torch.special.bessel_j0(rr_))
print("j1", torch.special.bessel_j1(rr_))
print("i0", torch.special.i0(rr_[:4]), "i1e", torch.special.i1e(rr_[:4]))
print("y0", torch.special.bessel_y0(rr_[1:]))
print("j0 f32", torch.special.bessel_j0(torch.tensor([0.5, 2.404825, 5.0])))
# drum mode: first zero of J0 by bisection
lo, hi = torch.tensor(2.0, dtype=DT), torch.tensor(3.0, dtype=DT)
for _ in range(50):
    mid = 0.5 * (lo + hi)
    if torch.special.bessel_j0(lo) * torch.special.bessel_j0(mid) <= 0:
        hi = mid
    else:
        lo = mid
print(f"J0 first zero={mid.item():.10f}")
print("erfcx", torch.special.erfcx(torch.tensor([0.0, 1.0, 10.0], dtype=DT)),
      "ndtr", torch.special.ndtr(torch.tensor([0.0, 1.96], dtype=DT)))

# ---------------------------------------------------------------- autograd through a solver
section("autograd through solver steps")
kappa = torch.tensor(0.3, dtype=DT, requires_grad=True)
u = torch.sin(math.pi * x)
for _ in range(20):
    u = torch.cat([u[:1], u[1:-1] + kappa * dt / dx**2 * (u[2:] - 2 * u[1:-1] + u[:-2]), u[-1:]])
loss = (u**2).sum()
(gk,) = torch.autograd.grad(loss, kappa)
eps = 1e-6


def run(kv):
    uu_ = torch.sin(math.pi * x)
    for _ in range(20):
        lap_ = uu_[2:] - 2 * uu_[1:-1] + uu_[:-2]
        uu_ = torch.cat([uu_[:1], uu_[1:-1] + kv * dt / dx**2 * lap_, uu_[-1:]])
    return (uu_**2).sum().item()


fd = (run(0.3 + eps) - run(0.3 - eps)) / (2 * eps)
print(f"dL/dkappa={gk.item():.6f} fd={fd:.6f} grad_fn={type(loss.grad_fn).__name__}")
kap2 = torch.tensor([0.2, 0.4], dtype=DT, requires_grad=True)
Am = (torch.diag(1 + 2 * kap2[0].expand(N)) + torch.diag(-kap2[1].expand(N - 1), 1)
      + torch.diag(-kap2[1].expand(N - 1), -1))
sol_ = torch.linalg.solve(Am, torch.ones(N, dtype=DT))
sol_.sum().backward()
print("d sum(solve)/d kappa", kap2.grad)
print("solve grad_fn", type(sol_.grad_fn).__name__)

# ---------------------------------------------------------------- Newton with jacfwd
section("Newton solve of a nonlinear BVP with jacfwd")
nN = 15
hN = 1.0 / (nN + 1)
lam = 1.0


def residual(v_):
    vp = F.pad(v_, (1, 1))
    return (vp[2:] - 2 * vp[1:-1] + vp[:-2]) / hN**2 + lam * torch.exp(v_)


vN = torch.zeros(nN, dtype=DT)
for it in range(20):
    Rv = residual(vN)
    J = torch.func.jacfwd(residual)(vN)
    step = torch.linalg.solve(J, -Rv)
    vN = vN + step
    nr = torch.linalg.vector_norm(Rv).item()
    print(f"  newton {it}: |R|={nr:.3e}" if nr > 1e-10 else f"  newton {it}: |R|<1e-10")
    if torch.linalg.vector_norm(step) < 1e-12:
        break
print(f"Bratu max={vN.max().item():.8f} J shape={tuple(J.shape)} "
      f"J tridiag={torch.count_nonzero(J).item()}")
Jr = torch.autograd.functional.jacobian(residual, vN)
print(f"jacobian agree={torch.allclose(J, Jr)}")

# ---------------------------------------------------------------- typical mistakes
section("typical mistakes")


def show(label, fn):
    try:
        out = fn()
        print(f"{label}: no error -> {out}")
    except Exception as e:  # noqa: BLE001
        msg = str(e).splitlines()[0] if str(e) else ""
        print(f"{label}: {type(e).__name__}: {msg}")


sing = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=DT)
show("solve singular", lambda: torch.linalg.solve(sing, torch.ones(2, dtype=DT)))
show("inv singular", lambda: torch.linalg.inv(sing))
show("cond singular p=1", lambda: torch.linalg.cond(sing, p=1))
show("cond singular p=fro", lambda: torch.linalg.cond(torch.zeros(2, 2, dtype=DT), p="fro"))
show("cond rectangular p=1", lambda: torch.linalg.cond(torch.ones(2, 3, dtype=DT), p=1))
show("lu_factor singular", lambda: torch.linalg.lu_factor(sing)[1].tolist())
show("sparse.mm shapes", lambda: torch.sparse.mm(Lsp, torch.ones(Ns + 1, 2, dtype=DT)))
show("fft bad norm", lambda: torch.fft.fft(torch.ones(4), norm="unitary"))
show("gradient spacing length", lambda: torch.gradient(F2, spacing=[h, h, h]))
show("gradient coords length", lambda: torch.gradient(fa, spacing=(xa[:-1],)))
show("gradient too short", lambda: torch.gradient(torch.tensor([1.0]), edge_order=1))
show("gradient edge_order 3", lambda: torch.gradient(fa, edge_order=3))
show("conv2d dtype mismatch", lambda: F.conv2d(T.float()[None, None], lap5))
show("conv1d wrong dims", lambda: F.conv1d(v[0], kern[0, 0]))
show("solve shape", lambda: torch.linalg.solve(A, torch.ones(N + 1, dtype=DT)))
show("eigh non-square", lambda: torch.linalg.eigh(torch.ones(3, 4, dtype=DT)))
show("reflect pad too big", lambda: F.pad(torch.ones(1, 1, 3, dtype=DT), (3, 3), mode="reflect"))
show("trapezoid x length", lambda: torch.trapezoid(torch.ones(5), torch.ones(4)))
show("diff bad prepend", lambda: torch.diff(torch.ones(2, 3), prepend=torch.ones(3)))
show("cholesky not PD", lambda: torch.linalg.cholesky(-torch.eye(2, dtype=DT)))
show("sparse coo index oob", lambda: torch.sparse_coo_tensor(
    torch.tensor([[0, 5]]), torch.ones(2), (3,), check_invariants=True))
show("fftfreq bad", lambda: torch.fft.rfft2(torch.ones(4)))
print("done")
