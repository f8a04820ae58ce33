"""Quantization-aware training and post-training quantization, written by hand in floating
point (no quantized tensors): fake quantization per tensor and per channel, learnable
scales and zero points (LSQ), straight-through estimators, min/max and moving-average
observers (by hand, and torch's fused observer + fake quant), symmetric and affine
qparams, per-channel weight quantization of a small MLP and CNN with accuracy before and
after, an int8 matmul emulated with int32 accumulation and a fixed-point requantization,
bias correction, SQNR, int4 packing with bitwise ops, and the usual mistakes.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show(label, fn):
    """Print fn()'s value, or the type and first line of the error it raises."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - a user catching any mistake
        print(label, "->", type(e).__name__ + ":", str(e).splitlines()[0])
    else:
        print(label, "->", out)


def fmt(t, digits=4):
    return "[" + ", ".join(f"{v:.{digits}f}" for v in t.flatten().tolist()) + "]"


def sqnr_db(x, xq):
    """Signal-to-quantization-noise ratio in dB."""
    noise = (x - xq).pow(2).sum()
    return (10 * torch.log10(x.pow(2).sum() / noise)).item()


# -- qparams by hand: affine and symmetric ---------------------------------------------
def affine_qparams(lo, hi, qmin=0, qmax=255):
    lo = torch.clamp(lo, max=0.0)
    hi = torch.clamp(hi, min=0.0)
    scale = (hi - lo) / float(qmax - qmin)
    scale = torch.clamp(scale, min=torch.finfo(torch.float32).eps)
    zp = qmin - torch.round(lo / scale)
    zp = torch.clamp(zp, qmin, qmax).to(torch.int32)
    return scale, zp


def symmetric_qparams(lo, hi, qmin=-128, qmax=127):
    amax = torch.maximum(-lo, hi)
    scale = amax / ((qmax - qmin) / 2)
    scale = torch.clamp(scale, min=torch.finfo(torch.float32).eps)
    return scale, torch.zeros_like(scale, dtype=torch.int32)


x = torch.randn(6, 5) * 2 + 0.5
lo, hi = torch.aminmax(x)
print("aminmax", f"{lo.item():.5f}", f"{hi.item():.5f}", lo.dtype)
s_a, z_a = affine_qparams(lo, hi)
s_s, z_s = symmetric_qparams(lo, hi)
print("affine", f"{s_a.item():.6f}", z_a.item(), z_a.dtype)
print("symmetric", f"{s_s.item():.6f}", z_s.item())
print("round half even", torch.round(torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])).tolist())
print(
    "round decimals", torch.round(torch.tensor([1.23456, -7.65432, 0.00049]), decimals=3).tolist()
)
print(
    "round neg decimals", torch.round(torch.tensor([1234.5, 1250.0, -1350.0]), decimals=-2).tolist()
)

fq_a = torch.fake_quantize_per_tensor_affine(x, s_a.item(), int(z_a.item()), 0, 255)
fq_t = torch.fake_quantize_per_tensor_affine(x, s_a, z_a, 0, 255)
fq_s = torch.fake_quantize_per_tensor_affine(x, s_s, z_s, -128, 127)
print("fq float/tensor qparams equal", torch.equal(fq_a, fq_t))
print("fq affine row", fmt(fq_a[0]))
print("fq symmetric row", fmt(fq_s[0]))
print(f"SQNR affine {sqnr_db(x, fq_a):.3f} dB, symmetric {sqnr_db(x, fq_s):.3f} dB")
for bits in (8, 6, 4, 3, 2):
    qmax = 2 ** (bits - 1) - 1
    s = x.abs().max() / qmax
    xq = torch.fake_quantize_per_tensor_affine(x, s.item(), 0, -qmax - 1, qmax)
    levels = torch.unique(xq).numel()
    print(f"bits={bits} levels={levels} SQNR={sqnr_db(x, xq):.3f} dB")

# manual quantize/dequantize with clamp and round matches the built-in
q_manual = torch.clamp(torch.round(x / s_a) + z_a, 0, 255)
dq_manual = (q_manual - z_a) * s_a
print("manual vs builtin max diff", f"{(dq_manual - fq_a).abs().max().item():.3g}")


