"""Lazy evaluation, streams and memory, as MLX's docs teach them.

Building a graph and evaluating it with `mx.eval` (nested lists / tuples / dicts of arrays,
non-array leaves ignored), `mx.async_eval` then `mx.eval`, the calls that force evaluation
(`.item()`, `.tolist()`, `np.array`, `if arr`), in-place updates (`a[...] = v`, `+=`) on an
array that earlier lazy results captured, devices and streams (`default_device`,
`default_stream`, `new_stream`, `stream=` on ops, `with mx.stream(...)`, `synchronize`,
`Device` / `DeviceType` equality and printing, `set_default_device`), the memory functions
(only what is deterministic: types, setters' return values, exact byte counts of arrays of
known size), `mx.eval` inside `compile` / `grad` / `vmap`, `disable_compile` /
`enable_compile`, `checkpoint`, and a small regression trained the MLX way (parameters and
optimizer state evaluated each step). The same file runs on MLX and, via
`python -m ember.run lazy_streams.py`, on ember.
"""

import numpy as np
from mlx.utils import tree_map

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


def attempt(label, fn):
    """Run fn and print its result, or the exception MLX raises."""
    try:
        out = fn()
        print(f"{label}: ok {out!r}")
    except Exception as e:
        print(f"{label}: {type(e).__name__}: {e}")


def laziness():
    print("== lazy graphs and eval")
    mx.random.seed(3)
    a = mx.random.normal((3, 4))
    b = mx.exp(a) / mx.exp(a).sum(axis=1, keepdims=True)
    c = b.sum(axis=1)
    print("eval returns:", mx.eval(c))
    show("rows sum to one", mx.round(c, 4))

    # nested trees: lists, tuples, dicts; strings, numbers and None are ignored
    tree = {
        "w": mx.ones((2, 2)) * 2,
        "layers": [mx.arange(3) + 1, (mx.array(0.5) * 4, "name", 7, None)],
        "meta": {"lr": 0.1, "bias": mx.zeros(2) - 1},
    }
    print("eval(tree):", mx.eval(tree))
    print("eval(several):", mx.eval(tree["w"], [tree["layers"][0]], {"k": tree["meta"]["bias"]}))
    print("eval(non-arrays only):", mx.eval(1, "a", None, [2.5, {"x": "y"}]))
    print("eval():", mx.eval())
    layer = nn.Linear(2, 2)
    print("eval(module):", mx.eval(layer), "eval(generator):", mx.eval(t for t in [tree["w"]]))
    show("w", tree["w"])
    show("layers[0]", tree["layers"][0])
    show("layers[1][0]", tree["layers"][1][0])
    show("bias", tree["meta"]["bias"])

    # async_eval starts the work; a later eval (or any read) waits for it
    x = mx.linspace(0, 1, 5)
    y = mx.sin(x) ** 2 + mx.cos(x) ** 2
    z = (y * 3).astype(mx.float16)
    print("async_eval returns:", mx.async_eval(z, {"y": y}))
    print("then eval returns:", mx.eval(z))
    show("z", z)

    # reading a value forces evaluation
    s = (mx.arange(10) ** 2).sum()
    print("item:", s.item(), type(s.item()).__name__)
    m = mx.arange(6).reshape(2, 3) * 0.5
    print("tolist:", m.tolist())
    n = np.array(mx.arange(4, dtype=mx.int16) * 3)
    print("numpy:", n, n.dtype, type(n).__name__)
    print("float16 to numpy:", np.array(mx.array([1.5, 2.25], mx.float16)).dtype)
    if mx.array(2) > 1:
        print("if arr: True branch taken")
    print("bool:", bool(mx.array([0.0])), "int:", int(mx.array(3.9)), "float:",
          float(mx.array(2, mx.int8)))
    print("repr:", repr(mx.arange(3) * 2))


