"""Tensor networks and multilinear algebra: MPS, MPO, DMRG-lite, TEBD, TT/CP/Tucker.

Written as a physicist / ML researcher would with torch: float64 and complex128,
einsum everywhere, QR/SVD canonicalisation, and only gauge-invariant numbers printed.
"""

import math
import warnings

import torch

torch.manual_seed(0)
torch.set_printoptions(precision=4)

DT = torch.float64
CT = torch.complex128


def f(x):
    """Format a float with 5 significant digits."""
    x = x.detach() if isinstance(x, torch.Tensor) else x
    return f"{float(x):.5g}"


# ---------------------------------------------------------------- Pauli operators
sx = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=CT)
sy = torch.tensor([[0.0, -1j], [1j, 0.0]], dtype=CT)
sz = torch.tensor([[1.0, 0.0], [0.0, -1.0]], dtype=CT)
eye2 = torch.eye(2, dtype=CT)
print("paulis hermitian:", all(torch.allclose(p, p.mH) for p in (sx, sy, sz)))
comm = sx @ sy - sy @ sx
print("[sx,sy] == 2i sz:", torch.allclose(comm, 2j * sz))
print("sy as real:", torch.view_as_real(sy).shape, torch.view_as_real(sy)[0, 1].tolist())
sxsx = torch.kron(sx, sx)
print("kron(sx,sx) shape", tuple(sxsx.shape), sxsx.dtype, "trace", sxsx.trace().real.item())
print("kron real*complex dtype:", torch.kron(torch.eye(2, dtype=DT), sz).dtype)


# ---------------------------------------------------------------- dtype promotion
a64 = torch.ones(2, dtype=DT)
a32 = torch.ones(2, dtype=torch.float32)
c64 = torch.ones(2, dtype=torch.complex64)
print("f64+c64 ->", (a64 + c64).dtype)
print("f32+cdouble ->", (a32 + torch.ones(2, dtype=torch.cdouble)).dtype)
print("f32 * 1j ->", (a32 * 1j).dtype)
print("f64 * 1j ->", (a64 * 1j).dtype)
print("result_type(c64, f64):", torch.result_type(c64, a64))
print("promote_types(float64, complex64):", torch.promote_types(DT, torch.complex64))
print("int64 tensor * 1j ->", (torch.arange(3) * 1j).dtype)


# ---------------------------------------------------------------- einsum forms
A = torch.randn(3, 4, dtype=DT)
B = torch.randn(4, 5, dtype=DT)
M = torch.randn(4, 4, dtype=DT)
print("einsum matmul ok:", torch.allclose(torch.einsum("ij,jk->ik", A, B), A @ B))
print("einsum sublist ok:", torch.allclose(torch.einsum(A, [0, 1], B, [1, 2], [0, 2]), A @ B))
print("einsum sublist ellipsis:", torch.einsum(A, [Ellipsis, 1], B, [1, 2], [Ellipsis, 2]).shape)
print("diag 'ii->i':", f(torch.einsum("ii->i", M).sum()), f(M.diagonal().sum()))
print("trace 'ii':", f(torch.einsum("ii", M)), f(M.trace()))
print(
    "transpose 'ij->ji':",
    torch.einsum("ij->ji", A).shape,
    torch.einsum("ij->ji", A).is_contiguous(),
)
T4 = torch.randn(2, 3, 4, 5, dtype=DT)
print("ellipsis '...ij->...ji':", tuple(torch.einsum("...ij->...ji", T4).shape))
print("ellipsis middle 'a...b->ba...':", tuple(torch.einsum("a...b->ba...", T4).shape))
batched = torch.einsum(
    "bij,bjk->bik", torch.randn(6, 2, 3, dtype=DT), torch.randn(6, 3, 2, dtype=DT)
)
print("batched matmul:", tuple(batched.shape))
outer = torch.einsum("i,j->ij", torch.arange(3.0, dtype=DT), torch.arange(4.0, dtype=DT))
print("outer:", outer.sum().item())
print("reorder 'ijk->kij':", tuple(torch.einsum("ijk->kij", T4[0]).shape))
print("full sum 'ijkl->':", f(torch.einsum("ijkl->", T4)), f(T4.sum()))
diag3 = torch.randn(3, 3, 3, dtype=DT)
print("'iii->i':", [f(v) for v in torch.einsum("iii->i", diag3)])
print("'iij->ij' shape:", tuple(torch.einsum("iij->ij", diag3).shape))
print(
    "einsum list operands:",
    f(torch.einsum("i,i->", [torch.ones(3, dtype=DT), torch.arange(3.0, dtype=DT)])),
)
cplx = torch.randn(3, 3, dtype=CT)
print(
    "complex einsum 'ij,ij->' == vdot-like:",
    torch.allclose(torch.einsum("ij,ij->", cplx.conj(), cplx).real, (cplx.abs() ** 2).sum()),
)
print("einsum mixed dtype:", end=" ")
try:
    print(torch.einsum("i,i->", torch.ones(2, dtype=DT), torch.ones(2, dtype=CT)).dtype)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])


