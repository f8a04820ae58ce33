"""Neural ordinary differential equations written by hand, torchdiffeq-style: fixed-step
Euler / midpoint / RK4 solvers over a torch.linspace grid, an adaptive Dormand-Prince 5(4)
solver with RMS error control and step rejection, the adjoint method as a custom
autograd.Function checked against backprop through the solver, a neural ODE fitted to a
spiral (Tanh / Softplus MLP, time by torch.cat, Adam, clip_grad_norm_), a continuous
normalizing flow with the exact Jacobian trace (jacrev / vmap) and Hutchinson's estimator,
a stiff linear system by implicit Euler against matrix_exp, leapfrog Hamiltonian dynamics
with the energy drift, jvp sensitivities, float64 by set_default_dtype, and the usual
mistakes."""

import math

import torch
from torch import nn
from torch.func import jacrev, jvp, vmap

torch.manual_seed(0)


# --- fixed-step solvers ---------------------------------------------------------------
def euler_step(f, t, y, h):
    return y + h * f(t, y)


def midpoint_step(f, t, y, h):
    k1 = f(t, y)
    return y + h * f(t + h / 2, y + h / 2 * k1)


def rk4_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


STEPPERS = {"euler": euler_step, "midpoint": midpoint_step, "rk4": rk4_step}


def odeint_fixed(f, y0, t, method="rk4"):
    """Integrate over the grid t, returning the state at every grid point (len(t), *y0)."""
    step = STEPPERS[method]
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        y = step(f, t[i], y, t[i + 1] - t[i])
        ys.append(y)
    return torch.stack(ys)


def decay(t, y):
    return -0.5 * y


print("--- fixed-step solvers on y' = -y/2 ---")
y0 = torch.tensor([1.0, 2.0])
exact = y0 * math.exp(-0.5 * 2.0)
for n in [5, 11, 21]:
    grid = torch.linspace(0.0, 2.0, n)
    errs = []
    for name in STEPPERS:
        ys = odeint_fixed(decay, y0, grid, name)
        errs.append(f"{name}={(ys[-1] - exact).abs().max().item():.4e}")
    print(f"n={n:3d} h={(grid[1] - grid[0]).item():.4f}", " ".join(errs))
ys = odeint_fixed(decay, y0, torch.linspace(0, 2, 11), "rk4")
print("trajectory", ys.shape, ys.dtype, ys[::5])
# convergence order from halving the step, in float64 so round-off stays below the error
with torch.no_grad():
    y064 = y0.double()
    ex64 = y064 * math.exp(-1.0)
    for name in STEPPERS:
        e1 = (odeint_fixed(decay, y064, torch.linspace(0, 2, 9, dtype=torch.float64),
                           name)[-1] - ex64).abs().max()
        e2 = (odeint_fixed(decay, y064, torch.linspace(0, 2, 17, dtype=torch.float64),
                           name)[-1] - ex64).abs().max()
        print(f"{name:8s} observed order {torch.log2(e1 / e2).item():.3f}")

