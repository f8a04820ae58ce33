"""torch.nn.utils.parametrize and the ready-made parametrizations, as a user of
weight-normalised or constrained layers meets them: weight_norm (and the deprecated hook
version), spectral_norm (power iterations, eval mode, conv layers), orthogonal (each map,
with and without trivialization), custom parametrizations (right_inverse, unsafe, several
stacked, several originals, buffers), caching, removal, state dicts and loading them,
parameter/buffer order, deepcopy, tied weights, and the usual mistakes."""

import copy
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm

torch.manual_seed(0)


def show(name, t, n=4):
    vals = ", ".join(f"{v:.4f}" for v in t.flatten()[:n].tolist())
    print(f"{name}: shape={tuple(t.shape)} dtype={t.dtype} [{vals}]")


print("=== weight_norm ===")
lin = weight_norm(nn.Linear(5, 3))
print(lin)
print("params:", [(n, tuple(p.shape)) for n, p in lin.named_parameters()])
print("state_dict:", list(lin.state_dict().keys()))
g = lin.parametrizations.weight.original0
v = lin.parametrizations.weight.original1
show("g", g, 3)
print("weight matches g*v/|v|:", torch.allclose(lin.weight, g * v / v.norm(dim=1, keepdim=True)))
print("is_parametrized:", parametrize.is_parametrized(lin),
      parametrize.is_parametrized(lin, "weight"), parametrize.is_parametrized(lin, "bias"))
print("class:", type(lin).__name__, parametrize.type_before_parametrizations(lin).__name__)
lin0 = weight_norm(nn.Linear(5, 3), dim=0)
lin_none = weight_norm(nn.Linear(5, 3), name="weight", dim=None)
print("dim=None g shape:", tuple(lin_none.parametrizations.weight.original0.shape))
y = lin(torch.ones(2, 5)).sum()
y.backward()
show("grad g", g.grad.flatten(), 3)
show("grad v", v.grad, 3)

# loading a parametrized state dict into a fresh parametrized model
torch.manual_seed(1)
lin2 = weight_norm(nn.Linear(5, 3))
lin2.load_state_dict(lin.state_dict())
print("reloaded equal:", torch.equal(lin2.weight, lin.weight))
res = nn.Linear(5, 3).load_state_dict(lin.state_dict(), strict=False)
print("into plain Linear missing:", res.missing_keys, "unexpected:", res.unexpected_keys)

print("=== old weight_norm ===")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    old = nn.utils.weight_norm(nn.Linear(4, 2))
print("warnings:", [(x.category.__name__, "deprecated" in str(x.message)) for x in w])
print("old params:", [n for n, _ in old.named_parameters()])
show("old weight_g", old.weight_g.flatten(), 2)
print("weight is param:", isinstance(old.weight, nn.Parameter), type(old.weight).__name__)
nn.utils.remove_weight_norm(old)
print("after remove:", [n for n, _ in old.named_parameters()])
try:
    nn.utils.remove_weight_norm(old)
except ValueError as e:
    print("ValueError:", e)

print("=== spectral_norm ===")
torch.manual_seed(2)
sn = spectral_norm(nn.Linear(6, 4), n_power_iterations=3)
print(sn)
print("buffers:", [n for n, _ in sn.named_buffers()])
print("state_dict:", list(sn.state_dict().keys()))
W = sn.parametrizations.weight.original
for _ in range(4):
    sn(torch.randn(1, 6))
sigma_true = torch.linalg.matrix_norm(W.detach(), ord=2)
sig_est = torch.linalg.matrix_norm(sn.weight.detach(), ord=2)
print(f"true sigma {sigma_true.item():.4f}, sigma of normalised {sig_est.item():.4f}")
sn.eval()
w_eval1 = sn.weight.clone()
u_before = sn.parametrizations.weight[0]._u.clone()
_ = sn.weight
print("eval keeps u:", torch.equal(u_before, sn.parametrizations.weight[0]._u),
      "same weight:", torch.equal(w_eval1, sn.weight))
