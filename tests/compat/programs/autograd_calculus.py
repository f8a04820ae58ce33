"""Higher-order autograd as a scientific-ML user does it: torch.autograd.functional
(jacobian / hessian / vjp / jvp / hvp / vhp), gradient penalties, a Hamiltonian neural
network integrated with leapfrog and RK4, Newton's method with the exact Hessian, the Hessian
spectrum of a tiny MLP, forward-mode AD, gradcheck / gradgradcheck, a custom Function with
setup_context, jvp and double backward, and the typical mistakes with their messages."""

import math

import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd.function import once_differentiable

torch.manual_seed(0)
AF = torch.autograd.functional


def show(name, t):
    """Print a tensor's shape and its values rounded to 5 significant digits."""
    vals = ", ".join(f"{v:.5g}" for v in t.detach().reshape(-1).tolist())
    print(f"{name}: shape={tuple(t.shape)} [{vals}]")


def err(name, fn):
    """Run fn and print the exception type and the first line of its message."""
    try:
        fn()
        print(f"{name}: no error")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:110]}")


# -- 1. torch.autograd.functional -------------------------------------------------------------
print("== functional ==")


def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def field(x):
    return torch.stack([x[0] * x[1], x[1].sin() + x[2] ** 2, x.exp().sum()])


x0 = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
J = AF.jacobian(field, x0)
show("jacobian", J)
Jv = AF.jacobian(field, x0, vectorize=True)
print("vectorize equal:", torch.allclose(J, Jv))
Jf = AF.jacobian(field, x0, vectorize=True, strategy="forward-mode")
print("forward-mode equal:", torch.allclose(J, Jf))
H = AF.hessian(rosen, x0)
show("hessian", H)
print("hessian symmetric:", torch.allclose(H, H.T))
Hv = AF.hessian(rosen, x0, vectorize=True, outer_jacobian_strategy="forward-mode")
print("hessian fwd-over-rev equal:", torch.allclose(H, Hv))
v = torch.tensor([1.0, 0.5, -0.25], dtype=torch.float64)
out, vjp_ = AF.vjp(field, x0, v)
show("vjp out", out)
show("vjp", vjp_)
print("vjp == v@J:", torch.allclose(vjp_, v @ J))
out, jvp_ = AF.jvp(field, x0, v)
show("jvp", jvp_)
print("jvp == J@v:", torch.allclose(jvp_, J @ v))
val, hvp_ = AF.hvp(rosen, x0, v)
print(f"hvp value: {val.item():.6g}")
show("hvp", hvp_)
val, vhp_ = AF.vhp(rosen, x0, v)
show("vhp", vhp_)
print("hvp == H@v:", torch.allclose(hvp_, H @ v))


def pair(a, b):
    return a * b.sum(), (a ** 2).sum() + b.prod()


a0 = torch.tensor([1.0, 2.0], dtype=torch.float64)
b0 = torch.tensor([3.0, -1.0, 0.5], dtype=torch.float64)
Jt = AF.jacobian(pair, (a0, b0))
print("tuple jacobian:", len(Jt), len(Jt[0]), [tuple(j.shape) for row in Jt for j in row])
show("dout0/db", Jt[0][1])
show("dout1/da", Jt[1][0])
Jfw = AF.jacobian(pair, (a0, b0), vectorize=True, strategy="forward-mode")
print("forward-mode tuple jacobian:", type(Jfw).__name__, type(Jfw[0]).__name__)
print(Jfw[0][1])
Ht = AF.hessian(lambda a, b: (a ** 2).sum() * b.sum(), (a0, b0))
print("tuple hessian shapes:", [tuple(h.shape) for row in Ht for h in row])
show("d2/da db", Ht[0][1])
xc = x0.clone().requires_grad_()
Jc = AF.jacobian(field, xc, create_graph=True)
print("create_graph jacobian grad_fn:", type(Jc.grad_fn).__name__ if Jc.grad_fn else None)
(g,) = torch.autograd.grad(Jc.trace(), xc)
show("grad of trace(J)", g)
_, hv_c = AF.hvp(rosen, xc, v, create_graph=True)
print("hvp create_graph requires_grad:", hv_c.requires_grad)