# --- adaptive Dormand-Prince 5(4) -----------------------------------------------------
DP_C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
DP_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
DP_B5 = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0]
DP_B4 = [5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def rms_norm(x):
    return torch.linalg.vector_norm(x) / math.sqrt(x.numel())


def dopri5(f, y0, t0, t1, rtol=1e-6, atol=1e-8, h0=0.1, max_steps=500):
    """Adaptive RK45 with a PI-free step controller; returns y(t1) and step statistics."""
    t, y, h = t0, y0, h0
    accepted = rejected = 0
    while t < t1 - 1e-12:
        h = min(h, t1 - t)
        ks = []
        for i in range(7):
            yi = y
            for a, k in zip(DP_A[i], ks):
                yi = yi + h * a * k
            ks.append(f(torch.tensor(t + DP_C[i] * h, dtype=y.dtype), yi))
        y5 = y + h * sum(b * k for b, k in zip(DP_B5, ks))
        y4 = y + h * sum(b * k for b, k in zip(DP_B4, ks))
        scale = atol + rtol * torch.maximum(y.abs(), y5.abs())
        err = rms_norm((y5 - y4) / scale).item()
        if err <= 1.0:
            t, y = t + h, y5
            accepted += 1
        else:
            rejected += 1
        factor = torch.clamp(torch.tensor(0.9 * max(err, 1e-10) ** -0.2), 0.2, 5.0).item()
        h = h * factor
        if accepted + rejected > max_steps:
            raise RuntimeError("dopri5: too many steps")
    return y, accepted, rejected


def vdp(mu):
    def f(t, y):
        x, v = y[0], y[1]
        return torch.stack([v, mu * (1 - x ** 2) * v - x])
    return f


print("--- Dormand-Prince 5(4) ---")
yd = torch.tensor([1.0, 2.0], dtype=torch.float64)
for rtol in [1e-3, 1e-6, 1e-9]:
    y1, acc, rej = dopri5(decay, yd, 0.0, 2.0, rtol=rtol, atol=rtol * 1e-2)
    err = (y1 - yd * math.exp(-1.0)).abs().max().item()
    print(f"rtol={rtol:.0e} accepted={acc} rejected={rej} error={err:.3e}")
for mu in [0.5, 3.0]:
    y1, acc, rej = dopri5(vdp(mu), torch.tensor([2.0, 0.0], dtype=torch.float64), 0.0, 5.0,
                          rtol=1e-6, atol=1e-9, h0=0.5)
    print(f"van der Pol mu={mu}: y(5)=[{y1[0].item():.5f}, {y1[1].item():.5f}] "
          f"steps={acc} rejected={rej}")


# --- the adjoint method ---------------------------------------------------------------
class ODEFunc(nn.Module):
    """MLP dynamics f(t, y) with the time fed in by concatenation."""

    def __init__(self, dim=2, hidden=16, act=nn.Tanh):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, hidden), act(), nn.Linear(hidden, dim))

    def forward(self, t, y):
        tt = t.expand(*y.shape[:-1], 1).to(y.dtype)
        return self.net(torch.cat([y, tt], dim=-1))


class AdjointODE(torch.autograd.Function):
    """y(T) by RK4 forward; the backward integrates [y, a, dL/dtheta] back in time."""

    @staticmethod
    def forward(ctx, y0, t, func, n_steps, *params):
        with torch.no_grad():
            ys = odeint_fixed(func, y0, torch.linspace(t[0].item(), t[1].item(), n_steps + 1))
        ctx.func, ctx.n_steps = func, n_steps
        ctx.save_for_backward(t, ys[-1], *params)
        return ys[-1]

    @staticmethod
    def backward(ctx, grad_y):
        t, yT, *params = ctx.saved_tensors
        func = ctx.func
        n_y = yT.numel()

        def aug_dynamics(s, state):
            y = state[:n_y].view_as(yT)
            a = state[n_y:2 * n_y].view_as(yT)
            with torch.enable_grad():
                y = y.detach().requires_grad_(True)
                fy = func(s, y)
                vjps = torch.autograd.grad(fy, (y, *params), -a, allow_unused=True,
                                           retain_graph=False)
            vjp_y = vjps[0]
            vjp_p = [torch.zeros_like(p) if g is None else g for p, g in zip(params, vjps[1:])]
            return torch.cat([fy.detach().flatten(), vjp_y.flatten(),
                              *[g.flatten() for g in vjp_p]])

        n_p = sum(p.numel() for p in params)
        state = torch.cat([yT.flatten(), grad_y.flatten(), yT.new_zeros(n_p)])
        back = torch.linspace(t[1].item(), t[0].item(), ctx.n_steps + 1)
        state = odeint_fixed(aug_dynamics, state, back)[-1]
        grad_y0 = state[n_y:2 * n_y].view_as(yT)
        grads, off = [], 2 * n_y
        for p in params:
            grads.append(state[off:off + p.numel()].view_as(p))
            off += p.numel()
        return (grad_y0, None, None, None, *grads)


def odeint_adjoint(func, y0, t, n_steps):
    return AdjointODE.apply(y0, t, func, n_steps, *func.parameters())


