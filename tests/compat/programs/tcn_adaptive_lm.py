"""A WaveNet-style temporal convolutional language model, two ways: a sample-level model on a
mu-law companded synthetic waveform (causal dilated Conv1d stacks with left padding, grouped
convolutions, weight norm old and new, gated tanh*sigmoid units, residual and skip paths, 1x1
convolutions, a ConvTranspose1d-upsampled conditioning signal), trained on chunks with truncated
context under AdamW + OneCycleLR with gradient clipping, then run greedily and with temperature
sampling from a rolling buffer; and a word-level TCN over a Zipf-distributed vocabulary with an
adaptive softmax head (nn.AdaptiveLogSoftmaxWithLoss). Ends with the errors of typical mistakes."""

import math
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

torch.manual_seed(0)


def show_error(label, fn):
    try:
        fn()
        print(label, "no error")
    except Exception as e:  # noqa: BLE001 - the point is to print what a user sees
        print(label, type(e).__name__, str(e).splitlines()[0][:160])


# ---- mu-law companding of a synthetic waveform
MU = 255
sr, seconds = 800, 1.0
t = torch.arange(int(sr * seconds)) / sr
wave = 0.6 * torch.sin(2 * math.pi * 13 * t) + 0.3 * torch.sin(2 * math.pi * 41 * t + 0.5)
wave = wave * (0.5 + 0.5 * torch.sin(2 * math.pi * 2 * t)) + 0.02 * torch.randn(t.shape)
wave = wave.clamp(-1, 1)
print("wave", wave.shape, wave.dtype, f"{wave.mean().item():.5f} {wave.std().item():.5f}")


def mu_law_encode(x, mu=MU):
    y = torch.sign(x) * torch.log1p(mu * x.abs()) / math.log1p(mu)
    return ((y + 1) / 2 * mu + 0.5).long()  # 0..mu


def mu_law_decode(q, mu=MU):
    y = 2 * q.float() / mu - 1
    return torch.sign(y) * ((1 + mu) ** y.abs() - 1) / mu


q = mu_law_encode(wave)
boundaries = torch.linspace(-1, 1, MU + 2)[1:-1]
y_comp = torch.sign(wave) * torch.log1p(MU * wave.abs()) / math.log1p(MU)
q_bucket = torch.bucketize(y_comp, boundaries)
q_right = torch.bucketize(y_comp, boundaries, right=True)
print("mu-law classes", q.dtype, q.min().item(), q.max().item(), q[:12].tolist())
print("bucketize", q_bucket.dtype, q_bucket[:12].tolist(), (q_bucket != q_right).sum().item())
print("agree with rounding", (q_bucket - q).abs().max().item(),
      (q_bucket == q).float().mean().item())
recon = mu_law_decode(q)
print(f"reconstruction max err {(recon - wave).abs().max().item():.5f}"
      f" snr {10 * torch.log10(wave.pow(2).mean() / (recon - wave).pow(2).mean()).item():.3f} dB")
print("histogram of classes", torch.bincount(q, minlength=MU + 1).reshape(16, 16).sum(1).tolist())
onehot = F.one_hot(q[:6], num_classes=MU + 1)
print("one_hot", onehot.shape, onehot.dtype, onehot.argmax(1).tolist(), onehot.sum().item())
print("round-trip", torch.round(y_comp[:5] * 127.5 + 127.5).long().tolist(),
      torch.searchsorted(boundaries, y_comp[:5]).tolist())


# ---- receptive-field arithmetic
def receptive_field(kernel_size, dilations, stacks):
    return 1 + stacks * sum((kernel_size - 1) * d for d in dilations)


DILATIONS = [1, 2, 4, 8]
RF = receptive_field(2, DILATIONS, 2)
print("receptive field", RF, receptive_field(3, DILATIONS, 1),
      receptive_field(2, [2**i for i in range(10)], 3))


# ---- layers
class CausalConv1d(nn.Module):
    """Conv1d that sees only the past: pad (k-1)*d zeros on the left and nothing on the right."""

    def __init__(self, c_in, c_out, kernel_size, dilation=1, groups=1, norm=None):
        super().__init__()
        self.left = (kernel_size - 1) * dilation
        conv = nn.Conv1d(c_in, c_out, kernel_size, dilation=dilation, groups=groups)
        if norm == "new":
            conv = nn.utils.parametrizations.weight_norm(conv)
        elif norm == "old":
            conv = nn.utils.weight_norm(conv)
        self.conv = conv

    def forward(self, x):
        return self.conv(F.pad(x, (self.left, 0)))


