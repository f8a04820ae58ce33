"""Function transforms and linear algebra as MLX users write them.

Gradients with `argnums` over dict and list trees, value-and-grad with auxiliary outputs,
`nn.value_and_grad` on a module, `vjp` / `jvp` and a Hessian-vector product (jvp of grad),
`vmap` with per-argument `in_axes` and `out_axes`, nested, and as per-example gradients,
`custom_function` with hand-written vjp / jvp / vmap rules (a straight-through estimator
and a stable log1pexp), `stop_gradient` and `checkpoint`, and the tree utilities on the
resulting gradient trees. Then `mx.linalg` (norms, factorisations, solves, eigen-
decompositions, on the CPU stream as MLX requires) in a least-squares fit and a few
Newton steps, and the mistakes users make. The same file runs on MLX and, via
`python -m ember.run transforms_linalg.py`, on ember.
"""

import math

from mlx.utils import tree_flatten, tree_map, tree_reduce, tree_unflatten

import mlx.core as mx
import mlx.nn as nn

cpu = mx.cpu


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


def transforms():
    print("== grad and value_and_grad")
    f = lambda x, y, z: (mx.sin(x) * y**2 + z * x).sum()
    x, y, z = mx.array([0.5, 1.0]), mx.array([2.0, -1.0]), mx.array(3.0)
    show("df/dy", mx.grad(f, argnums=1)(x, y, z))
    for name, g in zip(("df/dx", "df/dz"), mx.grad(f, argnums=(0, 2))(x, y, z)):
        show(name, g)

    params = {"w": mx.array([[1.0, -2.0], [0.5, 3.0]]), "b": [mx.array([0.1, 0.2]), mx.array(1.5)]}
    data = mx.array([[1.0, 2.0], [3.0, -1.0], [0.0, 0.5]])

    def model_loss(p, xs):
        h = mx.tanh(xs @ p["w"] + p["b"][0]) * p["b"][1]
        loss = mx.mean(h**2)
        return loss, h.max(), h.argmax(axis=1)

    (loss, hmax, arg), grads = mx.value_and_grad(model_loss)(params, data)
    for name, a in (("loss", loss), ("aux max", hmax), ("aux argmax", arg)):
        show(name, a)
    for key, g in tree_flatten(grads):
        show(f"grad {key}", g)
    sq = tree_map(lambda g: (g * g).sum(), grads)
    show("grad norm", mx.sqrt(tree_reduce(lambda acc, v: acc + v, sq, mx.array(0.0))))
    back = tree_unflatten(tree_flatten(grads))
    print("unflattened:", sorted(back), type(back["b"]).__name__, len(back["b"]))
    (l2, ), (gw, gd) = mx.value_and_grad(lambda p, d: (model_loss(p, d)[0],), argnums=[0, 1])(
        params, data)
    show("loss again", l2), show("grad data", gd)

    print("== nn.value_and_grad on a module")
    mx.random.seed(4)
    net = nn.Sequential(nn.Linear(2, 3), nn.GELU(), nn.Linear(3, 1))
    net.layers[0].freeze(keys=["bias"])
    targets = mx.array([[0.5], [-1.0], [2.0]])
    mse = lambda m, xs, ys: nn.losses.mse_loss(m(xs), ys)
    loss, g = nn.value_and_grad(net, mse)(net, data, targets)
    show("module loss", loss)
    print("grad keys:", [k for k, _ in tree_flatten(g)])
    show("grad layers.2.weight", g["layers"][2]["weight"])

    print("== vjp, jvp, Hessian-vector product")
    g2 = lambda a, b: (a * b, mx.exp(a) - b)
    outs, cts = mx.vjp(g2, [x, y], [mx.ones(2), mx.array([1.0, -1.0])])
    for name, a in (("vjp out[1]", outs[1]), ("vjp ct a", cts[0]), ("vjp ct b", cts[1])):
        show(name, a)
    outs, tans = mx.jvp(g2, [x, y], [mx.array([1.0, 0.0]), mx.array([0.0, 2.0])])
    show("jvp tangents", mx.stack(tans))
    rosen = lambda v: ((1 - v[:-1]) ** 2 + 10 * (v[1:] - v[:-1] ** 2) ** 2).sum()
    v0 = mx.array([0.5, -0.3, 1.2])
    show("Hv", mx.jvp(mx.grad(rosen), [v0], [mx.array([1.0, 0.0, -1.0])])[1][0])
    show("Hessian", hessian(rosen, v0))

    print("== vmap")
    a3 = mx.arange(12.0).reshape(3, 4)
    b4 = mx.arange(8.0).reshape(4, 2)
    show("in_axes=(1, None)", mx.vmap(lambda c, w: c * w.sum(), in_axes=(1, None))(a3, b4))
    show("out_axes=1", mx.vmap(lambda r: mx.stack([r.sum(), r.max()]), out_axes=1)(a3))
    outer = mx.vmap(mx.vmap(lambda p, q: p * q, in_axes=(None, 0)), in_axes=(0, None))
    show("nested outer", outer(mx.array([1.0, 2.0]), mx.array([3.0, 4.0, 5.0])))
    show("matvec", mx.vmap(lambda r, v: r @ v, in_axes=(0, None))(a3, mx.ones(4)))
    w = mx.array([0.5, -1.0])
    per_ex = lambda wt, xe, ye: (xe @ wt - ye) ** 2
    pegs = mx.vmap(mx.grad(per_ex), in_axes=(None, 0, 0))(w, data, targets[:, 0])
    show("per-example grads", pegs), show("mean of them", pegs.mean(axis=0))
    show("batch grad", mx.grad(lambda wt: per_ex(wt, data, targets[:, 0]).mean())(w))
    pair = mx.vmap(lambda t: (t.sum(), t * 2), in_axes=1, out_axes=(0, 1))(a3)
    print("tuple out shapes:", [tuple(p.shape) for p in pair])

    print("== custom_function, stop_gradient, checkpoint")

    @mx.custom_function
    def ste_round(t):
        return mx.round(t)

    @ste_round.vjp
    def ste_round_vjp(primal, cotangent, output):  # one argument: arrays, not tuples
        return cotangent

    @mx.custom_function
    def log1pexp(t):
        return mx.logaddexp(t, mx.zeros_like(t))

    @log1pexp.vjp
    def log1pexp_vjp(primal, cotangent, output):
        return cotangent * mx.sigmoid(primal)

    @log1pexp.jvp
    def log1pexp_jvp(primal, tangent):
        return (tangent * mx.sigmoid(primal),)

    @log1pexp.vmap
    def log1pexp_vmap(inputs, axes):
        return log1pexp(inputs), axes

    @mx.custom_function
    def scaled_softplus(u, beta):
        return log1pexp(beta * u) / beta

    @scaled_softplus.vjp
    def scaled_softplus_vjp(primals, cotangent, output):
        u, beta = primals
        sig = mx.sigmoid(beta * u)
        return cotangent * sig, (cotangent * (u * sig - output) / beta).sum()

    t = mx.array([-100.0, -1.5, 0.0, 2.3, 100.0])
    show("ste grad", mx.grad(lambda u: (ste_round(u) * u).sum())(t))
    show("log1pexp", log1pexp(t))
    show("log1pexp grad", mx.grad(lambda u: log1pexp(u).sum())(t))
    show("log1pexp jvp", mx.jvp(log1pexp, [t], [mx.ones(5)])[1][0])
    show("log1pexp vmap", mx.vmap(log1pexp, in_axes=1)(mx.stack([t, -t])))
    sp = mx.grad(lambda u, b: scaled_softplus(u, b).sum(), argnums=(0, 1))
    gu, gb = sp(t[1:4], mx.array(2.0))
    show("softplus grad u", gu), show("softplus grad beta", gb)
    show("stop_gradient", mx.grad(lambda u: (mx.stop_gradient(u**2) * u).sum())(t[1:4]))
    ck = mx.checkpoint(lambda u, s: mx.tanh(u * s).sum())
    show("checkpoint grad", mx.grad(ck, argnums=1)(t[1:4], mx.array(0.7)))


