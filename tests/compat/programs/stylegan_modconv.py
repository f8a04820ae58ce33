"""A tiny StyleGAN2 (16x16) written the way the public PyTorch ports write it: a mapping
network of equalized-lr linear layers, modulated/demodulated convolutions run as one grouped
conv per batch, transposed-conv upsampling followed by an FIR blur (upfirdn2d built from
F.pad and a depthwise F.conv2d), noise injection, ToRGB skips, style mixing, the truncation
trick, a minibatch-stddev discriminator, non-saturating logistic losses with lazy R1 and
path-length regularisation, and an EMA copy of the generator."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
STYLE_DIM, N_MLP, CH, SIZE, BATCH = 16, 2, 8, 16, 4


def fused_leaky_relu(x, bias, slope=0.2, scale=2 ** 0.5):
    shape = (1, -1) + (1,) * (x.dim() - 2)
    return F.leaky_relu(x + bias.view(shape), negative_slope=slope) * scale


class FusedLeakyReLU(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        return fused_leaky_relu(x, self.bias)


class PixelNorm(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-8)


class EqualLinear(nn.Module):
    """Weights stored at unit variance and rescaled at run time (equalized learning rate)."""

    def __init__(self, in_dim, out_dim, bias_init=0.0, lr_mul=1.0, activation=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim).div_(lr_mul))
        self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init))
        self.scale = (1 / math.sqrt(in_dim)) * lr_mul
        self.lr_mul, self.activation = lr_mul, activation

    def forward(self, x):
        if self.activation:
            return fused_leaky_relu(F.linear(x, self.weight * self.scale), self.bias * self.lr_mul)
        return F.linear(x, self.weight * self.scale, bias=self.bias * self.lr_mul)

    def extra_repr(self):
        return f"{self.weight.shape[1]}, {self.weight.shape[0]}, lr_mul={self.lr_mul}"


def fir_kernel(taps):
    k = torch.tensor(taps, dtype=torch.float32)
    k = k[None, :] * k[:, None]
    return k / k.sum()


def upfirdn2d(x, kernel, up=1, down=1, pad=(0, 0)):
    """Zero-insert by `up`, pad (negative pads crop), filter with the flipped kernel, keep
    every `down`-th pixel: the reference formulation of the FIR resampler."""
    b, c, h, w = x.shape
    kh, kw = kernel.shape
    if up > 1:
        x = x.reshape(b, c, h, 1, w, 1)
        x = F.pad(x, [0, up - 1, 0, 0, 0, up - 1])
        x = x.reshape(b, c, h * up, w * up)
    p0, p1 = pad
    x = F.pad(x, [p0, p1, p0, p1])
    weight = torch.flip(kernel, [0, 1]).view(1, 1, kh, kw).repeat(c, 1, 1, 1)
    x = F.conv2d(x, weight.to(x.dtype), groups=c)
    return x[:, :, ::down, ::down]


class Blur(nn.Module):
    def __init__(self, taps, pad, upsample_factor=1):
        super().__init__()
        kernel = fir_kernel(taps)
        if upsample_factor > 1:
            kernel = kernel * (upsample_factor ** 2)
        self.register_buffer("kernel", kernel)
        self.pad = pad

    def forward(self, x):
        return upfirdn2d(x, self.kernel, pad=self.pad)


class Upsample(nn.Module):
    def __init__(self, taps, factor=2):
        super().__init__()
        self.register_buffer("kernel", fir_kernel(taps) * factor ** 2)
        p = self.kernel.shape[0] - factor
        self.pad, self.factor = ((p + 1) // 2 + factor - 1, p // 2), factor

    def forward(self, x):
        return upfirdn2d(x, self.kernel, up=self.factor, pad=self.pad)


class ModulatedConv2d(nn.Module):
    def __init__(self, in_ch, out_ch, k, style_dim, demodulate=True, upsample=False,
                 blur_taps=(1, 3, 3, 1)):
        super().__init__()
        self.in_ch, self.out_ch, self.k = in_ch, out_ch, k
        self.upsample, self.demodulate = upsample, demodulate
        if upsample:
            p = (len(blur_taps) - 2) - (k - 1)
            self.blur = Blur(blur_taps, pad=((p + 1) // 2 + 1, p // 2 + 1), upsample_factor=2)
        self.scale = 1 / math.sqrt(in_ch * k * k)
        self.padding = k // 2
        self.weight = nn.Parameter(torch.randn(1, out_ch, in_ch, k, k))
        self.modulation = EqualLinear(style_dim, in_ch, bias_init=1.0)

    def forward(self, x, style):
        b, c, h, w = x.shape
        style = self.modulation(style).view(b, 1, c, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = weight * demod.view(b, self.out_ch, 1, 1, 1)
        if self.upsample:
            x = x.view(1, b * c, h, w)
            weight = weight.transpose(1, 2).reshape(b * c, self.out_ch, self.k, self.k)
            out = F.conv_transpose2d(x, weight, padding=0, stride=2, groups=b)
            out = out.view(b, self.out_ch, out.shape[2], out.shape[3])
            return self.blur(out)
        weight = weight.view(b * self.out_ch, c, self.k, self.k)
        out = F.conv2d(x.view(1, b * c, h, w), weight, padding=self.padding, groups=b)
        return out.view(b, self.out_ch, out.shape[2], out.shape[3])


class NoiseInjection(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.full((1, channels, 1, 1), 0.1))

    def forward(self, x, noise=None):
        if noise is None:
            b, _, h, w = x.shape
            noise = torch.randn(b, 1, h, w, device=x.device, dtype=x.dtype)
        return x + self.weight * noise


class ConstantInput(nn.Module):
    def __init__(self, channels, size=4):
        super().__init__()
        self.input = nn.Parameter(torch.randn(1, channels, size, size))

    def forward(self, batch):
        return self.input.repeat(batch, 1, 1, 1)


class StyledConv(nn.Module):
    def __init__(self, in_ch, out_ch, k, style_dim, upsample=False):
        super().__init__()
        self.conv = ModulatedConv2d(in_ch, out_ch, k, style_dim, upsample=upsample)
        self.noise = NoiseInjection(out_ch)
        self.activate = FusedLeakyReLU(out_ch)

    def forward(self, x, style):
        return self.activate(self.noise(self.conv(x, style)))


class ToRGB(nn.Module):
    def __init__(self, in_ch, style_dim, upsample=True):
        super().__init__()
        if upsample:
            self.upsample = Upsample((1, 3, 3, 1))
        self.conv = ModulatedConv2d(in_ch, 3, 1, style_dim, demodulate=False)
        self.bias = nn.Parameter(torch.zeros(1, 3, 1, 1))

    def forward(self, x, style, skip=None):
        out = self.conv(x, style) + self.bias
        if skip is not None:
            out = out + self.upsample(skip)
        return out


class Generator(nn.Module):
    def __init__(self, size, style_dim, n_mlp, ch, lr_mlp=0.01):
        super().__init__()
        self.style_dim = style_dim
        layers = [PixelNorm()]
        layers += [EqualLinear(style_dim, style_dim, lr_mul=lr_mlp, activation=True)
                   for _ in range(n_mlp)]
        self.style = nn.Sequential(*layers)
        self.input = ConstantInput(ch)
        self.conv1 = StyledConv(ch, ch, 3, style_dim)
        self.to_rgb1 = ToRGB(ch, style_dim, upsample=False)
        self.log_size = int(math.log2(size))
        self.n_latent = self.log_size * 2 - 2
        self.convs, self.to_rgbs = nn.ModuleList(), nn.ModuleList()
        for _ in range(3, self.log_size + 1):
            self.convs.append(StyledConv(ch, ch, 3, style_dim, upsample=True))
            self.convs.append(StyledConv(ch, ch, 3, style_dim))
            self.to_rgbs.append(ToRGB(ch, style_dim))
        self.register_buffer("w_avg", torch.zeros(style_dim))

    def mean_latent(self, n):
        z = torch.randn(n, self.style_dim)
        return self.style(z).mean(0, keepdim=True)

    def forward(self, styles, return_latents=False, truncation=1.0, truncation_latent=None,
                inject_index=None, update_w_avg=False):
        styles = [self.style(s) for s in styles]
        if update_w_avg:
            self.w_avg.copy_(styles[0].detach().mean(0).lerp(self.w_avg, 0.995))
        if truncation < 1:
            styles = [torch.lerp(truncation_latent, s, truncation) for s in styles]
        if len(styles) < 2:
            latent = styles[0].unsqueeze(1).repeat(1, self.n_latent, 1)
        else:
            latent = styles[0].unsqueeze(1).repeat(1, inject_index, 1)
            latent2 = styles[1].unsqueeze(1).repeat(1, self.n_latent - inject_index, 1)
            latent = torch.cat([latent, latent2], 1)
        out = self.input(latent.shape[0])
        out = self.conv1(out, latent[:, 0])
        skip = self.to_rgb1(out, latent[:, 1])
        i = 1
        for conv_up, conv, to_rgb in zip(self.convs[::2], self.convs[1::2], self.to_rgbs):
            out = conv_up(out, latent[:, i])
            out = conv(out, latent[:, i + 1])
            skip = to_rgb(out, latent[:, i + 2], skip)
            i += 2
        return (skip, latent) if return_latents else (skip, None)


class ConvLayer(nn.Sequential):
    def __init__(self, in_ch, out_ch, k, downsample=False, activate=True):
        layers = []
        stride = 1
        if downsample:
            p = 4 - 2 + (k - 1)
            layers.append(Blur((1, 3, 3, 1), pad=((p + 1) // 2, p // 2)))
            stride = 2
        layers.append(nn.Conv2d(in_ch, out_ch, k, stride=stride,
                                padding=0 if downsample else k // 2, bias=not activate))
        if activate:
            layers.append(FusedLeakyReLU(out_ch))
        super().__init__(*layers)


class Discriminator(nn.Module):
    def __init__(self, ch, stddev_group=4):
        super().__init__()
        self.convs = nn.Sequential(ConvLayer(3, ch, 1), ConvLayer(ch, ch, 3, downsample=True),
                                   ConvLayer(ch, ch, 3, downsample=True))
        self.stddev_group, self.stddev_feat = stddev_group, 1
        self.final_conv = ConvLayer(ch + 1, ch, 3)
        self.final_linear = nn.Sequential(EqualLinear(ch * 4 * 4, ch, activation=True),
                                          EqualLinear(ch, 1))

    def forward(self, x):
        out = self.convs(x)
        b, c, h, w = out.shape
        group = min(b, self.stddev_group)
        std = out.view(group, -1, self.stddev_feat, c // self.stddev_feat, h, w)
        std = torch.sqrt(std.var(0, unbiased=False) + 1e-8)
        std = std.mean([2, 3, 4], keepdim=True).squeeze(2)
        std = std.repeat(group, 1, h, w)
        out = self.final_conv(torch.cat([out, std], 1))
        return self.final_linear(out.view(b, -1))


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model_ema, model, decay=0.999):
    ema_params, params = dict(model_ema.named_parameters()), dict(model.named_parameters())
    for k in ema_params:
        ema_params[k].data.mul_(decay).add_(params[k].data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def d_r1_loss(real_pred, real_img):
    (grad_real,) = torch.autograd.grad(outputs=real_pred.sum(), inputs=real_img,
                                       create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[2] * fake_img.shape[3])
    (grad,) = torch.autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents,
                                  create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


def mixing_noise(batch, prob):
    if prob > 0 and torch.rand(()).item() < prob:
        return list(torch.randn(2, batch, STYLE_DIM).unbind(0))
    return [torch.randn(batch, STYLE_DIM)]


def real_images(n):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, SIZE), torch.linspace(-1, 1, SIZE),
                            indexing="ij")
    centre = torch.rand(n, 2, 1, 1) * 0.8 - 0.4
    blob = torch.exp(-((xx - centre[:, :1]) ** 2 + (yy - centre[:, 1:]) ** 2) / 0.1)
    colour = torch.rand(n, 3, 1, 1) * 2 - 1
    return (blob * colour).clamp(-1, 1)


# ---- the pieces on their own
k = fir_kernel([1, 3, 3, 1])
print("fir kernel", tuple(k.shape), f"sum={k.sum():.4f} corner={k[0, 0]:.6f} "
      f"centre={k[1, 1]:.6f}")
x = torch.randn(2, 3, 5, 5)
print("upfirdn up2", tuple(upfirdn2d(x, k * 4, up=2, pad=(2, 1)).shape),
      "down2", tuple(upfirdn2d(x, k, down=2, pad=(1, 1)).shape),
      "crop", tuple(upfirdn2d(x, k, pad=(-1, 2)).shape))
print("F.pad negative", tuple(F.pad(x, [-1, 2, 0, -2]).shape),
      f"{F.pad(x, [-1, 2, 0, -2])[0, 0, 0].tolist()[-3:]}")
pn = PixelNorm()(torch.randn(3, 16) * 5)
print("pixel norm rms", [f"{v:.5f}" for v in pn.pow(2).mean(1).tolist()])

gen = Generator(SIZE, STYLE_DIM, N_MLP, CH)
disc = Discriminator(CH)
g_ema = copy.deepcopy(gen).eval()
print(gen.style)
print(gen.convs[0].conv.blur, "kernel", gen.convs[0].conv.blur.kernel.sum().item())
print("generator params", sum(p.numel() for p in gen.parameters()),
      "buffers", [n for n, _ in gen.named_buffers()][:3])
print("discriminator params", sum(p.numel() for p in disc.parameters()))

# a modulated conv by hand against per-sample convolutions
mc = gen.convs[1].conv
xs, ws = torch.randn(2, CH, 4, 4), torch.randn(2, STYLE_DIM)
grouped = mc(xs, ws)
loop = []
for i in range(2):
    wi = mc.scale * mc.weight[0] * mc.modulation(ws[i:i + 1]).view(1, CH, 1, 1)
    wi = wi * torch.rsqrt(wi.pow(2).sum([1, 2, 3], keepdim=True) + 1e-8)
    loop.append(F.conv2d(xs[i:i + 1], wi, padding=1))
print("grouped vs loop", f"{(grouped - torch.cat(loop)).abs().max() < 1e-5}",
      tuple(grouped.shape))
try:
    F.conv2d(torch.randn(1, 6, 4, 4), torch.randn(4, 3, 3, 3), groups=4)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])

# ---- training, as the reference loop runs it (lazy regularisation)
D_REG_EVERY, G_REG_EVERY, R1_GAMMA, PL_WEIGHT = 2, 2, 10.0, 2.0
g_ratio, d_ratio = G_REG_EVERY / (G_REG_EVERY + 1), D_REG_EVERY / (D_REG_EVERY + 1)
lr = 2e-3
g_optim = torch.optim.Adam(gen.parameters(), lr=lr * g_ratio,
                           betas=(0 ** g_ratio, 0.99 ** g_ratio))
d_optim = torch.optim.Adam(disc.parameters(), lr=lr * d_ratio,
                           betas=(0 ** d_ratio, 0.99 ** d_ratio))
print("g betas", tuple(round(b, 6) for b in g_optim.param_groups[0]["betas"]),
      f"lr={g_optim.param_groups[0]['lr']:.6f}")
mean_path_length = torch.tensor(0.0)
accum = 0.5 ** (32 / (10 * 1000))

for step in range(4):
    real_img = real_images(BATCH)
    requires_grad(gen, False)
    requires_grad(disc, True)
    noise = mixing_noise(BATCH, 0.9)
    inject = torch.randint(1, gen.n_latent, ()).item() if len(noise) == 2 else None
    fake_img, _ = gen(noise, inject_index=inject)
    fake_pred, real_pred = disc(fake_img), disc(real_img)
    d_loss = d_logistic_loss(real_pred, fake_pred)
    disc.zero_grad()
    d_loss.backward()
    d_optim.step()
    line = (f"step {step} mix={len(noise)} inject={inject} d_loss={d_loss.item():.5f} "
            f"real={real_pred.mean().item():.5f} fake={fake_pred.mean().item():.5f}")

    if step % D_REG_EVERY == 0:
        real_img.requires_grad = True
        real_pred = disc(real_img)
        r1_loss = d_r1_loss(real_pred, real_img)
        disc.zero_grad()
        (R1_GAMMA / 2 * r1_loss * D_REG_EVERY + 0 * real_pred[0]).backward()
        d_optim.step()
        line += f" r1={r1_loss.item():.5f}"

    requires_grad(gen, True)
    requires_grad(disc, False)
    noise = mixing_noise(BATCH, 0.9)
    inject = torch.randint(1, gen.n_latent, ()).item() if len(noise) == 2 else None
    fake_img, _ = gen(noise, inject_index=inject, update_w_avg=True)
    g_loss = g_nonsaturating_loss(disc(fake_img))
    gen.zero_grad()
    g_loss.backward()
    g_optim.step()
    line += f" g_loss={g_loss.item():.5f}"

    if step % G_REG_EVERY == 0:
        noise = mixing_noise(BATCH // 2, 0.9)
        inject = torch.randint(1, gen.n_latent, ()).item() if len(noise) == 2 else None
        fake_img, latents = gen(noise, return_latents=True, inject_index=inject)
        path_loss, mean_path_length, path_lengths = g_path_regularize(
            fake_img, latents, mean_path_length)
        gen.zero_grad()
        weighted = PL_WEIGHT * G_REG_EVERY * path_loss + 0 * fake_img[0, 0, 0, 0]
        weighted.backward()
        g_optim.step()
        line += (f" path={path_loss.item():.5f} mean_path={mean_path_length.item():.5f}"
                 f" lengths={[round(v, 4) for v in path_lengths.tolist()]}")
    accumulate(g_ema, gen, accum)
    print(line)

print("grad_fn", g_loss.grad_fn.__class__.__name__, weighted.grad_fn.__class__.__name__)
print("noise strengths", [f"{v:.4f}" for v in gen.conv1.noise.weight.view(-1)[:4].tolist()])
print(f"w_avg norm={gen.w_avg.norm():.5f} mean={gen.w_avg.mean():.5f}")
drift = sum((a - b).abs().sum() for a, b in zip(g_ema.parameters(), gen.parameters()))
print(f"ema drift={drift:.5f}")

# ---- sampling from the EMA generator with truncation
with torch.no_grad():
    torch.manual_seed(1)
    mean_latent = g_ema.mean_latent(64)
    print("mean latent", tuple(mean_latent.shape), f"norm={mean_latent.norm():.5f}")
    z = torch.randn(3, STYLE_DIM)
    for psi in (1.0, 0.7, 0.0):
        torch.manual_seed(2)
        sample, _ = g_ema([z], truncation=psi, truncation_latent=mean_latent)
        print(f"psi={psi} shape={tuple(sample.shape)} mean={sample.mean():.5f} "
              f"std={sample.std():.5f} pixel={sample[0, :, 5, 7].tolist()[0]:.5f}")
    print("sample requires_grad", sample.requires_grad, sample.dtype)
