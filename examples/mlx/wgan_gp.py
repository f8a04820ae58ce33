"""A WGAN with gradient penalty on a 2-d toy distribution, in the shape of MLX's examples.

The data are 8 Gaussians on a ring, drawn by `mx.random` from seeded keys. A generator and
a critic (MLPs of `nn.Linear`, `nn.leaky_relu`, `nn.silu`, `nn.softplus`, `nn.LayerNorm`)
train with n_critic = 5 critic steps per generator step; the gradient penalty is a nested
`mx.grad` (the critic's input gradient at interpolates) inside the critic's
`nn.value_and_grad`, so the parameter gradient is second order. Around the training:
per-sample input gradients by `mx.vmap(mx.grad(...))` against the batched form, `mx.jvp`
against `mx.vjp` (u . J v), Hessian-vector products by grad-of-grad, jvp-of-grad and
vjp-of-grad, `mx.stop_gradient` in the generator step, an R1-penalised critic under `optim.RMSprop`,
spectral normalisation by power iteration, the critic step under `mx.compile` with
`inputs` / `outputs` state, sample statistics and typical mistakes.
Run on ember with `python -m ember.run wgan_gp.py`.
"""

import math
from functools import partial

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

BATCH = 64
LATENT = 4
MODES = 8
RADIUS = 2.0


def ring_centres():
    angle = mx.arange(MODES, dtype=mx.float32) * (2 * math.pi / MODES)
    return RADIUS * mx.stack([mx.cos(angle), mx.sin(angle)], axis=1)


def draw_ring(key, n, std=0.05):
    k_mode, k_noise = mx.random.split(key)
    mode = mx.random.randint(0, MODES, (n,), key=k_mode)
    return ring_centres()[mode] + std * mx.random.normal((n, 2), key=k_noise)


