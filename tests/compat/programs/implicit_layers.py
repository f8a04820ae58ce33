"""Deep implicit layers, as the "Deep Implicit Layers" tutorial teaches them: a tanh
equilibrium layer solved by fixed-point iteration, Newton's method and Anderson acceleration,
its gradient by the implicit function theorem (a custom autograd.Function and a backward hook),
checks against unrolled autograd and gradcheck, Jacobian spectral norms by power iteration,
Neumann and conjugate-gradient solves, a small QP layer, Jacobian regularisation, and the
autograd.Function features and mistakes such code runs into."""

import math

import torch
import torch.autograd.forward_ad as fwAD
import torch.autograd.functional as AF
from torch import autograd, nn

torch.manual_seed(0)
torch.set_printoptions(precision=4)


def fmt(t):
    return "[" + ", ".join(f"{v:.4g}" for v in t.reshape(-1).tolist()) + "]"


# -- 1. the tanh fixed-point layer, by plain iteration -------------------------------------
class TanhFixedPointLayer(nn.Module):
    def __init__(self, out_features, tol=1e-4, max_iter=50):
        super().__init__()
        self.linear = nn.Linear(out_features, out_features, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, x):
        z = torch.zeros_like(x)
        self.iterations = 0
        self.history = []
        while self.iterations < self.max_iter:
            z_next = torch.tanh(self.linear(z) + x)
            self.err = torch.norm(z - z_next)
            self.history.append(self.err.item())
            z = z_next
            self.iterations += 1
            if self.err < self.tol:
                break
        return z


layer = TanhFixedPointLayer(8)
with torch.no_grad():
    layer.linear.weight.mul_(0.6)
x = torch.randn(4, 8)
z = layer(x)
print("fixed point: iterations", layer.iterations, "final err", f"{layer.err.item():.1e}")
print("residuals", " ".join(f"{r:.3g}" for r in layer.history[:8]))
print("z[0]", fmt(z[0]), z.grad_fn.name() if z.grad_fn else None)
print("check", f"{(z - torch.tanh(layer.linear(z) + x)).abs().max().item():.1e}")


# -- 2. Newton's method on g(z) = z - tanh(Wz + x), with a batched Jacobian ---------------
class TanhNewtonLayer(nn.Module):
    def __init__(self, out_features, tol=1e-6, max_iter=50):
        super().__init__()
        self.linear = nn.Linear(out_features, out_features, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, x):
        z = torch.tanh(x)
        self.iterations = 0
        self.history = []
        while self.iterations < self.max_iter:
            z_linear = self.linear(z) + x
            g = z - torch.tanh(z_linear)
            self.err = torch.norm(g)
            self.history.append(self.err.item())
            if self.err < self.tol:
                break
            J = torch.eye(z.shape[1])[None, :, :] - (1 / torch.cosh(z_linear) ** 2)[
                :, :, None
            ] * self.linear.weight[None, :, :]
            z = z - torch.linalg.solve(J, g[:, :, None])[:, :, 0]
            self.iterations += 1
        return z


newton = TanhNewtonLayer(8)
newton.linear.weight.data.copy_(layer.linear.weight.data)
zn = newton(x)
print("newton: iterations", newton.iterations, "residuals",
      " ".join(f"{r:.2e}" for r in newton.history[:2]))
print("newton vs iteration", f"{(zn - z).abs().max().item():.1e}", zn.requires_grad,
      zn.grad_fn.name())


