"""Scientific machine learning as MLX users write it.

A neural ODE (an MLP vector field as a plain tree of parameters) fitted to a damped
oscillator's trajectory through an RK4 integrator written in `mx` ops, its step checkpointed,
trained eagerly and under `mx.compile(inputs=state, outputs=state)`; the learned field's
Jacobian by `jvp` columns, `vjp` rows and a vmapped vjp, and Hessian-vector products
(forward-over-reverse and reverse-over-reverse). A physics-informed network for the heat
equation whose residual takes `grad` of `grad` per collocation point under `vmap`, with
residual weights held by `stop_gradient`. Gaussian-process regression whose marginal
likelihood is optimised by `mlx.optimizers.Adam`: the linear algebra runs on the CPU stream
and has no derivatives in MLX, so the gradient is the classic 0.5 (K^-1 - a a^T) pushed
through the kernel by `vjp`. FFT spectral derivatives and a spectral Poisson solve, the
precision a half-precision integrator keeps, and the mistakes users make. The same file runs
on MLX and, via `python -m ember.run scientific_ml.py`, on ember.
"""

import math
from functools import partial

from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.optimizers as optim

cpu = mx.cpu


def fmt(v, digits=4):
    """Nested lists of numbers with `digits` decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e, digits) for e in v) + "]"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def show(name, x, digits=4):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist(), digits)}")


# -- neural ODE -------------------------------------------------------------------------------

A_TRUE = mx.array([[-0.1, 2.0], [-2.0, -0.1]])


def rk4_step(f, y, dt):
    """One classical Runge-Kutta step of dy/dt = f(y)."""
    k1 = f(y)
    k2 = f(y + 0.5 * dt * k1)
    k3 = f(y + 0.5 * dt * k2)
    k4 = f(y + dt * k3)
    return y + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint(f, y0, dt, steps):
    """The trajectory y0, y1, ..., y_steps stacked on axis 0."""
    ys = [y0]
    for _ in range(steps):
        ys.append(rk4_step(f, ys[-1], dt))
    return mx.stack(ys)


def init_mlp(sizes, key):
    """A tanh MLP as a nested dict: {"layers": [{"w", "b"}, ...]}, Glorot-uniform weights."""
    keys = mx.random.split(key, len(sizes) - 1)
    layers = []
    for k, (fan_in, fan_out) in zip(keys, zip(sizes[:-1], sizes[1:])):
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        w = mx.random.uniform(-bound, bound, (fan_in, fan_out), key=k)
        layers.append({"w": w, "b": mx.zeros((fan_out,))})
    return {"layers": layers}


def mlp(params, x):
    *hidden, last = params["layers"]
    for layer in hidden:
        x = mx.tanh(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def neural_ode():
    print("== neural ODE: RK4 in mx ops")
    dt, steps = 0.1, 20
    y0 = mx.array([[2.0, 0.0], [0.0, 1.5], [-1.0, -1.0]])  # 3 initial states, batched
    true = odeint(lambda y: y @ A_TRUE.T, y0, dt, steps)
    print("trajectory:", true.shape, true.dtype)
    show("true y(2)", true[-1])
    decays = mx.linalg.norm(true[-1], axis=-1) < mx.linalg.norm(y0, axis=-1)
    print("energy decays:", decays.tolist())

    params0 = init_mlp([2, 16, 2], mx.random.key(7))
    print("param shapes:", [(k, v.shape) for k, v in tree_flatten(params0)])
    print("param count:", sum(v.size for _, v in tree_flatten(params0)))

    def loss_fn(params):
        step = mx.checkpoint(lambda p, y: rk4_step(lambda z: mlp(p, z), y, dt))
        ys = [y0]
        for _ in range(steps):
            ys.append(step(params, ys[-1]))
        return mx.mean((mx.stack(ys) - true) ** 2)

    loss_and_grad = mx.value_and_grad(loss_fn)
    loss, grads = loss_and_grad(params0)
    show("initial loss", loss)
    gnorm = mx.sqrt(sum((g * g).sum() for _, g in tree_flatten(grads)))
    show("grad norm", gnorm)

    def train(compiled):
        params = tree_unflatten(tree_flatten(tree_map(lambda p: p, params0)))
        opt = optim.Adam(learning_rate=2e-2)
        opt.init(params)
        state = [params, opt.state]

        def step():
            loss, grads = loss_and_grad(params)
            grads = tree_map(lambda g: mx.clip(g, -1.0, 1.0), grads)
            params.update(opt.apply_gradients(grads, params))
            return loss

        if compiled:
            step = partial(mx.compile, inputs=state, outputs=state)(step)
        losses = []
        for _ in range(30):
            loss = step()
            mx.eval(state)
            losses.append(loss.item())
        return params, losses

    params, losses = train(compiled=False)
    print("eager losses:", fmt(losses[::6]), fmt(losses[-1]))
    cparams, closses = train(compiled=True)
    print("compiled losses:", fmt(closses[::6]), fmt(closses[-1]))
    same = all(abs(a - b) <= 1e-4 * max(abs(a), 1e-3) for a, b in zip(losses, closses))
    print("compiled == eager:", same)
    pred = odeint(lambda y: mlp(params, y), y0, dt, steps)
    show("fitted y(2)", pred[-1])
    show("max error", mx.abs(pred - true).max())
    return params


def jacobians(params):
    print("== Jacobians and Hessian-vector products")
    f = lambda y: mlp(params, y)
    y = mx.array([0.5, -0.25])
    eye = mx.eye(2)
    cols = [mx.jvp(f, [y], [eye[i]])[1][0] for i in range(2)]
    j_fwd = mx.stack(cols, axis=1)
    rows = [mx.vjp(f, [y], [eye[i]])[1][0] for i in range(2)]
    j_rev = mx.stack(rows)
    j_vmap = mx.vmap(lambda ct: mx.vjp(f, [y], [ct])[1][0])(eye)
    show("J by jvp", j_fwd), show("J by vjp", j_rev)
    print("jvp == vjp == vmap(vjp):", mx.allclose(j_fwd, j_rev, atol=1e-5).item(),
          mx.allclose(j_rev, j_vmap, atol=1e-5).item())
    show("true A", A_TRUE)
    show("|J - A| max", mx.abs(j_fwd - A_TRUE).max())
    per_point = mx.vmap(lambda z: mx.vmap(lambda ct: mx.vjp(f, [z], [ct])[1][0])(eye))
    print("batched Jacobians:", per_point(mx.array([[0.5, -0.25], [1.0, 1.0], [0.0, 0.0]])).shape)

    energy = lambda z: 0.5 * (f(z) ** 2).sum()
    v = mx.array([1.0, -2.0])
    hv_fwd = mx.jvp(mx.grad(energy), [y], [v])[1][0]
    hv_rev = mx.vjp(mx.grad(energy), [y], [v])[1][0]
    hess = mx.vmap(lambda e: mx.jvp(mx.grad(energy), [y], [e])[1][0])(eye)
    hv_grad_vjp = mx.grad(lambda z: (mx.vjp(energy, [z], [mx.array(1.0)])[1][0] * v).sum())(y)
    show("Hv fwd-over-rev", hv_fwd), show("Hv rev-over-rev", hv_rev)
    show("Hv grad of vjp", hv_grad_vjp)
    ck_energy = mx.checkpoint(energy)
    show("Hv through checkpoint", mx.grad(lambda z: (mx.grad(ck_energy)(z) * v).sum())(y))
    show("Hessian", hess)
    print("symmetric:", mx.allclose(hess, hess.T, atol=1e-5).item())
    w = mx.linalg.eigvalsh(hess, stream=cpu)
    show("Hessian eigenvalues", w)
    print("convex here:", (w > 0).all().item())


# -- physics-informed network ----------------------------------------------------------------

KAPPA = 0.1


def pinn():
    print("== PINN: u_t = 0.1 u_xx, u(0, x) = sin(pi x), u(t, 0) = u(t, 1) = 0")
    params = init_mlp([2, 16, 16, 1], mx.random.key(11))

    def u(p, t, x):
        # the ansatz keeps the initial and boundary conditions exactly
        net = mlp(p, mx.stack([t, x]))[0]
        return mx.sin(math.pi * x) + t * x * (1.0 - x) * net

    u_t = mx.grad(u, argnums=1)
    u_xx = mx.grad(mx.grad(u, argnums=2), argnums=2)

    def residual(p, t, x):
        return u_t(p, t, x) - KAPPA * u_xx(p, t, x)

    batched = mx.vmap(residual, in_axes=(None, 0, 0))
    key_t, key_x = mx.random.split(mx.random.key(3))
    ts = mx.random.uniform(shape=(64,), key=key_t)
    xs = mx.random.uniform(shape=(64,), key=key_x)
    r0 = batched(params, ts, xs)
    print("collocation:", ts.shape, "residuals:", r0.shape, r0.dtype)
    show("initial |r| mean", mx.abs(r0).mean())

    def loss_fn(p):
        r = batched(p, ts, xs)
        w = mx.stop_gradient(1.0 + mx.abs(r) / (mx.abs(r).mean() + 1e-6))
        return (w * r**2).mean()

    opt = optim.Adam(learning_rate=1e-2)
    step_fn = mx.value_and_grad(loss_fn)
    for it in range(40):
        loss, grads = step_fn(params)
        params = opt.apply_gradients(grads, params)
        mx.eval(params)
        if it % 10 == 0 or it == 39:
            print(f"step {it:2d} weighted loss {loss.item():.5f}")
    grid_t, grid_x = mx.meshgrid(mx.linspace(0, 1, 6), mx.linspace(0, 1, 9), indexing="ij")
    pred = mx.vmap(u, in_axes=(None, 0, 0))(params, grid_t.flatten(), grid_x.flatten())
    exact = mx.exp(-KAPPA * math.pi**2 * grid_t.flatten()) * mx.sin(math.pi * grid_x.flatten())
    show("u(1, x) predicted", pred.reshape(6, 9)[-1, ::2])
    show("u(1, x) exact", exact.reshape(6, 9)[-1, ::2])
    show("relative L2 error", mx.linalg.norm(pred - exact) / mx.linalg.norm(exact))
    show("final |r| mean", mx.abs(batched(params, ts, xs)).mean())


# -- Gaussian process --------------------------------------------------------------------------


def rbf(theta, a, b):
    sq = (a[:, None] - b[None, :]) ** 2
    return mx.exp(2 * theta["log_sf"]) * mx.exp(-0.5 * sq / mx.exp(2 * theta["log_ell"]))


def gaussian_process():
    print("== Gaussian-process regression")
    kx, kn = mx.random.split(mx.random.key(5))
    n = 24
    x = mx.sort(mx.random.uniform(-3.0, 3.0, (n,), key=kx))
    y = mx.sin(x) + 0.1 * mx.random.normal((n,), key=kn)
    theta = {"log_ell": mx.array(0.5), "log_sf": mx.array(0.0), "log_sn": mx.array(-1.0)}

    def gram(th):
        return rbf(th, x, x) + mx.exp(2 * th["log_sn"]) * mx.eye(n)

    def nll_and_grad(th):
        K = gram(th)
        L = mx.linalg.cholesky(K, stream=cpu)
        alpha = mx.linalg.solve_triangular(
            L.T, mx.linalg.solve_triangular(L, y, upper=False, stream=cpu), upper=True, stream=cpu)
        nll = 0.5 * (y * alpha).sum() + mx.log(mx.diag(L)).sum() + 0.5 * n * math.log(2 * math.pi)
        dK = 0.5 * (mx.linalg.inv(K, stream=cpu) - mx.outer(alpha, alpha))
        names = sorted(th)  # vjp takes a flat list of arrays, not a tree
        _, cts = mx.vjp(lambda *v: gram(dict(zip(names, v))), [th[k] for k in names], [dK])
        return nll, dict(zip(names, cts))

    nll, g = nll_and_grad(theta)
    show("initial nll", nll)
    print("grad:", {k: f"{v.item():.4f}" for k, v in sorted(g.items())})
    eps = 1e-2
    bumped = dict(theta, log_ell=theta["log_ell"] + eps)
    lowered = dict(theta, log_ell=theta["log_ell"] - eps)
    fd = (nll_and_grad(bumped)[0] - nll_and_grad(lowered)[0]) / (2 * eps)
    print("finite difference agrees:", abs(fd.item() - g["log_ell"].item()) < 2e-2)

    opt = optim.Adam(learning_rate=5e-2)
    for it in range(60):
        nll, g = nll_and_grad(theta)
        theta = opt.apply_gradients(g, theta)
        mx.eval(theta)
        if it % 15 == 0 or it == 59:
            print(f"step {it:2d} nll {nll.item():.4f}")
    print("exp(hyperparameters):", {k: f"{mx.exp(v).item():.4f}" for k, v in sorted(theta.items())})

    K = gram(theta)
    L = mx.linalg.cholesky(K, stream=cpu)
    print("L L^T == K:", mx.allclose(L @ L.T, K, atol=1e-4).item())
    xt = mx.linspace(-2.5, 2.5, 6)
    Ks = rbf(theta, xt, x)
    mean = Ks @ mx.linalg.solve(K, y, stream=cpu)
    v = mx.linalg.solve_triangular(L, Ks.T, upper=False, stream=cpu)
    var = mx.exp(2 * theta["log_sf"]) - (v * v).sum(axis=0)
    show("posterior mean", mean), show("sin(x*)", mx.sin(xt))
    show("posterior std", mx.sqrt(var))
    show("rmse", mx.sqrt(mx.mean((mean - mx.sin(xt)) ** 2)))

    evals, evecs = mx.linalg.eigh(K, stream=cpu)
    print("eigh:", evals.shape, evecs.shape, "all positive:", (evals > 0).all().item())
    show("condition number", evals.max() / evals.min(), 2)
    recon = (evecs * evals) @ evecs.T
    print("V diag(w) V^T == K:", mx.allclose(recon, K, atol=1e-4).item())
    inv = mx.linalg.inv(K, stream=cpu)
    show("|K K^-1 - I| max < 1e-3", mx.abs(K @ inv - mx.eye(n)).max() < 1e-3)

    print("== least squares by QR and norms")
    feats = mx.stack([mx.ones_like(x), x, x**3 / 6.0], axis=1)
    q, r = mx.linalg.qr(feats, stream=cpu)
    print("qr:", q.shape, r.shape)
    coef = mx.linalg.solve_triangular(r, q.T @ y, upper=True, stream=cpu)
    show("coefficients", coef)
    res = feats @ coef - y
    for ord_ in (1, 2, math.inf, -math.inf, 0.5):
        show(f"residual norm ord={ord_}", mx.linalg.norm(res, ord=ord_))
    for ord_ in ("fro", 1, -1, math.inf):
        show(f"R norm ord={ord_}", mx.linalg.norm(r, ord=ord_))
    show("R norm ord=2", mx.linalg.norm(r, ord=2, stream=cpu))
    show("R norm ord=-2", mx.linalg.norm(r, ord=-2, stream=cpu))
    show("R norm nuc", mx.linalg.norm(r, ord="nuc", stream=cpu))
    show("column norms", mx.linalg.norm(feats, axis=0))


# -- spectral derivatives ----------------------------------------------------------------------


def spectral():
    print("== FFT spectral derivatives")
    n = 64
    x = mx.arange(n) * (2 * math.pi / n)
    u = mx.sin(3 * x) + 0.5 * mx.cos(5 * x)
    k = mx.arange(n // 2 + 1).astype(mx.float32)
    u_hat = mx.fft.rfft(u)
    print("rfft:", u_hat.shape, u_hat.dtype)
    du = mx.fft.irfft(1j * k * u_hat, n=n)
    d2u = mx.fft.irfft(-(k**2) * u_hat, n=n)
    print("irfft:", du.shape, du.dtype)
    show("du max error", mx.abs(du - (3 * mx.cos(3 * x) - 2.5 * mx.sin(5 * x))).max() < 1e-4)
    show("d2u max error", mx.abs(d2u - (-9 * mx.sin(3 * x) - 12.5 * mx.cos(5 * x))).max() < 1e-3)
    show("|u_hat| peaks", mx.argsort(-mx.abs(u_hat))[:2])
    show("energy (Parseval)", (mx.abs(u_hat[1:-1]) ** 2).sum() * 2 / n**2, 5)

    m = 32
    g = mx.arange(m) * (2 * math.pi / m)
    X, Y = mx.meshgrid(g, g, indexing="ij")
    f = mx.sin(X) * mx.cos(2 * Y)
    kk = mx.concatenate([mx.arange(m // 2), mx.arange(-m // 2, 0)]).astype(mx.float32)
    KX, KY = mx.meshgrid(kk, kk, indexing="ij")
    k2 = KX**2 + KY**2
    f_hat = mx.fft.fftn(f)
    print("fftn:", f_hat.shape, f_hat.dtype)
    lap = mx.real(mx.fft.ifftn(-k2 * f_hat))
    show("laplacian max error", mx.abs(lap + 5 * f).max() < 1e-4)
    # Poisson: lap(phi) = f, zero-mean phi; k = 0 is set aside
    safe = mx.where(k2 == 0, mx.array(1.0), k2)
    phi = mx.real(mx.fft.ifftn(mx.where(k2 == 0, mx.array(0.0), -f_hat / safe)))
    show("poisson solution error", mx.abs(phi + f / 5).max() < 1e-5)
    show("phi[1, :4]", phi[1, :4])
    half = mx.fft.rfft(u.astype(mx.float16))
    print("rfft of float16:", half.dtype, "spectrum peak bin:", mx.argmax(mx.abs(half)).item())


# -- precision ---------------------------------------------------------------------------------


def precision():
    print("== precision: the same RK4 in float32 / float16 / bfloat16")
    y0 = mx.array([2.0, 0.0])
    ref = odeint(lambda y: y @ A_TRUE.T, y0, 0.1, 20)[-1]
    for dt in (mx.float16, mx.bfloat16):
        At = A_TRUE.astype(dt).T
        yl = odeint(lambda y, At=At: y @ At, y0.astype(dt), 0.1, 20)[-1]
        err = mx.abs(yl.astype(mx.float32) - ref).max()
        print(f"{dt}: y(2) {fmt(yl.astype(mx.float32).tolist())} dtype {yl.dtype} "
              f"error below 5e-2: {(err < 5e-2).item()}")
    mixed = mx.array([1.0, 2.0], dtype=mx.float16) * mx.array(3.0)
    print("float16 * float32 scalar array:", mixed.dtype)
    print("float16 * python float:", (mx.array([1.0], dtype=mx.float16) * 3.0).dtype)
    mixed = mx.ones(2, dtype=mx.bfloat16) + mx.ones(2, dtype=mx.float16)
    print("bfloat16 + float16:", mixed.dtype)
    show("float16 eps", mx.array(finfo_eps(mx.float16)), 6)
    big = mx.array([70000.0]).astype(mx.float16)
    print("70000 as float16:", big.tolist(),
          "as bfloat16:", mx.array([70000.0]).astype(mx.bfloat16).tolist())
    s = mx.full((4096,), 0.1, dtype=mx.float16).sum()
    print("sum of 4096 x 0.1 in float16:", s.dtype, f"{s.item():.2f}")
    show("upcast first", mx.full((4096,), 0.1, dtype=mx.float16).astype(mx.float32).sum(), 2)
    # sample statistics of 257 noisy readings: bfloat16 counts 257 as 256
    readings = 1.0 + 0.1 * mx.random.normal((257,), key=mx.random.key(9))
    for dt in (mx.float32, mx.float16, mx.bfloat16):
        r = readings.astype(dt)
        print(f"{dt} mean {r.mean().item():.4f} var {r.var().item():.6f} "
              f"var ddof=1 {r.var(ddof=1).item():.6f} std ddof=1 {mx.std(r, ddof=1).item():.5f}")


def finfo_eps(dtype):
    return mx.finfo(dtype).eps


# -- mistakes ----------------------------------------------------------------------------------


def mistakes():
    print("== typical mistakes")
    A = mx.array([[4.0, 1.0], [1.0, 3.0]])

    def attempt(what, fn):
        try:
            out = fn()
            mx.eval(out)
            print(f"{what}: ok {fmt(out.tolist())}")
        except Exception as e:
            print(f"{what}: {type(e).__name__}: {e}")

    attempt("solve with a wrong right-hand side",
            lambda: mx.linalg.solve(A, mx.ones(3), stream=cpu))
    attempt("solve one matrix against a stack of right-hand sides",
            lambda: mx.linalg.solve(A, mx.ones((4, 2, 1)), stream=cpu))
    attempt("solve a stack of matrices against one vector",
            lambda: mx.linalg.solve(mx.stack([A, 2 * A]), mx.ones(2), stream=cpu))
    attempt("solve_triangular broadcasts instead",
            lambda: mx.array(mx.linalg.solve_triangular(A, mx.ones((4, 2, 1)), stream=cpu).shape))
    attempt("eigvalsh with UPLO='u' (only 'L' means lower)",
            lambda: mx.linalg.eigvalsh(mx.array([[4.0, 1.0], [2.0, 3.0]]), UPLO="u", stream=cpu))
    attempt("solve with a batch of wrong columns",
            lambda: mx.linalg.solve(A, mx.ones((3, 2)), stream=cpu))
    attempt("solve with a non-square matrix",
            lambda: mx.linalg.solve(mx.ones((2, 3)), mx.ones(2), stream=cpu))
    attempt("cholesky of a non-symmetric matrix (reads the lower triangle)",
            lambda: mx.linalg.cholesky(mx.array([[4.0, 2.0], [-1.0, 3.0]]), stream=cpu))
    attempt("cholesky upper=True of it (reads the upper triangle)",
            lambda: mx.linalg.cholesky(mx.array([[4.0, 2.0], [-1.0, 3.0]]), upper=True, stream=cpu))
    attempt("cholesky in float16",
            lambda: mx.linalg.cholesky(A.astype(mx.float16), stream=cpu))
    attempt("inv of a singular matrix",
            lambda: mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]), stream=cpu))
    attempt("eigh of a 1-d array", lambda: mx.linalg.eigh(mx.ones(3), stream=cpu)[0])
    attempt("qr of a 1-d array", lambda: mx.linalg.qr(mx.ones(3), stream=cpu)[0])
    attempt("grad of a non-scalar output", lambda: mx.grad(lambda a: a * 2)(A))
    attempt("grad of a tuple output", lambda: mx.grad(lambda a: (a.sum(), a))(A))
    attempt("value_and_grad of a non-scalar",
            lambda: mx.value_and_grad(lambda a: a.sum(0))(A)[1])
    attempt("jvp with a wrong tangent shape",
            lambda: mx.jvp(lambda a: a * 2, [A], [mx.ones(3)])[1][0])
    attempt("vjp with a wrong cotangent shape",
            lambda: mx.vjp(lambda a: a * 2, [A], [mx.ones(3)])[1][0])
    attempt("vjp pairing a returned-twice array with two cotangents (first one counts)",
            lambda: (lambda y: mx.vjp(lambda a: [y(a), y(a)], [A], [A, 2 * A])[1][0])(
                lambda a: a))
    spectral_dx = lambda u: mx.fft.irfft(1j * mx.arange(5) * mx.fft.rfft(u), n=8)
    wave = mx.sin(mx.arange(8) * (2 * math.pi / 8))
    attempt("compiled spectral derivative", lambda: mx.compile(spectral_dx)(wave))
    attempt("shapeless compile of an FFT",
            lambda: mx.compile(spectral_dx, shapeless=True)(wave))
    attempt("shapeless compile of a Cholesky solve",
            lambda: mx.compile(lambda a: mx.linalg.cholesky(a, stream=cpu),
                               shapeless=True)(A))
    attempt("shapeless compile of a noisy residual",
            lambda: mx.compile(lambda a: a + 0.1 * mx.random.normal(a.shape),
                               shapeless=True)(A))
    attempt("vmap over mismatched collocation sets",
            lambda: mx.vmap(lambda t, x: t * x)(mx.ones(3), mx.ones(4)))
    attempt("vmap in_axes longer than the arguments",
            lambda: mx.vmap(lambda t: t * 2, in_axes=(0, 0))(mx.ones(3)))
    attempt("norm 'fro' of a vector", lambda: mx.linalg.norm(mx.ones(3), ord="fro"))
    attempt("norm ord=3 of a matrix", lambda: mx.linalg.norm(A, ord=3))
    attempt("irfft with a too-short n", lambda: mx.fft.irfft(mx.fft.rfft(mx.arange(8.0)), n=0))
    attempt("fftn over repeated axes", lambda: mx.fft.fftn(mx.ones((4, 4)), axes=[0, 0]))
    attempt("Adam on a tree missing a key",
            lambda: optim.Adam(learning_rate=0.1).apply_gradients(
                {"w": mx.ones(2)}, {"w": mx.ones(2), "b": mx.ones(1)})["w"])


def main():
    mx.random.seed(0)
    params = neural_ode()
    jacobians(params)
    pinn()
    gaussian_process()
    spectral()
    precision()
    mistakes()


if __name__ == "__main__":
    main()