# layouts users rely on when they .view() an einsum result
ki = torch.einsum("ij,jk->ki", A, B)
print("einsum 'ij,jk->ki' contiguous:", ki.is_contiguous(), "view(-1):", tuple(ki.view(-1).shape))
kr3 = torch.einsum(
    "ir,jr,kr->ijk",
    torch.randn(3, 2, dtype=DT),
    torch.randn(4, 2, dtype=DT),
    torch.randn(5, 2, dtype=DT),
)
print("khatri-rao 3-way strides:", kr3.stride(), "grad_fn:", type(kr3.grad_fn).__name__)
print(
    "einsum hadamard broadcast strides:",
    torch.einsum("ij,ij->ij", torch.ones(1, 4, dtype=DT), A).stride(),
)
At = A.detach().clone().requires_grad_().t()
print(
    "reshape of transposed grad_fn:",
    At.reshape(2, 6).grad_fn.name() if At.reshape(2, 6).grad_fn else None,
    At.reshape(4, 3, 1).grad_fn.name(),
)


# ---------------------------------------------------------------- tensordot
X = torch.randn(2, 3, 4, dtype=DT)
Y = torch.randn(3, 4, 5, dtype=DT)
print("tensordot int:", tuple(torch.tensordot(X, Y, dims=2).shape))
print("tensordot lists:", tuple(torch.tensordot(X, Y, dims=([1, 2], [0, 1])).shape))
print("tensordot tuple of ints:", tuple(torch.tensordot(X, Y, dims=([1], [0])).shape))
print(
    "tensordot dims=0:",
    tuple(torch.tensordot(torch.ones(2, dtype=DT), torch.ones(3, dtype=DT), dims=0).shape),
)
print(
    "tensordot == einsum:",
    torch.allclose(torch.tensordot(X, Y, dims=([1, 2], [0, 1])), torch.einsum("ijk,jkl->il", X, Y)),
)
bond = torch.ones(1, 1, dtype=DT)
print(
    "tensordot size-1 bond vs size-2:",
    tuple(torch.tensordot(bond, X, dims=([1], [0])).shape),
    f(torch.tensordot(torch.ones(3, 1, dtype=DT), X, dims=([1], [0])).sum()),
)
print("tensordot tensor dims:", tuple(torch.tensordot(X, Y, dims=torch.tensor([[1], [0]])).shape))


# ---------------------------------------------------------------- MPS basics
def random_mps(n, d, chi, dtype=DT):
    """Open-boundary random MPS: list of (left, phys, right) tensors."""
    dims = [1] + [min(chi, d ** min(i, n - i)) for i in range(1, n)] + [1]
    return [torch.randn(dims[i], d, dims[i + 1], dtype=dtype) for i in range(n)]


def mps_overlap(a, b):
    """<a|b> by zipping transfer matrices."""
    env = torch.ones(1, 1, dtype=torch.promote_types(a[0].dtype, b[0].dtype))
    for ta, tb in zip(a, b):
        env = torch.einsum("ab,asc,bsd->cd", env, ta.conj(), tb)
    return env.squeeze()


def left_canonicalize(mps, mode="reduced"):
    """Sweep left to right with QR, return new tensors and the norm."""
    out = []
    carry = torch.ones(1, 1, dtype=mps[0].dtype)
    for t in mps:
        t = torch.tensordot(carry, t, dims=([1], [0]))
        l, d, r = t.shape
        q, rr = torch.linalg.qr(t.reshape(l * d, r), mode=mode)
        if mode == "complete":
            q, rr = q[:, :r], rr[:r, :]
        k = q.shape[1]
        out.append(q.reshape(l, d, k))
        carry = rr
    return out, carry.squeeze()


def entanglement_spectrum(mps, cut):
    """Schmidt values across bond `cut` after left-canonicalising the left part."""
    mps, _ = left_canonicalize(mps)
    psi = mps[0]
    for t in mps[1:]:
        psi = torch.tensordot(psi, t, dims=1)
    psi = psi.squeeze(0).squeeze(-1)
    d = psi.shape[0]
    mat = psi.reshape(d**cut, -1)
    s = torch.linalg.svdvals(mat)
    return s / s.norm()


