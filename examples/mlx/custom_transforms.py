"""Custom functions and function transforms beyond `grad`, as MLX users write them.

`mx.custom_function` with hand-written vjp / jvp / vmap rules (a straight-through
quantiser, a clipped-gradient identity, a stable log-sum-exp), `vmap` with `in_axes` /
`out_axes` as None, ints, tuples and nested trees, per-example gradients by `vmap(grad)`,
`vjp` / `jvp` with several primals, `value_and_grad` over nested parameter trees,
`stop_gradient`, `checkpoint`, `compile` (shapeless, and closing over a module with its
state in `inputs=` / `outputs=`), `disable_compile`, the tree utilities, `nn.value_and_grad`
on a partly frozen model, `eval` / `async_eval` of nested trees and the memory helpers, then
the mistakes users make. The same file runs on MLX and, via
`python -m ember.run custom_transforms.py`, on ember.
"""

from functools import partial

from mlx.utils import tree_flatten, tree_map, tree_reduce, tree_unflatten

import mlx.core as mx
import mlx.nn as nn


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


@mx.custom_function
def quantise(x, step):
    """Round to a grid; the gradient passes straight through to x and not to step."""
    return mx.round(x / step) * step


@quantise.vjp
def quantise_vjp(primals, cotangent, output):
    x, step = primals
    return cotangent, mx.zeros_like(step)


@mx.custom_function
def clip_grad(x):
    """The identity whose backward clips the cotangent to [-1, 1]."""
    return x


@clip_grad.vjp
def clip_grad_vjp(primal, cotangent, output):  # one argument: arrays, not tuples
    return (mx.clip(cotangent, -1.0, 1.0),)


@mx.custom_function
def lse(x):
    """log(sum(exp(x))) along the last axis, shifted by the maximum."""
    m = mx.stop_gradient(x.max(axis=-1, keepdims=True))
    return (m + mx.log(mx.exp(x - m).sum(axis=-1, keepdims=True))).squeeze(-1)


@lse.vjp
def lse_vjp(primals, cotangent, output):
    return mx.expand_dims(cotangent, -1) * mx.exp(primals - mx.expand_dims(output, -1))


@lse.jvp
def lse_jvp(primal, tangent):
    return ((mx.softmax(primal, axis=-1) * tangent).sum(axis=-1),)


@lse.vmap
def lse_vmap(inputs, axes):  # one argument: the array and its axis
    return [lse(mx.moveaxis(inputs, axes, 0))], [0]  # (any containers: `lse` gives one)


def custom():
    print("== custom_function")
    x = mx.array([0.12, -0.37, 0.94, 1.51])
    show("quantise", quantise(x, mx.array(0.25)))
    gx, gs = mx.grad(lambda a, s: (quantise(a, s) ** 2).sum(), argnums=(0, 1))(x, mx.array(0.25))
    show("ste grad x", gx), show("ste grad step", gs)
    show("clipped grad", mx.grad(lambda a: (5.0 * clip_grad(a) * a).sum())(x))
    big = mx.array([[1000.0, 1001.0, 999.0], [-2.0, 0.5, 3.0]])
    show("lse", lse(big))
    show("lse grad", mx.grad(lambda a: (lse(a) * mx.array([1.0, 2.0])).sum())(big))
    out, tan = mx.jvp(lse, [big], [mx.ones_like(big) * mx.array([1.0, 0.0, -1.0])])
    show("lse jvp", tan[0])
    show("lse vmap axis 1", mx.vmap(lse, in_axes=1)(mx.stack([big, -big], axis=1)))
    show("lse vs logsumexp", mx.abs(lse(big) - mx.logsumexp(big, axis=-1)).max())