class GatedResidualBlock(nn.Module):
    def __init__(self, channels, skip_channels, cond_channels, dilation, groups, norm):
        super().__init__()
        self.dilated = CausalConv1d(channels, 2 * channels, 2, dilation, groups=groups, norm=norm)
        self.cond = nn.Conv1d(cond_channels, 2 * channels, 1, bias=False) if cond_channels else None
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, skip_channels, kernel_size=1)

    def forward(self, x, c=None):
        h = self.dilated(x)
        if self.cond is not None:
            h = h + self.cond(c)
        filt, gate = h.chunk(2, dim=1)
        z = torch.tanh(filt) * torch.sigmoid(gate)
        return (x + self.res(z)) * math.sqrt(0.5), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, n_classes=256, channels=16, skip=24, cond_channels=4, stacks=2):
        super().__init__()
        self.embed = nn.Conv1d(n_classes, channels, 1)  # on one-hot inputs
        blocks = []
        for s in range(stacks):
            for i, d in enumerate(DILATIONS):
                norm = "new" if s == 0 else ("old" if i % 2 == 0 else None)
                blocks.append(GatedResidualBlock(channels, skip, cond_channels, d,
                                                 groups=2 if i % 2 else 1, norm=norm))
        self.blocks = nn.ModuleList(blocks)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(),
                                 nn.Conv1d(skip, n_classes, 1))

    def forward(self, x_onehot, c=None):
        h = self.embed(x_onehot)
        skips = 0
        for block in self.blocks:
            h, s = block(h, c)
            skips = skips + s
        return self.out(skips)


# ---- ConvTranspose1d upsampling of a slow conditioning signal (hop 8)
up = nn.ConvTranspose1d(4, 4, kernel_size=16, stride=8, padding=4)
for kw in [dict(kernel_size=4, stride=2),
           dict(kernel_size=5, stride=3, padding=1, output_padding=2),
           dict(kernel_size=3, stride=2, padding=2, output_padding=1, dilation=3),
           dict(kernel_size=4, stride=4, groups=2, bias=False)]:
    m = nn.ConvTranspose1d(4, 6, **kw)
    L_in = 10
    k, s, p = kw["kernel_size"], kw["stride"], kw.get("padding", 0)
    op, d = kw.get("output_padding", 0), kw.get("dilation", 1)
    expected = (L_in - 1) * s - 2 * p + d * (k - 1) + op + 1
    out = m(torch.randn(2, 4, L_in))
    print("conv_transpose", kw, tuple(out.shape), expected, tuple(m.weight.shape),
          f"{out.std().item():.4f}")
cond_slow = torch.randn(1, 4, 100)
cond = up(cond_slow)
print("upsampled conditioning", tuple(cond.shape), cond.grad_fn.name(),
      f"{cond.abs().mean().item():.5f}")
print("output_size=", tuple(up(cond_slow, output_size=[805]).shape))

# ---- the sample-level model
model = WaveNet()
n_params = sum(p.numel() for p in model.parameters())
print("parameters", n_params, len(list(model.parameters())))
for name, p in list(model.named_parameters())[:4] + list(model.named_parameters())[30:36]:
    print(" ", name, tuple(p.shape))
wn = model.blocks[0].dilated.conv
g0, v0 = wn.parametrizations.weight.original0, wn.parametrizations.weight.original1
print("new weight_norm", type(wn.parametrizations.weight).__name__, tuple(g0.shape),
      tuple(v0.shape), torch.allclose(wn.weight, torch._weight_norm(v0, g0, 0)))
old = model.blocks[4].dilated.conv
print("old weight_norm", tuple(old.weight_g.shape), tuple(old.weight_v.shape),
      f"{old.weight_g.flatten()[:3].tolist()[0]:.5f}",
      torch.allclose(old.weight, old.weight_v * (old.weight_g / old.weight_v.norm(dim=(1, 2),
                                                                                  keepdim=True))))

# causality check: changing a future sample must not change earlier outputs
x = F.one_hot(q[:64].unsqueeze(0), 256).transpose(1, 2).float()
c = cond[:, :, :64]
with torch.no_grad():
    y0 = model(x, c)
    x2 = x.clone()
    x2[0, :, 40] = 0
    x2[0, 7, 40] = 1
    y1 = model(x2, c)
diff = (y0 - y1).abs().amax(dim=(0, 1))
print("causal", diff[:40].max().item() == 0, (diff[40:] > 0).sum().item(), tuple(y0.shape))

# ---- chunked training with truncated context
CHUNK, STEPS, BATCH = 48, 16, 4
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=STEPS, pct_start=0.25,
                                            anneal_strategy="cos", div_factor=10.0,
                                            final_div_factor=100.0)
