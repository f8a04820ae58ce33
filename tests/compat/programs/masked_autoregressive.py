"""Masked autoregressive models, as the tutorials write them: a MADE on binary and
categorical data (degrees from a seeded randperm, masks as buffers, order-agnostic training
with resampled masks), a PixelCNN (type A/B masked convolutions, gated activations, a
discretised logistic mixture likelihood, bits per dim, pixel-by-pixel sampling), a gated
class-conditional PixelCNN, the PixelCNN++ RGB mixture loss on weight-normed convolutions,
and a masked autoregressive flow. (torch.nn.utils.parametrize itself is exercised by
weight_parametrizations.py.)"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)


def show(name, t, n=4):
    vals = ", ".join(f"{v:.4f}" for v in t.flatten()[:n].tolist())
    print(f"{name}: shape={tuple(t.shape)} dtype={t.dtype} [{vals}]")


# ----------------------------------------------------------------------------------------
# 1. MADE (Germain et al. 2015), after Karpathy's pytorch-made
# ----------------------------------------------------------------------------------------
class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer("mask", torch.ones(out_features, in_features))

    def set_mask(self, mask):
        if mask.shape != self.mask.shape:
            raise ValueError(f"mask of shape {tuple(mask.shape)} does not fit weight "
                             f"{tuple(self.weight.shape)}")
        self.mask.data.copy_(mask.float())

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    def __init__(self, nin, hidden, nout, num_masks=1, natural_ordering=False):
        super().__init__()
        self.nin, self.nout, self.hidden = nin, nout, hidden
        assert nout % nin == 0
        layers = []
        sizes = [nin] + hidden + [nout]
        for h0, h1 in zip(sizes, sizes[1:]):
            layers += [MaskedLinear(h0, h1), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])
        self.natural_ordering = natural_ordering
        self.num_masks = num_masks
        self.seed = 0
        self.register_buffer("order", torch.arange(nin), persistent=False)
        self.m = {}
        self.update_masks()

    def update_masks(self):
        if self.m and self.num_masks == 1:
            return
        g = torch.Generator().manual_seed(self.seed)
        self.seed = (self.seed + 1) % self.num_masks
        L = len(self.hidden)
        if self.natural_ordering:
            self.m[-1] = torch.arange(self.nin)
        else:
            self.m[-1] = torch.randperm(self.nin, generator=g)
        for layer in range(L):
            low = int(self.m[layer - 1].min())
            self.m[layer] = torch.randint(low, self.nin - 1, (self.hidden[layer],), generator=g)
        masks = [self.m[layer - 1][None, :] <= self.m[layer][:, None] for layer in range(L)]
        masks.append(self.m[L - 1][None, :] < self.m[-1][:, None])
        if self.nout > self.nin:
            k = self.nout // self.nin
            masks[-1] = torch.cat([masks[-1]] * k, dim=0)
        self.order.copy_(self.m[-1])
        linears = [mod for mod in self.net.modules() if isinstance(mod, MaskedLinear)]
        for lin, mask in zip(linears, masks):
            lin.set_mask(mask)

    def forward(self, x):
        return self.net(x)


made = MADE(6, [32, 32], 6, num_masks=3)
print(made)
print("buffers:", [n for n, _ in made.named_buffers()])
print("state_dict keys:", list(made.state_dict().keys()))
print("order:", made.order.tolist(), "degrees h1:", made.m[0][:8].tolist())
m0 = made.net[0].mask
print("mask dtype/shape:", m0.dtype, tuple(m0.shape), "ones:", int(m0.sum().item()))

# autoregressive check: output d depends only on inputs of lower order
x = torch.rand(1, 6, requires_grad=True)
deps = []
for d in range(6):
    x.grad = None
    made(x)[0, d].backward()
    deps.append((x.grad[0] != 0).nonzero().flatten().tolist())
print("dependencies:", deps)
ok = all(made.order[j] < made.order[d] for d in range(6) for j in deps[d])
print("autoregressive:", ok)

# connectivity matrix from the masks: product of masks must be strictly lower in order
conn = made.net[4].mask @ made.net[2].mask @ made.net[0].mask
print("connectivity nonzero:", int((conn > 0).sum()), conn.dtype)

# binary data: two correlated bit-patterns with noise
protos = torch.tensor([[1, 1, 0, 0, 1, 0], [0, 0, 1, 1, 0, 1]], dtype=torch.float32)
idx = torch.randint(0, 2, (256,))
data = protos[idx]
flip = torch.rand(256, 6) < 0.05
data = torch.where(flip, 1 - data, data)
print("data mean:", [f"{v:.4f}" for v in data.mean(0).tolist()])

opt = torch.optim.Adam(made.parameters(), lr=1e-2)
for step in range(1, 61):
    made.update_masks()  # order-agnostic: a different ordering each step
    logits = made(data)
    loss = F.binary_cross_entropy_with_logits(logits, data, reduction="sum") / data.shape[0]
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step:3d} nll {loss.item():.4f} order {made.order.tolist()}")

# ensemble over the masks at test time
with torch.no_grad():
    total = torch.zeros(4, 6)
    for _ in range(3):
        made.update_masks()
        total += torch.sigmoid(made(data[:4]))
    probs = total / 3
print("ensemble probs row0:", [f"{v:.4f}" for v in probs[0].tolist()])


def sample_made(model, n, gen):
    model.eval()
    with torch.no_grad():
        x = torch.zeros(n, model.nin)
        for d in model.order.argsort().tolist():
            p = torch.sigmoid(model(x))[:, d]
            x[:, d] = torch.bernoulli(p, generator=gen)
    return x


samples = sample_made(made, 8, torch.Generator().manual_seed(3))
print("binary samples:\n", samples.int())

# categorical MADE: K=4 logits per dimension, sampled with Categorical / multinomial
K, D = 4, 5
cmade = MADE(D, [48], D * K, natural_ordering=True)
cat_data = torch.stack([torch.randint(0, K, (200,))] * D, 1)
cat_data = (cat_data + torch.arange(D)) % K  # x_d = (x_0 + d) mod K
opt = torch.optim.Adam(cmade.parameters(), lr=2e-2)
for _ in range(80):
    inp = cat_data.float() / (K - 1)
    logits = cmade(inp).view(-1, K, D)
    loss = F.cross_entropy(logits, cat_data)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"categorical MADE loss {loss.item():.4f} grad_fn {loss.grad_fn.__class__.__name__}")
with torch.no_grad():
    torch.manual_seed(11)
    x = torch.zeros(6, D, dtype=torch.long)
    for d in range(D):
        logits = cmade(x.float() / (K - 1)).view(-1, K, D)[:, :, d]
        if d % 2 == 0:
            x[:, d] = torch.distributions.Categorical(logits=logits).sample()
        else:
            x[:, d] = torch.multinomial(F.softmax(logits, -1), 1).squeeze(1)
print("categorical samples:", x.tolist())
print("rule holds:", ((x - x[:, :1] - torch.arange(D)) % K == 0).float().mean().item())

# a mask of the wrong shape
try:
    made.net[0].set_mask(torch.ones(6, 32))
except ValueError as e:
    print("ValueError:", e)
try:
    made.net[0].mask.copy_(torch.ones(6, 32))
except RuntimeError as e:
    print("RuntimeError:", e)




# forgetting super().__init__(), and a mask kept as a plain attribute instead of a buffer
class NoInit(nn.Linear):
    def __init__(self):
        self.register_buffer("mask", torch.ones(2, 2))


try:
    NoInit()
except AttributeError as e:
    print("AttributeError:", e)


class PlainMask(nn.Linear):
    def __init__(self, n):
        super().__init__(n, n)
        self.mask = torch.tril(torch.ones(n, n), -1)

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


pm = PlainMask(3)
print("plain-mask keys:", list(pm.state_dict().keys()), "buffers:", list(pm.buffers()))
pm.double()
print("after .double():", pm.weight.dtype, pm.mask.dtype)
try:
    pm(torch.ones(1, 3))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    made.load_state_dict({k: v for k, v in made.state_dict().items() if "mask" not in k})
except RuntimeError as e:
    print("RuntimeError:", e)


# ----------------------------------------------------------------------------------------
# 2. PixelCNN (van den Oord et al. 2016) with gated blocks and a logistic mixture
# ----------------------------------------------------------------------------------------
class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", self.weight.data.clone())
        _, _, kh, kw = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        return self._conv_forward(x, self.weight * self.mask, self.bias)


class MaskedConvF(nn.Conv2d):
    """The same, calling F.conv2d directly (as many tutorials do)."""

    def __init__(self, mask_type, c_in, c_out, k):
        super().__init__(c_in, c_out, k, padding=k // 2)
        mask = torch.ones_like(self.weight)
        mask[:, :, k // 2, k // 2 + (mask_type == "B"):] = 0
        mask[:, :, k // 2 + 1:, :] = 0
        self.register_buffer("mask", mask)

    def forward(self, x):
        self.weight.data *= self.mask
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)


class GatedBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = MaskedConv2d("B", ch, 2 * ch, 3, padding=1)
        self.out = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        a, b = self.conv(x).chunk(2, dim=1)
        return x + self.out(torch.tanh(a) * torch.sigmoid(b))


class PixelCNN(nn.Module):
    def __init__(self, ch=16, n_mix=3, n_blocks=2):
        super().__init__()
        self.n_mix = n_mix
        self.inp = MaskedConv2d("A", 1, ch, 5, padding=2)
        self.blocks = nn.ModuleList([GatedBlock(ch) for _ in range(n_blocks)])
        self.head = nn.Sequential(nn.ReLU(), MaskedConvF("B", ch, ch, 1), nn.ReLU(),
                                  nn.Conv2d(ch, 3 * n_mix, 1))

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def discretized_logistic_mix_nll(x, params, n_mix, bins=256):
    """-log p(x) for x in [-1, 1] under a mixture of discretised logistics (PixelCNN++)."""
    logit_pi, means, log_scales = params.split(n_mix, dim=1)
    log_scales = log_scales.clamp(min=-7.0)
    centered = x - means
    inv_s = torch.exp(-log_scales)
    plus_in = inv_s * (centered + 1.0 / (bins - 1))
    min_in = inv_s * (centered - 1.0 / (bins - 1))
    cdf_plus, cdf_min = torch.sigmoid(plus_in), torch.sigmoid(min_in)
    log_cdf_plus = plus_in - F.softplus(plus_in)      # log sigmoid, for x = -1 edge
    log_one_minus_cdf_min = -F.softplus(min_in)        # for x = +1 edge
    cdf_delta = cdf_plus - cdf_min
    mid_in = inv_s * centered
    log_pdf_mid = mid_in - log_scales - 2.0 * F.softplus(mid_in)
    log_probs = torch.where(
        x < -0.999, log_cdf_plus,
        torch.where(x > 0.999, log_one_minus_cdf_min,
                    torch.where(cdf_delta > 1e-5, torch.log(cdf_delta.clamp(min=1e-12)),
                                log_pdf_mid - math.log((bins - 1) / 2))))
    log_probs = log_probs + F.log_softmax(logit_pi, dim=1)
    return -torch.logsumexp(log_probs, dim=1)


pcnn = PixelCNN()
print(pcnn.inp, pcnn.inp.mask[0, 0].int().tolist())
print("B mask centre row:", pcnn.blocks[0].conv.mask[0, 0, 1].tolist())
print("params:", sum(p.numel() for p in pcnn.parameters()),
      "buffers:", sum(b.numel() for b in pcnn.buffers()))

# receptive field check: output pixel (3, 3) sees only pixels before it in raster order
img = torch.zeros(1, 1, 7, 7, requires_grad=True)
pcnn(img)[0, :, 3, 3].sum().backward()
seen = (img.grad[0, 0] != 0)
print("sees (3,3) itself:", bool(seen[3, 3]),
      "sees after:", bool(seen[3, 4:].any() or seen[4:].any()), "count:", int(seen.sum()))

# toy 8x8 images: vertical stripes of varying intensity, quantised to 16 levels
B, H, W = 32, 8, 8
levels = 16
phase = torch.randint(0, 2, (B, 1, 1, 1))
cols = torch.arange(W).view(1, 1, 1, W)
raw = ((cols + phase) % 2).float() * 0.8 + 0.1 + 0.05 * torch.randn(B, 1, H, W)
q = (raw.clamp(0, 1) * (levels - 1)).round()
x_img = q / (levels - 1) * 2 - 1
print("image range:", x_img.min().item(), x_img.max().item(), "unique:", q.unique().numel())

opt = torch.optim.Adam(pcnn.parameters(), lr=5e-3)
for step in range(1, 31):
    params = pcnn(x_img)
    nll = discretized_logistic_mix_nll(x_img, params, pcnn.n_mix, bins=levels)
    loss = nll.mean()
    bpd = nll.sum() / (B * H * W * math.log(2))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(pcnn.parameters(), 5.0)
    opt.step()
    if step % 10 == 0:
        print(f"step {step:3d} nll {loss.item():.4f} bits/dim {bpd.item():.4f}")
print("nll grad_fn:", nll.grad_fn.__class__.__name__, "shape:", tuple(nll.shape))


def sample_pixelcnn(model, n, h, w, bins):
    model.eval()
    x = torch.zeros(n, 1, h, w)
    with torch.no_grad():
        for i in range(h):
            for j in range(w):
                p = model(x)[:, :, i, j]
                logit_pi, mu, log_s = p.split(model.n_mix, dim=1)
                k = torch.multinomial(F.softmax(logit_pi, dim=1), 1).squeeze(1)
                mu_k = mu.gather(1, k[:, None]).squeeze(1)
                s_k = log_s.gather(1, k[:, None]).squeeze(1).clamp(min=-7).exp()
                u = torch.rand(n).clamp(1e-5, 1 - 1e-5)
                v = mu_k + s_k * (torch.log(u) - torch.log1p(-u))
                v = ((v.clamp(-1, 1) + 1) / 2 * (bins - 1)).round() / (bins - 1) * 2 - 1
                x[:, 0, i, j] = v
    model.train()
    return x


torch.manual_seed(5)
samp = sample_pixelcnn(pcnn, 2, 4, 4, levels)
print("samples levels:\n", ((samp[:, 0] + 1) / 2 * (levels - 1)).round().int())

# per-pixel categorical PixelCNN head with cross-entropy in bits
cat_head = nn.Conv2d(16, levels, 1)
with torch.no_grad():
    logits = cat_head(pcnn.blocks[0](pcnn.inp(x_img)))
    target = q.squeeze(1).long()
    ce = F.cross_entropy(logits, target)
print(f"categorical head bits/dim {ce.item() / math.log(2):.4f} logits {tuple(logits.shape)}")
dist = torch.distributions.Categorical(logits=logits.permute(0, 2, 3, 1))
print("dist batch_shape:", tuple(dist.batch_shape), "entropy mean:",
      f"{dist.entropy().mean().item():.4f}")


# Gated PixelCNN (van den Oord et al. 2016b): vertical and horizontal stacks, class-conditional,
# causality by zeroing the last kernel row / column and by cropping the padded output
class GatedLayer(nn.Module):
    def __init__(self, ch, k, mask_type, n_classes=10):
        super().__init__()
        self.mask_type = mask_type
        self.v = nn.Conv2d(ch, 2 * ch, (k // 2 + 1, k), padding=(k // 2, k // 2))
        self.v2h = nn.Conv2d(2 * ch, 2 * ch, 1)
        self.h = nn.Conv2d(ch, 2 * ch, (1, k // 2 + 1), padding=(0, k // 2))
        self.h_res = nn.Conv2d(ch, ch, 1)
        self.cond = nn.Embedding(n_classes, 2 * ch)

    def make_causal(self):
        self.v.weight.data[:, :, -1].zero_()
        self.h.weight.data[:, :, :, -1].zero_()

    def forward(self, x_v, x_h, label):
        if self.mask_type == "A":
            self.make_causal()
        c = self.cond(label)[:, :, None, None]
        h_v = self.v(x_v)[:, :, :x_v.size(-1), :]
        a, b = (h_v + c).chunk(2, 1)
        out_v = torch.tanh(a) * torch.sigmoid(b)
        h_h = self.h(x_h)[:, :, :, :x_h.size(-2)]
        a, b = (h_h + self.v2h(h_v) + c).chunk(2, 1)
        out_h = self.h_res(torch.tanh(a) * torch.sigmoid(b))
        return out_v, (out_h + x_h) if self.mask_type == "B" else out_h


class GatedPixelCNN(nn.Module):
    def __init__(self, levels, ch=8, n_layers=3):
        super().__init__()
        self.embed = nn.Embedding(levels, ch)
        self.layers = nn.ModuleList([GatedLayer(ch, 7 if i == 0 else 3, "A" if i == 0 else "B")
                                     for i in range(n_layers)])
        self.out = nn.Sequential(nn.Conv2d(ch, 32, 1), nn.ReLU(), nn.Conv2d(32, levels, 1))

    def forward(self, x, label):
        b, h, w = x.shape
        e = self.embed(x.view(-1)).view(b, h, w, -1).permute(0, 3, 1, 2)
        x_v = x_h = e
        for layer in self.layers:
            x_v, x_h = layer(x_v, x_h, label)
        return self.out(x_h)


gp = GatedPixelCNN(levels)
q_long = q.squeeze(1).long()
labels = phase.flatten()
print("gated params:", sum(p.numel() for p in gp.parameters()),
      "embedding:", tuple(gp.embed.weight.shape))
opt = torch.optim.Adam(gp.parameters(), lr=1e-2)
for step in range(1, 16):
    logits = gp(q_long, labels)
    loss = F.cross_entropy(logits, q_long)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"gated step {step:2d} bits/dim {loss.item() / math.log(2):.4f}")
gp.eval()
with torch.no_grad():
    torch.manual_seed(9)
    canvas = torch.zeros(2, 4, 4, dtype=torch.long)
    want = torch.tensor([0, 1])
    for i in range(4):
        for j in range(4):
            probs = F.softmax(gp(canvas, want)[:, :, i, j], dim=1)
            canvas[:, i, j] = torch.multinomial(probs, 1).squeeze(-1)
print("gated samples:\n", canvas)
print("causal rows zero:", gp.layers[0].v.weight[:, :, -1].abs().sum().item(),
      gp.layers[0].h.weight[:, :, :, -1].abs().sum().item(),
      "later layers not:", f"{gp.layers[1].v.weight[:, :, -1].abs().sum().item():.4f}")


# PixelCNN++ (Salimans et al. 2017): weight-normed down-shifted convolutions, concat_elu and the
# RGB mixture of logistics whose means depend linearly on the channels already sampled
def concat_elu(x):
    return F.elu(torch.cat([x, -x], dim=1))


class DownShiftedConv2d(nn.Module):
    def __init__(self, c_in, c_out, filter_size=(2, 3), shift_output_down=False):
        super().__init__()
        self.conv = weight_norm(nn.Conv2d(c_in, c_out, filter_size))
        self.pad = nn.ZeroPad2d(((filter_size[1] - 1) // 2, (filter_size[1] - 1) // 2,
                                 filter_size[0] - 1, 0))
        self.shift_output_down = shift_output_down

    def forward(self, x):
        x = self.conv(self.pad(x))
        return F.pad(x[:, :, :-1, :], (0, 0, 1, 0)) if self.shift_output_down else x


def discretized_mix_logistic_loss(x, l):
    """-sum log p(x) for 3-channel x in [-1, 1]; l holds 10 numbers per mixture component."""
    x, l = x.permute(0, 2, 3, 1), l.permute(0, 2, 3, 1)
    xs, nr_mix = list(x.shape), l.shape[-1] // 10
    logit_probs = l[..., :nr_mix]
    l = l[..., nr_mix:].contiguous().view(xs + [nr_mix * 3])
    means = l[..., :nr_mix]
    log_scales = torch.clamp(l[..., nr_mix:2 * nr_mix], min=-7.0)
    coeffs = torch.tanh(l[..., 2 * nr_mix:3 * nr_mix])
    x = x.unsqueeze(-1) + torch.zeros(xs + [nr_mix])
    m2 = (means[:, :, :, 1, :] + coeffs[:, :, :, 0, :] * x[:, :, :, 0, :]).unsqueeze(3)
    m3 = (means[:, :, :, 2, :] + coeffs[:, :, :, 1, :] * x[:, :, :, 0, :]
          + coeffs[:, :, :, 2, :] * x[:, :, :, 1, :]).unsqueeze(3)
    means = torch.cat((means[:, :, :, 0:1, :], m2, m3), dim=3)
    centered = x - means
    inv_stdv = torch.exp(-log_scales)
    plus_in = inv_stdv * (centered + 1.0 / 255)
    min_in = inv_stdv * (centered - 1.0 / 255)
    cdf_delta = torch.sigmoid(plus_in) - torch.sigmoid(min_in)
    mid_in = inv_stdv * centered
    log_pdf_mid = mid_in - log_scales - 2.0 * F.softplus(mid_in)
    inner_inner = torch.where(cdf_delta > 1e-5, torch.log(torch.clamp(cdf_delta, min=1e-12)),
                              log_pdf_mid - math.log(127.5))
    inner = torch.where(x > 0.999, -F.softplus(min_in), inner_inner)
    log_probs = torch.where(x < -0.999, plus_in - F.softplus(plus_in), inner)
    log_probs = log_probs.sum(dim=3) + F.log_softmax(logit_probs, dim=-1)
    return -torch.logsumexp(log_probs, dim=-1).sum()


torch.manual_seed(10)
rgb = torch.randint(0, 256, (2, 3, 6, 6)).float() / 127.5 - 1
stem = DownShiftedConv2d(3, 8, shift_output_down=True)
head = weight_norm(nn.Conv2d(16, 10 * 4, 1))
params = head(concat_elu(stem(rgb)))
mix_loss = discretized_mix_logistic_loss(rgb, params)
bits = mix_loss.item() / (rgb.numel() * math.log(2))
print(f"pixelcnn++ nll {mix_loss.item():.5g} bits/dim {bits:.4f}")
mix_loss.backward()
print("stem g grad:", tuple(stem.conv.parametrizations.weight.original0.grad.shape),
      "head v grad finite:",
      bool(torch.isfinite(head.parametrizations.weight.original1.grad).all()))


# Masked autoregressive flow (Papamakarios et al. 2017): MADE gives (mu, alpha) per dimension,
# z = (x - mu) * exp(-alpha), log|det| = -sum(alpha); sampling inverts one dimension at a time
class MADEGaussian(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        deg_in = torch.arange(1, d + 1)
        deg_h = torch.arange(h) % (d - 1) + 1
        self.register_buffer("m1", (deg_h[:, None] >= deg_in[None, :]).float())
        self.register_buffer("m2", (deg_in.repeat(2)[:, None] > deg_h[None, :]).float())
        self.l1, self.l2 = nn.Linear(d, h), nn.Linear(h, 2 * d)
        nn.init.zeros_(self.l2.weight)
        nn.init.zeros_(self.l2.bias)

    def forward(self, x):
        h = F.relu(F.linear(x, self.l1.weight * self.m1, self.l1.bias))
        return F.linear(h, self.l2.weight * self.m2, self.l2.bias).chunk(2, dim=1)


torch.manual_seed(12)
d = 4
flows = nn.ModuleList([MADEGaussian(d, 16) for _ in range(3)])
base = torch.distributions.MultivariateNormal(torch.zeros(d), torch.eye(d))
mix = torch.tensor([[1.0, 0.5, 0, 0], [0, 1.0, 0.3, 0], [0, 0, 1.0, 0.2], [0, 0, 0, 1.0]])
flow_data = torch.randn(128, d) @ mix
opt = torch.optim.Adam(flows.parameters(), lr=1e-2)
for step in range(1, 31):
    z, logdet = flow_data, torch.zeros(128)
    for f in flows:
        mu, alpha = f(z)
        z = (z - mu) * torch.exp(-alpha)
        logdet = logdet - alpha.sum(1)
        z = z.flip(1)
    loss = -(base.log_prob(z) + logdet).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"maf step {step} nll {loss.item():.4f}")
with torch.no_grad():
    z = base.sample((3,))
    for f in reversed(flows):
        z = z.flip(1)
        x = torch.zeros_like(z)
        for i in range(d):
            mu, alpha = f(x)
            x[:, i] = mu[:, i] + z[:, i] * torch.exp(alpha[:, i])
        z = x
print("maf samples:\n", z)