def hessian(fn, at):
    """The Hessian of `fn` at `at`, one Hessian-vector product per basis vector."""
    return mx.vmap(lambda e: mx.jvp(mx.grad(fn), [at], [e])[1][0])(mx.eye(at.size))


def linalg():
    print("== linalg")
    A = mx.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])
    M = mx.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0], [2.0, 1.0, 1.0], [0.0, -2.0, 1.0]])
    vec = mx.array([3.0, -4.0, 12.0])
    show("norm", mx.linalg.norm(vec))
    show("norm inf", mx.linalg.norm(vec, ord=math.inf))
    show("norm -inf", mx.linalg.norm(vec, ord=-math.inf))
    show("norm 1 axis", mx.linalg.norm(M, ord=1, axis=1))
    show("norm fro", mx.linalg.norm(M, ord="fro"))
    show("norm 2", mx.linalg.norm(A, ord=2, stream=cpu))
    show("norm nuc", mx.linalg.norm(M, ord="nuc", stream=cpu))
    show("norm inf matrix", mx.linalg.norm(M, ord=math.inf, keepdims=True))
    q, r = mx.linalg.qr(M, stream=cpu)
    print("qr shapes:", q.shape, r.shape)
    show("|r diag|", mx.abs(mx.diag(r)))
    print("q orthonormal:", mx.allclose(q.T @ q, mx.eye(3), atol=1e-5).item())
    show("singular values", mx.linalg.svd(M, compute_uv=False, stream=cpu))
    u, s2, vt = mx.linalg.svd(M, stream=cpu)
    print("svd shapes:", u.shape, s2.shape, vt.shape)
    show("reconstruct", (u[:, :3] * s2) @ vt)
    show("inv", mx.linalg.inv(A, stream=cpu))
    L = mx.linalg.cholesky(A, stream=cpu)
    U = mx.linalg.cholesky(A, upper=True, stream=cpu)
    show("cholesky L", L), show("U == L^T", mx.abs(U - L.T).max())
    show("tri_inv", mx.linalg.tri_inv(L, upper=False, stream=cpu))
    show("cholesky_inv", mx.linalg.cholesky_inv(L, stream=cpu))
    sol = mx.linalg.solve(A, rhs := mx.array([1.0, 2.0, 3.0]), stream=cpu)
    show("solve", sol)
    show("residual", mx.linalg.norm(A @ sol - rhs) < 1e-5)
    show("solve_triangular", mx.linalg.solve_triangular(U, rhs, upper=True, stream=cpu))
    evals, evecs = mx.linalg.eigh(A, stream=cpu)
    show("eigh values", evals), show("eigvalsh UPLO=U", mx.linalg.eigvalsh(A, UPLO="U", stream=cpu))
    show("V diag(w) V^T", (evecs * evals) @ evecs.T)
    show("cross", mx.linalg.cross(vec, mx.array([1.0, 0.0, -1.0])))
    show("cross batched", mx.linalg.cross(M[:2], M[2:], axis=-1))
    p, lo, up = mx.linalg.lu(A, stream=cpu)
    show("lu pivots", p), show("L @ U", lo @ up)
    lu, piv = mx.linalg.lu_factor(M[:3], stream=cpu)
    print("lu_factor:", lu.shape, lu.dtype, piv.dtype, piv.tolist())
    show("pinv", pinv := mx.linalg.pinv(M, stream=cpu))
    print("pinv M = I:", mx.allclose(pinv @ M, mx.eye(3), atol=1e-5).item())

    print("== least squares and Newton")
    xs = mx.linspace(-1.0, 1.0, 7)
    X = mx.stack([mx.ones_like(xs), xs, xs**2], axis=1)
    ys = 0.5 - 2.0 * xs + 1.5 * xs**2 + 0.1 * mx.sin(9 * xs)
    show("normal equations", mx.linalg.solve(X.T @ X, X.T @ ys, stream=cpu))
    show("via pinv", mx.linalg.pinv(X, stream=cpu) @ ys)
    q2, r2 = mx.linalg.qr(X, stream=cpu)
    show("via qr", mx.linalg.solve_triangular(r2, q2.T @ ys, upper=True, stream=cpu))
    energy = lambda v: mx.sum(mx.exp(v) - v * mx.array([1.0, 2.0, 3.0])) + 0.5 * (v**2).sum()
    v = mx.zeros(3)
    for step in range(4):
        gr = mx.grad(energy)(v)
        v = v - mx.linalg.solve(hessian(energy, v), gr, stream=cpu)
        print(f"newton {step}: |g| {mx.linalg.norm(gr).item():.6f}")
    show("newton x", v)