ctx = RF - 1
gen = torch.Generator().manual_seed(7)
lrs = []
for step in range(STEPS):
    starts = torch.randint(ctx, len(q) - CHUNK - 1, (BATCH,), generator=gen)
    xs = torch.stack([q[s - ctx:s + CHUNK] for s in starts.tolist()])
    ys = torch.stack([q[s + 1:s + CHUNK + 1] for s in starts.tolist()])
    inp = F.one_hot(xs, 256).permute(0, 2, 1).float()
    cidx = torch.stack([torch.arange(s - ctx, s + CHUNK) for s in starts.tolist()])
    cc = cond[0].T[cidx].permute(0, 2, 1).detach()
    logits = model(inp, cc)[:, :, ctx:]  # the context positions only warm the receptive field
    loss = F.cross_entropy(logits, ys)
    opt.zero_grad()
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
    opt.step()
    lrs.append(sched.get_last_lr()[0])
    sched.step()
    if step % 6 == 0 or step == STEPS - 1:
        print(f"step {step:2d} loss {loss.item():.4f} grad-norm {total.item():.4f} "
              f"lr {lrs[-1]:.6f} acc {(logits.argmax(1) == ys).float().mean().item():.4f}")
print("lr schedule", [f"{v:.5f}" for v in lrs[::4]], f"{max(lrs):.5f}")
unused = [n for n, p in model.named_parameters() if p.grad is None]  # last block's residual
largest = max(p.grad.abs().max().item() for p in model.parameters() if p.grad is not None)
print("max grad after clip", f"{largest:.4f}", unused)
print("grad_fn", loss.grad_fn.name(), logits.grad_fn.name())