# -- straight-through estimators ----------------------------------------------------------
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp, scale, lo_q, hi_q):
        ctx.save_for_backward(inp)
        ctx.bounds = (lo_q * scale, hi_q * scale)
        return torch.clamp(torch.round(inp / scale), lo_q, hi_q) * scale

    @staticmethod
    def backward(ctx, grad):
        (inp,) = ctx.saved_tensors
        lo_b, hi_b = ctx.bounds
        inside = (inp >= lo_b) & (inp <= hi_b)
        return grad * inside.to(grad.dtype), None, None, None


w = torch.linspace(-1.5, 1.5, 7, requires_grad=True)
y = RoundSTE.apply(w, 0.25, -4, 3)
y.backward(torch.arange(1.0, 8.0))
print("STE fn", fmt(y.detach()), y.grad_fn.__class__.__name__, "grad", w.grad.tolist())
w.grad = None
q = torch.clamp(torch.round(w / 0.25), -4, 3) * 0.25
y2 = w + (q - w).detach()
y2.backward(torch.arange(1.0, 8.0))
print("STE detach", fmt(y2.detach()), y2.grad_fn.name(), "grad", w.grad.tolist())
w.grad = None
y3 = torch.fake_quantize_per_tensor_affine(w, 0.25, 0, -4, 3)
y3.backward(torch.arange(1.0, 8.0))
print("fake_quant STE", fmt(y3.detach()), y3.grad_fn.name(), "grad", w.grad.tolist())
w.grad = None
y4 = torch.fake_quantize_per_tensor_affine(w, torch.tensor(0.25), torch.tensor(0), -4, 3)
print("tensor-qparams node", y4.grad_fn.name())

# -- per-channel fake quant ----------------------------------------------------------------
W = torch.randn(4, 6) * torch.tensor([[0.1], [1.0], [3.0], [0.5]])
ch_lo, ch_hi = W.aminmax(dim=1)
ch_scale = torch.maximum(-ch_lo, ch_hi) / 127
zp32 = torch.zeros(4, dtype=torch.int32)
Wq = torch.fake_quantize_per_channel_affine(W, ch_scale, zp32, 0, -128, 127)
Wt = torch.fake_quantize_per_tensor_affine(W, (W.abs().max() / 127).item(), 0, -128, 127)
print("channel scales", fmt(ch_scale, 6))
print(f"SQNR per-channel {sqnr_db(W, Wq):.3f} dB vs per-tensor {sqnr_db(W, Wt):.3f} dB")
zpf = torch.tensor([0.4, -1.6, 2.5, 0.0])
Wqf = torch.fake_quantize_per_channel_affine(W, ch_scale, zpf, 0, -128, 127)
print("float zero point row1", fmt(Wqf[1]))
Wcol = torch.fake_quantize_per_channel_affine(
    W, torch.full((6,), 0.05), torch.zeros(6, dtype=torch.int32), 1, -8, 7
)
print("axis=1 row0", fmt(Wcol[0]))
conv_w = torch.randn(3, 2, 3, 3)
cs = conv_w.abs().amax(dim=(1, 2, 3)) / 7
cq = torch.fake_quantize_per_channel_affine(conv_w, cs, torch.zeros(3, dtype=torch.int32), 0, -8, 7)
print("conv int4 levels per channel", [torch.unique(cq[i]).numel() for i in range(3)])
print(f"conv int4 SQNR {sqnr_db(conv_w, cq):.3f} dB")
Wg = W.clone().requires_grad_()
out = torch.fake_quantize_per_channel_affine(Wg, ch_scale * 0.5, zp32, 0, -128, 127)
out.sum().backward()
print("per-channel STE mask", Wg.grad.sum(dim=1).tolist(), out.grad_fn.name())


# -- observers -----------------------------------------------------------------------------
class MinMaxObserver:
    def __init__(self):
        self.lo = torch.tensor(float("inf"))
        self.hi = torch.tensor(float("-inf"))

    def __call__(self, t):
        lo, hi = torch.aminmax(t.detach())
        self.lo = torch.minimum(self.lo, lo)
        self.hi = torch.maximum(self.hi, hi)
        return t


class MovingAverageObserver:
    def __init__(self, momentum=0.1):
        self.m = momentum
        self.lo = None
        self.hi = None

    def __call__(self, t):
        lo, hi = torch.aminmax(t.detach())
        if self.lo is None:
            self.lo, self.hi = lo, hi
        else:
            self.lo = self.lo + self.m * (lo - self.lo)
            self.hi = self.hi + self.m * (hi - self.hi)
        return t


