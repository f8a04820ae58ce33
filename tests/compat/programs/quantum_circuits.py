"""Quantum circuits with complex tensors, written by hand the way torchquantum / PennyLane-torch
users do: gate matrices in complex64 / complex128 (tensor literals, polar, complex(re, im),
exp(1j * theta), cos / sin of real angles), gates applied to a (2,)*n state by einsum and by
tensordot + movedim / permute, kron for full unitaries, matrix_exp of Hermitian generators,
probabilities and shot sampling, Pauli-string expectations, vdot and fidelity, unitarity checks,
the transverse-field Ising ground energy by eigh, a VQE whose real angles get gradients through
complex intermediates (backward, autograd.grad, func.grad and the parameter-shift rule), Adam,
density matrices, partial traces and entanglement entropy, complex printing, and the usual
mistakes with their exception types and messages."""

import math
import os
import tempfile
import warnings

import numpy as np
import torch

torch.manual_seed(0)
torch.set_printoptions(precision=4)

CDT = torch.complex128

# 1. Gate matrices ---------------------------------------------------------------------
I2 = torch.eye(2, dtype=torch.cfloat)
X = torch.tensor([[0, 1], [1, 0]], dtype=torch.cfloat)
Y = torch.tensor([[0, -1j], [1j, 0]], dtype=torch.cfloat)
Z = torch.tensor([[1, 0], [0, -1]], dtype=torch.cfloat)
H = torch.tensor([[1, 1], [1, -1]], dtype=torch.cfloat) / math.sqrt(2)
S = torch.diag(torch.tensor([1, 1j], dtype=torch.cfloat))
T = torch.diag(torch.polar(torch.ones(2), torch.tensor([0.0, math.pi / 4])))
CNOT = torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=torch.cfloat)
CZ = torch.diag(torch.tensor([1, 1, 1, -1], dtype=torch.cfloat))
SWAP = CNOT.new_zeros(4, 4)
SWAP[0, 0] = SWAP[3, 3] = 1
SWAP[1, 2] = SWAP[2, 1] = 1

print("X dtype", X.dtype, "shape", tuple(X.shape), "is_complex", X.is_complex())
print("Y =")
print(Y)
print("H =")
print(H)
print("T =")
print(T)
print("T angles", T.diagonal().angle())
print("S == T @ T:", torch.allclose(S, T @ T, atol=1e-6))
print("XY = iZ:", torch.allclose(X @ Y, 1j * Z))
print("HZH = X:", torch.allclose(H @ Z @ H, X, atol=1e-6))
print("SWAP = CNOT·(CNOT with roles swapped)·CNOT:",
      torch.allclose(SWAP, CNOT @ (torch.kron(H, H) @ CNOT @ torch.kron(H, H)) @ CNOT, atol=1e-6))


def rx(theta):
    c, s = torch.cos(theta / 2), torch.sin(theta / 2)
    return torch.stack([torch.stack([torch.complex(c, torch.zeros_like(c)),
                                     torch.complex(torch.zeros_like(s), -s)]),
                        torch.stack([torch.complex(torch.zeros_like(s), -s),
                                     torch.complex(c, torch.zeros_like(c))])])


def ry(theta):
    c, s = torch.cos(theta / 2), torch.sin(theta / 2)
    return torch.stack([torch.stack([c, -s]), torch.stack([s, c])]).to(CDT)


def rz(theta):
    ph = torch.exp(-0.5j * theta)
    return torch.diag(torch.stack([ph, ph.conj()]))


def phase(phi):
    return torch.diag(torch.stack([torch.ones_like(phi, dtype=CDT), torch.exp(1j * phi)]))


def u3(theta, phi, lam):
    c, s = torch.cos(theta / 2), torch.sin(theta / 2)
    return torch.stack([
        torch.stack([c + 0j, -torch.exp(1j * lam) * s]),
        torch.stack([torch.exp(1j * phi) * s, torch.exp(1j * (phi + lam)) * c]),
    ])


th = torch.tensor(0.7, dtype=torch.float64)
for name, g in [("rx", rx(th)), ("ry", ry(th)), ("rz", rz(th)), ("phase", phase(th)),
                ("u3", u3(th, th / 2, -th))]:
    unitary = torch.allclose(g @ g.mH, torch.eye(2, dtype=g.dtype))
    print(f"{name}: dtype {g.dtype} unitary {unitary} det {torch.linalg.det(g).item():.5f}"
          f" trace {torch.trace(g).item():.5f}")

# generators: exp(-i theta/2 P) equals the rotation
Xd, Yd, Zd = X.to(CDT), Y.to(CDT), Z.to(CDT)
for name, P, f in [("X", Xd, rx), ("Y", Yd, ry), ("Z", Zd, rz)]:
    U = torch.linalg.matrix_exp(-0.5j * th * P)
    print(f"matrix_exp(-i th/2 {name}) == r{name.lower()}: {torch.allclose(U, f(th))}"
          f" max err < 1e-14: {bool((U - f(th)).abs().max() < 1e-14)}")
