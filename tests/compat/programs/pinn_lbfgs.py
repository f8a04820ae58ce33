"""Scientific ML: a physics-informed network solving a 1-D Poisson problem (residual from
torch.autograd.grad with create_graph=True, trained with Adam then L-BFGS with a strong-Wolfe
line search), the same residual per point with torch.func (grad, vmap, jacrev, hessian), and a
Gaussian-process regression whose kernel hyperparameters are fit by maximising the log
marginal likelihood with torch.linalg (cholesky, cholesky_solve, solve_triangular, slogdet)."""

import copy
import math

import torch
from torch import nn
from torch.distributions import MultivariateNormal
from torch.func import functional_call, grad, hessian, jacrev, vmap

torch.manual_seed(0)

# ---------------------------------------------------------------------------------------
# 1. PINN: -u''(x) = pi^2 sin(pi x) on [0, 1], u(0) = u(1) = 0, exact u = sin(pi x)
# ---------------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, width=16, depth=2):
        super().__init__()
        layers = [nn.Linear(1, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def source(x):
    return math.pi ** 2 * torch.sin(math.pi * x)


model = MLP()
print(model)
print("parameters", sum(p.numel() for p in model.parameters()),
      [tuple(p.shape) for p in model.parameters()])

x_col = torch.rand(48, 1)
x_bc = torch.tensor([[0.0], [1.0]])
print("collocation", x_col.shape, x_col[:3].squeeze(-1))


def residual(net, x):
    x = x.clone().requires_grad_(True)
    u = net(x)
    (du,) = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)
    (d2u,) = torch.autograd.grad(du, x, grad_outputs=torch.ones_like(du), create_graph=True)
    return -d2u - source(x)


def pinn_loss(net):
    r = residual(net, x_col)
    bc = net(x_bc)
    return (r ** 2).mean() + 10.0 * (bc ** 2).mean(), (r ** 2).mean(), (bc ** 2).mean()


# derivative checks on a fixed input before training
xs = torch.linspace(0, 1, 5).unsqueeze(1).requires_grad_()
u = model(xs)
g1, = torch.autograd.grad(u.sum(), xs, create_graph=True, retain_graph=True)
g2, = torch.autograd.grad(g1.sum(), xs, retain_graph=True)
print("u", u.detach().squeeze(1))
print("du/dx", g1[:2], g1.requires_grad, g1.grad_fn is not None)
print("d2u/dx2", g2.squeeze(1), g2.requires_grad)
act = torch.tanh(xs)
dact, = torch.autograd.grad(act, xs, torch.ones_like(act), create_graph=True)
print("tanh' = 1 - tanh^2", dact)
extra = torch.zeros(1, requires_grad=True)
gx, gextra = torch.autograd.grad(u.sum(), [xs, extra], allow_unused=True, retain_graph=True)
print("allow_unused", gextra is None, torch.allclose(gx, g1))
gx, gextra = torch.autograd.grad(u.sum(), [xs, extra], allow_unused=True,
                                 materialize_grads=True)
print("materialize_grads", gextra)

adam = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
sched = torch.optim.lr_scheduler.StepLR(adam, step_size=100, gamma=0.5)
for step in range(250):
    loss, lr_res, lr_bc = pinn_loss(model)
    adam.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=50.0)
    adam.step()
    sched.step()
    if step % 50 == 0 or step == 249:
        print(f"adam {step:3d}  loss {loss.item():.4f}  res {lr_res.item():.4f}  "
              f"bc {lr_bc.item():.5f}  lr {sched.get_last_lr()[0]:.4f}")
after_adam = copy.deepcopy(model.state_dict())

lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=40, history_size=10,
                          tolerance_grad=1e-9, tolerance_change=1e-12,
                          line_search_fn="strong_wolfe")
print(lbfgs)
calls = [0]


def closure():
    lbfgs.zero_grad()
    loss, _, _ = pinn_loss(model)
    loss.backward()
    calls[0] += 1
    return loss


