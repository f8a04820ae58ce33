"""Integer and bit-level tensor work: hashing token ids into buckets, bit packing, a Bloom
filter, popcount and Gray codes by bit tricks, overflow and promotion of integer reductions,
integer division and rounding modes, unsigned dtypes, bucketize/bincount/unique, printing
integer tensors, random integers, and the usual mistakes with their error messages.
"""

import torch

torch.manual_seed(0)


def show(label, fn):
    """Print fn()'s value, or the type and message of the error it raises."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - a user catching any mistake
        print(label, "->", type(e).__name__ + ":", str(e).splitlines()[0])
    else:
        print(label, "->", out)


# -- hashing token ids into buckets --------------------------------------------------
ids = torch.tensor([0, 1, 2, 3, 17, 12345, 987654321, -5, -123456789, 2**40 + 7])
GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed int64


def mix64(x):
    """splitmix64-style finaliser on int64 with wraparound; logical shifts via masks."""
    x = x * GOLDEN
    x = x ^ ((x >> 30) & ((1 << 34) - 1))
    x = x * -4658895280553007687  # 0xBF58476D1CE4E5B9
    x = x ^ ((x >> 27) & ((1 << 37) - 1))
    x = x * -7723592293110705685  # 0x94D049BB133111EB
    return x ^ ((x >> 31) & ((1 << 33) - 1))


h = mix64(ids)
print("hash", h.tolist())
print("hex", [hex(v & 0xFFFFFFFFFFFFFFFF) for v in h.tolist()[:4]])
nb = 1000
print("remainder", torch.remainder(h, nb).tolist())
print("fmod", torch.fmod(h, nb).tolist())
print("floordiv", (h // 10**15).tolist())
print("and-mask", (h & 1023).tolist())
print("bucket %", (h % nb).tolist(), (h % -nb).tolist())
print(
    "python % on ints", [-7 % 3, 7 % -3], (torch.tensor([-7, 7]) % torch.tensor([3, -3])).tolist()
)
print("fmod signs", torch.fmod(torch.tensor([-7, 7, -7, 7]), torch.tensor([3, 3, -3, -3])).tolist())
print(
    "remainder scalar",
    torch.remainder(torch.tensor([-7, -1, 0, 5]), 4).tolist(),
    torch.remainder(-7, torch.tensor([4, -4])).tolist(),
)
hashed = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6]) * 2654435761 % 16
print("knuth", hashed.tolist(), hashed.dtype)

# -- bitwise ops and shifts over dtypes ------------------------------------------------
a = torch.tensor([0b1100, 0b1010, -1, 0], dtype=torch.int32)
b = torch.tensor([0b1010, 0b0110, 5, -1], dtype=torch.int32)
print(
    torch.bitwise_and(a, b).tolist(),
    torch.bitwise_or(a, b).tolist(),
    torch.bitwise_xor(a, b).tolist(),
    torch.bitwise_not(a).tolist(),
)
print((a & b).tolist(), (a | b).tolist(), (a ^ b).tolist(), (~a).tolist())
print(a.bitwise_and(3).tolist(), a.bitwise_or_(16).tolist(), a.tolist())
print(
    torch.bitwise_not(torch.tensor([True, False])).tolist(),
    (torch.tensor([True, False]) ^ torch.tensor([True, True])).tolist(),
)
for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
    x = torch.tensor([1, 3, 100, 127], dtype=dt)
    print(
        dt,
        (x << 1).tolist(),
        (x << 4).tolist(),
        (x >> 1).tolist(),
        torch.bitwise_left_shift(x, 2).tolist(),
        torch.bitwise_right_shift(x, 1).tolist(),
    )
for dt in (torch.int8, torch.int16, torch.int32, torch.int64):
    neg = torch.tensor([-1, -8, -128 if dt == torch.int8 else -1000], dtype=dt)
    print(dt, "neg >>", (neg >> 1).tolist(), (neg >> 3).tolist(), (neg << 2).tolist())
width_shift = torch.tensor([7, 8, 9, 15, 16, 31, 32, 63, 64, 70])
for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
    ones = torch.ones(10, dtype=dt)
    print("shift>=width", dt, (ones << width_shift.to(dt)).tolist())
    print(
        "rshift>=width",
        dt,
        (-ones >> width_shift.to(dt)).tolist()
        if dt != torch.uint8
        else (ones * 200 >> width_shift.to(dt)).tolist(),
    )
print(
    "scalar shifts",
    (torch.tensor([1, 2]) << 3).tolist(),
    (1 << torch.tensor([0, 5, 10])).tolist(),
    (1024 >> torch.tensor([1, 3])).tolist(),
)
x = torch.tensor([5, 6], dtype=torch.int16)
x <<= 2
print("ilshift", x.tolist(), x.dtype)
x >>= torch.tensor([1, 2], dtype=torch.int16)
print("irshift", x.tolist())
x ^= 0xFF
print("ixor", x.tolist())

# -- bit packing of booleans into uint8 --------------------------------------------------
bits = torch.rand(3, 20) > 0.5
pad = (-bits.shape[-1]) % 8
padded = torch.nn.functional.pad(bits.to(torch.uint8), (0, pad))
weights = (2 ** torch.arange(7, -1, -1)).to(torch.uint8)
packed = (padded.view(3, -1, 8) * weights).sum(-1, dtype=torch.uint8)
print("packed", packed, packed.dtype)
unpacked = (packed.unsqueeze(-1) & weights).ne(0).view(3, -1)[:, : bits.shape[-1]]
print("roundtrip", torch.equal(unpacked, bits), unpacked.dtype)
shift_unpack = (packed.unsqueeze(-1) >> torch.arange(7, -1, -1, dtype=torch.uint8)) & 1
print("shift unpack", shift_unpack[0, 0].tolist(), shift_unpack.dtype)

# -- a Bloom filter -----------------------------------------------------------------------
M, K = 257, 3
table = torch.zeros(M, dtype=torch.bool)
seeds = torch.tensor([0x1234567, 0x7654321, 0x0BADF00D])


def bloom_slots(keys):
    return torch.remainder(mix64(keys.unsqueeze(-1) ^ seeds), M)


inserted = torch.randint(0, 10**6, (40,), generator=torch.Generator().manual_seed(7))
table[bloom_slots(inserted).flatten()] = True
probe = torch.cat([inserted[:5], torch.arange(2_000_000, 2_000_200)])
hits = table[bloom_slots(probe)].all(-1)
print(
    "bloom fill",
    table.sum().item(),
    "of",
    M,
    "members found",
    hits[:5].tolist(),
    "false positives",
    hits[5:].sum().item(),
    "of",
    hits[5:].numel(),
)

# -- popcount and Gray codes by bit tricks -----------------------------------------------


def popcount32(v):
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    return ((v * 0x01010101) & 0xFFFFFFFF) >> 24


vals = torch.tensor([0, 1, 2, 3, 255, 256, 1023, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF])
pc = popcount32(vals)
print("popcount", pc.tolist(), [bin(v).count("1") for v in vals.tolist()] == pc.tolist())
n = torch.arange(16)
gray = n ^ (n >> 1)
print("gray", gray.tolist())
inv = gray.clone()
shift = 1
while shift < 16:
    inv ^= inv >> shift
    shift <<= 1
print("gray^-1", inv.tolist(), torch.equal(inv, n))
print("hamming between neighbours", popcount32(gray[1:] ^ gray[:-1]).unique().tolist())
u8 = torch.tensor([0b10110000, 0b00000001, 0b11111111, 0], dtype=torch.uint8)
lowest = u8 & (-u8.to(torch.int16)).to(torch.uint8)
print("lowest set bit", lowest.tolist(), "is power of two", ((u8 & (u8 - 1)) == 0).tolist())

# -- overflow and promotion in integer reductions ----------------------------------------
for dt in (torch.int8, torch.int16, torch.uint8, torch.int32, torch.bool):
    x = torch.full((300,), 100, dtype=dt) if dt != torch.bool else torch.ones(300, dtype=dt)
    s, c, p = x.sum(), x.cumsum(0), x[:5].prod()
    print("reduce", dt, s.item(), s.dtype, c[-1].item(), c.dtype, p.item(), p.dtype)
    print(
        "  dtype=",
        x.sum(dtype=dt).item(),
        x[:5].prod(dtype=dt).item(),
        x.sum(dtype=torch.float32).item(),
        x.cumprod(0, dtype=torch.int64)[-1].item(),
    )
    show("  cumsum dtype=", lambda x=x, dt=dt: x.cumsum(0, dtype=dt)[-1].item())
    show("  cumprod dtype=", lambda x=x, dt=dt: x.cumprod(0, dtype=dt)[-1].item())
i8 = torch.tensor([100, 100, 100], dtype=torch.int8)
print("int8 add wraps", (i8 + i8).tolist(), (i8 * 3).tolist(), (i8 + 100).dtype)
print(
    "cumprod",
    torch.tensor([2] * 40).cumprod(0)[-4:].tolist(),
    torch.tensor([4] * 5, dtype=torch.uint8).cumprod(0).tolist(),
)
big = torch.tensor([2**62, 2**62])
print("int64 wrap", big.sum().item(), (big * 4).tolist(), big.cumsum(0).tolist())
print(
    "mean dtype",
    torch.tensor([1, 2, 4]).float().mean().item(),
    torch.tensor([1, 2, 4]).sum(dtype=torch.float64).item(),
)
print(
    "nansum ints",
    torch.tensor([1, 2, 3]).nansum().item(),
    torch.tensor([1, 2], dtype=torch.int8).nansum().dtype,
)
print(
    "max/min/argmax",
    torch.tensor([3, -7, 9, 9], dtype=torch.int16).max().item(),
    torch.tensor([3, -7, 9, 9], dtype=torch.int16).argmax().item(),
    torch.tensor([3, 7, 9], dtype=torch.uint8).amin().dtype,
)

# -- integer division, rounding modes, floor_divide, pow -----------------------------
num = torch.tensor([7, -7, 7, -7, 0, 9])
den = torch.tensor([2, 2, -2, -2, 3, 3])
print("true", torch.div(num, den).tolist(), torch.div(num, den).dtype)
print(
    "trunc",
    torch.div(num, den, rounding_mode="trunc").tolist(),
    torch.div(num, den, rounding_mode="trunc").dtype,
)
print("floor", torch.div(num, den, rounding_mode="floor").tolist(), (num // den).tolist())
print(
    "floor_divide",
    torch.floor_divide(num, den).tolist(),
    num.floor_divide(3).tolist(),
    num.div(4, rounding_mode="floor").tolist(),
)
print("true_divide", torch.true_divide(num, 4).tolist())
q = num.clone()
q.div_(den, rounding_mode="trunc")
print("div_ trunc", q.tolist(), q.dtype)
q = num.clone()
q //= 3
print("ifloordiv", q.tolist())
outq = torch.empty(6, dtype=torch.int64)
torch.div(num, den, rounding_mode="floor", out=outq)
print("div out", outq.tolist())
show("div_ true on int", lambda: num.clone().div_(den))
show("div bad mode", lambda: torch.div(num, den, rounding_mode="round"))
show("int // 0", lambda: torch.tensor([1, 2]) // torch.tensor([0, 1]))
show("int % 0", lambda: torch.remainder(torch.tensor([5]), torch.tensor([0])))
show("int div 0", lambda: torch.div(torch.tensor([5]), 0, rounding_mode="trunc"))
print(
    "float floor by 0", torch.div(torch.tensor([5.0, -5.0, 0.0]), 0, rounding_mode="floor").tolist()
)
print(
    "pow",
    torch.pow(torch.tensor([2, 3, -2]), 3).tolist(),
    (torch.tensor([2, 3]) ** torch.tensor([10, 40])).tolist(),
    torch.pow(2, torch.tensor([0, 10, 62])).tolist(),
)
print("pow int8 wrap", torch.pow(torch.tensor([2, 3], dtype=torch.int8), 7).tolist())
print(
    "pow int^float",
    torch.pow(torch.tensor([4, 9]), 0.5).tolist(),
    (torch.tensor([2]) ** -1.0).tolist(),
)
print("pow base 1/-1 neg exp", torch.pow(torch.tensor([1, -1]), torch.tensor([-3, -3])).tolist())
show("int ** negative", lambda: torch.tensor([2, 3]) ** -1)
show("pow tensor neg exp", lambda: torch.pow(torch.tensor([2, 3]), torch.tensor([-1, 2])))
show("pow scalar neg exp", lambda: torch.pow(torch.tensor([2]), -2))

# -- abs / neg at the minimum, clamp with float bounds --------------------------------------
for dt in (torch.int8, torch.int16, torch.int32, torch.int64):
    mn = torch.iinfo(dt).min
    t = torch.tensor([mn, mn + 1, -1, 0], dtype=dt)
    print("absneg", dt, t.abs().tolist(), (-t).tolist(), t.neg().tolist(), torch.sign(t).tolist())
print("uint8 neg", (-torch.tensor([0, 1, 200], dtype=torch.uint8)).tolist())
ci = torch.tensor([-5, 0, 3, 7, 12])
print("clamp int bounds", ci.clamp(0, 6).tolist(), ci.clamp(0, 6).dtype)
print(
    "clamp float bounds",
    ci.clamp(0.5, 6.5).tolist(),
    ci.clamp(0.5, 6.5).dtype,
    ci.clamp(min=-2.7).tolist(),
    torch.clamp(ci, max=2.2).dtype,
)
print("clamp tensor bounds", ci.clamp(torch.tensor([0, 1, 2, 3, 4]), torch.tensor(5)).tolist())
show("clamp_ float", lambda: ci.clone().clamp_(0.5, 6.5))
print("clamp_ int", ci.clone().clamp_(0, 6).tolist(), ci.clone().clamp_(torch.tensor(1)).tolist())
print("clip uint8", torch.tensor([0, 100, 250], dtype=torch.uint8).clip(10, 200).tolist())
show("clamp no bounds", lambda: ci.clamp())

# -- iinfo -----------------------------------------------------------------------------
for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
    ii = torch.iinfo(dt)
    print("iinfo", dt, ii.bits, ii.min, ii.max, ii.dtype, dt.is_signed, dt.itemsize)
print(torch.iinfo(torch.int32))
show("iinfo float", lambda: torch.iinfo(torch.float32))
show("finfo int", lambda: torch.finfo(torch.int32))
print(
    "saturating add",
    torch.clamp(
        torch.tensor([120, -120], dtype=torch.int16) * 2,
        torch.iinfo(torch.int8).min,
        torch.iinfo(torch.int8).max,
    )
    .to(torch.int8)
    .tolist(),
)

# -- bucketize, searchsorted, bincount ------------------------------------------------------
boundaries = torch.tensor([0, 10, 100, 1000])
lengths = torch.tensor([[3, 10, 11], [0, 999, 5000]])
print(
    "bucketize",
    torch.bucketize(lengths, boundaries).tolist(),
    torch.bucketize(lengths, boundaries, right=True).tolist(),
    torch.bucketize(lengths, boundaries, out_int32=True).dtype,
)
print("bucketize scalar", torch.bucketize(10, boundaries), torch.bucketize(10, boundaries).dtype)
sorted_ids = torch.tensor([[1, 3, 3, 5, 9], [2, 2, 2, 4, 8]])
print(
    "searchsorted",
    torch.searchsorted(sorted_ids, torch.tensor([[3, 6], [2, 9]])).tolist(),
    torch.searchsorted(sorted_ids, torch.tensor([[3, 6], [2, 9]]), side="right").tolist(),
    torch.searchsorted(sorted_ids[0], 3, right=True),
)
unsorted = torch.tensor([5, 1, 3, 9])
order = unsorted.argsort()
print(
    "searchsorted sorter",
    torch.searchsorted(unsorted, torch.tensor([4, 10]), sorter=order).tolist(),
)
show(
    "searchsorted side/right clash",
    lambda: torch.searchsorted(sorted_ids[0], 3, right=False, side="right"),
)
show("searchsorted bad side", lambda: torch.searchsorted(sorted_ids[0], 3, side="middle"))
show("bucketize float bounds 2d", lambda: torch.bucketize(lengths, boundaries.view(2, 2)))
tokens = torch.randint(0, 8, (50,))
print("bincount", torch.bincount(tokens).tolist(), torch.bincount(tokens).dtype)
print("bincount minlength", torch.bincount(tokens, minlength=12).tolist())
w = torch.linspace(0, 1, 50)
print(
    "bincount weights",
    [round(v, 4) for v in torch.bincount(tokens, weights=w).tolist()],
    torch.bincount(tokens, weights=w).dtype,
    torch.bincount(tokens, weights=w.double()).dtype,
    torch.bincount(tokens[:4], weights=torch.tensor([1, 2, 3, 4])).dtype,
)
print(
    "bincount empty",
    torch.bincount(torch.tensor([], dtype=torch.int64)).tolist(),
    torch.bincount(torch.tensor([], dtype=torch.int64), minlength=3).tolist(),
    torch.bincount(torch.tensor([1, 1], dtype=torch.uint8)).tolist(),
)
show("bincount negative", lambda: torch.bincount(torch.tensor([1, -1])))
show("bincount float", lambda: torch.bincount(torch.tensor([1.0, 2.0])))
show("bincount 2d", lambda: torch.bincount(torch.tensor([[1, 2]])))
show("bincount weights shape", lambda: torch.bincount(torch.tensor([1, 2]), weights=torch.ones(3)))
show("bincount minlength<0", lambda: torch.bincount(torch.tensor([1]), minlength=-1))
show("histc int", lambda: torch.histc(torch.tensor([1, 2, 3]), bins=3))
print("histc float", torch.histc(torch.tensor([1, 2, 2, 3]).float(), bins=3, min=0, max=3).tolist())

# -- unique, unique_consecutive, stable argsort ------------------------------------------
seq = torch.tensor([3, 1, 3, 3, 2, 1, 1, 5, 3])
u, inv, cnt = torch.unique(seq, return_inverse=True, return_counts=True)
print("unique", u.tolist(), inv.tolist(), cnt.tolist(), u.dtype, inv.dtype, cnt.dtype)
print("unique unsorted sorted?", torch.unique(seq, sorted=True).tolist(), seq.unique().tolist())
rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4]])
ur, ir, cr = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
print("unique dim=0", ur.tolist(), ir.tolist(), cr.tolist())
uc, ic = torch.unique(rows, dim=1, return_inverse=True)
print("unique dim=1", uc.tolist(), ic.tolist())
v, i2, c2 = torch.unique_consecutive(seq, return_inverse=True, return_counts=True)
print("unique_consecutive", v.tolist(), i2.tolist(), c2.tolist())
print(
    "unique_consecutive dim",
    torch.unique_consecutive(rows, dim=0).tolist(),
    seq.unique_consecutive().tolist(),
)
print(
    "unique bool/int8",
    torch.unique(torch.tensor([True, False, True])).tolist(),
    torch.unique(torch.tensor([-3, 5, -3], dtype=torch.int8), return_counts=True),
)
print(
    "unique 2d flat",
    torch.unique(rows).tolist(),
    torch.unique(torch.tensor([], dtype=torch.int64)).shape,
)
show("unique bad dim", lambda: torch.unique(rows, dim=2))
keys = torch.tensor([2, 0, 1, 0, 2, 1, 0, 2, 2, 1, 0, 1, 1, 2, 0, 0, 1, 2, 2, 0])
print("argsort stable", keys.argsort(stable=True).tolist())
print("argsort stable desc", torch.argsort(keys, descending=True, stable=True).tolist())
print(
    "sort stable",
    torch.sort(keys, stable=True).indices.tolist(),
    torch.sort(keys.to(torch.int8), descending=True, stable=True).values.tolist(),
)
print(
    "topk ints",
    torch.tensor([5, 1, 9, 3, 9], dtype=torch.int16).topk(2).values.tolist(),
    torch.tensor([5, 1, 9, 3], dtype=torch.uint8).kthvalue(2).values.item(),
)
print(
    "mode/median ints",
    torch.tensor([1, 2, 2, 3, 3, 3]).mode().values.item(),
    torch.tensor([4, 1, 3, 2]).median().item(),
    torch.tensor([4, 1, 3, 2]).median().dtype,
)

# -- integer mean and friends: what needs a float ------------------------------------------
ints = torch.tensor([1, 2, 4])
show("mean int", lambda: ints.mean())
show("mean int dim", lambda: torch.mean(ints, 0))
print("mean dtype=", ints.mean(dtype=torch.float64).item(), ints.float().mean().item())
show("std int", lambda: ints.std())
show("var int", lambda: torch.var(ints))
show("softmax int", lambda: torch.softmax(ints, 0))
show("exp_ int", lambda: ints.clone().exp_())
print("exp int", ints.exp().dtype, ints.sqrt().dtype, ints.sigmoid().dtype, (ints / 2).dtype)
show("log int out", lambda: torch.log(ints, out=torch.empty(3, dtype=torch.int64)))
show("requires_grad int", lambda: torch.tensor([1, 2], requires_grad=True))
show("requires_grad_ int", lambda: ints.clone().requires_grad_())
show("quantile int", lambda: torch.quantile(ints, 0.5))
show("lerp int", lambda: torch.lerp(ints, ints, 0.5))
show("matmul int x float", lambda: ints.view(1, 3) @ torch.ones(3, 1))
print(
    "matmul ints",
    (torch.arange(6).view(2, 3) @ torch.arange(3)).tolist(),
    torch.mm(torch.ones(2, 2, dtype=torch.int32), torch.ones(2, 2, dtype=torch.int32)).dtype,
)

# -- mixed promotion -------------------------------------------------------------------------
cases = [
    (torch.tensor([1], dtype=torch.int8), torch.tensor([1], dtype=torch.uint8)),
    (torch.tensor([1], dtype=torch.int32), 2.5),
    (torch.tensor([1], dtype=torch.uint8), -1),
    (torch.tensor([1], dtype=torch.int16), torch.tensor(1.0, dtype=torch.float64)),
    (torch.tensor([True]), 3),
    (torch.tensor([True]), torch.tensor([1], dtype=torch.int8)),
    (torch.tensor(5), torch.tensor([1], dtype=torch.int8)),
    (torch.tensor([1], dtype=torch.int64), torch.tensor([1.0], dtype=torch.float16)),
    (True, 2.0),
    (3, torch.tensor([1.0], dtype=torch.bfloat16)),
]
for x, y in cases:
    print("result_type", torch.result_type(x, y))
for p, q in [
    (torch.int8, torch.uint8),
    (torch.uint8, torch.int16),
    (torch.bool, torch.int8),
    (torch.int64, torch.float16),
    (torch.int32, torch.bfloat16),
    (torch.bool, torch.float64),
]:
    print("promote", p, q, torch.promote_types(p, q))
for p, q in [
    (torch.int64, torch.int8),
    (torch.float32, torch.int32),
    (torch.int32, torch.float32),
    (torch.bool, torch.uint8),
    (torch.uint8, torch.bool),
    (torch.int8, torch.uint8),
    (torch.complex64, torch.float32),
]:
    print("can_cast", p, q, torch.can_cast(p, q))
print(
    "int8 + uint8",
    (torch.tensor([-1], dtype=torch.int8) + torch.tensor([255], dtype=torch.uint8)).tolist(),
)
print(
    "uint8 + int",
    (torch.tensor([250], dtype=torch.uint8) + 10).tolist(),
    (torch.tensor([250], dtype=torch.uint8) + 1000).tolist(),
    (torch.tensor([1], dtype=torch.uint8) - 2).tolist(),
)
print(
    "bool arithmetic",
    (torch.tensor([True, True]) + torch.tensor([True, False])).tolist(),
    (torch.tensor([True, True]).sum()).item(),
    (torch.tensor([True]) * 3).dtype,
)
show("bool - bool", lambda: torch.tensor([True]) - torch.tensor([False]))
show("neg bool", lambda: -torch.tensor([True]))
show("int8 += float", lambda: torch.tensor([1], dtype=torch.int8).add_(1.5))
show("uint8 *= -1 wrap", lambda: torch.tensor([3], dtype=torch.uint8).mul_(-1).tolist())
show(
    "int out float",
    lambda: torch.add(torch.tensor([1.5]), 1, out=torch.empty(1, dtype=torch.int64)),
)
show("bitwise float", lambda: torch.tensor([1.0]) & torch.tensor([1.0]))
show("shift float", lambda: torch.tensor([1.0]) << 1)
show("bitwise_not float", lambda: ~torch.tensor([1.5]))
show("xor int bool", lambda: (torch.tensor([1, 2]) ^ torch.tensor([True, False])).tolist())
show("int8 overflow scalar", lambda: torch.tensor([1], dtype=torch.int8) + 2**70)
show("fill big", lambda: torch.full((2,), 300, dtype=torch.int8))
show("tensor big", lambda: torch.tensor([300], dtype=torch.int8))
show("tensor 2**64", lambda: torch.tensor([2**64]))

# -- printing integer tensors ------------------------------------------------------------------
print(torch.tensor([1, -22, 333, -4444]))
print(torch.tensor([2**40, -3, 17]))
print(torch.tensor([[0, 255], [128, 7]], dtype=torch.uint8))
print(torch.tensor([-128, 0, 127], dtype=torch.int8), torch.tensor([1], dtype=torch.int16))
print(
    torch.tensor(7, dtype=torch.int32),
    torch.tensor([], dtype=torch.int64),
    torch.tensor([True, False]),
)
print(torch.arange(2000).view(40, 50)[:3])
print(torch.arange(2000, dtype=torch.int32) * 10**5)
img = torch.randint(0, 256, (3, 4, 5), dtype=torch.uint8)
print(img)
print(img.float().div(255).mean(dim=(1, 2)), img.to(torch.int32).sum(), img.dtype, img.shape)
print("repr long", repr(torch.tensor([9223372036854775807, -9223372036854775808])))

# -- float to integer conversions (in range only: torch leaves out-of-range undefined) ---------
fl = torch.tensor([0.0, 0.4, 0.6, 1.5, 2.5, 254.9, 255.0, -0.7])
print("to uint8 in range", fl[:7].to(torch.uint8).tolist())
print(
    "to int",
    fl.to(torch.int32).tolist(),
    fl.long().tolist(),
    fl.round().to(torch.uint8).tolist()[:7],
)
print("round half even", torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5]).round().long().tolist())
clipped = torch.tensor([-20.0, 0.3, 99.7, 300.0]).clamp(0, 255).round().to(torch.uint8)
print("clamped to uint8", clipped.tolist())
print(
    "trunc/floor/ceil",
    fl.trunc().long().tolist(),
    fl.floor().long().tolist(),
    fl.ceil().long().tolist(),
)
print(
    "bool casts",
    torch.tensor([0.0, -0.0, 0.1, float("nan")]).bool().tolist(),
    torch.tensor([0, 3, -1]).bool().tolist(),
    torch.tensor([True, False]).long().tolist(),
)
print(
    "item types",
    type(torch.tensor([3]).item()).__name__,
    type(torch.tensor([3], dtype=torch.uint8).item()).__name__,
    type(torch.tensor(True).item()).__name__,
    int(torch.tensor(-7)),
    float(torch.tensor(7)),
)
print(
    "python int ops",
    torch.tensor(7) // 2,
    7 // torch.tensor(2),
    -7 % torch.tensor(3),
    2 ** torch.tensor(10),
)

# -- random integers ------------------------------------------------------------------------
g = torch.Generator().manual_seed(1234)
print(
    "randint",
    torch.randint(10, (8,), generator=g).tolist(),
    torch.randint(-5, 5, (2, 4), generator=g).tolist(),
)
print(
    "randint dtype",
    torch.randint(0, 256, (6,), dtype=torch.uint8, generator=g).tolist(),
    torch.randint(3, (2,)).dtype,
    torch.randint(0, 2**40, (3,), generator=g).tolist(),
)
print(
    "randperm", torch.randperm(10, generator=g).tolist(), torch.randperm(5, dtype=torch.int32).dtype
)
print(
    "randint_like",
    torch.randint_like(torch.zeros(2, 3, dtype=torch.int16), 100).tolist(),
    torch.randint_like(torch.zeros(4), 3, 7).tolist(),
    torch.randint_like(torch.zeros(2, dtype=torch.int8), 5).dtype,
)
torch.manual_seed(99)
a1 = torch.randint(0, 1000, (5,))
torch.manual_seed(99)
print("reproducible", torch.equal(a1, torch.randint(0, 1000, (5,))), a1.tolist())
print(
    "multinomial ints",
    torch.multinomial(torch.tensor([1.0, 2.0, 7.0]), 6, replacement=True, generator=g).tolist(),
)
print("shuffle via randperm", torch.arange(10, 20)[torch.randperm(10, generator=g)].tolist())
show("randint low>=high", lambda: torch.randint(5, 5, (2,)))
show("randint float dtype", lambda: torch.randint(0, 3, (2,), dtype=torch.float32).tolist())
show("randint uint8 range", lambda: torch.randint(0, 300, (2,), dtype=torch.uint8))
show("randperm negative", lambda: torch.randperm(-1))
show("randint_like bool", lambda: torch.randint_like(torch.zeros(2, dtype=torch.bool), 2).tolist())

# -- typical mistakes -------------------------------------------------------------------------
show("index with float", lambda: torch.arange(5)[torch.tensor([1.0, 2.0])])
show("index with int8", lambda: torch.arange(5)[torch.tensor([1, 2], dtype=torch.int8)])
show("index out of range", lambda: torch.arange(5)[torch.tensor([5])])
show(
    "gather int32 index",
    lambda: torch.gather(torch.arange(4), 0, torch.tensor([1], dtype=torch.int32)),
)
show(
    "embedding int32",
    lambda: torch.nn.functional.embedding(
        torch.tensor([1], dtype=torch.int32), torch.eye(3)
    ).tolist(),
)
show("one_hot int32", lambda: torch.nn.functional.one_hot(torch.tensor([1], dtype=torch.int32), 3))
print(
    "one_hot",
    torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 4).tolist(),
    torch.nn.functional.one_hot(torch.tensor([0, 2])).dtype,
)
show("one_hot negative", lambda: torch.nn.functional.one_hot(torch.tensor([-1]), 3))
show(
    "cross_entropy int target dtype",
    lambda: torch.nn.functional.cross_entropy(
        torch.zeros(2, 3), torch.tensor([0, 1], dtype=torch.int32)
    ),
)
show("item on many", lambda: torch.tensor([1, 2]).item())
show("int() many", lambda: int(torch.tensor([1, 2])))
show("bool ambiguous", lambda: bool(torch.tensor([1, 2])))
show("arange zero step", lambda: torch.arange(0, 5, 0))
show("isin on a bool mask", lambda: torch.isin(torch.tensor([True, False]), torch.tensor([True])))
print("isin ids", torch.isin(torch.tensor([3, 7, 11]), torch.tensor([7, 11, 13])).tolist())
show(
    "cross of bool",
    lambda: torch.linalg.cross(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)),
)
show(
    "cross int out float",
    lambda: torch.linalg.cross(
        torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0]), out=torch.empty(3)
    ),
)
print("cross ints", torch.linalg.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0])).tolist())
counts_out = torch.empty(2, dtype=torch.int64)
torch.sum(torch.tensor([[0.6, 1.7], [2.9, 0.2]]), 1, out=counts_out)
print("sum into long out", counts_out.tolist())
running = torch.empty(3, dtype=torch.int64)
torch.cumsum(torch.tensor([200, 100, 50], dtype=torch.uint8), 0, out=running)
print("cumsum into long out", running.tolist())
show(
    "sum dtype clashes with out",
    lambda: torch.sum(torch.ones(2), 0, dtype=torch.float64, out=torch.empty(())),
)
show("cumsum_ dtype", lambda: torch.ones(2, dtype=torch.int8).cumsum_(0, dtype=torch.int64))
ids16 = torch.tensor([12, -7, 5], dtype=torch.int16)
show("abs into int8 out", lambda: torch.abs(ids16, out=torch.empty(3, dtype=torch.int8)))
show("neg into float out", lambda: torch.neg(ids16, out=torch.empty(3)))
show(
    "bitwise_not into int32 out",
    lambda: torch.bitwise_not(ids16, out=torch.empty(3, dtype=torch.int32)),
)
show("floor of ints into float out", lambda: torch.floor(ids16, out=torch.empty(3)))
show("isnan with out", lambda: torch.isnan(ids16, out=torch.empty(3, dtype=torch.bool)))
same_dtype_out = torch.empty(3, dtype=torch.int16)
torch.bitwise_not(ids16, out=same_dtype_out)
print("bitwise_not out", same_dtype_out.tolist(), torch.abs(ids16, out=same_dtype_out).tolist())
show("signbit into long out", lambda: torch.signbit(ids16, out=torch.empty(3, dtype=torch.int64)))
show("bool mask **= -1", lambda: torch.tensor([True, False]).pow_(-1))
