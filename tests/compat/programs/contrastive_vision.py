"""Vision training tricks on tiny random images: SimCLR-style contrastive pretraining with
flip/roll/crop/interpolate augmentations and the NT-Xent loss, then a supervised head trained
with mixup (Beta-distributed weights) and cutmix, and knowledge distillation into a small
ShuffleNet-like student (grouped convs, channel shuffle) with a temperature-scaled KL loss.
Also exercises ConvTranspose2d, AdaptiveMaxPool2d indices, unfold/fold, PixelUnshuffle,
InstanceNorm2d, LocalResponseNorm, top-k accuracy and a bucketize/histc confidence histogram."""

import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta

torch.manual_seed(0)

# ---------------------------------------------------------------- data: 4 classes of blobs
n, c, side, n_classes = 64, 3, 12, 4
labels = torch.arange(n) % n_classes
coords = torch.linspace(-1, 1, side)
yy, xx = torch.meshgrid(coords, coords, indexing="ij")
centers = torch.tensor([[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]])
cy, cx = centers[labels, 0].view(n, 1, 1), centers[labels, 1].view(n, 1, 1)
blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 0.15)
tint = torch.rand(n, c, 1, 1) * 0.5 + 0.5
images = blob.unsqueeze(1) * tint + 0.1 * torch.randn(n, c, side, side)
print("images", images.shape, images.dtype, f"{images.mean().item():.4f} {images.std().item():.4f}")
print("labels", torch.bincount(labels).tolist())


# ---------------------------------------------------------------- augmentations
def augment(x, gen):
    """Two views of a batch: flips, rolls, a random crop resized back, brightness jitter."""
    b = x.shape[0]
    flip = torch.rand(b, generator=gen) < 0.5
    x = torch.where(flip.view(b, 1, 1, 1), torch.flip(x, dims=[3]), x)
    shift = int(torch.randint(-2, 3, (1,), generator=gen))
    x = torch.roll(x, shifts=(shift, -shift), dims=(2, 3))
    top, left = torch.randint(0, 4, (2,), generator=gen).tolist()
    crop = x[:, :, top : top + 8, left : left + 8]
    mode = ["bilinear", "bicubic", "nearest-exact"][int(torch.randint(0, 3, (1,), generator=gen))]
    kwargs = {} if mode == "nearest-exact" else {"align_corners": bool(shift % 2)}
    x = F.interpolate(crop, size=(side, side), mode=mode, **kwargs)
    jitter = 1 + 0.2 * (torch.rand(b, 1, 1, 1, generator=gen) - 0.5)
    return x * jitter, mode


gen = torch.Generator().manual_seed(123)
v1, m1 = augment(images[:4], gen)
v2, m2 = augment(images[:4], gen)
print("views", v1.shape, m1, m2, f"{v1.sum().item():.3f} {v2.sum().item():.3f}")
probe = torch.arange(16.0).view(1, 1, 4, 4)
for mode, align in (("bilinear", True), ("bilinear", False), ("bicubic", True), ("bicubic", False)):
    out = F.interpolate(probe, scale_factor=1.5, mode=mode, align_corners=align)
    print(f"{mode:8s} align={align!s:5s}", out.shape, [round(v, 4) for v in out[0, 0, 1].tolist()])
print("nearest-exact", F.interpolate(probe, size=(3, 5), mode="nearest-exact")[0, 0])
print("nearest", F.interpolate(probe, size=(3, 5), mode="nearest")[0, 0])
print("antialias", F.interpolate(probe, size=(2, 3), mode="bilinear", antialias=True)[0, 0])
print(
    "antialias bicubic",
    F.interpolate(probe, size=(3, 2), mode="bicubic", antialias=True, align_corners=False)[0, 0],
)
print(
    "recompute",
    F.interpolate(probe, scale_factor=0.7, mode="bilinear", recompute_scale_factor=True).shape,
)
print(
    nn.Upsample(scale_factor=2, mode="nearest"),
    nn.Upsample(size=(5, 5), mode="bilinear", align_corners=True),
)


# ---------------------------------------------------------------- encoder
def channel_shuffle(x, groups):
    b, ch, h, w = x.shape
    x = x.view(b, groups, ch // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleBlock(nn.Module):
    def __init__(self, ch, groups=2):
        super().__init__()
        self.groups = groups
        self.conv1 = nn.Conv2d(ch, ch, 1, groups=groups, bias=False)
        self.dw = nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False)
        self.norm = nn.InstanceNorm2d(ch, affine=True, track_running_stats=True)
        self.conv2 = nn.Conv2d(ch, ch, 1, groups=groups)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = channel_shuffle(h, self.groups)
        h = self.norm(self.dw(h))
        return F.relu(x + self.conv2(h))


class Encoder(nn.Module):
    def __init__(self, width=8, dim=16):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.LocalResponseNorm(size=3, alpha=1e-3, beta=0.75, k=1.0),
        )
        self.block = ShuffleBlock(width, groups=2)
        self.pool = nn.AdaptiveMaxPool2d((2, 2), return_indices=True)
        self.proj = nn.Sequential(nn.Linear(width * 4, 32), nn.ReLU(), nn.Linear(32, dim))

    def features(self, x):
        h = self.block(self.stem(x))
        pooled, idx = self.pool(h)
        return pooled.flatten(1), idx

    def forward(self, x):
        f, _ = self.features(x)
        return self.proj(f)


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    b = z1.shape[0]
    mask = torch.eye(2 * b, dtype=torch.bool)
    sim = sim.masked_fill(mask, float("-inf"))
    targets = torch.cat([torch.arange(b, 2 * b), torch.arange(0, b)])
    return F.cross_entropy(sim, targets)


encoder = Encoder()
print(encoder)
print(
    "params",
    sum(p.numel() for p in encoder.parameters()),
    [k for k in encoder.state_dict() if "norm" in k],
)
_, idx = encoder.features(images[:2])
print("pool indices", idx.shape, idx.dtype, idx[0, :2].tolist())