# ---- generation from a rolling buffer of the last RF samples
@torch.no_grad()
def generate(model, seed, n, temperature=None, gen=None):
    buf = torch.full((RF,), MU // 2, dtype=torch.long)
    buf[-len(seed):] = seed[-RF:]
    out = []
    for i in range(n):
        inp = F.one_hot(buf.unsqueeze(0), 256).transpose(1, 2).float()
        cstart = 200 + i
        logits = model(inp, cond[:, :, cstart:cstart + RF])[0, :, -1]
        if temperature is None:
            nxt = logits.argmax()
        else:
            probs = F.softmax(logits / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=gen)[0]
        out.append(int(nxt))
        buf = torch.roll(buf, -1)
        buf[-1] = nxt
    return torch.tensor(out)


model.eval()
greedy = generate(model, q[:RF], 12)
print("greedy", greedy.tolist())
sampled = generate(model, q[:RF], 12, temperature=0.8, gen=torch.Generator().manual_seed(3))
print("sampled", sampled.tolist())
print("decoded", [f"{v:.4f}" for v in mu_law_decode(greedy[:5]).tolist()])

# ---- checkpoint round trip, then fold the weight norms away for inference (as vocoders do)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "wavenet.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "rf": RF}, path)
    ckpt = torch.load(path, weights_only=True)
    restored = WaveNet()
    print("load", restored.load_state_dict(ckpt["model"]), ckpt["rf"], len(ckpt["opt"]["state"]))
restored.eval()
probe = F.one_hot(q[100:100 + RF].unsqueeze(0), 256).transpose(1, 2).float()
with torch.no_grad():
    before = restored(probe, cond[:, :, 100:100 + RF])
folded = 0
for mod in restored.modules():
    if parametrize.is_parametrized(mod, "weight"):
        parametrize.remove_parametrizations(mod, "weight")
        folded += 1
    elif hasattr(mod, "weight_g"):
        nn.utils.remove_weight_norm(mod)
        folded += 1
with torch.no_grad():
    after = restored(probe, cond[:, :, 100:100 + RF])
print("folded", folded, sum(p.numel() for p in restored.parameters()),
      torch.allclose(before, after, atol=1e-5),
      [k for k in restored.state_dict() if "blocks.4.dilated" in k])

# ---- word-level TCN with an adaptive softmax head on a Zipf vocabulary
V, EMB = 400, 32
ranks = torch.arange(1, V + 1, dtype=torch.float64)
zipf = ranks.pow(-1.1)
zipf = zipf / zipf.sum()
corpus = torch.multinomial(zipf, 3000, replacement=True,
                           generator=torch.Generator().manual_seed(11))
print("zipf corpus", corpus[:10].tolist(), corpus.unique().numel(),
      f"{(corpus < 20).float().mean().item():.4f}", f"{zipf[:3].sum().item():.5f}")


class WordTCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, EMB)
        self.convs = nn.ModuleList([CausalConv1d(EMB, EMB, 3, d, groups=4 if d == 2 else 1,
                                                 norm="new" if d < 4 else "old")
                                    for d in (1, 2, 4)])
        self.asm = nn.AdaptiveLogSoftmaxWithLoss(EMB, V, cutoffs=[20, 100], div_value=2.0,
                                                 head_bias=True)

    def features(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        for conv in self.convs:
            h = h + F.gelu(conv(h))
        return h.transpose(1, 2)


lm = WordTCN()
asm = lm.asm
print("asm", asm.shortlist_size, asm.n_clusters, asm.head_size, asm.cutoffs, asm.div_value)
print(asm)
for name, p in asm.named_parameters():
    print(" ", name, tuple(p.shape), f"{p.sum().item():.5f}")
opt2 = torch.optim.AdamW(lm.parameters(), lr=5e-3)
SEQ = 32
for step in range(12):
    starts = torch.randint(0, len(corpus) - SEQ - 1, (8,), generator=gen)
    xb = torch.stack([corpus[s:s + SEQ] for s in starts.tolist()])
    yb = torch.stack([corpus[s + 1:s + SEQ + 1] for s in starts.tolist()])
    feats = lm.features(xb).reshape(-1, EMB)
    res = asm(feats, yb.reshape(-1))
    opt2.zero_grad()
    res.loss.backward()
    nn.utils.clip_grad_norm_(lm.parameters(), 2.0, norm_type=2.0)
    opt2.step()
    if step % 4 == 0 or step == 11:
        print(f"word step {step:2d} loss {res.loss.item():.4f} ppl {math.exp(res.loss.item()):.2f}")
print("result", type(res).__name__, res._fields, tuple(res.output.shape), res.output.grad_fn.name(),
      res.loss.grad_fn.name())
out, loss = res
print("unpacked", f"{loss.item():.4f}", f"{(-out).mean().item():.4f}")
with torch.no_grad():
    feats = lm.features(corpus[:40].unsqueeze(0))[0]
    lp = asm.log_prob(feats)
    pred = asm.predict(feats)
    print("log_prob", tuple(lp.shape), lp.logsumexp(1).abs().max().item() < 1e-5,
          f"{lp[0, :3].tolist()[0]:.4f}")
    print("predict", pred.dtype, pred[:12].tolist(), (pred == lp.argmax(1)).all().item())
    gathered = lp.gather(1, corpus[1:41].unsqueeze(1)).squeeze(1)
    direct = asm(feats, corpus[1:41]).output
    print("forward == log_prob gather", torch.allclose(gathered, direct, atol=1e-5))
    one = asm(feats[3], corpus[4])
    print("unbatched", tuple(one.output.shape), f"{one.output.item():.4f}",
          f"{one.loss.item():.4f}")
    rare = torch.tensor([150, 399, 5, 21])
    print("rare targets", [f"{v:.4f}" for v in asm(feats[:4], rare).output.tolist()])

# sample a continuation word by word from the full adaptive-softmax distribution
with torch.no_grad():
    words = corpus[:8].clone()
    wgen = torch.Generator().manual_seed(5)
    for _ in range(10):
        last = lm.features(words[-24:].unsqueeze(0))[0, -1:]
        probs = (asm.log_prob(last)[0] / 0.9).softmax(-1)
        words = torch.cat([words, torch.multinomial(probs, 1, generator=wgen)])
    print("sampled words", words[8:].tolist(),
          asm.predict(lm.features(words.unsqueeze(0))[0])[-5:].tolist())

# ---- typical mistakes
conv = nn.Conv1d(4, 8, 3)
show_error("wrong channels", lambda: conv(torch.randn(2, 5, 10)))
show_error("too short", lambda: conv(torch.randn(2, 4, 2)))
show_error("groups", lambda: nn.Conv1d(6, 8, 3, groups=4))
show_error("one_hot", lambda: F.one_hot(torch.tensor([3, 300]), 256))
show_error("one_hot float", lambda: F.one_hot(torch.tensor([1.0, 2.0]), 4))
show_error("output_padding", lambda: nn.ConvTranspose1d(4, 4, 3, stride=2, output_padding=2)(
    torch.randn(1, 4, 5)))
show_error("output_size", lambda: up(cond_slow, output_size=[900]))
show_error("weight_norm twice", lambda: nn.utils.weight_norm(old))
show_error("onecycle overrun", lambda: [sched.step() for _ in range(3)])
show_error("cutoffs unsorted", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 50, [20, 10]))
show_error("cutoffs too big", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 50, [10, 50]))
show_error("cutoffs empty", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 50, []))
show_error("target range", lambda: asm(feats[:3], torch.tensor([1, 400, 2])))
show_error("negative target", lambda: asm(feats[:3], torch.tensor([1, -1, 2])))
show_error("batch mismatch", lambda: asm(feats[:3], torch.tensor([1, 2])))
show_error("2d target", lambda: asm(feats[:4], torch.tensor([[1, 2], [3, 4]])))
show_error("1d input", lambda: asm(feats[0], torch.tensor([1])))
def clip_nonfinite():
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.tensor([float("inf"), 1.0])
    return nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


show_error("nonfinite grad", clip_nonfinite)
show_error("bucketize unsorted 2d", lambda: torch.bucketize(torch.tensor([0.5]), torch.ones(2, 2)))