# -- 3. Anderson acceleration ----------------------------------------------------------------
def anderson(f, x0, m=5, lam=1e-4, max_iter=50, tol=1e-5, beta=1.0):
    """Anderson acceleration: each step a small bordered least-squares by linalg.solve."""
    bsz = x0.shape[0]
    d = x0[0].numel()
    X = torch.zeros(bsz, m, d, dtype=x0.dtype, device=x0.device)
    F = torch.zeros(bsz, m, d, dtype=x0.dtype, device=x0.device)
    X[:, 0], F[:, 0] = x0.reshape(bsz, -1), f(x0).reshape(bsz, -1)
    X[:, 1], F[:, 1] = F[:, 0], f(F[:, 0].view_as(x0)).reshape(bsz, -1)
    H = torch.zeros(bsz, m + 1, m + 1, dtype=x0.dtype, device=x0.device)
    H[:, 0, 1:] = H[:, 1:, 0] = 1
    y = torch.zeros(bsz, m + 1, 1, dtype=x0.dtype, device=x0.device)
    y[:, 0] = 1
    res = []
    for k in range(2, max_iter):
        n = min(k, m)
        G = F[:, :n] - X[:, :n]
        H[:, 1 : n + 1, 1 : n + 1] = (
            torch.bmm(G, G.transpose(1, 2))
            + lam * torch.eye(n, dtype=x0.dtype, device=x0.device)[None]
        )
        alpha = torch.linalg.solve(H[:, : n + 1, : n + 1], y[:, : n + 1])[:, 1 : n + 1, 0]
        X[:, k % m] = (
            beta * (alpha[:, None] @ F[:, :n])[:, 0]
            + (1 - beta) * (alpha[:, None] @ X[:, :n])[:, 0]
        )
        F[:, k % m] = f(X[:, k % m].view_as(x0)).reshape(bsz, -1)
        res.append((F[:, k % m] - X[:, k % m]).norm().item() / (1e-5 + F[:, k % m].norm().item()))
        if res[-1] < tol:
            break
    return X[:, k % m].view_as(x0), res


def anderson_lstsq(f, x0, m=4, max_iter=40, tol=1e-5):
    """Type-II Anderson written with linalg.lstsq on the differences of residuals."""
    xs, fs = [x0], [f(x0)]
    res = []
    for _ in range(max_iter):
        n = min(len(xs), m)
        if n < 2:
            x_new = fs[-1]
        else:
            Gk = torch.stack([fs[-i] - xs[-i] for i in range(1, n + 1)], dim=-1)  # (b, d, n)
            dG = Gk[..., :-1] - Gk[..., 1:]
            dF = torch.stack([fs[-i] for i in range(1, n + 1)], dim=-1)
            dF = dF[..., :-1] - dF[..., 1:]
            gamma = torch.linalg.lstsq(dG, Gk[..., :1]).solution  # (b, n-1, 1)
            x_new = fs[-1] - (dF @ gamma)[..., 0]
        xs.append(x_new)
        fs.append(f(x_new))
        res.append((fs[-1] - xs[-1]).norm().item() / fs[-1].norm().item())
        if res[-1] < tol:
            break
    return xs[-1], res


f_tanh = lambda zz, xx: torch.tanh(layer.linear(zz) + xx)  # noqa: E731
with torch.no_grad():
    za, res = anderson(lambda zz: f_tanh(zz, x), torch.zeros_like(x))
    zl, res_l = anderson_lstsq(lambda zz: f_tanh(zz, x), torch.zeros_like(x))
print("anderson: steps", len(res), "first", " ".join(f"{r:.3g}" for r in res[:4]))
print("anderson vs iteration", f"{(za - z).abs().max().item() < 1e-4}", za.shape, za.dtype)
print("lstsq anderson: steps", len(res_l), f"{(zl - z).abs().max().item() < 1e-4}")


# -- 4. the implicit function theorem in a custom Function -------------------------------
def fixed_point(f, z0, tol=1e-10, max_iter=500):
    z = z0
    for i in range(max_iter):
        z_next = f(z)
        if (z_next - z).norm() < tol:
            return z_next, i + 1
        z = z_next
    return z, max_iter


class DEQFunction(autograd.Function):
    """z* = tanh(W z* + U x + b); backward solves (I - J^T) g = grad by VJP iteration."""

    @staticmethod
    def forward(ctx, x, W, U, b):
        with torch.no_grad():
            z, iters = fixed_point(lambda zz: torch.tanh(zz @ W.T + x @ U.T + b),
                                   torch.zeros(x.shape[0], W.shape[0], dtype=x.dtype))
        ctx.save_for_backward(z, x, W, U, b)
        ctx.iters = iters
        return z

    @staticmethod
    def backward(ctx, grad):
        z, x, W, U, b = ctx.saved_tensors
        with torch.enable_grad():
            z0 = z.detach().requires_grad_()
            params = [t.detach().requires_grad_() for t in (x, W, U, b)]
            f0 = torch.tanh(z0 @ params[1].T + params[0] @ params[2].T + params[3])
            g = grad
            ctx.backward_iters = 0
            while ctx.backward_iters < 500:
                ctx.backward_iters += 1
                g_next = autograd.grad(f0, z0, grad_outputs=g, retain_graph=True)[0] + grad
                done = (g_next - g).norm() < 1e-12
                g = g_next
                if done:
                    break
            grads = autograd.grad(f0, params, grad_outputs=g)
        return grads


