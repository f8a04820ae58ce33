"""torch.func in research code: per-sample gradients (functional_call + vmap(grad) over an MLP
and a small CNN with BatchNorm in eval mode), a model ensemble with stack_module_state and the
three dropout randomness modes, jacrev / jacfwd (argnums tuples, has_aux, chunk_size), hessian of
a loss w.r.t. a parameter dict, jvp / vjp / linearize, vmap with out_dims, nested vmap and
dict / tuple pytrees, grad_and_value with has_aux, a Gauss-Newton step from jacrev, the empirical
NTK two ways, torch.autograd.functional (jacobian / hessian / vhp / hvp with create_graph and
vectorize), autograd.grad with is_grads_batched, functionalize, and typical mistakes."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    stack_module_state,
    vjp,
    vmap,
)

torch.manual_seed(0)


def fmt(t):
    return [round(v, 4) for v in t.flatten().tolist()]


class MLP(nn.Module):
    def __init__(self, d_in=4, hidden=8, d_out=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.head(h.flatten(1))


# -- per-sample gradients: MLP -------------------------------------------------------------------
mlp = MLP()
params = {k: v.detach() for k, v in mlp.named_parameters()}
x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))


def sample_loss(p, xi, yi):
    logits = functional_call(mlp, p, (xi.unsqueeze(0),))
    return F.cross_entropy(logits, yi.unsqueeze(0))


psg = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
print("mlp per-sample:", {k: tuple(v.shape) for k, v in psg.items()})
full = grad(lambda p: F.cross_entropy(functional_call(mlp, p, (x,)), y))(params)
print("mean == batch grad:", all(torch.allclose(psg[k].mean(0), full[k], atol=1e-6) for k in full))
print("per-sample fc2.bias[0]:", fmt(psg["fc2.bias"][0]))
norms = torch.stack([g.flatten(1).norm(dim=1) for g in psg.values()]).norm(dim=0)
print("per-sample grad norms:", fmt(norms))

# -- per-sample gradients: CNN with buffers (BatchNorm in eval) -----------------------------
cnn = SmallCNN()
cnn.bn.running_mean.uniform_(-0.1, 0.1)
cnn.bn.running_var.uniform_(0.5, 1.5)
cnn.eval()
cp = {k: v.detach() for k, v in cnn.named_parameters()}
cb = {k: v for k, v in cnn.named_buffers()}
imgs, labels = torch.randn(5, 1, 4, 4), torch.randint(0, 3, (5,))


def cnn_loss(p, b, img, label):
    out = functional_call(cnn, (p, b), (img.unsqueeze(0),))
    return F.cross_entropy(out, label.unsqueeze(0))


cg = vmap(grad(cnn_loss), in_dims=(None, None, 0, 0))(cp, cb, imgs, labels)
print("cnn per-sample:", tuple(cg["conv.weight"].shape), tuple(cg["bn.weight"].shape),
      "buffers:", sorted(cb))
print("cnn bn.bias grads:", fmt(cg["bn.bias"][:2]))
print("num_batches_tracked:", cnn.bn.num_batches_tracked.item())

# -- ensembles with stack_module_state, dropout randomness -----------------------------------
class DropNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 5)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x))


members = [DropNet() for _ in range(3)]
ens_p, ens_b = stack_module_state(members)
base = DropNet().to("meta")
print("stacked:", {k: tuple(v.shape) for k, v in ens_p.items()}, len(ens_b))
xe = torch.ones(2, 4)


def ens_call(p, b, xx):
    return functional_call(base, (p, b), (xx,))


torch.manual_seed(5)
diff = vmap(ens_call, in_dims=(0, 0, None), randomness="different")(ens_p, ens_b, xe)
same = vmap(lambda xx: F.dropout(xx, 0.5), randomness="same")(torch.ones(3, 6))
print("ensemble out:", tuple(diff.shape), "zeros:", int((diff == 0).sum()))
print("same masks equal:", bool((same[0] == same[1]).all() and (same[0] == same[2]).all()))
for m in members:
    m.eval()
base.eval()
ev = vmap(ens_call, in_dims=(0, 0, None))(ens_p, ens_b, xe)
loop = torch.stack([m(xe) for m in members])
print("eval ensemble == loop:", torch.allclose(ev, loop, atol=1e-6), fmt(ev[1, 0, :3]))

# -- jacobians -------------------------------------------------------------------------------
def g(a, b):
    out = torch.stack([(a * b).sum(), a.pow(2).sum() * b[0], torch.sin(a).sum()])
    return out, out.detach().sum()


a0, b0 = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.5, 0.25, -0.5])
(ja, jb), aux = jacrev(g, argnums=(0, 1), has_aux=True)(a0, b0)
print("jacrev a:", fmt(ja[1]), "b:", fmt(jb[1]), "aux:", round(aux.item(), 4))
jf = jacfwd(lambda a: g(a, b0)[0])(a0)
jc = jacrev(lambda a: g(a, b0)[0], chunk_size=1)(a0)
print("jacfwd == jacrev(chunk_size=1):", torch.allclose(jf, jc), tuple(jc.shape))
jfa, faux = jacfwd(g, argnums=1, has_aux=True, randomness="same")(a0, b0)
print("jacfwd argnums=1:", fmt(jfa[1]), round(faux.item(), 4))

# -- hessian w.r.t. a parameter dict --------------------------------------------------------
small = nn.Linear(3, 1)
sp = {k: v.detach() for k, v in small.named_parameters()}
xs, ys = torch.randn(4, 3), torch.randn(4, 1)
H = hessian(lambda p: F.mse_loss(functional_call(small, p, (xs,)), ys))(sp)
print("hessian keys:", list(H), list(H["weight"]), tuple(H["weight"]["weight"].shape))
print("H[bias][bias]:", fmt(H["bias"]["bias"]), "H[w][b]:", fmt(H["weight"]["bias"]))

# -- jvp / vjp / linearize -------------------------------------------------------------------
fx = lambda t: torch.tanh(t) * t.cumsum(0)
t0, v0 = torch.tensor([0.2, -0.4, 0.9]), torch.tensor([1.0, 0.5, -1.0])
out, tang = jvp(fx, (t0,), (v0,))
print("jvp:", fmt(out), fmt(tang))
out, pull, aux = vjp(lambda t: (fx(t), t.norm()), t0, has_aux=True)
print("vjp:", fmt(pull(torch.ones(3))[0]), round(aux.item(), 4))
_, lin = linearize(fx, t0)
print("linearize == jvp:", torch.allclose(lin(v0), tang), fmt(vmap(lin)(torch.eye(3))[2]))

# -- vmap: out_dims, nested, pytrees ---------------------------------------------------------
m = torch.arange(12.0).reshape(3, 4)
r = vmap(lambda row: (row * 2, row.sum()), out_dims=(1, 0))(m)
print("out_dims:", tuple(r[0].shape), tuple(r[1].shape), fmt(r[1]))
outer = vmap(vmap(torch.dot, in_dims=(0, None)), in_dims=(None, 0))(m, torch.ones(5, 4))
print("nested vmap:", tuple(outer.shape), fmt(outer[0]))
tree = vmap(lambda d, t: {"s": d["a"] + t[1], "p": d["b"] * t[0]},
            in_dims=({"a": 0, "b": None}, (None, 1)))({"a": m, "b": torch.tensor(3.0)},
                                                    (torch.tensor(2.0), m.T))
print("pytree:", sorted(tree), tuple(tree["s"].shape), fmt(tree["s"][1]), tree["p"].shape)
print("chunked vmap:", fmt(vmap(torch.sum, chunk_size=2)(m)))

# -- grad_and_value with has_aux; Gauss-Newton step -------------------------------------------
def loss_aux(p, xx, yy):
    pred = functional_call(small, p, (xx,))
    return F.mse_loss(pred, yy), {"pred_mean": pred.mean()}


gv, (lv, extra) = grad_and_value(loss_aux, has_aux=True)(sp, xs, ys)
print("grad_and_value:", round(lv.item(), 4), round(extra["pred_mean"].item(), 4),
      fmt(gv["bias"]))
J = jacrev(lambda p: functional_call(small, p, (xs,)).squeeze(1))(sp)
Jm = torch.cat([J["weight"].flatten(1), J["bias"]], dim=1)
resid = functional_call(small, sp, (xs,)).squeeze(1) - ys.squeeze(1)
step = torch.linalg.solve(Jm.T @ Jm + 0.1 * torch.eye(4), Jm.T @ resid)
print("gauss-newton step:", fmt(step))

# -- empirical NTK two ways -------------------------------------------------------------------
ntk_net = MLP(4, 6, 2)
np_ = {k: v.detach() for k, v in ntk_net.named_parameters()}
x1, x2 = torch.randn(3, 4), torch.randn(2, 4)
f1 = lambda p, xi: functional_call(ntk_net, p, (xi.unsqueeze(0),)).squeeze(0)
j1 = vmap(jacrev(f1), (None, 0))(np_, x1)
j2 = vmap(jacrev(f1), (None, 0))(np_, x2)
ntk_a = sum(torch.einsum("Naf,Mbf->NMab", j1[k].flatten(2), j2[k].flatten(2)) for k in j1)


def ntk_vjp(xa, xb):
    _, pull = vjp(lambda p: f1(p, xb), np_)
    cols = vmap(lambda v: jvp(lambda p: f1(p, xa), (np_,), pull(v))[1])(torch.eye(2))
    return cols.T


ntk_b = vmap(vmap(ntk_vjp, (None, 0)), (0, None))(x1, x2)
print("ntk:", tuple(ntk_a.shape), torch.allclose(ntk_a, ntk_b, atol=1e-5), fmt(ntk_a[0, 0]))

# -- torch.autograd.functional and is_grads_batched -------------------------------------------
AF = torch.autograd.functional
xa = torch.tensor([0.3, -0.7, 1.1], requires_grad=True)
jac = AF.jacobian(lambda t: t.exp() * t.roll(1), xa, create_graph=True, vectorize=True)
print("AF.jacobian:", fmt(jac[0]), jac.requires_grad, jac.grad_fn is not None)
hes = AF.hessian(lambda a, b: (a * b).pow(2).sum(), (xa.detach(), torch.ones(3)))
print("AF.hessian tuple:", len(hes), len(hes[0]), fmt(hes[0][1].diagonal()))
vv, vh = AF.vhp(lambda t: t.pow(3).sum(), xa.detach(), torch.ones(3), create_graph=True)
hv = AF.hvp(lambda t: t.pow(3).sum(), xa.detach(), torch.ones(3), strict=True)[1]
print("vhp/hvp:", round(vv.item(), 4), fmt(vh), torch.allclose(vh, hv))
yb = xa.sin()
rows = torch.autograd.grad(yb, xa, torch.eye(3), is_grads_batched=True)[0]
print("is_grads_batched:", tuple(rows.shape), fmt(rows.diagonal()))

if hasattr(torch.func, "functionalize"):
    def mutate(t):
        buf = t.clone()
        buf.add_(1.0)
        buf[0] = 5.0
        return buf * 2

    print("functionalize:", fmt(torch.func.functionalize(mutate)(torch.zeros(3))))
    print("functionalize(grad):", fmt(torch.func.functionalize(
        grad(lambda t: mutate(t).pow(2).sum()))(torch.ones(3))))

# -- typical mistakes -----------------------------------------------------------------------
mistakes = [
    ("size mismatch", lambda: vmap(torch.mul)(torch.ones(3, 2), torch.ones(4, 2))),
    ("in_dims structure", lambda: vmap(lambda d: d["a"], in_dims=({"b": 0},))({"a": m})),
    ("in_dims not int/tuple", lambda: vmap(torch.sin, in_dims=[0])(m)),
    ("grad non-scalar", lambda: grad(lambda t: t.exp())(t0)),
    ("jacrev argnums", lambda: jacrev(lambda a, b: a * b, argnums=2)(t0, t0)),
    ("item in vmap", lambda: vmap(lambda r: r * r.max().item())(m)),
    ("in-place captured", lambda: vmap(lambda r: torch.zeros(4).mul_(r))(m)),
    ("randomness error", lambda: vmap(lambda r: F.dropout(r, 0.5), randomness="error")(m)),
    ("bad randomness", lambda: vmap(torch.sin, randomness="maybe")(m)),
    ("out_dims too many", lambda: vmap(torch.sin, out_dims=(0, 1))(m)),
]
for name, fn in mistakes:
    try:
        fn()
        print(name, "-> no error")
    except Exception as e:
        print(name, "->", type(e).__name__, ":", str(e).splitlines()[0][:110])