class Generator(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.l1 = nn.Linear(LATENT, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 2)

    def __call__(self, z):
        h = nn.leaky_relu(self.norm(self.l1(z)), 0.2)
        h = nn.silu(self.l2(h))
        return self.out(h)


class Critic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.l1 = nn.Linear(2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.l3 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def __call__(self, x):
        h = nn.leaky_relu(self.l1(x), 0.2)
        h = nn.silu(self.norm(self.l2(h)))
        h = nn.softplus(self.l3(h)) - 0.5
        return self.out(h)


def fmt(a, digits=4):
    return [round(v, digits) for v in a.tolist()]


def input_grad(critic, x):
    """d sum(critic(x)) / dx: each row depends only on its own input, so this is per-sample."""
    return mx.grad(lambda x_: critic(x_).sum())(x)


def gradient_penalty(critic, real, fake, eps):
    interp = eps * real + (1 - eps) * fake
    g = input_grad(critic, interp)
    norm = mx.linalg.norm(g, axis=1)
    return ((norm - 1) ** 2).mean()


def critic_loss(critic, real, fake, eps, lam=10.0):
    wdist = critic(real).mean() - critic(fake).mean()
    return -wdist + lam * gradient_penalty(critic, real, fake, eps), wdist


mx.random.seed(0)
key = mx.random.key(7)
k_data, k_init, k_probe, key = mx.random.split(key, 4)
gen, critic = Generator(), Critic()
mx.eval(gen.parameters(), critic.parameters())
real_probe = draw_ring(k_data, BATCH)
print("ring centres", fmt(ring_centres()[:3].reshape(-1), 3))
print("data mean", fmt(real_probe.mean(axis=0)), "shape", real_probe.shape)

# ---- transforms on the critic ----------------------------------------------------------
k1, k2, k3 = mx.random.split(k_probe, 3)
x = mx.random.normal((6, 2), key=k1)
batched = input_grad(critic, x)
per_sample = mx.vmap(mx.grad(lambda xi: critic(xi[None])[0, 0]))(x)
print("vmap(grad) equals the batched grad", mx.allclose(per_sample, batched, atol=1e-6).item(),
      per_sample.shape)
print("input grad row 0", fmt(batched[0]))

u = mx.random.normal((6, 1), key=k2)
v = mx.random.normal((6, 2), key=k3)
f_out, (jv,) = mx.jvp(lambda x_: critic(x_), (x,), (v,))
_, (uj,) = mx.vjp(lambda x_: critic(x_), (x,), (u,))
print("jvp shape", jv.shape, "vjp shape", uj.shape)
print("u.Jv", round((u * jv).sum().item(), 4), "uJ.v", round((uj * v).sum().item(), 4),
      "close", mx.allclose((u * jv).sum(), (uj * v).sum(), rtol=1e-4).item())


def scalar_critic(x_):
    return critic(x_).sum()


hvp_gg = mx.grad(lambda x_: (mx.grad(scalar_critic)(x_) * v).sum())(x)
_, (hvp_jg,) = mx.jvp(mx.grad(scalar_critic), (x,), (v,))
_, (hvp_vg,) = mx.vjp(mx.grad(scalar_critic), (x,), (v,))
print("hvp grad-of-grad", fmt(hvp_gg[0]), "jvp-of-grad", fmt(hvp_jg[0]),
      "close", mx.allclose(hvp_gg, hvp_jg, atol=1e-5).item())
print("hvp vjp-of-grad", fmt(hvp_vg[1]), "close", mx.allclose(hvp_gg, hvp_vg, atol=1e-5).item())

eps0 = mx.random.uniform(shape=(BATCH, 1), key=k1)
fake0 = gen(mx.random.normal((BATCH, LATENT), key=k2))
print("initial penalty", round(gradient_penalty(critic, real_probe, fake0, eps0).item(), 4))
loss_and_grad = nn.value_and_grad(critic, lambda r, f, e: critic_loss(critic, r, f, e)[0])
loss0, grads0 = loss_and_grad(real_probe, fake0, eps0)
print("critic loss", round(loss0.item(), 4), "|d l1.weight|",
      round(mx.linalg.norm(grads0["l1"]["weight"]).item(), 4),
      "|d norm.weight|", round(mx.linalg.norm(grads0["norm"]["weight"]).item(), 4))

# ---- WGAN-GP training, n_critic = 5 ----------------------------------------------------
opt_c = optim.Adam(learning_rate=2e-3, betas=[0.5, 0.9])
opt_g = optim.Adam(learning_rate=2e-3, betas=[0.5, 0.9])
N_CRITIC = 5
ITERS = 40
c_step = nn.value_and_grad(critic, lambda r, f, e: critic_loss(critic, r, f, e)[0])


def gen_loss(z, real_mean):
    fake = gen(z)
    # the critic's parameters get no gradient here (only gen's are differentiated); the
    # moment-matching term uses the real mean as a constant
    match = ((fake.mean(axis=0) - mx.stop_gradient(real_mean)) ** 2).sum()
    return -critic(fake).mean() + 0.1 * match


g_step = nn.value_and_grad(gen, gen_loss)


def draw_batch(k):
    k_r, k_z, k_e = mx.random.split(k, 3)
    real = draw_ring(k_r, BATCH)
    z = mx.random.normal((BATCH, LATENT), key=k_z)
    eps = mx.random.uniform(shape=(BATCH, 1), key=k_e)
    return real, z, eps


def eager_critic_step(real, z, eps):
    fake = mx.stop_gradient(gen(z))
    loss, grads = c_step(real, fake, eps)
    opt_c.update(critic, grads)
    return loss


state = [critic.state, opt_c.state, gen.state]  # gen read inside: an implicit input too


@partial(mx.compile, inputs=state, outputs=state)
def compiled_critic_step(real, z, eps):
    fake = mx.stop_gradient(gen(z))
    loss, grads = c_step(real, fake, eps)
    opt_c.update(critic, grads)
    return loss


for it in range(ITERS):
    step = eager_critic_step if it < 8 else compiled_critic_step
    for _ in range(N_CRITIC):
        key, k = mx.random.split(key)
        real, z, eps = draw_batch(k)
        c_loss = step(real, z, eps)
        mx.eval(c_loss, critic.parameters(), opt_c.state)
    key, k = mx.random.split(key)
    real, z, _ = draw_batch(k)
    g_loss, g_grads = g_step(z, real.mean(axis=0))
    opt_g.update(gen, g_grads)
    mx.eval(gen.parameters(), opt_g.state)
    if it % 8 == 7:
        kind = "eager" if it < 8 else "compiled"
        print(f"iter {it + 1:2d} ({kind}) critic {c_loss.item():.4f} gen {g_loss.item():.4f}")
print("critic steps taken", opt_c.state["step"].item(),
      "generator steps", opt_g.state["step"].item())

# the compiled step against the eager one from the same state
snapshot_c = critic.parameters()
key, k = mx.random.split(key)
real, z, eps = draw_batch(k)
fake = mx.stop_gradient(gen(z))
loss_e, grads_e = c_step(real, fake, eps)
grad_fn = mx.compile(lambda r, f, e: c_step(r, f, e))
loss_c, grads_c = grad_fn(real, fake, eps)
print("compiled loss equals eager", mx.allclose(loss_e, loss_c, rtol=1e-5).item(),
      "grads close", mx.allclose(grads_e["l2"]["weight"], grads_c["l2"]["weight"],
                                 rtol=1e-4, atol=1e-6).item())

# ---- stop_gradient ----------------------------------------------------------------------
w = mx.array([1.5, -2.0])
print("grad through stop_gradient", mx.grad(lambda a: (mx.stop_gradient(a) * a).sum())(w).tolist())

# ---- sample statistics --------------------------------------------------------------------
key, k = mx.random.split(key)
samples = gen(mx.random.normal((512, LATENT), key=k))
mean = samples.mean(axis=0)
centred = samples - mean
cov = centred.T @ centred / (samples.shape[0] - 1)
print("sample mean", fmt(mean, 3), "covariance", fmt(cov.reshape(-1), 3))
dist = mx.linalg.norm(samples[:, None, :] - ring_centres()[None], axis=2)
near = (dist < 0.5).astype(mx.float32).mean(axis=0)
print("fraction near each mode", fmt(near, 3), "total", round(near.sum().item(), 3))
print("mean distance to nearest mode", round(dist.min(axis=1).mean().item(), 3))

# ---- R1 penalty with RMSprop --------------------------------------------------------------
r1_critic = Critic()
mx.eval(r1_critic.parameters())
opt_r1 = optim.RMSprop(learning_rate=5e-4)


def r1_loss(real, fake, gamma=5.0):
    g = mx.grad(lambda x_: r1_critic(x_).sum())(real)
    r1 = (g * g).sum(axis=1).mean()
    adv = nn.softplus(r1_critic(fake)).mean() + nn.softplus(-r1_critic(real)).mean()
    return adv + 0.5 * gamma * r1


r1_step = nn.value_and_grad(r1_critic, r1_loss)
for i in range(6):
    key, k = mx.random.split(key)
    real, z, _ = draw_batch(k)
    loss, grads = r1_step(real, mx.stop_gradient(gen(z)))
    opt_r1.update(r1_critic, grads)
    mx.eval(r1_critic.parameters(), opt_r1.state)
    if i % 2 == 1:
        print(f"R1 step {i + 1} loss {loss.item():.4f}")

# ---- spectral normalisation by power iteration -----------------------------------------


def l2_normalize(a, eps=1e-12):
    return a / (mx.linalg.norm(a) + eps)


def spectral_normalize(weight, u, iters=20):
    for _ in range(iters):
        v = l2_normalize(weight.T @ u)
        u = l2_normalize(weight @ v)
    u, v = mx.stop_gradient(u), mx.stop_gradient(v)
    sigma = u @ weight @ v
    return weight / sigma, sigma, u


W = critic.l2.weight
key, k = mx.random.split(key)
W_sn, sigma, u_sn = spectral_normalize(W, mx.random.normal((W.shape[0],), key=k))
s_max = mx.linalg.svd(W, compute_uv=False, stream=mx.cpu)[0]
print("sigma by power iteration", round(sigma.item(), 4), "by svd", round(s_max.item(), 4))
print("normalised top singular value",
      round(mx.linalg.svd(W_sn, compute_uv=False, stream=mx.cpu)[0].item(), 4))
g_sn = mx.grad(lambda w_: spectral_normalize(w_, u_sn, iters=1)[0].sum())(W)
print("grad through spectral norm", g_sn.shape, round(mx.abs(g_sn).sum().item(), 4))

# ---- typical mistakes ---------------------------------------------------------------------
mistakes = [
    lambda: mx.grad(lambda x_: critic(x_))(x),  # grad of a non-scalar
    lambda: mx.grad(lambda a, b: (a * b).sum(), argnums=2)(x, x),  # argnums out of range
    lambda: mx.vmap(lambda a, b: a + b)(mx.zeros((3, 2)), mx.zeros((4, 2))),  # mismatched sizes
    lambda: mx.vmap(lambda a, b: a + b, in_axes=(0, 1))(mx.zeros((3, 2)), mx.zeros((3, 2))),
    lambda: mx.vmap(lambda a: a * 2, in_axes=2)(x),  # in_axes past the array's dims
    lambda: mx.grad(lambda a: (a.sum(), a))(x),  # a tuple: grad takes its first as loss
    lambda: mx.value_and_grad(lambda a: [a.sum(), 1.0])(x)[1],  # a list with the loss
    lambda: mx.vmap(mx.grad(lambda a: (a * a).sum()))(mx.zeros((0, 2))),  # empty batch
    lambda: mx.jvp(lambda a: a * 2, (x,), (mx.zeros((3, 2)),)),  # tangent of another shape
    lambda: mx.vjp(lambda a: a * 2, (x,), (mx.zeros((6,)),)),  # cotangent of another shape
    lambda: mx.grad(lambda a: a.sum(), argnums=-1)(x),  # negative argnums
]
for mistake in mistakes:
    try:
        print("no error", mistake())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