def entropy(s):
    p = s**2
    return -torch.xlogy(p, p).sum()


n_sites, d, chi = 6, 2, 4
mps = random_mps(n_sites, d, chi)
print("bond dims:", [t.shape[2] for t in mps])
norm2 = mps_overlap(mps, mps)
print("<psi|psi> > 0:", norm2.item() > 0)
for mode in ("reduced", "complete"):
    can, nrm = left_canonicalize(mps, mode=mode)
    iso = all(
        torch.allclose(torch.einsum("asb,asc->bc", t, t), torch.eye(t.shape[2], dtype=DT))
        for t in can
    )
    print(f"qr mode={mode}: isometries {iso}, |norm|^2/overlap = {f(nrm.abs() ** 2 / norm2)}")
r_only = torch.linalg.qr(torch.randn(5, 3, dtype=DT), mode="r")
print(
    "qr mode=r: Q numel",
    r_only.Q.numel(),
    "R shape",
    tuple(r_only.R.shape),
    "R diag |.|",
    [f(v) for v in r_only.R.diagonal().abs()],
)
s = entanglement_spectrum(mps, 3)
print(
    "schmidt values:", [f(v) for v in s if v > 1e-12], "numerically zero:", int((s <= 1e-12).sum())
)
print("entanglement entropy:", f(entropy(s)))
print("xlogy(0,0):", torch.xlogy(torch.tensor(0.0, dtype=DT), torch.tensor(0.0, dtype=DT)).item())


# ---------------------------------------------------------------- SVD truncation
def svd_truncate(mat, chi_max, cutoff=1e-10):
    u, s, vh = torch.linalg.svd(mat, full_matrices=False)
    keep = min(chi_max, int((s > cutoff * s[0]).sum()))
    disc = (s[keep:] ** 2).sum() / (s**2).sum()
    return u[:, :keep], s[:keep], vh[:keep], disc


lowrank = torch.randn(8, 3, dtype=DT) @ torch.randn(3, 8, dtype=DT)
u, sv, vh, disc = svd_truncate(lowrank, 6)
print(
    "low-rank kept:", sv.numel(), "discarded weight:", f"{disc.item():.1e}" if disc > 1e-20 else "0"
)
print("reconstruction err ok:", torch.dist(u @ torch.diag(sv) @ vh, lowrank).item() < 1e-10)
u, sv, vh, disc = svd_truncate(torch.randn(8, 8, dtype=DT), 3)
print("truncated to 3, discarded weight:", f(disc))
uc, svc, vhc = torch.linalg.svd(torch.randn(4, 6, dtype=CT), full_matrices=False)
print(
    "complex svd shapes:", tuple(uc.shape), tuple(svc.shape), tuple(vhc.shape), svc.dtype, uc.dtype
)
print("U unitary:", torch.allclose(uc.mH @ uc, torch.eye(4, dtype=CT)))


# ---------------------------------------------------------------- exact state + Pauli expectations
def mps_to_vector(mps):
    psi = mps[0]
    for t in mps[1:]:
        psi = torch.tensordot(psi, t, dims=([-1], [0]))
    return psi.reshape(-1)


def local_op(op, site, n):
    ops = [eye2] * n
    ops[site] = op
    out = ops[0]
    for o in ops[1:]:
        out = torch.kron(out, o)
    return out


psi = mps_to_vector(mps).to(CT)
psi = psi / torch.linalg.vector_norm(psi)
for name, op in (("X", sx), ("Y", sy), ("Z", sz)):
    vals = [(psi.conj() @ local_op(op, i, n_sites) @ psi) for i in range(n_sites)]
    print(
        f"<{name}_i>:",
        [f(v.real) for v in vals],
        "max |imag| small:",
        bool(max(abs(v.imag) for v in vals) < 1e-12),
    )
zz = local_op(sz, 1, n_sites) @ local_op(sz, 2, n_sites)
print("<Z1 Z2>:", f(torch.vdot(psi, zz @ psi).real))


# ---------------------------------------------------------------- TFIM Hamiltonian as MPO
def tfim_mpo(n, J=1.0, h=0.5):
    W = torch.zeros(3, 3, 2, 2, dtype=DT)
    I, X, Z = torch.eye(2, dtype=DT), sx.real.to(DT), sz.real.to(DT)
    W[0, 0] = I
    W[1, 0] = Z
    W[2, 0] = -h * X
    W[2, 1] = -J * Z
    W[2, 2] = I
    first = W[2:3]
    last = W[:, 0:1]
    return [first] + [W] * (n - 2) + [last]


