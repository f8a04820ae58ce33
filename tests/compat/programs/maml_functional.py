"""Meta-learning and function transforms: MAML on sine-wave regression (second-order with
autograd.grad(create_graph=True) over a parameter dict, and first-order), then the same with
torch.func (functional_call over params and buffers, grad / grad_and_value with has_aux, vmap
over tasks with in_dims and nested dicts, randomness modes with dropout), a model ensemble with
stack_module_state, jacrev / jacfwd / hessian, jvp / vjp / linearize, per-sample gradients,
replace_all_batch_norm_modules_, torch.autograd.functional (jacobian / hessian / hvp / vhp),
forward-mode AD with dual numbers, a custom Function with vmap support, and typical mistakes."""

import math

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


def sample_tasks(n_tasks, n_points):
    """Sine waves y = a * sin(x + p) with random amplitude and phase."""
    amp = torch.rand(n_tasks, 1) * 4.9 + 0.1
    phase = torch.rand(n_tasks, 1) * math.pi
    x = torch.rand(n_tasks, 2 * n_points, 1) * 10 - 5
    y = amp.unsqueeze(1) * torch.sin(x + phase.unsqueeze(1))
    return x[:, :n_points], y[:, :n_points], x[:, n_points:], y[:, n_points:]


class SineNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


# -- MAML with autograd.grad over a parameter dict (second order, then first order) --------
def inner_adapt(model, params, x, y, inner_lr, steps, first_order):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=not first_order)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def train_maml(first_order, meta_steps=30):
    torch.manual_seed(1)
    model = SineNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(1, meta_steps + 1):
        xs, ys, xq, yq = sample_tasks(4, 10)
        opt.zero_grad()
        meta_loss = 0.0
        for t in range(4):
            fast = inner_adapt(model, dict(model.named_parameters()), xs[t], ys[t], 0.01, 1,
                               first_order)
            meta_loss = meta_loss + F.mse_loss(functional_call(model, fast, (xq[t],)), yq[t])
        meta_loss = meta_loss / 4
        meta_loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"{'FO' if first_order else 'SO'}-MAML step {step}: {meta_loss.item():.4f}")
    return model


maml_model = train_maml(first_order=False)
fo_model = train_maml(first_order=True)
print("grad norm of first layer:", f"{maml_model.net[0].weight.grad.norm().item():.4f}",
      f"{fo_model.net[0].weight.grad.norm().item():.4f}")

# -- the same with torch.func: grad over a params dict, vmap over tasks -------------------------
params = {k: v.detach() for k, v in maml_model.named_parameters()}


def task_loss(p, x, y):
    pred = functional_call(maml_model, p, (x,))
    return F.mse_loss(pred, y), pred.mean()


def adapt_and_eval(p, xs, ys, xq, yq):
    g, (loss_before, mean_pred) = grad_and_value(task_loss, has_aux=True)(p, xs, ys)
    fast = {k: p[k] - 0.01 * g[k] for k in p}
    return task_loss(fast, xq, yq)[0], loss_before


xs, ys, xq, yq = sample_tasks(5, 10)
after, before = vmap(adapt_and_eval, in_dims=(None, 0, 0, 0, 0))(params, xs, ys, xq, yq)
print("vmap losses before:", [round(v, 4) for v in before.tolist()])
print("vmap losses after: ", [round(v, 4) for v in after.tolist()])
meta_grad = grad(lambda p: vmap(adapt_and_eval, in_dims=(None, 0, 0, 0, 0))(
    p, xs, ys, xq, yq)[0].mean())(params)
print("meta grad keys:", list(meta_grad)[:2], tuple(meta_grad["net.0.weight"].shape))
print("meta grad norm:", f"{sum(g.pow(2).sum() for g in meta_grad.values()).sqrt():.4f}")

# nested dicts as pytrees, and an output dict
tree = {"w": torch.randn(3), "inner": {"b": torch.randn(4, 3), "s": torch.tensor(2.0)}}
out = vmap(lambda t: {"y": t["inner"]["b"] * t["w"] + t["inner"]["s"]},
           in_dims=({"w": None, "inner": {"b": 0, "s": None}},))(tree)