print("Pauli herm:", [torch.allclose(P, P.mH) for P in (Xd, Yd, Zd)])
print("Pauli eigvalsh:", torch.linalg.eigvalsh(Yd))
print("u3 as view_as_real:")
print(torch.view_as_real(u3(th, th / 2, -th)))

# 2. A state-vector simulator -----------------------------------------------------------


def zero_state(n, dtype=CDT):
    psi = torch.zeros(2 ** n, dtype=dtype)
    psi[0] = 1
    return psi.reshape((2,) * n)


LETTERS = "abcdefghij"


def apply_1q_einsum(psi, gate, q):
    n = psi.dim()
    idx = LETTERS[:n]
    out = idx.replace(idx[q], "z")
    return torch.einsum(f"z{idx[q]},{idx}->{out}", gate, psi)


def apply_1q_tensordot(psi, gate, q):
    out = torch.tensordot(gate, psi, dims=([1], [q]))
    return torch.movedim(out, 0, q)


def apply_2q(psi, gate, q0, q1):
    n = psi.dim()
    g = gate.reshape(2, 2, 2, 2)
    out = torch.tensordot(g, psi, dims=([2, 3], [q0, q1]))
    rest = [i for i in range(n) if i not in (q0, q1)]
    # out axes: (q0, q1, *rest) -> put them back with permute
    perm = [0] * n
    order = [q0, q1] + rest
    for pos, ax in enumerate(order):
        perm[ax] = pos
    return out.permute(perm)


def apply_2q_einsum(psi, gate, q0, q1):
    n = psi.dim()
    idx = LETTERS[:n]
    out = idx.replace(idx[q0], "y").replace(idx[q1], "z")
    return torch.einsum(f"yz{idx[q0]}{idx[q1]},{idx}->{out}", gate.reshape(2, 2, 2, 2), psi)


n = 3
psi = zero_state(n)
psi = apply_1q_einsum(psi, H.to(CDT), 0)
psi = apply_2q(psi, CNOT.to(CDT), 0, 1)
psi = apply_2q_einsum(psi, CNOT.to(CDT), 1, 2)
print("GHZ state shape", tuple(psi.shape), "dtype", psi.dtype)
print("GHZ amplitudes", psi.reshape(-1))
probs = psi.abs().reshape(-1) ** 2
print("GHZ probs", probs, "sum", f"{probs.sum().item():.6f}")
print("probs via z*conj", torch.real(psi * psi.conj()).reshape(-1))

# einsum vs tensordot vs full kron unitary agree
psi0 = torch.randn(2 ** n, dtype=CDT)
psi0 = psi0 / torch.linalg.vector_norm(psi0)
print("random state norm", f"{torch.linalg.norm(psi0).item():.6f}", "dtype", psi0.dtype)
g = u3(torch.tensor(0.3, dtype=torch.float64), torch.tensor(1.1, dtype=torch.float64),
       torch.tensor(-0.4, dtype=torch.float64))
a = apply_1q_einsum(psi0.reshape(2, 2, 2), g, 1).reshape(-1)
b = apply_1q_tensordot(psi0.reshape(2, 2, 2), g, 1).reshape(-1)
full = torch.kron(torch.kron(torch.eye(2, dtype=CDT), g), torch.eye(2, dtype=CDT))
c = full @ psi0
print("einsum == tensordot", torch.allclose(a, b), " == kron", torch.allclose(a, c))
print("full unitary shape", tuple(full.shape), "unitary",
      torch.allclose(full @ full.mH, torch.eye(8, dtype=CDT)))
cz_a = apply_2q(psi0.reshape(2, 2, 2), CZ.to(CDT), 2, 0).reshape(-1)
cz_b = apply_2q_einsum(psi0.reshape(2, 2, 2), CZ.to(CDT), 2, 0).reshape(-1)
print("CZ(2,0) einsum == tensordot", torch.allclose(cz_a, cz_b))
print("amplitude 5 after u3", f"{a[5].item():.5f}", "real", f"{a[5].real.item():.5f}",
      "imag", f"{a[5].imag.item():.5f}", "angle", f"{a[5].angle().item():.5f}")

# measurement by shots
counts = torch.zeros(8, dtype=torch.long)
shots = torch.multinomial(probs.float(), 1000, replacement=True)
counts.scatter_add_(0, shots, torch.ones_like(shots))
print("GHZ counts", counts.tolist())
p_rand = (psi0.abs() ** 2).to(torch.float32)
samples = torch.multinomial(p_rand, 2000, replacement=True)
hist = torch.bincount(samples, minlength=8)
print("random-state counts", hist.tolist())
print("empirical vs exact max diff", f"{(hist / 2000 - p_rand).abs().max().item():.4f}")
bits = ((samples.unsqueeze(-1) >> torch.arange(n - 1, -1, -1)) & 1)
print("bitstrings of first 4 shots", bits[:4].tolist())

# 3. Pauli strings, vdot, fidelity ------------------------------------------------------
PAULI = {"I": torch.eye(2, dtype=CDT), "X": Xd, "Y": Yd, "Z": Zd}


def pauli_matrix(s):
    m = torch.ones(1, 1, dtype=CDT)
    for ch in s:
        m = torch.kron(m, PAULI[ch])
    return m


