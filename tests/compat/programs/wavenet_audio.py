"""A tiny WaveNet and friends on synthetic audio, the way practitioners write them: seeded sums of
sines and chirps (no files), mu-law companding to 256 classes, one-hot inputs, causal dilated
Conv1d stacks (left padding with F.pad, or padding= then slicing), gated tanh*sigmoid units with
residual and skip paths, weight normalisation (the deprecated hook version and the
parametrization, their g/v and original0/original1 tensors, and their removal), spectral norm on a
discriminator conv, receptive-field arithmetic, a few dozen Adam steps of cross-entropy over
(N, C, T) logits with ignore_index and label smoothing, StepLR and clip_grad_value_,
autoregressive sampling with a fast convolution queue, an STFT log-magnitude loss at several
resolutions, F.interpolate and conv_transpose1d upsampling of conditioning features, and the
errors of typical mistakes."""

import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

torch.manual_seed(0)
sr, n = 4000, 1024
t = torch.arange(n, dtype=torch.float32) / sr

# ---- synthetic audio: sines plus noise, and a chirp through the cumulative phase
gen = torch.Generator().manual_seed(7)
sines = 0.4 * torch.sin(2 * math.pi * 220.0 * t) + 0.2 * torch.sin(2 * math.pi * 330.0 * t + 0.5)
noisy = sines + 0.03 * torch.randn(n, generator=gen)
freqs = torch.linspace(100.0, 900.0, n)
phase = 2 * math.pi * torch.cumsum(freqs, dim=0) / sr
chirp = 0.5 * torch.sin(phase)
print("audio", noisy.shape, noisy.dtype, f"{noisy.mean().item():.5f}", f"{noisy.std().item():.5f}",
      f"{chirp.abs().max().item():.5f}", f"{phase[-1].item():.4f}")


# ---- mu-law companding and quantisation
def mu_law_encode(x, mu=255):
    y = torch.sign(x) * torch.log1p(mu * torch.abs(x)) / math.log1p(mu)
    return torch.clamp(torch.round((y + 1) / 2 * mu), 0, mu).long()


def mu_law_decode(q, mu=255):
    y = 2 * q.float() / mu - 1
    return torch.sign(y) * torch.expm1(torch.abs(y) * math.log1p(mu)) / mu


q = mu_law_encode(noisy)
recon = mu_law_decode(q)
print("mu-law", q.dtype, q[:8].tolist(), q.min().item(), q.max().item(),
      torch.bincount(q, minlength=256).argmax().item())
print("roundtrip err", f"{(recon - noisy).abs().max().item():.5f}",
      f"{(recon - noisy).pow(2).mean().sqrt().item():.6f}")
onehot = F.one_hot(q[:6], num_classes=256)
print("one_hot", onehot.shape, onehot.dtype, onehot.sum(1).tolist(), onehot.argmax(-1).tolist())
print("one_hot auto", F.one_hot(torch.tensor([[0, 3], [2, 1]])).shape)


# ---- causal convolutions: two ways of padding on the left
class CausalConvPad(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation=1):
        super().__init__(cin, cout, k, dilation=dilation)
        self.left = (k - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class CausalConvSlice(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation=1):
        self.trim = (k - 1) * dilation
        super().__init__(cin, cout, k, dilation=dilation, padding=self.trim)

    def forward(self, x):
        out = super().forward(x)
        return out[:, :, :-self.trim] if self.trim else out


a, b = CausalConvPad(2, 3, 2, dilation=4), CausalConvSlice(2, 3, 2, dilation=4)
b.load_state_dict(a.state_dict())
x = torch.randn(1, 2, 12)
ya, yb = a(x), b(x)
print("causal", ya.shape, yb.shape, torch.allclose(ya, yb), f"{ya[0, 1, 5].item():.5f}")
x2 = x.clone()
x2[..., 8:] += 1.0
print("causality", torch.equal(a(x2)[..., :8], ya[..., :8]),
      (a(x2) - ya)[0, 0, 7:].abs().gt(0).tolist())


# ---- gated residual block and the WaveNet
class ResidualBlock(nn.Module):
    def __init__(self, res, skip, dilation):
        super().__init__()
        self.dilation = dilation
        self.conv = CausalConvPad(res, 2 * res, 2, dilation)
        self.res = nn.Conv1d(res, res, 1)
        self.skip = nn.Conv1d(res, skip, 1)

    def forward(self, x, cond=None):
        h = self.conv(x)
        if cond is not None:
            h = h + cond
        filt, gate = h.chunk(2, dim=1)
        z = torch.tanh(filt) * torch.sigmoid(gate)
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, classes=256, res=16, skip=32, dilations=(1, 2, 4, 8, 1, 2, 4, 8)):
        super().__init__()
        self.classes = classes
        self.inp = nn.Conv1d(classes, res, 1)
        self.blocks = nn.ModuleList(ResidualBlock(res, skip, d) for d in dilations)
        self.out1 = nn.Conv1d(skip, skip, 1)
        self.out2 = nn.Conv1d(skip, classes, 1)

    def receptive_field(self):
        return 1 + sum((blk.conv.kernel_size[0] - 1) * blk.dilation for blk in self.blocks)

    def forward(self, q):
        x = self.inp(F.one_hot(q, self.classes).float().transpose(1, 2))
        skips = 0
        for blk in self.blocks:
            x, s = blk(x)
            skips = skips + s
        return self.out2(F.relu(self.out1(F.relu(skips))))