z1, z2 = torch.randn(4, 16), torch.randn(4, 16)
print("cos", F.cosine_similarity(z1, z2, dim=1, eps=1e-8))
print("cos pairwise", F.cosine_similarity(z1.unsqueeze(1), z2.unsqueeze(0), dim=-1)[0])
print("nt-xent random", f"{nt_xent(z1, z2).item():.4f}", f"same {nt_xent(z1, z1).item():.4f}")

opt = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4, nesterov=True)
aug_gen = torch.Generator().manual_seed(7)
for step in range(12):
    batch = images[(step * 16) % n : (step * 16) % n + 16]
    x1, _ = augment(batch, aug_gen)
    x2, _ = augment(batch, aug_gen)
    loss = nt_xent(encoder(x1), encoder(x2), temperature=0.2)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 4 == 3:
        print(f"simclr step {step:2d} loss {loss.item():.4f}")
print(
    "running mean",
    encoder.block.norm.running_mean.shape,
    f"{encoder.block.norm.running_var.mean().item():.4f}",
    encoder.block.norm.num_batches_tracked.item(),
)

# state_dict round trip into a fresh encoder
clone = Encoder()
result = clone.load_state_dict(encoder.state_dict())
print(result)
clone.eval()
encoder.eval()
with torch.no_grad():
    same = torch.equal(clone(images[:8]), encoder(images[:8]))
print("round trip equal", same)
encoder.train()

# ---------------------------------------------------------------- supervised: mixup + cutmix
head = nn.Linear(32, n_classes)
beta = Beta(torch.tensor(0.4), torch.tensor(0.4))
print(beta, f"mean {beta.mean.item():.4f} var {beta.variance.item():.4f}")
opt2 = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=3e-3)


def logits_of(x):
    f, _ = encoder.features(x)
    return head(f)


for step in range(16):
    perm = torch.randperm(n)[:16]
    x, y = images[perm], labels[perm]
    shuffle = torch.randperm(16)
    lam = beta.sample().item()
    if step % 2 == 0:  # mixup
        x_mix = lam * x + (1 - lam) * x[shuffle]
    else:  # cutmix: paste a box from the shuffled batch
        cut = int(side * (1 - lam) ** 0.5)
        cy0 = int(torch.randint(0, side - cut + 1, (1,)))
        cx0 = int(torch.randint(0, side - cut + 1, (1,)))
        x_mix = x.clone()
        x_mix[:, :, cy0 : cy0 + cut, cx0 : cx0 + cut] = x[
            shuffle, :, cy0 : cy0 + cut, cx0 : cx0 + cut
        ]
        lam = 1 - cut * cut / (side * side)
    out = logits_of(x_mix)
    loss = lam * F.cross_entropy(out, y) + (1 - lam) * F.cross_entropy(
        out, y[shuffle], label_smoothing=0.1
    )
    opt2.zero_grad()
    loss.backward()
    opt2.step()
    if step % 4 == 3:
        print(f"mix step {step:2d} lam {lam:.4f} loss {loss.item():.4f}")

# soft targets: one-hot mixing as probabilities
soft = torch.lerp(
    F.one_hot(labels[:4], n_classes).float(), F.one_hot(labels[:4].flip(0), n_classes).float(), 0.3
)
print("soft targets", soft)
print("soft ce", f"{F.cross_entropy(torch.zeros(4, n_classes), soft).item():.4f}")

# ---------------------------------------------------------------- evaluation
encoder.eval()
with torch.no_grad():
    teacher_logits = logits_of(images)
top5 = torch.topk(teacher_logits, k=3, dim=1, largest=True, sorted=True)
print("topk", top5.values.shape, top5.indices[:4].tolist())
correct = top5.indices.eq(labels.view(-1, 1))
print(
    "top-1",
    correct[:, :1].any(1).float().mean().item(),
    "top-3",
    correct.any(1).float().mean().item(),
)
conf = F.softmax(teacher_logits, dim=1).max(1).values
edges = torch.tensor([0.25, 0.5, 0.75, 0.9])
bins = torch.bucketize(conf, edges)
print(
    "buckets",
    torch.bincount(bins, minlength=5).tolist(),
    torch.bucketize(torch.tensor([0.5, 0.9]), edges, right=True).tolist(),
)
print("histc", torch.histc(conf, bins=5, min=0.0, max=1.0).tolist())
print("searchsorted", torch.searchsorted(edges, torch.tensor([0.1, 0.5, 0.95]), side="right"))

# ---------------------------------------------------------------- distillation
student = nn.Sequential(
    nn.Conv2d(3, 4, 3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(4, 8, 3, padding=1, groups=4),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, n_classes),
)
print(student)
opt3 = torch.optim.AdamW(student.parameters(), lr=1e-2, weight_decay=0.01)
T = 3.0
for step in range(20):
    s_logits = student(images)
    log_p_s = F.log_softmax(s_logits / T, dim=1)
    if step % 2 == 0:
        kd = F.kl_div(log_p_s, F.softmax(teacher_logits / T, dim=1), reduction="batchmean")
    else:
        kd = F.kl_div(
            log_p_s,
            F.log_softmax(teacher_logits / T, dim=1),
            reduction="batchmean",
            log_target=True,
        )
    loss = kd * T * T + 0.5 * F.cross_entropy(s_logits, labels)
    opt3.zero_grad()
    loss.backward()
    opt3.step()
    if step % 5 == 4:
        print(f"kd step {step:2d} kd {kd.item():.5f} loss {loss.item():.4f}")
p, q = F.log_softmax(torch.randn(3, 4), 1), F.log_softmax(torch.randn(3, 4), 1)
for red in ("none", "sum", "mean", "batchmean"):
    v = F.kl_div(p, q, reduction=red, log_target=True)
    print("kl", red, v.shape, f"{v.sum().item():.5f}")