def expval(state, s):
    flat = state.reshape(-1)
    return torch.vdot(flat, pauli_matrix(s) @ flat).real


def expval_local(state, s):
    # apply each Pauli to its own qubit instead of building the 2^n matrix
    phi = state
    for q, ch in enumerate(s):
        if ch != "I":
            phi = apply_1q_einsum(phi, PAULI[ch], q)
    return torch.sum(state.conj() * phi).real


for s in ["ZII", "ZZI", "XXX", "YYX", "IZZ"]:
    e1 = expval(psi, s)
    e2 = expval_local(psi, s)
    e3 = expval(psi0.reshape(2, 2, 2), s)
    print(f"<{s}> GHZ {e1.item():+.5f} (local {e2.item():+.5f})  random {e3.item():+.5f}")

ov = torch.vdot(psi.reshape(-1), psi0)
print("overlap", f"{ov.item():.5f}", "abs", f"{ov.abs().item():.5f}",
      "fidelity", f"{(ov.abs() ** 2).item():.5f}")
print("vdot conjugates first:", torch.allclose(torch.vdot(psi0, 1j * psi0), 1j + 0 * psi0[0]),
      "dot does not:", f"{torch.dot(psi0, psi0).item():.5f}")
print("inner via mH", f"{(psi0.unsqueeze(-1).mH @ psi0.unsqueeze(-1)).squeeze().item():.5f}")

# 4. Transverse-field Ising Hamiltonian, exact ground energy -----------------------------


def tfim(n, J=1.0, h=0.7):
    dim = 2 ** n
    Hm = torch.zeros(dim, dim, dtype=CDT)
    for i in range(n - 1):
        s = ["I"] * n
        s[i] = s[i + 1] = "Z"
        Hm -= J * pauli_matrix("".join(s))
    for i in range(n):
        s = ["I"] * n
        s[i] = "X"
        Hm -= h * pauli_matrix("".join(s))
    return Hm


n = 4
Hm = tfim(n)
print("H shape", tuple(Hm.shape), "hermitian", torch.allclose(Hm, Hm.mH),
      "nnz", int((Hm != 0).sum()))
evals, evecs = torch.linalg.eigh(Hm)
print("spectrum dtype", evals.dtype, "lowest 4", evals[:4])
E0 = evals[0].item()
ground = evecs[:, 0]
print(f"E0 = {E0:.6f}  <H> of ground {torch.vdot(ground, Hm @ ground).real.item():.6f}")
print(f"gap {(evals[1] - evals[0]).item():.6f}")
print("eigvalsh == eigh", torch.allclose(torch.linalg.eigvalsh(Hm), evals))
U_t = torch.linalg.matrix_exp(-1j * 0.3 * Hm)
print("exp(-iHt) unitary", torch.allclose(U_t @ U_t.mH, torch.eye(16, dtype=CDT)),
      "conserves energy",
      f"{torch.vdot(U_t @ psi0.repeat(2), Hm @ (U_t @ psi0.repeat(2))).real.item() / 2:.5f}"
      f" vs {torch.vdot(psi0.repeat(2), Hm @ psi0.repeat(2)).real.item() / 2:.5f}")

# 5. A variational quantum eigensolver -------------------------------------------------


def ansatz(params, n):
    """Hardware-efficient ansatz: RY+RZ layer, CNOT ladder, repeated."""
    state = zero_state(n)
    layers = params.shape[0]
    for layer in range(layers):
        for q in range(n):
            state = apply_1q_einsum(state, ry(params[layer, q, 0]), q)
            state = apply_1q_tensordot(state, rz(params[layer, q, 1]), q)
        for q in range(n - 1):
            state = apply_2q(state, CNOT.to(CDT), q, q + 1)
    return state


def energy(params):
    st = ansatz(params, n).reshape(-1)
    return torch.vdot(st, Hm @ st).real


params = (0.1 * torch.randn(2, n, 2, dtype=torch.float64)).requires_grad_()
e = energy(params)
print("initial energy", f"{e.item():.6f}", "grad_fn", type(e.grad_fn).__name__,
      "requires_grad", e.requires_grad)
e.backward()
g_backward = params.grad.clone()
print("grad dtype", params.grad.dtype, "shape", tuple(params.grad.shape))
print("grad[0]", g_backward[0])
(g_autograd,) = torch.autograd.grad(energy(params), params)
print("autograd.grad == backward", torch.allclose(g_autograd, g_backward))
g_func = torch.func.grad(energy)(params.detach())
print("func.grad == backward", torch.allclose(g_func, g_backward))


def parameter_shift(params):
    grad = torch.zeros_like(params)
    flat = params.detach().reshape(-1)
    for i in range(flat.numel()):
        plus, minus = flat.clone(), flat.clone()
        plus[i] += math.pi / 2
        minus[i] -= math.pi / 2
        grad.view(-1)[i] = 0.5 * (energy(plus.view_as(params)) - energy(minus.view_as(params)))
    return grad


with torch.no_grad():
    g_shift = parameter_shift(params)
print("parameter shift == backward", torch.allclose(g_shift, g_backward),
      "max diff < 1e-12:", bool((g_shift - g_backward).abs().max() < 1e-12))