model = WaveNet()
rf = model.receptive_field()
nparams = sum(p.numel() for p in model.parameters())
print("wavenet", rf, nparams, len(list(model.named_modules())), model.blocks[3].conv)
print("rf formula", rf == 1 + 2 * sum(2 ** i for i in range(4)),
      [blk.dilation for blk in model.blocks])
logits = model(q[None, :64])
print("logits", logits.shape, logits.grad_fn.name(), f"{logits.std().item():.5f}")

# ---- weight normalisation: the deprecated hook and the parametrization
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wn = nn.utils.weight_norm(nn.Conv1d(4, 6, 3))
print("deprecated", [w.category.__name__ for w in caught][:1],
      "weight_norm" in str(caught[0].message) if caught else None)
names = [k for k, _ in wn.named_parameters()]
print("hook names", names, tuple(wn.weight_g.shape), tuple(wn.weight_v.shape))
xw = torch.randn(2, 4, 10)
before = wn(xw)
g_norm = wn.weight_v.flatten(1).norm(dim=1)
print("g == |v|", torch.allclose(wn.weight_g.flatten(), g_norm), f"{before.sum().item():.5f}",
      wn.weight.grad_fn.name())
with torch.no_grad():
    wn.weight_g.mul_(2.0)
print("scaled g", f"{(wn(xw) - wn.bias[None, :, None]).abs().sum().item():.4f}",
      f"{(2 * (before - wn.bias[None, :, None])).abs().sum().item():.4f}")
nn.utils.remove_weight_norm(wn)
print("removed", [k for k, _ in wn.named_parameters()], type(wn.weight).__name__)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    wn0 = nn.utils.weight_norm(nn.Conv1d(4, 6, 3), dim=None)
print("dim=None g", tuple(wn0.weight_g.shape), f"{wn0.weight_g.item():.5f}")

pw = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3))
print("param names", [k for k, _ in pw.named_parameters()], pw.weight.grad_fn.name())
pw_in = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3), dim=1)  # per input channel
pw_b = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3), name="bias")
print("dim=1 / bias", tuple(pw_in.parametrizations.weight.original0.shape),
      pw_in.weight.grad_fn.name(), tuple(pw_b.parametrizations.bias.original0.shape),
      torch.equal(pw_b.parametrizations.bias.original0, pw_b.bias.abs().detach()))
orig = pw.parametrizations.weight
print("original", tuple(orig.original0.shape), tuple(orig.original1.shape),
      parametrize.is_parametrized(pw), parametrize.is_parametrized(pw, "bias"))
w_before = pw.weight.detach().clone()
print("state keys", sorted(pw.state_dict().keys()))
parametrize.remove_parametrizations(pw, "weight")
print("after remove", [k for k, _ in pw.named_parameters()], torch.allclose(pw.weight, w_before),
      parametrize.is_parametrized(pw))

# ---- spectral norm on a discriminator conv
disc_conv = nn.utils.spectral_norm(nn.Conv1d(1, 8, 15, stride=4, padding=7))
print("spectral", sorted(k for k, _ in disc_conv.named_parameters()),
      sorted(k for k, _ in disc_conv.named_buffers()), tuple(disc_conv.weight_u.shape))
for _ in range(10):
    disc_conv(torch.randn(2, 1, 64))