def mpo_to_matrix(mpo):
    out = mpo[0]
    for w in mpo[1:]:
        out = torch.einsum("aBij,Bckl->acikjl", out, w)
        a, c, i, k, j, l = out.shape
        out = out.reshape(a, c, i * k, j * l)
    return out.squeeze(0).squeeze(0)


def tfim_dense(n, J=1.0, h=0.5):
    H = torch.zeros(2**n, 2**n, dtype=CT)
    for i in range(n - 1):
        H -= J * local_op(sz, i, n) @ local_op(sz, i + 1, n)
    for i in range(n):
        H -= h * local_op(sx, i, n)
    return H


H_mpo = mpo_to_matrix(tfim_mpo(n_sites))
H_dense = tfim_dense(n_sites)
print("MPO == dense H:", torch.allclose(H_mpo.to(CT), H_dense), H_mpo.dtype)
evals = torch.linalg.eigvalsh(H_mpo)
print("exact E0, gap:", f(evals[0]), f(evals[1] - evals[0]))
evals_c, evecs_c = torch.linalg.eigh(H_dense)
print("complex eigh dtype:", evals_c.dtype, evecs_c.dtype, "E0", f(evals_c[0]))
print(
    "ground state |<Z0 Z1>|:",
    f(
        torch.vdot(
            evecs_c[:, 0], local_op(sz, 0, n_sites) @ local_op(sz, 1, n_sites) @ evecs_c[:, 0]
        ).real.abs()
    ),
)


def mpo_expect(mps, mpo):
    env = torch.ones(1, 1, 1, dtype=DT)
    for a, w in zip(mps, mpo):
        env = torch.einsum("xyz,xsa,ybst,ztc->abc", env, a.conj(), w, a)
    return env.squeeze()


E_mpo = mpo_expect(mps, tfim_mpo(n_sites)) / mps_overlap(mps, mps)
E_vec = torch.vdot(psi, H_dense @ psi).real
print("random MPS energy (mpo vs dense):", f(E_mpo), f(E_vec))


# ---------------------------------------------------------------- DMRG-lite (two-site, small)
def dmrg_two_site(mpo, n, chi_max, sweeps=3):
    """Two-site DMRG with dense effective Hamiltonians (fine for 6 sites)."""
    mps_ = random_mps(n, 2, chi_max)
    flipped, _ = left_canonicalize([t.permute(2, 1, 0) for t in mps_[::-1]])
    mps_ = [t.permute(2, 1, 0) for t in flipped[::-1]]  # right-canonical
    energies = []
    for sweep in range(2 * sweeps):
        right = sweep % 2 == 0
        for i in range(n - 1) if right else range(n - 2, -1, -1):
            L = torch.ones(1, 1, 1, dtype=DT)
            for a, w in zip(mps_[:i], mpo[:i]):
                L = torch.einsum("xyz,xsa,ybst,ztc->abc", L, a, w, a)
            R = torch.ones(1, 1, 1, dtype=DT)
            for a, w in zip(mps_[: i + 1 : -1], mpo[: i + 1 : -1]):
                R = torch.einsum("abc,xsa,ybst,ztc->xyz", R, a, w, a)
            Heff = torch.einsum("xya,ybst,bcuv,zcd->xsuzatvd", L, mpo[i], mpo[i + 1], R)
            dl, dr = L.shape[0], R.shape[0]
            size = dl * 4 * dr
            evals_, evecs_ = torch.linalg.eigh(Heff.reshape(size, size))
            energies.append(evals_[0].item())
            theta = evecs_[:, 0].reshape(dl * 2, 2 * dr)
            u, sv_, vh_, _ = svd_truncate(theta, chi_max)
            if right:  # move the orthogonality centre right
                mps_[i] = u.reshape(dl, 2, -1)
                mps_[i + 1] = (torch.diag(sv_) @ vh_).reshape(-1, 2, dr)
            else:
                mps_[i] = (u * sv_).reshape(dl, 2, -1)
                mps_[i + 1] = vh_.reshape(-1, 2, dr)
    return energies, mps_