# complex intermediate gradients: d|z|^2/dz* convention
z = torch.tensor(1.0 + 2.0j, dtype=CDT, requires_grad=True)
(z * z.conj()).real.backward()
print("grad of |z|^2 at 1+2j:", z.grad, "(= 2z)")
w = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
loss = torch.exp(1j * w).imag.sum() + torch.polar(torch.ones(2, dtype=torch.float64), w).real.sum()
loss.backward()
print("d/dw [sin w + cos w]", w.grad, "exact", torch.cos(w.detach()) - torch.sin(w.detach()))
r = torch.tensor([2.0, 0.5], requires_grad=True)
zz = torch.complex(r, r ** 2)
zz.abs().sum().backward()
print("grad through complex(re, im).abs()", r.grad)
q = torch.tensor([0.4, 1.3], dtype=torch.float64, requires_grad=True)
torch.view_as_real(torch.polar(q, q)).sum().backward()
print("grad through polar+view_as_real", q.grad)
ang = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
torch.angle(torch.exp(1j * ang) * (1 + 1j)).backward()
print("d angle / d theta", f"{ang.grad.item():.5f}")

# training with Adam
params = (0.1 * torch.randn(2, n, 2, dtype=torch.float64)).requires_grad_()
opt = torch.optim.Adam([params], lr=0.1)
for step in range(60):
    opt.zero_grad()
    e = energy(params)
    e.backward()
    opt.step()
    if step % 15 == 0 or step == 59:
        print(f"step {step:2d} energy {e.item():.5f} |grad| {params.grad.norm().item():.5f}")
with torch.no_grad():
    final = ansatz(params, n).reshape(-1)
    e_final = torch.vdot(final, Hm @ final).real.item()
print(f"VQE energy {e_final:.5f} exact {E0:.5f} rel err {abs(e_final - E0) / abs(E0):.3e}")
print(f"fidelity with ground {torch.vdot(ground, final).abs().item() ** 2:.4f}")

# 6. Density matrices, partial trace, entanglement entropy ------------------------------


def density(state):
    flat = state.reshape(-1)
    return torch.outer(flat, flat.conj())


def partial_trace_keep_first(rho, n_keep, n):
    d_keep, d_rest = 2 ** n_keep, 2 ** (n - n_keep)
    r = rho.reshape(d_keep, d_rest, d_keep, d_rest)
    return torch.einsum("ajbj->ab", r)


def von_neumann(rho):
    lam = torch.linalg.eigvalsh(rho).clamp(min=0)
    return -torch.special.xlogy(lam, lam).sum()


rho = density(ground)
print("rho trace", f"{torch.trace(rho).real.item():.6f}", "purity",
      f"{torch.trace(rho @ rho).real.item():.6f}")
for k in (1, 2):
    red = partial_trace_keep_first(rho, k, n)
    print(f"reduced rho ({k} qubits) shape {tuple(red.shape)} trace"
          f" {torch.trace(red).real.item():.5f} purity {torch.trace(red @ red).real.item():.5f}"
          f" entropy {von_neumann(red).item():.5f}")
ghz = torch.zeros(8, dtype=CDT)
ghz[0] = ghz[7] = 1 / math.sqrt(2)
rho_ghz = density(ghz)
rho_a = partial_trace_keep_first(rho_ghz, 1, 3)
print("GHZ reduced", rho_a.real, "entropy (bits)", f"{von_neumann(rho_a).item() / math.log(2):.5f}")
prod = torch.kron(torch.tensor([1, 0], dtype=CDT), torch.tensor([0.6, 0.8j], dtype=CDT))
prod_rho = partial_trace_keep_first(density(prod), 1, 2)
print("product state entropy", f"{von_neumann(prod_rho).item():.5f}")
rho_b = torch.einsum("iaib->ab", rho_ghz.reshape(2, 4, 2, 4))
print("trace out first qubit", tuple(rho_b.shape), rho_b.diagonal().real)
rho_mixed = 0.5 * rho + 0.5 * torch.eye(16, dtype=CDT) / 16
print("mixed state entropy", f"{von_neumann(rho_mixed).item():.5f}",
      "energy", f"{torch.trace(rho_mixed @ Hm).real.item():.5f}")

# 7b. More circuits: QFT vs FFT, Haar-random unitaries, Trotter steps, noise channels ----


def qft_matrix(n, dtype=CDT):
    N = 2 ** n
    k = torch.arange(N, dtype=torch.float64)
    omega = torch.polar(torch.ones(N, N, dtype=torch.float64), 2 * math.pi * torch.outer(k, k) / N)
    return omega.to(dtype) / math.sqrt(N)


F3 = qft_matrix(3)
print("QFT unitary", torch.allclose(F3 @ F3.mH, torch.eye(8, dtype=CDT)))
print("QFT == ifft(ortho)", torch.allclose(F3 @ psi0, torch.fft.ifft(psi0, norm="ortho")))
print("QFT|GHZ> probs", (F3 @ psi.reshape(-1)).abs().pow(2))
print("F^4 == I", torch.allclose(torch.linalg.matrix_power(F3, 4), torch.eye(8, dtype=CDT)))
ev = torch.linalg.eigvals(F3)
print("QFT eigenvalues on unit circle",
      torch.allclose(ev.abs(), torch.ones(8, dtype=torch.float64)),
      "distinct", sorted({round(v, 3) for v in ev.angle().abs().tolist()}))