print("KLDivLoss", nn.KLDivLoss(reduction="batchmean", log_target=True))
with torch.no_grad():
    acc = (student(images).argmax(1) == labels).float().mean().item()
print("student acc", f"{acc:.4f}")

# ---------------------------------------------------------------- decoder-ish layers
up = nn.ConvTranspose2d(8, 4, kernel_size=3, stride=2, padding=1, output_padding=1, groups=2)
print(up, up.weight.shape)
feat = torch.randn(2, 8, 5, 5)
print("convT", up(feat).shape, f"{up(feat).abs().mean().item():.4f}")
print("convT output_size", up(feat, output_size=[9, 9]).shape)
up2 = nn.ConvTranspose2d(4, 2, (2, 3), stride=(2, 1), dilation=(1, 2), bias=False)
print(up2, up2(torch.ones(1, 4, 3, 3)).shape)
unshuffle = nn.PixelUnshuffle(2)
shuffle_px = nn.PixelShuffle(2)
t = torch.arange(32.0).view(1, 2, 4, 4)
print(
    unshuffle,
    unshuffle(t).shape,
    unshuffle(t)[0, :4, 0, 0].tolist(),
    torch.equal(shuffle_px(unshuffle(t)), t),
)
patches = F.unfold(t, kernel_size=2, stride=2)
print("unfold", patches.shape, patches[0, :, 0].tolist())
back = F.fold(patches, output_size=(4, 4), kernel_size=2, stride=2)
print("fold", back.shape, torch.equal(back, t))
ov = F.fold(F.unfold(torch.ones(1, 1, 4, 4), 3, padding=1), (4, 4), 3, padding=1)
print("overlap counts", ov[0, 0])
print(
    nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2),
    nn.Fold(output_size=(4, 4), kernel_size=2),
)
inorm = nn.InstanceNorm2d(2, momentum=0.2, eps=1e-3)
print(inorm, inorm(t).mean(dim=(2, 3)).abs().max().item() < 1e-5)
inorm_t = nn.InstanceNorm2d(2, affine=True, track_running_stats=True)
inorm_t(t)
print(inorm_t, inorm_t.running_mean, inorm_t.running_var)
inorm_t.eval()
print("eval instnorm", inorm_t(t)[0, :, 0, 0])
lrn = nn.LocalResponseNorm(2)
print(lrn, lrn(t)[0, :, 0, :2])
amp = nn.AdaptiveMaxPool2d(3, return_indices=True)
vals, inds = amp(torch.arange(25.0).view(1, 1, 5, 5))
print(amp, vals[0, 0].tolist(), inds[0, 0].tolist())
print("unpool", F.max_unpool2d(*nn.MaxPool2d(2, return_indices=True)(t), 2).shape)
print("shuffle idx", channel_shuffle(torch.arange(8.0).view(1, 8, 1, 1), 2).flatten().tolist())

# ---------------------------------------------------------------- more augmentation options
x4 = torch.arange(2 * 3 * 4 * 4, dtype=torch.float32).view(2, 3, 4, 4)
print(
    "flip hw",
    torch.flip(x4, [2, 3])[0, 0, 0].tolist(),
    torch.fliplr(x4[0, 0])[0].tolist(),
    torch.flipud(x4[0, 0])[0].tolist(),
    torch.rot90(x4, 1, [2, 3])[0, 0, 0].tolist(),
)
print(
    "roll flat",
    torch.roll(torch.arange(6).view(2, 3), 2).tolist(),
    torch.roll(torch.arange(6).view(2, 3), -1, 1).tolist(),
)
print("area", F.interpolate(x4, size=(2, 3), mode="area")[0, 0])
print("adaptive avg", F.adaptive_avg_pool2d(x4, (2, 3))[0, 0])
print("linear", F.interpolate(torch.arange(5.0).view(1, 1, 5), scale_factor=1.6, mode="linear"))
print(
    "trilinear",
    F.interpolate(
        torch.arange(8.0).view(1, 1, 2, 2, 2), size=(3, 3, 3), mode="trilinear", align_corners=True
    )[0, 0, 1],
)
print("nearest-exact down", F.interpolate(x4, scale_factor=0.5, mode="nearest-exact")[0, 0])
print("nearest 1.5", F.interpolate(x4[:, :1], scale_factor=1.5, mode="nearest")[0, 0, 0])
print("antialias up", F.interpolate(probe, size=(6, 6), mode="bilinear", antialias=True)[0, 0, 0])
print(
    "antialias bicubic down",
    F.interpolate(torch.arange(36.0).view(1, 1, 6, 6), size=(4, 4), mode="bicubic", antialias=True)[
        0, 0, 0
    ],
)
print(
    "bicubic clamp?",
    F.interpolate(
        torch.tensor([[[[0.0, 1.0], [1.0, 0.0]]]]), size=(4, 4), mode="bicubic", align_corners=True
    )[0, 0, 1],
)
print(
    "uint8",
    F.interpolate(
        torch.arange(16, dtype=torch.uint8).view(1, 1, 4, 4) * 10, size=(3, 3), mode="bilinear"
    )[0, 0],
)
g2 = torch.Generator().manual_seed(5)
state = g2.get_state()
a = torch.empty(3).uniform_(0.08, 1.0, generator=g2)
g2.set_state(state)
b = torch.empty(3).uniform_(0.08, 1.0, generator=g2)
print("crop scales", a, torch.equal(a, b), g2.initial_seed())
print(
    "randperm gen",
    torch.randperm(8, generator=g2).tolist(),
    torch.randint(0, 10, (4,), generator=g2).tolist(),
    torch.rand(2, generator=g2),
)
xg = x4.clone().requires_grad_()
for mode in ("bilinear", "bicubic", "nearest-exact", "area"):
    xg.grad = None
    F.interpolate(xg, size=(7, 5), mode=mode).pow(2).sum().backward()
    print(
        "grad",
        mode,
        f"{xg.grad.sum().item():.3f}",
        [round(v, 3) for v in xg.grad[0, 0, 0].tolist()],
    )

