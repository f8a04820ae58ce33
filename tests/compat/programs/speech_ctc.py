"""A tiny speech recogniser trained with CTC on synthetic "utterances": a temporal convolutional
network (dilated causal Conv1d with left padding, weight normalisation old and new, GroupNorm,
Dropout1d, residual blocks) feeds a bidirectional two-layer LSTM run on packed variable-length
batches; a CTC head is trained for a few steps and decoded greedily. Also exercises GRUCell,
pack_sequence / PackedSequence, F.ctc_loss's options and the errors of typical mistakes."""

import warnings

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.nn.utils import parametrize
from torch.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

torch.manual_seed(0)

# ---- synthetic utterances: each "phoneme" k in 1..4 is a noisy tone pattern held a few frames
n_feats, n_classes, blank = 6, 5, 0  # class 0 is the CTC blank
prototypes = torch.randn(n_classes, n_feats)


def make_utterance(gen):
    n_tokens = int(torch.randint(2, 5, (1,), generator=gen))
    labels = torch.randint(1, n_classes, (n_tokens,), generator=gen)
    frames = []
    for k in labels.tolist():
        hold = int(torch.randint(2, 4, (1,), generator=gen))
        frames.append(prototypes[k].expand(hold, n_feats))
        frames.append(0.1 * torch.randn(1, n_feats, generator=gen))  # a short pause
    x = torch.cat(frames) + 0.3 * torch.randn(sum(f.shape[0] for f in frames), n_feats,
                                                generator=gen)
    return x, labels


gen = torch.Generator().manual_seed(1234)
utterances = [make_utterance(gen) for _ in range(24)]
feats = [u[0] for u in utterances]
labels = [u[1] for u in utterances]
in_lens = torch.tensor([f.shape[0] for f in feats])
tgt_lens = torch.tensor([len(l) for l in labels])
print("lengths", in_lens.tolist())
print("targets", tgt_lens.tolist(), labels[0].tolist(), labels[1].tolist())
padded = pad_sequence(feats, batch_first=True)  # (B, T, F)
padded_targets = pad_sequence(labels, batch_first=True, padding_value=-1)
print(padded.shape, padded_targets.shape, padded_targets[:3])
print("pad_sequence time-major", pad_sequence(feats[:3]).shape,
      pad_sequence(labels[:3], padding_side="left", padding_value=0)[:, :2].T)


# ---- temporal convolutional network
class CausalConv1d(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, dilation, old_style=False):
        super().__init__()
        self.left = (kernel_size - 1) * dilation
        conv = nn.Conv1d(c_in, c_out, kernel_size, dilation=dilation)
        if old_style:
            self.conv = nn.utils.weight_norm(conv, name="weight", dim=0)
        else:
            self.conv = nn.utils.parametrizations.weight_norm(conv)

    def forward(self, x):
        return self.conv(F.pad(x, (self.left, 0)))


class TemporalBlock(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, dilation, dropout=0.1, old_style=False):
        super().__init__()
        self.conv1 = CausalConv1d(c_in, c_out, kernel_size, dilation, old_style)
        self.norm1 = nn.GroupNorm(2, c_out, eps=1e-5, affine=True)
        self.conv2 = CausalConv1d(c_out, c_out, kernel_size, dilation, old_style)
        self.norm2 = nn.GroupNorm(num_groups=4, num_channels=c_out)
        self.drop = nn.Dropout1d(p=dropout)
        self.down = nn.Conv1d(c_in, c_out, 1, bias=False) if c_in != c_out else nn.Identity()

    def forward(self, x):
        h = self.drop(F.relu(self.norm1(self.conv1(x))))
        h = self.drop(F.gelu(self.norm2(self.conv2(h)), approximate="tanh"))
        return F.relu(h + self.down(x))


class TCN(nn.Module):
    def __init__(self, c_in, channels=(8, 8), kernel_size=3):
        super().__init__()
        layers = []
        for i, c in enumerate(channels):
            layers.append(TemporalBlock(c_in if i == 0 else channels[i - 1], c, kernel_size,
                                        dilation=2 ** i, old_style=(i == 1)))
        self.net = nn.Sequential(*layers)

    def forward(self, x):  # x: (B, C, T)
        return self.net(x)