print("nested:", type(out).__name__, tuple(out["y"].shape), f"{out['y'].sum():.4f}")

# -- functional_call with (params, buffers) and BatchNorm ---------------------------------------
bn_net = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 1))
p_bn = dict(bn_net.named_parameters())
b_bn = dict(bn_net.named_buffers())
xb = torch.randn(8, 4)
y_bn = functional_call(bn_net, (p_bn, b_bn), (xb,))
print("bn out:", tuple(y_bn.shape), f"{y_bn.mean():.4f}", bn_net[1].num_batches_tracked.item(),
      f"{bn_net[1].running_mean.abs().sum():.4f}")
new_bufs = {k: v.clone() for k, v in b_bn.items()}
functional_call(bn_net, (p_bn, new_bufs), (xb,))
print("buffers in dict updated:", new_bufs["1.num_batches_tracked"].item(),
      bn_net[1].num_batches_tracked.item())
try:
    vmap(lambda x: bn_net(x))(torch.randn(3, 8, 4))
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0][:90])
torch.func.replace_all_batch_norm_modules_(bn_net)
print("after replace:", bn_net[1].running_mean, bn_net[1].track_running_stats)
print("vmap bn:", tuple(vmap(bn_net)(torch.randn(3, 8, 4)).shape))

# -- randomness modes with dropout ---------------------------------------------------------------
drop = lambda x: F.dropout(x, p=0.5, training=True)
ones = torch.ones(4, 6)
torch.manual_seed(3)
diff = vmap(drop, randomness="different")(ones)
same = vmap(drop, randomness="same")(ones)
print("different rows equal:", bool((diff[0] == diff[1]).all()), "same rows equal:",
      bool((same[0] == same[1]).all() and (same[1] == same[3]).all()))
try:
    vmap(drop)(ones)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])

# -- ensembles: stack_module_state + vmap -------------------------------------------------------
models = [nn.Sequential(nn.Linear(2, 8), nn.GELU(), nn.Linear(8, 1)) for _ in range(3)]
ens_params, ens_bufs = stack_module_state(models)
meta_model = models[0]
xe = torch.randn(5, 2)
ens_out = vmap(lambda p, b, x: functional_call(meta_model, (p, b), (x,)),
               in_dims=(0, 0, None))(ens_params, ens_bufs, xe)
loop_out = torch.stack([m(xe) for m in models])
print("ensemble:", tuple(ens_out.shape), torch.allclose(ens_out, loop_out, atol=1e-6),
      ens_params["0.weight"].requires_grad, ens_params["0.weight"].is_leaf)

# -- jacobians, hessians, jvp / vjp / linearize ---------------------------------------------
def f(x):
    return torch.stack([x[0] ** 2 * x[1], torch.sin(x[1]) * x[2], x.exp().sum()])


x0 = torch.tensor([0.5, -1.0, 2.0])
print("jacrev:", jacrev(f)(x0))
print("jacfwd==jacrev:", torch.allclose(jacfwd(f)(x0), jacrev(f)(x0)))
scal = lambda x: (x ** 3).sum() + x[0] * x[2]
print("hessian:", hessian(scal)(x0))
print("jacrev argnums:", [tuple(j.shape) for j in jacrev(lambda a, b: a * b.sum(),
                                                          argnums=(0, 1))(x0, torch.ones(2))])
out, tangent = jvp(f, (x0,), (torch.tensor([1.0, 0.0, 0.0]),))
print("jvp:", out, tangent)
out, vjp_fn = vjp(f, x0)
print("vjp:", vjp_fn(torch.tensor([1.0, 1.0, 0.0]))[0])
val, lin = linearize(f, x0)
print("linearize:", lin(torch.tensor([0.0, 1.0, 0.0])))

# -- per-sample gradients ------------------------------------------------------------------------
lin_model = nn.Linear(3, 1)
lp = {k: v.detach() for k, v in lin_model.named_parameters()}
xps, yps = torch.randn(6, 3), torch.randn(6, 1)
psg = vmap(grad(lambda p, x, y: F.mse_loss(functional_call(lin_model, p, (x.unsqueeze(0),)),
                                           y.unsqueeze(0))), in_dims=(None, 0, 0))(lp, xps, yps)
