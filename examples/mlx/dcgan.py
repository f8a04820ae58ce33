"""Generative adversarial networks (a DCGAN and a WGAN-GP) in the shape of MLX's examples.

The data are 16x16 one-channel images, channels last (NHWC), of a filled rectangle or disc
on a dark ground, rendered with mx ops from shapes drawn by `mx.random` with explicit keys.
A DCGAN (a generator of strided `nn.ConvTranspose2d` with `nn.BatchNorm`, a discriminator of
strided `nn.Conv2d` with `nn.LayerNorm` and `leaky_relu`, weights drawn from N(0, 0.02) by
`model.apply`) trains with one-sided label smoothing, two Adam optimizers and two
`nn.value_and_grad` calls per step, eagerly and then as a compiled step whose state holds a
random key; an EMA of the generator follows it. A WGAN-GP critic (GroupNorm) is trained with
a gradient penalty taken by `mx.grad` with respect to interpolated images, and an original
WGAN critic with weight clipping. Image statistics, an ASCII rendering, a `save_weights` /
`load_weights` round trip and typical mistakes end the run.
Run on ember with `python -m ember.run dcgan.py`.
"""

import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SIZE = 16
LATENT = 16
BATCH = 16


def draw_shapes(key, n):
    """n images in [-1, 1] of one rectangle or disc each; returns (images, is_disc)."""
    k_centre, k_half, k_kind, k_level = mx.random.split(key, 4)
    centre = mx.random.uniform(5.0, 11.0, (n, 2), key=k_centre)
    half = mx.random.uniform(2.0, 4.5, (n, 2), key=k_half)
    disc = mx.random.bernoulli(0.5, (n,), key=k_kind)
    level = mx.random.uniform(0.4, 1.0, (n,), key=k_level)
    grid = mx.arange(SIZE, dtype=mx.float32) + 0.5
    dy = grid[None, :, None] - centre[:, 0, None, None]
    dx = grid[None, None, :] - centre[:, 1, None, None]
    rect = (mx.abs(dy) <= half[:, 0, None, None]) & (mx.abs(dx) <= half[:, 1, None, None])
    radius = half.mean(axis=1)[:, None, None]
    circle = dy * dy + dx * dx <= radius * radius
    inside = mx.where(disc[:, None, None], circle, rect)
    images = mx.where(inside, level[:, None, None], -1.0)
    return images[..., None], disc


class Generator(nn.Module):
    def __init__(self, latent=LATENT, base=16):
        super().__init__()
        self.project = nn.Linear(latent, 4 * 4 * 2 * base, bias=False)
        self.bn0 = nn.BatchNorm(2 * base)
        self.up1 = nn.ConvTranspose2d(2 * base, base, 3, stride=2, padding=1,
                                      output_padding=1, bias=False)
        self.bn1 = nn.BatchNorm(base, momentum=0.2)
        self.up2 = nn.ConvTranspose2d(base, 1, kernel_size=(4, 4), stride=(2, 2),
                                      padding=(1, 1))

    def __call__(self, z):
        x = self.project(z).reshape(z.shape[0], 4, 4, -1)
        x = nn.relu(self.bn0(x))
        x = nn.relu(self.bn1(self.up1(x)))
        return nn.tanh(self.up2(x))


class Discriminator(nn.Module):
    def __init__(self, base=16, norm="layer"):
        super().__init__()
        self.conv1 = nn.Conv2d(1, base, 4, stride=2, padding=1)
        self.conv2 = nn.Conv2d(base, 2 * base, kernel_size=4, stride=2, padding=1)
        if norm == "layer":
            self.norm = nn.LayerNorm(2 * base)
        else:
            self.norm = nn.GroupNorm(4, 2 * base, pytorch_compatible=True)
        self.head = nn.Conv2d(2 * base, 1, 4)

    def __call__(self, x):
        x = nn.leaky_relu(self.conv1(x), 0.2)
        x = nn.leaky_relu(self.norm(self.conv2(x)), negative_slope=0.2)
        return self.head(x).reshape(-1)


def dcgan_init(model):
    """Conv / linear weights from N(0, 0.02), BatchNorm scales from N(1, 0.02), biases 0."""
    def pick(kinds):
        return lambda m, k, v: isinstance(v, (nn.Module, list, dict)) or (
            k == "weight" and isinstance(m, kinds))
    model.apply(nn.init.normal(0.0, 0.02), pick((nn.Conv2d, nn.ConvTranspose2d, nn.Linear)))
    model.apply(nn.init.normal(mean=1.0, std=0.02), pick(nn.BatchNorm))
    biases = [(k, mx.zeros_like(v)) for k, v in tree_flatten(model.parameters())
              if k.endswith("bias")]
    model.update(tree_unflatten(biases))
    return model


def bce(logits, target):
    return nn.losses.binary_cross_entropy(logits, target, with_logits=True)