for outer in range(3):
    loss = lbfgs.step(closure)
    after = pinn_loss(model)[0].item()
    print(f"lbfgs {outer}  decreased {after < loss.item()}  below 1e-3 {after < 1e-3}")
state = lbfgs.state[lbfgs._params[0]]
print("closure calls > 10", calls[0] > 10, "func_evals == calls", state["func_evals"] == calls[0],
      "n_iter", state["n_iter"] > 0)
print("history length", len(state["old_dirs"]), len(state["old_stps"]), "<= 10")
sd = lbfgs.state_dict()
print("lbfgs state keys", sorted(sd["state"][0].keys()))
print("lbfgs param_groups", {k: v for k, v in sd["param_groups"][0].items() if k != "params"})

x_test = torch.linspace(0, 1, 7).unsqueeze(1)
with torch.no_grad():
    pred = model(x_test).squeeze(1)
exact = torch.sin(math.pi * x_test).squeeze(1)
print("pinn u(x) interior", [f"{v:.3f}" for v in pred[1:-1].tolist()])
print("exact              ", [f"{v:.3f}" for v in exact[1:-1].tolist()])
err = (pred - exact).abs().max()
print("max abs error < 2e-3", err.item() < 2e-3)

# state_dict round trip into a fresh model
clone = MLP()
missing = clone.load_state_dict(model.state_dict())
print(missing, list(model.state_dict().keys())[:2])
with torch.no_grad():
    print("round trip equal", torch.equal(clone(x_test), model(x_test)))
# the torch.func part below uses the network as it was after Adam (L-BFGS amplifies float noise)
model.load_state_dict(after_adam)

# ---------------------------------------------------------------------------------------
# 2. torch.func: per-point residual with grad of grad, vmap, jacrev and hessian
# ---------------------------------------------------------------------------------------
params = {k: v.detach() for k, v in model.named_parameters()}


def u_scalar(p, x):  # x: scalar tensor
    return functional_call(model, p, (x.reshape(1, 1),)).squeeze()


du_fn = grad(u_scalar, argnums=1)
d2u_fn = grad(grad(u_scalar, argnums=1), argnums=1)
pts = torch.linspace(0.1, 0.9, 5)
d2 = vmap(d2u_fn, in_dims=(None, 0))(params, pts)
res_func = -d2 - source(pts)
res_auto = residual(model, pts.unsqueeze(1)).detach().squeeze(1)
print("func d2u", d2)
print("func residual matches autograd", torch.allclose(res_func, res_auto, atol=1e-4))
print("du vmap", [f"{v:.4f}" for v in vmap(du_fn, in_dims=(None, 0))(params, pts).tolist()])
hess = vmap(hessian(u_scalar, argnums=1), in_dims=(None, 0))(params, pts)
print("hessian shape", hess.shape, torch.allclose(hess, d2, atol=1e-4))
jac = jacrev(lambda x: functional_call(model, params, (x,)))(pts.unsqueeze(1))
print("jacrev shape", jac.shape)
print("jacrev diag", [f"{v:.4f}" for v in torch.diagonal(jac.squeeze(1).squeeze(-1)).tolist()])
# gradient of the PINN loss w.r.t. parameters with torch.func
g_params = grad(lambda p: (vmap(d2u_fn, in_dims=(None, 0))(p, pts) ** 2).mean())(params)
print("param grads", sorted(g_params.keys())[:3], g_params["net.0.weight"].shape)


def two_outputs(x):
    y = torch.sin(x) * x
    return y.sum(), y


(gv, aux) = grad(two_outputs, has_aux=True)(torch.tensor([0.5, 1.0, 2.0]))
print("grad has_aux", gv, aux)
print("jacrev of vector fn", jacrev(lambda x: x ** 3)(torch.tensor([1.0, 2.0])))
print("hessian of quadratic", hessian(lambda x: (x ** 2 * torch.tensor([1.0, 3.0])).sum())(
    torch.tensor([0.3, -0.2])))