print("--- adjoint vs backprop through the solver ---")
torch.set_default_dtype(torch.float64)
print("default dtype", torch.get_default_dtype(), torch.tensor(1.0).dtype)
func = ODEFunc(2, 8)
y0a = torch.tensor([[0.5, -0.3], [1.0, 0.2]], requires_grad=True)
tspan = torch.tensor([0.0, 1.0])
out_adj = odeint_adjoint(func, y0a, tspan, 40)
print("adjoint output", out_adj.shape, type(out_adj.grad_fn).__name__)
loss_adj = (out_adj ** 2).sum()
loss_adj.backward()
g_adj = [y0a.grad.clone()] + [p.grad.clone() for p in func.parameters()]
y0a.grad = None
func.zero_grad()
out_bp = odeint_fixed(func, y0a, torch.linspace(0.0, 1.0, 41))[-1]
print("forward agree", torch.allclose(out_adj, out_bp), f"{(out_adj - out_bp).abs().max():.2e}")
(out_bp ** 2).sum().backward()
g_bp = [y0a.grad] + [p.grad for p in func.parameters()]
names = ["y0"] + [n for n, _ in func.named_parameters()]
for name, ga, gb in zip(names, g_adj, g_bp):
    rel = ((ga - gb).norm() / gb.norm()).item()
    print(f"{name:14s} |g|={gb.norm().item():.5f} rel diff {'<1e-4' if rel < 1e-4 else rel}")
print("grad y0 (adjoint)", g_adj[0])
# the parameter gradient through a Softplus dynamics, finite-difference check in float64
func_sp = ODEFunc(2, 6, nn.Softplus)
w = func_sp.net[0].weight
yfd = torch.tensor([0.3, -0.7])
loss = odeint_adjoint(func_sp, yfd, tspan, 20).sum()
(gw,) = torch.autograd.grad(loss, w)
with torch.no_grad():
    eps = 1e-6
    w[0, 1] += eps
    lp = odeint_fixed(func_sp, yfd, torch.linspace(0, 1, 21))[-1].sum()
    w[0, 1] -= 2 * eps
    lm = odeint_fixed(func_sp, yfd, torch.linspace(0, 1, 21))[-1].sum()
    w[0, 1] += eps
print(f"softplus dynamics dL/dW[0,1]: adjoint {gw[0, 1].item():.6f} "
      f"finite diff {((lp - lm) / (2 * eps)).item():.6f}")
torch.set_default_dtype(torch.float32)
print("default dtype restored", torch.get_default_dtype())

# --- fitting a spiral -----------------------------------------------------------------
print("--- neural ODE fit of a spiral ---")
torch.manual_seed(1)
A_TRUE = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
t_grid = torch.linspace(0.0, 2.0, 21)
true_y0 = torch.tensor([[2.0, 0.0]])


def true_dynamics(t, y):
    return (y ** 3) @ A_TRUE


with torch.no_grad():
    true_y = odeint_fixed(true_dynamics, true_y0, t_grid, "rk4")
print("true trajectory", true_y.shape, f"y(2)={true_y[-1, 0, 0].item():.5f},"
      f"{true_y[-1, 0, 1].item():.5f}")


class SpiralFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 32),
                                 nn.Softplus(), nn.Linear(32, 2))
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.1)
                nn.init.constant_(m.bias, 0.0)

    def forward(self, t, y):
        return self.net(torch.cat([y ** 3, t.reshape(1, 1).expand(y.shape[0], 1)], dim=1))


model = SpiralFunc()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
print("parameters", sum(p.numel() for p in model.parameters()))
for it in range(1, 61):
    opt.zero_grad()
    pred = odeint_fixed(model, true_y0, t_grid, "midpoint")
    loss = (pred - true_y).abs().mean()
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    if it % 15 == 0 or it == 1:
        print(f"iter {it:3d} loss {loss.item():.5f} grad norm {total.item():.4f}")
with torch.no_grad():
    pred = odeint_fixed(model, true_y0, t_grid, "rk4")
print("final mse", f"{nn.functional.mse_loss(pred, true_y).item():.5f}",
      "pred y(2)", pred[-1])

# --- continuous normalizing flow ------------------------------------------------------
print("--- continuous normalizing flow ---")
torch.manual_seed(2)
cnf_net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))


def cnf_f(t, z):
    return cnf_net(torch.cat([z, t.reshape(1).expand(1)]))