class Recognizer(nn.Module):
    def __init__(self, n_feats, n_classes, hidden=8):
        super().__init__()
        self.tcn = TCN(n_feats)
        self.rnn = nn.LSTM(8, hidden, num_layers=2, bidirectional=True, batch_first=True,
                           dropout=0.1)
        self.head = nn.Linear(2 * hidden, n_classes)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, lengths):
        h = self.tcn(x.transpose(1, 2)).transpose(1, 2)  # (B, T, C)
        packed = pack_padded_sequence(h, lengths, batch_first=True, enforce_sorted=False)
        out, (hn, cn) = self.rnn(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        logits = self.head(self.drop(out))
        return logits.log_softmax(-1).transpose(0, 1), out_lens  # (T, B, C) for CTC


torch.manual_seed(0)
model = Recognizer(n_feats, n_classes)
print(model.tcn.net[0])
print(model.tcn.net[1].conv1.conv)
print(model.rnn, model.head)
print("params", sum(p.numel() for p in model.parameters()))
print([k for k in model.state_dict() if "net.0.conv1" in k or "net.1.conv1" in k])
wn = model.tcn.net[0].conv1.conv
print(type(wn).__name__, parametrize.is_parametrized(wn), parametrize.is_parametrized(wn, "bias"))
print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)
print("g norm", wn.parametrizations.weight.original0.flatten()[:4])
old = model.tcn.net[1].conv1.conv
print(old.weight_g.shape, old.weight_v.shape, torch.allclose(old.weight_g.flatten(),
                                                            old.weight_v.flatten(1).norm(dim=1)))

# ---- causality: a change at frame t must not change outputs before t
model.eval()
with torch.no_grad():
    x = padded[:1, :10].transpose(1, 2).clone()
    first = model.tcn.net[0].conv1
    y1 = first(x)
    x[..., 6] += 1.0
    y2 = first(x)
    print("causal", (y1 - y2).abs().amax(dim=1).gt(0).int().tolist())
    # GroupNorm pools statistics over the whole sequence, so the full block is not causal
    print("block", (model.tcn(x) - model.tcn(x - 1.0)).abs().amax(dim=1).gt(0).int().tolist())

# ---- CTC training
ctc = nn.CTCLoss(blank=blank, reduction="mean", zero_infinity=True)
print(ctc, ctc.blank, ctc.reduction, ctc.zero_infinity)
flat_targets = torch.cat(labels)
opt = optim.Adam(model.parameters(), lr=2e-2)
model.train()
torch.manual_seed(1)
for step in range(60):
    idx = torch.arange(step * 8, step * 8 + 8) % len(feats)
    batch = pad_sequence([feats[i] for i in idx], batch_first=True)
    log_probs, out_lens = model(batch, in_lens[idx])
    targets = pad_sequence([labels[i] for i in idx], batch_first=True)
    loss = ctc(log_probs, targets, in_lens[idx], tgt_lens[idx])
    opt.zero_grad()
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
    opt.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step:2d}  ctc {loss.item():.4f}  grad norm {gnorm.item():.3f}  "
              f"T {tuple(log_probs.shape)}")


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(-1).T  # (B, T)
    hyps = []
    for seq, n in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(seq[:n])
        hyps.append(collapsed[collapsed != blank].tolist())
    return hyps


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


model.eval()
with torch.no_grad():
    log_probs, out_lens = model(padded, in_lens)
    print("out lens equal", torch.equal(out_lens, in_lens), out_lens.dtype)
    full = F.ctc_loss(log_probs, flat_targets, in_lens, tgt_lens, reduction="none")
    print("per-utterance", full[:6])
    print("sum", F.ctc_loss(log_probs, flat_targets, in_lens, tgt_lens, reduction="sum"))
    mean = F.ctc_loss(log_probs, padded_targets.clamp(min=0), in_lens, tgt_lens)
    print("mean", mean, (full / tgt_lens).mean())
    hyps = greedy_decode(log_probs, in_lens)
    errors = sum(edit_distance(h, l.tolist()) for h, l in zip(hyps, labels))
    print("decoded", hyps[:4], "truth", [l.tolist() for l in labels[:4]])
    print("token errors", errors, "of", int(tgt_lens.sum()))
    vals, inv, counts = torch.unique_consecutive(log_probs[:, 0].argmax(-1), return_inverse=True,
                                                 return_counts=True)
    print("runs", vals.tolist(), counts.tolist(), inv[:8].tolist())
    print("frame posteriors", log_probs[:4, 0].exp())