# ---------------------------------------------------------------- losses and similarity extras
e1, e2 = torch.randn(5, 6), torch.randn(5, 6)
print("normalize p1", F.normalize(e1, p=1.0, dim=0)[:, 0])
print("normalize eps", F.normalize(torch.zeros(2, 3), dim=1), F.normalize(e1, dim=-1).norm(dim=1))
print("cos bcast", F.cosine_similarity(e1, e2[:1]), F.cosine_similarity(e1[0], e2[0], dim=0))
print(
    "pairwise dist",
    F.pairwise_distance(e1, e2, p=2.0, eps=1e-6, keepdim=True).shape,
    torch.cdist(e1, e2).diagonal(),
)
print("CosineSimilarity", nn.CosineSimilarity(dim=0, eps=1e-6), nn.PairwiseDistance(p=1))
logits = torch.randn(6, 4)
tgt = torch.tensor([0, 1, -100, 3, 2, 1])
w = torch.tensor([1.0, 2.0, 0.5, 1.0])
print(
    "ce ignore",
    F.cross_entropy(logits, tgt, ignore_index=-100),
    F.cross_entropy(logits, tgt, weight=w, reduction="sum"),
    F.cross_entropy(logits, tgt, weight=w, label_smoothing=0.2),
)
print("ce none", F.cross_entropy(logits, tgt, reduction="none", label_smoothing=0.1))
probs_t = F.softmax(torch.randn(6, 4), 1)
print("ce probs", F.cross_entropy(logits, probs_t, label_smoothing=0.1, weight=w))
sim = torch.randn(4, 4).masked_fill(torch.eye(4, dtype=torch.bool), float("-inf"))
print("masked", sim.softmax(1).diagonal(), torch.logsumexp(sim, 1), sim.max(1))
print("CrossEntropyLoss", nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.05))
bs = Beta(torch.tensor([0.5, 2.0]), torch.tensor([0.5, 3.0]))
s2 = bs.rsample((3,))
print(
    "beta",
    bs,
    bs.batch_shape,
    s2.shape,
    bs.log_prob(torch.tensor([0.3, 0.6])),
    bs.entropy(),
    bs.concentration1,
    bs.concentration0,
)
print("beta sample", Beta(2.0, 5.0).sample((4,)))
lam_g = torch.distributions.Beta(1.0, 1.0).sample()
print("beta float", lam_g.shape, lam_g.dtype)
print("kl default", F.kl_div(p, q.exp()).item() > 0, nn.KLDivLoss()(p, q.exp()).shape)
print(
    "kl grad",
    torch.autograd.grad(F.kl_div(p.requires_grad_(), q, reduction="batchmean", log_target=True), p)[
        0
    ][0],
)

# ---------------------------------------------------------------- layer extras
ct1 = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
ct3 = nn.ConvTranspose3d(2, 2, 2, stride=2, groups=2)
print(ct1, ct1(torch.randn(1, 4, 5)).shape, ct3, ct3(torch.randn(1, 2, 2, 2, 2)).shape)
print("convT unbatched", ct1(torch.randn(4, 5)).shape)
sd = up.state_dict()
print("convT sd", list(sd), sd["weight"].shape)
up_b = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
up_b.load_state_dict(sd)
print("convT reload", torch.equal(up_b(feat), up(feat)))
fg = feat.clone().requires_grad_()
up(fg).sum().backward()
print(
    "convT grads",
    f"{fg.grad.abs().sum().item():.4f}",
    up.weight.grad.shape,
    f"{up.bias.grad.sum().item():.4f}",
)
amp1 = nn.AdaptiveMaxPool1d(2, return_indices=True)
print(amp1, amp1(torch.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]])))
amp_n = nn.AdaptiveMaxPool2d((None, 2))
print(amp_n, amp_n(x4).shape, F.adaptive_max_pool2d(x4, 1, return_indices=True)[1].flatten()[:3])
print("unfold dil", F.unfold(x4, kernel_size=2, dilation=2, padding=1, stride=(1, 2)).shape)
fold_p = F.fold(F.unfold(x4, 3, padding=1, stride=1), (4, 4), 3, padding=1, stride=1)
print("fold/unfold ratio", (fold_p / x4.clamp(min=1))[0, 1, 0])
print("unfold 3d", F.unfold(x4[0], 2).shape)
un5 = nn.PixelUnshuffle(2)(torch.arange(64.0).view(2, 2, 1, 4, 4))
print("unshuffle 5d", un5.shape, F.pixel_unshuffle(x4, 2).shape, F.pixel_shuffle(un5, 2).shape)
in1 = nn.InstanceNorm1d(3, affine=True)
print(in1, in1(torch.arange(12.0).view(1, 3, 4))[0, 0])
print("unbatched in", nn.InstanceNorm2d(3)(x4[0]).shape)
print(
    "F.instance_norm",
    F.instance_norm(
        x4, running_mean=torch.zeros(3), running_var=torch.ones(3), use_input_stats=False, eps=1e-5
    )[0, 0, 0],
)
sd_in = inorm_t.state_dict()
plain = nn.InstanceNorm2d(2)
res = plain.load_state_dict(sd_in, strict=False)
print("instnorm strict=False", res.missing_keys, res.unexpected_keys)
print("lrn 3d", nn.LocalResponseNorm(3, k=2.0)(torch.arange(12.0).view(1, 3, 4))[0, :, 0])
print("lrn 5d", F.local_response_norm(torch.ones(1, 4, 2, 2, 2), 2).flatten()[:4])
vals_k, idx_k = torch.topk(teacher_logits[:3], 2, largest=False)
print("topk small", idx_k.tolist(), torch.topk(torch.tensor([3.0, 1.0, 3.0, 2.0]), 2))
print("kthvalue", torch.kthvalue(torch.tensor([3.0, 1.0, 4.0, 1.5]), 2))
print(
    "bucketize",
    torch.bucketize(torch.tensor([[0.2, 0.5], [0.75, 1.0]]), edges, out_int32=True),
    torch.bucketize(0.5, edges),
)
print(
    "histc auto",
    torch.histc(torch.tensor([1.0, 2.0, 1.0, 4.0]), bins=3),
    torch.histc(torch.tensor([2.0, 2.0]), bins=2),
    torch.histc(conf.double(), 4, 0.2, 0.6),
)
hist = torch.histogram(conf, bins=4, range=(0.0, 1.0))
print("histogram", hist.hist, hist.bin_edges)
print("clamped conf", torch.clamp(conf, 0.3, 0.7).mean().item() > 0, conf.dtype)