mm, ema = MinMaxObserver(), MovingAverageObserver(0.2)
for step in range(8):
    batch = torch.randn(32, 4) * (1 + 0.1 * step)
    if step == 5:
        batch[0, 0] = 25.0  # an outlier
    mm(batch)
    ema(batch)
print("minmax observer", f"{mm.lo.item():.4f}", f"{mm.hi.item():.4f}")
print("EMA observer", f"{ema.lo.item():.4f}", f"{ema.hi.item():.4f}")
for name, obs in (("minmax", mm), ("ema", ema)):
    s, z = affine_qparams(obs.lo, obs.hi)
    test = torch.randn(1000, 4) * 1.4
    tq = torch.fake_quantize_per_tensor_affine(test, s, z, 0, 255)
    print(f"{name}: scale={s.item():.5f} zp={z.item()} SQNR={sqnr_db(test, tq):.3f} dB")
per_ch_lo, per_ch_hi = torch.aminmax(torch.randn(16, 3) + torch.tensor([0.0, 5.0, -5.0]), dim=0)
print("per-channel aminmax", fmt(per_ch_lo), fmt(per_ch_hi))
print(
    "aminmax keepdim",
    torch.aminmax(torch.arange(12.0).reshape(3, 4), dim=1, keepdim=True).max.shape,
)

# -- learnable scale / zero point (LSQ) ----------------------------------------------------
xs = torch.randn(200) * 1.5
scale = torch.tensor([0.05], requires_grad=True)
zero = torch.tensor([3.0], requires_grad=True)
opt = torch.optim.Adam([scale, zero], lr=0.01)
grad_factor = 1.0 / math.sqrt(xs.numel() * 127)
for step in range(30):
    opt.zero_grad()
    xq = torch._fake_quantize_learnable_per_tensor_affine(xs, scale, zero, -128, 127, grad_factor)
    loss = F.mse_loss(xq, xs)
    loss.backward()
    if step == 0:
        print(
            "LSQ node",
            xq.grad_fn.name(),
            "grads",
            f"{scale.grad.item():.5g}",
            f"{zero.grad.item():.5g}",
        )
    opt.step()
    with torch.no_grad():
        scale.clamp_(min=1e-4)
print(f"LSQ scale={scale.item():.5f} zero={zero.item():.4f} loss={loss.item():.6f}")
xg = torch.tensor([2.5, 3.5, -0.5, 10.0, -10.0, 0.26, 1.7], requires_grad=True)
sg = torch.tensor([1.0], requires_grad=True)
for zv in (1.0, 1.5, 2.5, -1.5):
    xg.grad, sg.grad = None, None
    zg = torch.tensor([zv], requires_grad=True)
    yq = torch._fake_quantize_learnable_per_tensor_affine(xg, sg, zg, -4, 5, 0.5)
    yq.backward(torch.arange(1.0, 8.0))
    print(
        f"zp={zv}",
        yq.detach().tolist(),
        xg.grad.tolist(),
        f"{sg.grad.item():.4f}",
        f"{zg.grad.item():.4f}",
    )

Wl = torch.randn(3, 8) * torch.tensor([[0.2], [1.0], [2.0]])
ch_s = (Wl.abs().amax(dim=1) / 7).requires_grad_()
ch_z = torch.tensor([0.4, -0.6, 1.5], requires_grad=True)
Wlq = torch._fake_quantize_learnable_per_channel_affine(Wl, ch_s, ch_z, 0, -8, 7, 1.0)
F.mse_loss(Wlq, Wl).backward()
print("LSQ per-channel", Wlq.grad_fn.name(), fmt(ch_s.grad, 5), fmt(ch_z.grad, 5))
x2 = torch.tensor([[2.5, 0.5, -0.5], [3.5, 1.5, 9.0]], requires_grad=True)
s2 = torch.tensor([1.0, 1.0, 0.5], requires_grad=True)
z2 = torch.tensor([1.0, 2.5, -1.5], requires_grad=True)
y2 = torch._fake_quantize_learnable_per_channel_affine(x2, s2, z2, 1, -4, 5, 0.5)
y2.backward(torch.tensor([[1.0, 2, 3], [4, 5, 6]]))
print("LSQ axis=1", y2.detach().tolist(), x2.grad.tolist(), s2.grad.tolist(), z2.grad.tolist())