energies, gs = dmrg_two_site(tfim_mpo(n_sites), n_sites, chi_max=8, sweeps=2)
print("DMRG energies (last 3):", [f(e) for e in energies[-3:]], "exact", f(evals[0]))
print("DMRG error < 1e-6:", abs(energies[-1] - evals[0].item()) < 1e-6)
gs_vec = mps_to_vector(gs)
print(
    "DMRG state fidelity:",
    f(torch.dot(gs_vec / gs_vec.norm(), torch.linalg.eigh(H_mpo)[1][:, 0]).abs()),
)
print("DMRG entropy mid-chain:", f(entropy(entanglement_spectrum(gs, 3))))


# ---------------------------------------------------------------- power iteration
v = torch.randn(2**n_sites, dtype=DT)
shifted = H_mpo - 10 * torch.eye(2**n_sites, dtype=DT)
for _ in range(300):
    v = shifted @ v
    v = v / v.norm()
print("power-iteration E0:", f(v @ H_mpo @ v))


# ---------------------------------------------------------------- TEBD with matrix_exp
def tebd(n, J, h, dt, steps, chi_max):
    """Real-time evolution of |000...> under TFIM, first-order Trotter."""
    hzz = -J * torch.kron(sz, sz) - 0.5 * h * (torch.kron(sx, eye2) + torch.kron(eye2, sx))
    gate = torch.linalg.matrix_exp(-1j * dt * hzz).reshape(2, 2, 2, 2)
    state = [torch.zeros(1, 2, 1, dtype=CT) for _ in range(n)]
    for t in state:
        t[0, 0, 0] = 1
    disc_total = 0.0
    for _ in range(steps):
        for parity in (0, 1):
            for i in range(parity, n - 1, 2):
                theta = torch.einsum("asb,btc->astc", state[i], state[i + 1])
                theta = torch.einsum("stuv,auvc->astc", gate, theta)
                a_, _, _, c_ = theta.shape
                u, sv_, vh_, disc_ = svd_truncate(theta.reshape(a_ * 2, 2 * c_), chi_max)
                disc_total += disc_.item()
                state[i] = u.reshape(a_, 2, -1)
                state[i + 1] = (torch.diag(sv_).to(CT) @ vh_).reshape(-1, 2, c_)
    return state, disc_total


gate_h = -torch.kron(sz, sz)
U = torch.linalg.matrix_exp(-1j * 0.1 * gate_h)
print("gate unitary:", torch.allclose(U @ U.mH, torch.eye(4, dtype=CT)), U.dtype)
print("matrix_exp(0):", torch.linalg.matrix_exp(torch.zeros(2, 2, dtype=DT)).tolist())
print("matrix_exp batched:", tuple(torch.linalg.matrix_exp(torch.randn(3, 2, 2, dtype=DT)).shape))
st, disc_total = tebd(n_sites, 1.0, 0.5, 0.05, 10, 8)
vec = mps_to_vector(st)
print("TEBD norm:", f(vec.norm()), "discarded:", "small" if disc_total < 1e-8 else f(disc_total))
mz = [f((vec.conj() @ local_op(sz, i, n_sites) @ vec).real) for i in range(n_sites)]
print("TEBD <Z_i>(t=0.5):", mz)
exact = torch.linalg.matrix_exp(-1j * 0.5 * H_dense)[:, 0]
print("TEBD vs exact overlap:", f(torch.vdot(exact, vec).abs()))


# ---------------------------------------------------------------- TT-SVD of a function on a grid
def tt_svd(tensor, eps=1e-10):
    dims = tensor.shape
    cores, r = [], 1
    c = tensor.contiguous()
    for k in range(len(dims) - 1):
        c = c.reshape(r * dims[k], -1)
        u, s_, vh_ = torch.linalg.svd(c, full_matrices=False)
        rk = int((s_ > eps * s_[0]).sum())
        cores.append(u[:, :rk].reshape(r, dims[k], rk))
        c = s_[:rk, None] * vh_[:rk]
        r = rk
    cores.append(c.reshape(r, dims[-1], 1))
    return cores


grid = torch.linspace(0, 1, 8, dtype=DT)
g1, g2, g3, g4 = torch.meshgrid(grid, grid, grid, grid, indexing="ij")
fun = torch.sin(g1 + g2 + g3 + g4)
cores = tt_svd(fun)
print("TT ranks sin(sum):", [c.shape[2] for c in cores[:-1]])
recon = cores[0]
for c in cores[1:]:
    recon = torch.tensordot(recon, c, dims=([recon.dim() - 1], [0]))