z = torch.randn(5, 2)
t0 = torch.tensor(0.3)
jac = vmap(jacrev(cnf_f, argnums=1), in_dims=(None, 0))(t0, z)
print("per-sample Jacobians", jac.shape)
tr_exact = torch.diagonal(jac, dim1=-2, dim2=-1).sum(-1)
print("exact trace", tr_exact)
print("torch.trace agrees", torch.allclose(torch.stack([torch.trace(j) for j in jac]), tr_exact))


def hutchinson(f, t, z, n_samples):
    z = z.detach().requires_grad_(True)
    fz = vmap(f, in_dims=(None, 0))(t, z)
    est = torch.zeros(z.shape[0])
    for _ in range(n_samples):
        e = (torch.randint(0, 2, z.shape) * 2 - 1).to(z.dtype)
        (e_dfdz,) = torch.autograd.grad(fz, z, e, create_graph=True)
        est = est + (e_dfdz * e).sum(-1)
    return est / n_samples


torch.manual_seed(3)
e = torch.randint(0, 2, (4, 2)) * 2 - 1
print("rademacher", e.dtype, e.tolist())
tr_h = hutchinson(cnf_f, t0, z, 200)
print("hutchinson (200 probes)", tr_h)
print(f"hutchinson max error {(tr_h - tr_exact).abs().max().item():.4f}",
      "requires_grad", tr_h.requires_grad, type(tr_h.grad_fn).__name__)


def cnf_dynamics(t, state):
    zz = state[:, :2]
    fz = vmap(cnf_f, in_dims=(None, 0))(t, zz)
    j = vmap(jacrev(cnf_f, argnums=1), in_dims=(None, 0))(t, zz)
    return torch.cat([fz, -torch.diagonal(j, dim1=-2, dim2=-1).sum(-1, keepdim=True)], dim=1)


base = torch.distributions.Normal(0.0, 1.0)
x = torch.randn(6, 2)
with torch.no_grad():
    traj = odeint_fixed(cnf_dynamics, torch.cat([x, torch.zeros(6, 1)], 1),
                        torch.linspace(0.0, 1.0, 11), "rk4")
zT, dlogp = traj[-1, :, :2], traj[-1, :, 2]
logp_x = base.log_prob(zT).sum(-1) - dlogp
print("log-density change", dlogp)
print(f"log p(x) mean {logp_x.mean().item():.5f}")


# a few maximum-likelihood steps with the stochastic trace (backprop through autograd.grad)
torch.manual_seed(4)
data = torch.randn(64, 2) * torch.tensor([1.5, 0.5]) + torch.tensor([0.5, -0.5])
cnf_opt = torch.optim.Adam(cnf_net.parameters(), lr=5e-3)


def cnf_hutch_dynamics(t, state, e):
    zz = state[:, :2]
    if not zz.requires_grad:
        zz = zz.requires_grad_(True)
    fz = cnf_net(torch.cat([zz, t.reshape(1, 1).expand(zz.shape[0], 1)], dim=1))
    (e_dfdz,) = torch.autograd.grad(fz, zz, e, create_graph=True)
    return torch.cat([fz, -(e_dfdz * e).sum(-1, keepdim=True)], dim=1)


for step in range(1, 6):
    cnf_opt.zero_grad()
    e = (torch.randint(0, 2, (64, 2)) * 2 - 1).float()
    grid = torch.linspace(0.0, 1.0, 5)
    st = odeint_fixed(lambda t, s, e=e: cnf_hutch_dynamics(t, s, e),
                      torch.cat([data, torch.zeros(64, 1)], 1), grid, "rk4")[-1]
    nll = -(base.log_prob(st[:, :2]).sum(-1) - st[:, 2]).mean()
    nll.backward()
    gnorm = nn.utils.clip_grad_norm_(cnf_net.parameters(), 10.0)
    cnf_opt.step()
    print(f"cnf step {step} nll {nll.item():.5f} grad norm {gnorm.item():.4f}")

# Liouville: det of the flow's Jacobian is exp of the integrated divergence
z0 = torch.tensor([0.4, -0.2], dtype=torch.float64)
cnf64 = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2)).double()


def flow64(z):
    return odeint_fixed(lambda t, y: cnf64(torch.cat([y, t.reshape(1)])), z,
                        torch.linspace(0.0, 1.0, 41, dtype=torch.float64))