sigma = torch.linalg.matrix_norm(disc_conv.weight.flatten(1), ord=2)
print("sigma(W/sn)", f"{sigma.item():.4f}")
disc_conv.eval()
print("eval out", disc_conv(chirp[None, None, :64]).shape)
psn = nn.utils.parametrizations.spectral_norm(nn.Conv1d(1, 4, 5))
print("param spectral", [k for k, _ in psn.named_parameters()],
      tuple(psn.parametrizations.weight[0]._u.shape))

# ---- training: next-sample prediction with cross-entropy over (N, C, T)
torch.manual_seed(1)
model = WaveNet(res=8, skip=16, dilations=(1, 2, 4, 8))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
seq = mu_law_encode(chirp)
T = 96
starts = torch.tensor([0, 200, 400, 600])
idx = starts[:, None] + torch.arange(T + 1)
batch = seq[idx]
inputs, targets = batch[:, :-1], batch[:, 1:].clone()
targets[:, : model.receptive_field() - 1] = -100  # no loss where the past is padding
print("batch", inputs.shape, targets.shape, (targets == -100).sum().item())
for step in range(30):
    out = model(inputs)
    loss = F.cross_entropy(out, targets, ignore_index=-100, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.5)
    opt.step()
    sched.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")
with torch.no_grad():
    out = model(inputs)
    mask = targets != -100
    acc = (out.argmax(1)[mask] == targets[mask]).float().mean()
    plain = F.cross_entropy(out, targets, ignore_index=-100)
    summed = F.cross_entropy(out, targets, ignore_index=-100, reduction="sum")
    per = F.cross_entropy(out, targets, ignore_index=-100, reduction="none")
# 30 float32 Adam steps amplify last-bit differences of the convolutions' sums (run in float64,
# ember's weights match torch's to 3e-15; in float32 by 2e-3), so values after training are
# printed with 4 digits
print("eval", f"{acc.item():.4f}", f"{plain.item():.3f}", f"{summed.item():.1f}", per.shape,
      (per == 0).sum().item())
grads = [p.grad for p in model.parameters() if p.grad is not None]
print("grads", len(grads), sum(p.grad is None for p in model.parameters()),  # last res conv unused
      f"{max(g.abs().max().item() for g in grads):.4f}")


# ---- fast autoregressive generation with per-layer queues
@torch.no_grad()
def generate(model, steps, temperature=1.0, seed=0, use_dist=False):
    g = torch.Generator().manual_seed(seed)
    res = model.inp.out_channels
    queues = [torch.zeros(1, res, blk.dilation) for blk in model.blocks]
    cur = torch.tensor([128])
    out = []
    for _ in range(steps):
        x = model.inp(F.one_hot(cur, model.classes).float()[:, :, None])
        skips = 0
        for i, blk in enumerate(model.blocks):
            past = queues[i][:, :, :1]
            w = blk.conv.weight
            h = F.conv1d(torch.cat([past, x], dim=2), w, blk.conv.bias)
            filt, gate = h.chunk(2, dim=1)
            z = torch.tanh(filt) * torch.sigmoid(gate)
            queues[i] = torch.roll(queues[i], -1, dims=2)
            queues[i][:, :, -1:].copy_(x)
            x, s = x + blk.res(z), blk.skip(z)
            skips = skips + s
        logit = model.out2(F.relu(model.out1(F.relu(skips))))[:, :, 0] / temperature
        if use_dist:
            cur = torch.distributions.Categorical(logits=logit).sample()
        else:
            cur = torch.multinomial(F.softmax(logit, dim=-1), 1, generator=g)[:, 0]
        out.append(cur)
    return torch.stack(out, dim=1)


model.eval()
fast = generate(model, 24, temperature=1e-3)
greedy_full = []
ctx = torch.tensor([[128]])
with torch.no_grad():
    for _ in range(24):
        nxt = model(ctx)[:, :, -1].argmax(-1, keepdim=True)
        greedy_full.append(nxt.item())
        ctx = torch.cat([ctx, nxt], dim=1)
print("queue == full conv", fast[0].tolist() == greedy_full, fast[0, :10].tolist())
samples = generate(model, 300, temperature=0.8, seed=3)
wave = mu_law_decode(samples[0])
print("sampled", samples.shape, samples[0, :12].tolist(), len(torch.unique(samples)),
      f"{wave.abs().mean().item():.4f}")