# ---------------------------------------------------------------------------------------
# 3. Gaussian-process regression with gradient-based hyperparameter fitting (float64)
# ---------------------------------------------------------------------------------------
torch.manual_seed(1)
dt = torch.float64
X = torch.rand(30, 1, dtype=dt) * 6
y = torch.sin(X).squeeze(1) + 0.1 * torch.randn(30, dtype=dt)
Xs = torch.linspace(0, 6, 6, dtype=dt).unsqueeze(1)
print("gp data", X.shape, y.dtype, f"{y.mean().item():.4f}")


class GP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ell = nn.Parameter(torch.tensor(0.0, dtype=dt))
        self.log_sf = nn.Parameter(torch.tensor(0.0, dtype=dt))
        self.log_sn = nn.Parameter(torch.tensor(-1.0, dtype=dt))

    def kernel(self, a, b):
        d = torch.cdist(a, b, p=2.0)
        return self.log_sf.exp() ** 2 * torch.exp(-0.5 * (d / self.log_ell.exp()) ** 2)

    def nll(self, X, y):
        n = X.shape[0]
        K = self.kernel(X, X) + self.log_sn.exp() ** 2 * torch.eye(n, dtype=dt)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(1), L)
        sign, logdet = torch.linalg.slogdet(K)
        return 0.5 * (y @ alpha.squeeze(1)) + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi)

    def predict(self, X, y, Xs):
        n = X.shape[0]
        K = self.kernel(X, X) + self.log_sn.exp() ** 2 * torch.eye(n, dtype=dt)
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(X, Xs)
        alpha = torch.cholesky_solve(y.unsqueeze(1), L)
        mean = (Ks.T @ alpha).squeeze(1)
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        var = self.kernel(Xs, Xs).diagonal() - (v ** 2).sum(0)
        return mean, var


gp = GP()
print("initial nll", f"{gp.nll(X, y).item():.6f}")
opt = torch.optim.Adam(gp.parameters(), lr=0.05)
for it in range(60):
    opt.zero_grad()
    loss = gp.nll(X, y)
    loss.backward()
    opt.step()
    if it % 20 == 0:
        print(f"gp adam {it:2d}  nll {loss.item():.6f}  dlog_ell {gp.log_ell.grad.item():.6f}")
lb = torch.optim.LBFGS(gp.parameters(), max_iter=50, line_search_fn="strong_wolfe")


def gp_closure():
    lb.zero_grad()
    loss = gp.nll(X, y)
    loss.backward()
    return loss


lb.step(gp_closure)
print(f"gp fitted nll {gp.nll(X, y).item():.6f}  ell {gp.log_ell.exp().item():.5f}  "
      f"sf {gp.log_sf.exp().item():.5f}  sn {gp.log_sn.exp().item():.5f}")
with torch.no_grad():
    K_fit = gp.kernel(X, X) + gp.log_sn.exp() ** 2 * torch.eye(30, dtype=dt)
    mvn = MultivariateNormal(torch.zeros(30, dtype=dt), scale_tril=torch.linalg.cholesky(K_fit))
    print(mvn, f"log_prob {mvn.log_prob(y).item():.6f}  "
          f"matches -nll {torch.allclose(mvn.log_prob(y), -gp.nll(X, y))}")
    mean, var = gp.predict(X, y, Xs)
print("gp mean", mean)
print("gp std ", var.clamp_min(0).sqrt())
print("true   ", torch.sin(Xs).squeeze(1))

# sparse GP (Titsias' collapsed bound) with 8 learnable inducing inputs Z
Z = nn.Parameter(X[::4].detach().clone())