# -- QAT on a small MLP --------------------------------------------------------------------
def make_data(n):
    X = torch.randn(n, 8)
    centers = torch.tensor(
        [
            [2.0, 0, 0, 0, 1, 0, 0, 0],
            [0, 2.0, 0, 0, 0, -1, 0, 0],
            [0, 0, 2.0, 0, 0, 0, 1, 0],
            [0, 0, 0, 2.0, 0, 0, 0, -1],
        ]
    )
    y = torch.randint(0, 4, (n,))
    return X * 0.8 + centers[y], y


Xtr, ytr = make_data(512)
Xte, yte = make_data(256)


def fq_weight(weight, bits):
    qmax = 2 ** (bits - 1) - 1
    s = weight.detach().abs().amax(dim=1).clamp(min=1e-8) / qmax
    return torch.fake_quantize_per_channel_affine(
        weight, s, torch.zeros_like(s, dtype=torch.int32), 0, -qmax - 1, qmax
    )


class QATMLP(nn.Module):
    def __init__(self, bits=None):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.bits = bits

    def forward(self, inp):
        w1, w2 = self.fc1.weight, self.fc2.weight
        if self.bits is not None:
            w1, w2 = fq_weight(w1, self.bits), fq_weight(w2, self.bits)
        h = F.relu(F.linear(inp, w1, self.fc1.bias))
        if self.bits is not None:
            h = torch.fake_quantize_per_tensor_affine(h, 6.0 / 255, 0, 0, 255)
        return F.linear(h, w2, self.fc2.bias)


def accuracy(model, X, y):
    with torch.no_grad():
        return (model(X).argmax(dim=1) == y).float().mean().item()


def train(model, steps=60):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(Xtr), ytr)
        loss.backward()
        opt.step()
    return loss.item()


torch.manual_seed(1)
fp = QATMLP()
print(f"fp32 loss {train(fp):.4f} acc {accuracy(fp, Xte, yte):.4f}")
ptq = QATMLP()
ptq.load_state_dict(fp.state_dict())
for bits in (8, 4, 2):
    ptq.bits = bits
    print(f"PTQ int{bits} acc {accuracy(ptq, Xte, yte):.4f}")
torch.manual_seed(1)
qat = QATMLP(bits=2)
print(f"QAT int2 loss {train(qat):.4f} acc {accuracy(qat, Xte, yte):.4f}")

# -- bias correction -----------------------------------------------------------------------
lin = fp.fc1
w_q = fq_weight(lin.weight, 3).detach()
with torch.no_grad():
    ref = F.linear(Xtr, lin.weight, lin.bias)
    raw = F.linear(Xtr, w_q, lin.bias)
    shift = (raw - ref).mean(dim=0)
    corrected = F.linear(Xtr, w_q, lin.bias - shift)
# (the corrected mean is round-off, about 1e-9: print whether it vanished, not its digits)
print(
    f"mean error before {(raw - ref).mean().item():.5f}",
    "after below 1e-6:",
    (corrected - ref).mean().abs().item() < 1e-6,
)
print(f"MSE before {F.mse_loss(raw, ref).item():.5f} after {F.mse_loss(corrected, ref).item():.5f}")

