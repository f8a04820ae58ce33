"""A tiny class-conditional DDPM on 8x8 single-channel images (horizontal vs vertical bars).

Exercises: linear (torch.linspace) and cosine (torch.cos, clamp, float64) beta schedules,
alphas_cumprod via torch.cumprod, F.pad of the cumprod, sqrt / rsqrt / log of buffers held with
register_buffer, sinusoidal timestep embeddings (exp, arange, outer product, cat of sin/cos),
a small U-Net (Conv2d, GroupNorm, SiLU, AvgPool2d, nn.Upsample nearest and ConvTranspose2d,
skip connections, residual blocks with time embeddings broadcast by [:, :, None, None]),
schedule lookup by tensor.gather and LongTensor indexing, torch.randint / torch.bernoulli /
torch.randn with a torch.Generator, MSE on predicted noise with several reductions, an EMA
copy (copy.deepcopy, lerp_, mul_/add_ under no_grad), gradient clipping, ancestral sampling
with torch.where(t > 0), classifier-free guidance, a DDIM step, sample statistics (quantile,
histc) and typical user mistakes."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T, NUM_CLASSES, B = 40, 2, 32


def linear_betas(steps, start=1e-4, end=0.2):
    return torch.linspace(start, end, steps, dtype=torch.float32)


def cosine_betas(steps, s=0.008):
    x = torch.linspace(0, steps, steps + 1, dtype=torch.float64)
    f = torch.cos(((x / steps) + s) / (1 + s) * math.pi * 0.5) ** 2
    ac = f / f[0]
    return torch.clamp(1 - ac[1:] / ac[:-1], 0.0001, 0.9999).float()


class Schedule(nn.Module):
    def __init__(self, betas):
        super().__init__()
        alphas = 1.0 - betas
        ac = torch.cumprod(alphas, dim=0)
        ac_prev = F.pad(ac[:-1], (1, 0), value=1.0)
        self.register_buffer("betas", betas)
        self.register_buffer("alphas_cumprod", ac)
        self.register_buffer("alphas_cumprod_prev", ac_prev)
        self.register_buffer("sqrt_ac", ac.sqrt())
        self.register_buffer("sqrt_one_minus_ac", torch.sqrt(1.0 - ac))
        self.register_buffer("sqrt_recip_ac", torch.rsqrt(ac))
        self.register_buffer("sqrt_recipm1_ac", torch.sqrt(1.0 / ac - 1))
        post_var = betas * (1.0 - ac_prev) / (1.0 - ac)
        self.register_buffer("post_log_var", torch.log(post_var.clamp(min=1e-20)))
        self.register_buffer("post_c1", betas * ac_prev.sqrt() / (1.0 - ac))
        self.register_buffer("post_c2", (1.0 - ac_prev) * alphas.sqrt() / (1.0 - ac))
        self.register_buffer("step_count", torch.zeros((), dtype=torch.long), persistent=False)


def extract(a, t, x_shape):
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(x_shape) - 1)))


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups=4):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(groups, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(groups, cout, eps=1e-6)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class TinyUNet(nn.Module):
    def __init__(self, ch=16, tdim=32, num_classes=NUM_CLASSES):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.label_emb = nn.Embedding(num_classes + 1, tdim)  # last index = "no label"
        self.inc = nn.Conv2d(1, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, tdim)
        self.pool = nn.AvgPool2d(2)
        self.down2 = ResBlock(ch, 2 * ch, tdim)
        self.mid = ResBlock(2 * ch, 2 * ch, tdim)
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.up_tconv = nn.ConvTranspose2d(2 * ch, ch, 2, stride=2)
        self.up1 = ResBlock(3 * ch + ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(4, ch), nn.SiLU(), nn.Conv2d(ch, 1, 3, padding=1))

    def forward(self, x, t, y):
        emb = self.time_mlp(timestep_embedding(t, self.tdim)) + self.label_emb(y)
        h0 = self.down1(self.inc(x), emb)                      # (B, ch, 8, 8)
        h1 = self.mid(self.down2(self.pool(h0), emb), emb)     # (B, 2ch, 4, 4)
        up = torch.cat([self.up_nearest(h1), self.up_tconv(h1), h0], dim=1)
        return self.out(self.up1(up, emb))


def make_images(labels, gen):
    img = torch.full((labels.shape[0], 1, 8, 8), -1.0)
    pos = torch.randint(1, 7, (labels.shape[0],), generator=gen)
    for i, (lab, p) in enumerate(zip(labels.tolist(), pos.tolist())):
        (img[i, 0, p, :] if lab == 0 else img[i, 0, :, p]).fill_(1.0)  # a bar, through a view
    return img


gen = torch.Generator().manual_seed(1234)
lin, cos = Schedule(linear_betas(T)), Schedule(cosine_betas(T))
for name, s in (("linear", lin), ("cosine", cos)):
    print(name, s.betas.dtype, tuple(s.alphas_cumprod.shape),
          f"{s.betas[0].item():.6f} {s.betas[-1].item():.4f}",
          f"ac_T={s.alphas_cumprod[-1].item():.6f}", f"prev0={s.alphas_cumprod_prev[0].item()}")
print("buffers:", [n for n, _ in cos.named_buffers()][:4], len(cos.state_dict()))
print("rsqrt", lin.sqrt_recip_ac[[0, 10, 39]], lin.post_log_var[:3])
emb = timestep_embedding(torch.tensor([0, 5, 39]), 8)
print("temb", emb.shape, emb[1])

sched = cos
model = TinyUNet()
ema = copy.deepcopy(model).requires_grad_(False)
ema_fe = copy.deepcopy(ema)  # the same EMA, updated with torch._foreach_* list ops
print(sum(p.numel() for p in model.parameters()), "params,",
      sum(p.requires_grad for p in ema.parameters()), "trainable in ema")
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)


def q_sample(x0, t, noise):
    return (extract(sched.sqrt_ac, t, x0.shape) * x0
            + extract(sched.sqrt_one_minus_ac, t, x0.shape) * noise)


for step in range(1, 31):
    labels = torch.randint(0, NUM_CLASSES, (B,), generator=gen)
    x0 = make_images(labels, gen)
    t = torch.randint(0, T, (B,), generator=gen, dtype=torch.long)
    noise = torch.randn(x0.shape, generator=gen)
    drop = torch.bernoulli(torch.full((B,), 0.2), generator=gen).bool()
    y = torch.where(drop, torch.full_like(labels, NUM_CLASSES), labels)
    pred = model(q_sample(x0, t, noise), t, y)
    loss = F.mse_loss(pred, noise)
    per_sample = F.mse_loss(pred, noise, reduction="none").mean(dim=(1, 2, 3))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    layer_norms = torch._foreach_norm([p.grad for p in model.parameters()])
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, foreach=True)
    opt.step()
    sched.step_count += 1
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            if step % 2:
                pe.lerp_(pm, 0.1)
            else:
                pe.mul_(0.9).add_(pm, alpha=0.1)
        fe_params, params = list(ema_fe.parameters()), list(model.parameters())
        if step % 2:
            torch._foreach_lerp_(fe_params, params, 0.1)
        else:
            torch._foreach_mul_(fe_params, 0.9)
            torch._foreach_add_(fe_params, params, alpha=0.1)
    if step % 5 == 0:
        summed = F.mse_loss(pred, noise, reduction="sum")
        print(f"step {step:2d} loss {loss.item():.4f} sum {summed.item():.2f} "
              f"gnorm {gnorm.item():.4f} max layer {max(layer_norms).item():.3f} "
              f"dropped {int(drop.sum())} "
              f"worst t={t[per_sample.argmax()].item()}")
print("step_count", sched.step_count.item(), sched.step_count.dtype)
ema_dist = sum((pe - pm).pow(2).sum() for pe, pm in zip(ema.parameters(), model.parameters()))
print(f"ema distance {ema_dist.sqrt().item():.4f}")
diffs = torch._foreach_sub(list(ema.parameters()), list(ema_fe.parameters()))
print("foreach ema max diff", max(d.abs().max().item() for d in diffs), type(diffs).__name__)


@torch.no_grad()
def guided_eps(net, x, t, y, w):
    eps_c = net(x, t, y)
    eps_u = net(x, t, torch.full_like(y, NUM_CLASSES))
    return eps_u + w * (eps_c - eps_u)


@torch.no_grad()
def ddpm_sample(net, y, w, gen):
    x = torch.randn((y.shape[0], 1, 8, 8), generator=gen)
    for i in reversed(range(T)):
        t = torch.full((y.shape[0],), i, dtype=torch.long)
        eps = guided_eps(net, x, t, y, w)
        x0 = (extract(sched.sqrt_recip_ac, t, x.shape) * x
              - extract(sched.sqrt_recipm1_ac, t, x.shape) * eps).clamp(-1.0, 1.0)
        mean = extract(sched.post_c1, t, x.shape) * x0 + extract(sched.post_c2, t, x.shape) * x
        z = torch.where((t > 0)[:, None, None, None], torch.randn_like(x), torch.zeros_like(x))
        x = mean + (0.5 * extract(sched.post_log_var, t, x.shape)).exp() * z
    return x


@torch.no_grad()
def ddim_sample(net, y, w, gen, steps=8, eta=0.0):
    x = torch.randn((y.shape[0], 1, 8, 8), generator=gen)
    seq = torch.linspace(T - 1, 0, steps).round().long()
    for i, j in zip(seq[:-1].tolist(), seq[1:].tolist()):
        t = torch.full((y.shape[0],), i, dtype=torch.long)
        eps = guided_eps(net, x, t, y, w)
        a_t, a_s = sched.alphas_cumprod[i], sched.alphas_cumprod[j]
        x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
        sigma = eta * ((1 - a_s) / (1 - a_t) * (1 - a_t / a_s)).sqrt()
        x = a_s.sqrt() * x0 + (1 - a_s - sigma**2).sqrt() * eps
    return x, seq


y = torch.tensor([0, 0, 1, 1])
sample_gen = torch.Generator().manual_seed(7)
for label, net in (("model", model), ("ema", ema)):
    s = ddpm_sample(net.eval(), y, 2.0, sample_gen)
    print(label, s.shape, f"mean {s.mean().item():.3f} std {s.std().item():.3f} "
          f"min {s.min().item():.3f} max {s.max().item():.3f}")
q = torch.quantile(s.flatten(), torch.tensor([0.1, 0.5, 0.9]))
print("quantiles", q, torch.histc(s, bins=5, min=-1.5, max=1.5))
rows, cols = s[:, 0].mean(dim=2), s[:, 0].mean(dim=1)
print("row/col spread", (rows.std(dim=1) > cols.std(dim=1)).tolist())
d, seq = ddim_sample(ema, y, 1.0, sample_gen)
print("ddim", seq.tolist(), d.shape, f"{d.mean().item():.3f} {d.abs().max().item():.3f}")

# --- typical mistakes ---------------------------------------------------------------------
def attempt(what, fn):
    try:
        out = fn()
        print(what, "ok", tuple(out.shape))
    except Exception as e:
        print(what, type(e).__name__, str(e).splitlines()[0])


attempt("gather t=T", lambda: extract(sched.sqrt_ac, torch.tensor([3, T]), (2, 1, 8, 8)))
attempt("index t=T", lambda: sched.betas[torch.tensor([T])])
attempt("gather int32", lambda: sched.betas.gather(0, torch.tensor([1, 2], dtype=torch.int32)))
attempt("groupnorm 3", lambda: nn.GroupNorm(3, 16))
attempt("mse shape", lambda: F.mse_loss(torch.zeros(2, 1, 8, 8), torch.zeros(2, 1, 4, 4)))
attempt("skip cat", lambda: torch.cat([torch.zeros(2, 16, 8, 8), torch.zeros(2, 16, 4, 4)], 1))
attempt("temb no bcast", lambda: torch.zeros(2, 16, 8, 8) + torch.zeros(2, 16))
attempt("randint", lambda: torch.randint(5, 5, (3,), generator=gen))
attempt("bernoulli p>1", lambda: torch.bernoulli(torch.full((3,), 1.5)))
attempt("upsample 1d", lambda: nn.Upsample(scale_factor=2, mode="bilinear")(torch.zeros(1, 4)))
attempt("label oob", lambda: model.label_emb(torch.tensor([NUM_CLASSES + 1])))
attempt("quantile int", lambda: torch.quantile(torch.arange(4), 0.5))
attempt("foreach lens", lambda: torch._foreach_lerp_(list(ema.parameters())[:2],
                                                     list(model.parameters())[:3], 0.1))
attempt("foreach 1d alpha", lambda: torch._foreach_add(list(ema.parameters()),
                                                       torch.ones(1), alpha=0.5))