torch.manual_seed(5)
dist_samples = generate(model, 40, use_dist=True)
print("categorical", dist_samples[0, :12].tolist())
probs = F.softmax(model(seq[None, :64])[:, :, -1] / 0.7, dim=-1)
cat = torch.distributions.Categorical(probs=probs)
print("entropy", f"{cat.entropy().item():.3f}", f"{cat.log_prob(seq[64:65]).item():.3f}",
      cat.batch_shape, cat.param_shape)




# ---- top-k, nucleus and inverse-CDF sampling of the next sample
def top_k_filter(logit, k):
    vals, idx = torch.topk(logit, k)
    return torch.full_like(logit, float("-inf")).scatter(-1, idx, vals)


def top_p_filter(logit, p):
    srt, idx = torch.sort(logit, descending=True)
    cum = torch.cumsum(F.softmax(srt, dim=-1), dim=-1)
    drop = cum > p
    drop[..., 1:] = drop[..., :-1].clone()
    drop[..., 0] = False
    return logit.masked_fill(drop.scatter(-1, idx, drop), float("-inf"))


with torch.no_grad():
    last = model(seq[None, :80])[:, :, -1]
gk = torch.Generator().manual_seed(11)
kept_k = torch.isfinite(top_k_filter(last, 8)).sum().item()
kept_p = torch.isfinite(top_p_filter(last, 0.9)).sum().item()
draws_k = torch.multinomial(F.softmax(top_k_filter(last, 8), -1), 6, replacement=True, generator=gk)
draws_p = torch.multinomial(F.softmax(top_p_filter(last, 0.9), -1), 6, replacement=True,
                            generator=gk)
cdf = torch.cumsum(F.softmax(last, -1), -1)
u = torch.rand(1, 5, generator=gk)
inv = torch.searchsorted(cdf, u).clamp(max=255)
print("top-k/top-p", kept_k, kept_p, draws_k.tolist(), draws_p.tolist(), inv.tolist())



# ---- discretized mixture of logistics (the 16-bit output of later WaveNets)
def mol_loss(params, x, n_mix, bins=65536):
    """-log P(x) for x in [-1, 1] under a mixture of logistics discretised into `bins`."""
    logit_pi, means, log_s = params.chunk(3, dim=1)
    log_s = torch.clamp(log_s, min=-7.0)
    centered = x - means
    inv_s = torch.exp(-log_s)
    plus = inv_s * (centered + 1.0 / (bins - 1))
    minus = inv_s * (centered - 1.0 / (bins - 1))
    cdf_delta = torch.sigmoid(plus) - torch.sigmoid(minus)
    log_cdf_plus = plus - F.softplus(plus)          # log sigma(plus), for x at -1
    log_one_minus_cdf_min = -F.softplus(minus)      # log(1 - sigma(minus)), for x at 1
    mid = inv_s * centered
    log_pdf_mid = mid - log_s - 2.0 * F.softplus(mid)
    inner = torch.where(cdf_delta > 1e-5, torch.log(torch.clamp(cdf_delta, min=1e-12)),
                        log_pdf_mid - math.log((bins - 1) / 2))
    log_probs = torch.where(x < -0.999, log_cdf_plus,
                            torch.where(x > 0.999, log_one_minus_cdf_min, inner))
    log_probs = log_probs + F.log_softmax(logit_pi, dim=1)
    return -torch.logsumexp(log_probs, dim=1).mean()


torch.manual_seed(6)
n_mix = 4
mol_params = torch.randn(2, 3 * n_mix, 50, requires_grad=True)
target_wave = torch.stack([chirp[:50], noisy[:50].clamp(-1, 1)])[:, None, :]
target_wave[0, 0, :2] = torch.tensor([-1.0, 1.0])  # both edge bins
mol = mol_loss(mol_params, target_wave, n_mix)
mol.backward()
print("mol loss", f"{mol.item():.3f}", f"{mol_params.grad.abs().sum().item():.4f}",
      mol.grad_fn.name())