def in_place():
    print("== in-place updates and captured arrays")
    a = mx.arange(5)
    b = a * 10  # lazy: captures a's current value
    alias = a  # the same Python object
    a[1] = 100  # a's array is replaced; b still reads the old a
    show("a after a[1] = 100", a)
    show("alias sees it", alias)
    show("b (captured before)", b)

    x = mx.array([1.0, 2.0, 3.0])
    y = x + 1
    x += 5
    show("x after x += 5", x)
    show("y (captured before)", y)

    w = mx.zeros((2, 3))
    rows = w[0]  # a slice taken before the write
    w[0, :] = mx.array([1.0, 2.0, 3.0])
    w[1] += 7
    show("w after writes", w)
    show("slice taken before", rows)

    v = mx.ones(4)
    mx.eval(v)
    total = v.sum()
    v[2:] = 9
    mx.eval(total)
    show("total evaluated after the write", total)
    show("v", v)

    u = mx.arange(4).astype(mx.float32)
    keep = u
    u = u * 2  # rebinding: keep is untouched
    show("keep after u = u * 2", keep)

    acc = mx.zeros(3)
    for i in range(4):
        acc[i % 3] += i
    show("acc", acc)
    at = mx.zeros(3).at[mx.array([0, 0, 2])].add(1.0)
    show("at[].add with repeats", at)

    # lazy sums taken in a loop that writes into the array: each sees the writes before it
    a = mx.zeros(3)
    sums = []
    for i in range(3):
        a[i] = i + 1
        sums.append(a.sum())
    mx.eval(sums)
    print("sums seen:", [t.item() for t in sums])

    # a compiled function's closure is frozen at its trace; arrays in inputs= are read anew
    cw = mx.ones(2)
    closed = mx.compile(lambda t: t * cw)
    closed(mx.ones(2))
    cw[0] = 5
    cw += 1
    show("closure after writes", closed(mx.ones(2)))
    state = [mx.ones(2)]
    listed = mx.compile(lambda t: t * state[0], inputs=state)
    listed(mx.ones(2))
    state[0][1] = 7
    show("inputs= after state[0][1] = 7", listed(mx.ones(2)))
    state[0] += 1
    show("inputs= after +=", listed(mx.ones(2)))
    state[0] = mx.zeros(2)
    show("inputs= after rebinding", listed(mx.ones(2)))

    # augmented operators rebind to the result: the dtype may change
    i = mx.arange(3)
    i += 0.5
    print("int32 += 0.5:", i, i.dtype)
    j = mx.arange(3)
    j[0] = 2.7
    print("int32[0] = 2.7:", j)
    k = mx.arange(3, dtype=mx.int8)
    k *= 2
    print("int8 *= 2:", k)
    f = mx.ones(3)
    f /= 2
    f -= 1
    f **= 2
    print("/=, -=, **=:", f)
    n = mx.arange(4)
    n //= 3
    n %= 2
    n <<= 1
    n |= 1
    n &= 2
    n ^= 3
    print("//=, %=, <<=, |=, &=, ^=:", n)
    v2 = mx.ones((2,))
    same = v2
    v2 @= mx.ones((2, 2))
    print("@= (the alias sees it):", v2, same)


def streams():
    print("== devices and streams")
    d = mx.default_device()
    print("default device:", d, repr(d))
    print("device type:", d.type, repr(d.type))
    print("== cpu:", d == mx.cpu, d == mx.gpu, mx.cpu == mx.DeviceType.cpu)
    print("Device(cpu) == Device(cpu, 0):", mx.Device(mx.cpu) == mx.Device(mx.cpu, 0))
    print("Device(cpu, 0):", mx.Device(mx.cpu, 0), mx.Device(mx.DeviceType.cpu))
    print("DeviceType:", mx.DeviceType.cpu, mx.DeviceType.gpu)
    s0 = mx.default_stream(mx.cpu)
    print("default stream is a Stream:", isinstance(s0, mx.Stream), s0.device)
    print("default_stream(default_device) == default_stream(cpu):",
          mx.default_stream(mx.default_device()) == s0)
    # the getters give new objects, equal by value, hashed by identity
    print("default_stream(cpu) is s0:", mx.default_stream(mx.cpu) is s0,
          "dict keyed by s0 finds an equal stream:", {s0: 1}.get(mx.default_stream(mx.cpu)))

    s1 = mx.new_stream(mx.cpu)
    s2 = mx.new_stream(mx.cpu)
    print("streams:", s0, s1, repr(s2))
    print("new streams differ:", s1 != s2, s1 != s0, s1 == s1)
    print("new stream device:", s1.device, s1.device == mx.cpu)

    x = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    y = mx.add(x, 1, stream=s1)
    z = mx.matmul(y, y.T, stream=s2)
    w = mx.sum(z, stream=mx.cpu)
    v = mx.exp(x, stream=mx.Device(mx.cpu))
    mx.synchronize(s1)
    mx.synchronize()
    show("on s1 then s2", z)
    show("sum on cpu", w)
    show("exp on Device(cpu)", mx.round(v, 3))

    with mx.stream(s1):
        inside = mx.default_stream(mx.default_device())
        t = mx.ones(3) * 4
    print("inside with mx.stream(s1): default is s1:", inside == s1)
    print("after: default is back:", mx.default_stream(mx.default_device()) == s0)
    show("made inside", t)
    with mx.stream(mx.cpu):
        u = mx.square(mx.arange(3))
    show("with mx.stream(mx.cpu)", u)

    mx.set_default_device(mx.cpu)
    print("set_default_device(cpu):", mx.default_device())
    mx.set_default_stream(s2)
    print("set_default_stream(s2):", mx.default_stream(mx.cpu) == s2)
    mx.set_default_stream(s0)
    print("metal available:", mx.metal.is_available(), "cuda available:", mx.cuda.is_available())
    attempt("set_default_device(gpu)", lambda: mx.set_default_device(mx.gpu))
    attempt("add(stream=gpu)", lambda: mx.add(x, x, stream=mx.gpu))
    attempt("new_stream(gpu)", lambda: mx.new_stream(mx.gpu))
    attempt("stream='cpu'", lambda: mx.add(x, x, stream="cpu"))
    attempt("Stream(cpu, 0)", lambda: mx.Stream(mx.cpu, 0))
    attempt("Device('cpu')", lambda: mx.Device("cpu"))
    attempt("Device(cpu, 1.5)", lambda: mx.Device(mx.cpu, 1.5))
    attempt("Device(1)", lambda: mx.Device(1))
    attempt("synchronize('cpu')", lambda: mx.synchronize("cpu"))
    attempt("new_stream('cpu')", lambda: mx.new_stream("cpu"))
    attempt("set_default_stream(cpu)", lambda: mx.set_default_stream(mx.cpu))
    attempt("eval(x, stream=cpu)", lambda: mx.eval(x, stream=mx.cpu))