# -- small CNN, per-channel PTQ -----------------------------------------------------------
torch.manual_seed(2)
imgs = torch.randn(64, 1, 8, 8)
labels = (imgs[:, 0, :4].mean(dim=(1, 2)) > imgs[:, 0, 4:].mean(dim=(1, 2))).long()
cnn = nn.Sequential(
    nn.Conv2d(1, 4, 3, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(2),
    nn.Flatten(),
    nn.Linear(16, 2),
)
opt = torch.optim.Adam(cnn.parameters(), lr=0.02)
for _ in range(40):
    opt.zero_grad()
    F.cross_entropy(cnn(imgs), labels).backward()
    opt.step()
with torch.no_grad():
    acc_fp = (cnn(imgs).argmax(1) == labels).float().mean().item()
    saved = [p.clone() for p in cnn.parameters()]
    for m in cnn:
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            flat = m.weight.reshape(m.weight.shape[0], -1)
            s = flat.abs().amax(dim=1) / 7
            m.weight.copy_(
                torch.fake_quantize_per_channel_affine(
                    m.weight, s, torch.zeros(s.numel(), dtype=torch.int32), 0, -8, 7
                )
            )
    acc_q = (cnn(imgs).argmax(1) == labels).float().mean().item()
    print(f"CNN acc fp32 {acc_fp:.4f} int4 per-channel {acc_q:.4f}")
    print(f"conv weight SQNR {sqnr_db(saved[0], cnn[0].weight):.3f} dB")

# -- int8 matmul with int32 accumulation and fixed-point requantization -------------------
torch.manual_seed(3)
A = torch.randn(4, 16)
B = torch.randn(16, 3)
sA = A.abs().max() / 127
sB = B.abs().max(dim=0).values / 127
A8 = torch.clamp(torch.round(A / sA), -128, 127).to(torch.int8)
B8 = torch.clamp(torch.round(B / sB), -128, 127).to(torch.int8)
print("int8", A8.dtype, A8[0, :6].tolist(), B8.dtype)
acc = A8.to(torch.int32) @ B8.to(torch.int32)
print("int32 acc", acc.dtype, acc[0].tolist())
approx = acc.to(torch.float32) * sA * sB
exact = A @ B
print("dequant", fmt(approx[0]), "exact", fmt(exact[0]))
print(f"matmul SQNR {sqnr_db(exact, approx):.3f} dB")
# requantize to int8 output with scale sO using a fixed-point multiplier and a shift
sO = exact.abs().max() / 127
real_mult = (sA * sB / sO).double()
shift = 31
mult = torch.round(real_mult * (1 << shift)).to(torch.int64)
print("multipliers", mult.tolist(), mult.dtype)
prod = acc.to(torch.int64) * mult
rounded = (prod + (1 << (shift - 1))) >> shift
out8 = torch.clamp(rounded, -128, 127).to(torch.int8)
ref8 = torch.clamp(torch.round(exact / sO), -128, 127).to(torch.int8)
print("requant", out8[0].tolist(), "ref", ref8[0].tolist())
print(
    "mismatches",
    (out8 != ref8).sum().item(),
    "max |diff|",
    (out8.int() - ref8.int()).abs().max().item(),
)
print("arith shift of negatives", (torch.tensor([-7, -8, 7], dtype=torch.int32) >> 1).tolist())
print("int8 overflow wraps", (torch.tensor([100, -100], dtype=torch.int8) * 2).tolist())
print("int8 @ int8 dtype", (A8[:2, :3] @ B8[:3, :2]).dtype)

# -- int4 packing with bitwise ops ----------------------------------------------------------
vals = torch.tensor([-8, -3, 0, 7, 5, -1, 2, -6], dtype=torch.int8)
u4 = (vals + 8).to(torch.uint8)
packed = (u4[0::2] & 0x0F) | ((u4[1::2] & 0x0F) << 4)
print("packed", packed.tolist(), packed.dtype, packed.numel(), "bytes for", vals.numel(), "values")
low = (packed & 0x0F).to(torch.int8) - 8
high = ((packed >> 4) & 0x0F).to(torch.int8) - 8
unpacked = torch.stack([low, high], dim=1).flatten()
print("unpacked", unpacked.tolist(), torch.equal(unpacked, vals))
signed_nibbles = torch.tensor([0x0F, 0x08, 0x07], dtype=torch.uint8)
sext = (signed_nibbles.to(torch.int8) << 4) >> 4
print("sign-extend nibbles", sext.tolist())
print("uint8 shift overflow", (torch.tensor([200], dtype=torch.uint8) << 1).tolist())

# -- typical mistakes ------------------------------------------------------------------------
t = torch.randn(4, 3)
show("quant_min > quant_max", lambda: torch.fake_quantize_per_tensor_affine(t, 0.1, 0, 127, -128))
show(
    "zero_point out of range", lambda: torch.fake_quantize_per_tensor_affine(t, 0.1, 300, -128, 127)
)
show(
    "zero_point tensor out of range",
    lambda: (
        torch.fake_quantize_per_tensor_affine(
            t, torch.tensor(0.1), torch.tensor(300), -128, 127
        ).shape
    ),
)
show("scale = 0", lambda: fmt(torch.fake_quantize_per_tensor_affine(t[0], 0.0, 0, -128, 127)))
show("scale < 0", lambda: fmt(torch.fake_quantize_per_tensor_affine(t[0], -0.1, 0, -128, 127)))
show("int input", lambda: torch.fake_quantize_per_tensor_affine(torch.arange(4), 0.1, 0, -128, 127))
show(
    "float16 input",
    lambda: torch.fake_quantize_per_tensor_affine(t.half(), 0.1, 0, -128, 127).dtype,
)
show(
    "float64 input",
    lambda: torch.fake_quantize_per_tensor_affine(t.double(), 0.1, 0, -128, 127).dtype,
)
show(
    "wrong axis",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(4), torch.zeros(4, dtype=torch.int32), 1, -128, 127
    ),
)
show(
    "axis too big",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(3), torch.zeros(3, dtype=torch.int32), 3, -128, 127
    ),
)
show(
    "int64 zero points",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(4), torch.zeros(4, dtype=torch.long), 0, -128, 127
    ),
)
show(
    "float64 scales",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.int32), 0, -128, 127
    ),
)
show(
    "channel zp out of range",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(4), torch.full((4,), 200, dtype=torch.int32), 0, -128, 127
    ),
)
show(
    "2-d scale",
    lambda: torch.fake_quantize_per_channel_affine(
        t, torch.ones(4, 1), torch.zeros(4, dtype=torch.int32), 0, -128, 127
    ),
)
show(
    "scale needs grad",
    lambda: torch.fake_quantize_per_tensor_affine(
        t, torch.tensor(0.1, requires_grad=True), torch.tensor(0), -128, 127
    ),
)
show(
    "learnable 0-d scale",
    lambda: torch._fake_quantize_learnable_per_tensor_affine(
        t, torch.tensor(0.1), torch.tensor([0.0]), -8, 7
    ),
)
show(
    "learnable float64 backward",
    lambda: (
        torch._fake_quantize_learnable_per_tensor_affine(
            t.double().requires_grad_(), torch.tensor([0.1]), torch.tensor([0.0]), -8, 7
        )
        .sum()
        .backward()
    ),
)
show(
    "learnable range without 0",
    lambda: (
        torch._fake_quantize_learnable_per_tensor_affine(
            t.requires_grad_(), torch.tensor([0.1]), torch.tensor([0.0]), 1, 7
        )
        .sum()
        .backward()
    ),
)
show(
    "learnable channel int zp backward",
    lambda: (
        torch._fake_quantize_learnable_per_channel_affine(
            t, torch.ones(3, requires_grad=True), torch.tensor([0, 1, 2]), 1, -8, 7
        )
        .sum()
        .backward()
    ),
)
show(
    "learnable channel bad range",
    lambda: (
        torch._fake_quantize_learnable_per_channel_affine(
            t, torch.ones(3, requires_grad=True), torch.zeros(3), 1, 1, 7
        )
        .sum()
        .backward()
    ),
)
g_s = torch.tensor([0.1], requires_grad=True)
yl = torch._fake_quantize_learnable_per_tensor_affine(t, g_s, torch.tensor([0.0]), -8, 7)
(gx,) = torch.autograd.grad(yl.sum(), t, create_graph=True)
show("double backward", lambda: torch.autograd.grad(gx.sum(), g_s))

