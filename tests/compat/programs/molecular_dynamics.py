"""A small molecular-dynamics study in plain PyTorch: Lennard-Jones particles with harmonic
bonds in a periodic box (minimum image via torch.round, wrapping via torch.remainder),
pair distances by broadcasting and by torch.cdist in each compute_mode, neighbour lists
from triu_indices / masks / nonzero, per-particle energies via scatter_add and index_add_,
forces as -autograd.grad(energy, pos) checked against the analytic forces, velocity Verlet
for 50 steps with the energy drift, a Berendsen thermostat, the radial distribution function
by histc and by bucketize, mean-square displacement via cumsum, the inertia tensor's eigh,
torques by torch.cross, clamp / where / nan_to_num guards, a tiny MLP pair potential trained
by force matching (create_graph=True) with Adam, and the usual mistakes."""

import math

import torch
from torch import nn

torch.manual_seed(0)
N_SIDE = 3
N = N_SIDE ** 3
BOX = 5.0
SIGMA, EPS, R_CUT = 1.0, 1.0, 2.5
K_BOND, R0_BOND = 20.0, 1.6


def lattice(dtype: torch.dtype) -> torch.Tensor:
    """Simple cubic lattice, jittered, filling the box."""
    g = torch.arange(N_SIDE, dtype=dtype) * (BOX / N_SIDE) + 0.5 * BOX / N_SIDE
    x, y, z = torch.meshgrid(g, g, g, indexing="ij")
    p = torch.stack([x.flatten(), y.flatten(), z.flatten()], dim=1)
    return p + 0.05 * torch.randn(N, 3, dtype=dtype)


def minimum_image(d: torch.Tensor, box: float = BOX) -> torch.Tensor:
    return d - box * torch.round(d / box)


def wrap(p: torch.Tensor, box: float = BOX) -> torch.Tensor:
    return torch.remainder(p, box)


pos0 = lattice(torch.float64)
print("positions", pos0.shape, pos0.dtype, f"{pos0.min().item():.4f} {pos0.max().item():.4f}")
shifted = pos0 + torch.tensor([BOX, -BOX, 2 * BOX], dtype=torch.float64)
print("wrap restores", torch.allclose(wrap(shifted), pos0), wrap(torch.tensor([-0.5, 5.5, 10.0])))
print("round half-even", torch.round(torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])))
print("remainder signs", torch.remainder(torch.tensor([-7.0, 7.0]), torch.tensor([3.0, -3.0])),
      torch.fmod(torch.tensor([-7.0, 7.0]), 3.0))

# --- pair distances -------------------------------------------------------------------
diff = minimum_image(pos0[:, None, :] - pos0[None, :, :])
r_all = diff.norm(dim=-1)
print("diff", diff.shape, "max |component|", f"{diff.abs().max().item():.4f}",
      "<= box/2", bool((diff.abs() <= BOX / 2 + 1e-12).all()))
print("diagonal zero", bool(torch.diagonal(r_all).eq(0).all()), "symmetric",
      torch.equal(r_all, r_all.T))
raw = torch.sqrt(((pos0[:, None] - pos0[None]) ** 2).sum(-1))
for mode in ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist"]:
    c = torch.cdist(pos0, pos0, compute_mode=mode)
    print(f"cdist {mode}: {c.shape} {c.dtype} close={torch.allclose(c, raw, atol=1e-6)}")
c32 = torch.cdist(pos0.float()[None], pos0.float()[None], p=2.0)
print("cdist batched f32", c32.shape, c32.dtype, f"{c32[0, 0, 1].item():.5f}")
print("cdist p=1 / inf", f"{torch.cdist(pos0[:4], pos0[4:8], p=1).sum().item():.5f}",
      f"{torch.cdist(pos0[:4], pos0[4:8], p=float('inf')).max().item():.5f}")