J = torch.func.jacfwd(lambda z: flow64(z)[-1])(z0)
Jr = torch.autograd.functional.jacobian(lambda z: flow64(z)[-1], z0)
traj64 = flow64(z0).detach()
tgrid = torch.linspace(0.0, 1.0, 41, dtype=torch.float64)
divs = torch.stack([torch.trace(torch.func.jacrev(
    lambda y, s=s: cnf64(torch.cat([y, s.reshape(1)])))(y)) for s, y in zip(tgrid, traj64)])
print("flow Jacobian", J.shape, "jacfwd == jacobian", torch.allclose(J, Jr))
print(f"det J {torch.linalg.det(J).item():.6f} exp(int div) "
      f"{torch.exp(torch.trapezoid(divs, tgrid)).item():.6f}")
print("cumulative divergence", torch.cumulative_trapezoid(divs, tgrid)[::10])
print(f"slogdet {torch.linalg.slogdet(J).logabsdet.item():.6f}")

# --- stiff linear system --------------------------------------------------------------
print("--- stiff system: implicit Euler vs matrix_exp ---")
torch.set_default_dtype(torch.float64)
A = torch.tensor([[-1000.0, 1.0, 0.0], [0.0, -2.0, 3.0], [0.0, -3.0, -2.0]])
ev = torch.linalg.eigvals(A)
print("eigenvalues", ev.dtype, [f"{v.real:.4f}{v.imag:+.4f}j" for v in ev.tolist()])
print("eigvals", ev)
print("real", ev.real, "imag", ev.imag, "modulus", ev.abs())
L, V = torch.linalg.eig(A)
print("eig check", torch.allclose(A.to(V.dtype) @ V, V @ torch.diag(L)), V.dtype, V.shape)
print(f"cond {torch.linalg.cond(A).item():.3f} norm {torch.linalg.matrix_norm(A).item():.3f}")
print("stiffness ratio", f"{(ev.real.abs().max() / ev.real.abs().min()).item():.1f}")
yS = torch.tensor([1.0, 1.0, 0.0])
T = 1.0
ref = torch.linalg.matrix_exp(A * T) @ yS
print("matrix_exp reference", ref)
I3 = torch.eye(3)
for n in [10, 100, 1000]:
    h = T / n
    ye = yS.clone()
    yi = yS.clone()
    M = I3 - h * A
    with torch.no_grad():
        for _ in range(n):
            ye = ye + h * (A @ ye)
            yi = torch.linalg.solve(M, yi)
    amp = torch.linalg.eigvals(I3 + h * A).abs().max().item()
    print(f"n={n:4d} explicit |growth|={amp:.3f} err={(ye - ref).abs().max().item():.3e} "
          f"implicit err={(yi - ref).abs().max().item():.3e}")
amp_i = (1 / torch.linalg.eigvals(I3 - 0.1 * A).abs()).max()
print("implicit amplification at h=0.1", f"{amp_i.item():.5f}")
Ys = torch.linalg.matrix_exp(torch.stack([A * s for s in [0.0, 0.5, 1.0]]))
print("batched matrix_exp", Ys.shape, "identity at 0", torch.allclose(Ys[0], I3))
torch.set_default_dtype(torch.float32)

# --- Hamiltonian dynamics -------------------------------------------------------------
print("--- leapfrog on a pendulum ---")


def hamiltonian(q, p):
    return 0.5 * p ** 2 + (1 - torch.cos(q))


def grad_q(q, p):
    q = q.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(hamiltonian(q, p).sum(), q)
    return g


def leapfrog(q, p, h, n):
    for _ in range(n):
        p = p - h / 2 * grad_q(q, p)
        q = q + h * p
        p = p - h / 2 * grad_q(q, p)
    return q, p


def euler_ham(q, p, h, n):
    for _ in range(n):
        q, p = q + h * p, p - h * grad_q(q, p)
    return q, p


q0 = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
p0 = torch.zeros(3, dtype=torch.float64)
H0 = hamiltonian(q0, p0)
for h in [0.1, 0.05]:
    n = int(round(10 / h))
    ql, pl = leapfrog(q0, p0, h, n)
    qe, pe = euler_ham(q0, p0, h, n)
    dl = (hamiltonian(ql, pl) - H0).abs().max().item()
    de = (hamiltonian(qe, pe) - H0).abs().max().item()
    print(f"h={h} steps={n} leapfrog drift {dl:.3e} euler drift {de:.3e}")