# ---- F.ctc_loss options: impossible alignments, zero_infinity, blank index, int32 lengths
torch.manual_seed(2)
lp = torch.randn(6, 2, 4).log_softmax(2).requires_grad_()
tg = torch.tensor([[1, 1, 2, 3, 2], [2, 3, 0, 0, 0]])
il = torch.tensor([6, 6], dtype=torch.int32)
tl = torch.tensor([5, 2], dtype=torch.int32)  # the repeated 1, 1 needs a blank between
print("ctc none", F.ctc_loss(lp, tg, il, tl, reduction="none"))
short = torch.tensor([3, 6])
inf_loss = F.ctc_loss(lp, tg, short, tl, reduction="none")
print("impossible", inf_loss)
zi = F.ctc_loss(lp, tg, short, tl, reduction="none", zero_infinity=True)
print("zero_infinity", zi)
zi.sum().backward()
print("grad finite", torch.isfinite(lp.grad).all().item(), lp.grad[:, 0].abs().sum().item())
lp.grad = None
F.ctc_loss(lp, tg, (6, 6), (5, 2), reduction="sum").backward()
print("grad rows sum to 0", lp.grad.sum(-1).abs().max().item() < 1e-5, lp.grad[0])
lp3 = torch.randn(5, 1, 4).log_softmax(-1)
print("blank=3", round(F.ctc_loss(lp3, torch.tensor([[0, 1]]), [5], [2], blank=3).item(), 4),
      f'{nn.CTCLoss(blank=3, reduction="sum")(lp3, torch.tensor([0, 1]), (5,), (2,)).item():.4f}')
unbatched = F.ctc_loss(lp3[:, 0], torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2))
print("unbatched", unbatched.shape, round(unbatched.item(), 4))
lp64 = lp.detach().double()
print("float64", F.ctc_loss(lp64, tg, il, tl, reduction="none").dtype)

# ---- pack_sequence and PackedSequence attributes
torch.manual_seed(3)
seqs = [torch.randn(3, 2), torch.randn(5, 2), torch.randn(2, 2)]
packed = pack_sequence(seqs, enforce_sorted=False)
print(type(packed).__name__, isinstance(packed, tuple), packed.data.shape)
print("batch_sizes", packed.batch_sizes, packed.batch_sizes.dtype)
print("sorted", packed.sorted_indices, "unsorted", packed.unsorted_indices)
print(packed.is_cuda, packed.data.dtype, packed.to(torch.float64).data.dtype,
      packed.double().data.dtype, packed.cpu().batch_sizes.tolist(), packed.is_pinned())
data, batch_sizes, sorted_indices, unsorted_indices = packed
print(torch.equal(data, packed[0]), batch_sizes.tolist())
unpacked, lens = pad_packed_sequence(packed, padding_value=-9.0)
print(unpacked.shape, lens, unpacked[:, 2, 0])
sorted_packed = pack_sequence(sorted(seqs, key=len, reverse=True))
print(sorted_packed.sorted_indices, sorted_packed.unsorted_indices)
print(PackedSequence._fields)
pps = pack_padded_sequence(torch.zeros(5, 3, 2), torch.tensor([5, 3, 2]))
print(pps.batch_sizes.tolist(), pps.sorted_indices)

print([tuple(t.shape) for t in unpack_sequence(packed)],
      [tuple(t.shape) for t in unpad_sequence(unpacked.clone(), lens)])
print([t[:, 0] for t in unpad_sequence(unpacked.transpose(0, 1), lens, batch_first=True)][2])

# final states of a packed batch come back in the caller's order, not the sorted one
torch.manual_seed(6)
rnn = nn.LSTM(2, 3, num_layers=1, bidirectional=True, proj_size=2)
print(rnn, [tuple(p.shape) for p in rnn.parameters()][:5])
out, (hn, cn) = rnn(packed)
print(type(out).__name__, out.data.shape, hn.shape, cn.shape)
padded_out, _ = pad_packed_sequence(out)
last = padded_out[lens - 1, torch.arange(3), :2]
print("hn fwd equals last step", torch.allclose(hn[0], last), hn[1])
rnn_relu = nn.RNN(2, 4, nonlinearity="relu", bias=False, batch_first=True)
o, h_last = rnn_relu(pack_sequence(seqs, enforce_sorted=False))
print(rnn_relu, o.data.shape, h_last.squeeze(0))
padded_o, _ = pad_packed_sequence(o, batch_first=True, total_length=7)
print(padded_o.shape, padded_o.grad_fn.name(), pad_packed_sequence(o)[0].grad_fn.name())
o_sorted, _ = rnn_relu(pack_sequence(sorted(seqs, key=len, reverse=True)))
print([pad_packed_sequence(o_sorted, batch_first=b)[0].grad_fn.name() for b in (False, True)])