def memory():
    print("== memory")
    for name in ("get_active_memory", "get_peak_memory", "get_cache_memory"):
        print(name, "returns int:", isinstance(getattr(mx, name)(), int))
    print("reset_peak_memory returns:", mx.reset_peak_memory())
    print("clear_cache returns:", mx.clear_cache())
    print("cache after clear_cache:", mx.get_cache_memory())
    print("memory limit is int:", isinstance(mx.set_memory_limit(1 << 30), int))
    print("set_memory_limit returns the old limit:", mx.set_memory_limit(1 << 31))
    print("set_cache_limit returns the old limit:", mx.set_cache_limit(1 << 20),
          mx.set_cache_limit(1 << 24))
    print("set_wired_limit (no wired memory on this device):", mx.set_wired_limit(1 << 20),
          mx.set_wired_limit(0))
    attempt("set_memory_limit(-1)", lambda: mx.set_memory_limit(-1))

    mx.clear_cache()
    mx.reset_peak_memory()
    print("peak right after reset_peak_memory:", mx.get_peak_memory())
    before = mx.get_active_memory()
    big = mx.zeros((256, 1024))  # 1 MiB of float32
    mx.eval(big)
    grown = mx.get_active_memory() - before
    print("1 MiB float32 array: active grew by", grown, "nbytes", big.nbytes)
    half = mx.ones((512, 512), dtype=mx.float16)
    mx.eval(half)
    print("float16 (512, 512): grew by", mx.get_active_memory() - before - grown,
          "nbytes", half.nbytes)
    print("peak >= active:", mx.get_peak_memory() >= mx.get_active_memory(),
          "peak covers both arrays:", mx.get_peak_memory() - before >= 1048576 + 524288)
    view = big[:16]  # a slice shares its base's buffer
    flat = big.reshape(-1)
    spread = mx.broadcast_to(mx.array(1.0), (512, 512))  # one float, read many times
    mx.eval(view, flat, spread)
    print("slice, reshape, broadcast: grew by", mx.get_active_memory() - before - grown - 524288)
    del big, flat
    print("after del big: the slice keeps its buffer:",
          mx.get_active_memory() - before - 524288 - 4)
    del half, view, spread
    print("after del: active back to before:", mx.get_active_memory() == before)
    attempt("get_active_memory(1)", lambda: mx.get_active_memory(1))
    mx.clear_cache()
    print("cache after clear_cache:", mx.get_cache_memory())
    mx.set_memory_limit(1 << 31)