# --- neighbour lists ------------------------------------------------------------------
iu, ju = torch.triu_indices(N, N, offset=1)
print("pairs", iu.shape, iu.dtype, iu[:5].tolist(), ju[:5].tolist())
r_pairs = r_all[iu, ju]
within = r_pairs < R_CUT
nbr_i, nbr_j = iu[within], ju[within]
print("neighbours within cutoff", int(within.sum()), "of", iu.numel())
mask = (r_all < R_CUT) & ~torch.eye(N, dtype=torch.bool)
nz = torch.nonzero(mask)
print("nonzero", nz.shape, nz.dtype, "half", nz.shape[0] // 2 == int(within.sum()))
rows, cols = torch.nonzero(torch.triu(mask), as_tuple=True)
print("as_tuple agrees", torch.equal(rows, nbr_i), torch.equal(cols, nbr_j))
n_per = mask.sum(dim=1)
print("neighbours per particle", n_per.min().item(), n_per.max().item(), n_per.dtype,
      f"{n_per.float().mean().item():.4f}")
bonds = torch.stack([torch.arange(N - 1), torch.arange(1, N)])
print("bonds", bonds.shape, bonds[:, :3].tolist())


def lj_pair(r: torch.Tensor) -> torch.Tensor:
    sr6 = (SIGMA / r) ** 6
    shift = 4 * EPS * ((SIGMA / R_CUT) ** 12 - (SIGMA / R_CUT) ** 6)
    return 4 * EPS * (sr6 ** 2 - sr6) - shift


def energy_terms(pos: torch.Tensor, i: torch.Tensor, j: torch.Tensor):
    d = minimum_image(pos[i] - pos[j])
    r = torch.clamp(d.norm(dim=1), min=1e-6)  # guard against coincident particles
    e_lj = torch.where(r < R_CUT, lj_pair(r), torch.zeros_like(r))
    bd = minimum_image(pos[bonds[0]] - pos[bonds[1]])
    rb = bd.norm(dim=1)
    e_bond = 0.5 * K_BOND * (rb - R0_BOND) ** 2
    return e_lj, e_bond


def total_energy(pos: torch.Tensor) -> torch.Tensor:
    e_lj, e_bond = energy_terms(pos, iu, ju)
    return e_lj.sum() + e_bond.sum()


e_lj, e_bond = energy_terms(pos0, iu, ju)
print("pair energy range", f"{e_lj.min().item():.5f} {e_lj.max().item():.5f}",
      "zero beyond cutoff", int((e_lj == 0).sum()))
per_atom = torch.zeros(N, dtype=torch.float64).scatter_add(0, iu, 0.5 * e_lj)
per_atom = per_atom.scatter_add(0, ju, 0.5 * e_lj)
per_atom2 = torch.zeros(N, dtype=torch.float64)
per_atom2.index_add_(0, iu, e_lj, alpha=0.5).index_add_(0, ju, e_lj, alpha=0.5)
per_atom2.index_add_(0, bonds[0], 0.5 * e_bond).index_add_(0, bonds[1], 0.5 * e_bond)
print("per-atom LJ", f"{per_atom[:4].tolist()[0]:.5f}", per_atom.shape,
      "sums agree", torch.allclose(per_atom.sum(), e_lj.sum()))
print("per-atom total", torch.allclose(per_atom2.sum(), e_lj.sum() + e_bond.sum()),
      f"E_lj={e_lj.sum().item():.4f} E_bond={e_bond.sum().item():.4f}")

# --- forces from autograd -------------------------------------------------------------
pos = pos0.clone().requires_grad_(True)
E = total_energy(pos)
(g,) = torch.autograd.grad(E, pos)
forces = -g
print("energy", f"{E.item():.4f}", E.grad_fn.name(), "forces", forces.shape, forces.dtype)
print("net force ~ 0", f"{forces.sum(0).abs().max().item() < 1e-9}")


def analytic_forces(p: torch.Tensor) -> torch.Tensor:
    d = minimum_image(p[iu] - p[ju])
    r = d.norm(dim=1, keepdim=True)
    sr6 = (SIGMA / r) ** 6
    mag = torch.where(r < R_CUT, 24 * EPS * (2 * sr6 ** 2 - sr6) / r ** 2, torch.zeros_like(r))
    fij = mag * d
    f = torch.zeros_like(p).index_add_(0, iu, fij).index_add_(0, ju, -fij)
    bd = minimum_image(p[bonds[0]] - p[bonds[1]])
    rb = bd.norm(dim=1, keepdim=True)
    fb = -K_BOND * (rb - R0_BOND) * bd / rb
    return f.index_add_(0, bonds[0], fb).index_add_(0, bonds[1], -fb)


fa = analytic_forces(pos0)
print("autograd == analytic", torch.allclose(forces, fa, rtol=1e-9, atol=1e-9),
      f"max |F| {fa.norm(dim=1).max().item():.4f}")
com = pos0.mean(0)
torques = torch.cross(pos0 - com, fa, dim=1)
print("torques", torques.shape, f"net {torques.sum(0).norm().item():.4f}",
      torch.linalg.cross(pos0[:2] - com, fa[:2]).shape)
print("cross of axes", torch.cross(torch.eye(3)[0:1], torch.eye(3)[1:2], dim=-1))

# --- velocity Verlet with energy drift ------------------------------------------------
DT, MASS = 0.002, 1.0


def force_fn(p: torch.Tensor):
    p = p.detach().requires_grad_(True)
    e = total_energy(p)
    (gp,) = torch.autograd.grad(e, p)
    return e.detach(), -gp


def kinetic(v: torch.Tensor) -> torch.Tensor:
    return 0.5 * MASS * (v ** 2).sum()


def temperature(v: torch.Tensor) -> torch.Tensor:
    return 2 * kinetic(v) / (3 * (N - 1))


vel = torch.randn(N, 3, dtype=torch.float64) * math.sqrt(0.5)
vel -= vel.mean(0)  # no centre-of-mass drift
print("initial T", f"{temperature(vel).item():.4f}", "p_total",
      f"{vel.sum(0).abs().max().item() < 1e-12}")
p_unwrapped = pos0.clone()
p_wrapped = pos0.clone()
e_pot, f = force_fn(p_wrapped)
e_start = (e_pot + kinetic(vel)).item()
displacements = []
for step in range(50):
    vel = vel + 0.5 * DT * f / MASS
    dx = DT * vel
    p_wrapped = wrap(p_wrapped + dx)
    displacements.append(dx)
    e_pot, f = force_fn(p_wrapped)
    vel = vel + 0.5 * DT * f / MASS
    if step % 10 == 9:
        e_tot = (e_pot + kinetic(vel)).item()
        print(f"step {step + 1:3d} Epot {e_pot.item():.3f} Ekin {kinetic(vel).item():.3f}"
              f" T {temperature(vel).item():.4f} drift {abs(e_tot - e_start) / abs(e_start):.1e}")
e_end = (e_pot + kinetic(vel)).item()
print("energy conserved", abs(e_end - e_start) / abs(e_start) < 1e-3)
print("inside box", bool(((p_wrapped >= 0) & (p_wrapped < BOX)).all()))

# Mean-square displacement from the cumulative sum of unwrapped steps.
steps = torch.stack(displacements)
traj = pos0 + torch.cumsum(steps, dim=0)
msd = ((traj - pos0) ** 2).sum(-1).mean(-1)
print("trajectory", traj.shape, "msd", [f"{m:.3e}" for m in msd[[0, 9, 24, 49]].tolist()])
print("msd monotone early", bool((msd[1:10] >= msd[:9]).all()),
      "wrapped matches", torch.allclose(wrap(traj[-1]), p_wrapped, atol=1e-9))
print("cummax / cumprod", torch.cummax(msd[:5], 0).indices.tolist(),
      torch.cumprod(torch.tensor([1.0, 2.0, 3.0, 4.0]), 0))

# --- Berendsen thermostat -------------------------------------------------------------
T_TARGET, TAU = 1.5, 0.05
v_b, p_b = vel.clone(), p_wrapped.clone()
_, f_b = force_fn(p_b)
for step in range(30):
    v_b = v_b + 0.5 * DT * f_b
    p_b = wrap(p_b + DT * v_b)
    _, f_b = force_fn(p_b)
    v_b = v_b + 0.5 * DT * f_b
    lam = torch.sqrt(1 + DT / TAU * (T_TARGET / temperature(v_b) - 1))
    v_b = v_b * torch.clamp(lam, 0.8, 1.25)
    if step % 10 == 9:
        print(f"berendsen {step + 1:2d} T {temperature(v_b).item():.4f} lambda {lam.item():.5f}")

# --- radial distribution function -----------------------------------------------------
d_final = minimum_image(p_b[iu] - p_b[ju]).norm(dim=1)
n_bins, r_max = 10, BOX / 2
hist = torch.histc(d_final, bins=n_bins, min=0.0, max=r_max)
edges = torch.linspace(0, r_max, n_bins + 1, dtype=torch.float64)
shell = 4.0 / 3.0 * math.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
rho = N / BOX ** 3
g_r = hist / (shell * rho * N / 2)
print("histc", hist.dtype, hist.long().tolist(), "counted", int(hist.sum()))
print("g(r)", [f"{v:.3f}" for v in g_r.tolist()])
which = torch.bucketize(d_final, edges[1:-1])
counts = torch.bincount(which[d_final <= r_max], minlength=n_bins)
print("bucketize", which.dtype, counts.tolist(), "agrees", torch.equal(counts, hist.long()))
print("bucketize right", torch.bucketize(torch.tensor([0.5, 1.0, 1.5]),
                                         torch.tensor([0.5, 1.0, 1.5]), right=True).tolist(),
      torch.searchsorted(torch.tensor([0.5, 1.0, 1.5]), torch.tensor([1.0]), side="right"))
h32 = torch.histc(d_final.float(), bins=5)
print("histc auto range", h32.dtype, h32.tolist())
hh, he = torch.histogram(d_final, bins=4, range=(0.0, r_max))
print("histogram", hh.tolist(), [f"{e:.3f}" for e in he.tolist()])

# --- inertia tensor -------------------------------------------------------------------
rel = p_b - p_b.mean(0)
inertia = (rel ** 2).sum() * torch.eye(3, dtype=torch.float64) - rel.T @ rel
evals, evecs = torch.linalg.eigh(inertia)
print("inertia principal moments", [f"{v:.3f}" for v in evals.tolist()], evals.dtype)
print("eigvecs orthonormal", torch.allclose(evecs.T @ evecs, torch.eye(3, dtype=torch.float64)),
      "reconstructs", torch.allclose(evecs @ torch.diag(evals) @ evecs.T, inertia))
ev32 = torch.linalg.eigvalsh(inertia.float(), UPLO="U")
print("eigvalsh f32", ev32.dtype, torch.allclose(ev32.double(), evals, rtol=1e-4))
print("trace invariant", f"{torch.trace(inertia).item():.3f} {evals.sum().item():.3f}")

# --- guards ---------------------------------------------------------------------------
close = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
rr = (close[:, None] - close[None]).norm(dim=-1)
print("raw 1/r^6", (1.0 / rr ** 6)[0])
inv = torch.where(rr > 0, 1.0 / rr.clamp(min=1e-12), torch.zeros_like(rr))
print("where guard", inv[0])
print("nan_to_num", torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0]),
                                     nan=0.0, posinf=1e6, neginf=-1e6))
