"""Complex-valued deep learning: complex tensors, Wirtinger autograd, complex layers and optimizers.

A tour as a practitioner of complex networks (MRI reconstruction, radar, audio STFT models)
would write it: build complex data, check the conjugate bit, differentiate real losses of
complex parameters, train complex layers, compare FFT convolution with direct convolution,
and catch the usual mistakes.
"""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4)


def show(name, t):
    print(f"{name}: {t}")


def fmt(z):
    z = complex(z)
    return f"({z.real:.5f}{z.imag:+.5f}j)"


print("== construction ==")
re = torch.tensor([1.0, -2.0, 0.5])
im = torch.tensor([0.0, 3.0, -1.5])
z = torch.complex(re, im)
show("complex", z)
print(z.dtype, z.shape, z.is_complex(), z.is_floating_point())
p = torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.0, math.pi / 2]))
show("polar", p)
pairs = torch.randn(2, 3, 2)
c = torch.view_as_complex(pairs)
print("view_as_complex", c.dtype, tuple(c.shape), c.stride(), c.data_ptr() == pairs.data_ptr())
back = torch.view_as_real(c)
print("view_as_real", back.dtype, tuple(back.shape), back.stride(), torch.equal(back, pairs))
c[0, 0] = 5 + 6j
print("shared storage:", pairs[0, 0].tolist())
z2 = torch.zeros(3, dtype=torch.cfloat)
z2.real = torch.tensor([1.0, 2.0, 3.0])
z2.imag[1:] = -1.0
show("set real/imag", z2)
z2.real.mul_(10)
show("mul_ on .real", z2)
print("real is view:", z2.real.stride(), z2.imag.storage_offset(), z2.real.dtype)
print("arange complex", torch.arange(3, dtype=torch.double) * 1j)
print("linspace", torch.linspace(0, 1 + 1j, 3))
print("ones_like", torch.ones_like(z), "randn", torch.randn(2, dtype=torch.cfloat))

print("== conjugate bit ==")
w = torch.tensor([1 + 2j, 3 - 4j, -0.5 + 0.25j])
wc = w.conj()
print("is_conj", w.is_conj(), torch.is_conj(w))
show("conj", wc)
r = wc.resolve_conj()
print("resolve_conj", r.is_conj(), torch.equal(r, wc))
cp = torch.conj_physical(w)
print("conj_physical", cp.is_conj(), torch.equal(cp, wc))
v = w.clone()
v.imag.mul_(-1)
show("in-place conj through .imag", v)
v.imag[0] = 10
show("setitem through .imag", v)
print("conj of real is self:", re.conj() is re, re.conj().is_conj())
print("conj().conj()", wc.conj().is_conj(), torch.equal(wc.conj(), w))
print("imag of conj", wc.imag)
print("resolve_neg", wc.imag.resolve_neg().is_neg())
print("mul with conj", w * w.conj())
print("conj_physical_ in place", torch.conj_physical_(w.clone()))

print("== elementwise ==")
show("abs", z.abs())
show("angle", z.angle())
show("sgn", z.sgn())
print("sgn(0)", torch.sgn(torch.zeros(1, dtype=torch.cfloat)))
show("exp", torch.exp(z))
show("log", torch.log(z))
show("sqrt", torch.sqrt(z))
show("reciprocal", z.reciprocal())
show("pow 2", z**2)
show("pow 0.5", z**0.5)
show("tanh", torch.tanh(z))
show("sigmoid", torch.sigmoid(z))
show("exp2", torch.exp2(z))
show("log2 / log10", torch.stack([torch.log2(z), torch.log10(z)]))
show("log1p / expm1", torch.stack([torch.log1p(z * 1e-3), torch.expm1(z * 1e-3)]))
show("pow 3 / pow -2", torch.stack([z**3, z**-2]))
edge = torch.tensor([complex(-2.0, -0.0), 1 + 0j, 0j, -1j])
show("sgn at signed zeros", edge.sgn())
show("reciprocal at signed zeros", edge.reciprocal())
show("exp2 at signed zeros", edge.exp2())
show("pow -1 / pow 1", torch.stack([edge**-1, edge**1]))
show("log1p branch cut", torch.tensor([complex(-3.0, -0.0), complex(-3.0, 0.0)]).log1p())
show("(-1+0j) ** 4 (via exp/log)", torch.tensor([-1 + 0j], dtype=torch.cdouble) ** 4)
cut = torch.tensor(
    [complex(-4.0, 0.0), complex(-4.0, -0.0), complex(-1.0, 0.0), complex(-1.0, -0.0)]
)
cut.imag[1] = -0.0
cut.imag[3] = -0.0
print("imag signs", [math.copysign(1.0, x) for x in cut.imag.tolist()])
show("sqrt branch cut", torch.sqrt(cut))
show("log branch cut", torch.log(cut))
show("angle branch cut", torch.angle(cut))
print(
    "isfinite", torch.isfinite(torch.tensor([1 + 1j, complex(math.inf, 0), complex(0, math.nan)]))
)
print("isclose", torch.isclose(z, z + 1e-9), torch.allclose(z, z * (1 + 1e-7)))
print("abs dtype", z.abs().dtype, torch.abs(z.to(torch.cdouble)).dtype)
print("sum/mean", z.sum(), z.mean(), z.prod())
print("cumsum", torch.cumsum(z, 0))
print("norm", torch.linalg.norm(z), z.norm())
print("vdot", torch.vdot(w, z), torch.dot(w, z))

