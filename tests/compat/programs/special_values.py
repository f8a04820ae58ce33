"""Special values through the op families, as a numerics-minded user checks them: NaN, +-inf,
-0.0, subnormals and huge values through reductions, sorting, clamping, sign ops, rounding,
division, transcendentals, softmax, nan_to_num, closeness tests, casts, low-precision
overflow, finfo, and how tensors holding them print.
"""

import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
nan, inf = float("nan"), float("inf")


def attempt(label, fn):
    """Print what fn returns, or the error type and message a user would see."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the point is to print what was raised
        print(f"{label}: {type(e).__name__}: {e}")
    else:
        print(f"{label}: {out}")


# -- reductions over rows with NaN, inf, all-NaN ------------------------------------
# (printed as tensors, 4 significant digits: float32 sums and norms add in an order that
# depends on the CPU's vector width, which moves only their last bits)
rows = torch.tensor(
    [
        [1.0, nan, 3.0, -2.0],
        [inf, 1.0, -inf, 2.0],
        [nan, nan, nan, nan],
        [inf, inf, 5.0, -1.0],
        [-0.0, 2.0, -0.0, -3.0],
    ]
)
# NOTE: no row mixes -0.0 and 0.0 under max/min: which zero torch returns on that tie
# depends on whether its vectorised or scalar kernel ran (IEEE allows either).
print("sum", rows.sum(1))
print("nansum", rows.nansum(1))
print("mean", rows.mean(1))
print("nanmean", rows.nanmean(1))
print("prod", rows.prod(1))
print("amax", rows.amax(1), "amin", rows.amin(1))
print("max", rows.max(), "min", rows.min())
print("argmax", rows.argmax(1).tolist(), "argmin", rows.argmin(1).tolist())
mx = rows.max(1)
mn = rows.min(1)
print("max(1)", mx.values, mx.indices.tolist())
print("min(1)", mn.values, mn.indices.tolist())
med = rows.median(1)
print("median", med.values, med.indices.tolist())
nmed = rows.nanmedian(1)
print("nanmedian", nmed.values, nmed.indices.tolist())
print("median all", rows.median(), rows.nanmedian())
print("std", rows.std(1), "var0", rows.var(1, correction=0))
print("std_mean", torch.std_mean(rows[[0, 2, 4]], dim=1, correction=1))
print("logsumexp", rows.logsumexp(1))
print("norm2", rows.norm(dim=1), "norm_inf", rows.norm(p=inf, dim=1))
print("norm1", torch.linalg.vector_norm(rows, ord=1, dim=1))
print("norm_-inf", torch.linalg.vector_norm(rows, ord=-inf, dim=1))
print("all/any", rows.bool().all(1).tolist(), rows.isnan().any(1).tolist())
print("count_nonzero", rows.count_nonzero(1).tolist())
print("cumsum", rows[0].cumsum(0), "cummax", rows[0].cummax(0).values, rows[0].cummax(0).indices)
print("cummin", rows[1].cummin(0).values, rows[1].cummin(0).indices.tolist())
print("cumprod", rows[3].cumprod(0), "logcumsumexp", rows[1].logcumsumexp(0))
one = torch.tensor([[1.0, inf]])
print("std of one", torch.tensor([3.0]).std(), torch.tensor([3.0]).var(correction=0))
print("std inf", one.std(1), one.var(1))
print(
    "trapezoid",
    torch.trapezoid(torch.tensor([inf, 1.0, 2.0])),
    torch.trapezoid(torch.tensor([1.0, inf, 2.0]), dx=0.5),
    torch.cumulative_trapezoid(torch.tensor([1.0, 2.0, inf])),
)
print("mode", torch.tensor([2.0, nan, 1.0, 2.0, 1.0]).mode())
print("mode ints", torch.tensor([[3, 1, 3, 1], [7, 7, 2, 2]]).mode(1))
print(
    "ties", torch.tensor([1.0, 5.0, 5.0, 2.0, 5.0]).max(0), torch.tensor([4.0, 0.0, 0.0]).argmin()
)
print("int max", torch.tensor([[3, 9, 9], [-1, -1, 0]]).max(1))

# -- empty dims: identities and errors -----------------------------------------------
e = torch.empty(3, 0)
print("empty sum", e.sum(1), e.prod(1), e.sum(), e.mean())
print("empty logsumexp", e.logsumexp(1), "norm", e.norm(dim=1))
print("empty nansum", e.nansum(1), "std", e.std(1))
print("empty amax dim0", torch.empty(0, 3).amax(1).shape)
attempt("empty max", lambda: e.max())
attempt("empty max(1)", lambda: e.max(1))
attempt("empty amax(1)", lambda: e.amax(1))
attempt("empty argmax", lambda: e.argmax())
attempt("empty argmin(1)", lambda: e.argmin(1))
attempt("empty median", lambda: e.median())
attempt("empty kthvalue", lambda: torch.empty(0).kthvalue(1))
attempt("empty min(1)", lambda: e.min(1))

# -- sort / argsort / topk / kthvalue / unique / msort with NaN and -0.0 ----------------
v = torch.tensor([3.0, nan, -0.0, 1.0, -inf, 0.0, nan, inf, 1.0, -0.0])
s = v.sort()
print("sort", s.values, s.indices.tolist())
s = v.sort(descending=True)
print("sort desc", s.values, s.indices.tolist())
s = v.sort(stable=True)
print("stable", s.values.tolist(), s.indices.tolist())
s = v.sort(stable=True, descending=True)
print("stable desc", s.values.tolist(), s.indices.tolist())
print("argsort", v.argsort(stable=True).tolist(), v.argsort(descending=True, stable=True).tolist())
print("signbit of sorted", v.sort(stable=True).values.signbit().tolist())
t = v.topk(4)
print("topk", t.values, t.indices.tolist())
t = v.topk(3, largest=False)
print("topk small", t.values, t.indices.tolist())
print("kthvalue", v.kthvalue(2), v.kthvalue(9).values, v.kthvalue(10).values)
u = torch.tensor([2.0, nan, -0.0, 0.0, 2.0, nan, inf])
print("unique", torch.unique(u))
uv, inv, cnt = torch.unique(u, return_inverse=True, return_counts=True)
print("unique parts", uv.tolist(), inv.tolist(), cnt.tolist())
print("unique_consecutive", torch.unique_consecutive(torch.tensor([1.0, 1.0, nan, nan, 2.0])))
m = torch.tensor([[nan, 1.0], [0.5, nan], [-inf, 2.0]])
print("msort", torch.msort(m))
print(
    "sort dim0",
    m.sort(0).indices.tolist(),
    "sort int",
    torch.tensor([3, -1, 3, 0]).sort(stable=True),
)
print(
    "searchsorted",
    torch.searchsorted(torch.tensor([1.0, 2.0, inf]), torch.tensor([nan, inf, -inf])),
)

# -- clamp / minimum / maximum / fmax / fmin with NaN ------------------------------------
# NOTE: no -0.0 against 0.0 here either (the tie's sign depends on torch's kernel path).
a = torch.tensor([nan, 1.0, -inf, inf, -0.0, 0.0, 5.0])
b = torch.tensor([0.0, nan, 0.0, nan, -0.0, 0.0, 2.0])
print("clamp", a.clamp(-1.0, 1.0), a.clamp(min=0.0), a.clamp(max=nan))
print("clamp tensor", a.clamp(min=b))
print("clamp_min/max", a.clamp_min(0.5), a.clamp_max(0.5))
print("minimum", torch.minimum(a, b), "maximum", torch.maximum(a, b))
print("fmin", torch.fmin(a, b), "fmax", torch.fmax(a, b))
print("max binary", torch.max(a, b), "signs", torch.maximum(a, b).signbit().tolist())
c = a.clone()
c.clamp_(-2.0, 2.0)
print("clamp_", c)
print("clip", torch.clip(a, 0.0, 3.0), "hardtanh", F.hardtanh(a))
print("relu", F.relu(a), "relu6", F.relu6(a), "leaky", F.leaky_relu(a, 0.1))
attempt("clamp none", lambda: a.clamp())
print("clamp min>max", torch.tensor([0.0, 5.0, 10.0]).clamp(6.0, 4.0))
hh = torch.tensor([1.0, 70000.0, -inf], dtype=torch.float32).half()
attempt("half clamp past its max", lambda: hh.clamp(-1e5, 1e5))
attempt("half hardtanh past its max", lambda: F.hardtanh(hh, -1e5, 1e5))
attempt("uint8 hardtanh", lambda: F.hardtanh(torch.tensor([3], dtype=torch.uint8), -1.0, 2.0))
attempt("bool clamp", lambda: torch.tensor([True, False]).clamp(min=True))
print("half clamp inf", hh.clamp(-inf, 100.0), torch.tensor([1, 9]).clamp(2.5, 7.5))

# -- sign / sgn / copysign / signbit on -0.0 and NaN --------------------------------------
z = torch.tensor([-0.0, 0.0, nan, -nan, -inf, inf, -3.0, 2.0])
print("sign", z.sign(), "signbit", z.sign().signbit().tolist())
print("sgn", z.sgn(), "abs signbit", z.abs().signbit().tolist())
print("signbit", z.signbit().tolist())
print("copysign", torch.copysign(torch.tensor(1.0), z))
print("copysign nan", torch.copysign(torch.tensor([nan, 2.0]), -1.0).signbit().tolist())
print("copysign -0", torch.copysign(torch.tensor([2.0, nan, inf]), -0.0))
cs = torch.empty(3)
torch.copysign(torch.tensor([2.0, -1.0, 0.0]), torch.tensor([-0.0, 0.0, -inf]), out=cs)
print("copysign out", cs, cs.signbit().tolist())
print("neg", (-z).signbit().tolist(), "neg zero", -torch.tensor(0.0))
print("sgn complex", torch.tensor([complex(3, 4), complex(0, 0), complex(-0.0, 1)]).sgn())
print("heaviside", torch.heaviside(z, torch.tensor(0.5)))

# -- rounding half to even, with decimals ---------------------------------------------------
h = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.5000002, -0.0, 1e20])
print("round", h.round(), "signbit", h.round().signbit().tolist())
print("floor", h.floor(), "ceil", h.ceil(), "trunc", h.trunc(), "frac", h.frac())
print("round nan", torch.tensor([nan, inf, -inf]).round())
d = torch.tensor([1.25, 1.35, 2.675, -0.125, 12345.5, 0.0])
print("round 1", d.round(decimals=1), "round 2", d.round(decimals=2))
print("round -1", torch.tensor([15.0, 25.0, 35.0, -25.0, 149.0]).round(decimals=-1))
print("round -2", torch.tensor([250.0, 350.0, 1e38]).round(decimals=-2))
print("round f64", torch.tensor([2.675, 0.285, 1.005], dtype=torch.float64).round(decimals=2))
print("round int", torch.tensor([7, -7]).round())
attempt("round int decimals", lambda: torch.tensor([15, 25]).round(decimals=-1))
print("half round", torch.tensor([0.5, 1.5, 2.5], dtype=torch.float16).round())

# -- floor_divide / remainder / fmod with inf and -0.0 --------------------------------------
n = torch.tensor([5.0, -5.0, 5.0, -5.0, inf, 0.0, -0.0, 3.0, nan, 7.5])
q = torch.tensor([3.0, 3.0, -3.0, -3.0, 2.0, 3.0, 3.0, inf, 1.0, 0.0])
print("floor_divide", torch.floor_divide(n, q))
print("div floor", torch.div(n, q, rounding_mode="floor"), torch.div(n, q, rounding_mode="trunc"))
print("remainder", torch.remainder(n, q), "signbit", torch.remainder(n, q).signbit().tolist())
print("fmod", torch.fmod(n, q), "signbit", torch.fmod(n, q).signbit().tolist())
print("rem neg inf", torch.remainder(torch.tensor([3.0, -3.0]), -inf))
print("div zero", torch.tensor([1.0, -1.0, 0.0, -0.0]) / 0.0, torch.tensor([1.0]) / -0.0)
print("true_divide", torch.true_divide(torch.tensor([1, -1, 0]), 0))
print(
    "int floor_divide",
    torch.floor_divide(torch.tensor([7, -7, 7, -7]), torch.tensor([2, 2, -2, -2])),
)
print("int remainder", torch.remainder(torch.tensor([7, -7, 7, -7]), torch.tensor([3, 3, -3, -3])))
print("int fmod", torch.fmod(torch.tensor([7, -7, 7, -7]), torch.tensor([3, 3, -3, -3])))
attempt("int div by zero", lambda: torch.tensor([1, 2]) // torch.tensor([0, 1]))
attempt("int remainder zero", lambda: torch.remainder(torch.tensor([5]), 0))
print("python %", torch.tensor([-1.0, 1.0, -0.0]) % 3.0, torch.tensor([5.5]) % -2.0)

# -- transcendentals at their edges -------------------------------------------------------
# (as tensors, 4-5 digits: float32 exp/log/sigmoid round differently by an ulp between
# kernels; tolist() only where the result is exact, as log10 of a power of ten)
x = torch.tensor([-inf, -1.0, -0.0, 0.0, 1e-30, 1.0, 88.0, 89.0, inf, nan])
print("exp", x.exp())
print("log", x.log())
print("log1p", torch.tensor([-1.0, -2.0, -0.0, 1e-30, inf, nan]).log1p())
print("expm1", torch.tensor([-inf, -0.0, 1e-30, 89.0, inf]).expm1())
print("sqrt", x.sqrt(), "sqrt -0 signbit", torch.tensor(-0.0).sqrt().signbit().item())
print("rsqrt", x.rsqrt())
print("log2/log10", torch.tensor([0.0, -0.0, 8.0, inf]).log2(), torch.tensor([1000.0, 0.0]).log10())
print("log10 of powers", torch.log10(torch.tensor([1e-5, 0.01, 100.0, 1e6, 1e10])).tolist())
print("log2 of powers", torch.tensor([2.0**-140, 0.125, 1024.0, 2.0**100]).log2().tolist())
print("exp2", torch.tensor([-inf, 128.0, -150.0, 10.0]).exp2())
print("reciprocal", torch.tensor([0.0, -0.0, inf, -inf, nan]).reciprocal())
base = torch.tensor([0.0, -0.0, -0.0, 0.0, -1.0, -1.0, 1.0, nan, -8.0, inf, -inf, 2.0])
ex = torch.tensor([0.0, -1.0, 3.0, -2.0, inf, 0.5, nan, 0.0, 1.0 / 3, -1.0, 3.0, 200.0])
print("pow", torch.pow(base, ex))
print("pow scalar", torch.pow(2.0, torch.tensor([-inf, 1024.0, -1075.0])), torch.tensor([nan]) ** 0)
h16 = torch.tensor([-inf, -0.0, 0.0, 4.0], dtype=torch.float16)
print("pow 0.5", torch.tensor([-inf, -0.0, 4.0]) ** 0.5, h16**0.5, h16**-0.5)
print(
    "pow tensor 0.5",
    torch.tensor([-inf, -0.0, 4.0]) ** torch.tensor(0.5),
    torch.tensor([-inf, -0.0]).sqrt(),
)
print("pow int", torch.tensor([2, -2, 0]) ** 3, torch.pow(torch.tensor([0, 2]), 0))
attempt("int neg pow", lambda: torch.tensor([2, 3]) ** -1)
print("float_power", torch.float_power(torch.tensor([-8.0, 0.0]), torch.tensor([1.0 / 3, -1.0])))
print("sigmoid", torch.sigmoid(torch.tensor([-inf, -100.0, 0.0, 100.0, inf, nan])))
print("tanh", torch.tanh(torch.tensor([-inf, -0.0, 20.0, inf, nan])))
print(
    "atan2",
    torch.atan2(
        torch.tensor([0.0, -0.0, 0.0, -0.0, inf]), torch.tensor([0.0, 0.0, -0.0, -0.0, inf])
    ),
)
print("hypot", torch.hypot(torch.tensor([inf, nan, 3e38]), torch.tensor([nan, inf, 3e38])))
print(
    "sinc",
    torch.sinc(torch.tensor([0.0, -0.0, 1.0, 0.5, inf, nan])),
    torch.sinc(torch.tensor([0.0, 1.0, -1.0, 2.5, 65504.0], dtype=torch.float16)),
)
print(
    "logaddexp half",
    torch.logaddexp(
        torch.tensor([1.0, 0.5], dtype=torch.float16),
        torch.tensor([-0.5, -inf], dtype=torch.bfloat16),
    ),
)
lo = torch.empty(3, dtype=torch.float64)
torch.logaddexp(torch.tensor([-inf, 0.0, 700.0]), torch.tensor([-inf, 0.0, 700.0]), out=lo)
print("logaddexp out", lo)
print(
    "logaddexp",
    torch.logaddexp(torch.tensor([-inf, inf, -inf, 1.0]), torch.tensor([-inf, inf, 2.0, nan])),
)
print("xlogy", torch.xlogy(torch.tensor([0.0, 0.0, nan, 1.0]), torch.tensor([0.0, nan, 0.0, 0.0])))
print(
    "special",
    torch.special.xlog1py(torch.tensor([0.0]), torch.tensor([-1.0])),
    torch.special.entr(torch.tensor([0.0, -1.0, inf])),
    torch.special.expit(torch.tensor([inf])),
)
print(
    "erf",
    torch.erf(torch.tensor([-inf, -0.0, inf, nan])),
    torch.erfinv(torch.tensor([-1.0, 1.0, 2.0])),
)
print("lgamma", torch.lgamma(torch.tensor([0.0, -0.0, -1.0, inf, -inf])))
print("digamma", torch.digamma(torch.tensor([0.0, -0.0, -1.0, inf])))

# -- softmax / log_softmax with -inf rows ---------------------------------------------------
logits = torch.tensor(
    [
        [1.0, -inf, 2.0, -inf],
        [-inf, -inf, -inf, -inf],
        [inf, 1.0, 2.0, 3.0],
        [1000.0, 1000.0, -1000.0, 0.0],
        [nan, 1.0, 2.0, 3.0],
    ]
)
print("softmax", logits.softmax(1))
print("log_softmax", logits.log_softmax(1))
print("F.softmax dtype", F.softmax(logits[:1].half(), dim=1, dtype=torch.float32).dtype)
mask = torch.tensor([[True, False, True], [False, False, False]])
scores = torch.zeros(2, 3).masked_fill(~mask, -inf)
print("masked attention", scores.softmax(-1))
print("softmin", F.softmin(logits[0], 0), "logsigmoid", F.logsigmoid(torch.tensor([-inf, inf])))
print("cross_entropy inf", F.cross_entropy(logits[:1], torch.tensor([1])))
print("cross_entropy ok", F.cross_entropy(logits[:1], torch.tensor([2])))

# -- nan_to_num ---------------------------------------------------------------------------
w = torch.tensor([nan, inf, -inf, 1.5, -0.0])
print("nan_to_num", w.nan_to_num())
print("nan_to_num args", w.nan_to_num(nan=0.5, posinf=9.0, neginf=-9.0), w.nan_to_num(posinf=1e30))
print("nan_to_num f16", w.half().nan_to_num(), w.double().nan_to_num().tolist()[:3])
print("nan_to_num bf16", w.bfloat16().nan_to_num())
print("nan_to_num nan=inf", w.nan_to_num(nan=inf), torch.nan_to_num(w, None, None, -1.0))
print("nan_to_num int", torch.tensor([1, 2]).nan_to_num(nan=0.0))
w.nan_to_num_(nan=-1.0)
print("nan_to_num_", w)
out = torch.empty(5)
torch.nan_to_num(torch.tensor([nan, inf, -inf, 1.0, 2.0]), 7.0, out=out)
print("nan_to_num out", out)

# -- isclose / allclose / equal -----------------------------------------------------------
p = torch.tensor([1.0, nan, inf, -inf, inf, 1e-9, 0.0, 1.0])
r = torch.tensor([1.0 + 1e-7, nan, inf, inf, 1e38, 0.0, -0.0, 1.1])
print("isclose", torch.isclose(p, r).tolist())
print("isclose equal_nan", torch.isclose(p, r, equal_nan=True).tolist())
print("isclose tol", torch.isclose(p, r, rtol=0.2, atol=0.0).tolist())
print(
    "allclose",
    torch.allclose(p[:1], r[:1]),
    torch.allclose(p[1:2], r[1:2]),
    torch.allclose(p[1:3], r[1:3], equal_nan=True),
)
print(
    "equal",
    torch.equal(p, p),
    torch.equal(p[2:], p[2:]),
    torch.equal(torch.tensor([0.0]), torch.tensor([-0.0])),
)
print("eq", (p == p).tolist(), (p != p).tolist())
print("isnan/isinf/isfinite", p.isnan().tolist(), p.isinf().tolist(), p.isfinite().tolist())
print(
    "isposinf/isneginf/isreal",
    p.isposinf().tolist(),
    p.isneginf().tolist(),
    p.isreal().all().item(),
)
print(
    "isclose int",
    torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3])).tolist(),
    torch.isclose(
        torch.tensor([1, 2, 250], dtype=torch.uint8),
        torch.tensor([2, 4, 255], dtype=torch.uint8),
        atol=1.5,
    ).tolist(),
)
print(
    "isclose bool",
    torch.isclose(torch.tensor([True, False]), torch.tensor([False, False]), atol=1).tolist(),
)
print(
    "isclose half",
    torch.isclose(
        torch.tensor([6e4, 1.0], dtype=torch.float16),
        torch.tensor([-6e4, 1.001], dtype=torch.float16),
        atol=1e6,
    ).tolist(),
)
attempt("isclose neg rtol", lambda: torch.isclose(p, r, rtol=-1.0))
attempt(
    "allclose dtypes",
    lambda: torch.allclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)),
)

# -- integer conversion of in-range floats -------------------------------------------------
f = torch.tensor([2.9, -2.9, -0.0, 0.5, -0.5, 127.0, -128.0, 1e9, 2147483520.0])
print("to int32", f.int().tolist(), "to int64", f.long().tolist())
print(
    "to int8",
    f[:7].to(torch.int8).tolist(),
    "to uint8",
    torch.tensor([0.0, 255.9, 3.7]).byte().tolist(),
)
print("to bool", torch.tensor([nan, -0.0, 0.0, 1e-45, inf]).bool().tolist())
print(
    "bool to float",
    torch.tensor([True, False]).float(),
    "int to half",
    torch.tensor([65504, 65520, 70000]).half(),
)
print("int64 to float32", torch.tensor([2**24 + 1, 2**53 + 1, -(2**31)]).float().tolist())
print("int64 to float64", torch.tensor([2**53 + 1, 2**62]).double().tolist())
print(
    "item int", torch.tensor(3.99).int().item(), int(torch.tensor(-3.99)), float(torch.tensor(-0.0))
)
print(
    "math.isnan item",
    math.isnan(torch.tensor(nan).item()),
    math.copysign(1, torch.tensor(-0.0).item()),
)

# -- float16 / bfloat16 overflow and subnormals --------------------------------------------
big = torch.tensor([65504.0, 65519.99, 65520.0, 1e6, -7e4, 3.4e38, 3.4e39 if False else 3.0e38])
print("half", big.half(), big.half().isinf().tolist())
print("bf16", big.bfloat16(), big.bfloat16().isinf().tolist())
sub = torch.tensor(
    [6.103515625e-05, 6.0e-05, 5.960464477539063e-08, 2.98e-08, 2.9802322387695312e-08, 1e-8]
)
print("half subnormal", sub.half().tolist(), (sub.half() == 0).tolist())
print("bf16 subnormal", torch.tensor([1e-38, 9.2e-41, 1e-45, 1e-46]).bfloat16().tolist())
print("f32 subnormal", torch.tensor([1e-38, 1e-45, 7e-46, 1e-46]).tolist())
print(
    "half arith",
    torch.tensor([60000.0], dtype=torch.float16) * 2,
    torch.tensor([1e-4], dtype=torch.float16) ** 2,
)
print("half sum", torch.full((10,), 10000.0, dtype=torch.float16).sum())
print("half mean", torch.full((10,), 10000.0, dtype=torch.float16).mean())
print(
    "bf16 add",
    torch.tensor([256.0], dtype=torch.bfloat16) + 1,
    torch.tensor([1.0], dtype=torch.bfloat16) + 0.004,
)
print("half exp", torch.tensor([11.0, 12.0], dtype=torch.float16).exp())
print("f64 huge", torch.tensor([1e308], dtype=torch.float64) * 10, torch.tensor([1e308]).dtype)
print(
    "f32 from huge", torch.tensor([1e39, -1e39, 1e-50]), torch.tensor(5e-324, dtype=torch.float64)
)
print(
    "nextafter",
    torch.nextafter(torch.tensor([0.0, 1.0, inf]), torch.tensor([1.0, 2.0, 0.0])).tolist(),
)
print("ldexp", torch.ldexp(torch.tensor([1.0, 1.0]), torch.tensor([-149, 128])))
print("frexp", torch.frexp(torch.tensor([0.0, -0.0, 8.0, 1e-45])))

# -- finfo fields --------------------------------------------------------------------------
for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    fi = torch.finfo(dt)
    print(fi.dtype, fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution)
print(torch.finfo(torch.float16))
print(torch.finfo(torch.complex64).dtype, torch.finfo(torch.complex128).bits, torch.finfo().bits)
print(torch.iinfo(torch.int64), torch.iinfo(torch.uint8).max)
attempt("finfo int", lambda: torch.finfo(torch.int32))
attempt("iinfo float", lambda: torch.iinfo(torch.float32))

# -- printing tensors holding these values --------------------------------------------------
# (the inputs are exact or rounded once on conversion, so every printed digit is the same)
print(torch.tensor([nan, inf, -inf, -0.0, 0.0, 1.5]))
print(torch.tensor([-0.0]), torch.tensor(-0.0), repr(torch.tensor(nan)), repr(torch.tensor(-inf)))
print(torch.tensor([1e-8, 1.0, 1e8]))
print(torch.tensor([1e-5, 1.0]), torch.tensor([1.0, 1000.0]), torch.tensor([1.0, 1e4]))
print(torch.tensor([1.0, nan, 1e10]), torch.tensor([nan, nan]), torch.tensor([inf, -inf]))
print(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, nan]), torch.tensor([100000.0, 1.0]))
print(torch.tensor([1e-45, 1.0]), torch.tensor([3.4e38, -1.0]))
print(torch.tensor([nan, 2.0], dtype=torch.float16), torch.tensor([inf, 1.0], dtype=torch.bfloat16))
print(
    torch.tensor([nan, 0.1], dtype=torch.float64),
    torch.tensor([complex(nan, inf), complex(-0.0, 1)]),
)
print(torch.tensor([[nan, 1.0], [-inf, 123456.0]]))
print(torch.tensor(1e-9), torch.tensor(123456789.0), torch.tensor(0.1, dtype=torch.float64))
print(
    torch.tensor([nan, inf, -0.0]).tolist(),
    torch.tensor(-0.0).item(),
    torch.tensor([1e-45]).tolist(),
)
print(torch.tensor([0.1, 0.2]).tolist(), torch.tensor([0.1], dtype=torch.float16).tolist())
print(str(torch.tensor([True, False])), torch.tensor([0, -1, 2**40]))
torch.set_printoptions(precision=2)
print("p2", torch.tensor([1.23456, nan, -0.0]), torch.tensor([1e-5, 1.0]))
torch.set_printoptions(sci_mode=True)
print("sci", torch.tensor([1.5, -0.0, inf, nan]))
torch.set_printoptions(sci_mode=False)
print("nosci", torch.tensor([1e-8, 1e8, nan]))
torch.set_printoptions(precision=6, sci_mode=None)
print("p6", torch.tensor([math.pi, -inf]))
torch.set_printoptions(threshold=5, edgeitems=2)
print("summarised", torch.tensor([nan, 1.0, 2.0, 3.0, 4.0, 5.0, inf]))
torch.set_printoptions(profile="default")
print("default", torch.tensor([math.pi, nan]), torch.arange(8.0))
torch.set_printoptions(linewidth=30)
print(torch.tensor([1.5, nan, -inf, 2.25, 1e3, -0.0, 7.0, 8.0]))
torch.set_printoptions(profile="default")
print(f"{torch.tensor(nan).item():.3f} {torch.tensor(-0.0).item():+.1f} {torch.tensor(inf).item()}")
print(
    format(torch.tensor(2.5), ".2f"),
    f"{torch.tensor(-0.0):.1f}",
    f"{torch.tensor(1e-40).item():.2e}",
)