print("nan_to_num default f32", torch.nan_to_num(torch.tensor([float("inf")])).item())
print("clamp min", torch.clamp(rr[0], min=0.5), rr[0].clamp_min(0.25), rr.clamp(max=0.5)[2])
pg = close.clone().requires_grad_(True)
dd = (pg[:, None] - pg[None]).norm(dim=-1)
e_guard = torch.where(dd > 0, dd.clamp(min=1e-6) ** -6, torch.zeros_like(dd)).sum()
e_guard.backward()
print("guarded grad finite", bool(torch.isfinite(pg.grad).all()), pg.grad[2])
pn = close.clone().requires_grad_(True)
(pn[:, None] - pn[None]).norm(dim=-1).sum().backward()
print("norm grad at zero", pn.grad[0])

# --- float32 dynamics -----------------------------------------------------------------
p32 = pos0.float()
v32 = torch.zeros(N, 3)
p32r = p32.clone().requires_grad_(True)
e32 = total_energy(p32r)
(g32,) = torch.autograd.grad(e32, p32r)
print("float32 energy", e32.dtype, f"{e32.item():.3f}", g32.dtype,
      torch.allclose(-g32.double(), fa, rtol=1e-3, atol=1e-3))
for _ in range(5):
    p32r = p32.detach().requires_grad_(True)
    (g32,) = torch.autograd.grad(total_energy(p32r), p32r)
    v32 = v32 - DT * g32
    p32 = wrap(p32 + DT * v32)