# ---------------------------------------------------------------- MoCo: momentum encoder + queue

key_enc = copy.deepcopy(encoder)
for param in key_enc.parameters():
    param.requires_grad = False
queue = F.normalize(torch.randn(16, 32), dim=1)
print("queue", queue.shape, key_enc.proj[0].weight.requires_grad)
opt_q = torch.optim.SGD(encoder.parameters(), lr=0.03, momentum=0.9)
encoder.train()
moco_gen = torch.Generator().manual_seed(11)
for step in range(6):
    batch = images[step * 8 : (step + 1) * 8]
    xq, _ = augment(batch, moco_gen)
    xk, _ = augment(batch, moco_gen)
    q_feat = F.normalize(encoder.features(xq)[0], dim=1)
    with torch.no_grad():
        k_feat = F.normalize(key_enc.features(xk)[0], dim=1)
    l_pos = torch.einsum("nc,nc->n", q_feat, k_feat).unsqueeze(-1)
    l_neg = torch.einsum("nc,kc->nk", q_feat, queue.clone().detach())
    logits_m = torch.cat([l_pos, l_neg], dim=1) / 0.07
    loss = F.cross_entropy(logits_m, torch.zeros(logits_m.shape[0], dtype=torch.long))
    opt_q.zero_grad()
    loss.backward()
    opt_q.step()
    with torch.no_grad():
        for pk, pq in zip(key_enc.parameters(), encoder.parameters()):
            pk.data.mul_(0.99).add_(pq.data, alpha=0.01)
        queue = torch.cat([k_feat, queue])[:16]
    # (three and two decimals: torch's own fourth decimal moves with its thread count,
    # 5.1774 on one thread and 5.1789 on two; the 28 training steps before amplify the
    # last bit of the blobs' float32 exp)
    if step % 2 == 1:
        print(
            f"moco step {step} loss {loss.item():.3f} logits {tuple(logits_m.shape)}",
            f"pos {l_pos.mean().item():.3f}",
        )
drift = sum((a - b).abs().sum() for a, b in zip(key_enc.parameters(), encoder.parameters()))
print("key drift", f"{drift.item():.2f}", [round(v, 4) for v in queue.norm(dim=1)[:3].tolist()])