recon = recon.squeeze(0).squeeze(-1)
print(
    "TT reconstruction rel err < 1e-10:",
    (torch.linalg.norm(recon - fun) / torch.linalg.norm(fun)).item() < 1e-10,
)
fun2 = 1.0 / (1.0 + g1 + 2 * g2 + 3 * g3 + 4 * g4)
cores2 = tt_svd(fun2.permute(3, 2, 1, 0), eps=1e-6)
print("TT ranks 1/(1+sum) permuted, eps 1e-6:", [c.shape[2] for c in cores2[:-1]])
print(
    "permuted contiguous:",
    fun2.permute(3, 2, 1, 0).is_contiguous(),
    fun2.permute(3, 2, 1, 0).contiguous().stride(),
)


# ---------------------------------------------------------------- CP-ALS
def khatri_rao(a, b):
    return torch.einsum("ir,jr->ijr", a, b).reshape(-1, a.shape[1])


def unfold(t, mode):
    return t.movedim(mode, 0).reshape(t.shape[mode], -1)


def cp_als(t, rank, iters):
    factors = [torch.randn(s, rank, dtype=DT) for s in t.shape]
    for _ in range(iters):
        for m in range(3):
            others = [factors[k] for k in range(3) if k != m]
            kr = khatri_rao(others[0], others[1])
            sol = torch.linalg.lstsq(kr, unfold(t, m).T).solution
            factors[m] = sol.T
    return factors


ta, tb, tc = torch.randn(5, 2, dtype=DT), torch.randn(4, 2, dtype=DT), torch.randn(3, 2, dtype=DT)
cp_target = torch.einsum("ir,jr,kr->ijk", ta, tb, tc)
fac = cp_als(cp_target, 2, 30)
cp_rec = torch.einsum("ir,jr,kr->ijk", *fac)
print(
    "CP-ALS rank-2 rel err < 1e-6:",
    (torch.norm(cp_rec - cp_target) / torch.norm(cp_target)).item() < 1e-6,
)
kr = khatri_rao(tb, tc)
pinv_sol = torch.linalg.pinv(kr) @ unfold(cp_target, 0).T
print(
    "pinv vs lstsq:",
    torch.allclose(pinv_sol, torch.linalg.lstsq(kr, unfold(cp_target, 0).T).solution),
)
print(
    "pinv shape:",
    tuple(torch.linalg.pinv(kr).shape),
    "rank of KR:",
    torch.linalg.matrix_rank(kr).item(),
)
lst = torch.linalg.lstsq(torch.randn(6, 3, dtype=DT), torch.randn(6, 2, dtype=DT))
print(
    "lstsq fields:",
    type(lst).__name__,
    tuple(lst.solution.shape),
    lst.residuals.shape,
    lst.rank.shape,
)


# ---------------------------------------------------------------- Tucker / HOSVD
def hosvd(t, ranks):
    us = []
    for m, r in enumerate(ranks):
        u_, _, _ = torch.linalg.svd(unfold(t, m), full_matrices=False)
        us.append(u_[:, :r])
    core = t
    for u_ in us:
        core = torch.tensordot(core, u_, dims=([0], [0]))  # rotates modes to the back
    return core, us


tk = torch.randn(6, 5, 4, dtype=DT)
core, us = hosvd(tk, (6, 5, 4))
rec = torch.einsum("abc,ia,jb,kc->ijk", core, *us)
print("HOSVD full rank exact:", torch.allclose(rec, tk))
core_t, us_t = hosvd(tk, (3, 3, 2))
rec_t = torch.einsum("abc,ia,jb,kc->ijk", core_t, *us_t)
print(
    "Tucker (3,3,2) core",
    tuple(core_t.shape),
    "rel err",
    f(torch.norm(rec_t - tk) / torch.norm(tk)),
)
print(
    "core all-orthogonality:",
    bool((unfold(core, 0) @ unfold(core, 0).T).triu(1).abs().max() < 1e-10),
)
print(
    "movedim multi:", tuple(tk.movedim((0, 1), (2, 0)).shape), tuple(torch.movedim(tk, -1, 0).shape)
)


# ---------------------------------------------------------------- autograd
def energy_of(tensors):
    return mpo_expect(tensors, tfim_mpo(len(tensors))) / mps_overlap(tensors, tensors)


mps_g = [t.clone().requires_grad_() for t in random_mps(4, 2, 2)]
E = energy_of(mps_g)
grads = torch.autograd.grad(E, mps_g)
print("dE/dA shapes:", [tuple(g.shape) for g in grads], "grad_fn", type(E.grad_fn).__name__)
# gauge invariance: a scale of one tensor changes nothing -> <A, dE/dA> = 0
print(
    "scale invariance <A,dE/dA>:",
    [abs(float((a.detach() * g).sum())) < 1e-10 for a, g in zip(mps_g, grads)],
)
eps = 1e-6
dirn = [torch.randn_like(t) for t in mps_g]
with torch.no_grad():
    ep = energy_of([t + eps * d_ for t, d_ in zip(mps_g, dirn)])
    em = energy_of([t - eps * d_ for t, d_ in zip(mps_g, dirn)])