err("strict indep", lambda: AF.jacobian(lambda x: torch.ones(2), x0, strict=True))
err("strict vectorize", lambda: AF.jacobian(field, x0, strict=True, vectorize=True))
err("hessian non-scalar", lambda: AF.hessian(field, x0))
err("vjp wrong v", lambda: AF.vjp(field, x0, torch.ones(2, dtype=torch.float64)))
err("vjp missing v", lambda: AF.vjp(field, x0))
err("fwd without vectorize", lambda: AF.jacobian(field, x0, strategy="forward-mode"))
err("bad strategy", lambda: AF.jacobian(field, x0, strategy="sideways"))
err("hvp non-scalar", lambda: AF.hvp(field, x0, v))
err("not a tensor", lambda: AF.jacobian(lambda x: 3.0, x0))
err("fwd create_graph", lambda: AF.jacobian(field, x0, vectorize=True, strategy="forward-mode",
                                            create_graph=True))
err("fwd strict", lambda: AF.jacobian(field, x0, vectorize=True, strategy="forward-mode",
                                      strict=True))
err("hessian of linear strict", lambda: AF.hessian(lambda x: (3 * x).sum(), x0, strict=True))
err("hvp of linear strict", lambda: AF.hvp(lambda x: (3 * x).sum(), x0, v, strict=True))
err("vjp strict create_graph", lambda: AF.vjp(lambda x: x * 2, x0, v, strict=True,
                                              create_graph=True))
err("jvp strict unused input", lambda: AF.jvp(lambda a, b: a * 2, (a0, a0), (a0, a0),
                                              strict=True))
err("empty output", lambda: AF.jacobian(lambda x: x[:0], x0))
Jz = AF.jacobian(lambda x: torch.zeros(2, dtype=torch.float64), x0)
show("independent jacobian (strict=False)", Jz)

# -- 2. gradient penalty ----------------------------------------------------------------------
print("== gradient penalty ==")
critic = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
real, fake = torch.randn(8, 4), torch.randn(8, 4)
alpha = torch.rand(8, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
score = critic(interp)
(gi,) = torch.autograd.grad(score, interp, grad_outputs=torch.ones_like(score),
                            create_graph=True)
print("grad shape:", tuple(gi.shape), "grad_fn:", type(gi.grad_fn).__name__)
gp = ((gi.norm(2, dim=1) - 1) ** 2).mean()
print(f"gradient penalty: {gp.item():.5f}")
gp.backward()
print(f"critic w0 grad norm: {critic[0].weight.grad.norm().item():.5f}")
print(f"critic w2 grad norm: {critic[2].weight.grad.norm().item():.5f}")

# -- 3. Hamiltonian neural network --------------------------------------------------------------
print("== HNN ==")
torch.manual_seed(1)
hnet = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))


def true_field(z):
    # pendulum: H = p^2/2 + (1 - cos q); dq/dt = p, dp/dt = -sin q
    return torch.stack([z[:, 1], -torch.sin(z[:, 0])], dim=1)


def hnn_field(z, create_graph):
    z = z if z.requires_grad else z.detach().requires_grad_(True)
    H = hnet(z).sum()
    (dH,) = torch.autograd.grad(H, z, create_graph=create_graph)
    return torch.stack([dH[:, 1], -dH[:, 0]], dim=1)


zs = torch.rand(128, 2) * torch.tensor([4.0, 3.0]) - torch.tensor([2.0, 1.5])
targets = true_field(zs)
opt = torch.optim.Adam(hnet.parameters(), lr=1e-2)
for step in range(151):
    loss = ((hnn_field(zs, True) - targets) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step:3d} loss {loss.item():.5f}")


def energy(z):
    return float(0.5 * z[0, 1] ** 2 + (1 - torch.cos(z[0, 0])))


def leapfrog(z, dt, n, f):
    traj = [z]
    for _ in range(n):
        q, p = z[:, :1], z[:, 1:]
        p = p + 0.5 * dt * f(torch.cat([q, p], 1))[:, 1:]
        q = q + dt * f(torch.cat([q, p], 1))[:, :1]
        p = p + 0.5 * dt * f(torch.cat([q, p], 1))[:, 1:]
        z = torch.cat([q, p], 1).detach()
        traj.append(z)
    return traj


