"""Classical image processing and a tiny neural style transfer on synthetic images.

Exercises colour conversion by einsum/tensordot, uint8 <-> float conversion and uint8
arithmetic (wraparound, integer division), histograms (histc, histogram, bincount) and
histogram equalisation by cumsum + indexing, fixed-kernel filtering with grouped conv2d
(Gaussian from exp and from torch.signal.windows, Sobel, Laplacian), every F.pad mode and
Conv2d padding_mode, F.interpolate in every mode (align_corners, antialias, lanczos,
scale_factor/recompute_scale_factor, uint8 input), affine_grid + grid_sample, unfold/fold
patch averaging, pixel_shuffle, pooling with indices/unpooling, avg_pool2d options,
adaptive and fractional max pooling, FFT low-pass filtering, and style transfer optimised
with LBFGS (strong Wolfe) and Adam, plus typical user mistakes (wrong sizes, a double
kernel on a float image, strided 'same' padding, uint8 transposed convolution)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show(name, t, n=4):
    vals = " ".join(f"{v:.4f}" for v in t.detach().flatten()[:n].tolist())
    print(f"{name}: {tuple(t.shape)} {t.dtype} [{vals}]")


def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__, str(e).split("\n")[0])


# ---- synthetic images -------------------------------------------------------------------
H = W = 16
ys, xs = torch.meshgrid(torch.linspace(-1, 1, H), torch.linspace(-1, 1, W), indexing="ij")
gradient = (xs + 1) / 2
checker = ((torch.arange(H).view(-1, 1) // 4 + torch.arange(W) // 4) % 2).float()
circle = ((xs**2 + ys**2) < 0.5).float()
img = torch.stack([gradient, checker * 0.8 + 0.1, circle * 0.6 + 0.2 * gradient])
img = (img + 0.05 * torch.rand(3, H, W)).clamp(0, 1).unsqueeze(0)
show("image", img)

# ---- colour conversion --------------------------------------------------------------------
rgb_to_gray = torch.tensor([0.299, 0.587, 0.114])
gray = torch.einsum("bchw,c->bhw", img, rgb_to_gray).unsqueeze(1)
show("gray", gray)
ycbcr_m = torch.tensor(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]]
)
ycbcr = torch.tensordot(ycbcr_m, img[0], dims=([1], [0])) + torch.tensor([0.0, 0.5, 0.5]).view(
    3, 1, 1
)
back = torch.tensordot(
    torch.linalg.inv(ycbcr_m), ycbcr - torch.tensor([0.0, 0.5, 0.5]).view(3, 1, 1), dims=1
)
show("ycbcr", ycbcr)
print("roundtrip max err < 1e-5:", bool((back - img[0]).abs().max() < 1e-5))

# ---- uint8 -------------------------------------------------------------------------------
u8 = img.mul(255).round().clamp(0, 255).to(torch.uint8)
print(u8.dtype, u8[0, 0, 0, :6].tolist(), u8.sum().item(), u8.float().mean().item())
print("wrap add:", (u8[0, 0, 0, -4:] + 100).tolist(), (u8[0, 0, 0, :4] - 10).tolist())
print(
    "u8 * 2:", (u8[0, 1, 0, :4] * 2).tolist(), (u8 + u8).dtype, (u8 * 1.5).dtype, (u8 + 1.0).dtype
)
print(
    "div:",
    torch.div(u8[0, 0, 0, -4:], 3).tolist(),
    torch.div(u8[0, 0, 0, -4:], 3, rounding_mode="floor").tolist(),
    (u8[0, 0, 0, -4:] // 7).tolist(),
    torch.div(u8[0, 0, 0, -4:], 3, rounding_mode="trunc").dtype,
)
print("to float:", (u8.float() / 255 - img).abs().max().item() < 0.002, u8.to(torch.float16).dtype)

# ---- histograms --------------------------------------------------------------------------
g8 = (gray * 255).round().to(torch.uint8)
hist_c = torch.histc(gray, bins=8, min=0, max=1)
print("histc", hist_c.tolist())
counts, edges = torch.histogram(gray.flatten(), bins=5, range=(0.0, 1.0))
print("histogram", counts.tolist(), [round(e, 4) for e in edges.tolist()])
counts_w, _ = torch.histogram(
    gray.flatten(), bins=torch.tensor([0.0, 0.25, 0.5, 1.0]), density=True
)
show("density", counts_w, 3)
bc = torch.bincount(g8.flatten().long(), minlength=256)
print("bincount", bc.shape, bc.sum().item(), bc.nonzero().shape[0], bc.argmax().item())
cdf = bc.cumsum(0)
cdf_min = cdf[cdf > 0].min()
lut = ((cdf - cdf_min).float() / (cdf[-1] - cdf_min) * 255).round().clamp(0, 255).to(torch.uint8)
equal = lut[g8.long()]
print(
    "equalised",
    equal.dtype,
    equal.shape,
    equal.flatten()[:8].tolist(),
    equal.float().std().item() > 0,
)
eq2 = torch.gather(lut, 0, g8.flatten().long()).view_as(g8)
print("gather==index", torch.equal(eq2, equal))

# ---- fixed-kernel filtering ---------------------------------------------------------------
k = torch.arange(5.0) - 2
g1 = torch.exp(-(k**2) / (2 * 1.0**2))
g1 = g1 / g1.sum()
win = torch.signal.windows.gaussian(5, std=1.0)
show("gaussian window", win / win.sum(), 5)
print("window == exp:", torch.allclose(win / win.sum(), g1))
show("kaiser/hann", torch.outer(torch.signal.windows.kaiser(4, beta=3.0), torch.hann_window(4)), 6)
gauss = torch.outer(g1, g1).expand(3, 1, 5, 5)
blur = F.conv2d(F.pad(img, (2, 2, 2, 2), mode="reflect"), gauss, groups=3)
show("blur", blur)
sobel_x = torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]])
sobel = torch.stack([sobel_x, sobel_x.t()]).unsqueeze(1)
edges_xy = F.conv2d(gray, sobel, padding=1)
mag = edges_xy.pow(2).sum(1, keepdim=True).sqrt()
show("sobel mag", mag[0, 0, 4], 6)
lap = torch.tensor([[0.0, 1, 0], [1, -4, 1], [0, 1, 0]]).repeat(3, 1, 1, 1)
show("laplacian", F.conv2d(img, lap, padding="same", groups=3)[0, :, 8, 8], 3)
for mode in ("constant", "reflect", "replicate", "circular"):
    kw = {"value": 0.5} if mode == "constant" else {}
    p = F.pad(torch.arange(6.0).view(1, 1, 2, 3), (2, 1, 1, 1), mode=mode, **kw)
    print(mode, p.shape, p[0, 0, 0].tolist())
for pm in ("zeros", "reflect", "replicate", "circular"):
    conv = nn.Conv2d(3, 3, 3, padding=1, padding_mode=pm, groups=3, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1 / 9)
    show(f"conv {pm}", conv(img)[0, 0, 0])

# ---- resizing ----------------------------------------------------------------------------
small = torch.arange(16.0).view(1, 1, 4, 4)
for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "area"):
    up = F.interpolate(small, scale_factor=1.5, mode=mode)
    print(f"{mode:13s}", up.shape, [round(v, 4) for v in up[0, 0, 1].tolist()])
for align in (True, False):
    show(
        f"bilinear align={align}",
        F.interpolate(small, size=(7, 5), mode="bilinear", align_corners=align)[0, 0, 1],
        5,
    )
    show(
        f"bicubic align={align}",
        F.interpolate(small, size=(3, 3), mode="bicubic", align_corners=align),
        5,
    )
show(
    "antialias bilinear",
    F.interpolate(img, size=(5, 7), mode="bilinear", antialias=True)[0, 1, 2],
    7,
)
show(
    "antialias bicubic",
    F.interpolate(img, scale_factor=0.3, mode="bicubic", antialias=True)[0, 0, 1],
    4,
)
lanczos = F.interpolate(img, size=(6, 5), mode="lanczos", antialias=True)
show("lanczos", lanczos[0, 2, 3], 5)
u8_lz = F.interpolate(u8, scale_factor=0.4, mode="lanczos", antialias=True)
print("uint8 lanczos", u8_lz.shape, u8_lz[0, 0, 2].tolist())
attempt("lanczos no aa", lambda: F.interpolate(img, size=(6, 5), mode="lanczos"))
r1 = F.interpolate(img, scale_factor=0.7, mode="bilinear")
r2 = F.interpolate(img, scale_factor=0.7, mode="bilinear", recompute_scale_factor=True)
show("scale 0.7", r1[0, 0, 3], 5)
show("recompute", r2[0, 0, 3], 5)
show("1d linear", F.interpolate(torch.arange(5.0).view(1, 1, 5), size=8, mode="linear"), 8)
u8_up = F.interpolate(u8, size=(8, 8), mode="nearest")
print("uint8 nearest", u8_up.dtype, u8_up[0, 0, 0].tolist())
u8_bl = F.interpolate(u8, size=(6, 6), mode="bilinear", antialias=True)
print("uint8 bilinear", u8_bl.dtype, u8_bl[0, 2, 3].tolist())
attempt("size+scale", lambda: F.interpolate(img, size=(4, 4), scale_factor=2.0))
attempt(
    "align nearest", lambda: F.interpolate(img, scale_factor=2, mode="nearest", align_corners=True)
)
attempt("no size", lambda: F.interpolate(img, mode="bilinear"))

# ---- warping -----------------------------------------------------------------------------
angle = math.pi / 6
theta = torch.tensor(
    [
        [[math.cos(angle), -math.sin(angle), 0.1], [math.sin(angle), math.cos(angle), 0.0]],
        [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0]],
    ]
)
batch2 = torch.cat([img, img.flip(-1)])
for align in (False, True):
    grid = F.affine_grid(theta, list(batch2.shape), align_corners=align)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            out = F.grid_sample(batch2, grid, mode=mode, padding_mode=pad, align_corners=align)
            print(
                f"warp {align!s:5s} {mode:8s} {pad:10s}",
                f"{out[0, 0].mean().item():.4f} {out[1, 2, 5, 6].item():.4f}",
            )
attempt("grid last dim", lambda: F.grid_sample(img, torch.zeros(1, 4, 4, 3), align_corners=False))
attempt(
    "theta shape", lambda: F.affine_grid(torch.zeros(1, 3, 3), [1, 3, 8, 8], align_corners=False)
)

# ---- patches, shuffles, pooling ------------------------------------------------------------
cols = F.unfold(img, kernel_size=4, stride=2, padding=1)
print("unfold", cols.shape)
summed = F.fold(cols, output_size=(H, W), kernel_size=4, stride=2, padding=1)
divisor = F.fold(torch.ones_like(cols), output_size=(H, W), kernel_size=4, stride=2, padding=1)
print("fold divisor", divisor[0, 0, :3, :3].tolist(), torch.allclose(summed / divisor, img))
attempt("fold size", lambda: F.fold(cols, output_size=(12, 12), kernel_size=4, stride=2, padding=1))
attempt("unfold 3d", lambda: F.unfold(img[0, 0], kernel_size=2))
ps = F.pixel_unshuffle(img, 2)
print("unshuffle", ps.shape, torch.equal(F.pixel_shuffle(ps, 2), img), nn.PixelShuffle(2)(ps).shape)
attempt("shuffle", lambda: F.pixel_shuffle(torch.zeros(1, 6, 4, 4), 2))
attempt("unshuffle", lambda: F.pixel_unshuffle(torch.zeros(1, 3, 5, 4), 2))
pooled, idx = F.max_pool2d(img, 2, return_indices=True)
print("max_pool", pooled.shape, idx.dtype, idx[0, 0, 0].tolist())
unpooled = F.max_unpool2d(pooled, idx, 2)
print(
    "unpool",
    unpooled.shape,
    (unpooled != 0).sum().item(),
    torch.equal(unpooled.amax((2, 3)), img.amax((2, 3))),
)
mp3, idx3 = nn.MaxPool2d(3, stride=2, padding=1, return_indices=True, ceil_mode=True)(img)
print("max_pool ceil", mp3.shape, idx3[0, 1, -1].tolist())
print(
    "unpool size",
    nn.MaxUnpool2d(3, stride=2, padding=1)(mp3, idx3, output_size=img.shape[-2:]).shape,
)
show("avg ceil", F.avg_pool2d(img, 3, stride=2, ceil_mode=True)[0, 0, -1], 8)
show(
    "avg no pad count",
    F.avg_pool2d(img, 3, stride=2, padding=1, count_include_pad=False)[0, 0, 0],
    4,
)
show("avg divisor", F.avg_pool2d(img, 2, divisor_override=3)[0, 2, 3], 4)
show("adaptive 5x3", F.adaptive_avg_pool2d(img, (5, 3))[0, 0], 6)
show("adaptive max 3", F.adaptive_max_pool2d(img, 3)[0, 1], 6)
frac, frac_idx = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.7), return_indices=True)(img)
print("fractional", frac.shape, frac_idx[0, 0, 0].tolist())
attempt("fractional size", lambda: F.fractional_max_pool2d(img, 3, output_size=(15, 4)))
attempt("double kernel", lambda: F.conv2d(img, gauss.double(), groups=3))
attempt("double sobel", lambda: F.conv2d(gray, sobel.double(), padding=1))
attempt("same strided", lambda: F.conv2d(img, lap, padding="same", stride=2, groups=3))
attempt("uint8 conv_transpose", lambda: F.conv_transpose2d(u8, lap.to(torch.uint8), groups=3))
attempt("reflect pad", lambda: F.pad(torch.zeros(1, 1, 3, 3), (3, 3, 3, 3), mode="reflect"))
attempt("pad odd", lambda: F.pad(img, (1, 1, 1), mode="replicate"))

# ---- frequency-domain filtering -------------------------------------------------------------
spec = torch.fft.fft2(gray)
print("fft2", spec.shape, spec.dtype, f"{spec[0, 0, 0, 0].real.item():.4f}")
shifted = torch.fft.fftshift(spec, dim=(-2, -1))
fy, fx = torch.meshgrid(torch.arange(H) - H // 2, torch.arange(W) - W // 2, indexing="ij")
mask = ((fx**2 + fy**2) <= 16).to(spec.dtype)
low = torch.fft.ifft2(torch.fft.ifftshift(shifted * mask, dim=(-2, -1))).real
show("lowpass", low[0, 0, 8], 5)
rs = torch.fft.rfft2(gray, norm="ortho")
print("rfft2", rs.shape, rs.dtype)
rmask = (torch.fft.rfftfreq(W).abs() < 0.2).float() * (
    torch.fft.fftfreq(H).abs() < 0.2
).float().view(-1, 1)
low_r = torch.fft.irfft2(rs * rmask, s=(H, W), norm="ortho")
show("rlowpass", low_r[0, 0, 8], 5)
print("energy", f"{spec.abs().pow(2).sum().item() / (H * W):.4f} {gray.pow(2).sum().item():.4f}")

# ---- neural style transfer ----------------------------------------------------------------
features = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect"),
    nn.ReLU(),
    nn.AvgPool2d(2),
    nn.Conv2d(8, 8, 3, padding=1),
    nn.ReLU(),
)
for p in features.parameters():
    p.requires_grad_(False)


def gram(f):
    b, c, h, w = f.shape
    f = f.reshape(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


def tv(x):
    return (x[..., 1:, :] - x[..., :-1, :]).abs().mean() + (
        x[..., :, 1:] - x[..., :, :-1]
    ).abs().mean()


content = img
style = torch.stack([checker, 1 - checker, checker * 0.5]).unsqueeze(0)
content_feat = features(content)
style_gram = gram(features(style))
print("gram", style_gram.shape, f"{style_gram[0].trace().item():.4f}")


def total_loss(x):
    f = features(x)
    c = F.mse_loss(f, content_feat)
    s = F.mse_loss(gram(f), style_gram)
    return c + 1e5 * s + 0.01 * tv(x), c, s


x = content.clone().requires_grad_()
opt = torch.optim.LBFGS([x], lr=1, max_iter=5, line_search_fn="strong_wolfe", history_size=4)
for step in range(3):

    def closure():
        opt.zero_grad()
        loss, _, _ = total_loss(x)
        loss.backward()
        return loss

    loss = opt.step(closure)
    with torch.no_grad():
        x.clamp_(0, 1)
    # (content and style are tiny parts of the loss, where LBFGS's line search magnifies
    # float32 rounding: two significant digits of them are what is reproducible)
    total, c, s = total_loss(x)
    print(f"lbfgs {step} {loss.item():.5f} content {c.item():.2e} style {s.item():.2e}")
y = content.clone()
y.requires_grad_(True)
adam = torch.optim.Adam([y], lr=0.02)
for step in range(6):
    adam.zero_grad()
    loss, c, s = total_loss(y)
    loss.backward()
    adam.step()
    with torch.no_grad():
        y.clamp_(0, 1)
    if step % 2 == 1:
        print(f"adam {step} {loss.item():.5f} grad {y.grad.abs().max().item():.5f}")
stylised = (y.detach() * 255).round().to(torch.uint8)
print("stylised", stylised.shape, stylised.dtype, stylised[0, :, 8, 8].tolist())
