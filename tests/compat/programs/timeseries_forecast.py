"""Time-series forecasting: unfold/as_strided windows, per-feature normalisation, a dilated
causal TCN with weight norm, a bidirectional GRU and a proj_size LSTM over packed ragged
sequences, a causal Transformer encoder; SmoothL1/Huber/pinball/Gaussian NLL losses, MAPE,
Adam(amsgrad)/RMSprop(centered) with OneCycleLR and warm restarts, clipping, early stopping,
autoregressive rollout, teacher forcing, and typical packing/window/loss mistakes."""

import copy
import random
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
)

torch.manual_seed(0)
random.seed(0)


def warned(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    for w in caught:
        print("  warning:", w.category.__name__, str(w.message).split(" (Triggered")[0])
    return result


# ---- a synthetic 3-feature series with trend, seasonality and noise
T, WIN, HORIZON = 160, 16, 4
t = torch.linspace(0, 8 * torch.pi, T)
series = torch.stack([torch.sin(t) + 0.05 * t, torch.cos(0.5 * t) * 2.0,
                      0.3 * torch.sin(3 * t) + 0.1 * torch.randn(T)], dim=1)
print(series.shape, series.dtype, series[:2])
mean = series.mean(dim=0, keepdim=True)
std = series.std(dim=0, keepdim=True, unbiased=False)
norm = (series - mean) / std
print("mean", mean, "std", std, "var", series.var(0, correction=0))
print("one-step windows", warned(torch.std_mean, series[:1], dim=0)[0])

windows = norm.unfold(0, WIN + HORIZON, 1)  # (N, features, WIN + HORIZON)
print("unfold", windows.shape, windows.stride(), windows.is_contiguous())
strided = norm.as_strided((T - WIN - HORIZON + 1, WIN + HORIZON, 3), (3, 3, 1))
print("as_strided equal", torch.equal(strided.transpose(1, 2), windows))
x_all, y_all = strided[:, :WIN], strided[:, WIN:, 0]
split = int(0.8 * len(x_all))
x_tr, y_tr, x_va, y_va = x_all[:split], y_all[:split], x_all[split:], y_all[split:]
print("train", x_tr.shape, y_tr.shape, "val", x_va.shape, y_va.shape)


# ---- (1) a temporal convolutional network
class CausalBlock(nn.Module):
    def __init__(self, c_in, c_out, k, dilation):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv = nn.utils.parametrizations.weight_norm(
            nn.Conv1d(c_in, c_out, k, dilation=dilation, padding=self.pad))
        self.down = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else None
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        y = self.conv(x)[:, :, :-self.pad]  # chomp the right padding
        y = self.drop(F.relu(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(CausalBlock(3, 8, 3, 1), CausalBlock(8, 8, 3, 2))
        self.head = nn.Linear(8, HORIZON)

    def forward(self, x):  # x: (batch, time, features)
        return self.head(self.blocks(x.transpose(1, 2))[:, :, -1])


tcn = TCN()
print([(n, tuple(p.shape)) for n, p in tcn.blocks[0].named_parameters()])
old = warned(nn.utils.weight_norm, nn.Conv1d(3, 4, 2))
print(sorted(old._parameters), old.weight_g.shape)
nn.utils.remove_weight_norm(old)
print(sorted(old._parameters))
x_pad = F.pad(norm.T.unsqueeze(0), (4, 0))
print("left pad", x_pad.shape, x_pad[0, 0, :6])


def pinball(pred, target, quantiles):
    diff = target.unsqueeze(-1) - pred
    return torch.maximum(quantiles * diff, (quantiles - 1) * diff).mean()


def fit(model, opt, sched, epochs, loss_fn, clip=None, batch=16):
    best, best_state, wait = float("inf"), None, 0
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(x_tr))
        for i in range(0, len(x_tr), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(x_tr[idx]), y_tr[idx])
            loss.backward()
            if clip == "value":
                nn.utils.clip_grad_value_(model.parameters(), 0.5)
            else:
                total = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=2.0)
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            val = F.mse_loss(model(x_va), y_va).item()
        lr = sched.get_last_lr()[0]
        print(f"epoch {epoch} train {loss.item():.4f} val {val:.4f} lr {lr:.5f}",
              "" if clip == "value" else f"grad norm {total:.4f}")
        if val < best - 1e-4:
            best, best_state, wait = val, copy.deepcopy(model.state_dict()), 0
        elif (wait := wait + 1) >= 2:
            print("early stop at", epoch)
            break
    print(model.load_state_dict(best_state))
    return best


opt = torch.optim.Adam(tcn.parameters(), lr=0.01, amsgrad=True, weight_decay=1e-4)
onecycle = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.02, total_steps=4 * 8)
print("tcn best", round(fit(tcn, opt, onecycle, 4, nn.SmoothL1Loss(beta=0.5), clip="value"), 4))