with torch.no_grad():  # sample: pick a component by Gumbel-max, then invert the logistic CDF
    logit_pi, means, log_s = mol_params[:, :, :5].chunk(3, dim=1)
    gm = torch.Generator().manual_seed(2)
    gumbel = -torch.log(-torch.log(torch.rand(logit_pi.shape, generator=gm).clamp(1e-5, 1 - 1e-5)))
    comp = (logit_pi + gumbel).argmax(dim=1, keepdim=True)
    mu = means.gather(1, comp)
    s_ = torch.exp(log_s.gather(1, comp))
    uu = torch.rand(mu.shape, generator=gm).clamp(1e-5, 1 - 1e-5)
    xs = (mu + s_ * (torch.log(uu) - torch.log1p(-uu))).clamp(-1, 1)
print("mol sample", comp[0, 0].tolist(), xs[0, 0])

# ---- spectral losses: STFT log-magnitude at several resolutions
def stft_mag(x, n_fft, hop, win_len):
    spec = torch.stft(x, n_fft, hop_length=hop, win_length=win_len,
                      window=torch.hann_window(win_len), return_complex=True)
    return spec.abs().clamp(min=1e-7)


def multi_res_stft_loss(pred, target, resolutions=((128, 32, 128), (256, 64, 256), (64, 16, 48))):
    sc, mag = 0.0, 0.0
    for n_fft, hop, wl in resolutions:
        p, tg = stft_mag(pred, n_fft, hop, wl), stft_mag(target, n_fft, hop, wl)
        sc = sc + torch.linalg.norm(tg - p, "fro") / torch.linalg.norm(tg, "fro")
        mag = mag + F.l1_loss(torch.log(p), torch.log(tg))
    return sc / len(resolutions), mag / len(resolutions)


spec = torch.stft(noisy, 128, hop_length=32, window=torch.hann_window(128), return_complex=True)
print("stft", spec.shape, spec.dtype, f"{spec.abs().max().item():.4f}",
      spec.abs().mean(1).argmax().item())
back = torch.istft(spec, 128, hop_length=32, window=torch.hann_window(128), length=n)
print("istft", back.shape, torch.allclose(back, noisy, atol=1e-5))
logmag = torch.log(spec.abs() + 1e-5)
print("logmag", f"{logmag.mean().item():.4f}", f"{logmag.max().item():.4f}")
pred = (recon + 0.01 * torch.randn(n)).requires_grad_()
sc, mag = multi_res_stft_loss(pred, noisy)
(sc + mag).backward()
# the gradient of log|STFT| weighs each bin by 1/|X|, down to 1e-5 here: the last-bit
# differences of float32 sines and FFTs (given the same float64 input, ember's gradient is
# torch's to 12 digits) move its sum in the 4th digit, so 3 are printed
print("mr-stft", f"{sc.item():.5f}", f"{mag.item():.5f}", f"{pred.grad.abs().sum().item():.3g}")
sc0, mag0 = multi_res_stft_loss(noisy, noisy)
print("self loss", sc0.item(), mag0.item())

# ---- upsampling conditioning features to the sample rate
mel = torch.randn(1, 10, 8)
up_lin = F.interpolate(mel, scale_factor=4, mode="linear", align_corners=False)
up_ac = F.interpolate(mel, size=29, mode="linear", align_corners=True)
up_near = F.interpolate(mel, scale_factor=4, mode="nearest")
print("interp", up_lin.shape, up_ac.shape, f"{up_lin[0, 0, :6].sum().item():.5f}",
      f"{up_ac[0, 3, -1].item():.5f}", torch.equal(up_near[0, :, ::4], mel[0]))
print("interp row", up_lin[0, 0, :5])
kern = torch.ones(10, 1, 8) / 8
up_t = F.conv_transpose1d(mel, kern, stride=4, padding=2, groups=10)
print("conv_transpose1d", up_t.shape, f"{up_t[0, 2, 5].item():.5f}", f"{up_t.sum().item():.4f}")
upsampler = nn.ConvTranspose1d(10, 10, 8, stride=4, padding=2)
cond = upsampler(mel)
print("ConvTranspose1d", cond.shape, cond.grad_fn.name())
blk = ResidualBlock(10, 4, 2)
cond_proj = nn.Conv1d(10, 20, 1)
hres, hskip = blk(torch.randn(1, 10, cond.shape[-1]), cond_proj(cond))
print("conditioned block", hres.shape, hskip.shape, f"{hskip.pow(2).mean().item():.5f}")