def vmaps():
    print("== vmap")
    a = mx.arange(24.0).reshape(2, 3, 4)
    show("in_axes=2", mx.vmap(lambda m: m.sum(axis=0))(a.transpose(2, 0, 1)))
    show("in_axes=-1 out_axes=-1", mx.vmap(lambda m: m * 2, in_axes=-1, out_axes=-1)(a[0]))
    f = lambda p, xs: p["w"] * xs[0] + p["b"] - xs[1]
    params = {"w": mx.array([1.0, 2.0, 3.0]), "b": mx.array(0.5)}
    xs = [mx.arange(6.0).reshape(2, 3), mx.array([[1.0], [2.0]])]
    show("nested in_axes", mx.vmap(f, in_axes=({"w": None, "b": None}, [0, 0]))(params, xs))
    show("tree prefix None", mx.vmap(f, in_axes=(None, 0))(params, xs))
    dual = mx.vmap(lambda u, v: {"s": u + v, "p": [u * v]}, in_axes=(0, 1),
                   out_axes={"s": 0, "p": [1]})
    r = dual(mx.arange(6.0).reshape(3, 2), mx.arange(6.0).reshape(2, 3))
    show("dict out s", r["s"]), show("dict out p", r["p"][0])
    mats = mx.arange(12.0).reshape(3, 2, 2)
    show("vmap vmap", mx.vmap(mx.vmap(lambda m, v: m @ v, in_axes=(None, 0)), in_axes=(0, None))(
        mats, mx.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])).reshape(-1))
    w = mx.array([0.3, -0.2])
    data = mx.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.25]])
    ys = mx.array([1.0, 0.0, 1.0])
    loss = lambda wt, xe, ye: nn.losses.binary_cross_entropy(xe @ wt, ye)
    per = mx.vmap(mx.value_and_grad(loss), in_axes=(None, 0, 0))(w, data, ys)
    show("per-example losses", per[0]), show("per-example grads", per[1])


def differentiate():
    print("== vjp, jvp, value_and_grad")
    f = lambda a, b, c: (a * b + c, mx.sin(a) * c.sum())
    a, b, c = mx.array([0.5, 1.0]), mx.array([2.0, -3.0]), mx.array([0.1, 0.2])
    outs, cts = mx.vjp(f, [a, b, c], [mx.array([1.0, 1.0]), mx.array([0.5, -0.5])])
    for i, ct in enumerate(cts):
        show(f"vjp ct {i}", ct)
    outs, tans = mx.jvp(f, [a, b, c], [mx.ones(2), mx.zeros(2), mx.array([1.0, -1.0])])
    show("jvp out 1", outs[1]), show("jvp tan 0", tans[0]), show("jvp tan 1", tans[1])
    tree = {"enc": [{"w": mx.array([[0.5, -1.0], [1.5, 0.2]])}, mx.array([0.1, 0.0])],
            "dec": {"w": mx.array([1.0, -2.0]), "scale": mx.array(0.5)}}

    def objective(p, x, y):
        h = mx.tanh(x @ p["enc"][0]["w"] + p["enc"][1])
        pred = (h * p["dec"]["w"]).sum(axis=-1) * mx.stop_gradient(p["dec"]["scale"])
        return mx.mean((pred - y) ** 2)

    x, y = mx.array([[1.0, 2.0], [-1.0, 0.5]]), mx.array([0.3, -0.7])
    val, (gp, gxs) = mx.value_and_grad(objective, argnums=(0, 1))(tree, x, y)
    show("objective", val), show("grad x", gxs)
    for key, g in tree_flatten(gp):
        show(f"grad {key}", g)
    print("grad tree:", tree_map(lambda g: g.shape, gp))
    total = tree_reduce(lambda acc, g: acc + (g * g).sum(), gp, 0.0)
    show("grad sq norm", total)
    flat = tree_flatten(tree_map(lambda p, g: p - 0.1 * g, tree, gp))
    new = tree_unflatten(flat)
    print("unflatten:", type(new["enc"]).__name__, sorted(new["dec"]), [k for k, _ in flat])
    block = mx.checkpoint(lambda u, v: mx.exp(mx.sin(u) * v).sum())
    gu, gv = mx.grad(block, argnums=[0, 1])(a, b)
    show("checkpoint gu", gu), show("checkpoint gv", gv)