# ---- (2) recurrent models over variable-length sequences
class GRUForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 6, num_layers=2, bidirectional=True, batch_first=True, dropout=0.1)
        self.head = nn.Linear(12, HORIZON)

    def forward(self, x, lengths=None):
        lengths = torch.full((len(x),), x.shape[1]) if lengths is None else lengths
        out, h = self.gru(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        out, out_len = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        idx = (out_len - 1).view(-1, 1, 1).expand(-1, 1, out.shape[2])  # last valid step
        return self.head(out.gather(1, idx).squeeze(1))


gru = GRUForecaster()
opt = torch.optim.RMSprop(gru.parameters(), lr=0.005, momentum=0.9, centered=True, alpha=0.95)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=1e-4)
print("gru best", round(fit(gru, opt, sched, 3, nn.HuberLoss(delta=0.7), clip="norm"), 4))

seqs = [norm[:5], norm[10:13], norm[20:27], norm[30:31]]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True, padding_value=-1.0)
print("padded", padded.shape, padded[3, :2])
packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
print("batch_sizes", packed.batch_sizes, "sorted", packed.sorted_indices, packed.unsorted_indices)
with torch.no_grad():
    print("gru on ragged", gru(padded, lengths)[:, :2])
by_len = pack_sequence(sorted(seqs, key=len, reverse=True))
print("pack_sequence", by_len.data.shape, by_len.batch_sizes)

lstm = nn.LSTM(3, 5, proj_size=2, batch_first=False)
h0, c0 = torch.zeros(1, 4, 2), torch.randn(1, 4, 5) * 0.1
out, (hn, cn) = lstm(pad_sequence(seqs), (h0, c0))
print("lstm", out.shape, hn.shape, cn.shape, [tuple(p.shape) for p in lstm.parameters()])
packed_in = pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=False)
packed_out, (hn, cn) = lstm(packed_in, (h0, c0))
unpacked, lens = pad_packed_sequence(packed_out, total_length=8)
print("unpacked", unpacked.shape, lens, hn[0].round(decimals=4))


