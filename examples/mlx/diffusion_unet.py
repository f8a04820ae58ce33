"""A tiny denoising diffusion model (DDPM) with a small U-Net, in the shape of MLX's examples.

The data are 8x8 two-channel "images" of smooth waves with random phases drawn with
`mx.random`. A U-Net (Conv2d down with stride 2, ConvTranspose2d and Upsample back up, residual
blocks with GroupNorm and a timestep embedding, self-attention over the 4x4 positions) learns
to predict the noise that `q_sample` adds under a linear beta schedule. It trains eagerly and
then as a compiled step, keeps an EMA of its weights, is frozen and partly unfrozen, saved and
reloaded, and samples with 4 reverse steps; the losses of `nn.losses` and typical mistakes end
the run. Run on ember with `python -m ember.run diffusion_unet.py`.
"""

import math
import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

T = 100


def timestep_embedding(t, dims):
    half = dims // 2
    freqs = mx.exp(-math.log(10000.0) * mx.arange(half, dtype=mx.float32) / half)
    args = t.astype(mx.float32)[:, None] * freqs[None]
    return mx.concatenate([mx.cos(args), mx.sin(args)], axis=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups, act, pytorch_compatible):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, pytorch_compatible=pytorch_compatible)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(groups, cout, affine=True, pytorch_compatible=True)
        self.conv2 = nn.Conv2d(cout, cout, kernel_size=(3, 3), padding=(1, 1), bias=False)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
        self.act = act

    def __call__(self, x, temb):
        h = self.conv1(self.act(self.norm1(x)))
        h = h + self.time(temb)[:, None, None, :]
        h = self.conv2(self.act(self.norm2(h)))
        return self.skip(x) + h