print("== promotion ==")
cf = torch.tensor([1 + 1j], dtype=torch.cfloat)
print("cfloat * double:", (cf * torch.tensor([2.0], dtype=torch.double)).dtype)
print("cfloat * double scalar-tensor:", (cf * torch.tensor(2.0, dtype=torch.double)).dtype)
print("int + 1j:", (torch.tensor([1, 2]) + 1j).dtype, torch.tensor([1, 2]) + 1j)
print("float + 1j:", (torch.tensor([1.5]) + 1j).dtype)
print("double + 1j:", (torch.tensor([1.5], dtype=torch.double) + 1j).dtype)
print(
    "result_type",
    torch.result_type(torch.tensor([1]), 1j),
    torch.result_type(cf, 1.0),
    torch.result_type(torch.tensor([1.0], dtype=torch.double), cf),
)
print(
    "promote_types",
    torch.promote_types(torch.cfloat, torch.double),
    torch.promote_types(torch.float16, torch.complex64),
)
print(
    "can_cast", torch.can_cast(torch.cfloat, torch.float), torch.can_cast(torch.float, torch.cfloat)
)
print("complex from python", torch.tensor([1, 2.5, 3j]).dtype, torch.tensor(1j).dtype)
print("to real/imag dtypes", cf.real.dtype, torch.tensor([1j], dtype=torch.cdouble).imag.dtype)
print(
    "default complex dtype", torch.get_default_dtype(), torch.empty(0, dtype=torch.complex64).dtype
)
print("item", torch.tensor(1 + 2j).item(), type(torch.tensor(1 + 2j).item()).__name__)
print("tolist", torch.tensor([1 + 2j, 3j]).tolist())

print("== printing ==")
print(torch.tensor([complex(math.nan, 1.0), complex(math.inf, -math.inf), 1 + 0j]))
print(torch.tensor([1e-5 + 1e5j, 2.0 + 3.0j]))
print(torch.tensor([1e10 + 1j, 1 + 1e-10j]))
print(torch.tensor([[0.5 + 0.25j, -1.0 - 2.0j], [3.0 + 0j, 0.0 - 0.125j]], dtype=torch.cdouble))
print(torch.zeros(2, dtype=torch.cfloat))
print(torch.tensor(3 - 4j))
print(torch.tensor([1 + 2j], requires_grad=True))
print(repr(torch.tensor([1.0 - 0.0j])))