def mistakes():
    print("== mistakes")
    A = mx.array([[2.0, 1.0], [1.0, 3.0]])
    cases = [
        lambda: mx.grad(lambda u: u * 2)(mx.ones(3)),
        lambda: mx.grad(lambda u, s: (u * s).sum(), argnums=2)(mx.ones(2), mx.ones(2)),
        lambda: mx.vmap(lambda u, s: u + s, in_axes=(0, 0, 0))(mx.ones(2), mx.ones(2)),
        lambda: mx.vmap(lambda u: u.sum(), in_axes=2)(mx.ones((2, 3))),
        lambda: mx.jvp(lambda u: u * u, [mx.ones(3)], [mx.ones(2)]),
        lambda: mx.linalg.inv(mx.array([[1, 2], [3, 4]]), stream=cpu),
        lambda: mx.linalg.cholesky(mx.ones((2, 3)), stream=cpu),
        lambda: mx.linalg.inv(A),
        lambda: mx.linalg.norm(A, ord="nuc", axis=0),
        lambda: mx.linalg.cross(mx.ones(2), mx.ones(2)),
        lambda: mx.linalg.svd(mx.ones(3), stream=cpu),
        lambda: mx.vjp(lambda u: u * 2, [mx.ones(2)], [mx.ones(2), mx.ones(2)]),
        lambda: mx.value_and_grad(lambda u: u.sum(keepdims=True))(mx.ones(2)),
        lambda: mx.grad(lambda u, s: (u * s).sum(), argnums=(1, 0, 1)),
        lambda: mx.vmap(lambda u, s: u * s, in_axes=(0, 1))(mx.ones(2), mx.ones((2, 3))),
        lambda: mx.vmap(lambda p: p["w"], in_axes=({"v": 0},))({"w": mx.ones(2)}),
    ]
    for case in cases:
        try:
            print("no error", case())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    transforms()
    linalg()
    mistakes()