# ---- GRUCell: a streaming decoder consuming one frame at a time
torch.manual_seed(4)
cell = nn.GRUCell(n_feats, 5, bias=True)
print(cell, cell.weight_ih.shape, cell.weight_hh.shape)
h = torch.zeros(2, 5)
with torch.no_grad():
    for t in range(6):
        h = cell(padded[:2, t], h)
    print("gru cell", h)
    print("unbatched cell", cell(padded[0, 0]).shape, cell(padded[0, 0], h[0]).shape)

# ---- state_dict round trips and removing the weight norms
with torch.no_grad():
    ref, _ = model(padded[:3], in_lens[:3])
sd = model.state_dict()
print(len(sd), list(sd)[:3])
torch.manual_seed(99)
clone = Recognizer(n_feats, n_classes)
missing = clone.load_state_dict(sd)
print(missing)
clone.eval()
with torch.no_grad():
    out, _ = clone(padded[:3], in_lens[:3])
print("round trip equal", torch.equal(out, ref))
block = clone.tcn.net[0].conv1
parametrize.remove_parametrizations(block.conv, "weight", leave_parametrized=True)
old_conv = clone.tcn.net[1].conv1.conv
nn.utils.remove_weight_norm(old_conv)
print(type(block.conv).__name__, sorted(n for n, _ in old_conv.named_parameters()))
with torch.no_grad():
    out2, _ = clone(padded[:3], in_lens[:3])
print("after removal close", torch.allclose(out2, ref, atol=1e-6), (out2 - ref).abs().max() < 1e-5)
strict = clone.load_state_dict(sd, strict=False)
print("non-strict missing", sorted(strict.missing_keys)[:2], len(strict.unexpected_keys))

# ---- typical mistakes
torch.manual_seed(5)


def show(fn):
    try:
        fn()
        print("no error")
    except Exception as e:
        print(type(e).__name__ + ":", str(e).split("\n")[0])


x = torch.randn(3, 4, 2)
show(lambda: pack_padded_sequence(x, torch.tensor([2, 4, 3]), batch_first=True))
show(lambda: pack_padded_sequence(x, torch.tensor([4, 0, 3]), batch_first=True,
                                  enforce_sorted=False))
show(lambda: pack_padded_sequence(x, [4, 3], batch_first=True))
show(lambda: pack_sequence([torch.randn(2, 2), torch.randn(3, 2)]))
show(lambda: nn.LSTM(3, 4)(torch.randn(5, 2, 2)))
show(lambda: nn.LSTM(2, 4, num_layers=2)(torch.randn(5, 1, 2),
                                         (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))))
show(lambda: nn.GRUCell(2, 3)(torch.randn(4, 2), torch.randn(2, 3)))
show(lambda: nn.Conv1d(4, 2, 3)(torch.randn(1, 3, 10)))
show(lambda: nn.GroupNorm(3, 8))
show(lambda: nn.utils.weight_norm(nn.utils.weight_norm(nn.Conv1d(2, 2, 3))))
show(lambda: nn.utils.remove_weight_norm(nn.Conv1d(2, 2, 3)))
show(lambda: F.ctc_loss(torch.randn(4, 2, 3).log_softmax(2), torch.tensor([[1, 2], [1, 1]]),
                        torch.tensor([4, 5]), torch.tensor([2, 2])))
show(lambda: F.ctc_loss(torch.randn(4, 2, 3).log_softmax(2), torch.tensor([[1, 2], [1, 1]]),
                        torch.tensor([4, 4]), torch.tensor([2, 3])))
show(lambda: F.ctc_loss(torch.randn(4, 2, 3).log_softmax(2), torch.tensor([1, 2, 1]),
                        torch.tensor([4, 4]), torch.tensor([2, 2])))
show(lambda: nn.Dropout1d(p=1.5))
show(lambda: F.pad(torch.randn(1, 2, 3), (1, 2, 3)))
drop = nn.Dropout1d(0.5)
print(drop, drop(torch.ones(2, 3, 4)).shape)
print(nn.Dropout(p=0.25, inplace=True), nn.GroupNorm(2, 4, affine=False))