full = grad(lambda p: F.mse_loss(functional_call(lin_model, p, (xps,)), yps))(lp)
print("per-sample:", tuple(psg["weight"].shape), torch.allclose(psg["weight"].mean(0),
                                                               full["weight"], atol=1e-6))
print("per-sample bias grads:", psg["bias"].squeeze(1))


# -- torch.autograd.functional ---------------------------------------------------------------
AF = torch.autograd.functional
xa = torch.tensor([1.0, 2.0], requires_grad=True)
jac = AF.jacobian(lambda t: t ** 2 * t.flip(0), xa, create_graph=True, vectorize=True)
print("AF.jacobian:", jac, jac.requires_grad)
print("AF.hessian:", AF.hessian(lambda t: (t.sin() * t).sum(), xa.detach(), vectorize=True))
vhp_out = AF.vhp(lambda t: (t ** 3).sum(), xa.detach(), torch.tensor([1.0, 0.5]))
hvp_out = AF.hvp(lambda t: (t ** 3).sum(), xa.detach(), torch.tensor([1.0, 0.5]))
print("AF.vhp:", vhp_out[0], vhp_out[1], "AF.hvp:", hvp_out[1])
print("AF.jacobian tuple:", [tuple(j.shape) for j in AF.jacobian(
    lambda a, b: (a * b).sum(), (torch.ones(2), torch.ones(2)), strategy="forward-mode",
    vectorize=True)])

# -- forward-mode AD with dual numbers --------------------------------------------------------
import torch.autograd.forward_ad as fwAD  # noqa: E402

with fwAD.dual_level():
    dual = fwAD.make_dual(torch.tensor([0.3, 1.2]), torch.tensor([1.0, 2.0]))
    res = torch.tanh(dual) * dual
    primal, tan = fwAD.unpack_dual(res)
    print("dual:", primal, tan, fwAD.unpack_dual(torch.ones(2)).tangent)


# -- custom Function with vmap support ------------------------------------------------------
class Cube(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


class ScaleBy(torch.autograd.Function):
    """x * k with a hand-written vmap rule (k is a float)."""

    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    backward = staticmethod(lambda ctx, g: (g * ctx.k, None))

    @staticmethod
    def vmap(info, in_dims, x, k):
        print("  ScaleBy.vmap:", info.batch_size, info.randomness, in_dims, tuple(x.shape))
        return x * k, in_dims[0]


class OldStyle(torch.autograd.Function):
    forward = staticmethod(lambda ctx, x: x.clone())
    backward = staticmethod(lambda ctx, g: g)


xc = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
print("Cube vmap:", vmap(Cube.apply)(xc))
print("Cube grad:", vmap(grad(lambda t: Cube.apply(t).sum()))(xc))
print("ScaleBy:", vmap(ScaleBy.apply, in_dims=(1, None), randomness="same")(xc, 3.0))

# -- typical mistakes ---------------------------------------------------------------------------
mistakes = [
    ("different batch sizes", lambda: vmap(torch.add)(torch.ones(3), torch.ones(4))),
    ("grad of non-scalar", lambda: grad(lambda t: t * 2)(torch.ones(3))),
    ("in-place on captured", lambda: vmap(lambda t: torch.zeros(3).add_(t))(torch.ones(2, 3))),
    (".item() inside vmap", lambda: vmap(lambda t: t * t.sum().item())(torch.ones(2, 3))),
    ("bad in_dims", lambda: vmap(torch.sin, in_dims=(0, 1))(torch.ones(2))),
    ("old-style Function", lambda: vmap(OldStyle.apply)(xc)),
    ("old-style Function in grad", lambda: grad(lambda t: OldStyle.apply(t).sum())(xc[0])),
    ("out of range dim", lambda: vmap(torch.sin, in_dims=2)(torch.ones(2, 3))),
]
for name, fn in mistakes:
    try:
        fn()
        print(name, "-> no error")
    except Exception as e:
        print(name, "->", type(e).__name__, ":", str(e).splitlines()[0][:110])
