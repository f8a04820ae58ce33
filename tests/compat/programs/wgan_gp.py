"""WGAN-GP and spectral-norm GANs on a 2-D mixture of 8 Gaussians.

Exercises: seeded torch.Generator data, critic/generator MLPs (LeakyReLU, ELU, Tanh), the
gradient penalty through torch.autograd.grad(create_graph=True, retain_graph=True,
grad_outputs=ones_like) with double backward, n_critic steps with requires_grad_ toggling,
Adam(betas=(0.0, 0.9)) and RMSprop with weight clipping (p.data.clamp_), the old
torch.nn.utils.spectral_norm hook and the parametrizations spectral_norm / weight_norm /
orthogonal, register_parametrization with a custom module, remove_parametrizations,
parametrize.cached, hinge and non-saturating softplus losses, a cdist-based MMD, an EMA
generator through swa_utils.AveragedModel, and the usual autograd mistakes."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.nn.utils import parametrizations as PZ
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

torch.manual_seed(0)
gen = torch.Generator().manual_seed(1234)


def sample_data(n, generator):
    angles = torch.arange(8, dtype=torch.float32) * (2 * math.pi / 8)
    centers = torch.stack([angles.cos(), angles.sin()], dim=1) * 2.0
    idx = torch.randint(0, 8, (n,), generator=generator)
    return centers[idx] + 0.05 * torch.randn(n, 2, generator=generator)


def make_generator(z_dim=4):
    return nn.Sequential(nn.Linear(z_dim, 32), nn.ELU(alpha=1.0), nn.Linear(32, 32),
                         nn.Tanh(), nn.Linear(32, 2))


def make_critic(norm=None):
    layers = [nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
              nn.Linear(32, 1)]
    if norm is not None:
        layers = [norm(m) if isinstance(m, nn.Linear) else m for m in layers]
    return nn.Sequential(*layers)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, generator=gen)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads, = torch.autograd.grad(out, interp, grad_outputs=torch.ones_like(out),
                                 create_graph=True, retain_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean(), grads


def mmd(x, y, scales=(0.5, 1.0, 2.0)):
    xx, yy, xy = torch.cdist(x, x), torch.cdist(y, y), torch.cdist(x, y)
    total = 0.0
    for s in scales:
        kx, ky, kxy = (torch.exp(-d.pow(2) / (2 * s * s)) for d in (xx, yy, xy))
        total = total + kx.mean() + ky.mean() - 2 * kxy.mean()
    return total


data = sample_data(256, gen)
print("data", tuple(data.shape), data.dtype, data[:2])
print("data mean", data.mean(0), "std", data.std(0))

# ---- WGAN-GP -------------------------------------------------------------------------
G, D = make_generator(), make_critic()
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.9))
ema = AveragedModel(G, multi_avg_fn=get_ema_multi_avg_fn(0.9))
n_critic, lam = 3, 10.0
for step in range(1, 7):
    for p in D.parameters():
        p.requires_grad_(True)
    for _ in range(n_critic):
        real = data[torch.randint(0, 256, (32,), generator=gen)]
        z = torch.randn(32, 4, generator=gen)
        fake = G(z).detach()
        gp, grads = gradient_penalty(D, real, fake)
        loss_d = D(fake).mean() - D(real).mean() + lam * gp
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
    for p in D.parameters():
        p.requires_grad_(False)
    z = torch.randn(32, 4, generator=gen)
    loss_g = -D(G(z)).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    ema.update_parameters(G)
    print(f"wgan step {step} loss_d {loss_d.item():.4f} gp {gp.item():.4f} "
          f"loss_g {loss_g.item():.4f} |grad| {grads.norm(dim=1).mean().item():.4f}")
print("critic grads frozen:", all(p.grad is None or not p.requires_grad for p in D.parameters()))
print("n_averaged", ema.n_averaged.item(), ema.n_averaged.dtype)
print("ema keys", list(ema.state_dict().keys())[:3], len(ema.state_dict()))
with torch.no_grad():
    zs = torch.randn(128, 4, generator=gen)
    s, se = G(zs), ema(zs)
print("sample", tuple(s.shape), s.requires_grad, f"mmd {mmd(s, data[:128]).item():.4f}",
      f"ema mmd {mmd(se, data[:128]).item():.4f}")

# double backward: the penalty's grad w.r.t. the critic's first weight
for p in D.parameters():
    p.requires_grad_(True)
gp, _ = gradient_penalty(D, data[:16], sample_data(16, gen))
w_grad, = torch.autograd.grad(gp, D[0].weight)
print("d gp / d W0", tuple(w_grad.shape), w_grad.abs().sum().item().__round__(4))
pd = F.pairwise_distance(G(torch.randn(4, 4, generator=gen)), data[:4], keepdim=True)
print("pairwise", tuple(pd.shape), type(pd.grad_fn).__name__, pd.detach().flatten())

# ---- WGAN with weight clipping and RMSprop ----------------------------------------
Gc, Dc = make_generator(), make_critic()
opt_gc = torch.optim.RMSprop(Gc.parameters(), lr=5e-4)
opt_dc = torch.optim.RMSprop(Dc.parameters(), lr=5e-4, alpha=0.9, centered=True)
for step in range(1, 4):
    for _ in range(2):
        real = data[torch.randint(0, 256, (32,), generator=gen)]
        fake = Gc(torch.randn(32, 4, generator=gen)).detach()
        loss = Dc(fake).mean() - Dc(real).mean()
        opt_dc.zero_grad()
        loss.backward()
        opt_dc.step()
        for p in Dc.parameters():
            p.data.clamp_(-0.01, 0.01)
    loss_g = -Dc(Gc(torch.randn(32, 4, generator=gen))).mean()
    opt_gc.zero_grad()
    loss_g.backward()
    opt_gc.step()
    print(f"clip step {step} critic {loss.item():.4f} gen {loss_g.item():.4f} "
          f"max|w| {max(p.abs().max().item() for p in Dc.parameters()):.4f}")

# ---- spectral norm: old hook vs parametrization ---------------------------------------
torch.manual_seed(1)
old = nn.utils.spectral_norm(nn.Linear(2, 32), n_power_iterations=2, eps=1e-8)
print("old keys", sorted(old.state_dict().keys()))
print("old u", tuple(old.weight_u.shape), "v", tuple(old.weight_v.shape))
new = PZ.spectral_norm(nn.Linear(32, 16), n_power_iterations=3, eps=1e-10, dim=0)
print("new keys", sorted(new.state_dict().keys()))
x = torch.randn(8, 32)
for _ in range(5):
    new(x)
sig = torch.linalg.matrix_norm(new.weight.detach(), ord=2)
sig_orig = torch.linalg.matrix_norm(new.parametrizations.weight.original, ord=2)
print(f"sigma(new.weight) {sig.item():.3f}", f"sigma(original) {sig_orig.item():.4f}")
new.eval()
print("eval reuse u", torch.equal(new.weight, new.weight), new.training)

Dsn = make_critic(lambda m: PZ.spectral_norm(m))
Gsn = make_generator()
opt_dsn = torch.optim.Adam(Dsn.parameters(), lr=2e-3, betas=(0.0, 0.9), amsgrad=True)
opt_gsn = torch.optim.Adam(Gsn.parameters(), lr=2e-3, betas=(0.0, 0.9))
for step in range(1, 5):
    real = data[torch.randint(0, 256, (32,), generator=gen)]
    fake = Gsn(torch.randn(32, 4, generator=gen))
    loss_d = F.relu(1 - Dsn(real)).mean() + F.relu(1 + Dsn(fake.detach())).mean()
    opt_dsn.zero_grad()
    loss_d.backward()
    opt_dsn.step()
    loss_g = F.softplus(-Dsn(fake)).mean()
    loss_ns_d = F.softplus(-Dsn(real)).mean() + F.softplus(Dsn(fake.detach())).mean()
    opt_gsn.zero_grad()
    loss_g.backward()
    opt_gsn.step()
    norms = [torch.linalg.matrix_norm(m.weight.detach(), ord=2).item()
             for m in Dsn if isinstance(m, nn.Linear)]
    print(f"sn step {step} hinge {loss_d.item():.4f} ns_g {loss_g.item():.4f} "
          f"ns_d {loss_ns_d.item():.4f} sigmas {[round(n, 3) for n in norms]}")
print("sn keys", [k for k in Dsn.state_dict().keys() if k.startswith("0.")])
W = Dsn[2].parametrizations.weight.original
for o in (1, -1, float("inf"), 2, -2, "nuc", "fro"):
    n = torch.linalg.matrix_norm(W, ord=o, keepdim=o in (2, "nuc"))
    print(f"norm {o} {n.item():.4f} {type(n.grad_fn).__name__} {tuple(n.shape)}")

# log-likelihood of samples under the true mixture
ang = torch.arange(8, dtype=torch.float32) * (2 * math.pi / 8)
true = torch.distributions.MixtureSameFamily(
    torch.distributions.Categorical(logits=torch.zeros(8)),
    torch.distributions.Independent(torch.distributions.Normal(
        torch.stack([ang.cos(), ang.sin()], 1) * 2, torch.full((8, 2), 0.05)), 1))
with torch.no_grad():
    ll_data = true.log_prob(data).mean()
    ll_gen = true.log_prob(Gsn(torch.randn(64, 4, generator=gen))).mean()
print(f"loglik data {ll_data.item():.3f} generator {ll_gen.item():.1f}", true.batch_shape,
      true.event_shape)

# ---- other parametrizations ---------------------------------------------------------
wn = PZ.weight_norm(nn.Linear(4, 3), dim=0)
print("weight_norm", sorted(wn.state_dict().keys()),
      tuple(wn.parametrizations.weight.original0.shape))
orth = PZ.orthogonal(nn.Linear(4, 4))
q = orth.weight
print("orthogonal", torch.allclose(q @ q.T, torch.eye(4), atol=1e-5))


class Clip(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, w):
        return w.clamp(-self.c, self.c)


lin = nn.Linear(3, 3)
P.register_parametrization(lin, "weight", Clip(0.1))
print("clip param", P.is_parametrized(lin, "weight"), lin.weight.abs().max().item() <= 0.1 + 1e-6)
with P.cached():
    print("cached same", lin.weight is lin.weight)
orig = lin.parametrizations.weight.original.detach().clone()
P.remove_parametrizations(lin, "weight", leave_parametrized=False)
print("left original", torch.equal(lin.weight, orig), type(lin.weight).__name__)
lin2 = nn.Linear(3, 3)
P.register_parametrization(lin2, "weight", Clip(0.05))
P.remove_parametrizations(lin2, "weight", leave_parametrized=True)
print("left clipped", lin2.weight.abs().max().item() <= 0.05 + 1e-6, P.is_parametrized(lin2))

# ---- mistakes --------------------------------------------------------------------------
def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, str(e).split("\n")[0])


def clamp_leaf():
    w = torch.randn(3, requires_grad=True)
    w.clamp_(-0.5, 0.5)
    torch.autograd.grad(w.sum(), w, create_graph=True)


def backward_twice():
    x = torch.randn(4, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()


attempt("grad of no-grad output", lambda: torch.autograd.grad(torch.ones(3).sum(), torch.ones(3)))
attempt("clamp_ on leaf", clamp_leaf)
sn = nn.utils.spectral_norm
attempt("spectral_norm twice", lambda: sn(sn(nn.Linear(2, 2))))
attempt("remove none", lambda: P.remove_parametrizations(nn.Linear(2, 2), "weight"))
attempt("backward twice", backward_twice)
xb = torch.randn(4, 2, requires_grad=True)
attempt("grad_outputs shape", lambda: torch.autograd.grad(D(xb), xb, grad_outputs=torch.ones(4, 2)))
attempt("parametrize twice sn", lambda: PZ.spectral_norm(PZ.spectral_norm(nn.Linear(2, 2))).weight)