# -- more int mistakes and checks --------------------------------------------------------------
a8 = torch.tensor([[1, -2], [3, 4]], dtype=torch.int8)
w8 = torch.tensor([[5, 6], [-7, 8]], dtype=torch.int8)
show("F.linear on int8", lambda: F.linear(a8, w8).tolist())
show(
    "F.linear int32",
    lambda: F.linear(a8.int(), w8.int(), torch.tensor([1, 2], dtype=torch.int32)).tolist(),
)
show("conv2d on int8", lambda: F.conv2d(a8[None, None], w8[None, None]).tolist())
show("int8 @ int32", lambda: (a8 @ w8.int()).tolist())
show("mm int8 mixed", lambda: torch.mm(a8, w8.to(torch.int16)).tolist())
show("matmul int8 vs float", lambda: (a8 @ w8.float()).tolist())
show(
    "addmm int32",
    lambda: torch.addmm(torch.ones(2, 2, dtype=torch.int32), a8.int(), w8.int()).tolist(),
)
show("bmm int32", lambda: torch.bmm(a8.int()[None], w8.int()[None]).tolist())
show("einsum int32", lambda: torch.einsum("ij,jk->ik", a8.int(), w8.int()).tolist())
show("int mean", lambda: a8.mean())
show("int8 sum dtype", lambda: a8.sum().dtype)
show("round int8", lambda: torch.round(a8).dtype)
show("round decimals int", lambda: torch.round(a8, decimals=1))
show("clamp int8 float bounds", lambda: torch.clamp(a8, -1.5, 2.5).tolist())
show("clamp int8 dtype", lambda: torch.clamp(a8, -1.5, 2.5).dtype)
show(
    "to int8 overflow",
    lambda: torch.tensor([127.6, -128.6, 300.0, -300.0]).round().to(torch.int8).tolist(),
)
show(
    "int4 pack odd count",
    lambda: (
        torch.tensor([1, 2, 3], dtype=torch.uint8)[0::2]
        | (torch.tensor([1, 2, 3], dtype=torch.uint8)[1::2] << 4)
    ),
)
show("aminmax empty", lambda: torch.aminmax(torch.tensor([])))
show("aminmax int", lambda: torch.aminmax(a8))
for dt in (torch.float64, torch.float16):
    ties = torch.tensor([0.125, 0.375, 2.675], dtype=dt)
    show(f"round decimals {dt}", lambda t=ties: torch.round(t, decimals=2).tolist())