fd = (ep - em) / (2 * eps)
an = sum((g * d_).sum() for g, d_ in zip(grads, dirn))
print("directional derivative fd vs autograd rel:", (abs(fd - an) / abs(an)).item() < 1e-6)

# through svd: entanglement entropy gradient (gauge invariant)
mat = torch.randn(4, 4, dtype=DT, requires_grad=True)
s_ = torch.linalg.svdvals(mat)
S = entropy(s_ / s_.norm())
(gS,) = torch.autograd.grad(S, mat)
print("entropy", f(S), "grad norm", f(gS.norm()), "grad_fn", type(s_.grad_fn).__name__)
u_, s2, vh2 = torch.linalg.svd(mat, full_matrices=False)
(gS2,) = torch.autograd.grad((s2**2).sum() + (u_[:, :2] @ vh2[:2]).abs().sum() * 0, mat)
print("d(sum s^2)/dA == 2A:", torch.allclose(gS2, 2 * mat))
# through qr: |R_ii| product is |det|
mq = torch.randn(3, 3, dtype=DT, requires_grad=True)
q_, r_ = torch.linalg.qr(mq)
logdet = r_.diagonal().abs().log().sum()
(gq,) = torch.autograd.grad(logdet, mq)
print("d log|det| / dA == inv(A).T:", torch.allclose(gq, torch.linalg.inv(mq).T.detach()))
# through eigh: ground energy
hs = torch.randn(5, 5, dtype=DT)
hs = (hs + hs.T).requires_grad_()
w_, v_ = torch.linalg.eigh(hs)
(gh,) = torch.autograd.grad(w_[0], hs)
vv = v_[:, 0].detach()
print("dE0/dH == v v^T:", torch.allclose(gh, torch.outer(vv, vv)))
# complex eigh gradient through a real loss
hc = torch.randn(3, 3, dtype=CT)
hc = (hc + hc.mH).requires_grad_()
wc, _ = torch.linalg.eigh(hc)
(ghc,) = torch.autograd.grad(wc[0], hc)
print("complex eigh grad dtype", ghc.dtype, "hermitian:", torch.allclose(ghc, ghc.mH))
# gradcheck on a small contraction
ga = torch.randn(2, 3, dtype=DT, requires_grad=True)
gb = torch.randn(3, 2, 2, dtype=DT, requires_grad=True)
gc_ = torch.randn(2, dtype=CT, requires_grad=True)
print(
    "gradcheck einsum:",
    torch.autograd.gradcheck(lambda x, y: torch.einsum("ij,jkl->ikl", x, y), (ga, gb)),
)
print(
    "gradcheck tensordot complex:",
    torch.autograd.gradcheck(lambda y, z: torch.tensordot(y.to(CT), z, dims=([2], [0])), (gb, gc_)),
)
print(
    "gradcheck kron:",
    torch.autograd.gradcheck(torch.kron, (ga, ga.detach().clone().requires_grad_())),
)
gm = (0.3 * torch.randn(2, 2, dtype=DT)).requires_grad_()
print("gradcheck matrix_exp:", torch.autograd.gradcheck(torch.linalg.matrix_exp, (gm,)))


# ---------------------------------------------------------------- vmap over a batch of states
states = torch.randn(5, 2**3, dtype=CT)
states = states / torch.linalg.vector_norm(states, dim=1, keepdim=True)
Z0 = local_op(sz, 0, 3)


def expect_z0(psi_):
    return torch.vdot(psi_, Z0 @ psi_).real


batched_vals = torch.func.vmap(expect_z0)(states)
loop_vals = torch.stack([expect_z0(p) for p in states])
print(
    "vmap <Z0>:",
    [f(v) for v in batched_vals],
    "matches loop:",
    torch.allclose(batched_vals, loop_vals),
)


def purity(psi_):
    m = psi_.reshape(2, 4)
    rho = m @ m.mH
    return torch.einsum("ij,ji->", rho, rho).real


print("vmap purity:", [f(v) for v in torch.func.vmap(purity)(states)])
print(
    "vmap einsum batch dims:",
    tuple(
        torch.func.vmap(lambda a_: torch.einsum("ij,jk->ik", a_, a_))(
            torch.randn(4, 3, 3, dtype=DT)
        ).shape
    ),
)