def haar_unitary(d, gen):
    zr = torch.randn(d, d, dtype=CDT, generator=gen)
    qm, rm = torch.linalg.qr(zr)
    ph = torch.diagonal(rm) / torch.diagonal(rm).abs()
    return qm * ph.unsqueeze(0)


gen = torch.Generator().manual_seed(1234)
Uh = haar_unitary(4, gen)
print("Haar unitary", torch.allclose(Uh.mH @ Uh, torch.eye(4, dtype=CDT)),
      f"|det| {torch.linalg.det(Uh).abs().item():.5f}")
sv = torch.linalg.svdvals(Uh)
print("singular values", sv)
print("inverse == adjoint", torch.allclose(torch.linalg.inv(Uh), Uh.mH))
sol = torch.linalg.solve(Uh, psi0[:4])
print("solve", torch.allclose(Uh @ sol, psi0[:4]), "norm kept", f"{sol.norm().item():.5f}",
      f"vs {psi0[:4].norm().item():.5f}")
print("matrix norms fro/2", f"{torch.linalg.matrix_norm(Uh).item():.5f}",
      f"{torch.linalg.matrix_norm(Uh, ord=2).item():.5f}")

# Trotterized evolution of the Ising chain versus the exact propagator
Hzz = sum(-pauli_matrix("".join("Z" if j in (i, i + 1) else "I" for j in range(n)))
          for i in range(n - 1))
Hx = sum(-0.7 * pauli_matrix("".join("X" if j == i else "I" for j in range(n))) for i in range(n))
print("Hzz + Hx == H", torch.allclose(Hzz + Hx, Hm), "commute",
      torch.allclose(Hzz @ Hx, Hx @ Hzz))
t_total = 1.0
start = zero_state(n).reshape(-1)
exact = torch.linalg.matrix_exp(-1j * t_total * Hm) @ start
for steps in (1, 4, 16):
    dt_ = t_total / steps
    Uzz = torch.diag(torch.exp(-1j * dt_ * torch.diagonal(Hzz)))
    Ux = torch.linalg.matrix_exp(-1j * dt_ * Hx)
    st = start.clone()
    for _ in range(steps):
        st = Ux @ (Uzz @ st)
    print(f"trotter steps {steps:2d} infidelity {1 - torch.vdot(exact, st).abs().item() ** 2:.4e}")

# noise: depolarizing and amplitude damping channels on a single qubit (Kraus form)
plus = torch.tensor([1, 1], dtype=CDT) / math.sqrt(2)
rho1 = torch.outer(plus, plus.conj())


def channel(rho, kraus):
    return torch.einsum("kab,bc,kdc->ad", kraus, rho, kraus.conj())


p_dep = 0.2
K_dep = torch.stack([math.sqrt(1 - 3 * p_dep / 4) * PAULI["I"], math.sqrt(p_dep / 4) * Xd,
                     math.sqrt(p_dep / 4) * Yd, math.sqrt(p_dep / 4) * Zd])
gamma = 0.3
K_ad = torch.tensor([[[1, 0], [0, math.sqrt(1 - gamma)]], [[0, math.sqrt(gamma)], [0, 0]]],
                    dtype=CDT)
for name, K in [("depolarizing", K_dep), ("amplitude damping", K_ad)]:
    complete = torch.einsum("kba,kbc->ac", K.conj(), K)
    out = channel(rho1, K)
    w, V = torch.linalg.eigh(rho1)
    sq = (V * w.clamp(min=0).sqrt()) @ V.mH
    fid = torch.linalg.eigvalsh(sq @ out @ sq).clamp(min=0).sqrt().sum() ** 2
    print(f"{name}: trace-preserving {torch.allclose(complete, PAULI['I'])}"
          f" <X> {torch.trace(out @ Xd).real.item():.5f}"
          f" <Z> {round(torch.trace(out @ Zd).real.item(), 5) + 0.0:+.5f}"  # (+0.0: no -0 noise)
          f" purity {torch.trace(out @ out).real.item():.5f} fidelity {fid.item():.5f}")
print("Bloch vector after damping", torch.stack([torch.trace(channel(rho1, K_ad) @ P).real
                                                 for P in (Xd, Yd, Zd)]))

# 7c. Circuits as nn.Modules, batched with vmap, Hessians, complex parameters ----------


class VQECircuit(torch.nn.Module):
    def __init__(self, n, layers):
        super().__init__()
        self.n = n
        self.theta = torch.nn.Parameter(0.1 * torch.randn(layers, n, 2, dtype=torch.float64))

    def forward(self):
        return ansatz(self.theta, self.n).reshape(-1)


model = VQECircuit(n, 2)
print(model)
print("parameters", [(k, tuple(v.shape), v.dtype) for k, v in model.named_parameters()])
out_state = model()
print("state dtype", out_state.dtype, "requires_grad", out_state.requires_grad,
      "grad_fn", type(out_state.grad_fn).__name__)