# ---- more of the toolbox: initial states of packed batches, padding modes, norms, converting
# an old weight_norm checkpoint, CTC corner cases
torch.manual_seed(7)
gru = nn.GRU(2, 3, num_layers=2, bidirectional=True)
h0 = torch.randn(4, 3, 3)
packed = pack_sequence(seqs, enforce_sorted=False)
out, hn = gru(packed, h0)
ref = [gru(s.unsqueeze(1), h0[:, i:i + 1])[1] for i, s in enumerate(seqs)]
print("packed h0 per sequence", torch.allclose(hn, torch.cat(ref, 1), atol=1e-6), hn[-1, 1])
lstm = nn.LSTM(2, 3, batch_first=True)
hx = (torch.randn(1, 3, 3), torch.randn(1, 3, 3))
o, (hn, cn) = lstm(pack_sequence(seqs, enforce_sorted=False), hx)
print("lstm packed hx", hn.squeeze(0)[:, 0], cn.shape)
sig = torch.arange(1.0, 7.0).view(1, 1, 6)
for mode in ("constant", "reflect", "replicate", "circular"):
    print(mode, F.pad(sig, (2, 1), mode=mode, **({"value": -1.0} if mode == "constant" else {})))
conv_same = nn.Conv1d(1, 2, 3, padding="same", dilation=2, padding_mode="replicate", bias=False)
print(conv_same, conv_same(sig).shape)
conv_circ = nn.Conv1d(1, 1, 4, padding=3, padding_mode="circular")
print(conv_circ(sig).shape)
gn = nn.GroupNorm(2, 4)
feat = torch.randn(3, 4) * 3 + 1
print("groupnorm 2d", gn(feat).std(1, unbiased=False), gn(feat).mean(1).abs().max() < 1e-6,
      F.group_norm(torch.randn(2, 4, 3, 3), 4).shape)
print("dropout1d unbatched", nn.Dropout1d(0.5)(torch.ones(6, 3)).tolist())
print("dropout1d eval", nn.Dropout1d(0.5).eval()(torch.ones(1, 2, 3)).sum().item())
wn_any = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2), dim=None)
print(wn_any.parametrizations.weight.original0, wn_any.parametrizations.weight.original1.shape)
wn1 = nn.utils.weight_norm(nn.Conv1d(2, 3, 2), dim=1)
print(wn1.weight_g.shape, wn1.weight_v.shape, hasattr(wn1, "weight"))
legacy = nn.utils.weight_norm(nn.Conv1d(2, 3, 2))
old_sd = legacy.state_dict()
print(sorted(old_sd))
modern = nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 3, 2))
print(modern.load_state_dict(old_sd))
print(torch.equal(modern.weight, legacy.weight), sorted(modern.state_dict()))
with parametrize.cached():
    print("cached", torch.equal(modern.weight, modern.weight))
print(torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3], [2, 3], [1, 1]]), dim=0))
print(torch.unique_consecutive(torch.tensor([0, 0, 2, 2, 2, 0, 3]), return_counts=True))

# CTC with empty targets, repeated labels that need blanks, and float64 gradients
raw = torch.randn(5, 3, 4, dtype=torch.float64, requires_grad=True)
lp = raw.log_softmax(-1)
targets = torch.tensor([1, 1, 2, 3])
print("empty target", F.ctc_loss(lp, targets, [5, 5, 4], [0, 2, 2], reduction="none"))
print("mean/0-len", F.ctc_loss(lp, targets, [5, 5, 4], [0, 2, 2]))
print("blank-only path", -lp[:, 0, 0].sum())
print("gradcheck", torch.autograd.gradcheck(
    lambda t: F.ctc_loss(t.log_softmax(-1), targets, [5, 5, 4], [0, 2, 2], reduction="sum"),
    (raw,)))
loss = nn.CTCLoss(reduction="none")(lp, torch.tensor([[1, 1], [2, 0], [3, 0]]),
                                    torch.tensor([5, 4, 3]), torch.tensor([2, 1, 1]))
print("CTCLoss padded rows", loss)
show(lambda: nn.GRU(2, 3, num_layers=2)(packed, torch.zeros(2, 2, 3)))
show(lambda: PackedSequence(torch.randn(4, 2), torch.tensor([2, 2]), None, None).data.shape)
show(lambda: pack_padded_sequence(torch.randn(3, 2), torch.tensor([[3], [2]])))
show(lambda: pad_sequence([torch.randn(2, 3), torch.randn(2, 4)]))
show(lambda: nn.utils.parametrizations.weight_norm(nn.Linear(2, 2), name="scale"))
show(lambda: F.pad(torch.randn(1, 1, 3), (4, 0), mode="reflect"))