def d_loss_fn(disc, real, fake):
    smooth = mx.full(real.shape[0], 0.9)  # one-sided label smoothing, by hand
    return bce(disc(real), smooth) + bce(disc(fake), mx.zeros(fake.shape[0]))


def g_loss_fn(gen, disc, z):
    return bce(disc(gen(z)), mx.ones(z.shape[0]))


def stats(name, images):
    bright = mx.maximum(images, 0.0).mean()  # (a count of bright pixels would jump)
    print(f"{name}: mean {images.mean().item():.4f} std {mx.std(images).item():.4f} "
          f"min {images.min().item():.4f} max {images.max().item():.4f} "
          f"bright mass {bright.item():.5f}")


def ascii(image):
    chars = " .:#"
    levels = mx.clip(((image[..., 0] + 1.0) * 2.0).astype(mx.int32), 0, 3).tolist()
    for row in levels:
        print("|" + "".join(chars[v] for v in row) + "|")


mx.random.seed(0)
data_key, train_key, z_key = mx.random.split(mx.random.key(42), 3)
real_all, is_disc = draw_shapes(data_key, 8 * BATCH)
print("data", real_all.shape, real_all.dtype, "discs", is_disc.sum().item())
stats("real", real_all)
print("real sample (disc)" if is_disc[0].item() else "real sample (rectangle)")
ascii(real_all[0])

# ---- DCGAN ------------------------------------------------------------------------------
gen = dcgan_init(Generator())
disc = dcgan_init(Discriminator())
weights = [v for k, v in tree_flatten(gen.parameters()) if k.endswith("weight")]
print("init weight stds", " ".join(f"{mx.std(w).item():.3f}" for w in weights))
print(disc)
n_params = sum(v.size for _, v in tree_flatten(gen.trainable_parameters()))
print("generator params", n_params, "discriminator params",
      sum(v.size for _, v in tree_flatten(disc.trainable_parameters())))
g_opt = optim.Adam(learning_rate=2e-4, betas=[0.5, 0.999])
d_opt = optim.Adam(learning_rate=2e-4, betas=[0.5, 0.999])
d_value_grad = nn.value_and_grad(disc, d_loss_fn)
g_value_grad = nn.value_and_grad(gen, g_loss_fn)

ema = Generator()
ema.update(tree_map(lambda p: p, gen.parameters()))


def update_ema(decay=0.8):
    ema.update(tree_map(lambda e, p: decay * e + (1.0 - decay) * p,
                        ema.parameters(), gen.parameters()))


def dcgan_step(real, key):
    k_fake, k_gen = mx.random.split(key)
    fake = mx.stop_gradient(gen(mx.random.normal((real.shape[0], LATENT), key=k_fake)))
    d_loss, d_grads = d_value_grad(disc, real, fake)
    d_opt.update(disc, d_grads)
    g_loss, g_grads = g_value_grad(gen, disc, mx.random.normal((real.shape[0], LATENT),
                                                               key=k_gen))
    g_opt.update(gen, g_grads)
    return d_loss, g_loss


gen.train()
disc.train()
keys = mx.random.split(train_key, 6)
for step in range(6):
    real = real_all[step * BATCH:(step + 1) * BATCH]
    d_loss, g_loss = dcgan_step(real, keys[step])
    update_ema()
    mx.eval(gen.parameters(), disc.parameters(), ema.parameters())
    print(f"dcgan step {step}: d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")
print("bn0 running mean", f"{gen.bn0.running_mean.mean().item():.4f}",
      "var", f"{gen.bn0.running_var.mean().item():.4f}")

state_key = [mx.random.key(7)]
state = [gen.state, disc.state, g_opt.state, d_opt.state, state_key]


@partial(mx.compile, inputs=state, outputs=state)
def compiled_step(real):
    key, sub = mx.random.split(state_key[0])
    state_key[0] = key
    return dcgan_step(real, sub)


for step in range(6, 10):
    real = real_all[(step % 8) * BATCH:((step % 8) + 1) * BATCH]
    d_loss, g_loss = compiled_step(real)
    update_ema()
    mx.eval(state, ema.parameters())
    print(f"compiled step {step}: d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")
print("state key", state_key[0].tolist())

gen.eval()
ema.eval()
print("training flags", gen.training, gen.bn0.training, disc.training)
z_fixed = mx.random.normal((BATCH, LATENT), key=z_key)
samples = gen(z_fixed)
stats("generator", samples)
stats("ema generator", ema(z_fixed))
print("disc on real", f"{mx.sigmoid(disc(real_all[:BATCH])).mean().item():.4f}",
      "on fake", f"{mx.sigmoid(disc(samples)).mean().item():.4f}")
pooled = nn.AvgPool2d(kernel_size=4, stride=4)(ema(z_fixed))[11]
print("ema sample 11, 4x4 average-pooled, scaled to its range")
ascii((pooled - pooled.min()) / (pooled.max() - pooled.min()) * 1.999 - 1.0)

