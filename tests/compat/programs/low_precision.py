"""Low precision and quantisation by hand: dtype limits, float16/bfloat16/float8 rounding,
bit reinterpretation and packing, fake quantisation (per tensor and per channel) with its
gradients, a straight-through-estimator QAT loop, int8 matmul, min/max calibration, autocast,
type promotion, integer division and overflow, and the usual mistakes.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# -- dtype limits -----------------------------------------------------------------
for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    fi = torch.finfo(dt)
    print(dt, fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution)
for dt in (torch.int8, torch.uint8, torch.int16, torch.int32):
    ii = torch.iinfo(dt)
    print(dt, ii.bits, ii.min, ii.max, ii.dtype)
print(torch.finfo(torch.float8_e4m3fn).max, torch.finfo(torch.float8_e5m2).max)
print(torch.finfo(torch.float16).dtype, torch.finfo().dtype)

# -- float16 overflow/underflow, bfloat16 rounding ---------------------------------
big = torch.tensor([65504.0, 65519.0, 65520.0, 1e5, -1e5])
print(big.half(), big.half().isinf().tolist())
small = torch.tensor([6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-9])
h = small.to(torch.float16)
print(h.float().tolist(), (h == 0).tolist())
print(torch.tensor(1.0, dtype=torch.float16) + torch.tensor(0.0004, dtype=torch.float16))
vals = torch.tensor([1.00390625, 1.01171875, 1.0078125, 3.14159265, 1e-40, 300.5])
bf = vals.to(torch.bfloat16)
print(bf, bf.float().tolist())
print(torch.tensor([256.0, 257.0, 258.0, 259.0]).bfloat16().tolist())
print(torch.arange(2040, 2056, 3, dtype=torch.float32).half().tolist())

# -- float8 round trips -------------------------------------------------------------
f8in = torch.tensor([0.0, 0.3, 1.1, -2.7, 17.0, 448.0, 460.0, 1000.0, 1e-3])
e4 = f8in.to(torch.float8_e4m3fn)
e5 = f8in.to(torch.float8_e5m2)
print(e4.dtype, e4.element_size(), e4.float().tolist())
print(e5.dtype, e5.float().tolist())
sat = f8in.clamp(-448, 448).to(torch.float8_e4m3fn).float()
print("saturated", sat.tolist())
print(torch.tensor([60000.0, 70000.0]).to(torch.float8_e5m2).float().tolist())

# -- view(dtype) reinterpretation ----------------------------------------------------
f = torch.tensor([1.0, -2.0, 0.1, float("inf")])
bits = f.view(torch.int32)
print(bits.tolist(), [hex(b & 0xFFFFFFFF) for b in bits.tolist()])
sign = (bits >> 31) & 1
expo = (bits >> 23) & 0xFF
mant = bits & 0x7FFFFF
print(sign.tolist(), expo.tolist(), mant.tolist())
print((bits ^ (1 << 31)).view(torch.float32).tolist())
b16 = torch.tensor([1.0, -0.5, 3.0], dtype=torch.bfloat16).view(torch.int16)
print(b16, b16.view(torch.bfloat16))
print(f.view(torch.uint8).shape, f.view(torch.int16).shape, f[:2].view(torch.float64))
m = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print(m.view(torch.int32).stride(), m.view(torch.int16).shape, m.view(torch.uint8)[0, :4])

# -- int4 packing ---------------------------------------------------------------------
nib = torch.tensor([3, -8, 7, -1, 0, 5], dtype=torch.int8)
u = (nib & 0xF).to(torch.uint8)
packed = u[0::2] | (u[1::2] << 4)
print(packed, packed.dtype)
lo = (packed & 0x0F).to(torch.int8)
hi = (packed >> 4).to(torch.int8)
lo = torch.where(lo > 7, lo - 16, lo)
hi = torch.where(hi > 7, hi - 16, hi)
print(torch.stack([lo, hi], dim=1).flatten(), torch.bitwise_not(packed), ~nib)
print(torch.bitwise_left_shift(nib, 2), torch.bitwise_right_shift(nib, 1), nib << 1)
print(torch.bitwise_xor(packed, torch.tensor(0xFF, dtype=torch.uint8)))

# -- fake quantisation ----------------------------------------------------------------
x = torch.randn(4, 6)


def fake_quant(t, scale, zp, qmin, qmax):
    return (torch.clamp(torch.round(t / scale) + zp, qmin, qmax) - zp) * scale


print(torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999])))
print(torch.round(torch.tensor([1.2345, -9.8765]), decimals=2))
amax = x.abs().max()
s_sym = amax / 127
q_sym = fake_quant(x, s_sym, 0, -127, 127)
print(f"sym scale {s_sym.item():.6f} err {(q_sym - x).abs().max().item():.6f}")
lo_, hi_ = torch.aminmax(x)
s_asym = (hi_ - lo_) / 255
zp = (-torch.round(lo_ / s_asym)).to(torch.int32)
print("asym", f"{s_asym.item():.6f}", zp.item(), zp.dtype)
q_asym = fake_quant(x, s_asym, zp, 0, 255)
print(f"asym err {(q_asym - x).abs().max().item():.6f}")
ch_max = x.abs().amax(dim=1)
s_ch = ch_max / 127
q_ch = fake_quant(x, s_ch[:, None], 0, -127, 127)
print(s_ch, (q_ch - x).abs().amax(dim=1))
xq = x.clone().requires_grad_()
y = torch.fake_quantize_per_tensor_affine(xq, 0.05, 3, -128, 127)
(y * torch.arange(6.0)).sum().backward()
print(y[0], xq.grad[0])
xq.grad = None
yc = torch.fake_quantize_per_channel_affine(xq, s_ch, torch.zeros(4, dtype=torch.int32),
                                            0, -127, 127)
yc.pow(2).sum().backward()
print(yc[1], xq.grad.sum(dim=1))
wide = torch.tensor([-10.0, -0.12, 0.0, 0.33, 10.0], requires_grad=True)
out = torch.fake_quantize_per_tensor_affine(wide, torch.tensor(0.1), torch.tensor(0), -8, 7)
out.sum().backward()
print(out, wide.grad)

# -- straight-through estimator QAT ----------------------------------------------------
class QLinear(nn.Linear):
    def forward(self, inp):
        scale = self.weight.detach().abs().max() / 7
        wq = torch.clamp(torch.round(self.weight / scale), -7, 7) * scale
        w = self.weight + (wq - self.weight).detach()
        return F.linear(inp, w, self.bias)


model = nn.Sequential(QLinear(4, 16), nn.ReLU(), QLinear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = torch.randn(32, 4)
target = (data[:, 0] > 0).long() + (data[:, 1] > 0.5).long()
for step in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        acc = (model(data).argmax(1) == target).float().mean()
        print(f"step {step + 1} loss {loss.item():.4f} acc {acc.item():.4f}")
w0 = model[0].weight
levels = torch.round(w0 / (w0.abs().max() / 7)).unique()
print("levels", levels.tolist(), w0.grad.shape, w0.grad.dtype)

# -- int8 matmul and calibration -----------------------------------------------------------
a8 = torch.randint(-128, 128, (3, 5), dtype=torch.int8)
b8 = torch.randint(-128, 128, (5, 2), dtype=torch.int8)
acc32 = torch.matmul(a8.to(torch.int32), b8.to(torch.int32))
print(acc32, acc32.dtype, (a8 @ b8).dtype, (a8 @ b8)[0])
print(torch.mm(a8.long(), b8.long()).sum(), (a8.float() @ b8.float()).equal(acc32.float()))
run_min, run_max = torch.tensor(float("inf")), torch.tensor(float("-inf"))
for i in range(5):
    batch = torch.randn(8, 3) * (i + 1) + i
    bmin, bmax = torch.aminmax(batch)
    run_min, run_max = torch.minimum(run_min, bmin), torch.maximum(run_max, bmax)
    print(f"calib {i} min {run_min.item():.4f} max {run_max.item():.4f}")
cmin, cmax = torch.aminmax(torch.randn(4, 6), dim=0, keepdim=True)
print(cmin.shape, cmax.shape, torch.aminmax(torch.tensor([3, -2, 9], dtype=torch.int8)))

# -- autocast -------------------------------------------------------------------------------
lin = nn.Linear(8, 4)
inp = torch.randn(2, 8)
with torch.autocast("cpu", dtype=torch.bfloat16):
    o1 = lin(inp)
    o2 = torch.matmul(inp, inp.T)
    o3 = torch.softmax(o1, dim=-1)
    o4 = F.layer_norm(o1, (4,))
    o5 = o1 + inp[:, :4]
    print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
print(o1.dtype, o2.dtype, o3.dtype, o4.dtype, o5.dtype, torch.is_autocast_enabled("cpu"))
print(o1.float(), o3.float().sum(-1))

# -- promotion ----------------------------------------------------------------------------
i8 = torch.tensor([100, -100], dtype=torch.int8)
u8 = torch.tensor([200, 55], dtype=torch.uint8)
f16 = torch.tensor([1.5, 2.5], dtype=torch.float16)
b16t = torch.tensor([1.5, 2.5], dtype=torch.bfloat16)
print((i8 + u8), (i8 + u8).dtype, (i8 + 1).dtype, (u8 * 2), (i8 * 2))
print((torch.tensor([3, 4]) + f16).dtype, (b16t + f16).dtype, (f16 + 1.0).dtype)
print((f16 + torch.tensor(2.0, dtype=torch.float64)).dtype, (i8 + torch.tensor(1.5)).dtype)
print(torch.result_type(i8, u8), torch.result_type(f16, 2.5), torch.result_type(i8, 3.0))
print(torch.promote_types(torch.bfloat16, torch.float16), torch.promote_types(torch.uint8,
      torch.int8), torch.promote_types(torch.bool, torch.int16))
print(torch.can_cast(torch.float32, torch.int32), torch.can_cast(torch.int32, torch.float16),
      torch.can_cast(torch.int64, torch.uint8), torch.can_cast(torch.float16, torch.bool))
print((u8 + True).dtype, (torch.tensor([True]) + torch.tensor([True])).dtype)

# -- integer division and overflow ----------------------------------------------------------
n = torch.tensor([7, -7, 7, -7])
d = torch.tensor([2, 2, -2, -2])
print(n // d, n % d, torch.fmod(n, d), torch.remainder(n, d))
print(torch.div(n, d), torch.div(n, d, rounding_mode="trunc"), torch.div(n, d,
      rounding_mode="floor"))
print(torch.tensor([-7.5, 7.5]) // 2, torch.fmod(torch.tensor([-7.5, 7.5]), 2))
print(i8 + i8, u8 + u8, i8 * 3, u8 * u8, -torch.tensor([-128], dtype=torch.int8))
print(torch.tensor([300.7, -5.2, 255.5]).clamp(0, 255).to(torch.uint8))
print(torch.tensor([1.7, -1.7, 2.5]).to(torch.int8), torch.tensor([127], dtype=torch.int8) + 1)
acc = torch.zeros(2, dtype=torch.int16)
acc += torch.tensor([30000, -30000], dtype=torch.int16)
acc += torch.tensor([5000, -5000], dtype=torch.int16)
print(acc, acc.sum(), acc.sum().dtype, i8.sum().dtype, u8.cumsum(0).dtype)

# -- mistakes --------------------------------------------------------------------------------
ERRORS = [
    lambda: torch.tensor([1.0, 2.0]) & 1,
    lambda: torch.bitwise_or(torch.tensor([1.0]), torch.tensor([2.0])),
    lambda: torch.tensor([1.0]) << 2,
    lambda: torch.tensor([1, 2]).__iadd__(1.5),
    lambda: torch.tensor([1, 2], dtype=torch.int8).mul_(torch.tensor([0.5, 1.0])),
    lambda: torch.fake_quantize_per_tensor_affine(torch.ones(3), 0.1, 0, 10, -10),
    lambda: torch.fake_quantize_per_tensor_affine(torch.ones(3), 0.1, 0, 0, 300),
    lambda: torch.fake_quantize_per_channel_affine(torch.ones(2, 3), torch.ones(3),
                                                   torch.zeros(3, dtype=torch.int32), 0, 0, 255),
    lambda: torch.ones(3).view(torch.float64),
    lambda: torch.tensor([1, 2], dtype=torch.int32).div_(2),
    lambda: torch.tensor([5]) // torch.tensor([0]),
    lambda: e4.float() * e4,
    lambda: torch.promote_types(torch.float8_e5m2, torch.float16),
]
for make in ERRORS:
    try:
        r = make()
        print("no error", r)
    except Exception as e:  # noqa: BLE001 - printed as a program would log it
        print(f"{type(e).__name__}: {e}")