print("float32 after 5 steps", p32.dtype, f"{(p32.double() - pos0).abs().max().item():.3e}")


# --- force matching with a tiny MLP potential ----------------------------------------
class PairMLP(nn.Module):
    """E = sum over pairs of an MLP of the pair distance, zero past the cutoff."""

    def __init__(self, hidden: int = 16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        d = minimum_image(p[iu] - p[ju])
        r = d.norm(dim=1, keepdim=True)
        smooth = torch.where(r < R_CUT, (1 - r / R_CUT) ** 2, torch.zeros_like(r))
        return (self.net(1.0 / r) * smooth).sum()


def lj_only(p: torch.Tensor) -> torch.Tensor:
    e, _ = energy_terms(p, iu, ju)
    return e.sum()


frames = []
for _ in range(4):
    pk = (pos0 + 0.03 * torch.randn(N, 3, dtype=torch.float64)).float().requires_grad_(True)
    (gk,) = torch.autograd.grad(lj_only(pk), pk)
    frames.append((pk.detach(), -gk))
print("frames", len(frames), frames[0][1].shape, f"{frames[0][1].abs().mean().item():.4f}")

model = PairMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(15):
    opt.zero_grad()
    loss = torch.zeros(())
    for pk, fk in frames:
        pk = pk.clone().requires_grad_(True)
        e_pred = model(pk)
        (gp,) = torch.autograd.grad(e_pred, pk, create_graph=True)
        loss = loss + ((-gp - fk) ** 2).mean()
    loss = loss / len(frames)
    loss.backward()
    opt.step()
    if epoch % 5 == 0 or epoch == 14:
        print(f"epoch {epoch:2d} force loss {loss.item():.5f}")
print("loss grad_fn", loss.grad_fn.name(), "weight grad", model.net[0].weight.grad.shape,
      f"{model.net[0].weight.grad.norm().item() > 0}")

# --- bond angles, virial, cell lists --------------------------------------------------
b1 = minimum_image(pos0[bonds[0, :-1]] - pos0[bonds[1, :-1]])
b2 = minimum_image(pos0[bonds[1, 1:]] - pos0[bonds[0, 1:]])
cos_t = torch.linalg.vecdot(b1, b2) / (b1.norm(dim=1) * b2.norm(dim=1))
theta = torch.rad2deg(torch.acos(cos_t.clamp(-1.0, 1.0)))
print("bond angles", theta.shape, f"{theta.min().item():.3f} {theta.max().item():.3f}",
      "vecdot of vectors", torch.linalg.vecdot(b1[0], b2[0], dim=0).dtype)
virial = (minimum_image(pos0[iu] - pos0[ju]) * (fa[iu] - fa[ju])).sum() / 2
pressure = (N * 1.0 + virial / 3) / BOX ** 3
print("virial", f"{virial.item():.4f}", "pressure", f"{pressure.item():.5f}")
cell = torch.floor(pos0 / (BOX / 2)).long()
cell_id = (cell * torch.tensor([4, 2, 1])).sum(1)
ids, occupancy = torch.unique(cell_id, return_counts=True)
print("cells", ids.tolist(), occupancy.tolist(), cell.dtype)
print("dist between frames", f"{torch.dist(pos0, p_wrapped).item():.4f}",
      f"{torch.dist(pos0, p_wrapped, p=float('inf')).item():.4f}")

# --- normal modes from the Hessian ----------------------------------------------------
torch.set_default_dtype(torch.float64)
small = (torch.tensor([[0.0, 0.0, 0.0], [1.12, 0.0, 0.0], [0.56, 0.97, 0.0]])
         + 0.01 * torch.randn(3, 3))
print("default dtype", torch.get_default_dtype(), small.dtype, torch.zeros(1).dtype)
ti, tj = torch.triu_indices(3, 3, 1)


def cluster_energy(p: torch.Tensor) -> torch.Tensor:
    return lj_pair(torch.linalg.vector_norm(p[ti] - p[tj], dim=-1)).sum()


H = torch.autograd.functional.hessian(cluster_energy, small).reshape(9, 9)
w = torch.linalg.eigvalsh(H)
print("hessian", H.shape, "symmetric", torch.allclose(H, H.T),
      "zero modes", int((w.abs() < 1e-3).sum()), "stiffest", f"{w[-1].item():.3f}")
f_func = -torch.func.grad(cluster_energy)(small)
f_ag = -torch.autograd.grad(cluster_energy(small.requires_grad_()), small)[0]
print("func.grad forces agree", torch.allclose(f_func, f_ag), f_func.dtype)
pair_forces = torch.func.vmap(torch.func.grad(lambda a, b: lj_pair((a - b).norm())))(
    small.detach()[ti], small.detach()[tj])
print("vmap pair forces", pair_forces.shape, f"{pair_forces.norm(dim=1).max().item():.4f}")
torch.set_default_dtype(torch.float32)
print("default restored", torch.get_default_dtype(), torch.zeros(1).dtype)

# --- typical mistakes -----------------------------------------------------------------
try:
    _ = pos0[:, None, :] - pos0[:4, :2]
except RuntimeError as e:
    print("broadcast:", type(e).__name__, e)
try:
    torch.cdist(pos0, pos0[:, :2])
except RuntimeError as e:
    print("cdist:", type(e).__name__, e)
try:
    q = pos0.clone().requires_grad_(True)
    sq = q.exp()
    sq += 1.0  # exp's backward needs its output
    sq.sum().backward()
except RuntimeError as e:
    print("inplace:", type(e).__name__, e)
try:
    q = pos0.clone().requires_grad_(True)
    q.mul_(2.0)
except RuntimeError as e:
    print("leaf inplace:", type(e).__name__, e)
try:
    q = pos0.clone().requires_grad_(True)
    per = (q ** 2).sum(1)
    torch.autograd.grad(per, q)
except RuntimeError as e:
    print("non-scalar grad:", type(e).__name__, e)
q = pos0.clone().requires_grad_(True)
per = (q ** 2).sum(1)
(gq,) = torch.autograd.grad(per, q, grad_outputs=torch.ones_like(per))
print("with grad_outputs", torch.allclose(gq, 2 * pos0))
try:
    q = pos0.clone().requires_grad_(True)
    e1 = (q ** 2).sum()
    torch.autograd.grad(e1, q)
    torch.autograd.grad(e1, q)
except RuntimeError as e:
    print("second grad:", type(e).__name__, e)
try:
    torch.zeros(N).scatter_add(0, iu.float(), e_lj)
except RuntimeError as e:
    print("scatter index dtype:", type(e).__name__, e)
try:
    torch.zeros(N, dtype=torch.float64).index_add_(0, iu, e_lj.float())
except RuntimeError as e:
    print("index_add dtype:", type(e).__name__, e)
try:
    torch.histc(torch.arange(5), bins=3)
except RuntimeError as e:
    print("histc int:", type(e).__name__, e)
try:
    torch.linalg.eigh(torch.randn(3, 4))
except RuntimeError as e:
    print("eigh shape:", type(e).__name__, e)
try:
    torch.cross(torch.randn(4, 2), torch.randn(4, 2), dim=1)
except RuntimeError as e:
    print("cross dim:", type(e).__name__, e)
try:
    torch.cdist(pos0, pos0, compute_mode="fast")
except (RuntimeError, ValueError) as e:
    print("cdist mode:", type(e).__name__, e)
try:
    torch.bucketize(d_final, torch.tensor([[0.5, 1.0]]))
except RuntimeError as e:
    print("bucketize boundaries:", type(e).__name__, e)
try:
    torch.set_default_dtype(torch.int64)
except TypeError as e:
    print("default dtype:", type(e).__name__, e)
grid = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(2), torch.arange(2),
                                  indexing="ij"), -1).reshape(-1, 3)