print("H0", H0, "q(10)", ql)

# --- jvp sensitivities ----------------------------------------------------------------
print("--- forward-mode sensitivities ---")


def solve_decay(k):
    return odeint_fixed(lambda t, y: -k * y, torch.tensor([1.0, 2.0]),
                        torch.linspace(0.0, 1.0, 21))[-1]


k = torch.tensor(0.7)
yk, dyk = jvp(solve_decay, (k,), (torch.tensor(1.0),))
print("y(1)", yk, "dy/dk", dyk)
print("analytic dy/dk", -torch.tensor([1.0, 2.0]) * torch.exp(-k))
yv, dyv = jvp(lambda y: odeint_fixed(vdp(1.0), y, torch.linspace(0, 1, 11))[-1],
              (torch.tensor([2.0, 0.0]),), (torch.tensor([1.0, 0.0]),))
print("van der Pol d y(1) / d x0", [f"{v:.5g}" for v in dyv.tolist()])
Jv = torch.func.jacfwd(lambda y: rk4_step(vdp(1.0), torch.tensor(0.0), y, 0.1))(
    torch.tensor([2.0, 0.0]))
print("one-step sensitivity", Jv.float())
Jr = torch.func.jacrev(lambda y: rk4_step(vdp(1.0), torch.tensor(0.0), y, 0.1))(
    torch.tensor([2.0, 0.0]))
print("jacrev agrees", torch.allclose(Jv.float(), Jr), Jr.dtype)

# --- typical mistakes -----------------------------------------------------------------
print("--- mistakes ---")
traj = odeint_fixed(decay, torch.tensor([1.0, 2.0], requires_grad=True), torch.linspace(0, 1, 5))
try:
    torch.autograd.grad(traj, traj)
except RuntimeError as err:
    print("non-scalar grad:", type(err).__name__, err)
y_in = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    (traj[-1] * 2).backward()
except RuntimeError as err:
    print("non-scalar backward:", type(err).__name__, err)
try:
    torch.linalg.solve(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), torch.tensor([1.0, 1.0]))
except RuntimeError as err:
    print("singular solve:", type(err).__name__, err)
unused = torch.tensor(3.0, requires_grad=True)
out = (y_in ** 2).sum()
try:
    torch.autograd.grad(out, (y_in, unused), retain_graph=True)
except RuntimeError as err:
    print("unused input:", type(err).__name__, err)
gy, gu = torch.autograd.grad(out, (y_in, unused), allow_unused=True)
print("allow_unused", gy, gu)
out2 = odeint_fixed(decay, y_in, torch.linspace(0, 1, 3))[-1].sum()
out2.backward()
try:
    out2.backward()
except RuntimeError as err:
    print("backward twice:", type(err).__name__, err)
try:
    torch.linalg.eigvals(torch.ones(2, 3))
except RuntimeError as err:
    print("eigvals non-square:", type(err).__name__, err)
try:
    torch.linalg.matrix_exp(torch.ones(3))
except RuntimeError as err:
    print("matrix_exp 1-D:", type(err).__name__, err)
try:
    ODEFunc(2, 4)(torch.tensor(0.0), torch.zeros(3, 2, dtype=torch.float64))
except RuntimeError as err:
    print("dtype mismatch:", type(err).__name__, err)
try:
    rms_norm(torch.tensor([3.0, 4.0])).item() + torch.tensor([1.0, 2.0]).item()
except RuntimeError as err:
    print("item of two:", type(err).__name__, err)
try:
    jvp(lambda y: y * 2, (torch.ones(3),), (torch.ones(2),))
except RuntimeError as err:
    print("jvp tangent shape:", type(err).__name__, err)
try:
    torch.autograd.grad(torch.ones(2).sum(), torch.ones(2))
except RuntimeError as err:
    print("no grad_fn:", type(err).__name__, err)
try:
    odeint_fixed(decay, torch.ones(2), torch.linspace(0, 1, 3), "heun")
except KeyError as err:
    print("unknown method:", type(err).__name__, err)