conv_sn = spectral_norm(nn.Conv2d(3, 8, 3), n_power_iterations=1)
print("conv u/v:", tuple(conv_sn.parametrizations.weight[0]._u.shape),
      tuple(conv_sn.parametrizations.weight[0]._v.shape))
tconv_sn = spectral_norm(nn.ConvTranspose2d(3, 8, 3))
print("convT u/v:", tuple(tconv_sn.parametrizations.weight[0]._u.shape),
      tuple(tconv_sn.parametrizations.weight[0]._v.shape))
try:
    spectral_norm(nn.LayerNorm(4))
except ValueError as e:
    print("ValueError:", e)

print("=== orthogonal ===")
for omap in ["matrix_exp", "cayley", "householder"]:
    torch.manual_seed(3)
    ol = orthogonal(nn.Linear(4, 4), orthogonal_map=omap)
    Q = ol.weight
    err = (Q @ Q.T - torch.eye(4)).abs().max().item()
    print(f"{omap}: orthogonal err<1e-5 {err < 1e-5} keys {list(ol.state_dict().keys())}")
torch.manual_seed(4)
orect = orthogonal(nn.Linear(3, 6))
Qr = orect.weight
print("rect shape:", tuple(Qr.shape), "QtQ=I:", torch.allclose(Qr.T @ Qr, torch.eye(3), atol=1e-5))
print("ortho parametrization:", type(orect.parametrizations.weight[0]).__name__,
      orect.parametrizations.weight[0].orthogonal_map)
# without trivialization: Householder stores the reflectors of the weight's QR
for shape in [(4, 4), (2, 5)]:
    torch.manual_seed(13)
    hh = orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map="householder",
                    use_trivialization=False)
    Wh = hh.weight
    gram = Wh @ Wh.T
    print("householder no-base", shape, "buffers:", [n for n, _ in hh.named_buffers()],
          "orthonormal rows:", torch.allclose(gram, torch.eye(shape[0]), atol=1e-5))
    show("  reflectors", hh.parametrizations.weight.original, 6)
    q = torch.linalg.qr(torch.randn(shape[1], shape[1]))[0][:, :shape[0]].T
    hh.weight = q
    print("  assigned:", torch.allclose(hh.weight, q, atol=1e-5))
try:
    orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False).weight = \
        torch.eye(3)
except NotImplementedError as e:
    print("NotImplementedError:", e)
# learning a rotation that maps a to b
torch.manual_seed(5)
rot = orthogonal(nn.Linear(3, 3, bias=False))
a = F.normalize(torch.randn(16, 3), dim=1)
R_true = torch.linalg.qr(torch.randn(3, 3))[0]
b = a @ R_true.T
opt = torch.optim.SGD(rot.parameters(), lr=0.5)
for _ in range(100):
    loss = (rot(a) - b).pow(2).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"rotation fit loss {loss.item():.4f} det {torch.linalg.det(rot.weight).item():.4f}")
try:
    orthogonal(nn.Linear(4, 4), orthogonal_map="svd")
except ValueError as e:
    print("ValueError:", e)

print("=== custom parametrizations ===")


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)

    def right_inverse(self, A):
        return torch.zeros_like(A)  # a simple but valid preimage for symmetric positive A=I


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu(1)


class Scale(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, X):
        return X * self.c

    def right_inverse(self, A):
        return A / self.c


class LowRank(nn.Module):
    """Changes the shape: original is (n, r) + (r, n) pair."""

    def forward(self, U, V):
        return U @ V

    def right_inverse(self, W):
        U, S, Vh = torch.linalg.svd(W)
        return U[:, :2] * S[:2], Vh[:2]


class Truncate(nn.Module):
    def forward(self, X):
        return X[:, :2]


torch.manual_seed(6)
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
print(layer)
print("symmetric:", torch.equal(layer.weight, layer.weight.T))
try:
    layer.weight = torch.eye(3)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])
parametrize.register_parametrization(layer, "weight", Scale(2.0))
print("stacked:", len(layer.parametrizations.weight),
      [type(p).__name__ for p in layer.parametrizations.weight])
print("names:", [n for n, _ in layer.named_parameters()])

