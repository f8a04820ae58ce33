"""Image quality metrics as generation and restoration papers compute them, in plain torch.

Synthetic images drawn with tensor ops (seeded) are degraded (noise, blur, JPEG-like
quantisation, resizing) and scored with PSNR (float and uint8 inputs, ranges 1 and 255),
SSIM and MS-SSIM with a Gaussian window (grouped conv2d, reflect / replicate padding,
avg_pool2d downsampling), the Frechet distance between Gaussians (cov, eigvals, eigh square
root), kernel inception distance (polynomial kernel, unbiased MMD), inception score
(kl_div with log_target), an LPIPS-like distance over a small random CNN, total variation,
colour conversions, per-channel histograms, Sobel gradient magnitude and resizing with
F.interpolate, plus the mistakes users make (mismatched sizes, a window larger than the
image, integer images into conv2d, eigvals backward)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fmt(t, n=4):
    return " ".join(f"{v:.5g}" for v in t.detach().flatten()[:n].tolist())


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", tuple(out.shape) if isinstance(out, torch.Tensor) else out)
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, str(e).split("\n")[0])


# ---- synthetic images ---------------------------------------------------------------------
B, C, H, W = 4, 3, 32, 32
ys, xs = torch.meshgrid(torch.linspace(0, 1, H), torch.linspace(0, 1, W), indexing="ij")
freq = torch.arange(1, B + 1, dtype=torch.float32).view(B, 1, 1)
waves = 0.5 + 0.5 * torch.sin(2 * math.pi * freq * xs) * torch.cos(math.pi * freq * ys)
disc = (((xs - 0.5) ** 2 + (ys - 0.5) ** 2) < 0.1).float()
clean = torch.stack(
    [waves, disc.expand(B, H, W) * 0.7 + 0.1, (xs + ys) / 2 * torch.ones(B, 1, 1)], 1
)
clean = clean.clamp(0, 1)
noisy = (clean + 0.05 * torch.randn_like(clean)).clamp(0, 1)
print(
    "images:",
    tuple(clean.shape),
    clean.dtype,
    f"{clean.mean().item():.5f}",
    f"{noisy.std().item():.5f}",
)


# ---- PSNR ---------------------------------------------------------------------------------
def psnr(x, y, data_range=1.0, reduce=True):
    mse = ((x.double() - y.double()) ** 2).flatten(1).mean(1) if not reduce else F.mse_loss(x, y)
    return 10 * torch.log10(data_range**2 / mse)


print("psnr batch:", f"{psnr(noisy, clean).item():.5f}")
print("psnr per image:", fmt(psnr(noisy, clean, reduce=False)))
u8_clean = (clean * 255).round().to(torch.uint8)
u8_noisy = (noisy * 255).round().to(torch.uint8)
print("uint8 diff dtype:", (u8_noisy - u8_clean).dtype, (u8_noisy - u8_clean).max().item())
print("psnr uint8 range 255:", f"{psnr(u8_noisy.float(), u8_clean.float(), 255.0).item():.5f}")
print("psnr identical:", psnr(clean, clean).item())
mse_per = F.mse_loss(noisy, clean, reduction="none").mean(dim=(1, 2, 3))
print("psnr via -10log10(mse):", fmt(-10 * mse_per.log10()), mse_per.dtype)
print("psnr float64:", psnr(noisy.double(), clean.double(), reduce=False).dtype)


# ---- SSIM / MS-SSIM -----------------------------------------------------------------------
def gaussian_window(size=11, sigma=1.5, channels=3):
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-(coords**2) / (2 * sigma**2))
    g = g / g.sum()
    w2 = torch.outer(g, g)
    return w2.expand(channels, 1, size, size).contiguous()


def ssim(x, y, data_range=1.0, size=11, sigma=1.5, pad_mode=None, full=False):
    c = x.shape[1]
    win = gaussian_window(size, sigma, c).to(x.dtype)
    if pad_mode is not None:
        p = size // 2
        x = F.pad(x, (p, p, p, p), mode=pad_mode)
        y = F.pad(y, (p, p, p, p), mode=pad_mode)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    mu_x = F.conv2d(x, win, groups=c)
    mu_y = F.conv2d(y, win, groups=c)
    sxx = F.conv2d(x * x, win, groups=c) - mu_x**2
    syy = F.conv2d(y * y, win, groups=c) - mu_y**2
    sxy = F.conv2d(x * y, win, groups=c) - mu_x * mu_y
    cs_map = (2 * sxy + c2) / (sxx + syy + c2)
    ssim_map = (2 * mu_x * mu_y + c1) / (mu_x**2 + mu_y**2 + c1) * cs_map
    if full:
        return ssim_map.flatten(2).mean(-1), cs_map.flatten(2).mean(-1)
    return ssim_map.mean(dim=(1, 2, 3))


print(
    "window:",
    tuple(gaussian_window().shape),
    f"{gaussian_window()[0, 0].sum().item():.5f}",
    f"{gaussian_window()[0, 0, 5, 5].item():.5f}",
)
print("ssim valid:", fmt(ssim(noisy, clean)))
print("ssim reflect:", fmt(ssim(noisy, clean, pad_mode="reflect")))
print("ssim replicate:", fmt(ssim(noisy, clean, pad_mode="replicate")))
print("ssim self:", fmt(ssim(clean, clean)))
print("ssim uint8 range 255:", fmt(ssim(u8_noisy.float(), u8_clean.float(), data_range=255.0)))
print(
    "ssim float64:",
    fmt(ssim(noisy.double(), clean.double())),
    ssim(noisy.double(), clean.double()).dtype,
)


def ms_ssim(x, y, weights, size=7, pool=None):
    pool = pool or dict(kernel_size=2)
    levels = weights.numel()
    mcs = []
    for i in range(levels):
        s, cs = ssim(x, y, size=size, full=True)
        if i < levels - 1:
            mcs.append(torch.relu(cs))
            x = F.avg_pool2d(x, **pool)
            y = F.avg_pool2d(y, **pool)
    vals = torch.stack(mcs + [torch.relu(s)], 0)  # levels x B x C
    return torch.prod(vals ** weights.view(-1, 1, 1), dim=0).mean(1)


msw = torch.tensor([0.0448, 0.2856, 0.3001])
msw = msw / msw.sum()
big_clean = F.interpolate(clean, size=(48, 48), mode="bilinear", align_corners=False)
big_noisy = (big_clean + 0.05 * torch.randn_like(big_clean)).clamp(0, 1)
print("ms-ssim:", fmt(ms_ssim(big_noisy, big_clean, msw)))
odd = big_clean[..., :45, :45]
odd_noisy = big_noisy[..., :45, :45]
print(
    "ms-ssim ceil_mode:",
    fmt(ms_ssim(odd_noisy, odd, msw, pool=dict(kernel_size=2, ceil_mode=True))),
)
print(
    "ms-ssim pad no-count:",
    fmt(ms_ssim(odd_noisy, odd, msw, pool=dict(kernel_size=2, padding=1, count_include_pad=False))),
)
print(
    "pooled shapes:",
    tuple(F.avg_pool2d(odd, 2, ceil_mode=True).shape),
    tuple(F.avg_pool2d(odd, 2, padding=1).shape),
    tuple(F.avg_pool2d(odd, 3, 2, 1, True).shape),
)
pc = F.avg_pool2d(odd, 2, padding=1, count_include_pad=True)
pn = F.avg_pool2d(odd, 2, padding=1, count_include_pad=False)
print("corner count_include_pad:", f"{pc[0, 0, 0, 0].item():.5f}", f"{pn[0, 0, 0, 0].item():.5f}")
print("avg_pool divisor_override:", fmt(F.avg_pool2d(odd, 2, divisor_override=3)))

# SSIM as a differentiable loss for a restoration step
restored = noisy.clone().requires_grad_(True)
loss = 1 - ssim(restored, clean, pad_mode="reflect").mean()
loss.backward()
print(
    "ssim loss:",
    f"{loss.item():.5f}",
    loss.grad_fn.name(),
    f"{restored.grad.abs().sum().item():.5g}",
)


# ---- Frechet distance (FID-style) ---------------------------------------------------------
def sqrtm_psd(m):
    vals, vecs = torch.linalg.eigh(m)
    return vecs @ torch.diag(vals.clamp(min=0).sqrt()) @ vecs.T


def frechet(mu1, s1, mu2, s2):
    diff = mu1 - mu2
    # trace of sqrt(s1 s2) from eigenvalues of the (non-symmetric) product
    ev = torch.linalg.eigvals(s1 @ s2)
    tr_covmean = ev.sqrt().real.sum()
    return diff.dot(diff) + torch.trace(s1) + torch.trace(s2) - 2 * tr_covmean


def frechet_sym(mu1, s1, mu2, s2):
    r = sqrtm_psd(s1)
    tr = torch.trace(sqrtm_psd(r @ s2 @ r))
    return (mu1 - mu2).pow(2).sum() + s1.trace() + s2.trace() - 2 * tr


D = 8
feat_real = torch.randn(200, D, dtype=torch.float64) @ torch.randn(D, D, dtype=torch.float64) * 0.5
feat_fake = torch.randn(180, D, dtype=torch.float64) * 0.9 + 0.3
mu_r, mu_f = feat_real.mean(0), feat_fake.mean(0)
cov_r, cov_f = torch.cov(feat_real.T), torch.cov(feat_fake.T)
print(
    "cov:",
    tuple(cov_r.shape),
    cov_r.dtype,
    f"{cov_r.trace().item():.5f}",
    bool(torch.allclose(cov_r, cov_r.T)),
)
cov_np = (feat_real - mu_r).T @ (feat_real - mu_r) / (feat_real.shape[0] - 1)
print("cov matches manual:", bool(torch.allclose(cov_r, cov_np)))
print("cov correction=0:", f"{torch.cov(feat_real.T, correction=0).trace().item():.5f}")
fw = torch.arange(200) % 3 + 1
print("cov fweights:", f"{torch.cov(feat_real.T, fweights=fw).trace().item():.5f}")
print("fid eigvals:", f"{frechet(mu_r, cov_r, mu_f, cov_f).item():.5f}")
print("fid eigh:", f"{frechet_sym(mu_r, cov_r, mu_f, cov_f).item():.5f}")
print("fid self:", f"{abs(frechet_sym(mu_r, cov_r, mu_r, cov_r).item()):.3f}")
ev = torch.linalg.eigvals(cov_r @ cov_f)
print(
    "eigvals dtype:",
    ev.dtype,
    f"{ev.imag.abs().max().item():.3g}" if ev.imag.abs().max() < 1e-8 else "complex",
)
sq = sqrtm_psd(cov_r)
print("sqrtm residual small:", bool(((sq @ sq - cov_r).abs().max() < 1e-10).item()))
vals32 = torch.linalg.eigvalsh(cov_f.float())
print("eigvalsh f32:", fmt(vals32, 3), vals32.dtype)
# FID as a training signal: the generator's features carry gradients through cov and eigh
gen_feat = feat_fake[:60].clone().requires_grad_(True)
cov_g = torch.cov(gen_feat.T)
fid_g = frechet_sym(mu_r, cov_r, gen_feat.mean(0), cov_g)
fid_g.backward()
print("fid train:", f"{fid_g.item():.5f}", cov_g.grad_fn.name(), fid_g.grad_fn.name(),
      f"{gen_feat.grad.norm().item():.5f}")
one_var = torch.cov(gen_feat[:, 0])
print("cov one variable:", tuple(one_var.shape), one_var.grad_fn.name(), f"{one_var.item():.5f}")


# ---- KID ----------------------------------------------------------------------------------
def poly_kernel(a, b):
    return (a @ b.T / a.shape[1] + 1) ** 3


def mmd_unbiased(x, y):
    m, n = x.shape[0], y.shape[0]
    kxx, kyy, kxy = poly_kernel(x, x), poly_kernel(y, y), poly_kernel(x, y)
    kxx = kxx.clone().fill_diagonal_(0)
    kyy = kyy.clone().fill_diagonal_(0)
    return kxx.sum() / (m * (m - 1)) + kyy.sum() / (n * (n - 1)) - 2 * kxy.mean()


g = torch.Generator().manual_seed(1)
subsets = []
for _ in range(5):
    ir = torch.randperm(feat_real.shape[0], generator=g)[:50]
    jf = torch.randint(0, feat_fake.shape[0], (50,), generator=g)
    subsets.append(mmd_unbiased(feat_real[ir], feat_fake[jf]))
kid = torch.stack(subsets)
print("kid:", f"{kid.mean().item():.5f}", f"{kid.std().item():.5f}", fmt(kid, 5))
print("kid self ~0:", f"{mmd_unbiased(feat_real[:60], feat_real[60:120]).item():.4f}")
fd = torch.ones(3, 4).fill_diagonal_(5, wrap=False)
print("fill_diagonal_ rect:", fd.tolist())
print("fill_diagonal_ wrap:", torch.zeros(7, 3).fill_diagonal_(1, wrap=True).sum(0).tolist())


# ---- improved precision / recall and density / coverage (k-NN manifolds) ------------------
def knn_radii(f, k=3):
    d = torch.cdist(f, f)
    return d.kthvalue(k + 1, dim=1).values  # (the 0 distance to itself is the first)


real32, fake32 = feat_real[:120].float(), feat_fake[:100].float()
r_real, r_fake = knn_radii(real32), knn_radii(fake32)
d_rf = torch.cdist(real32, fake32)
precision = (d_rf <= r_real.unsqueeze(1)).any(dim=0).float().mean()
recall = (d_rf <= r_fake.unsqueeze(0)).any(dim=1).float().mean()
density = (d_rf <= r_real.unsqueeze(1)).sum(0).float().mean() / 3
coverage = (d_rf.min(dim=1).values <= r_real).float().mean()
print(
    "precision/recall:",
    f"{precision.item():.4f}",
    f"{recall.item():.4f}",
    "density/coverage:",
    f"{density.item():.4f}",
    f"{coverage.item():.4f}",
)
print("radii:", fmt(r_real, 3), fmt(torch.topk(d_rf[0], 3, largest=False).values, 3))
print(
    "cdist p=1 vs manual:",
    bool(
        torch.allclose(
            torch.cdist(real32[:5], fake32[:4], p=1),
            (real32[:5, None] - fake32[None, :4]).abs().sum(-1),
            atol=1e-5,
        )
    ),
)
print(
    "cdist mm mode:",
    f"{torch.cdist(real32, fake32, compute_mode='use_mm_for_euclid_dist').max().item():.4f}",
)
sv = torch.linalg.svdvals(cov_r)
ev_h = torch.linalg.eigvalsh(cov_r).flip(0)
print(
    "svdvals == eigvalsh for PSD:",
    bool(torch.allclose(sv, ev_h)),
    f"{torch.linalg.matrix_norm(cov_r, 'nuc').item():.5f}",
    f"{torch.linalg.matrix_norm(cov_r - cov_f).item():.5f}",
    f"{torch.linalg.cond(cov_r).item():.5g}",
)


# ---- inception score ----------------------------------------------------------------------
logits = torch.randn(100, 10) * 2
logits[:, 3] += 1.0
probs = F.softmax(logits, dim=1)
log_p = F.log_softmax(logits, dim=1)
log_marg = probs.mean(0, keepdim=True).log()
kl = F.kl_div(log_marg.expand_as(log_p), log_p, reduction="none", log_target=True).sum(1)
print("inception score:", f"{kl.mean().exp().item():.5f}")
kl2 = (probs * (log_p - log_marg)).sum(1)
print("IS manual agree:", bool(torch.allclose(kl, kl2, atol=1e-6)))
splits = torch.stack([c.mean().exp() for c in kl.chunk(5)])
print("IS splits:", f"{splits.mean().item():.5f} +- {splits.std().item():.5f}")
kl_bm = F.kl_div(log_marg.expand_as(log_p), log_p, reduction="batchmean", log_target=True)
print("kl_div batchmean:", f"{kl_bm.item():.5f}")
print(
    "kl_div no log_target:",
    f"{F.kl_div(log_marg.expand_as(log_p), probs, reduction='sum').item():.5f}",
)
print("entropy of marginal:", f"{-(log_marg.exp() * log_marg).sum().item():.5f}")


# ---- LPIPS-like distance ------------------------------------------------------------------
class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(
            [
                nn.Conv2d(3, 8, 3, padding=1),
                nn.Conv2d(8, 16, 3, stride=2, padding=1),
                nn.Conv2d(16, 16, 3, stride=2, padding=1),
            ]
        )
        self.lin = nn.ParameterList([nn.Parameter(torch.rand(c, 1, 1)) for c in (8, 16, 16)])

    def forward(self, x):
        feats = []
        for conv in self.convs:
            x = F.leaky_relu(conv(x), 0.2)
            feats.append(x)
        return feats


net = Features().eval()
shift = torch.tensor([-0.030, -0.088, -0.188]).view(1, 3, 1, 1)
scale = torch.tensor([0.458, 0.448, 0.450]).view(1, 3, 1, 1)


def lpips(a, b):
    fa, fb = net((a * 2 - 1 - shift) / scale), net((b * 2 - 1 - shift) / scale)
    total = 0
    for w, x, y in zip(net.lin, fa, fb):
        d = (F.normalize(x, dim=1) - F.normalize(y, dim=1)) ** 2
        total = total + (d * w).sum(1, keepdim=True).mean(dim=(2, 3))
    return total.flatten()


with torch.no_grad():
    print("lpips noisy:", fmt(lpips(noisy, clean)))
    print("lpips self:", fmt(lpips(clean, clean)))
    print(
        "normalize eps:",
        fmt(F.normalize(torch.zeros(2, 3), dim=1)),
        fmt(F.normalize(torch.tensor([[3.0, 4.0]]), p=1, dim=1), 2),
    )
    print("feature shapes:", [tuple(f.shape) for f in net(clean)])


# ---- total variation ----------------------------------------------------------------------
def tv(x, reduction="sum"):
    dh = (x[..., 1:, :] - x[..., :-1, :]).abs()
    dw = (x[..., :, 1:] - x[..., :, :-1]).abs()
    if reduction == "sum":
        return dh.sum(dim=(1, 2, 3)) + dw.sum(dim=(1, 2, 3))
    return dh.mean() + dw.mean()


print("tv clean:", fmt(tv(clean)))
print("tv noisy:", fmt(tv(noisy)), f"{tv(noisy, 'mean').item():.5f}")
print(
    "tv diff:",
    fmt(
        torch.diff(clean, dim=-1).abs().sum(dim=(1, 2, 3))
        + torch.diff(clean, dim=-2).abs().sum(dim=(1, 2, 3))
    ),
)
d = noisy.clone().requires_grad_()
(tv(d).sum() * 1e-3).backward()
print("tv grad:", fmt(d.grad[0, 0, 0, :4]), d.grad.abs().max().item())


# ---- colour conversions -------------------------------------------------------------------
M = (
    torch.tensor([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0], [112.0, -93.786, -18.214]])
    / 255
)
offset = torch.tensor([16.0, 128.0, 128.0]) / 255
ycc = torch.einsum("ij,bjhw->bihw", M, clean) + offset.view(1, 3, 1, 1)
print(
    "ycbcr:",
    fmt(ycc[0, :, 0, 0], 3),
    f"{ycc[:, 0].min().item():.5f}",
    f"{ycc[:, 0].max().item():.5f}",
)
rgb_back = torch.einsum("ij,bjhw->bihw", torch.linalg.inv(M), ycc - offset.view(1, 3, 1, 1))
print("ycbcr roundtrip ok:", bool((rgb_back - clean).abs().max() < 1e-5))
y_only = clean.permute(0, 2, 3, 1) @ M[0] + offset[0]
print("y channel matmul:", tuple(y_only.shape), fmt(y_only))
psnr_y = psnr(torch.einsum("c,bchw->bhw", M[0], noisy) + offset[0], y_only, reduce=False)
print("psnr on Y:", fmt(psnr_y))
gray = (clean * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
print("gray:", tuple(gray.shape), fmt(gray))
u8 = (ycc * 255).round().clamp(0, 255).to(torch.uint8)
print("ycc uint8:", u8[0, :, 0, :4].tolist())
over = torch.tensor([-3.7, 255.4, 256.0, 300.6, 511.2, -0.4])
print(
    "to uint8 wrap:",
    over.to(torch.int64).to(torch.uint8).tolist(),
    over.round().to(torch.int32).to(torch.uint8).tolist(),
)
print("clamp then uint8:", over.clamp(0, 255).round().to(torch.uint8).tolist())
print(
    "uint8 mixed:",
    (u8[0, 0, 0, :3] + 250).tolist(),
    (u8[0, 0, 0, :3] * 1.0 / 255).dtype,
    (u8[0, 0, 0, :3] / 2).tolist(),
)
print(
    "round decimals:",
    torch.round(torch.tensor([0.12345, 2.5, 3.5, -2.5]), decimals=2).tolist(),
    torch.tensor([0.5, 1.5, 2.5]).round().tolist(),
)


# ---- histograms ---------------------------------------------------------------------------
for ch, name in enumerate("RGB"):
    h = torch.histc(clean[:, ch], bins=8, min=0, max=1)
    print(f"histc {name}:", h.long().tolist())
counts = torch.stack([torch.bincount(u8_clean[:, c].flatten(), minlength=256) for c in range(3)])
print(
    "bincount:",
    tuple(counts.shape),
    counts.dtype,
    counts.sum(1).tolist(),
    counts[1].nonzero().flatten().tolist(),
)
wb = torch.bincount(u8_clean[:, 0].flatten() // 32, weights=clean[:, 0].flatten())
print("weighted bincount:", fmt(wb, 8), wb.dtype)
hist, edges = torch.histogram(clean[:, 2].flatten(), bins=5, range=(0.0, 1.0))
print("histogram:", hist.tolist(), fmt(edges, 6))
print("histc auto range:", torch.histc(noisy[0, 0], bins=4).tolist())
cdf = counts.cumsum(1).float() / counts.sum(1, keepdim=True)
print("cdf at 128:", fmt(cdf[:, 128], 3))
chist_a = torch.histc(clean[:, 0], bins=16, min=0, max=1) / clean[:, 0].numel()
chist_b = torch.histc(noisy[:, 0], bins=16, min=0, max=1) / noisy[:, 0].numel()
print(
    "hist intersection:",
    f"{torch.minimum(chist_a, chist_b).sum().item():.5f}",
    "chi2:",
    f"{((chist_a - chist_b) ** 2 / (chist_a + chist_b + 1e-10)).sum().item():.5f}",
)


# ---- Sobel edges --------------------------------------------------------------------------
sx = torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]])
sobel = torch.stack([sx, sx.T]).unsqueeze(1)  # 2 x 1 x 3 x 3
edges_c = F.conv2d(F.pad(gray, (1, 1, 1, 1), mode="replicate"), sobel)
mag = edges_c.pow(2).sum(1, keepdim=True).sqrt()
print("sobel:", tuple(edges_c.shape), fmt(mag.amax(dim=(1, 2, 3))), f"{mag.mean().item():.5f}")
ang = torch.atan2(edges_c[:, 1], edges_c[:, 0])
print("grad angle:", f"{ang.abs().mean().item():.5f}")
sob3 = F.conv2d(noisy, sobel[:1].expand(3, 1, 3, 3), padding=1, groups=3)
print("sobel per channel:", tuple(sob3.shape), f"{sob3.abs().mean().item():.5f}")
gray_noisy = (noisy * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
mag_n = F.conv2d(F.pad(gray_noisy, (1, 1, 1, 1), mode="reflect"), sobel).norm(dim=1)
gms = (2 * mag[:, 0] * mag_n + 0.0026) / (mag[:, 0] ** 2 + mag_n**2 + 0.0026)
print("GMSD:", fmt(gms.flatten(1).std(1)))


# ---- resizing before metrics --------------------------------------------------------------
for mode, kw in [
    ("bilinear", dict(align_corners=False)),
    ("bilinear", dict(align_corners=True)),
    ("bicubic", dict(align_corners=False)),
    ("bicubic", dict(antialias=True)),
    ("bilinear", dict(antialias=True)),
    ("area", {}),
    ("nearest-exact", {}),
    ("nearest", {}),
]:
    small = F.interpolate(clean, size=(13, 13), mode=mode, **kw)
    up = F.interpolate(
        small, size=(H, W), mode="bicubic" if mode != "area" else "bilinear", align_corners=False
    )
    print(
        f"resize {mode} {kw}:",
        tuple(small.shape),
        fmt(small[0, 0, 0], 3),
        f"psnr={psnr(up.clamp(0, 1), clean).item():.4f}",
    )
up2 = F.interpolate(clean, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)
print("scale_factor 1.5:", tuple(up2.shape), fmt(up2))
u8_small = F.interpolate(u8_clean, size=(16, 16), mode="bilinear", antialias=True)
print("uint8 interpolate:", u8_small.dtype, u8_small[0, 0, 0, :6].tolist())
u8_near = F.interpolate(u8_clean, scale_factor=0.5, mode="nearest-exact")
print("uint8 nearest-exact:", u8_near.dtype, u8_near[0, 1, 8, :6].tolist())
down_aa = F.interpolate(noisy, size=(8, 8), mode="bicubic", antialias=True)
down_ref = F.interpolate(clean, size=(8, 8), mode="bicubic", antialias=True)
print("ssim at 8x8 window 3:", fmt(ssim(down_aa, down_ref, size=3, sigma=0.8)))


# ---- JPEG-like block quantisation, blur and sharpness ---------------------------------------
k = torch.arange(8, dtype=torch.float32)
dct = torch.cos(math.pi * (2 * k.view(1, -1) + 1) * k.view(-1, 1) / 16) * math.sqrt(2 / 8)
dct[0] /= math.sqrt(2)
print("dct orthonormal:", bool(torch.allclose(dct @ dct.T, torch.eye(8), atol=1e-6)))
ycc_y = ycc[:, :1] * 255 - 128
blocks = F.unfold(ycc_y, kernel_size=8, stride=8).transpose(1, 2).reshape(B, -1, 8, 8)
coef = dct @ blocks @ dct.T
qtable = 1 + (k.view(-1, 1) + k.view(1, -1)) * 4
quant = torch.round(coef / qtable)
print("nonzero coefs:", int((quant != 0).sum()), "of", quant.numel(), quant.dtype)
deq = dct.T @ (quant * qtable) @ dct
jpeg_y = F.fold(deq.reshape(B, -1, 64).transpose(1, 2), output_size=(H, W), kernel_size=8, stride=8)
jpeg_y = (jpeg_y + 128).clamp(0, 255).round() / 255
print("jpeg psnr Y:", fmt(psnr(jpeg_y, ycc[:, :1], reduce=False)))
blk = (jpeg_y[..., 7::8, :][..., :-1, :] - jpeg_y[..., 8::8, :]).abs().mean()
print("blockiness:", f"{blk.item():.5f}")
box = torch.ones(3, 1, 5, 5) / 25
blurred = F.conv2d(F.pad(clean, (2, 2, 2, 2), mode="circular"), box, groups=3)
print(
    "blur psnr / ssim:",
    f"{psnr(blurred, clean).item():.5f}",
    fmt(ssim(blurred, clean, pad_mode="reflect")),
)
lap = torch.tensor([[0.0, 1, 0], [1, -4, 1], [0, 1, 0]]).view(1, 1, 3, 3)
for name, im in [("clean", clean), ("noisy", noisy), ("blurred", blurred)]:
    g1 = (im * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
    resp = F.conv2d(g1, lap)
    sigma = resp.abs().flatten(1).median(dim=1).values / 0.6745
    print(f"laplacian var {name}:", fmt(resp.var(dim=(1, 2, 3))), "noise sigma:", fmt(sigma))
q = torch.quantile(noisy.flatten(1), torch.tensor([0.01, 0.5, 0.99]), dim=1)
print("quantiles:", tuple(q.shape), fmt(q[:, 0], 3))
local = noisy[:, 0].unfold(1, 4, 4).unfold(2, 4, 4)
print("local std:", tuple(local.shape), f"{local.std(dim=(-1, -2)).mean().item():.5f}")
cw = torch.rand(200, dtype=torch.float64)
print(
    "cov aweights:",
    f"{torch.cov(feat_real.T, aweights=cw).trace().item():.5f}",
    f"{torch.corrcoef(feat_real.T)[0, 1].item():.5f}",
)


# ---- typical mistakes ---------------------------------------------------------------------
attempt("mismatched sizes mse", lambda: F.mse_loss(noisy, clean[..., :30, :]))
attempt("mismatched sizes sub", lambda: noisy - clean[..., :30, :30])
attempt("window > image", lambda: F.conv2d(clean[..., :8, :8], gaussian_window(11), groups=3))
attempt("uint8 conv2d", lambda: F.conv2d(u8_clean, gaussian_window(3).to(torch.uint8), groups=3))
attempt("uint8 x float conv2d", lambda: F.conv2d(u8_clean, gaussian_window(3), groups=3))
attempt("double x float conv2d", lambda: F.conv2d(clean.double(), gaussian_window(3), groups=3))
attempt("wrong groups", lambda: F.conv2d(clean, gaussian_window(3), groups=1))
attempt("reflect pad too big", lambda: F.pad(clean[..., :4, :4], (5, 5, 5, 5), mode="reflect"))
attempt("histc on uint8", lambda: torch.histc(u8_clean.flatten(), bins=4, min=0, max=255))
attempt("bincount float", lambda: torch.bincount(clean.flatten()))
attempt("bincount negative", lambda: torch.bincount(torch.tensor([1, -1, 2])))
attempt("log10 of int", lambda: torch.log10(torch.tensor([10, 100])))
attempt("cov 3d", lambda: torch.cov(torch.randn(2, 3, 4)))
attempt("eigh non-square", lambda: torch.linalg.eigh(torch.randn(3, 4)))
attempt(
    "interpolate antialias nearest",
    lambda: F.interpolate(clean, size=(8, 8), mode="nearest", antialias=True),
)
attempt(
    "interpolate align_corners nearest",
    lambda: F.interpolate(clean, size=(8, 8), mode="nearest", align_corners=True),
)
attempt("avg_pool pad too big", lambda: F.avg_pool2d(clean, 2, padding=2))
attempt("kl_div shapes", lambda: F.kl_div(log_p, probs[:, :5], log_target=True))
nonsym = torch.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
attempt(
    "eigvals backward",
    lambda: (torch.linalg.eigvals(nonsym).real * torch.tensor([1.0, 2.0])).sum().backward(),
)
print("eigvals grad:", fmt(nonsym.grad) if nonsym.grad is not None else None)
nonsym.grad = None
attempt("eigvals abs backward", lambda: torch.linalg.eigvals(nonsym).abs().pow(2).sum().backward())
print("eigvals abs grad:", fmt(nonsym.grad) if nonsym.grad is not None else None)
rot = torch.tensor([[0.0, -1.0], [1.0, 0.5]], requires_grad=True)
attempt("complex eigvals backward", lambda: torch.linalg.eigvals(rot).imag.abs().sum().backward())
print("complex eigvals grad:", fmt(rot.grad) if rot.grad is not None else None)
sym = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
vals, vecs = torch.linalg.eigh(sym)
(vals.sum() + vecs.abs().sum()).backward()
print("eigh grad:", fmt(sym.grad))
attempt("fill_diagonal_ 1d", lambda: torch.zeros(4).fill_diagonal_(1))
attempt("fill_diagonal_ unequal 3d", lambda: torch.zeros(2, 3, 2).fill_diagonal_(1))