def rk4(z, dt, n, f):
    traj = [z]
    for _ in range(n):
        k1 = f(z)
        k2 = f(z + 0.5 * dt * k1)
        k3 = f(z + 0.5 * dt * k2)
        k4 = f(z + dt * k3)
        z = (z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)).detach()
        traj.append(z)
    return traj


z0 = torch.tensor([[1.0, 0.0]])
learned = lambda z: hnn_field(z, False)  # noqa: E731
for name, integ in (("leapfrog", leapfrog), ("rk4", rk4)):
    for fname, f in (("true", true_field), ("hnn", learned)):
        traj = integ(z0, 0.1, 60, f)
        e = [energy(z) for z in traj]
        print(f"{name:8s} {fname:4s} end q={traj[-1][0, 0].item():.4f} "
              f"p={traj[-1][0, 1].item():.4f} drift={e[-1] - e[0]:+.4f}")
Hl = torch.stack([hnet(z).squeeze() for z in leapfrog(z0, 0.1, 20, learned)])
print(f"learned H drift along its own flow: {(Hl.max() - Hl.min()).item():.4f}")

# -- 4. Newton's method -----------------------------------------------------------------------
print("== Newton ==")


def f_newton(x):
    return x[0] ** 4 + x[0] * x[1] + (1 + x[1]) ** 2 + torch.exp(0.1 * x[0])


x = torch.tensor([0.75, -1.25], dtype=torch.float64)
for it in range(6):
    g = AF.jacobian(f_newton, x)
    Hn = AF.hessian(f_newton, x)
    step = torch.linalg.solve(Hn, g)
    x = x - step
    print(f"iter {it} f={f_newton(x).item():.10f} |g|={g.norm().item():.3e} "
          f"x=[{x[0].item():.6f}, {x[1].item():.6f}]")
print("final hessian eigenvalues:", [f"{e:.5f}" for e in torch.linalg.eigvalsh(Hn).tolist()])

# -- 5. Hessian spectrum of a tiny MLP --------------------------------------------------------
print("== Hessian spectrum ==")
torch.manual_seed(2)
Xd = torch.randn(20, 2, dtype=torch.float64)
yd = (Xd[:, :1] * Xd[:, 1:]).tanh()
shapes = [(3, 2), (3,), (1, 3), (1,)]
sizes = [math.prod(s) for s in shapes]
theta = torch.randn(sum(sizes), dtype=torch.float64) * 0.5


def mlp_loss(th):
    w1, b1, w2, b2 = [p.reshape(s) for p, s in zip(th.split(sizes), shapes)]
    h = torch.tanh(Xd @ w1.T + b1)
    return ((h @ w2.T + b2 - yd) ** 2).mean()


Hm = AF.hessian(mlp_loss, theta)
ev = torch.linalg.eigvalsh(Hm)
print("params:", theta.numel(), "hessian:", tuple(Hm.shape))
print("top eigenvalues:", [f"{e:.5f}" for e in ev[-3:].tolist()])
print("bottom eigenvalue:", f"{ev[0].item():.5f}", "negative count:", int((ev < -1e-10).sum()))
# power iteration with Hessian-vector products agrees with the top eigenvalue
vec = torch.ones_like(theta) / theta.numel() ** 0.5
for _ in range(200):
    _, hv = AF.hvp(mlp_loss, theta, vec)
    lam = torch.dot(vec, hv)
    vec = hv / hv.norm()
print(f"power iteration top: {lam.item():.5f}")

# -- 6. forward-mode AD -----------------------------------------------------------------------
print("== forward_ad ==")
primal = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
tangent = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64)
with fwAD.dual_level():
    dual = fwAD.make_dual(primal, tangent)
    y = field(dual)
    up = fwAD.unpack_dual(y)
    show("primal", up.primal)
    show("tangent", up.tangent)
    p2, t2 = fwAD.unpack_dual(torch.sin(dual) * dual.exp())
    show("d/dt sin(x)e^x", t2)
    print("plain tensor tangent:", fwAD.unpack_dual(primal).tangent)