# ---- WGAN-GP ----------------------------------------------------------------------------
def critic_loss_fn(critic, real, fake, eps):
    x_hat = eps * real + (1.0 - eps) * fake
    grads = mx.grad(lambda x: critic(x).sum())(x_hat)
    norms = mx.linalg.norm(grads.reshape(grads.shape[0], SIZE, -1), axis=(1, 2))
    penalty = mx.mean((norms - 1.0) ** 2)
    wasserstein = critic(real).mean() - critic(fake).mean()
    return -wasserstein + 10.0 * penalty, (wasserstein, penalty)


def wgen_loss_fn(gen, critic, z):
    return -critic(gen(z)).mean()


wgen = dcgan_init(Generator(base=8))
critic = dcgan_init(Discriminator(base=8, norm="group"))
wg_opt = optim.Adam(learning_rate=1e-3, betas=[0.5, 0.999])
c_opt = optim.Adam(learning_rate=1e-3, betas=[0.5, 0.999])
c_value_grad = nn.value_and_grad(critic, critic_loss_fn)
wg_value_grad = nn.value_and_grad(wgen, wgen_loss_fn)
wkey = mx.random.key(3)
for step in range(4):
    for inner in range(2):  # two critic steps per generator step
        wkey, k_z, k_eps = mx.random.split(wkey, 3)
        real = real_all[(2 * step + inner) * BATCH:(2 * step + inner + 1) * BATCH]
        fake = mx.stop_gradient(wgen(mx.random.normal((BATCH, LATENT), key=k_z)))
        eps = mx.random.uniform(shape=(BATCH, 1, 1, 1), key=k_eps)
        (c_loss, (w_dist, gp)), c_grads = c_value_grad(critic, real, fake, eps)
        c_opt.update(critic, c_grads)
    wkey, k_z = mx.random.split(wkey)
    g_loss, g_grads = wg_value_grad(wgen, critic, mx.random.normal((BATCH, LATENT), key=k_z))
    wg_opt.update(wgen, g_grads)
    mx.eval(critic.parameters(), wgen.parameters(), c_opt.state, wg_opt.state)
    print(f"wgan-gp step {step}: critic {c_loss.item():.4f} w {w_dist.item():.4f} "
          f"gp {gp.item():.4f} gen {g_loss.item():.4f}")

probe = real_all[:4]
g = mx.grad(lambda x: critic(x).sum())(probe)
print("critic input-grad norms",
      " ".join(f"{v:.4f}" for v in mx.linalg.norm(g.reshape(4, -1), axis=1).tolist()))

# ---- WGAN with weight clipping ----------------------------------------------------------
clipped = dcgan_init(Discriminator(base=8, norm="group"))
clip_opt = optim.Adam(learning_rate=5e-3, betas=[0.5, 0.999])


def clip_loss_fn(critic, real, fake):
    return critic(fake).mean() - critic(real).mean()


clip_value_grad = nn.value_and_grad(clipped, clip_loss_fn)
for step in range(3):
    real = real_all[step * BATCH:(step + 1) * BATCH]
    fake = mx.stop_gradient(wgen(mx.random.normal((BATCH, LATENT), key=mx.random.key(step))))
    loss, grads = clip_value_grad(clipped, real, fake)
    clip_opt.update(clipped, grads)
    clipped.update(tree_map(lambda p: mx.clip(p, -0.01, 0.01), clipped.trainable_parameters()))
    biggest = max(mx.abs(v).max().item() for _, v in tree_flatten(clipped.parameters()))
    print(f"clipped step {step}: loss {loss.item():.6f} max |w| {biggest:.4f}")

# ---- save / load ------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "generator.npz")
    ema.save_weights(path)
    loaded = mx.load(path)
    print("saved keys", len(loaded), sorted(loaded)[:4])
    again = Generator()
    again.load_weights(path)
    again.eval()
    print("reloaded equal", mx.array_equal(again(z_fixed), ema(z_fixed)).item())
    again.train()
    print("train-mode output differs", not mx.allclose(again(z_fixed), ema(z_fixed)).item())

# ---- typical mistakes -------------------------------------------------------------------
mistakes = [
    lambda: disc(mx.zeros((2, 1, SIZE, SIZE))),  # NCHW into a channels-last conv
    lambda: gen(mx.zeros((2, LATENT + 4))),  # latent of the wrong size
    lambda: mx.grad(lambda x: critic(x))(probe),  # grad of a non-scalar
    lambda: mx.linalg.norm(g, axis=(1, 2, 3)),  # norm over three axes
    lambda: bce(mx.zeros((4, 1)), mx.zeros((3, 1))),  # targets of another shape
    lambda: gen.bn1(mx.zeros((2, 4, 4, 32))),  # BatchNorm over the wrong channels
    lambda: Generator().load_weights([("up2.weight", mx.zeros((1, 4, 4, 16)))]),
    lambda: mx.random.normal((2, LATENT), key=mx.array([1, 2, 3], dtype=mx.uint32)),
]
for mistake in mistakes:
    try:
        print("no error", mistake())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
