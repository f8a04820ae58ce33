"""Neural style transfer and texture synthesis on synthetic images, as tutorials write it.

A small seeded VGG-like extractor (Conv2d / ReLU(inplace=True) / MaxPool2d / AvgPool2d,
frozen with requires_grad_(False) and eval()), features taken by forward hooks and by slicing
the Sequential, Gram matrices four ways (bmm, einsum, view + t + mm, matmul), content, style
and total-variation losses, the image itself optimised with LBFGS (strong Wolfe and plain,
closure, history_size) and Adam with clamp_ under no_grad, ImageNet normalisation, image
pyramids with F.interpolate (bilinear / bicubic / area / nearest-exact, antialias,
align_corners, scale_factor and size), padding modes, avg_pool2d options, FFT spectrum
losses, histogram matching (sort, argsort, quantile, scatter_, histc), patch matching with
unfold / fold and cosine similarity, and the usual mistakes with their error messages."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fmt(t, n=4, p=4):
    return " ".join(f"{v:.{p}f}" for v in t.detach().flatten()[:n].tolist())


def show(name, t, n=4):
    print(f"{name}: {tuple(t.shape)} {t.dtype} [{fmt(t, n)}]")


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", tuple(out.shape) if isinstance(out, torch.Tensor) else out)
    except Exception as e:  # noqa: BLE001
        print(label, type(e).__name__ + ":", str(e).split("\n")[0])


# ---- synthetic images ------------------------------------------------------------------
H = W = 24
ys, xs = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
stripes = (torch.sin(xs.float() * (2 * math.pi / 6)) * 0.5 + 0.5)
checker = ((ys // 4 + xs // 4) % 2).to(torch.float32)
ramp = torch.linspace(0, 1, W).expand(H, W)
diag = ((xs + ys) % 8 < 4).float()
content_img = torch.stack([ramp, ramp.t(), 0.5 * ramp + 0.5 * ramp.t()]).unsqueeze(0)
style_img = torch.stack([stripes, checker, diag * 0.7 + 0.15]).unsqueeze(0)
content_img = (content_img + 0.02 * torch.randn_like(content_img)).clamp(0, 1)
show("content", content_img)
show("style", style_img)
print("style mean per channel", fmt(style_img.mean(dim=(0, 2, 3)), 3))

mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def normalize(img):
    return (img - mean) / std


show("normalized", normalize(content_img))
print("denorm max err", f"{(normalize(content_img) * std + mean - content_img).abs().max():.2e}")


# ---- a small VGG-like feature extractor ----------------------------------------------
def make_vgg():
    layers = [
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, 3, padding=1, padding_mode="reflect"), nn.ReLU(inplace=True),
        nn.AvgPool2d(2, 2),
        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True),
    ]
    net = nn.Sequential(*layers)
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            nn.init.constant_(m.bias, 0.01)
    return net.requires_grad_(False).eval()


torch.manual_seed(1)
vgg = make_vgg()
print(vgg)
print("frozen params", sum(p.numel() for p in vgg.parameters()),
      "trainable", sum(p.numel() for p in vgg.parameters() if p.requires_grad))
print("training", vgg.training, [type(m).__name__ for m in vgg[:5]])

NAMES = {"1": "relu1_1", "3": "relu1_2", "6": "relu2_1", "8": "relu2_2", "11": "relu3_1"}
captured = {}


def hook_for(name):
    def hook(module, inp, out):
        captured[name] = out
    return hook


handles = [vgg[int(i)].register_forward_hook(hook_for(n)) for i, n in NAMES.items()]
_ = vgg(normalize(content_img))
for name in NAMES.values():
    f = captured[name]
    print(f"hook {name}: {tuple(f.shape)} mean {f.mean():.5f} nonzero {(f > 0).float().mean():.4f}")
for h in handles:
    h.remove()
captured.clear()
_ = vgg(content_img)
print("after remove captured", len(captured))


def features_by_slicing(img, cut_points=(2, 4, 7, 9, 12)):
    feats, x, start = [], normalize(img), 0
    for stop in cut_points:
        x = vgg[start:stop](x)
        feats.append(x)
        start = stop
    return feats


feats = features_by_slicing(content_img)
print("slice shapes", [tuple(f.shape) for f in feats])
print("slice sums", [f"{f.sum():.6g}" for f in feats[:2]])


# ---- Gram matrices four ways ---------------------------------------------------------
def gram_bmm(f):
    b, c, h, w = f.shape
    x = f.view(b, c, h * w)
    return torch.bmm(x, x.transpose(1, 2)) / (c * h * w)


def gram_einsum(f):
    b, c, h, w = f.shape
    return torch.einsum("bchw,bdhw->bcd", f, f) / (c * h * w)


def gram_mm(f):
    _, c, h, w = f.size()
    x = f.view(c, h * w)
    return (x.mm(x.t()) / (c * h * w)).unsqueeze(0)


def gram_matmul(f):
    x = f.flatten(2)
    return x @ x.mT / x[0].numel()


f2 = feats[2]
grams = [g(f2) for g in (gram_bmm, gram_einsum, gram_mm, gram_matmul)]
show("gram", grams[0])
print("gram agree", all(torch.allclose(grams[0], g, rtol=1e-5, atol=1e-7) for g in grams[1:]))
print("gram symmetric", torch.allclose(grams[0], grams[0].transpose(1, 2)))
print("gram diag", fmt(torch.diagonal(grams[0], dim1=1, dim2=2), 4, 5))
eig = torch.linalg.eigvalsh(grams[0][0].double())
print("gram psd", bool(eig.min() > -1e-10), f"top eig {eig.max():.5f}")

# ---- losses ---------------------------------------------------------------------------
STYLE_LAYERS = [0, 1, 2, 3]
CONTENT_LAYER = 3
style_feats = features_by_slicing(style_img)
style_grams = [gram_bmm(style_feats[i]).detach() for i in STYLE_LAYERS]
content_target = feats[CONTENT_LAYER].detach()


def tv_loss(img):
    dh = torch.diff(img, dim=2)
    dw = img[..., :, 1:] - img[..., :, :-1]
    return dh.abs().mean() + dw.abs().mean()


def tv_loss_sq(img):
    return (torch.diff(img, dim=-2).pow(2).sum() + torch.diff(img, dim=-1).pow(2).sum())


for red in ("mean", "sum", "none"):
    l = F.mse_loss(feats[1], style_feats[1], reduction=red)
    print(f"mse {red}: {tuple(l.shape)} {l.sum():.6g}")
print(f"tv content {tv_loss(content_img):.5f} style {tv_loss(style_img):.5f}")
print(f"tv sq {tv_loss_sq(style_img):.4f} diff n=2 {torch.diff(ramp[0], n=2).abs().max():.2e}")
print("diff prepend", fmt(torch.diff(ramp[0, :4], prepend=torch.zeros(1)), 4, 5))


def total_loss(img, style_w=1e3, content_w=1.0, tv_w=1e-2):
    fs = features_by_slicing(img)
    s = sum(F.mse_loss(gram_bmm(fs[i]), g) for i, g in zip(STYLE_LAYERS, style_grams))
    c = F.mse_loss(fs[CONTENT_LAYER], content_target)
    t = tv_loss(img)
    return style_w * s + content_w * c + tv_w * t, s, c, t


loss, s, c, t = total_loss(content_img)
print(f"initial loss {loss:.5f} style {s:.4e} content {c:.4e} tv {t:.5f}")
print("frozen grad_fn", loss.grad_fn, loss.requires_grad)
probe = content_img.clone().requires_grad_(True)
loss, s, c, t = total_loss(probe)
print("grad_fn", type(loss.grad_fn).__name__, type(s.grad_fn).__name__, type(t.grad_fn).__name__)
(g,) = torch.autograd.grad(loss, probe)
print(f"d loss / d image: {tuple(g.shape)} norm {g.norm():.5f} max {g.abs().max():.5f}")

# ---- the tutorial's model: loss modules inserted into a rebuilt Sequential ------------
class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", mean.clone().view(-1, 1, 1))
        self.register_buffer("std", std.clone().view(-1, 1, 1))

    def forward(self, img):
        return (img - self.mean) / self.std


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()
        self.loss = torch.tensor(0.0)

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_mm(target_feature).detach()
        self.loss = torch.tensor(0.0)

    def forward(self, x):
        self.loss = F.mse_loss(gram_mm(x), self.target, reduction="sum")
        return x


def build_model(cnn, style, content, content_layers=("conv_4",),
                style_layers=("conv_1", "conv_2", "conv_3", "conv_4", "conv_5")):
    model = nn.Sequential(Normalization(mean.flatten(), std.flatten()))
    content_losses, style_losses = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, (nn.MaxPool2d, nn.AvgPool2d)):
            name = f"pool_{i}"
        else:
            raise RuntimeError(f"Unrecognized layer: {layer.__class__.__name__}")
        model.add_module(name, layer)
        if name in content_layers:
            cl = ContentLoss(model(content))
            model.add_module(f"content_loss_{i}", cl)
            content_losses.append(cl)
        if name in style_layers:
            sl = StyleLoss(model(style))
            model.add_module(f"style_loss_{i}", sl)
            style_losses.append(sl)
    for j in range(len(model) - 1, -1, -1):
        if isinstance(model[j], (ContentLoss, StyleLoss)):
            break
    return model[: j + 1], style_losses, content_losses


model, style_losses, content_losses = build_model(vgg, style_img, content_img)
print("model layers", len(model), list(dict(model.named_children()))[-4:])
print("buffers", [n for n, _ in model.named_buffers()], "params", len(list(model.parameters())))
print("relu inplace", [m.inplace for m in model if isinstance(m, nn.ReLU)][:2])
torch.manual_seed(3)
inp = content_img.clone() + 0.1 * torch.randn_like(content_img)
inp.requires_grad_(True)
model.requires_grad_(False)
opt = torch.optim.LBFGS([inp], max_iter=4, history_size=10)
run = [0]


def tutorial_closure():
    with torch.no_grad():
        inp.clamp_(0, 1)
    opt.zero_grad()
    model(inp)
    style_score = sum(sl.loss for sl in style_losses)
    content_score = sum(cl.loss for cl in content_losses)
    loss = 1e2 * style_score + content_score
    loss.backward()
    run[0] += 1
    if run[0] % 3 == 1:
        print(f"run {run[0]}: style {style_score.item():.4g} content {content_score.item():.4g}")
    return style_score + content_score


for _ in range(2):
    opt.step(tutorial_closure)
with torch.no_grad():
    inp.clamp_(0, 1)
print("tutorial runs", run[0], "out", fmt(inp, 4))

# ---- optimising the image: LBFGS -----------------------------------------------------
def run_lbfgs(lsf):
    x = content_img.clone().requires_grad_(True)
    print("param", x.is_leaf, x.requires_grad, x.grad)
    opt = torch.optim.LBFGS([x], lr=1 if lsf else 0.05, max_iter=6 if lsf else 4,
                            history_size=5, line_search_fn=lsf)
    evals = [0]

    def closure():
        opt.zero_grad()
        loss, _, _, _ = total_loss(x)
        loss.backward()
        evals[0] += 1
        return loss

    for step in range(2):
        l0 = opt.step(closure)
        with torch.no_grad():
            x.clamp_(0, 1)
        print(f"lbfgs {lsf} step {step} loss {l0.item():.4f}")
    st = opt.state[opt.param_groups[0]["params"][0]]
    print("evals", evals[0], "func_evals", st["func_evals"], "n_iter", st["n_iter"],
          "history", len(st["old_dirs"]))
    final = total_loss(x)[0]
    in_range = bool((x >= 0).all() and (x <= 1).all())
    print(f"lbfgs {lsf} final {final.item():.3f} in range {in_range}")


for lsf in ("strong_wolfe", None):
    run_lbfgs(lsf)

# ---- Adam with clamping --------------------------------------------------------------
torch.manual_seed(2)
x = torch.rand_like(content_img).requires_grad_(True)
opt = torch.optim.Adam([x], lr=0.02)
for step in range(12):
    opt.zero_grad(set_to_none=True)
    loss, s, c, t = total_loss(x, content_w=0.0)
    loss.backward()
    gnorm = x.grad.norm()
    opt.step()
    with torch.no_grad():
        x.clamp_(0.0, 1.0)
    if step % 4 == 3:
        print(f"adam {step} loss {loss.item():.4f} gnorm {gnorm:.4f}")
print("adam state", sorted(opt.state[x].keys()), int(opt.state[x]["step"]))

# ---- image pyramids --------------------------------------------------------------------
img = style_img
for mode, kw in [("bilinear", {"align_corners": False}), ("bilinear", {"align_corners": True}),
                 ("bicubic", {"align_corners": False}), ("area", {}), ("nearest-exact", {}),
                 ("bilinear", {"antialias": True}), ("bicubic", {"antialias": True})]:
    small = F.interpolate(img, scale_factor=0.5, mode=mode, **kw)
    big = F.interpolate(small, size=(H, W), mode=mode, **kw)
    print(f"pyr {mode} {kw}: {tuple(small.shape)} [{fmt(small, 3)}] "
          f"rec err {(big - img).abs().mean():.5f}")
up = F.interpolate(img, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)
print("up 1.5", tuple(up.shape), fmt(up, 3))
odd = F.interpolate(img, size=(10, 7), mode="area")
print("area odd", tuple(odd.shape), fmt(odd, 3))
pyramid = [img]
for _ in range(2):
    pyramid.append(F.avg_pool2d(pyramid[-1], 2))
print("pyramid", [tuple(p.shape[-2:]) for p in pyramid], fmt(pyramid[-1], 3))

# coarse-to-fine: optimise at low resolution, upsample, keep going
x = F.interpolate(content_img, scale_factor=0.5, mode="area").requires_grad_(True)
opt = torch.optim.Adam([x], lr=0.05)
for level in range(2):
    for _ in range(3):
        opt.zero_grad()
        fs = features_by_slicing(x)
        sg = [gram_bmm(style_feats[i]) for i in STYLE_LAYERS]
        lvl = sum(F.mse_loss(gram_bmm(fs[i]), g) for i, g in zip(STYLE_LAYERS, sg))
        lvl.backward()
        opt.step()
    print(f"level {level} {tuple(x.shape[-2:])} style {lvl.item():.5e}")
    if level == 0:
        x = F.interpolate(x.detach(), size=(H, W), mode="bicubic", align_corners=False)
        x = x.clamp(0, 1).requires_grad_(True)
        opt = torch.optim.Adam([x], lr=0.05)

# ---- padding -------------------------------------------------------------------------
t = torch.arange(12.0).view(1, 1, 3, 4)
for mode in ("reflect", "replicate", "circular", "constant"):
    p = F.pad(t, (2, 1, 1, 2), mode=mode)
    print(f"pad {mode}: {tuple(p.shape)} row0 {p[0, 0, 0].tolist()} sum {p.sum().item()}")
rp = nn.ReflectionPad2d(2)(content_img)
print("ReflectionPad2d", tuple(rp.shape), torch.equal(rp[..., 2:-2, 2:-2], content_img),
      torch.equal(rp[..., 0, 2:-2], content_img[..., 2, :]))
print("ReplicationPad2d", nn.ReplicationPad2d((1, 0, 0, 1))(t)[0, 0].tolist())
print("circular 1d", F.pad(torch.arange(5.0).view(1, 1, 5), (2, 2), mode="circular").tolist())
pw = F.pad(content_img, (1, 1, 1, 1), mode="reflect")
conv = nn.Conv2d(3, 3, 3, bias=False).requires_grad_(False)
print("reflect conv", tuple(conv(pw).shape), f"{conv(pw).mean():.5f}")

# ---- avg_pool2d options ------------------------------------------------------------------
a = torch.arange(25.0).view(1, 1, 5, 5)
for cip in (True, False):
    for ceil in (False, True):
        o = F.avg_pool2d(a, 2, stride=2, padding=1, count_include_pad=cip, ceil_mode=ceil)
        print(f"avgpool cip={cip} ceil={ceil}: {tuple(o.shape)} {fmt(o, 9, 3)}")
print("divisor_override", fmt(F.avg_pool2d(a, 3, 2, divisor_override=4), 4, 3))
print("maxpool ceil", F.max_pool2d(a, 2, ceil_mode=True).flatten().tolist())

# ---- FFT spectrum loss -----------------------------------------------------------------
spec_style = torch.fft.rfft2(style_img, norm="ortho")
print("rfft2", tuple(spec_style.shape), spec_style.dtype)
print("dc", fmt(spec_style[0, :, 0, 0].real, 3))
back = torch.fft.irfft2(spec_style, s=(H, W), norm="ortho")
print("irfft2 roundtrip close", torch.allclose(back, style_img, atol=1e-6))
amp_style = spec_style.abs()
x = content_img.clone().requires_grad_(True)
opt = torch.optim.Adam([x], lr=0.03)
for _ in range(6):
    opt.zero_grad()
    spec = torch.fft.rfft2(x, norm="ortho")
    # (only the amplitudes: the style spectrum is mostly zeros whose phase is rounding noise)
    l_spec = F.mse_loss(spec.abs(), amp_style) + 0.1 * F.l1_loss(torch.log1p(spec.abs()),
                                                                 torch.log1p(amp_style))
    l_spec.backward()
    opt.step()
print(f"spectrum loss {l_spec.item():.5f} grad {x.grad.abs().mean():.4e}")
power = torch.fft.fftshift(torch.fft.fft2(style_img[0, 0]).abs() ** 2)
cl = style_img.to(memory_format=torch.channels_last)
print("channels_last", F.avg_pool2d(cl, 2).is_contiguous(memory_format=torch.channels_last),
      torch.fft.rfft2(cl).stride(), torch.fft.fft(cl).stride())
print("power peak", divmod(int(power.flatten()[1:].argmax()) + 1, W), f"{power.max():.2f}")
print("rfftfreq", fmt(torch.fft.rfftfreq(8), 5, 4))


# ---- histogram matching ---------------------------------------------------------------
def match_histogram(source, target):
    out = torch.empty_like(source)
    for ch in range(source.shape[0]):
        s = source[ch].flatten()
        t_sorted, _ = torch.sort(target[ch].flatten())
        order = torch.argsort(s, stable=True)
        matched = torch.empty_like(s)
        matched.scatter_(0, order, t_sorted)
        out[ch] = matched.view_as(source[ch])
    return out


matched = match_histogram(content_img[0], style_img[0])
print("matched", fmt(matched, 6))
print("sorted equal", all(torch.equal(torch.sort(matched[c].flatten()).values,
                                      torch.sort(style_img[0, c].flatten()).values)
                          for c in range(3)))
q = torch.tensor([0.1, 0.25, 0.5, 0.75, 0.9])
for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
    print(f"quantile {interp}", fmt(torch.quantile(content_img[0, 0], q, interpolation=interp), 5))
print("quantile dim", fmt(torch.quantile(content_img[0].flatten(1), q[:2], dim=1), 6))
hist = torch.histc(content_img[0, 1], bins=8, min=0, max=1)
print("histc", hist.int().tolist(), int(hist.sum()))
print("histc matched", torch.histc(matched[1], bins=8, min=0, max=1).int().tolist())
cdf = torch.cumsum(hist, 0) / hist.sum()
print("cdf", fmt(cdf, 8, 3))
vals, idx = torch.sort(content_img[0, 2].flatten(), descending=True)
print("sort desc", fmt(vals, 3), idx[:3].tolist())

# ---- patch matching with unfold / fold --------------------------------------------------
k = 3
cf = features_by_slicing(content_img)[1]
sf = features_by_slicing(style_img)[1]
cp = F.unfold(cf, k, padding=1)
sp = F.unfold(sf, k, padding=1)
print("patches", tuple(cp.shape), tuple(sp.shape))
cpn = F.normalize(cp, dim=1)
spn = F.normalize(sp, dim=1)
sim = torch.einsum("bkn,bkm->bnm", cpn, spn)
best = sim.argmax(dim=2)
print("sim", tuple(sim.shape), f"max {sim.max():.5f} mean {sim.mean():.5f}")
print("best", best[0, :8].tolist())
cos = F.cosine_similarity(cp[0, :, 0:1], sp[0], dim=0)
print("cosine_similarity", tuple(cos.shape), int(cos.argmax()), f"{cos.max():.5f}")
swapped = sp[:, :, best[0]]
hw = cf.shape[-2:]
folded = F.fold(swapped, hw, k, padding=1)
overlap = F.fold(torch.ones_like(swapped), hw, k, padding=1)
print("overlap", overlap[0, 0, :2, :3].tolist())
rec = folded / overlap
show("swapped", rec)
ident = F.fold(F.unfold(cf, k, padding=1), hw, k, padding=1) / overlap
print(f"fold(unfold) err {(ident - cf).abs().max():.2e}")
st = F.unfold(content_img, kernel_size=4, stride=4)
print("non-overlapping", tuple(st.shape), torch.equal(F.fold(st, (H, W), 4, stride=4),
                                                      content_img))

# ---- texture synthesis: sliced Wasserstein loss with gradients through sort -----------
def sliced_wasserstein(fa, fb, n_proj=8, gen=None):
    c = fa.shape[1]
    proj = F.normalize(torch.randn(c, n_proj, generator=gen), dim=0)
    pa = torch.einsum("bchw,cp->bp" + "hw", fa, proj).flatten(2)
    pb = torch.einsum("bchw,cp->bphw", fb, proj).flatten(2)
    sa, _ = torch.sort(pa, dim=-1)
    sb, _ = torch.sort(pb, dim=-1)
    if sb.shape[-1] != sa.shape[-1]:
        sb = F.interpolate(sb, size=sa.shape[-1], mode="nearest")
    return F.mse_loss(sa, sb)


gen = torch.Generator().manual_seed(7)
tex = torch.rand(1, 3, 16, 16, generator=gen).requires_grad_(True)
target_feats = [f.detach() for f in features_by_slicing(style_img)[:3]]
opt = torch.optim.Adam([tex], lr=0.05)
for step in range(8):
    opt.zero_grad()
    fs = features_by_slicing(tex)[:3]
    g = torch.Generator().manual_seed(step)
    l_sw = sum(sliced_wasserstein(a, b, gen=g) for a, b in zip(fs, target_feats))
    l_sw.backward()
    opt.step()
    with torch.no_grad():
        tex.data.clamp_(0, 1)
    if step % 4 == 0:
        print(f"sw step {step} loss {l_sw.item():.5f} grad {tex.grad.abs().sum():.4f}")
print("texture", fmt(tex, 4), "grad_fn", type(l_sw.grad_fn).__name__)
q = torch.quantile(tex.flatten(1), torch.tensor([0.25, 0.5, 0.75]), dim=1, keepdim=True)
print("texture quantiles", tuple(q.shape), fmt(q, 6))
ranks = torch.argsort(torch.argsort(tex[0, 0].flatten(), stable=True))
print("ranks", ranks[:6].tolist(), "bucketize", torch.bucketize(tex[0, 0, 0, :6],
                                                                  torch.linspace(0, 1, 5)).tolist())
# histogram matching by quantile interpolation (searchsorted on the target's sorted values)
src_vals = content_img[0, 0].flatten()
tgt_sorted = torch.sort(style_img[0, 2].flatten()).values
u = (torch.argsort(torch.argsort(src_vals)).float() + 0.5) / src_vals.numel()
pos = u * (tgt_sorted.numel() - 1)
lo = pos.floor().long()
hi = torch.clamp(lo + 1, max=tgt_sorted.numel() - 1)
frac = pos - lo
interp = torch.lerp(tgt_sorted[lo], tgt_sorted[hi], frac)
print("interp match", fmt(interp, 4), f"mean {interp.mean():.5f}")
print("searchsorted", torch.searchsorted(tgt_sorted, torch.tensor([0.2, 0.5, 0.86])).tolist())
print("scatter_ add", torch.zeros(4).scatter_(0, torch.tensor([0, 1, 1, 3]), torch.ones(4),
                                             reduce="add").tolist())
print("scatter_add_", torch.zeros(5).scatter_add_(0, torch.bucketize(src_vals[:40],
                                                                      torch.linspace(0, 1, 4)),
                                                  torch.ones(40)).tolist())

# ---- more resampling and padding layers -----------------------------------------------
print(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True))
print(nn.Upsample(scale_factor=2, mode="nearest")(checker[:4, :4].view(1, 1, 4, 4)).shape)
print("CircularPad2d", nn.CircularPad2d((1, 0, 0, 1))(t)[0, 0].tolist())
print(nn.ReflectionPad2d((1, 2, 0, 1)), nn.ZeroPad2d(1), nn.ReplicationPad2d(2))
blur = F.avg_pool2d(F.pad(style_img, (1, 1, 1, 1), mode="replicate"), 3, stride=1)
print("blur", tuple(blur.shape), fmt(blur, 4))
lap = style_img - F.interpolate(F.avg_pool2d(style_img, 2), scale_factor=2, mode="nearest")
print("laplacian band", f"{lap.abs().mean():.5f}", f"{lap.pow(2).sum():.4f}")

# ---- typical mistakes ----------------------------------------------------------------
x = content_img.clone().requires_grad_(True)
opt = torch.optim.LBFGS([x])
attempt("lbfgs without closure", lambda: opt.step())
attempt("interpolate size+scale",
        lambda: F.interpolate(content_img, size=(8, 8), scale_factor=0.5))
attempt("interpolate no size", lambda: F.interpolate(content_img, mode="bilinear"))
attempt("reflect pad too big", lambda: F.pad(torch.zeros(1, 1, 3, 3), (3, 3, 3, 3), mode="reflect"))
attempt("ReflectionPad2d too big", lambda: nn.ReflectionPad2d(4)(torch.zeros(1, 1, 4, 4)))
attempt("leaf in-place", lambda: x.clamp_(0, 1))
attempt("leaf add_", lambda: x.add_(1))
flat = cf[0].view(8, -1)
attempt("gram 2-d bmm", lambda: torch.bmm(flat, flat.t()))
attempt("gram 3-d mm", lambda: torch.mm(cf[0], cf[0].transpose(1, 2)))
attempt("gram 3-d .t()", lambda: cf[0].t())
attempt("gram 3-d bmm", lambda: torch.bmm(cf[0], cf[0].transpose(0, 1)))
attempt("gram bmm wrong", lambda: torch.bmm(cf.flatten(2), cf.flatten(2)))
attempt("view non-contiguous", lambda: cf.transpose(2, 3).view(1, 8, -1))
attempt("bicubic 3-d", lambda: F.interpolate(torch.zeros(1, 3, 8), size=4, mode="bicubic"))
attempt("align_corners nearest",
        lambda: F.interpolate(content_img, size=(8, 8), mode="nearest", align_corners=True))
attempt("antialias nearest",
        lambda: F.interpolate(content_img, size=(8, 8), mode="nearest", antialias=True))
attempt("fold wrong blocks", lambda: F.fold(torch.zeros(1, 9, 10), (4, 4), 3))
attempt("histc int", lambda: torch.histc(torch.arange(5), bins=3))
attempt("quantile out of range", lambda: torch.quantile(ramp, 1.5))
attempt("mse shape mismatch", lambda: F.mse_loss(torch.zeros(2, 3), torch.zeros(3)))
attempt("rfft2 backward no grad", lambda: torch.fft.irfft2(spec_style).sum().backward())
attempt("frozen vgg backward", lambda: vgg(content_img).sum().backward())
with torch.no_grad():
    print("no_grad clamp ok", x.clamp_(0, 1).requires_grad, x.grad_fn)
print("done")