fid = torch.vdot(ground, out_state).abs() ** 2
fid.backward()
print("fidelity", f"{fid.item():.5f}", "grad norm", f"{model.theta.grad.norm().item():.5f}")

batch = 0.3 * torch.randn(5, 2, n, 2, dtype=torch.float64)
e_batch = torch.func.vmap(energy)(batch)
e_loop = torch.stack([energy(b) for b in batch])
print("vmap energies", e_batch, "== loop", torch.allclose(e_batch, e_loop))
g_batch = torch.func.vmap(torch.func.grad(energy))(batch)
print("vmap(grad) shape", tuple(g_batch.shape), "matches", torch.allclose(
    g_batch[2], torch.func.grad(energy)(batch[2])))
small = torch.tensor([0.4, -0.3], dtype=torch.float64)


def two_qubit_energy(angles):
    st = zero_state(2)
    st = apply_1q_einsum(st, ry(angles[0]), 0)
    st = apply_1q_einsum(st, rx(angles[1]), 1)
    st = apply_2q(st, CNOT.to(CDT), 0, 1).reshape(-1)
    return (torch.vdot(st, pauli_matrix("ZZ") @ st).real
            + 0.5 * torch.vdot(st, pauli_matrix("XI") @ st).real
            - 0.3 * torch.vdot(st, pauli_matrix("IY") @ st).real)


print("energy", f"{two_qubit_energy(small).item():.5f}")
print("jacrev", torch.func.jacrev(two_qubit_energy)(small))
print("hessian", torch.func.hessian(two_qubit_energy)(small))

# Hellmann-Feynman: dE0/dh through eigh of a Hamiltonian built from a real parameter
h_field = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
Hh = Hzz + h_field * (Hx / 0.7)
E0h = torch.linalg.eigvalsh(Hh)[0]
E0h.backward()
v0 = torch.linalg.eigh(Hh.detach())[1][:, 0]
print(f"dE0/dh autograd {h_field.grad.item():.5f} Hellmann-Feynman"
      f" {torch.vdot(v0, (Hx / 0.7) @ v0).real.item():.5f}")

# a variational state with complex amplitudes as the parameter (Wirtinger gradient)
amps = torch.randn(2 ** n, dtype=CDT, requires_grad=True)
opt = torch.optim.Adam([amps], lr=0.05)
for step in range(80):
    opt.zero_grad()
    st = amps / amps.norm()
    e = torch.vdot(st, Hm @ st).real
    e.backward()
    opt.step()
    if step in (0, 79):
        print(f"complex-parameter Adam step {step} energy {e.item():.5f}"
              f" grad dtype {amps.grad.dtype}")
amps_lb = torch.randn(2 ** n, dtype=CDT, requires_grad=True)
lbfgs = torch.optim.LBFGS([amps_lb], lr=1, max_iter=5, line_search_fn="strong_wolfe")


def rayleigh():
    lbfgs.zero_grad()
    st_ = amps_lb / amps_lb.norm()
    e_ = torch.vdot(st_, Hm @ st_).real
    e_.backward()
    return e_


for outer in range(3):
    e_lb = lbfgs.step(rayleigh)
    print(f"complex-parameter LBFGS round {outer} energy {e_lb.item():.4f}")
z0 = torch.tensor([0.5 + 0.5j, -1.0j], dtype=CDT, requires_grad=True)
print("gradcheck |z|^2", torch.autograd.gradcheck(lambda t: (t * t.conj()).real.sum(), (z0,)))
print("gradcheck exp(z)",
      torch.autograd.gradcheck(lambda t: torch.view_as_real(torch.exp(t)), (z0,)))
print("complex promotion", torch.promote_types(torch.float64, torch.complex64),
      torch.result_type(torch.ones(1), 1j), (torch.ones(2, dtype=torch.float64) * 1j).dtype)
print("complex math", torch.sqrt(torch.tensor(-4 + 0j)), torch.log(torch.tensor(-1 + 0j)),
      torch.tensor(1 + 1j).reciprocal(), torch.tensor(3 + 4j) / torch.tensor(1 - 2j))
zq = torch.tensor([1 + 1j, -0.5j, 2.25], dtype=CDT)
print("isclose", torch.isclose(zq, zq + 1e-9j), torch.where(zq.abs() > 1, zq, 0).tolist())

# 7d. Everyday complex-tensor handling -----------------------------------------------
states = torch.randn(3, 4, dtype=torch.cfloat)
states = states / torch.linalg.vector_norm(states, dim=-1, keepdim=True)
gates = torch.stack([torch.kron(H, I2), CNOT, torch.kron(S, T)])
batched = torch.einsum("...ij,...j->...i", gates, states)
print("batched einsum", tuple(batched.shape), batched.dtype,
      "== bmm",
      torch.allclose(batched, torch.bmm(gates, states.unsqueeze(-1)).squeeze(-1), atol=1e-6),
      "== matmul", torch.allclose(batched, (gates @ states.unsqueeze(-1))[..., 0], atol=1e-6))
print("norms kept", torch.linalg.vector_norm(batched, dim=-1))
print("sum/mean", f"{states.sum().item():.4f}", f"{states.mean().item():.4f}",
      "var (real)", states.var().dtype, f"{states.var().item():.5f}",
      f"{states.std(dim=1)[0].item():.5f}")