def sgpr_elbo(gp, Z, X, y):
    n, m = X.shape[0], Z.shape[0]
    sn2 = gp.log_sn.exp() ** 2
    Kzz = gp.kernel(Z, Z) + 1e-6 * torch.eye(m, dtype=dt)
    L = torch.linalg.cholesky(Kzz)
    A = torch.linalg.solve_triangular(L, gp.kernel(Z, X), upper=False) / sn2.sqrt()
    B = torch.eye(m, dtype=dt) + A @ A.T
    LB = torch.linalg.cholesky(B)
    c = torch.linalg.solve_triangular(LB, (A @ y).unsqueeze(1), upper=False) / sn2.sqrt()
    trace_term = 0.5 * (n * gp.log_sf.exp() ** 2 / sn2 - (A ** 2).sum())
    return (-0.5 * n * math.log(2 * math.pi) - LB.diagonal().log().sum() - 0.5 * n * sn2.log()
            - 0.5 * (y @ y) / sn2 + 0.5 * (c ** 2).sum() - trace_term)


opt_z = torch.optim.Adam([Z], lr=0.05)
for it in range(15):
    opt_z.zero_grad()
    elbo = sgpr_elbo(gp, Z, X, y)
    (-elbo).backward()
    opt_z.step()
    if it % 7 == 0:
        print(f"sgpr {it:2d}  elbo {elbo.item():.5f}  |dZ| {Z.grad.norm().item():.5f}")
print("inducing inputs", Z.detach().squeeze(1).sort().values)

# results that carry gradients, as printed while debugging a kernel
P = torch.tensor([[0.0, 1.0], [2.0, 3.0]], requires_grad=True)
D = torch.cdist(P, P)
print("cdist", D)
D.sum().backward()
print("d/dP sum cdist", P.grad)
Kp = torch.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
Lp = torch.linalg.cholesky(Kp)
print(Lp)
print(torch.cholesky_solve(torch.ones(2, 1), Lp))
print(torch.linalg.solve_triangular(Lp, torch.ones(2, 1), upper=False))
print(torch.linalg.slogdet(Kp).logabsdet, torch.linalg.inv(Kp)[0])

# the same linear algebra checked several ways
with torch.no_grad():
    K = gp.kernel(X[:6], X[:6]) + 0.01 * torch.eye(6, dtype=dt)
    L = torch.linalg.cholesky(K)
    U = torch.linalg.cholesky(K, upper=True)
    print("upper is L^T", torch.allclose(U, L.mT))
    evals, evecs = torch.linalg.eigh(K)
    print("eigvals", evals)
    print("eigh reconstructs", torch.allclose(evecs @ torch.diag(evals) @ evecs.T, K))
    print("logdet three ways", f"{torch.linalg.slogdet(K).logabsdet.item():.6f}",
          f"{2 * L.diagonal().log().sum().item():.6f}", f"{torch.logdet(K).item():.6f}")
    print("det", f"{torch.linalg.det(K).item():.6e}", torch.det(K).dtype)
    Kinv = torch.linalg.inv(K)
    print("inv residual small", torch.linalg.norm(K @ Kinv - torch.eye(6, dtype=dt)) < 1e-8)
    print("norms", f"{torch.linalg.norm(K).item():.6f}",
          f"{torch.linalg.norm(K, ord=2).item():.6f}",
          f"{torch.linalg.matrix_norm(K, ord='nuc').item():.6f}",
          f"{torch.linalg.vector_norm(K, ord=1, dim=0).max().item():.6f}")
    print("cond", f"{torch.linalg.cond(K).item():.4e}")
    b = torch.arange(6, dtype=dt).unsqueeze(1)
    s1 = torch.cholesky_solve(b, L)
    s2 = torch.linalg.solve(K, b)
    z = torch.linalg.solve_triangular(L, b, upper=False)
    s3 = torch.linalg.solve_triangular(L.mT, z, upper=True)
    print("solves agree", torch.allclose(s1, s2), torch.allclose(s2, s3))
    s4 = torch.linalg.solve_triangular(L.mT, b.T, upper=True, left=False)
    print("right solve shape", s4.shape)
    s5 = torch.cholesky_solve(b, U, upper=True)
    print("upper cholesky_solve", torch.allclose(s1, s5))
    L_ex, info = torch.linalg.cholesky_ex(K)
    print("cholesky_ex info", info)
    d = torch.cdist(X[:3], X[:4], p=1)
    print("cdist p=1", d.shape, torch.allclose(d, (X[:3] - X[:4].T).abs()))
    print("pdist", torch.pdist(X[:4]).shape)
    print(torch.linalg.slogdet(torch.tensor([[2.0, 0.0], [0.0, -3.0]])))
    print(torch.linalg.eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])))