_, jv = AF.jvp(field, primal, tangent)
print("forward_ad == jvp:", torch.allclose(up.tangent, jv))
with fwAD.dual_level():
    lin = torch.nn.Linear(3, 2).double()
    d = fwAD.make_dual(primal, tangent)
    print("linear tangent shape:", tuple(fwAD.unpack_dual(lin(d)).tangent.shape))
    show("linear tangent == W@t", fwAD.unpack_dual(lin(d)).tangent - lin.weight @ tangent)
err("make_dual outside level", lambda: fwAD.make_dual(primal, tangent))
err("exit without level", lambda: fwAD.exit_dual_level())
with fwAD.dual_level() as level:
    print("level:", level)
    dual = fwAD.make_dual(primal, tangent)
    print(dual)
    print((dual * 2).sum())
    err("nested level", fwAD.enter_dual_level)
    err("dual of a dual", lambda: fwAD.make_dual(dual, tangent))
    err("integer tangent", lambda: fwAD.make_dual(primal, torch.ones(3, dtype=torch.long)))
    err("wrong level", lambda: fwAD.make_dual(primal, tangent, level=2))
print("after the level:", dual, fwAD.unpack_dual(dual).tangent)


def bad_tangent_shape():
    with fwAD.dual_level():
        fwAD.make_dual(primal, torch.ones(2, dtype=torch.float64))


err("tangent shape", bad_tangent_shape)

# -- 7. gradcheck / gradgradcheck -------------------------------------------------------------
print("== gradcheck ==")
xg = torch.randn(4, dtype=torch.float64, requires_grad=True)
wg = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(lambda a, b: torch.tanh(b @ a).sum() * a, (xg, wg)))
print("gradgradcheck:", torch.autograd.gradgradcheck(lambda a: (a.sin() * a ** 2), (xg,)))
print("fast_mode:", torch.autograd.gradcheck(lambda a: a.exp().cumsum(0), (xg,), fast_mode=True))
print("forward-mode:", torch.autograd.gradcheck(lambda a: a.sigmoid() * a, (xg,),
                                                check_forward_ad=True))
print("fwd-over-rev:", torch.autograd.gradgradcheck(lambda a: a.tanh() * a, (xg,),
                                                    check_fwd_over_rev=True))
print("complex output:", torch.autograd.gradcheck(lambda a: (1j * a).exp() * a, (xg,)))
err("constant output", lambda: torch.autograd.gradcheck(lambda a: a.detach() * 2, (xg,)))
err("fwd-over-rev only", lambda: torch.autograd.gradgradcheck(torch.sin, (xg,),
                                                             check_rev_over_rev=False))
xf = torch.randn(4, requires_grad=True)
err("float32 input", lambda: torch.autograd.gradcheck(lambda a: a.exp(), (xf,)))


class WrongSquare(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, go):
        (x,) = ctx.saved_tensors
        return go * 3 * x  # wrong: should be 2x


err("wrong backward", lambda: torch.autograd.gradcheck(WrongSquare.apply, (xg,)))


def first_lines(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        lines = str(e).splitlines()
        print(f"{type(e).__name__}: {lines[0]} ({len(lines)} lines)")
        print("  " + [ln for ln in lines if ln.startswith("The max")][0][:52])


first_lines(lambda: torch.autograd.gradcheck(WrongSquare.apply, (xg,), fast_mode=True))
first_lines(lambda: torch.autograd.gradcheck(lambda a: a.sin() * 1.0000001, (xg,), fast_mode=True,
                                             atol=1e-12, rtol=1e-12))
print("raise_exception=False:",
      torch.autograd.gradcheck(WrongSquare.apply, (xg,), raise_exception=False))

# -- 8. custom Function: setup_context, jvp, double backward ----------------------------------
print("== custom Function ==")


class Cube(torch.autograd.Function):
    """y = x^3 with backward written in torch ops, so it is twice differentiable."""

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, go):
        (x,) = ctx.saved_tensors
        return go * 3 * x ** 2

    @staticmethod
    def jvp(ctx, tx):
        (x,) = ctx.saved_tensors
        if fwAD.unpack_dual(x).tangent is not None:
            print("saved tensor carries a tangent")
        return 3 * x ** 2 * tx


class CubeOnce(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, go):
        (x,) = ctx.saved_tensors
        return go * 3 * x ** 2