show("round_ decimals", lambda: torch.tensor([1.55, 2.45]).round_(decimals=1).tolist())
show(
    "round decimals grad",
    lambda: torch.round(torch.tensor([1.55], requires_grad=True), decimals=1).grad_fn.name(),
)
show("clamp min>max", lambda: torch.clamp(torch.tensor([0.0, 5.0, 10.0]), min=6, max=4).tolist())
show(
    "fq bfloat16",
    lambda: torch.fake_quantize_per_tensor_affine(
        torch.tensor([0.1234, -1.0]).bfloat16(), 0.01, 0, -128, 127
    ).tolist(),
)
show(
    "fq per-channel f16 zp",
    lambda: torch.fake_quantize_per_channel_affine(
        torch.tensor([[0.1234, -1.0]]),
        torch.tensor([0.01, 0.02]),
        torch.tensor([0.5, -1.5], dtype=torch.float16),
        1,
        -128,
        127,
    ).tolist(),
)
show(
    "fq 0-d input",
    lambda: torch.fake_quantize_per_tensor_affine(torch.tensor(0.337), 0.1, 0, -8, 7),
)
show(
    "fq int scale", lambda: torch.fake_quantize_per_tensor_affine(torch.tensor([3.3]), 1, 0, -8, 7)
)
show(
    "fq keyword args",
    lambda: torch.fake_quantize_per_tensor_affine(
        torch.tensor([0.33]), scale=0.1, zero_point=0, quant_min=-8, quant_max=7
    ),
)
show("fq method", lambda: hasattr(torch.Tensor, "fake_quantize_per_tensor_affine"))


# -- the fused moving-average observer + fake quant (QAT's default activation module) -----
class FusedFakeQuant(nn.Module):
    def __init__(self, qmin=0, qmax=255, per_row=False, symmetric=False, momentum=0.01):
        super().__init__()
        self.qmin, self.qmax, self.per_row, self.symmetric = qmin, qmax, per_row, symmetric
        self.momentum = momentum
        self.register_buffer("observer_on", torch.tensor([1], dtype=torch.long))
        self.register_buffer("fake_quant_on", torch.tensor([1], dtype=torch.long))
        shape = (0,) if per_row else (1,)
        self.register_buffer("running_min", torch.full(shape, float("inf")))
        self.register_buffer("running_max", torch.full(shape, float("-inf")))
        self.register_buffer("scale", torch.ones(shape))
        self.register_buffer("zero_point", torch.zeros(shape, dtype=torch.int32))

    def forward(self, inp):
        return torch.fused_moving_avg_obs_fake_quant(
            inp,
            self.observer_on,
            self.fake_quant_on,
            self.running_min,
            self.running_max,
            self.scale,
            self.zero_point,
            self.momentum,
            self.qmin,
            self.qmax,
            0,
            self.per_row,
            self.symmetric,
        )


torch.manual_seed(5)
act_fq = FusedFakeQuant(momentum=0.1)
for step in range(6):
    batch = torch.randn(16, 8) * (1 + 0.2 * step) + 0.5
    out = act_fq(batch)
    print(
        f"step {step} running [{act_fq.running_min.item():.5f}, {act_fq.running_max.item():.5f}]",
        f"scale {act_fq.scale.item():.6f} zp {act_fq.zero_point.item()}",
        f"SQNR {sqnr_db(batch, out):.3f} dB",
    )