dt = torch.float64
W = (0.5 * torch.randn(5, 5, dtype=dt) / math.sqrt(5)).requires_grad_()
U = torch.randn(5, 3, dtype=dt).requires_grad_()
b = torch.randn(5, dtype=dt).requires_grad_()
xin = torch.randn(2, 3, dtype=dt, requires_grad=True)
zs = DEQFunction.apply(xin, W, U, b)
print("DEQFunction", type(zs.grad_fn).__name__, zs.shape, zs.dtype, zs.requires_grad)
loss = (zs**2).sum()
loss.backward()
print("backward iterations", zs.grad_fn.backward_iters, "forward", zs.grad_fn.iters)
implicit = [t.grad.clone() for t in (xin, W, U, b)]
for t in (xin, W, U, b):
    t.grad = None

# the same gradient by differentiating 200 unrolled iterations
zu = torch.zeros(2, 5, dtype=dt)
for _ in range(200):
    zu = torch.tanh(zu @ W.T + xin @ U.T + b)
(zu**2).sum().backward()
for name, t, g in zip("xWUb", (xin, W, U, b), implicit):
    print(f"d{name}: implicit == unrolled {torch.allclose(g, t.grad, rtol=0, atol=1e-9)}",
          f"norm {g.norm().item():.6f}")
print("gradcheck DEQFunction", autograd.gradcheck(DEQFunction.apply, (xin, W, U, b)))


# -- 5. the tutorial's DEQFixedPoint: a backward hook on the output -------------------------
class DEQFixedPoint(nn.Module):
    def __init__(self, f, solver, **kwargs):
        super().__init__()
        self.f = f
        self.solver = solver
        self.kwargs = kwargs
        self.hook_calls = 0

    def forward(self, x):
        with torch.no_grad():
            z, self.forward_res = self.solver(lambda z: self.f(z, x), torch.zeros_like(x),
                                              **self.kwargs)
        z = self.f(z, x)
        z0 = z.clone().detach().requires_grad_()
        f0 = self.f(z0, x)

        def backward_hook(grad):
            if self.hook is not None:
                self.hook.remove()
            self.hook_calls += 1
            g, self.backward_res = self.solver(
                lambda y: autograd.grad(f0, z0, y, retain_graph=True)[0] + grad, grad,
                **self.kwargs)
            return g

        self.hook = z.register_hook(backward_hook)
        return z


class TanhCell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        with torch.no_grad():
            self.lin.weight.mul_(0.5)

    def forward(self, z, x):
        return torch.tanh(self.lin(z) + x)


cell = TanhCell(6).double()
deq = DEQFixedPoint(cell, anderson, tol=1e-10, max_iter=60)
xd = torch.randn(3, 6, dtype=dt, requires_grad=True)
out = deq(xd)
out.pow(2).sum().backward()
print("hook solver: forward steps", len(deq.forward_res), "backward steps", len(deq.backward_res),
      "hook calls", deq.hook_calls)
gx_hook = xd.grad.clone()
gw_hook = cell.lin.weight.grad.clone()
xd.grad = None
cell.zero_grad()
zu = torch.zeros_like(xd)
for _ in range(200):
    zu = cell(zu, xd)
zu.pow(2).sum().backward()
print("hook vs unrolled: dx", torch.allclose(gx_hook, xd.grad, rtol=0, atol=1e-8),
      "dW", torch.allclose(gw_hook, cell.lin.weight.grad, rtol=0, atol=1e-8))
print("grad norms", f"{gx_hook.norm().item():.6f}", f"{gw_hook.norm().item():.6f}")
xg = torch.randn(2, 6, dtype=dt, requires_grad=True)
print("gradcheck DEQFixedPoint",
      autograd.gradcheck(deq, xg, eps=1e-6, atol=1e-5, check_undefined_grad=False))


