"""Energy-based models as a course teaches them: a Hopfield network, Bernoulli and
Gaussian-Bernoulli RBMs trained by CD-k and PCD, annealed importance sampling for the log
partition function, and a small neural EBM on 2-D points trained by contrastive divergence
with Langevin dynamics and a replay buffer; plus binomial draws and typical mistakes."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm

torch.manual_seed(0)


def show(name, t):
    print(f"{name}: {[round(v, 4) for v in t.flatten().tolist()]}")


# --- Hopfield network ---------------------------------------------------------------
print("== Hopfield network ==")
N = 36
patterns = torch.sign(torch.randn(3, N))
patterns[patterns == 0] = 1
W = patterns.T @ patterns / N
W.fill_diagonal_(0)
hebb = sum(torch.outer(p, p) for p in patterns) / N - len(patterns) / N * torch.eye(N)
print("Hebbian sum of outer products == matrix form:", torch.allclose(hebb, W),
      "max |W|", f"{W.abs().max().item():.4f}")
print("W symmetric:", torch.equal(W, W.T), "diag zero:", bool((W.diagonal() == 0).all()))


def hopfield_energy(s):
    return -0.5 * s @ W @ s


def recall(s, sweeps=4):
    s = s.clone()
    for sweep in range(sweeps):
        changed = 0
        for i in torch.randperm(N):
            h = W[i] @ s
            new = torch.where(h >= 0, 1.0, -1.0)
            changed += int(new != s[i])
            s[i] = new
        print(f"  sweep {sweep}: energy {hopfield_energy(s).item():.4f} flips {changed}")
        if changed == 0:
            break
    return s


for k in range(3):
    probe = patterns[k].clone()
    flip = torch.randperm(N)[:6]
    probe[flip] *= -1
    print(f"pattern {k}: start energy {hopfield_energy(probe).item():.4f}, "
          f"overlap {(probe @ patterns[k] / N).item():.4f}")
    out = recall(probe)
    overlaps = out @ patterns.T / N
    print(f"  overlaps {[round(v, 4) for v in overlaps.tolist()]}, "
          f"recovered {torch.equal(out, patterns[k])}")
stored_energies = torch.stack([hopfield_energy(p) for p in patterns])
show("stored energies", stored_energies)

# --- tiny binary images: bars on a 4x4 grid -----------------------------------------
print("== data ==")
side = 4


def bars(n, gen=None):
    rows = torch.zeros(n, side, side)
    horizontal = torch.rand(n, generator=gen) < 0.5
    on = torch.bernoulli(torch.full((n, side), 0.4), generator=gen)
    rows[horizontal] = on[horizontal].unsqueeze(-1).expand(-1, side, side)
    rows[~horizontal] = on[~horizontal].unsqueeze(1).expand(-1, side, side)
    return rows.reshape(n, -1)


data = bars(64)
print("data", tuple(data.shape), data.dtype, "mean", f"{data.mean().item():.4f}")
print(data[0].reshape(side, side).int())


# --- Bernoulli-Bernoulli RBM --------------------------------------------------------
class RBM:
    def __init__(self, n_vis, n_hid, gen=None):
        self.W = 0.01 * torch.randn(n_vis, n_hid, generator=gen)
        self.b = torch.zeros(n_vis)
        self.c = torch.zeros(n_hid)
        self.vel = [torch.zeros_like(p) for p in (self.W, self.b, self.c)]

    def p_h(self, v):
        return torch.sigmoid(v @ self.W + self.c)

    def p_v(self, h):
        return torch.sigmoid(h @ self.W.T + self.b)

    def gibbs(self, v, k, gen=None):
        for _ in range(k):
            h = torch.bernoulli(self.p_h(v), generator=gen)
            v = torch.bernoulli(self.p_v(h), generator=gen)
        return v

    def free_energy(self, v):
        return -(v @ self.b) - F.softplus(v @ self.W + self.c).sum(-1)

    @torch.no_grad()
    def update(self, v0, vk, lr=0.1, momentum=0.5, decay=1e-4):
        ph0, phk = self.p_h(v0), self.p_h(vk)
        n = v0.shape[0]
        grads = [(v0.T @ ph0 - vk.T @ phk) / n - decay * self.W,
                 (v0 - vk).mean(0), (ph0 - phk).mean(0)]
        for p, vel, g in zip((self.W, self.b, self.c), self.vel, grads):
            vel.mul_(momentum).add_(g, alpha=lr)
            p.add_(vel)


print("== RBM CD-1 ==")
rbm = RBM(16, 6)
for epoch in range(30):
    for batch in data.split(16):
        vk = rbm.gibbs(batch, 1)
        rbm.update(batch, vk)
    if epoch % 10 == 9:
        recon = rbm.p_v(rbm.p_h(data))
        err = ((data - recon) ** 2).sum(1).mean()
        bce = F.binary_cross_entropy(recon, data)
        print(f"epoch {epoch}: recon err {err.item():.4f} bce {bce.item():.4f} "
              f"F(data) {rbm.free_energy(data).mean().item():.4f}")
print("W norm", f"{rbm.W.norm().item():.4f}", "hidden means",
      [round(v, 3) for v in rbm.p_h(data).mean(0).tolist()])

print("== RBM CD-3 with a generator, PCD ==")
g = torch.Generator().manual_seed(7)
rbm_pcd = RBM(16, 6, gen=g)
chains = torch.bernoulli(torch.full((16, 16), 0.5), generator=g)
for _epoch in range(20):
    for batch in data.split(16):
        chains = rbm_pcd.gibbs(chains, 3, gen=g)
        rbm_pcd.update(batch, chains, lr=0.05)
gap = rbm_pcd.free_energy(data).mean() - rbm_pcd.free_energy(chains).mean()
print(f"PCD free-energy gap {gap.item():.4f}, chain mean {chains.mean().item():.4f}")

# the autograd form many tutorials use: loss = F(data) - F(model samples)
W_ag = rbm.W.clone().requires_grad_()
v_model = rbm.gibbs(data, 1).detach()


def fe(v, W):
    return -(v @ rbm.b) - F.softplus(v @ W + rbm.c).sum(-1)


loss = fe(data, W_ag).mean() - fe(v_model, W_ag).mean()
loss.backward()
by_hand = -(data.T @ rbm.p_h(data) - v_model.T @ rbm.p_h(v_model)) / data.shape[0]
print("CD loss", f"{loss.item():.4f}", loss.grad_fn.name(),
      "autograd == hand:", torch.allclose(W_ag.grad, by_hand, atol=1e-6))


# --- AIS for log Z -------------------------------------------------------------------
print("== AIS ==")


def exact_log_z(model):
    h = torch.tensor([[(i >> j) & 1 for j in range(model.c.numel())]
                      for i in range(2 ** model.c.numel())], dtype=torch.float32)
    return torch.logsumexp(h @ model.c + F.softplus(h @ model.W.T + model.b).sum(-1), 0)


def ais_log_z(model, n_chains=100, n_betas=200):
    """Anneal from a base RBM with no weights (log Z0 known) to the model."""
    n_vis, n_hid = model.b.numel(), model.c.numel()
    betas = torch.linspace(0, 1, n_betas)
    base_b = torch.zeros(n_vis)
    log_z0 = (n_vis + n_hid) * math.log(2)
    v = torch.bernoulli(torch.sigmoid(base_b).expand(n_chains, n_vis))

    def log_pstar(v, beta):
        return ((1 - beta) * (v @ base_b) + beta * (v @ model.b)
                + F.softplus(beta * (v @ model.W + model.c)).sum(-1))

    log_w = torch.zeros(n_chains)
    for b0, b1 in zip(betas[:-1], betas[1:]):
        log_w += log_pstar(v, b1) - log_pstar(v, b0)
        h = torch.bernoulli(torch.sigmoid(b1 * (v @ model.W + model.c)))
        v = torch.bernoulli(torch.sigmoid((1 - b1) * base_b + b1 * (h @ model.W.T + model.b)))
    return torch.logsumexp(log_w, 0) - math.log(n_chains) + log_z0, log_w


true_lz = exact_log_z(rbm)
est, log_w = ais_log_z(rbm)
print(f"exact log Z {true_lz.item():.4f}, AIS {est.item():.3f}, "
      f"log-weight std {log_w.std().item():.3f}")
avg_ll = (-rbm.free_energy(data) - true_lz).mean()
print(f"average log-likelihood {avg_ll.item():.4f}")
bern = torch.distributions.Bernoulli(probs=rbm.p_v(rbm.p_h(data)))
print(f"Bernoulli recon log-lik {bern.log_prob(data).sum(1).mean().item():.4f}, "
      f"entropy {bern.entropy().mean().item():.4f}")
vis = torch.zeros(4, 16)
vis.bernoulli_(torch.full((4, 16), 0.3), generator=torch.Generator().manual_seed(2))
print("bernoulli_ draws", int(vis.sum()), torch.bernoulli(torch.full((2, 3), 0.5),
                                                          generator=torch.Generator()))

# --- Gaussian-Bernoulli RBM ----------------------------------------------------------
print("== Gaussian-Bernoulli RBM ==")
centers = torch.tensor([[1.5, -1.0, 0.5], [-1.0, 1.0, -0.5]])
x = centers[torch.randint(0, 2, (128,))] + 0.3 * torch.randn(128, 3)
mu, sd = x.mean(0), x.std(0)
xn = (x - mu) / sd
gW = 0.05 * torch.randn(3, 4)
gb, gc = torch.zeros(3), torch.zeros(4)
for step in range(40):
    ph = torch.sigmoid(xn @ gW + gc)
    h = torch.bernoulli(ph)
    v1 = h @ gW.T + gb + torch.randn_like(xn)  # unit-variance visibles
    ph1 = torch.sigmoid(v1 @ gW + gc)
    with torch.no_grad():
        gW += 0.01 * (xn.T @ ph - v1.T @ ph1) / 128
        gb += 0.01 * (xn - v1).mean(0)
        gc += 0.01 * (ph - ph1).mean(0)
    if step % 20 == 19:
        fe_g = 0.5 * ((xn - gb) ** 2).sum(1) - F.softplus(xn @ gW + gc).sum(1)
        print(f"step {step}: mean free energy {fe_g.mean().item():.4f}")
print("GB-RBM weights", tuple(gW.shape), f"{gW.abs().max().item():.4f}")

# --- neural EBM with Langevin dynamics ----------------------------------------------
print("== neural EBM ==")
torch.manual_seed(1)
modes = torch.tensor([[-1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
points = modes[torch.randint(0, 3, (256,))] + 0.15 * torch.randn(256, 2)


class EnergyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(spectral_norm(nn.Linear(2, 32)), nn.SiLU(),
                                 spectral_norm(nn.Linear(32, 32)), nn.SiLU(),
                                 nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


ebm = EnergyNet()
pnet = nn.utils.parametrizations.spectral_norm(nn.Linear(2, 4))
print("parametrized", type(pnet).__name__, [n for n, _ in pnet.named_parameters()])
print(f"sigma(W) after one call {torch.linalg.matrix_norm(pnet.weight, 2).item():.4f}")
print([n for n, _ in ebm.named_parameters()])
print("buffers", sorted(n for n, _ in ebm.named_buffers()))
opt = torch.optim.Adam(ebm.parameters(), lr=1e-3, betas=(0.0, 0.999))
buffer = torch.rand(512, 2) * 4 - 2


def langevin(x, steps=10, step_size=0.05, noise=0.01):
    x = x.clone().requires_grad_(True)
    for _ in range(steps):
        (grad,) = torch.autograd.grad(ebm(x).sum(), x)
        x = x - step_size * grad + noise * torch.randn_like(x)
        x = x.detach().clamp_(-2, 2).requires_grad_(True)
    return x.detach()


for it in range(25):
    idx = torch.randint(0, 512, (64,))
    start = buffer[idx]
    fresh = torch.rand(64) < 0.05
    start[fresh] = torch.rand(int(fresh.sum()), 2) * 4 - 2
    neg = langevin(start)
    buffer[idx] = neg
    pos = points[torch.randint(0, 256, (64,))]
    e_pos, e_neg = ebm(pos), ebm(neg)
    loss = e_pos.mean() - e_neg.mean() + 0.1 * (e_pos ** 2 + e_neg ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 8 == 0:
        print(f"it {it}: loss {loss.item():.4f} E+ {e_pos.mean().item():.4f} "
              f"E- {e_neg.mean().item():.4f} fresh {int(fresh.sum())}")
with torch.no_grad():
    grid = torch.stack(torch.meshgrid(torch.linspace(-2, 2, 3), torch.linspace(-2, 2, 3),
                                      indexing="ij"), -1).reshape(-1, 2)
    show("grid energies", ebm(grid))
    sigma = ebm.net[0].weight_orig.detach()
    print("sigma estimate", f"{torch.linalg.matrix_norm(sigma, 2).item():.4f}")

# --- binomial draws ------------------------------------------------------------------
print("== binomial ==")
torch.manual_seed(3)
counts = torch.tensor([5.0, 20.0, 100.0, 1000.0, 7.0])
probs = torch.tensor([0.3, 0.6, 0.5, 0.02, 0.95])
print(torch.binomial(counts, probs))
gen = torch.Generator().manual_seed(11)
draws = torch.stack([torch.binomial(counts, probs, generator=gen) for _ in range(200)])
show("mean / np", draws.mean(0) / (counts * probs))
print(torch.binomial(counts.double(), probs.double()).dtype)
dist = torch.distributions.Binomial(total_count=torch.tensor([10.0, 50.0]),
                                    probs=torch.tensor([0.25, 0.7]))
s = dist.sample((4,))
print(s, s.dtype)
show("log_prob", dist.log_prob(s))
show("mean/var", torch.cat([dist.mean, dist.variance]))
dist_l = torch.distributions.Binomial(8, logits=torch.tensor([0.0, -1.0]))
print(dist_l.sample((3,)), dist_l.entropy())
show("support", dist_l.enumerate_support()[:, 0])
with torch.no_grad():
    print(torch.binomial(torch.full((2, 3), 4.0), torch.tensor([0.1, 0.5, 0.9]),
                         generator=torch.Generator().manual_seed(5)))

# --- typical mistakes ----------------------------------------------------------------
print("== mistakes ==")


def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok {out}")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: {type(e).__name__}: {str(e).splitlines()[0]}")


attempt("int counts", lambda: torch.binomial(torch.tensor([5, 6]), torch.tensor([0.5, 0.5])))
attempt("mixed dtypes", lambda: torch.binomial(counts, probs.double()))
attempt("float prob", lambda: torch.binomial(counts, 0.5))
attempt("bernoulli p > 1", lambda: torch.bernoulli(torch.tensor([0.5, 1.5])))
attempt("W.T shapes", lambda: data @ rbm.W.T)
attempt("grad wrt input without requires_grad",
        lambda: torch.autograd.grad(ebm(points[:4]).sum(), points))
leaf = torch.zeros(3, 2, requires_grad=True)
attempt("clamp_ on leaf", lambda: leaf.clamp_(-1, 1))
attempt("backward through binomial",
        lambda: torch.binomial(counts.clone().requires_grad_(), probs).sum().backward())
attempt("Binomial validate", lambda: torch.distributions.Binomial(
    10, probs=torch.tensor([0.5]), validate_args=True).log_prob(torch.tensor([11.0])))
attempt("Binomial probs range", lambda: torch.distributions.Binomial(
    10, probs=torch.tensor([1.5]), validate_args=True))