# ---------------------------------------------------------------------------------------
# 4. typical mistakes
# ---------------------------------------------------------------------------------------
a = torch.ones(3, requires_grad=True)
b = torch.ones(3, requires_grad=True)
ERRORS = {
    "grad of non-scalar": lambda: torch.autograd.grad(a * 2, a),
    "unused input": lambda: torch.autograd.grad((a * 2).sum(), [a, b]),
    "no requires_grad": lambda: torch.autograd.grad(torch.ones(2).sum(), torch.ones(2)),
    "twice backward": lambda: [(lambda s: (torch.autograd.grad(s, a),
                                            torch.autograd.grad(s, a)))((a.exp()).sum())],
    "cholesky not PD": lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky non-square": lambda: torch.linalg.cholesky(torch.ones(2, 3)),
    "inv singular": lambda: torch.linalg.inv(torch.zeros(2, 2)),
    "solve shapes": lambda: torch.linalg.solve(torch.eye(3), torch.ones(2)),
    "cdist dims": lambda: torch.cdist(torch.ones(3, 2), torch.ones(3, 4)),
    "lbfgs without closure": lambda: torch.optim.LBFGS([a]).step(),
    "lbfgs two groups": lambda: torch.optim.LBFGS([{"params": [a]}, {"params": [b]}]),
    "lbfgs bad line search": lambda: torch.optim.LBFGS([a], line_search_fn="armijo").step(
        lambda: (a ** 2).sum().backward() or (a ** 2).sum()),
    "func grad non-scalar": lambda: grad(lambda x: x * 2)(torch.ones(3)),
    "vmap item": lambda: vmap(lambda x: x.item())(torch.ones(3)),
    "vmap bad in_dim": lambda: vmap(torch.sin, in_dims=1)(torch.ones(3)),
    "vmap size mismatch": lambda: vmap(torch.add)(torch.ones(3), torch.ones(4)),
    "func grad of ints": lambda: grad(lambda x: x.sum())(torch.tensor([1, 2])),
    "vmap over a scalar": lambda: vmap(torch.sin)(torch.tensor(1.0)),
    "vmap random": lambda: vmap(lambda t: t + torch.rand(()), randomness="error")(torch.ones(3)),
    "grad of no inputs": lambda: torch.autograd.grad((a * 2).sum(), []),
    "cholesky_ex check_errors": lambda: torch.linalg.cholesky_ex(-torch.eye(2),
                                                                  check_errors=True),
    "solve_triangular no upper": lambda: torch.linalg.solve_triangular(torch.eye(2),
                                                                        torch.ones(2, 1)),
    "grad_outputs shape": lambda: torch.autograd.grad(a * 2, a, grad_outputs=torch.ones(2)),
}
for name, make in ERRORS.items():
    try:
        make()
        print(f"{name}: no error")
    except Exception as e:  # noqa: BLE001 - printed as a program would log it
        msg = str(e).splitlines()[0] if str(e) else ""
        print(f"{name}: {type(e).__name__}: {msg}")

# ---------------------------------------------------------------------------------------
# 5. adaptive refinement: a scrambled Sobol design of new collocation points
# ---------------------------------------------------------------------------------------
sobol = torch.quasirandom.SobolEngine(dimension=1, scramble=True, seed=7)
print(sobol)
x_new = sobol.draw(16)
print("sobol points", x_new[:4].squeeze(1), x_new.shape)
r_new = residual(model, x_new).detach().abs().squeeze(1)
worst = r_new.topk(3).indices
print("largest residuals at", x_new[worst].squeeze(1), f"mean |r| {r_new.mean().item():.4f}")
try:
    sobol.draw_base2(3)
except ValueError as e:
    print(type(e).__name__, e)