# -- 6. Jacobian spectral norms by power iteration -----------------------------------------
def cell_fn(zz):
    return cell(zz, xd.detach())


z_star = out.detach()
v = torch.randn_like(z_star)
v = v / v.norm()
for _ in range(30):
    _, Jv = torch.func.jvp(cell_fn, (z_star,), (v,))
    _, vjp_fn = torch.func.vjp(cell_fn, z_star)
    (JtJv,) = vjp_fn(Jv)
    sigma2 = JtJv.norm()
    v = JtJv / sigma2
print("torch.func power iteration: sigma", f"{sigma2.sqrt().item():.6f}")

for vec in (False, True):
    u = torch.ones_like(z_star) / math.sqrt(z_star.numel())
    for _ in range(30):
        _, Ju = AF.jvp(cell_fn, z_star, u)
        _, JtJu = AF.vjp(cell_fn, z_star, Ju)
        s2 = JtJu.norm()
        u = JtJu / s2
    Jfull = AF.jacobian(cell_fn, z_star, vectorize=vec).reshape(z_star.numel(), -1)
    print(f"vectorize={vec}: power {s2.sqrt().item():.6f}",
          f"svd {torch.linalg.matrix_norm(Jfull, ord=2).item():.6f}", Jfull.shape)
H = AF.hessian(lambda zz: cell_fn(zz).pow(2).sum(), z_star[0], vectorize=False)
Hv = AF.hessian(lambda zz: cell_fn(zz).pow(2).sum(), z_star[0], vectorize=True)
print("hessian", H.shape, torch.allclose(H, Hv),
      f"trace {torch.trace(H).item():.6f}", "symmetric", torch.allclose(H, H.T))
jac_out = AF.jacobian(lambda a, bb: (a * bb, a.sum() + bb), (torch.ones(3), torch.arange(3.0)))
print("tuple jacobian", [[tuple(j.shape) for j in row] for row in jac_out], jac_out[0][1])


# -- 7. Neumann series and conjugate gradients for (I - J^T) g = v -----------------------
J = AF.jacobian(lambda zz: cell(zz, xd[0].detach()), z_star[0])
rhs = torch.randn(6, dtype=dt)
exact = torch.linalg.solve(torch.eye(6, dtype=dt) - J.T, rhs)
g, term = rhs.clone(), rhs.clone()
for k in range(1, 61):
    term = J.T @ term
    g = g + term
    if k in (5, 20, 60):
        err = (g - exact).norm().item()
        print(f"neumann {k:2d} terms: error {err:.3e}" if err > 1e-12 else
              f"neumann {k:2d} terms: converged")


def conjugate_gradient(matvec, bvec, tol=1e-12, max_iter=50):
    xk = torch.zeros_like(bvec)
    r = bvec - matvec(xk)
    p = r.clone()
    rs = r @ r
    for k in range(max_iter):
        Ap = matvec(p)
        a = rs / (p @ Ap)
        xk = xk + a * p
        r = r - a * Ap
        rs_new = r @ r
        if rs_new.sqrt() < tol:
            return xk, k + 1
        p = r + (rs_new / rs) * p
        rs = rs_new
    return xk, max_iter


A = torch.eye(6, dtype=dt) - J.T
# normal equations: A^T A g = A^T v is symmetric positive definite
cg_sol, cg_iters = conjugate_gradient(lambda q: A.T @ (A @ q), A.T @ rhs)
print("cg iterations", cg_iters, "close", torch.allclose(cg_sol, exact, atol=1e-12))
print("exact", fmt(exact))


# -- 8. an optimization layer: a box-constrained QP, differentiated by unrolling -----------
def qp_layer(Q, p, lo, hi, steps=300):
    """argmin_z 0.5 z^T Q z + p^T z  s.t. lo <= z <= hi, by projected gradient."""
    step = 1.0 / torch.linalg.eigvalsh(Q).max()
    zq = torch.zeros_like(p)
    for _ in range(steps):
        zq = torch.clamp(zq - step * (Q @ zq + p), lo, hi)
    return zq