# ---- a MelGAN-style multi-scale discriminator with spectral / weight norm, hinge loss
class ScaleDisc(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Sequential(nn.ReflectionPad1d(3), norm(nn.Conv1d(1, 8, 7)), nn.LeakyReLU(0.2)),
            nn.Sequential(norm(nn.Conv1d(8, 16, 9, stride=4, padding=4, groups=4)),
                          nn.LeakyReLU(0.2)),
            norm(nn.Conv1d(16, 1, 3, padding=1)),
        ])

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = layer(x)
            feats.append(x)
        return feats


torch.manual_seed(4)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    discs = nn.ModuleList([ScaleDisc(nn.utils.spectral_norm), ScaleDisc(nn.utils.weight_norm),
                           ScaleDisc(nn.utils.weight_norm)])
pool = nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False)
real, fake = chirp[None, None, :256], mu_law_decode(samples)[None, :, :256]
d_loss, g_adv, fm = 0.0, 0.0, 0.0
for i, disc in enumerate(discs):
    if i:
        real, fake = pool(real), pool(fake)
    fr, ff = disc(real), disc(fake.detach())
    d_loss = d_loss + F.relu(1 - fr[-1]).mean() + F.relu(1 + ff[-1]).mean()
    fg = disc(fake)
    g_adv = g_adv - fg[-1].mean()
    fm = fm + sum(F.l1_loss(a, b.detach()) for a, b in zip(fg[:-1], fr[:-1]))
print("multi-scale", [f.shape[-1] for f in discs[2](real)], f"{d_loss.item():.4f}",
      f"{g_adv.item():.4f}", f"{fm.item():.4f}", d_loss.grad_fn.name())
n_sn = sum(1 for m in discs.modules() if hasattr(m, "weight_orig"))
n_wn = sum(1 for m in discs.modules() if hasattr(m, "weight_g"))
print("norms", n_sn, n_wn, nn.utils.parameters_to_vector(discs.parameters()).shape)


def strip_weight_norm(module):
    try:
        nn.utils.remove_weight_norm(module)
    except ValueError:
        pass


discs.apply(strip_weight_norm)
print("stripped", sum(1 for m in discs.modules() if hasattr(m, "weight_g")),
      sorted({k.rsplit(".", 1)[-1] for k in discs.state_dict()}))

# ---- typical mistakes
conv = nn.Conv1d(256, 16, 1)
mistakes = {
    "conv 2-d wrong channels": lambda: conv(torch.randn(10, 64)),
    "conv 3-d wrong channels": lambda: conv(torch.randn(1, 64, 10)),
    "Keras-style padding='causal'": lambda: nn.Conv1d(16, 16, 2, padding="causal"),
    "one_hot negative": lambda: F.one_hot(torch.tensor([3, -1, 2]), 5),
    "one_hot too large": lambda: F.one_hot(torch.tensor([3, 7]), 5),
    "one_hot float": lambda: F.one_hot(torch.tensor([1.0, 2.0]), 4),
    "stft no return_complex": lambda: torch.stft(noisy, 128, window=torch.hann_window(128)),
    "weight_norm missing name": lambda: nn.utils.weight_norm(nn.Conv1d(2, 2, 3), name="kernel"),
    "weight_norm of bias=False": lambda: nn.utils.weight_norm(nn.Conv1d(2, 2, 3, bias=False),
                                                              name="bias"),
    "param weight_norm missing": lambda: nn.utils.parametrizations.weight_norm(
        nn.Conv1d(2, 2, 3), name="kernel"),
    "remove_weight_norm twice": lambda: nn.utils.remove_weight_norm(nn.Conv1d(2, 2, 3)),
    "cross_entropy float targets 3-d": lambda: F.cross_entropy(torch.randn(2, 5, 4),
                                                               torch.randn(2, 4)),
    "remove leave_parametrized=False": lambda: parametrize.remove_parametrizations(
        nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3)), "weight",
        leave_parametrized=False),
    "label_smoothing above 1": lambda: F.cross_entropy(torch.randn(2, 5, 4),
                                                       torch.zeros(2, 4, dtype=torch.long),
                                                       label_smoothing=2.0),
    "running sum in place": lambda: (lambda buf: buf[1:].add_(buf[:-1]))(noisy.clone()),
    "center by first sample": lambda: (lambda buf: buf.sub_(buf[0]))(noisy.clone()),
    "multinomial negative": lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1),
}
for label, fn in mistakes.items():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        print(label, "no error")
    except Exception as e:
        print(label, "->", type(e).__name__, str(e).splitlines()[0][:150])