print("== Wirtinger autograd ==")
zz = torch.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
loss = (zz.abs() ** 2).sum()
loss.backward()
print("d|z|^2:", zz.grad, "(= 2z)")
zz.grad = None
loss = (zz * zz.conj()).real.sum()
loss.backward()
print("d(z z*):", zz.grad)
zw = torch.tensor([0.5 - 1j, 2 + 2j], requires_grad=True)
zz.grad = None
loss = torch.real(zz * zw.conj()).sum()
loss.backward()
print("d real(z w*) / dz:", zz.grad, "/ dw:", zw.grad)
print(
    "grad_fn",
    loss.grad_fn.name(),
    (zz * zw).grad_fn.name(),
    zz.abs().grad_fn.name(),
    zz.conj().grad_fn.name(),
)
y = zz * (2 - 1j)
go = torch.tensor([1 + 1j, 0.5j])
(g,) = torch.autograd.grad(y, zz, grad_outputs=go)
print("grad with complex grad_outputs:", g)
try:
    (zz * 2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
xr = torch.tensor([0.3, -0.7], requires_grad=True)
out = torch.polar(torch.ones(2), xr).imag.sum()
out.backward()
print("d imag(e^{ix}) / dx:", xr.grad)
xr.grad = None
m = torch.complex(xr, xr * 2)
(m.abs().sum()).backward()
print("through torch.complex:", xr.grad)
vr = torch.randn(3, 2, requires_grad=True)
(torch.view_as_complex(vr).angle().sum()).backward()
print("angle via view_as_complex grad:", vr.grad)


def cfun(a, b):
    return torch.exp(a) * b.conj() + torch.sqrt(a * b)


a64 = torch.randn(3, dtype=torch.cdouble, requires_grad=True)
b64 = torch.randn(3, dtype=torch.cdouble, requires_grad=True)
print("gradcheck complex:", torch.autograd.gradcheck(cfun, (a64, b64)))
print(
    "gradgradcheck complex:",
    torch.autograd.gradgradcheck(lambda a: (a * a.conj() * a).sin(), (a64,)),
)

print("== complex linear layers ==")
torch.manual_seed(1)
lin = nn.Linear(4, 3, dtype=torch.cfloat)
print("params", [(n, p.dtype, tuple(p.shape)) for n, p in lin.named_parameters()])
xin = torch.randn(5, 4, dtype=torch.cfloat)
yout = lin(xin)
print("linear out", yout.dtype, tuple(yout.shape), yout.grad_fn.name())
ref = xin @ lin.weight.T + lin.bias
print("matches matmul:", torch.allclose(yout, ref, atol=1e-6))
print("weight[0]", lin.weight[0].detach())
loss = yout.abs().pow(2).mean()
loss.backward()
print("loss", f"{loss.item():.5f}", "grad dtype", lin.weight.grad.dtype, "bias grad", lin.bias.grad)


class ComplexConv2d(nn.Module):
    """Complex convolution via two real convolutions: (A + iB)(x + iy)."""

    def __init__(self, cin, cout, k):
        super().__init__()
        self.re = nn.Conv2d(cin, cout, k, padding=1, bias=False)
        self.im = nn.Conv2d(cin, cout, k, padding=1, bias=False)

    def forward(self, x):
        xr, xi = x.real, x.imag
        return torch.complex(self.re(xr) - self.im(xi), self.re(xi) + self.im(xr))


def modrelu(x, b):
    mag = x.abs()
    return F.relu(mag + b) * x / (mag + 1e-6)


class ComplexCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = ComplexConv2d(1, 4, 3)
        self.b1 = nn.Parameter(torch.full((1, 4, 1, 1), -0.1))
        self.c2 = ComplexConv2d(4, 2, 3)
        self.head = nn.Linear(2 * 6 * 6, 3)

    def forward(self, x):
        h = modrelu(self.c1(x), self.b1)
        h = self.c2(h)
        return self.head(h.abs().flatten(1))


torch.manual_seed(2)
cnn = ComplexCNN()
xs = torch.randn(8, 1, 6, 6, dtype=torch.cfloat)
ys = torch.randint(0, 3, (8,))
opt = torch.optim.Adam(cnn.parameters(), lr=0.01)
for step in range(6):
    opt.zero_grad()
    logits = cnn(xs)
    l = F.cross_entropy(logits, ys)
    l.backward()
    opt.step()
    if step % 2 == 0:
        print(f"cnn step {step} loss {l.item():.4f}")
print("cnn out", cnn(xs)[:2].detach())
# the same real convolution pair equals a direct complex convolution
k = torch.complex(cnn.c1.re.weight, cnn.c1.im.weight).detach()
direct = F.conv2d(xs, k, padding=1)
print(
    "complex conv2d matches:", torch.allclose(direct, cnn.c1(xs).detach(), atol=1e-5), direct.dtype
)

# nn.Conv1d with a complex dtype: PyTorch runs three real convolutions (Gauss's trick)
torch.manual_seed(4)
cconv = nn.Conv1d(2, 2, 3, padding=1, dtype=torch.cfloat)
cx = torch.randn(1, 2, 5, dtype=torch.cfloat)
cy = cconv(cx)
print("nn.Conv1d(cfloat)", cy.grad_fn.name(), tuple(cy.shape))
print(cy[0, 0].detach())
cy.abs().sum().backward()
print("conv weight grad", cconv.weight.grad[0, 0], "bias grad", cconv.bias.grad)
print("unbatched", cconv(cx[0]).grad_fn.name())
tconv = nn.ConvTranspose1d(2, 1, 2, stride=2, dtype=torch.cfloat)
print("ConvTranspose1d(cfloat)", tconv(cx).grad_fn.name(), tuple(tconv(cx).shape))

print("== FFT convolution ==")
sig = torch.randn(16)
ker = torch.randn(5)
n = sig.numel() + ker.numel() - 1
fftc = torch.fft.irfft(torch.fft.rfft(sig, n) * torch.fft.rfft(ker, n), n)
dconv = F.conv1d(sig.view(1, 1, -1), ker.flip(0).view(1, 1, -1), padding=ker.numel() - 1).view(-1)
print("fft vs direct max err < 1e-5:", (fftc - dconv).abs().max().item() < 1e-5)
print("fft conv first", fftc[:4])
spec = torch.fft.fft(sig)
print("fft dtype", spec.dtype, "hermitian:", torch.allclose(spec[1], spec[-1].conj()))
print("fft of a constant", torch.fft.fft(torch.ones(4)), torch.fft.ifft(torch.ones(4)))
print("fft of a ramp", torch.fft.fft(torch.arange(6.0)))
print("parseval", f"{sig.pow(2).sum().item():.4f}", f"{(spec.abs() ** 2).sum().item() / 16:.4f}")
circ = torch.fft.ifft(torch.fft.fft(sig) * torch.fft.fft(ker, 16)).real
print("circular", circ[:3])
img = torch.randn(8, 8)
img_k = torch.zeros(8, 8)
img_k[:3, :3] = torch.randn(3, 3)
f2 = torch.fft.ifft2(torch.fft.fft2(img) * torch.fft.fft2(img_k)).real
print("fft2 conv", f2[0, :3])
sig_g = torch.randn(8, requires_grad=True)
torch.fft.fft(sig_g).abs().sum().backward()
print("grad through fft", sig_g.grad[:4])

print("== complex linalg ==")
torch.manual_seed(3)
A = torch.randn(3, 3, dtype=torch.cdouble)
B = torch.randn(3, 2, dtype=torch.cdouble)
print("matmul", (A @ B)[0])
print("einsum", torch.einsum("ij,jk->ik", A, B)[1], torch.einsum("i,i->", A[0], A[1].conj()))
print("mH", torch.equal(A.mH, A.conj().transpose(-2, -1)), A.adjoint()[0, 1])
print("bmm", torch.bmm(A.unsqueeze(0), B.unsqueeze(0)).shape)
M = torch.tensor([[0.0, -1.0, 2.0], [1.0, 0.0, 0.5], [0.0, 0.3, 1.0]], dtype=torch.double)
ev, evec = torch.linalg.eig(M)
order = sorted(range(3), key=lambda i: (round(ev[i].real.item(), 6), round(ev[i].imag.item(), 6)))
print("eig", ev.dtype, [fmt(ev[i]) for i in order])
print(
    "eig reconstruct:",
    torch.allclose(evec @ torch.diag(ev) @ torch.linalg.inv(evec), M.to(torch.cdouble)),
)
evals = torch.linalg.eigvals(M)
print("eigvals |.| sorted", sorted(round(x, 5) for x in evals.abs().tolist()))
H = A + A.mH
eh = torch.linalg.eigvalsh(H)
print("eigvalsh", eh.dtype, eh)
print(
    "det",
    fmt(torch.linalg.det(A)),
    "inv check",
    torch.allclose(A @ torch.linalg.inv(A), torch.eye(3, dtype=A.dtype)),
)
q, rr = torch.linalg.qr(A)
print(
    "qr unitary:",
    torch.allclose(q.mH @ q, torch.eye(3, dtype=A.dtype)),
    rr.diagonal().imag.abs().max().item() < 1e-12,
)
sv = torch.linalg.svdvals(A)
print("svdvals", sv)
sol = torch.linalg.solve(A, B)
print("solve residual < 1e-10:", (A @ sol - B).abs().max().item() < 1e-10)

print("== complex optimizers ==")


def fit(param, opt_cls, as_real, **kw):
    target = torch.tensor([1 - 1j, 2 + 0.5j, -0.5 + 2j])
    if as_real:
        p = torch.view_as_real(param.detach().clone()).requires_grad_()
        opt = opt_cls([p], **kw)
        for _ in range(20):
            opt.zero_grad()
            loss = (torch.view_as_complex(p) - target).abs().pow(2).sum()
            loss.backward()
            opt.step()
        return torch.view_as_complex(p.detach())
    p = param.detach().clone().requires_grad_()
    opt = opt_cls([p], **kw)
    for _ in range(20):
        opt.zero_grad()
        loss = (p - target).abs().pow(2).sum()
        loss.backward()
        opt.step()
    return p.detach()


start = torch.zeros(3, dtype=torch.cfloat)
for cls, kw in [
    (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    (torch.optim.Adam, {"lr": 0.1}),
    (torch.optim.AdamW, {"lr": 0.1, "weight_decay": 0.01}),
    (torch.optim.RMSprop, {"lr": 0.05}),
]:
    pc = fit(start, cls, False, **kw)
    pr = fit(start, cls, True, **kw)
    print(cls.__name__, pc, "same as view_as_real:", torch.allclose(pc, pr, atol=1e-6))

print("== typical mistakes ==")
zc = torch.tensor([1 + 1j, 2 - 1j])
for name, fn in [
    ("lt", lambda: zc < zc),
    ("max", lambda: torch.max(zc)),
    ("sort", lambda: torch.sort(zc)),
    ("relu", lambda: F.relu(zc)),
    ("clamp", lambda: zc.clamp(0, 1)),
    ("floor", lambda: zc.floor()),
    ("argmax", lambda: zc.argmax()),
    ("atan2", lambda: torch.atan2(zc, zc)),
    ("view_as_complex bad", lambda: torch.view_as_complex(torch.randn(3))),
    ("view_as_complex double", lambda: torch.view_as_complex(torch.randn(2, 3))),
    ("complex int", lambda: torch.complex(torch.tensor([1]), torch.tensor([2]))),
    ("polar dtype mix", lambda: torch.polar(torch.ones(2), torch.ones(2, dtype=torch.double))),
    ("bool of complex", lambda: bool(torch.tensor([1j, 0j]))),
    ("int of complex", lambda: int(torch.tensor(1 + 1j))),
    ("float of complex", lambda: float(torch.tensor(1 + 1j))),
    ("real from real", lambda: torch.zeros(2).imag),
    ("backward non-real scalar", lambda: zc.clone().requires_grad_().sum().backward()),
    ("fft into a real out=", lambda: torch.fft.fft(torch.ones(4), out=torch.empty(4))),
    ("irfft into a complex out=", lambda: torch.fft.irfft(zc, out=torch.empty(2, dtype=zc.dtype))),
    ("rfft of complex", lambda: torch.fft.rfft(zc)),
    ("complex conv, real weight", lambda: F.conv1d(zc.view(1, 1, 2), torch.ones(1, 1, 1))),
]:
    try:
        res = fn()
        print(name, "ok:", res)
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
for name, fn in [
    ("sigmoid", torch.sigmoid),
    ("tanh", torch.tanh),
    ("softmax", lambda t: F.softmax(t, 0)),
    ("gelu", F.gelu),
    ("leaky_relu", F.leaky_relu),
]:
    try:
        print(name, "ok:", fn(zc))
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fl = zc.to(torch.float32)
    dst = torch.zeros(2)
    dst.copy_(zc)
    fl2 = zc.float()
print("cast results", fl, dst, fl2)
for wi in caught:
    print("warning", wi.category.__name__, str(wi.message).split(" (Triggered")[0])
print("real() of cast", zc.real, torch.real(zc).dtype)
try:
    print("copy_ from conj", torch.zeros(2).copy_(zc.conj()))
except Exception as e:
    print(type(e).__name__, e)
print("done")