def transforms():
    print("== eval inside transforms")

    def eval_inside(x):
        y = x * 2
        mx.eval(y)
        return (y ** 2).sum()

    print("grad with eval inside:", mx.grad(eval_inside)(mx.array([1.0, 2.0])).tolist())
    attempt("compile with eval inside", lambda: mx.compile(eval_inside)(mx.array([1.0, 2.0])))
    attempt("vmap with eval inside", lambda: mx.vmap(eval_inside)(mx.ones((2, 3))))
    attempt("compile with item inside",
            lambda: mx.compile(lambda t: t * t.sum().item())(mx.ones(2)))
    attempt("compile with async_eval inside",
            lambda: mx.compile(lambda t: (mx.async_eval(t * 2), t)[1])(mx.ones(2)))
    attempt("grad with item inside",
            lambda: mx.grad(lambda t: (t * t.sum().item()).sum())(mx.ones(2)))
    attempt("jvp with eval inside",
            lambda: mx.jvp(lambda t: (mx.eval(t * 2), t * 3)[1], [mx.ones(2)], [mx.ones(2)]))

    calls = []

    def traced(x):
        calls.append(1)
        return mx.tanh(x) * 2

    f = mx.compile(traced)
    for _ in range(3):
        f(mx.ones(4))
    print("compiled: traces for 3 calls:", len(calls))
    mx.disable_compile()
    calls.clear()
    g = mx.compile(traced)
    for _ in range(3):
        out = g(mx.ones(4))
    print("compile disabled: traces for 3 calls:", len(calls))
    mx.enable_compile()
    calls.clear()
    h = mx.compile(traced)
    for _ in range(3):
        out = h(mx.ones(4))
    print("enabled again: traces for 3 calls:", len(calls))
    show("out", out)
    # the compile cache is keyed by the Python function: f's traces serve h until a
    # compiled function of it is collected
    del f, g
    calls.clear()
    h(mx.ones(4))
    print("after del f: traces:", len(calls))
    mx.compile(traced, shapeless=True)(mx.ones(4))
    print("shapeless is traced apart:", len(calls))

    def block(params, x):
        return mx.tanh(x @ params["w"] + params["b"])

    params = {"w": mx.random.normal((3, 3), key=mx.random.key(1)) * 0.5, "b": mx.zeros(3)}
    x = mx.random.normal((4, 3), key=mx.random.key(2))
    plain = mx.grad(lambda p: block(p, block(p, x)).sum())(params)
    ck = mx.checkpoint(block)
    saved = mx.grad(lambda p: ck(p, ck(p, x)).sum())(params)
    print("checkpoint: same gradients:",
          all(mx.allclose(plain[k], saved[k]).item() for k in ("w", "b")))
    show("checkpoint grad b", saved["b"])
    show("checkpoint value", ck(params, x)[0])
    attempt("checkpoint(3)", lambda: mx.checkpoint(3))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 16)
        self.l2 = nn.Linear(16, 1)

    def __call__(self, x):
        return self.l2(nn.relu(self.l1(x)))


def training():
    print("== a training loop, the MLX way")
    mx.random.seed(7)
    x = mx.random.uniform(-1, 1, (64, 3))
    y = (x @ mx.array([[1.5], [-2.0], [0.5]]) + 0.3 * mx.sin(3 * x[:, :1]))
    model = MLP()
    mx.eval(model.parameters())
    opt = optim.Adam(learning_rate=0.05)

    def loss_fn(m, u, v):
        return nn.losses.mse_loss(m(u), v)

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    for step in range(12):
        loss, grads = loss_and_grad(model, x, y)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state, loss)
        if step % 3 == 0 or step == 11:
            print(f"step {step:2d}: loss {loss.item():.4f}")
    print("optimizer step:", opt.state["step"].item(), opt.state["step"].dtype)
    print("learning rate:", opt.learning_rate.item(), opt.learning_rate.dtype)

    # the same steps, lazily chained: nothing computed until the end
    model2 = MLP()
    model2.update(model.parameters())
    loss_and_grad2 = nn.value_and_grad(model2, loss_fn)
    losses = []
    for _ in range(3):
        loss, grads = loss_and_grad2(model2, x, y)
        model2.update(tree_map(lambda p, g: p - 0.1 * g, model2.parameters(), grads))
        losses.append(loss)
    mx.eval(losses, model2.parameters())
    print("lazy SGD losses:", [f"{v.item():.4f}" for v in losses])
    show("l2 bias", model2.l2.bias)


if __name__ == "__main__":
    laziness()
    in_place()
    streams()
    memory()
    transforms()
    training()