print("cumsum", states[0].cumsum(0))
print("prod of phases", torch.exp(1j * torch.tensor([0.1, 0.2, 0.3])).prod())
print("roll/flip", states[0].roll(1)[0] == states[0][-1], states[0].flip(0)[0] == states[0][-1])
cu = torch.block_diag(I2, rx(torch.tensor(0.5)).to(torch.cfloat))
print("controlled-RX", tuple(cu.shape), cu.dtype, "unitary",
      torch.allclose(cu @ cu.mH, torch.eye(4, dtype=torch.cfloat), atol=1e-6))
print("controlled-RX", cu)
st = torch.zeros(4, dtype=torch.cfloat)
st[0] = 1j
st[3] = -1
st.mul_(1 / math.sqrt(2))
st.masked_fill_(st.abs() < 1e-9, 0)
print("in-place complex edits", st)
st2 = torch.zeros(4, dtype=CDT).index_put_((torch.tensor([1, 2]),),
                                           torch.tensor([0.6j, 0.8], dtype=CDT))
print("index_put", st2, "scatter",
      torch.zeros(4, dtype=CDT).scatter(0, torch.tensor([3]), st2[1:2]))
nz = torch.from_numpy(np.array([1 + 2j, 3 - 4j]))
print("from_numpy", nz.dtype, nz, "to numpy", st2.numpy().dtype, st2.numpy()[1])
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "state.pt")
    torch.save({"psi": st2, "gate": cu}, path)
    back = torch.load(path)
    print("saved/loaded", back["psi"].dtype, torch.equal(back["psi"], st2),
          torch.equal(back["gate"], cu))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    as_real = st2.to(torch.float64)
print("complex -> real cast", as_real,
      [(w.category.__name__, "discards the imaginary part" in str(w.message)) for w in caught])
print("real/conj/angle of real tensors", torch.real(torch.tensor([-2.0, 3.0])),
      torch.tensor([-2.0, 3.0]).conj(), torch.tensor([-2.0, 3.0]).angle())
print("isreal", torch.isreal(torch.tensor([1 + 0j, 1j])), torch.tensor([1, 2j]).dtype,
      torch.tensor([1.5, 2j], dtype=CDT).dtype)
print("complex64 abs dtype", torch.abs(states).dtype, "eig of real rotation",
      torch.linalg.eig(torch.tensor([[0.0, -1.0], [1.0, 0.0]]))[0])
print("fft of a real state", torch.fft.fft(torch.tensor([1.0, 0.0, 0.0, 1.0]) / math.sqrt(2)))
cat_probs = (psi0.abs() ** 2).float()
dist = torch.distributions.Categorical(probs=cat_probs)
shots = dist.sample((6,))
print("Categorical shots", shots.tolist(), "log_prob", dist.log_prob(shots[:3]),
      "entropy", f"{dist.entropy().item():.5f}")
print("without replacement", torch.multinomial(cat_probs, 4).tolist())
t_evo = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
U_evo = torch.linalg.matrix_exp(-1j * t_evo * Hm)
e_t = torch.vdot(U_evo @ start, pauli_matrix("ZIII") @ (U_evo @ start)).real
e_t.backward()
print(f"<Z0>(t) {e_t.item():.5f} d/dt via matrix_exp backward {t_evo.grad.item():.5f}")
hh = Hm.detach().clone().requires_grad_()
ev_h, vec_h = torch.linalg.eigh(hh)
(ev_h[0] + (vec_h[:, 0].abs() ** 2)[0]).backward()
print("eigh backward (gauge invariant loss) grad[0,:3]", hh.grad[0, :3])
jac = torch.autograd.functional.jacobian(lambda a: torch.view_as_real(rz(a)).sum(), small[0])
print("functional.jacobian", f"{jac.item():.5f}")

# sparse Hamiltonians: the Ising chain as a COO matrix, its adjoint, Lanczos-free power steps
Hs = Hm.to_sparse()
print("sparse H", Hs.layout, "nnz", Hs._nnz(), "dtype", Hs.dtype,
      "H psi == dense", torch.allclose(Hs @ psi0.repeat(2), Hm @ psi0.repeat(2)))
print("sparse adjoint == dense", torch.allclose((Hs.conj().t() @ psi0.repeat(2)),
                                                Hm.mH @ psi0.repeat(2)))
shifted = (Hs * -1).coalesce()
vec = torch.ones(16, dtype=CDT) / 4
for _ in range(200):  # power iteration on 6 - H finds the ground state
    vec = 6 * vec + shifted @ vec
    vec = vec / torch.linalg.vector_norm(vec)
print(f"power-iteration energy {torch.vdot(vec, Hs @ vec).real.item():.5f} (exact {E0:.5f})")