xs = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
yc = Cube.apply(xs)
print("grad_fn:", type(yc.grad_fn).__name__)
(d1,) = torch.autograd.grad(yc.sum(), xs, create_graph=True)
show("d/dx x^3", d1)
print("d1 grad_fn:", type(d1.grad_fn).__name__)
(d2,) = torch.autograd.grad(d1.sum(), xs)
show("d2/dx2 x^3", d2)
with fwAD.dual_level():
    dx = fwAD.make_dual(xs.detach(), torch.ones(3, dtype=torch.float64))
    show("Cube jvp", fwAD.unpack_dual(Cube.apply(dx)).tangent)
print("gradgradcheck Cube:", torch.autograd.gradgradcheck(Cube.apply, (xs,)))
print("gradcheck fwd Cube:", torch.autograd.gradcheck(Cube.apply, (xs,), check_forward_ad=True,
                                                       check_backward_ad=False,
                                                       check_undefined_grad=False))
yo = CubeOnce.apply(xs)
(o1,) = torch.autograd.grad(yo.sum(), xs, create_graph=True)
show("once first", o1)
print("once grad_fn:", type(o1.grad_fn).__name__, "requires_grad:", o1.requires_grad)
err("once second", lambda: torch.autograd.grad(o1.sum(), xs))
(o2,) = torch.autograd.grad((CubeOnce.apply(xs) * xs).sum(), xs, create_graph=True)
print("through once:", type(o2.grad_fn).__name__,
      [type(f).__name__ for f, _ in o2.grad_fn.next_functions])
show("grad skips the once node", torch.autograd.grad(o2.sum(), xs, retain_graph=True)[0])
err("backward reaches it", lambda: o2.sum().backward())


def _no_jvp():
    with fwAD.dual_level():
        CubeOnce.apply(fwAD.make_dual(xs.detach(), torch.ones(3, dtype=torch.float64)))


err("jvp not defined", _no_jvp)

# -- 9. grad options ---------------------------------------------------------------------------
print("== grad options ==")
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0], requires_grad=True)
s = (a ** 2).sum()
ga, gb = torch.autograd.grad(s, [a, b], allow_unused=True, retain_graph=True)
print("allow_unused:", ga, gb)
ga, gb = torch.autograd.grad(s, [a, b], allow_unused=True, materialize_grads=True,
                             retain_graph=True)
print("materialize_grads:", ga, gb)
ga, gb = torch.autograd.grad(s, [a, b], materialize_grads=True, retain_graph=True)
print("materialize_grads implies allow_unused:", gb)
err("unused", lambda: torch.autograd.grad(s, [a, b], retain_graph=True))
err("allow_unused False + materialize",
    lambda: torch.autograd.grad(s, [a, b], allow_unused=False, materialize_grads=True))
ym = torch.stack([a[0] * a[1], a[1] * a[2], a.sum()])
eye = torch.eye(3)
(jrows,) = torch.autograd.grad(ym, a, eye, is_grads_batched=True, retain_graph=True)
print("is_grads_batched jacobian:\n", jrows)
(hb,) = torch.autograd.grad(torch.autograd.grad(s, a, create_graph=True)[0], a,
                            2 * eye, is_grads_batched=True)
print("batched hessian rows:\n", hb)
err("non-scalar grad", lambda: torch.autograd.grad(ym, a))
err("non-scalar backward", lambda: ym.backward())
loss = (a.exp() * a).sum()
loss.backward()
err("backward twice", lambda: loss.backward())
l2 = (a.sin() ** 2).sum()
torch.autograd.grad(l2, a)
err("grad twice", lambda: torch.autograd.grad(l2, a))
l3 = (a * b.sum()).sum()
l3.backward(retain_graph=True)
l3.backward()
print("retain_graph accumulates:", a.grad, b.grad)
err("grad of leaf without requires_grad",
    lambda: torch.autograd.grad(torch.ones(2).sum(), torch.ones(2)))
err("create_graph on no-grad output",
    lambda: torch.autograd.grad((a * 2).sum().detach(), a, create_graph=True))
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
hid = w.tanh()
hid.retain_grad()
(hid ** 3).sum().backward(create_graph=True)
print("retained grad:", hid.grad)
print("leaf grad:", w.grad)
(gg,) = torch.autograd.grad(w.grad.sum(), w)
print("grad of the grad:", gg)
print("done")