def compiling():
    print("== compile")
    calls = []

    def gelu_like(t):
        calls.append(t.shape)
        return t * mx.sigmoid(1.702 * t)

    cg = mx.compile(gelu_like, shapeless=True)
    for shape in [(3,), (2, 3), (5,)]:
        show(f"shapeless {shape}", cg(mx.linspace(-1, 1, 6)[: shape[-1]] * mx.ones(shape)).sum())
    print("traces (shapeless):", len(calls))
    calls.clear()
    cs = mx.compile(gelu_like)
    for n in (3, 4, 3):
        cs(mx.ones(n))
    print("traces (shaped):", len(calls))

    mx.random.seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model.layers[0].freeze(keys=["bias"])
    print("trainable:", [k for k, _ in tree_flatten(model.trainable_parameters())])
    xs = mx.random.normal((6, 3))
    ys = xs.sum(axis=1, keepdims=True)
    lossf = lambda m, u, v: nn.losses.mse_loss(m(u), v)
    grad_fn = nn.value_and_grad(model, lossf)

    @partial(mx.compile, inputs=model.state, outputs=model.state)
    def step(u, v):
        loss, grads = grad_fn(model, u, v)
        model.update(tree_map(lambda p, g: p - 0.05 * g, model.trainable_parameters(), grads))
        return loss

    for i in range(4):
        loss = step(xs, ys)
        mx.eval(model.parameters())
        print(f"step {i}: loss {loss.item():.4f}")
    show("frozen bias", model.layers[0].bias)
    mx.disable_compile()
    calls.clear()
    cd = mx.compile(gelu_like)
    cd(mx.ones(2)), cd(mx.ones(2))
    print("traces with compile disabled:", len(calls))
    mx.enable_compile()

    tree = {"a": mx.ones((2, 2)) * 3, "b": [mx.arange(3), (mx.array(1.5), "label")], "c": None}
    print("eval returns:", mx.eval(tree), mx.eval(tree["a"], [tree["b"][0]]))
    pending = tree_map(lambda t: t * 2, {"a": tree["a"], "b": tree["b"][0]})
    mx.async_eval(pending)
    show("async", pending["b"])
    for name in ("get_active_memory", "get_peak_memory", "get_cache_memory"):
        print(name, isinstance(getattr(mx, name)(), int))


def mistakes():
    print("== mistakes")

    @mx.custom_function
    def two_in(u, v):
        return u * v

    @two_in.vjp
    def two_in_vjp(primals, cotangent, output):  # one cotangent too many: MLX drops it
        return cotangent * primals[1], cotangent * primals[0], cotangent

    def branchy(t):
        if t.sum() > 0:
            return t
        return -t

    cases = [
        lambda: mx.vmap(lambda u: u * 2, in_axes=(0, 0))(mx.ones(3)),
        lambda: mx.vmap(lambda u, v: u + v)(mx.ones(3), mx.ones(4)),
        lambda: mx.grad(lambda u: mx.exp(u))(mx.ones(2)),
        lambda: mx.grad(lambda u, v: two_in(u, v).sum(), argnums=[0, 1])(
            mx.ones(2), mx.full(2, 3.0)),
        lambda: mx.compile(branchy)(mx.ones(2)),
        lambda: mx.value_and_grad(lambda u: u.sum(), argnums=(0, 3))(mx.ones(2)),
        lambda: mx.vmap(lambda u: u, out_axes=2)(mx.ones((2, 3))),
        lambda: mx.vjp(lambda u, v: u * v, [mx.ones(2)], [mx.ones(2)]),
        lambda: mx.vmap(lambda u: (mx.eval(u * 2), u)[1])(mx.ones((2, 2))),
        lambda: mx.vmap(lambda u: u.sum().item())(mx.ones((2, 2))),
        lambda: mx.grad(lambda u: (mx.async_eval(u), u.sum())[1])(mx.ones(2)),
        lambda: mx.vmap(lambda u: u, in_axes=None),
    ]
    for case in cases:
        try:
            print("no error", case())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    custom()
    vmaps()
    differentiate()
    compiling()
    mistakes()