buf = io.BytesIO()
torch.save({"encoder": encoder.state_dict(), "queue": queue, "step": 6}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print(
    "ckpt",
    sorted(ckpt),
    ckpt["step"],
    torch.equal(ckpt["queue"], queue),
    type(ckpt["encoder"]).__name__,
    len(ckpt["encoder"]),
)
try:
    head.load_state_dict({"weight": torch.zeros(4, 32)})
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    head.load_state_dict({"weight": torch.zeros(3, 32), "bias": torch.zeros(4)})
except RuntimeError as e:
    print("RuntimeError:", e)

# grad_fn names a debugging session would print
xr = torch.randn(1, 4, 4, 4, requires_grad=True)
for name, out in [
    ("bilinear", F.interpolate(xr, scale_factor=2, mode="bilinear")),
    ("bicubic", F.interpolate(xr, scale_factor=2, mode="bicubic")),
    ("nearest", F.interpolate(xr, scale_factor=2)),
    ("nearest-exact", F.interpolate(xr, scale_factor=2, mode="nearest-exact")),
    ("unfold", F.unfold(xr, 2)),
    ("fold", F.fold(F.unfold(xr, 2), 4, 2)),
    ("unshuffle", F.pixel_unshuffle(xr, 2)),
    ("flip", torch.flip(xr, [3])),
    ("roll", torch.roll(xr, 1, 2)),
    ("amax", F.adaptive_max_pool2d(xr, 2)),
    ("lrn", F.local_response_norm(xr, 2)),
    ("inorm", F.instance_norm(xr)),
    ("convT", F.conv_transpose2d(xr, torch.ones(4, 1, 2, 2), groups=4)),
    ("normalize", F.normalize(xr, dim=1)),
    ("cos", F.cosine_similarity(xr, xr.flip(1))),
    ("kl", F.kl_div(xr, xr, log_target=True, reduction="batchmean")),
]:
    print(f"{name:13s}", type(out.grad_fn).__name__, tuple(out.shape))

# ------------------------------------------------------------ per-sample crops, losses as printed
torch.manual_seed(1)
b = 4
rows = torch.randint(0, 5, (b,)).view(b, 1) + torch.arange(8)
cols = torch.randint(0, 5, (b,)).view(b, 1) + torch.arange(8)
crops = images[:b][torch.arange(b)[:, None, None], :, rows[:, :, None], cols[:, None, :]]
print(
    "adv-index crops",
    crops.shape,
    torch.equal(crops[1, :, :, 0], images[1, 0][rows[1]][:, cols[1]]),
)
crops2 = torch.stack(
    [
        images[i, :, r0 : r0 + 8, c0 : c0 + 8]
        for i, (r0, c0) in enumerate(zip(rows[:, 0].tolist(), cols[:, 0].tolist()))
    ]
)
print("crop agree", torch.equal(crops.permute(0, 3, 1, 2), crops2))
lam_b = Beta(0.2, 0.2).sample((b,)).view(b, 1, 1, 1)
print("per-sample lam", lam_b.flatten(), lam_b.shape)
zz = torch.randn(4, 8, requires_grad=True)
print(nt_xent(zz, zz.flip(0)))
print(F.kl_div(F.log_softmax(zz, 1), F.softmax(zz.flip(0), 1), reduction="batchmean"))
print(
    F.kl_div(F.log_softmax(zz, 1), F.log_softmax(zz.flip(0), 1), reduction="sum", log_target=True)
)
print(F.cosine_similarity(zz[:2], zz[2:]))
print(F.normalize(zz[:1, :4], dim=1))
seg_logits = torch.randn(2, 3, 4, 4)
seg_t = torch.randint(0, 3, (2, 4, 4))
seg_t[0, 0, 0] = -100
print(
    "seg ce",
    F.cross_entropy(seg_logits, seg_t),
    F.cross_entropy(seg_logits, seg_t, reduction="none").shape,
)
print("histc range", torch.histc(torch.tensor([-1.0, 0.1, 0.5, 2.0, 0.99]), bins=2, min=0, max=1))
srt = torch.tensor([4.0, 1.0, 3.0, 2.0])
print(
    "searchsorted sorter",
    torch.searchsorted(srt, torch.tensor([2.5]), sorter=srt.argsort()),
    torch.searchsorted(torch.tensor([1, 3, 5]), 3, right=True),
)

# ---------------------------------------------------------------- corner cases real code hits
sq = torch.arange(16.0).view(1, 1, 4, 4)
for rsf in (None, False, True):
    o = F.interpolate(sq, scale_factor=0.7, mode="bilinear", recompute_scale_factor=rsf)
    o2 = F.interpolate(sq, scale_factor=1.7, mode="nearest", recompute_scale_factor=rsf)
    print(
        "rsf", rsf, [round(v, 4) for v in o.flatten().tolist()], o2.shape, o2[0, 0, :, 0].tolist()
    )
print(
    "antialias sf",
    F.interpolate(
        torch.arange(64.0).view(1, 1, 8, 8),
        scale_factor=0.375,
        mode="bilinear",
        antialias=True,
        align_corners=True,
    )[0, 0, 0],
)
print(
    "nearest 3d/5d",
    F.interpolate(torch.arange(4.0).view(1, 1, 4), size=7, mode="nearest"),
    F.interpolate(
        torch.arange(8.0).view(1, 1, 2, 2, 2), scale_factor=(1, 2, 1.5), mode="nearest-exact"
    ).shape,
)
print(nn.UpsamplingBilinear2d(scale_factor=2), nn.UpsamplingNearest2d(size=3))
print("upsamplingbilinear", nn.UpsamplingBilinear2d(size=(3, 3))(sq)[0, 0, 1])
print("bicubic border", F.interpolate(sq, size=(4, 7), mode="bicubic")[0, 0, 0])
print(
    "same pad",
    nn.Conv2d(4, 8, 3, padding="same", dilation=2, groups=4, padding_mode="reflect"),
    nn.Conv2d(4, 8, 3, padding="same", dilation=2, groups=4)(torch.randn(1, 4, 5, 6)).shape,
)
print(nn.ConvTranspose2d(2, 2, 3, padding=(0, 1), output_padding=(1, 0), stride=2))
amp7 = torch.arange(49.0).view(1, 1, 7, 7).requires_grad_()
out7, ind7 = F.adaptive_max_pool2d(amp7, 3, return_indices=True)
out7.sum().backward()
print(
    "amp overlap", ind7.flatten().tolist(), amp7.grad.sum().item(), amp7.grad[0, 0].nonzero().shape
)
mp_out, mp_idx = F.max_pool2d(sq, 2, return_indices=True)
print(
    "unpool size",
    F.max_unpool2d(mp_out, mp_idx, 2, output_size=(5, 5)).shape,
    nn.MaxUnpool2d(2, stride=2),
)
print(
    "lrn big", nn.LocalResponseNorm(5, alpha=1.0, beta=0.5, k=1.0)(torch.ones(1, 2, 1, 1)).flatten()
)
print(
    "topk dim0",
    torch.topk(torch.tensor([[1.0, 5.0], [3.0, 2.0], [0.0, 4.0]]), 2, dim=0, largest=False),
)
zero_t = torch.tensor([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
print(
    "kl zeros",
    F.kl_div(torch.log(torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])), zero_t, reduction="none"),
)
print(
    "kl -inf log_target",
    F.kl_div(
        torch.zeros(1, 2), torch.tensor([[0.0, float("-inf")]]), log_target=True, reduction="none"
    ),
)
allmask = torch.zeros(2, 3).masked_fill(
    torch.tensor([[True, True, True], [False, True, True]]), float("-inf")
)
print("all -inf softmax", allmask.softmax(-1), F.cross_entropy(allmask[1:], torch.tensor([1])))
bb = Beta(torch.tensor([2.0]), torch.tensor([3.0]))
print(
    "beta extras",
    bb.expand((2, 1)).batch_shape,
    bb.support,
    bb.mode if hasattr(bb, "mode") else "",
    bb.arg_constraints,
)
try:
    bb.cdf(torch.tensor([0.5]))
except NotImplementedError as e:
    print("NotImplementedError", repr(str(e)))
print(
    "beta log_prob edge",
    Beta(torch.tensor(1.0), torch.tensor(1.0)).log_prob(torch.tensor(0.0)),
    Beta(torch.tensor(0.5), torch.tensor(0.5)).log_prob(torch.tensor([0.5, 0.999])),
)

# ---------------------------------------------------------------- float64 gradients of every layer
torch.manual_seed(3)
xd = torch.randn(2, 4, 5, 5, dtype=torch.float64, requires_grad=True)
checks = {
    "convT groups": lambda t: F.conv_transpose2d(
        t,
        torch.ones(4, 3, 3, 3, dtype=torch.float64) * 0.1,
        stride=2,
        padding=1,
        output_padding=1,
        groups=2,
    ),
    "bicubic ac": lambda t: F.interpolate(t, size=(7, 8), mode="bicubic", align_corners=True),
    "bilinear aa": lambda t: F.interpolate(t, size=(3, 2), mode="bilinear", antialias=True),
    "nearest-exact": lambda t: F.interpolate(t, scale_factor=1.5, mode="nearest-exact"),
    "fold": lambda t: F.fold(F.unfold(t, 3, padding=1, stride=2), (5, 5), 3, padding=1, stride=2),
    "lrn": lambda t: F.local_response_norm(t, 3, alpha=0.1, beta=0.75, k=2.0),
    "instnorm": lambda t: F.instance_norm(
        t, weight=torch.linspace(0.5, 1.5, 4, dtype=torch.float64)
    ),
    "amax": lambda t: F.adaptive_max_pool2d(t, (2, 3)),
    "unshuffle": lambda t: (
        F.pixel_unshuffle(t[:, :, :4, :4], 2)
        * torch.arange(16.0, dtype=torch.float64).view(1, 16, 1, 1)
    ),
    "shuffle": lambda t: (
        nn.ChannelShuffle(2)(t) * torch.arange(4.0, dtype=torch.float64).view(1, 4, 1, 1)
    ),
    "cos": lambda t: F.cosine_similarity(t, t.flip(1) + 1, dim=1),
    "normalize": lambda t: F.normalize(t, p=3, dim=2) * torch.arange(5.0, dtype=torch.float64),
    "roll/flip": lambda t: (
        torch.roll(torch.flip(t, [2]), (1, -2), (2, 3)) * torch.arange(5.0, dtype=torch.float64)
    ),
}
for name, fn in checks.items():
    xd.grad = None
    y = fn(xd)
    y.pow(2).sum().backward()
    ok = torch.autograd.gradcheck(
        fn, (xd[:1].detach().clone().requires_grad_(),), eps=1e-6, atol=1e-5
    )
    print(
        f"{name:13s} {tuple(y.shape)} grad {xd.grad.sum().item():.6f} "
        f"{xd.grad.abs().max().item():.6f} gradcheck {ok}"
    )
print(
    nn.ChannelShuffle(2),
    nn.Upsample(scale_factor=(2, 1.5)),
    nn.Upsample(scale_factor=2.0, mode="bicubic", align_corners=False, recompute_scale_factor=True),
)

# ---------------------------------------------------------------- channels_last and strides
cl = images[:2].contiguous(memory_format=torch.channels_last)
print(
    "channels_last",
    cl.stride(),
    cl.is_contiguous(),
    cl.is_contiguous(memory_format=torch.channels_last),
)
CL = torch.channels_last
for mode in ("nearest", "bilinear", "bicubic"):
    o = F.interpolate(cl, scale_factor=2, mode=mode)
    print(
        "cl interp",
        mode,
        o.is_contiguous(memory_format=CL),
        torch.allclose(o, F.interpolate(images[:2], scale_factor=2, mode=mode)),
    )
conv_cl = encoder.stem[0](cl)
print(
    "cl preserved",
    [
        t.is_contiguous(memory_format=CL)
        for t in (
            conv_cl,
            F.pixel_unshuffle(cl, 2),
            torch.flip(cl, [3]),
            F.instance_norm(cl),
            F.adaptive_max_pool2d(cl, 2),
            cl * 2,
            F.relu(cl),
        )
    ],
)
print(
    "shuffle strides",
    torch.arange(24.0).view(1, 4, 2, 3).unflatten(1, (2, -1)).transpose(1, 2).stride(),
    channel_shuffle(torch.ones(1, 4, 2, 3), 2).is_contiguous(),
)


# ---------------------------------------------------------------- edge values
def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions (the ImageNet example's helper)."""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


print("accuracy", accuracy(teacher_logits, labels, topk=(1, 2, 3)))
conc = torch.tensor([0.7, 2.5], requires_grad=True)
rs = Beta(conc[0], conc[1]).rsample((5,))
rs.sum().backward()
print("beta rsample grad", rs.shape, conc.grad)
print(
    "cos tiny",
    F.cosine_similarity(
        torch.tensor([[0.0, 0.0], [1e-5, 0.0], [3.0, 4.0]]),
        torch.tensor([[1.0, 0.0], [1e-5, 1e-5], [0.0, 0.0]]),
    ),
)
print(
    "cos eps",
    F.cosine_similarity(torch.tensor([[1e-3, 0.0]]), torch.tensor([[1e-3, 1e-3]]), eps=1e-2),
)
nanimg = torch.arange(16.0).view(1, 1, 4, 4)
nanimg[0, 0, 1, 1] = float("nan")
nanimg[0, 0, 3, 0] = float("-inf")
print("nan maxpool", F.adaptive_max_pool2d(nanimg, 2, return_indices=True))
print("nan interp", F.interpolate(nanimg, size=(3, 3), mode="bilinear")[0, 0])
print("histc inf", torch.histc(torch.tensor([0.1, float("inf"), 0.4, -float("inf")]), 2, 0, 1))
print("bucketize nan", torch.bucketize(torch.tensor([float("nan"), 0.3]), edges))
print("topk nan", torch.topk(torch.tensor([1.0, float("nan"), 3.0, 2.0]), 2))
print(
    "int ops",
    torch.flip(torch.tensor([[True, False]]), [1]),
    torch.roll(torch.arange(3), 1),
    F.pixel_unshuffle(torch.arange(16).view(1, 1, 4, 4), 2).flatten()[:4].tolist(),
)
inm = nn.InstanceNorm2d(2, momentum=None, track_running_stats=True)
for k in range(3):
    inm(torch.randn(3, 2, 4, 4) * (k + 1))
print("cumulative momentum", inm.running_mean, inm.running_var, inm.num_batches_tracked)
kd3 = F.kl_div(
    torch.randn(2, 3, 4).log_softmax(-1), torch.randn(2, 3, 4).softmax(-1), reduction="batchmean"
)
print("kd 3d batchmean", f"{kd3.item():.5f}")

# ---------------------------------------------------------------- typical mistakes
ERRORS = [
    lambda: F.interpolate(probe, size=(3, 3), mode="nearest", align_corners=True),
    lambda: F.interpolate(probe, size=(3, 3), scale_factor=2.0),
    lambda: F.interpolate(probe, mode="bilinear"),
    lambda: F.interpolate(probe, size=3, mode="linear"),
    lambda: channel_shuffle(torch.ones(1, 6, 2, 2).transpose(2, 3), 2),
    lambda: nn.Conv2d(6, 4, 3, groups=4),
    lambda: nn.ConvTranspose2d(4, 4, 3, stride=1, output_padding=1)(torch.ones(1, 4, 3, 3)),
    lambda: nn.PixelUnshuffle(3)(t),
    lambda: F.fold(patches, output_size=(6, 6), kernel_size=2, stride=2),
    lambda: F.unfold(torch.ones(2, 3, 4), kernel_size=2),
    lambda: torch.topk(torch.ones(3), k=5),
    lambda: torch.histc(torch.tensor([1, 2]), bins=2),
    lambda: torch.bucketize(torch.ones(2), torch.tensor([[1.0, 2.0]])),
    lambda: F.kl_div(p, q, reduction="batch"),
    lambda: F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 3])),
    lambda: Beta(torch.tensor(-1.0), torch.tensor(1.0), validate_args=True),
    lambda: nn.InstanceNorm2d(3)(torch.ones(3, 4)),
    lambda: nn.LocalResponseNorm(2)(torch.ones(3)),
    lambda: channel_shuffle(torch.ones(1, 6, 2, 3).transpose(1, 2), 2),
    lambda: torch.ones(2, 6, 2, 2).transpose(1, 2).view(2, -1),
    lambda: F.interpolate(probe, size=(2, 2), mode="nearest", antialias=True),
    lambda: F.interpolate(probe, scale_factor=(2, 2, 2)),
    lambda: F.interpolate(probe, size=(3, 3), mode="bicubic", align_corners=None, antialias=1.5),
    lambda: F.kl_div(p, q[:2], reduction="batchmean"),
    lambda: nn.AdaptiveMaxPool2d(2)(torch.ones(3)),
    lambda: F.fold(torch.ones(1, 5, 4), (4, 4), 2, stride=2),
    lambda: nn.ConvTranspose2d(4, 6, 3, groups=4),
    lambda: nn.ConvTranspose2d(4, 4, 3)(torch.ones(1, 3, 5, 5)),
    lambda: F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 4)),
    lambda: F.normalize(torch.ones(2, 3), dim=2),
    lambda: torch.bucketize(torch.ones(2), torch.tensor([2.0, 1.0]), right=1),
    lambda: Beta(0.0, 1.0),
    lambda: Beta(2.0, 2.0).log_prob(torch.tensor(1.5)),
    lambda: torch.roll(torch.ones(2, 2), (1, 1), (0,)),
    lambda: torch.flip(torch.ones(2, 2), [0, 0]),
    lambda: nn.InstanceNorm2d(3, track_running_stats=True)(torch.ones(1, 4, 2, 2)),
    lambda: F.cross_entropy(torch.randn(2, 3), torch.randn(2, 4)),
    lambda: F.pixel_shuffle(torch.ones(4, 2), 2),
    lambda: torch.searchsorted(srt, torch.tensor([2.5]), side="left", right=True),
    lambda: torch.histc(torch.ones(3), bins=0),
    lambda: torch.histc(torch.ones(3), bins=2, min=2, max=1),
    lambda: F.cross_entropy(seg_logits, seg_t[:, :3]),
    lambda: images[:2][torch.arange(3)[:, None], :, rows[:2]],
    lambda: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
    lambda: nn.Conv2d(2, 2, 3, padding="same", stride=2),
    lambda: nn.Conv2d(2, 2, 3, padding="valid")(torch.ones(1, 2, 2, 2)),
    lambda: up(feat, output_size=(20, 20)),
    lambda: F.max_unpool2d(mp_out, mp_idx, 2, output_size=(9, 9)),
    lambda: F.cross_entropy(logits, probs_t, ignore_index=1),
    lambda: F.interpolate(sq, size=(0, 2)),
    lambda: F.interpolate(sq, scale_factor=-1.0, mode="bilinear"),
    lambda: F.adaptive_max_pool2d(sq, (2, 2, 2)),
    lambda: nn.Upsample(scale_factor=2, mode="cubic")(sq),
    lambda: F.unfold(torch.arange(16).view(1, 1, 4, 4), 2),
    lambda: F.interpolate(torch.arange(4).view(1, 1, 4), size=6),
    lambda: F.local_response_norm(torch.arange(8).view(1, 2, 2, 2), 2),
    lambda: F.instance_norm(torch.arange(8).view(1, 2, 2, 2)),
    lambda: F.interpolate(torch.arange(16).view(1, 1, 4, 4), size=3, mode="bicubic"),
    lambda: F.conv_transpose2d(torch.ones(1, 4, 3, 3), torch.ones(4, 2, 3, 3), groups=3),
    lambda: torch.topk(torch.ones(3, 3), 2, dim=2),
    lambda: Beta(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0, 3.0])),
]
for make in ERRORS:
    try:
        make()
        print("no error")
    except Exception as e:  # noqa: BLE001 - printed as a program would log it
        print(f"{type(e).__name__}: {e}")