# ---- (3) a small causal Transformer encoder
class TinyTransformer(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inp = nn.Linear(3, d)
        self.pos = nn.Parameter(torch.randn(1, WIN, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, 2 * 3)  # mean and log-variance per quantile slot

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        h = self.enc(self.inp(x) + self.pos[:, :x.shape[1]], mask=mask, is_causal=True)
        return self.head(h[:, -1])


print(nn.Transformer.generate_square_subsequent_mask(4))
tr = TinyTransformer()
pad_mask = torch.tensor([[False] * WIN, [True] * 3 + [False] * (WIN - 3)])
causal = nn.Transformer.generate_square_subsequent_mask(WIN)
out = warned(tr.enc, torch.randn(2, WIN, 16), mask=causal, src_key_padding_mask=pad_mask)
print("padded encoder", out.shape, out[1, -1, :4])
opt = torch.optim.AdamW(tr.parameters(), lr=0.005)
gnll = nn.GaussianNLLLoss(full=True, eps=1e-4)
qs = torch.tensor([0.1, 0.5, 0.9])
for step in range(30):
    idx = torch.randint(0, len(x_tr), (16,))
    out = tr(x_tr[idx])
    mu, var = out[:, :3], F.softplus(out[:, 3:])
    target = y_tr[idx, :1].expand(-1, 3)
    loss = gnll(mu, target, var) + pinball(mu, y_tr[idx, 0], qs)
    opt.zero_grad(), loss.backward(), opt.step()
    if step % 10 == 9:
        print(f"transformer step {step} loss {loss.item():.4f}")

# a ReLU variance head can predict exactly 0: GaussianNLLLoss clamps it to eps (the gradient
# still flows through the clamp)
raw_var = torch.tensor([[0.0, 0.5, 1e-6], [2.0, 0.0, 0.3]], requires_grad=True)
nll = nn.GaussianNLLLoss(eps=1e-3)(torch.zeros(2, 3), torch.full((2, 3), 0.1), F.relu(raw_var))
nll.backward()
print("gaussian nll", round(nll.item(), 4), raw_var.grad)

# ---- evaluation: metrics and autoregressive rollout
with torch.no_grad():
    pred = tcn(x_va)
    for name, fn in [("mse", nn.MSELoss()), ("l1", nn.L1Loss()),
                     ("sum l1", nn.L1Loss(reduction="sum"))]:
        print(name, round(fn(pred, y_va).item(), 4))
    legacy = warned(nn.MSELoss, size_average=False)  # an old tutorial's flag
    huber64 = nn.HuberLoss(delta=0.5)(pred, y_va.double())  # a float64 target from numpy
    print(legacy.reduction, huber64.dtype, round(huber64.item(), 4))
    target = y_va * std[0, 0] + mean[0, 0]
    target[0, 0] = 0.0
    p = pred * std[0, 0] + mean[0, 0]
    ape = torch.where(target == 0, torch.zeros_like(p), (p - target).abs() / target.abs())
    smape = 2 * (p - target).abs() / (p.abs() + target.abs()).clamp_min(1e-8)
    print("MAPE", round(ape.mean().item() * 100, 2), "sMAPE", round(smape.mean().item() * 100, 2))

    context, steps = x_va[:2].clone(), []
    for _ in range(3):
        nxt = tcn(context)[:, :1]  # one step of feature 0
        new = torch.cat([nxt, context[:, -1:, 1:].squeeze(1)], dim=1).unsqueeze(1)
        context = torch.cat([context[:, 1:], new], dim=1)
        steps.append(nxt)
    print("rollout", torch.cat(steps, dim=1), context.shape)

# teacher forcing for a GRUCell decoder
cell, proj = nn.GRUCell(1, 8), nn.Linear(8, 1)
h, prev, outs = torch.zeros(4, 8), x_tr[:4, -1, :1], []
for k in range(HORIZON):
    h = cell(prev, h)
    outs.append(proj(h))
    prev = y_tr[:4, k:k + 1] if random.random() < 0.5 else outs[-1].detach()
dec = torch.cat(outs, dim=1)
print("teacher forced", dec.shape, round(F.mse_loss(dec, y_tr[:4]).item(), 4))

# ---- mistakes
kw = dict(batch_first=True, enforce_sorted=False)
mistakes = [
    ("unsorted lengths", lambda: pack_padded_sequence(padded, lengths, batch_first=True)),
    ("float lengths", lambda: pack_padded_sequence(padded, lengths.float(), **kw)),
    ("zero length", lambda: pack_padded_sequence(padded, torch.tensor([5, 3, 0, 1]), **kw)),
    ("conv rank", lambda: nn.Conv1d(3, 4, 2)(torch.randn(2, 3, 5, 5))),
    ("gru features", lambda: nn.GRU(3, 4)(torch.randn(5, 2, 4))),
    ("unfold size", lambda: norm.unfold(0, T + 1, 1)),
    ("unfold size -1", lambda: norm.unfold(0, -1, 1)),
    ("as_strided rank", lambda: norm.as_strided((4, 3), (3,))),
    ("lstm h0 shape", lambda: lstm(pad_sequence(seqs), (torch.zeros(1, 4, 5), c0))),
    ("lstm three states", lambda: lstm(pad_sequence(seqs), (h0, c0, c0))),
    ("pad side", lambda: pad_sequence(seqs, padding_side="both")),
    ("var shape", lambda: gnll(torch.zeros(2, 3), torch.ones(2, 3), torch.ones(3))),
    ("nll reduction", lambda: nn.GaussianNLLLoss(reduction="avg")(x_tr, x_tr, x_tr ** 2)),
    ("clip before backward", lambda: nn.utils.clip_grad_value_(nn.Linear(2, 2).parameters(), 1.0)),
    ("too many steps", lambda: [onecycle.step() for _ in range(40)]),
]
for name, fn in mistakes:
    try:
        fn()
        print(name, "ok")
    except Exception as e:
        print(name, type(e).__name__, e)