skew = nn.Linear(3, 3, bias=False)
parametrize.register_parametrization(skew, "weight", Skew())
parametrize.register_parametrization(skew, "weight", Scale(3.0))
target = torch.tensor([[0.0, 1.0, 2.0], [-1.0, 0.0, 3.0], [-2.0, -3.0, 0.0]])
skew.weight = target
print("assigned via right_inverse:", torch.allclose(skew.weight, target))
show("original", skew.parametrizations.weight.original, 9)

# assigning through right_inverse while a graph still holds the old value
class Square(nn.Module):
    def forward(self, X):
        return X * X

    def right_inverse(self, A):
        return A.sqrt()


sq = nn.Linear(2, 2)
parametrize.register_parametrization(sq, "weight", Square())
pending = sq(torch.ones(1, 2)).sum()
sq.weight = torch.full((2, 2), 4.0)
print("original after assign:", sq.parametrizations.weight.original.tolist(),
      "version:", sq.parametrizations.weight.original._version)
try:
    pending.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).split(". Hint")[0])

# a parametrization with a learnable parameter and a buffer of its own
class LearnedScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_s = nn.Parameter(torch.zeros(()))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, X):
        self.calls += 1
        return X * self.log_s.exp()


torch.manual_seed(14)
ls_lin = nn.Linear(3, 2)
parametrize.register_parametrization(ls_lin, "weight", LearnedScale())
print("learned:", [n for n, _ in ls_lin.named_parameters()],
      [n for n, _ in ls_lin.named_buffers()])
opt = torch.optim.SGD(ls_lin.parameters(), lr=0.1)
for _ in range(3):
    loss = ls_lin(torch.ones(4, 3)).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
scale = ls_lin.parametrizations.weight[0]
print(f"log_s {scale.log_s.item():.5f} calls {scale.calls.item()}")

# caching: the parametrization is computed once inside cached()
calls = []


class Counting(nn.Module):
    def forward(self, X):
        calls.append(1)
        return X.tanh()


cl = nn.Linear(4, 4)
parametrize.register_parametrization(cl, "weight", Counting())
calls.clear()
with parametrize.cached():
    for _ in range(3):
        cl(torch.ones(1, 4))
print("calls cached:", len(calls))
calls.clear()
for _ in range(3):
    cl(torch.ones(1, 4))
print("calls uncached:", len(calls))

# a parametrization that changes the shape
bad = nn.Linear(4, 4)
try:
    parametrize.register_parametrization(bad, "weight", Truncate())
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])
parametrize.register_parametrization(bad, "weight", Truncate(), unsafe=True)
print("unsafe truncate weight:", tuple(bad.weight.shape), parametrize.is_parametrized(bad))

# multiple originals from right_inverse returning a tuple
lr = nn.Linear(4, 4, bias=False)
parametrize.register_parametrization(lr, "weight", LowRank())
print("low-rank keys:", list(lr.state_dict().keys()))
print("low-rank shapes:", [tuple(p.shape) for p in lr.parameters()],
      "rank:", torch.linalg.matrix_rank(lr.weight.detach()).item())

# a buffer can be parametrized too
bm = nn.Module()
bm.register_buffer("cov", torch.eye(2) * 2)
parametrize.register_parametrization(bm, "cov", Symmetric())
print("buffer parametrized:", parametrize.is_parametrized(bm, "cov"),
      [n for n, _ in bm.named_buffers()], [n for n, _ in bm.named_parameters()])

# named_parameters / named_buffers order for a mixed model
torch.manual_seed(7)
mixed = nn.Sequential(weight_norm(nn.Linear(3, 3)), spectral_norm(nn.Linear(3, 2)),
                      nn.BatchNorm1d(2))
print("params order:", [n for n, _ in mixed.named_parameters()])
print("buffers order:", [n for n, _ in mixed.named_buffers()])
print("state keys:", list(mixed.state_dict().keys()))

# deepcopy keeps the parametrization and its values
mixed.eval()
clone = copy.deepcopy(mixed)
xx = torch.randn(4, 3)
print("deepcopy same out:", torch.equal(clone(xx), mixed(xx)),
      "is_parametrized:", parametrize.is_parametrized(clone[0], "weight"),
      "class:", type(clone[0]).__name__)