act_fq.observer_on.fill_(0)
frozen = act_fq(torch.randn(4, 8) * 10)
print(
    "observer off keeps",
    f"{act_fq.running_max.item():.5f}",
    "max out",
    f"{frozen.max().item():.5f}",
)
act_fq.fake_quant_on.fill_(0)
probe = torch.randn(3, requires_grad=True)
passthrough = act_fq(probe)
print("fake quant off equal", torch.equal(passthrough, probe), passthrough.grad_fn.name())
print("buffers", sorted(act_fq.state_dict().keys()))
w_fq = FusedFakeQuant(-128, 127, per_row=True, symmetric=True)
wq = w_fq(W)
print("per-row", w_fq.running_min.shape, fmt(w_fq.scale, 6), w_fq.zero_point.tolist())
print(f"per-row symmetric weight SQNR {sqnr_db(W, wq):.3f} dB")
xr = torch.randn(5, 4, requires_grad=True)
yr = FusedFakeQuant(qmin=0, qmax=15)(xr * 4)
yr.sum().backward()
print("fused node", yr.grad_fn.name(), "grad kept", int(xr.grad.sum().item() / 4), "of", xr.numel())
empty_fq = FusedFakeQuant()
print("empty batch", empty_fq(torch.empty(0, 8)).shape, empty_fq.running_min.item())
show(
    "fused ch_axis",
    lambda: torch.fused_moving_avg_obs_fake_quant(
        W,
        torch.tensor([1]),
        torch.tensor([1]),
        torch.tensor([float("inf")]),
        torch.tensor([float("-inf")]),
        torch.ones(1),
        torch.zeros(1, dtype=torch.int32),
        0.01,
        0,
        255,
        2,
    ),
)
show(
    "fused per-row axis 1",
    lambda: torch.fused_moving_avg_obs_fake_quant(
        W,
        torch.tensor([1]),
        torch.tensor([1]),
        torch.tensor([]),
        torch.tensor([]),
        torch.tensor([]),
        torch.tensor([], dtype=torch.int32),
        0.01,
        0,
        255,
        1,
        True,
    ),
)
show("fused float64 input", lambda: FusedFakeQuant()(W.double()))
show(
    "fused python flag",
    lambda: torch.fused_moving_avg_obs_fake_quant(
        W,
        1,
        torch.tensor([1]),
        torch.tensor([float("inf")]),
        torch.tensor([float("-inf")]),
        torch.ones(1),
        torch.zeros(1, dtype=torch.int32),
        0.01,
        0,
        255,
        0,
    ),
)

# -- LSQ QAT of a conv layer: learnable per-channel weight scales, per-tensor activations ---
torch.manual_seed(4)


class LSQConv(nn.Module):
    def __init__(self, cin, cout, bits=4):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.qmax = 2 ** (bits - 1) - 1
        w = self.conv.weight.detach()
        init = 2 * w.abs().mean(dim=(1, 2, 3)) / math.sqrt(self.qmax)
        self.w_scale = nn.Parameter(init)
        self.w_zero = nn.Parameter(torch.zeros(cout), requires_grad=False)
        self.a_scale = nn.Parameter(torch.tensor([0.05]))
        self.a_zero = nn.Parameter(torch.tensor([0.0]), requires_grad=False)

    def forward(self, inp):
        g_w = 1.0 / math.sqrt(self.conv.weight[0].numel() * self.qmax)
        w = torch._fake_quantize_learnable_per_channel_affine(
            self.conv.weight, self.w_scale, self.w_zero, 0, -self.qmax - 1, self.qmax, g_w
        )
        out = F.relu(F.conv2d(inp, w, self.conv.bias, padding=1))
        g_a = 1.0 / math.sqrt(out[0].numel() * 255)
        return torch._fake_quantize_learnable_per_tensor_affine(
            out, self.a_scale, self.a_zero, 0, 255, g_a
        )


layer = LSQConv(1, 4)
head = nn.Linear(16, 2)
model = nn.Sequential(layer, nn.AdaptiveAvgPool2d(2), nn.Flatten(), head)
print("trainable", sorted(n for n, p in model.named_parameters() if p.requires_grad))
# (a few plain SGD steps: the scale gradients are sums of many cancelling terms, so a long
# run, or Adam's sign-like steps, would turn last-bit differences of the convolution into
# different rounding levels)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(imgs), labels)
    loss.backward()
    if step == 0:
        print(
            "w_scale grad",
            [f"{v:.3e}" for v in layer.w_scale.grad.tolist()],
            "a_scale grad",
            f"{layer.a_scale.grad.item():.3e}",
        )
    print(f"step {step} loss {loss.item():.5f}")
    opt.step()
print("learned w_scale", fmt(layer.w_scale.detach(), 5), "a_scale", fmt(layer.a_scale.detach(), 5))
print("w_zero untouched", layer.w_zero.grad is None, layer.w_zero.tolist())