print("integer lattice", grid.dtype, grid.shape)
try:
    torch.linalg.eigh(grid.T @ grid)
except RuntimeError as e:
    print("eigh int:", type(e).__name__, e)
try:
    torch.dist(grid[0], grid[-1])
except RuntimeError as e:
    print("dist int:", type(e).__name__, e)
try:
    torch.linalg.norm(grid, dim=1)
except RuntimeError as e:
    print("norm int:", type(e).__name__, e)
print("norm after float()", f"{torch.linalg.norm(grid.float(), dim=1)[-1].item():.5f}")
try:
    torch.linalg.vecdot(grid[1], grid[2])
except RuntimeError as e:
    print("vecdot int:", type(e).__name__, e)
try:
    torch.linalg.vecdot(b1[0], b2[0][:2])
except RuntimeError as e:
    print("vecdot lengths:", type(e).__name__, e)
try:
    torch.linalg.eigh(inertia[0])
except RuntimeError as e:
    print("eigh 1-D:", type(e).__name__, e)
moments = torch.empty(3)  # a float32 buffer for float64 moments
try:
    torch.linalg.eigvalsh(inertia, out=moments)
except RuntimeError as e:
    print("eigvalsh out:", type(e).__name__, e)
moments64 = torch.empty(3, dtype=torch.float64)
torch.linalg.eigvalsh(inertia, out=moments64)
print("moments buffers", [f"{v:.3f}" for v in moments64.tolist()],
      torch.linalg.eigvalsh(inertia.float(), out=moments) is moments)
try:
    torch.linalg.vector_norm(fa, dim=1, out=torch.empty(N))
except RuntimeError as e:
    print("norm out:", type(e).__name__, e)
try:
    torch.cross(pos0[:, :2], fa[:, :2])  # (no dim: the first of size 3, and there is none)
except RuntimeError as e:
    print("cross 2-D vectors:", type(e).__name__, e)