Lq = torch.randn(4, 4, dtype=dt)
Q = Lq @ Lq.T + torch.eye(4, dtype=dt)
pq = torch.randn(4, dtype=dt, requires_grad=True)
zq = qp_layer(Q, pq, -0.3, 0.3)
active = (zq.abs() > 0.3 - 1e-9)
print("qp solution", fmt(zq), "active", active.tolist())
zq.sum().backward()
print("qp dz/dp (sum)", fmt(pq.grad))
kkt = torch.clamp(zq - (Q @ zq + pq), -0.3, 0.3) - zq
print("qp fixed point", kkt.abs().max().item() < 1e-12, zq.grad_fn.name())


# -- 9. Jacobian regularisation with create_graph ------------------------------------------
torch.manual_seed(1)
reg_cell = TanhCell(6)
opt = torch.optim.Adam(reg_cell.parameters(), lr=0.05)
xr = torch.randn(8, 6)
for step in range(4):
    zr = torch.zeros(8, 6)
    with torch.no_grad():
        for _ in range(30):
            zr = reg_cell(zr, xr)
    zr = zr.requires_grad_()
    fz = reg_cell(zr, xr)
    eps = torch.randn_like(fz)
    (vJ,) = autograd.grad(fz, zr, grad_outputs=eps, create_graph=True)
    jac_loss = vJ.pow(2).sum() / eps.shape[0]
    task = (fz - 0.5).pow(2).mean()
    total = task + 0.1 * jac_loss
    opt.zero_grad()
    total.backward()
    opt.step()
    print(f"step {step}: task {task.item():.5f} jac {jac_loss.item():.5f}",
          vJ.requires_grad, vJ.grad_fn is not None)