with torch.no_grad():
    clone[0].parametrizations.weight.original0.mul_(2)
print("independent:", not torch.equal(clone[0].weight, mixed[0].weight))

# a weight shared by two places of a model is parametrized once
shared = nn.Linear(3, 3)
seq = nn.Sequential(shared, nn.ReLU(), shared)
parametrize.register_parametrization(shared, "weight", Symmetric())
print("shared:", [n for n, _ in seq.named_parameters()], len(list(seq.parameters())))
print("shared (dups):", [n for n, _ in seq.named_parameters(remove_duplicate=False)])
emb = nn.Embedding(5, 3)
tied = nn.Linear(3, 5, bias=False)
tied.weight = emb.weight
parametrize.register_parametrization(emb, "weight", Scale(0.5))
print("tied original is the shared parameter:", tied.weight is emb.parametrizations.weight.original)

# dtype conversion, nested caching and functional_call see through the parametrization
dbl = copy.deepcopy(seq).double()
print("double:", dbl[0].weight.dtype, dbl[0].parametrizations.weight.original.dtype)
with parametrize.cached():
    with parametrize.cached():
        w_a = shared.weight
    w_b = shared.weight
print("same cached tensor:", w_a is w_b, "uncached:", shared.weight is shared.weight)
out = torch.func.functional_call(shared, {"parametrizations.weight.original": torch.ones(3, 3)},
                                 (torch.ones(1, 3),))
print("functional_call:", [f"{v:.4f}" for v in out[0].tolist()])
bm2 = nn.Module()
bm2.register_buffer("c", torch.eye(2) * 3)
parametrize.register_parametrization(bm2, "c", Symmetric())
parametrize.remove_parametrizations(bm2, "c")
print("buffer after removal:", [n for n, _ in bm2.named_buffers()], type(bm2).__name__,
      type(bm2.c).__name__)

# removing parametrizations
w_before = layer.weight.detach().clone()
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print("left parametrized:", torch.equal(layer.weight, w_before), type(layer).__name__,
      parametrize.is_parametrized(layer))
print("names now:", [n for n, _ in layer.named_parameters()])
s2 = nn.Linear(3, 3, bias=False)
parametrize.register_parametrization(s2, "weight", Scale(10.0))
orig = s2.parametrizations.weight.original.detach().clone()
parametrize.remove_parametrizations(s2, "weight", leave_parametrized=False)
print("left original:", torch.equal(s2.weight, orig))
try:
    parametrize.remove_parametrizations(s2, "weight")
except ValueError as e:
    print("ValueError:", e)
try:
    parametrize.remove_parametrizations(lr, "weight", leave_parametrized=False)
except ValueError as e:
    print("ValueError:", str(e)[:70])

# spectral_norm on a 1-d parameter is not an error: it divides by the vector's norm
b1 = spectral_norm(nn.Linear(3, 3), name="bias")
print("1-d spectral norm:", f"{b1.bias.norm().item():.4f}", [n for n, _ in b1.named_buffers()])
b2 = nn.utils.spectral_norm(nn.Linear(3, 3), name="bias")
print("old 1-d spectral norm:", f"{b2.bias.norm().item():.4f}", [n for n, _ in b2.named_buffers()])
# registering on a missing name
try:
    parametrize.register_parametrization(nn.Linear(2, 2), "kernel", Symmetric())
except (ValueError, AttributeError) as e:
    print(type(e).__name__ + ":", e)
# weight_norm'd conv in a tiny MADE-like stack trains
torch.manual_seed(8)
wconv = weight_norm(nn.Conv2d(1, 4, 3, padding=1))
images = torch.rand(4, 1, 8, 8) * 2 - 1
opt = torch.optim.SGD(wconv.parameters(), lr=0.1)
for _ in range(5):
    out = wconv(images).pow(2).mean()
    opt.zero_grad()
    out.backward()
    opt.step()
print(f"wn conv loss {out.item():.4f}",
      "g shape", tuple(wconv.parametrizations.weight.original0.shape))