# ---- a spectrogram front end and a depthwise-separable conv stack, as in QuartzNet-style models
torch.manual_seed(8)
t = torch.arange(400) / 400.0
wave = torch.sin(2 * torch.pi * 40 * t) + 0.5 * torch.sin(2 * torch.pi * 90 * t * (1 + t))
wave = wave + 0.05 * torch.randn(400)
window = torch.hann_window(64, periodic=True)
spec = torch.stft(wave, n_fft=64, hop_length=16, win_length=64, window=window, center=True,
                  pad_mode="reflect", normalized=False, onesided=True, return_complex=True)
print("stft", spec.shape, spec.dtype)
power = spec.abs().pow(2)
log_spec = torch.log(power.clamp(min=1e-10))
print("peak bins", power.argmax(0)[:8].tolist(), f"{log_spec.mean().item():.3f}")
back = torch.istft(spec, n_fft=64, hop_length=16, win_length=64, window=window, length=400)
print("istft error < 1e-5", (back - wave).abs().max().item() < 1e-5)
frames = wave.unfold(0, 64, 16)
print("frames", frames.shape, torch.hamming_window(5), torch.kaiser_window(4, False, 8.0))
show(lambda: torch.kaiser_window(4, beta=8.0))
x = log_spec.unsqueeze(0)  # (1, 33, frames)
x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
sep = nn.Sequential(
    nn.Conv1d(33, 33, 5, padding=2, groups=33, bias=False),  # depthwise
    nn.Conv1d(33, 16, 1),  # pointwise
    nn.BatchNorm1d(16, momentum=0.1),
    nn.ReLU(),
    nn.MaxPool1d(2, stride=2, ceil_mode=True),
    nn.AdaptiveAvgPool1d(4),
)
y = sep(x)
print(sep[0], y.shape, sep[2].running_mean[:3])
print("pooled", y[0, :3])
pooled, where = F.max_pool1d(x[:, :2], 3, stride=2, return_indices=True)
print(pooled.shape, where[0, 0].tolist())
print("upsampled", F.interpolate(torch.arange(4.0).view(1, 1, 4), scale_factor=2, mode="linear",
                                 align_corners=False))

# ---- warnings and more mistakes people make with recurrent layers and CTC
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nn.LSTM(4, 4, num_layers=1, dropout=0.3)
    nn.utils.weight_norm(nn.Linear(2, 2))
    nn.Dropout1d(0.2)(torch.ones(3, 5))
    nn.GRU(2, 2).flatten_parameters()
for w in caught:
    print(w.category.__name__, str(w.message).split("\n")[0][:90])
unb = nn.GRU(3, 4, num_layers=2)
o, h = unb(torch.randn(5, 3), torch.zeros(2, 4))
print("unbatched gru", o.shape, h.shape)
print(unb._flat_weights_names[:4], len(unb.all_weights),
      [tuple(w.shape) for w in unb.all_weights[1]])
show(lambda: nn.GRU(3, 4)(torch.randn(5, 2, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))))
show(lambda: nn.LSTM(3, 4)(torch.randn(5, 2, 3), torch.zeros(1, 2, 4)))
show(lambda: nn.LSTM(3, 4)(torch.randn(5, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))))
show(lambda: nn.LSTM(3, 4)(torch.randn(2, 5, 2, 3)))
show(lambda: pad_packed_sequence(pack_sequence(seqs, enforce_sorted=False), total_length=3))
show(lambda: pack_sequence([]))
show(lambda: nn.CTCLoss(reduction="avg")(torch.randn(4, 1, 3).log_softmax(2), torch.tensor([[1]]),
                                         [4], [1]))
show(lambda: F.ctc_loss(torch.randn(4, 1, 3).half().log_softmax(2), torch.tensor([[1]]), [4], [1]))
show(lambda: F.ctc_loss(torch.randn(4, 1, 3).log_softmax(2), torch.tensor([[1.0]]), [4], [1]))
show(lambda: F.ctc_loss(torch.randn(4, 3), torch.tensor([[1]]), [4], [1]))
show(lambda: nn.GRUCell(3, 4)(torch.randn(2, 2, 3)))
show(lambda: nn.Conv1d(2, 2, 3, padding="same", stride=2))
show(lambda: nn.Conv1d(2, 2, 3, padding="causal"))
show(lambda: nn.Conv1d(2, 2, 5)(torch.randn(1, 2, 3)))
show(lambda: nn.GroupNorm(2, 4)(torch.randn(2, 3, 5)))
show(lambda: torch.stft(torch.randn(100), 32))
show(lambda: torch.unique_consecutive(torch.tensor([1, 1, 2]), dim=1))