# -- 10. forward mode, needs_input_grad, mark_dirty, node hooks ----------------------------
class TanhFP(autograd.Function):
    """The scalar-weight fixed point z = tanh(w z + x), with backward and jvp by the IFT."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, w):
        z = torch.zeros_like(x)
        for _ in range(200):
            z = torch.tanh(w * z + x)
        return z

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w = inputs
        ctx.save_for_backward(output, w)
        ctx.save_for_forward(output, w)

    @staticmethod
    def backward(ctx, g):
        z, w = ctx.saved_tensors
        s = 1 - z * z
        common = g * s / (1 - w * s)
        gx = common if ctx.needs_input_grad[0] else None
        gw = (common * z).sum() if ctx.needs_input_grad[1] else None
        return gx, gw

    @staticmethod
    def jvp(ctx, x_t, w_t):
        z, w = ctx.saved_tensors
        s = 1 - z * z
        tangent = torch.zeros_like(z)
        if x_t is not None:
            tangent = tangent + x_t
        if w_t is not None:
            tangent = tangent + w_t * z
        return s * tangent / (1 - w * s)


xf = torch.linspace(-1, 1, 5, dtype=dt)
wf = torch.tensor(0.4, dtype=dt)
zf = TanhFP.apply(xf.requires_grad_(), wf)
print("needs_input_grad path:", type(zf.grad_fn).__name__, zf.grad_fn.next_functions[1])
(gxf,) = autograd.grad(zf.sum(), xf)
print("dz/dx", fmt(gxf))
with fwAD.dual_level():
    dual = fwAD.make_dual(xf.detach(), torch.ones(5, dtype=dt))
    zd = TanhFP.apply(dual, wf)
    primal, tangent = fwAD.unpack_dual(zd)
print("forward-mode tangent", fmt(tangent), torch.allclose(tangent, gxf))
jf = torch.func.jacfwd(TanhFP.apply, argnums=(0, 1))(xf.detach(), wf)
jr = torch.func.jacrev(TanhFP.apply, argnums=(0, 1))(xf.detach(), wf)
print("jacfwd vs jacrev", [tuple(j.shape) for j in jf], torch.allclose(jf[0], jr[0]),
      torch.allclose(jf[1], jr[1]), fmt(jf[1]))
wr = wf.clone().requires_grad_()
print("gradcheck TanhFP fwd+bwd",
      autograd.gradcheck(TanhFP.apply, (xf.detach().requires_grad_(), wr), check_forward_ad=True))


class ClampInPlace(autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.mark_dirty(x)
        ctx.save_for_backward(x.abs() < bound)
        return x.clamp_(-bound, bound)

    @staticmethod
    def backward(ctx, g):
        (inside,) = ctx.saved_tensors
        return g * inside, None


base = torch.tensor([-2.0, -0.5, 0.5, 3.0], requires_grad=True)
y = base * 1.0
ver = y._version
y2 = ClampInPlace.apply(y, 1.0)
print("mark_dirty:", y2 is y, y._version > ver, type(y.grad_fn).__name__, y2)
(y2 * torch.arange(1.0, 5.0)).sum().backward()
print("grad through in-place clamp", base.grad)
try:
    ClampInPlace.apply(torch.ones(2, requires_grad=True), 1.0)
except RuntimeError as e:
    print("RuntimeError:", e)

order = []
zn2 = torch.tanh(torch.randn(3, requires_grad=True) * 2)
zn2.retain_grad()
zn2.grad_fn.register_prehook(lambda gout: order.append(("pre", len(gout))))
zn2.grad_fn.register_hook(lambda gin, gout: order.append(("post", len(gin), len(gout))))
zn2.register_hook(lambda g: order.append("tensor") or g * 2)
zn2.sum().backward()
print("hook order", order, zn2.grad)
try:
    torch.ones(2).register_hook(lambda g: g)
except RuntimeError as e:
    print("RuntimeError:", e)
wrong = torch.ones(3, requires_grad=True) * 2
wrong.register_hook(lambda g: g[:2])
try:
    wrong.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)


# -- 11. Jacobian-free backprop: a stop-gradient Function in front of one cell step --------
class StopGradient(autograd.Function):
    """Identity whose backward passes no gradient on (None): the fixed point is a constant."""

    @staticmethod
    def forward(ctx, z):
        return z.clone()

    @staticmethod
    def backward(ctx, g):
        return None


for t in (xin, W, U, b):
    t.grad = None
z_star2 = DEQFunction.apply(xin, W, U, b)
seen = []
z_star2.register_hook(lambda g: seen.append(None if g is None else tuple(g.shape)))
z_jfb = torch.tanh(StopGradient.apply(z_star2) @ W.T + xin @ U.T + b)
(z_jfb**2).sum().backward()
print("JFB: hook saw", seen, "DEQ backward iterations", z_star2.grad_fn.backward_iters)
print("JFB dW", f"{W.grad.norm().item():.6f}", "implicit dW", f"{implicit[1].norm().item():.6f}")
cos = (W.grad * implicit[1]).sum() / (W.grad.norm() * implicit[1].norm())
print(f"JFB vs implicit cosine {cos.item():.4f}")
(gx_only,) = autograd.grad(StopGradient.apply(xin * 2).sum(), xin, allow_unused=True)
print("stop-gradient only:", gx_only)


class ForgetsGradOutput(autograd.Function):
    """A squared norm whose backward forgets to multiply by grad_output."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x


x64 = torch.randn(3, dtype=dt, requires_grad=True)
try:
    autograd.gradcheck(ForgetsGradOutput.apply, (x64,))
except RuntimeError as e:
    print(type(e).__name__, e)
print("gradcheck with undefined grads", autograd.gradcheck(lambda t: TanhFP.apply(t, wf),
                                                           (x64,)))


class AssumesGrad(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        return g * 2  # fails when g is None


try:
    autograd.gradcheck(AssumesGrad.apply, (x64,), atol=1e9)
except TypeError as e:
    print("TypeError:", e)

# unrolled iterates stored in a preallocated buffer: each write changes the views saved
# for backward (the fix is to keep the iterates in a list and torch.stack them)
x_b = torch.tensor([0.5, -0.3, 0.8], requires_grad=True)
Zb = torch.zeros(4, 3)
for k in range(1, 4):
    Zb[k] = Zb[k - 1] - 0.5 * (Zb[k - 1] ** 3 + Zb[k - 1] - x_b)
try:
    Zb[-1].sum().backward()
except RuntimeError as e:
    print("buffer of iterates:", str(e).split(". Hint")[0])
zs_list = [torch.zeros(3)]
for _ in range(3):
    zs_list.append(zs_list[-1] - 0.5 * (zs_list[-1] ** 3 + zs_list[-1] - x_b))
torch.stack(zs_list)[-1].sum().backward()
print("list of iterates:", fmt(x_b.grad))