# 7. Printing complex tensors ------------------------------------------------------------
zc = torch.tensor([1 + 1j, -0.5j, 2.25, 0], dtype=torch.cfloat)
print(zc)
print(zc.real, zc.imag)
print(zc.angle())
print(zc.abs())
print(torch.view_as_real(zc))
print(torch.view_as_complex(torch.tensor([[1.0, -2.0], [0.5, 0.25]])))
print(zc.conj(), zc.conj().resolve_conj().is_conj())
print(zc.to(torch.complex128).dtype, zc.real.dtype, torch.zeros(2, dtype=CDT).real.dtype)
print(torch.exp(1j * torch.linspace(0, math.pi, 4)))
print(torch.tensor(3 + 4j), torch.tensor(3 + 4j).abs(), torch.tensor([3 + 4j]).dtype)
print(torch.randn(2, 2, dtype=torch.cfloat))
print(torch.sgn(zc), torch.polar(torch.tensor([2.0]), torch.tensor([math.pi / 3])))

# 8. Typical mistakes --------------------------------------------------------------------


def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok -> {out}")
    except Exception as exc:  # noqa: BLE001
        print(f"{label}: {type(exc).__name__}: {exc}")


real_state = torch.ones(2)
attempt("real *= complex in place", lambda: real_state.mul_(torch.tensor([1j, 1j])))
attempt("real += 1j in place", lambda: real_state.add_(1j))
attempt("multinomial on complex", lambda: torch.multinomial(psi.reshape(-1), 2))
attempt("item of multi-element", lambda: psi.reshape(-1).item())
attempt("float() of complex", lambda: float(torch.tensor(1 + 1j)))
zl = torch.tensor(1.0 + 1.0j, requires_grad=True)
attempt("backward on complex loss", lambda: (zl * 2).backward())
attempt("autograd.grad complex output", lambda: torch.autograd.grad(zl * zl, zl))
attempt("kron result shape", lambda: tuple(torch.kron(torch.ones(2, 3), torch.ones(4, 5)).shape))
attempt("kron then matmul wrong size", lambda: torch.kron(X, X) @ torch.ones(2, dtype=torch.cfloat))
attempt("apply gate to wrong axis size",
        lambda: torch.tensordot(torch.eye(4, dtype=CDT), zero_state(2), dims=([1], [0])))
attempt("complex64 @ complex128", lambda: (X @ Xd).dtype)
attempt("complex @ real", lambda: X @ torch.eye(2))
attempt("eigvalsh real dtype", lambda: torch.linalg.eigvalsh(Hm).dtype)
attempt("compare complex", lambda: torch.tensor(1j) < torch.tensor(2j))
attempt("max of complex", lambda: torch.tensor([1j, 2]).max())
attempt("view_as_complex bad shape", lambda: torch.view_as_complex(torch.ones(2, 3)))
attempt("complex of mixed dtypes",
        lambda: torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64)))
attempt("polar with int",
        lambda: torch.polar(torch.ones(2, dtype=torch.long), torch.zeros(2, dtype=torch.long)))
attempt("clamp on complex", lambda: torch.clamp(zc, min=0))
attempt("allclose complex vs real", lambda: torch.allclose(zc, zc.real))
attempt("imag of a real tensor", lambda: torch.ones(2).imag)
attempt("complex dtype into float tensor", lambda: torch.tensor(1j, dtype=torch.float32))
attempt("matrix_exp of non-square", lambda: torch.linalg.matrix_exp(torch.ones(2, 3, dtype=CDT)))
attempt("eigh of a complex vector", lambda: torch.linalg.eigh(psi0))
attempt("vdot of mismatched dtypes", lambda: torch.vdot(psi0, psi0.to(torch.cfloat)))
attempt("vdot of 2-D", lambda: torch.vdot(Hm, Hm))
attempt("einsum wrong operand count", lambda: torch.einsum("ij,j->i", Hm))
attempt("einsum size mismatch", lambda: torch.einsum("ij,j->i", Hm, psi0))
attempt("multinomial negative probs", lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1))
attempt("multinomial too many without replacement",
        lambda: torch.multinomial(torch.tensor([0.5, 0.5]), 3))
attempt("polar of complex abs", lambda: torch.polar(zc, zc.real))
attempt("grad of real loss w.r.t. complex view", lambda: torch.autograd.grad(zl.abs(), zl))
attempt("jacrev of a complex-valued gate", lambda: torch.func.jacrev(rz)(th))
attempt("jacfwd with a complex state", lambda: torch.func.jacfwd(lambda s: s.abs())(psi0))
attempt("func.grad of complex amplitude", lambda: torch.func.grad(lambda t: rz(t)[0, 0])(th))
attempt("arange of complex dtype", lambda: torch.arange(4, dtype=CDT))
attempt("arange to a complex bound", lambda: torch.arange(0, 2j))


def fused_complex_step():
    zp = torch.zeros(2, dtype=CDT, requires_grad=True)
    o = torch.optim.Adam([zp], lr=0.1, fused=True)
    zp.grad = torch.ones_like(zp)
    o.step()


attempt("fused Adam on complex parameters", fused_complex_step)


def phase_dependent_loss():
    hq = (Hm + 0.3 * pauli_matrix("YZII")).requires_grad_()  # (complex eigenvectors)
    torch.linalg.eigh(hq)[1][:, 0].real.sum().backward()  # depends on the eigenvector's phase


attempt("loss on the phase of an eigenvector", phase_dependent_loss)