# ---------------------------------------------------------------- typical mistakes
def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok", tuple(out.shape) if hasattr(out, "shape") else out)
    except Exception as e:  # noqa: BLE001 - we print what the user would see
        print(f"{label}: {type(e).__name__}: {str(e).splitlines()[0]}")


attempt(
    "einsum mismatched dims", lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(4, 5))
)
attempt("einsum wrong operand count", lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3)))
attempt("einsum bad output label", lambda: torch.einsum("ij->k", torch.ones(2, 3)))
attempt("einsum subscripts vs ndim", lambda: torch.einsum("ijk->i", torch.ones(2, 3)))
attempt("einsum repeated output", lambda: torch.einsum("ij->ii", torch.ones(2, 2)))
attempt(
    "tensordot wrong dims",
    lambda: torch.tensordot(torch.ones(2, 3), torch.ones(4, 5), dims=([1], [0])),
)
attempt(
    "tensordot mismatched list lengths",
    lambda: torch.tensordot(torch.ones(2, 3), torch.ones(3, 2), dims=([1, 0], [0])),
)
attempt(
    "tensordot negative int", lambda: torch.tensordot(torch.ones(2, 3), torch.ones(3, 2), dims=-1)
)
attempt("kron of 0-d", lambda: torch.kron(torch.tensor(2.0), torch.tensor(3.0)))
attempt("kron 0-d with matrix", lambda: torch.kron(torch.tensor(2.0), torch.ones(2, 2)))
attempt("qr bad mode", lambda: torch.linalg.qr(torch.ones(3, 3), mode="full"))
attempt("eigh non-square", lambda: torch.linalg.eigh(torch.ones(2, 3)))
attempt("eigh bad UPLO", lambda: torch.linalg.eigh(torch.eye(2), UPLO="X"))
attempt("matrix_exp non-square", lambda: torch.linalg.matrix_exp(torch.ones(2, 3)))
attempt("svd of 1-d", lambda: torch.linalg.svd(torch.ones(3)))
attempt("lstsq mismatched rows", lambda: torch.linalg.lstsq(torch.ones(3, 2), torch.ones(4, 1)))
attempt("view_as_real of real", lambda: torch.view_as_real(torch.ones(2)))
attempt(
    "complex + int add ok",
    lambda: (torch.ones(2, dtype=CT) + torch.ones(2, dtype=torch.int64)).dtype,
)


def qr_r_backward():
    x = torch.randn(3, 3, dtype=DT, requires_grad=True)
    r = torch.linalg.qr(x, mode="r").R
    r.sum().backward()
    return x.grad


attempt("qr mode='r' backward", qr_r_backward)


def degenerate_svd_backward():
    x = torch.eye(3, dtype=DT).requires_grad_()
    u, s, vh = torch.linalg.svd(x)
    (u.sum() + vh.sum()).backward()
    return x.grad


attempt("svd backward degenerate", degenerate_svd_backward)


def degenerate_svdvals_backward():
    x = torch.eye(3, dtype=DT).requires_grad_()
    torch.linalg.svdvals(x).sum().backward()
    return x.grad


attempt("svdvals backward degenerate ok", lambda: degenerate_svdvals_backward().diagonal().tolist())


def degenerate_eigvalsh_backward():
    x = torch.eye(3, dtype=DT).requires_grad_()
    (torch.linalg.eigvalsh(x) * torch.arange(3.0, dtype=DT)).sum().backward()
    return x.grad


attempt(
    "eigvalsh backward degenerate ok", lambda: degenerate_eigvalsh_backward().diagonal().tolist()
)
nuc = torch.ones(3, 3, dtype=DT, requires_grad=True)
torch.linalg.matrix_norm(nuc, 2).backward()
print("spectral norm grad of rank-1:", [f(v) for v in nuc.grad.flatten()[:3]])


def complex_svd_gauge_backward():
    x = torch.randn(3, 3, dtype=CT, requires_grad=True)
    u, s, vh = torch.linalg.svd(x)
    u[:, 0].real.sum().backward()
    return x.grad


attempt("complex svd gauge-dependent loss", complex_svd_gauge_backward)


def eigh_degenerate_backward():
    x = torch.eye(3, dtype=DT).requires_grad_()
    w, v = torch.linalg.eigh(x)
    v.sum().backward()
    return x.grad


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    attempt(
        "eigh backward degenerate", lambda: torch.isfinite(eigh_degenerate_backward()).all().item()
    )
print("pi check:", f(math.pi))
