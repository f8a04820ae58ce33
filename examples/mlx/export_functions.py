"""Function export in MLX: `mx.export_function`, `mx.exporter` and `mx.import_function`.

An MLP's forward pass and a whole SGD training step are traced to files and imported
back as callables that check their inputs and return tuples of arrays; a shapeless
function is called at new shapes; keyword inputs, several traces in one file through the
exporter context, closed-over constants, metadata; the errors MLX raises are printed.
Everything is written to a temporary directory and removed at the end.
"""

import os
import tempfile

from mlx.utils import tree_flatten, tree_unflatten

import mlx.core as mx
import mlx.nn as nn


def show(label, a):
    print(f"{label}: shape={a.shape} dtype={a.dtype}")
    print("  ", [round(v, 4) for v in a.reshape(-1).tolist()[:6]])


ROOT = []  # the temporary directory, printed as <tmp>


def error(label, fn):
    try:
        fn()
        print(label, "-> no error")
    except Exception as e:  # noqa: BLE001 - printing what the library raises
        print(f"{label} -> {type(e).__name__}: {str(e).replace(ROOT[0], '<tmp>')}")


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:])]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nn.relu(layer(x))
        return self.layers[-1](x)


def main(root):
    ROOT.append(root)
    mx.random.seed(7)
    model = MLP([6, 16, 16, 3])
    mx.eval(model.parameters())
    x = mx.random.normal((8, 6))
    y = mx.random.randint(0, 3, (8,))

    print("== an MLP forward, weights saved as constants ==")
    path = os.path.join(root, "mlp")  # (no suffix: MLX keeps the name as given)
    mx.export_function(path, model, x)
    print("files:", sorted(os.listdir(root)))
    forward = mx.import_function(path)
    out = forward(x)
    print("returns a", type(out).__name__, "of", len(out))
    show("imported", out[0])
    print("same as the model:", mx.allclose(out[0], model(x)).item())
    print("tuple form:", mx.allclose(forward((x,))[0], out[0]).item())
    error("a batch of 4", lambda: forward(x[:4]))
    error("int input", lambda: forward(x.astype(mx.int32)))
    error("two inputs", lambda: forward(x, x))
    error("a float", lambda: forward(x, 1.0))

    print("== a training step: parameters in, loss and new parameters out ==")
    names = [k for k, _ in tree_flatten(model.parameters())]

    def loss_fn(params, xb, yb):
        model.update(tree_unflatten(list(zip(names, params))))
        return nn.losses.cross_entropy(model(xb), yb, reduction="mean")

    def step(xb, yb, lr, *params):
        loss, grads = mx.value_and_grad(loss_fn)(list(params), xb, yb)
        return (loss, *[p - lr * g for p, g in zip(params, grads)])

    params = [v for _, v in tree_flatten(model.parameters())]
    lr = mx.array(0.5)
    step_path = os.path.join(root, "step.mlxfn")
    mx.export_function(step_path, step, x, y, lr, *params)
    train = mx.import_function(step_path)
    losses = []
    for _ in range(12):
        loss, *params = train(x, y, lr, *params)
        losses.append(round(loss.item(), 4))
    print("losses:", losses)
    model.update(tree_unflatten(list(zip(names, params))))
    acc = (mx.argmax(model(x), axis=1) == y).mean().item()
    print("train accuracy after the imported steps:", round(acc, 4))

    print("== shapeless: one trace, called at new shapes ==")

    def norm_scale(a, s):
        return (a - a.max(axis=-1, keepdims=True)) * mx.exp(s), mx.sum(a * a, axis=0)

    sl_path = os.path.join(root, "shapeless.mlxfn")
    mx.export_function(sl_path, norm_scale, mx.ones((2, 3)), mx.array(0.0), shapeless=True)
    f = mx.import_function(sl_path)
    for shape in [(2, 3), (4, 5), (3, 7)]:
        a = mx.arange(shape[0] * shape[1], dtype=mx.float32).reshape(shape) / 3
        r, sq = f(a, mx.array(0.5))
        show(f"shape {shape}", r)
        show(f"  column sums {shape}", sq)
    error("other ndim", lambda: f(mx.ones((3,)), mx.array(0.5)))
    error("other dtype", lambda: f(mx.ones((2, 3), dtype=mx.float16), mx.array(0.5)))

    print("== keyword inputs ==")

    def affine(a, *, weight, bias):
        return a @ weight + bias

    kw_path = os.path.join(root, "kw.mlxfn")
    w = mx.random.normal((6, 2))
    b = mx.array([1.0, -1.0])
    mx.export_function(kw_path, affine, x, weight=w, bias=b)
    g = mx.import_function(kw_path)
    show("keywords", g(x, weight=w, bias=b)[0])
    show("keywords in another order", g(x, bias=b, weight=w)[0])
    show("tuple and dict", g((x,), {"weight": w, "bias": b})[0])
    error("keyword missing", lambda: g(x, w, b))
    error("wrong keyword", lambda: g(x, weight=w, offset=b))

    print("== several traces through the exporter ==")

    def combine(*arrays):
        out = arrays[0]
        for a in arrays[1:]:
            out = out * 2 + a
        return out

    multi = os.path.join(root, "multi.mlxfn")
    with mx.exporter(multi, combine) as exporter:
        exporter(mx.array(1.0))
        exporter(mx.array([1.0, 2.0]), mx.array([3.0, 4.0]))
        exporter(mx.array(1), mx.array(2), mx.array(3))
        error("same signature again", lambda: exporter(mx.array(5.0)))
    error("after close", lambda: exporter(mx.array([1.0])))
    h = mx.import_function(multi)
    print("one:", h(mx.array(4.0)))
    print("two:", h(mx.array([1.0, 1.0]), mx.array([0.5, 0.25])))
    print("three:", h(mx.array(1), mx.array(1), mx.array(1)))
    error("no trace matches", lambda: h(mx.array([1.0, 2.0, 3.0])))

    print("== outputs, constants, metadata ==")
    c = mx.array([10.0, 20.0, 30.0])
    const_path = os.path.join(root, "const.mlxfn")
    mx.export_function(const_path, lambda a: [a * c, a], mx.ones(3),
                       metadata='{"scale": 10}')
    k, meta = mx.import_function(const_path, return_metadata=True)
    print("metadata:", meta)
    print("outputs:", k(mx.array([1.0, 2.0, 3.0])))
    _, none = mx.import_function(path, return_metadata=True)
    print("no metadata:", repr(none))

    print("== mistakes ==")
    error("a float input", lambda: mx.export_function(os.path.join(root, "e1"),
                                                      lambda a, s: a * s, x, 2.0))
    error("a dict output", lambda: mx.export_function(os.path.join(root, "e2"),
                                                      lambda a: {"a": a}, x))
    error("None output", lambda: mx.export_function(os.path.join(root, "e3"),
                                                    lambda a: None, x))
    error("missing file", lambda: mx.import_function(os.path.join(root, "nothing.mlxfn")))
    error("missing folder", lambda: mx.export_function(os.path.join(root, "no", "f"),
                                                       model, x))
    error("not a path", lambda: mx.exporter(3, model))
    print("files left:", sorted(os.listdir(root)))


with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