class Attention(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.norm = nn.GroupNorm(4, dims)
        self.pe = nn.SinusoidalPositionalEncoding(dims, max_freq=1.0, scale=0.5)
        self.mha = nn.MultiHeadAttention(dims, heads, bias=True)

    def __call__(self, x):
        B, H, W, C = x.shape
        h = self.norm(x).reshape(B, H * W, C)
        h = h + self.pe(mx.arange(H * W))
        mask = nn.MultiHeadAttention.create_additive_causal_mask(H * W)
        return x + self.mha(h, h, h, mask=mask).reshape(B, H, W, C)


class UNet(nn.Module):
    def __init__(self, channels=2, base=8, tdim=16):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inc = nn.Conv2d(channels, base, 3, stride=1, padding=1)
        self.down1 = ResBlock(base, 2 * base, tdim, 4, nn.SiLU(), True)
        self.down = nn.Conv2d(2 * base, 2 * base, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * base, 2 * base, tdim, 4, nn.GELU(approx="precise"), False)
        self.attn = Attention(2 * base, 2)
        self.up = nn.ConvTranspose2d(2 * base, base, 3, stride=2, padding=1, output_padding=1)
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.up_linear = nn.Upsample(scale_factor=(2, 2), mode="linear", align_corners=True)
        self.up1 = ResBlock(5 * base, base, tdim, 4, nn.GELU(approx="tanh"), True)
        self.out = nn.Sequential(nn.GroupNorm(2, base), nn.GELU(approx="fast"),
                                 nn.Conv2d(base, channels, 3, padding=1))

    def __call__(self, x, t):
        temb = self.temb(timestep_embedding(t, self.tdim))
        h1 = self.down1(self.inc(x), temb)
        h = self.attn(self.mid(self.down(h1), temb))
        h = mx.concatenate([self.up(h), self.up_nearest(h) + self.up_linear(h), h1], axis=-1)
        return self.out(self.up1(h, temb))


def make_data(key, n):
    k1, k2 = mx.random.split(key)
    phase = mx.random.uniform(0, 2 * math.pi, (n, 1, 1, 2), key=k1)
    grid = mx.linspace(0, math.pi, 8)
    waves = mx.sin(grid[None, :, None, None] + phase) * mx.cos(grid[None, None, :, None] * 0.5)
    return waves + 0.05 * mx.random.normal((n, 8, 8, 2), key=k2)


betas = mx.linspace(1e-4, 0.02, T)
alphas_cumprod = mx.cumprod(1.0 - betas)


def q_sample(x0, t, noise):
    ab = mx.take(alphas_cumprod, t)[:, None, None, None]
    return mx.sqrt(ab) * x0 + mx.sqrt(1.0 - ab) * noise


def loss_fn(model, x0, t, noise):
    return nn.losses.mse_loss(model(q_sample(x0, t, noise), t), noise)


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


def show_losses():
    p = mx.array([[0.2, 0.7, 0.1], [0.6, 0.3, 0.1]])
    q = mx.array([[0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    y = mx.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    z = mx.array([[1.5, -2.0, 0.3], [-0.7, 2.5, 0.0]])
    for red in ("none", "mean", "sum"):
        vals = [nn.losses.mse_loss(z, q, reduction=red), nn.losses.l1_loss(z, q, reduction=red),
                nn.losses.huber_loss(z, q, delta=0.5, reduction=red),
                nn.losses.smooth_l1_loss(z, q, beta=0.5, reduction=red),
                nn.losses.log_cosh_loss(z, q, reduction=red),
                nn.losses.cosine_similarity_loss(z, q, axis=1, reduction=red),
                nn.losses.kl_div_loss(mx.log(p), mx.log(q), axis=-1, reduction=red),
                nn.losses.binary_cross_entropy(z, y, reduction=red),
                nn.losses.binary_cross_entropy(p, y, with_logits=False, reduction=red),
                nn.losses.margin_ranking_loss(z[0], z[1], mx.array([-1, 1, 1]), margin=0.2,
                                              reduction=red)]
        print(f"losses {red}:", " ".join(f"{v.sum().item():.4f}" for v in vals),
              [v.shape for v in vals[5:7]])


def main():
    mx.random.seed(0)
    k_data, k_train, k_sample = mx.random.split(mx.random.key(3), 3)
    data = make_data(k_data, 16)
    print("data", data.shape, data.dtype, f"mean {data.mean().item():.4f}",
          f"std {mx.std(data).item():.4f}")
    print("alphas_cumprod", [round(v, 4) for v in alphas_cumprod[::33].tolist()],
          alphas_cumprod.dtype)
    pe = nn.SinusoidalPositionalEncoding(8, cos_first=True, full_turns=True)(mx.arange(3))
    rope = nn.RoPE(4, traditional=True, base=100)(mx.ones((1, 3, 4)), offset=2)
    print("pe", pe.shape, [round(v, 4) for v in pe[2].tolist()])
    print("rope", rope.shape, [round(v, 4) for v in rope[0, -1].tolist()])
    print("t-emb", [round(v, 4) for v in timestep_embedding(mx.array([0, 7]), 6)[1].tolist()])

    model = UNet()
    mx.eval(model.parameters())
    print(f"unet: {count(model.parameters())} parameters,",
          "up", model.up.weight.shape, "down", model.down.weight.shape)
    out = model(data[:2], mx.array([3, 50]))
    print("output", out.shape, out.dtype)
    schedule = optim.join_schedules(
        [optim.linear_schedule(0.0, 3e-3, 4), optim.cosine_decay(3e-3, 12, end=3e-4)], [4])
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=1e-3)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    ema = tree_map(lambda p: p, model.parameters())
    keys = mx.random.split(k_train, 12)
    for it in range(6):
        kt, kn = mx.random.split(keys[it])
        t = mx.random.randint(0, T, (8,), key=kt)
        x0 = data[(it % 2) * 8:(it % 2) * 8 + 8]
        loss, grads = loss_and_grad(model, x0, t, mx.random.normal(x0.shape, key=kn))
        grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
        optimizer.update(model, grads)
        ema = tree_map(lambda e, p: 0.9 * e + 0.1 * p, ema, model.parameters())
        mx.eval(model.parameters(), optimizer.state, ema)
        print(f"step {it}: loss {loss.item():.4f}, norm {norm.item():.4f}, "
              f"lr {optimizer.learning_rate.item():.3e}")

    mx.random.seed(4)  # the compiled step draws its own timesteps and noise
    state = [model.state, optimizer.state, mx.random.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def step(x0):
        t = mx.random.randint(0, T, (x0.shape[0],))
        loss, grads = loss_and_grad(model, x0, t, mx.random.normal(x0.shape))
        optimizer.update(model, optim.clip_grad_norm(grads, 1.0)[0])
        return loss, t

    for it in range(6, 12):
        loss, t = step(data[(it % 2) * 8:(it % 2) * 8 + 8])
        mx.eval(state)
        print(f"compiled {it}: loss {loss.item():.4f}, step {optimizer.state['step'].item()}, "
              f"t {t[:3].tolist()}")
    diff = max(mx.abs(a - b).max().item() for (_, a), (_, b)
               in zip(tree_flatten(ema), tree_flatten(model.parameters())))
    print(f"ema max difference {diff:.4f}")

    model.freeze()
    model.unfreeze(keys=["bias"], recurse=True)
    model.attn.unfreeze()
    print("trainable after freeze:", count(model.trainable_parameters()),
          len(tree_flatten(model.trainable_parameters())), "arrays")
    model.unfreeze()
    with tempfile.TemporaryDirectory() as tmp:
        npz, st = os.path.join(tmp, "unet.npz"), os.path.join(tmp, "unet.safetensors")
        model.save_weights(npz)
        ema_model = UNet().update(ema)
        ema_model.save_weights(st)
        fresh = UNet().load_weights(npz)
        probe = data[8:12], mx.array([10, 40, 70, 99])
        same = mx.array_equal(fresh(*probe), model(*probe)).item()
        partial_w = [(k, v) for k, v in tree_flatten(mx.load(st)) if k.startswith("attn")]
        fresh.load_weights(partial_w, strict=False)
        q_ema = ema["attn"]["mha"]["query_proj"]["weight"]
        print("npz reload equal:", same, "| attention from ema:",
              mx.allclose(fresh.attn.mha.query_proj.weight, q_ema).item())
        print("loaded keys", len(mx.load(st)), sorted(mx.load(npz))[:2])

    # DDPM sampling with 4 reverse steps on a respaced schedule
    steps = [99, 66, 33, 0]
    ab = mx.take(alphas_cumprod, mx.array(steps))
    ab_prev = mx.concatenate([ab[1:], mx.array([1.0])])
    x = mx.random.normal((4, 8, 8, 2), key=k_sample)
    for i, s in enumerate(steps):
        beta = 1 - ab[i] / ab_prev[i]
        eps = ema_model(x, mx.full((4,), s))
        mean = (x - beta / mx.sqrt(1 - ab[i]) * eps) / mx.sqrt(1 - beta)
        if i < len(steps) - 1:
            var = beta * (1 - ab_prev[i]) / (1 - ab[i])
            mean = mean + mx.sqrt(var) * mx.random.normal(x.shape, key=mx.random.key(10 + i))
        x = mean
        mx.eval(x)
        print(f"sample t={s:2d}: mean {x.mean().item():+.4f}, std {mx.std(x).item():.4f}, "
              f"min {x.min().item():+.3f}, max {x.max().item():+.3f}")
    show_losses()

    x_small = mx.zeros((1, 4, 4, 4))
    mistakes = [
        lambda: model.inc(mx.zeros((1, 2, 8, 8))),
        lambda: nn.GroupNorm(3, 8)(mx.zeros((1, 4, 4, 8))),
        lambda: UNet().load_weights([(k, v) for k, v in tree_flatten(model.parameters())
                                     if not k.startswith("out")]),
        lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
        lambda: nn.value_and_grad(model, lambda m, x: m(x, mx.array([1])))(model, data[:1]),
        lambda: nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=2)(x_small).shape,
    ]
    for mistake in mistakes:
        try:
            print("no error", mistake())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
