"""Recurrent models and the Module tree API, in the shape of MLX's examples.

`nn.RNN`, `nn.GRU` and `nn.LSTM` run over batched and unbatched sequences drawn with
`mx.random`, from initial states, stacked by hand and made bidirectional by reversing the
sequence. A sequence tagger and a sequence-to-one regressor train with `nn.value_and_grad`
and optimizers with schedules. Then every `nn.init` initializer under a fixed seed; the
Module tree (parameters, children, leaf and named modules, update / update_modules with
partial trees, freeze / unfreeze, apply, set_dtype, train / eval) on a custom Module holding
lists and dicts of submodules and arrays; `mlx.utils` tree functions; saving and loading
weights and arrays (.npz / .safetensors, metadata, strict); typical mistakes caught.
Run on ember with `python -m ember.run recurrent_modules.py`.
"""

import os
import tempfile

from mlx.utils import tree_flatten, tree_map, tree_map_with_path, tree_reduce, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def fmt(a, digits=4):
    """A short text of an array's first values."""
    return [round(v, digits) for v in a.reshape(-1)[:4].tolist()]


def show_layers():
    mx.random.seed(1)
    x = mx.random.normal((2, 5, 3))
    h0 = mx.random.normal((2, 4))
    c0 = mx.random.normal((2, 4))
    rnn = nn.RNN(3, 4)
    relu_rnn = nn.RNN(3, 4, bias=False, nonlinearity=nn.relu)
    gru = nn.GRU(3, 4)
    gru_nb = nn.GRU(3, 4, bias=False)
    lstm = nn.LSTM(3, 4)
    lstm_nb = nn.LSTM(3, 4, bias=False)
    print("rnn", rnn.nonlinearity is mx.tanh or rnn.nonlinearity.__name__,
          sorted(rnn.keys()), "bias" in rnn)
    print("relu rnn", relu_rnn.Wxh.shape, relu_rnn.Whh.shape, "bias" in relu_rnn)
    print("gru", gru, sorted(gru.keys()))
    print("lstm", lstm, sorted(lstm.keys()))
    for name, layer in [("rnn", rnn), ("relu-rnn", relu_rnn), ("gru", gru), ("gru-nb", gru_nb)]:
        out = layer(x)
        out_h = layer(x, h0)
        single = layer(x[0])
        single_h = layer(x[0], h0[0])
        print(f"{name}: {out.shape} {fmt(out[:, -1])} | h0 {fmt(out_h[:, -1])} | "
              f"unbatched {single.shape} equal {mx.allclose(single, out[0], atol=1e-6).item()}"
              f" {mx.allclose(single_h, out_h[0], atol=1e-6).item()}")
    for name, layer in [("lstm", lstm), ("lstm-nb", lstm_nb)]:
        hs, cs = layer(x)
        hs2, cs2 = layer(x, h0, c0)
        hs3, cs3 = layer(x[1], hidden=h0[1], cell=c0[1])
        print(f"{name}: {hs.shape} {cs.shape} {fmt(hs[:, -1])} {fmt(cs[:, -1])} | "
              f"h0,c0 {fmt(hs2[:, -1])} | unbatched {hs3.shape} "
              f"{mx.allclose(hs3, hs2[1], atol=1e-6).item()} {mx.allclose(cs3, cs2[1]).item()}")
    only_h = lstm(x, hidden=h0)[0]
    print("lstm hidden only", fmt(only_h[:, -1]))
    # a hand-written RNN step against the layer
    h = mx.zeros((2, 4))
    for t in range(5):
        h = mx.tanh(x[:, t] @ rnn.Wxh.T + rnn.bias + h @ rnn.Whh.T)
    print("manual rnn matches:", mx.allclose(h, rnn(x)[:, -1], atol=1e-6).item())
    print("float16 gru", gru.set_dtype(mx.float16) or gru(x.astype(mx.float16)).dtype)


class Stacked(nn.Module):
    """Two GRU layers stacked by hand, the second over the first's states."""

    def __init__(self, dims, hidden):
        super().__init__()
        self.layers = [nn.GRU(dims, hidden), nn.GRU(hidden, hidden)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class BiLSTM(nn.Module):
    """A bidirectional LSTM: the backward direction runs over the reversed sequence."""

    def __init__(self, dims, hidden):
        super().__init__()
        self.forward = nn.LSTM(dims, hidden)
        self.backward = nn.LSTM(dims, hidden)

    def __call__(self, x):
        fwd, _ = self.forward(x)
        bwd, _ = self.backward(x[:, ::-1])
        return mx.concatenate([fwd, bwd[:, ::-1]], axis=-1)


class Tagger(nn.Module):
    def __init__(self, vocab, dims, hidden, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, dims)
        self.encoder = BiLSTM(dims, hidden)
        self.head = nn.Linear(2 * hidden, tags)

    def __call__(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


class Regressor(nn.Module):
    def __init__(self, dims, hidden):
        super().__init__()
        self.rnn = Stacked(dims, hidden)
        self.out = nn.Linear(hidden, 1)

    def __call__(self, x):
        return self.out(self.rnn(x)[:, -1]).squeeze(-1)


def train_tagger():
    mx.random.seed(2)
    tokens = mx.random.randint(0, 10, (16, 7))
    tags = (tokens % 3 + (mx.cumsum(tokens, axis=1) > 20)).astype(mx.int32)
    model = Tagger(10, 8, 6, 4)
    mx.eval(model.parameters())
    print("tagger output", model(tokens).shape, "encoder", model.encoder.forward)

    def loss_fn(m, x, y):
        return nn.losses.cross_entropy(m(x), y, reduction="mean")

    lr = optim.join_schedules([optim.linear_schedule(1e-3, 2e-2, 3),
                               optim.exponential_decay(2e-2, 0.9)], [3])
    optimizer = optim.Adam(learning_rate=lr)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    for it in range(10):
        loss, grads = loss_and_grad(model, tokens, tags)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        if it % 3 == 0 or it == 9:
            print(f"tagger step {it}: loss {loss.item():.4f}, "
                  f"lr {optimizer.learning_rate.item():.5f}")
    acc = (mx.argmax(model(tokens), axis=-1) == tags).astype(mx.float32).mean()
    print(f"tagger accuracy {acc.item():.4f}")


def train_regressor():
    mx.random.seed(3)
    x = mx.random.normal((24, 6, 2))
    y = mx.sum(x[..., 0] * mx.linspace(0.2, 1.0, 6), axis=1) - 0.5 * x[:, -1, 1]
    model = Regressor(2, 5)
    mx.eval(model.parameters())

    def loss_fn(m, x, y):
        return nn.losses.mse_loss(m(x), y)

    optimizer = optim.SGD(learning_rate=optim.cosine_decay(0.1, 12, end=0.01), momentum=0.9,
                          nesterov=True)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    for it in range(12):
        loss, grads = loss_and_grad(model, x, y)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        if it % 4 == 0 or it == 11:
            print(f"regressor step {it}: loss {loss.item():.4f}, "
                  f"lr {optimizer.learning_rate.item():.5f}")
    optimizer2 = optim.RMSprop(learning_rate=optim.step_decay(0.01, 0.5, 3))
    for _ in range(6):
        loss, grads = loss_and_grad(model, x, y)
        grads, norm = optim.clip_grad_norm(grads, 0.5)
        optimizer2.update(model, grads)
        mx.eval(model.parameters(), optimizer2.state)
    print(f"rmsprop: loss {loss.item():.4f}, norm {norm.item():.4f}, "
          f"lr {optimizer2.learning_rate.item():.5f}, step {optimizer2.step.item()}")
    return model


def show_init():
    w = mx.zeros((3, 4))
    conv = mx.zeros((4, 3, 3, 2))
    cases = [
        ("constant", nn.init.constant(0.5), w),
        ("constant-f16", nn.init.constant(-1, dtype=mx.float16), w),
        ("normal", nn.init.normal(mean=1.0, std=0.5), w),
        ("normal-bf16", nn.init.normal(dtype=mx.bfloat16), w),
        ("uniform", nn.init.uniform(low=-2, high=2), w),
        ("uniform-f16", nn.init.uniform(dtype=mx.float16), conv),
        ("identity", nn.init.identity(), mx.zeros((3, 3))),
        ("identity-int", nn.init.identity(dtype=mx.int32), mx.zeros((2, 2))),
        ("glorot_normal", nn.init.glorot_normal(), w),
        ("glorot_uniform", nn.init.glorot_uniform(), conv),
        ("he_normal", nn.init.he_normal(), conv),
        ("he_uniform", nn.init.he_uniform(mx.float16), w),
        ("sparse", nn.init.sparse(0.5), mx.zeros((4, 4))),
        ("sparse-std", nn.init.sparse(0.25, mean=1.0, std=0.1), w),
        ("orthogonal", nn.init.orthogonal(), w),
        ("orthogonal-tall", nn.init.orthogonal(gain=2.0), mx.zeros((4, 2))),
    ]
    for name, init, a in cases:
        mx.random.seed(7)
        out = init(a)
        print(f"init {name}: {out.shape} {out.dtype} {fmt(out.astype(mx.float32))} "
              f"sum {out.astype(mx.float32).sum().item():.4f}")
    mx.random.seed(7)
    g = nn.init.glorot_uniform()(w, gain=2.0)
    mx.random.seed(7)
    h1 = nn.init.he_normal()(conv, mode="fan_out", gain=0.5)
    mx.random.seed(7)
    h2 = nn.init.he_uniform()(conv, "fan_out")
    print("glorot gain 2", fmt(g), "| he fan_out", fmt(h1), fmt(h2))
    o = nn.init.orthogonal()(mx.zeros((4, 4)))
    print("orthogonal q^T q = I:", mx.allclose(o.T @ o, mx.eye(4), atol=1e-5).item())
    zeros = (nn.init.sparse(0.5)(mx.zeros((3, 6))) == 0).sum(axis=1)
    print("sparse zeros per row", zeros.tolist())
    layer = nn.Linear(4, 3)
    layer.apply(nn.init.constant(0.25))
    print("apply constant", layer.weight.sum().item(), layer.bias.tolist())


class Bag(nn.Module):
    """A custom module holding lists and dicts of submodules and arrays."""

    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 2), nn.ReLU())]
        self.heads = {"a": nn.Linear(2, 1), "b": nn.Linear(2, 1, bias=False)}
        self.scales = [mx.ones((2,)), mx.array(3.0)]
        self.table = {"w": mx.zeros((2, 2)), "nested": {"v": mx.arange(3)}}
        self.norm = nn.LayerNorm(2)
        self.drop = nn.Dropout(0.5)
        self.name = "bag"
        self.count = 3
        self._private = mx.ones((5,))

    def __call__(self, x):
        for b in self.blocks:
            x = b(x)
        x = self.drop(self.norm(x)) * self.scales[0]
        return self.heads["a"](x) + self.heads["b"](x)


def show_tree():
    mx.random.seed(4)
    bag = Bag()
    params = bag.parameters()
    print("parameters keys", sorted(params), "| blocks", type(params["blocks"]).__name__,
          len(params["blocks"]))
    flat = tree_flatten(params)
    print("flat", len(flat), [k for k, _ in flat][:6])
    print("trainable", len(tree_flatten(bag.trainable_parameters())))
    print("children", sorted(bag.children()), type(bag.children()["blocks"]).__name__)
    print("leaf modules", [k for k, _ in tree_flatten(bag.leaf_modules())])
    print("named modules", [(k, type(m).__name__) for k, m in bag.named_modules()])
    print("modules", [type(m).__name__ for m in bag.modules()])
    print("training", bag.training, bag.drop.training)
    bag.eval()
    print("after eval", bag.training, bag.drop.training, bag.blocks[1].layers[0].training)
    bag.train()
    print("after train", bag.training, bag.drop.training)
    x = mx.random.normal((2, 3))
    bag.eval()
    y0 = bag(x)
    bag.update({"heads": {"a": {"bias": mx.array([10.0])}}})
    print("update partial", bag.heads["a"].bias.tolist(), fmt(bag(x) - y0))
    bag.update({"blocks": [{}, {"layers": [{"weight": mx.ones((2, 3))}, {}]}]})
    print("update list", bag.blocks[1].layers[0].weight.sum().item())
    bag.update_modules({"heads": {"b": nn.Linear(2, 1)}})
    print("update_modules", sorted(bag.heads["b"].keys()))
    bag.update_modules({"blocks": [nn.Identity(), {}]})
    print("replaced", type(bag.blocks[0]).__name__, bag(x).shape)
    bag.update(tree_map(lambda p: p * 0 + 1, bag.parameters()))
    print("all ones", tree_reduce(lambda acc, p: acc + p.sum().item(), bag.parameters(), 0.0))
    bag.freeze()
    print("frozen", len(tree_flatten(bag.trainable_parameters())))
    bag.unfreeze(keys=["bias"])
    print("unfreeze bias", [k for k, _ in tree_flatten(bag.trainable_parameters())])
    bag.freeze(keys="bias")
    bag.unfreeze(recurse=False)
    print("unfreeze no recurse", [k for k, _ in tree_flatten(bag.trainable_parameters())])
    bag.heads["a"].unfreeze(keys="weight")
    bag.norm.unfreeze()
    bag.norm.freeze(keys=["weight"], recurse=False)
    print("partly", [k for k, _ in tree_flatten(bag.trainable_parameters())])
    bag.unfreeze()
    bag.freeze(recurse=False)
    print("freeze no recurse", len(tree_flatten(bag.trainable_parameters())))
    bag.unfreeze()
    seen = []
    bag.apply_to_modules(lambda k, m: seen.append((k, type(m).__name__)))
    print("apply_to_modules", seen)
    bag.apply(lambda p: p * 2, filter_fn=lambda m, k, v: k == "bias")
    print("apply filter", bag.heads["a"].bias.tolist(), bag.norm.weight.tolist())
    bag.set_dtype(mx.float16)
    print("set_dtype", bag.norm.weight.dtype, bag.table["nested"]["v"].dtype,
          bag.scales[1].dtype)
    bag.set_dtype(mx.bfloat16, predicate=lambda t: t == mx.float16)
    print("set_dtype predicate", bag.heads["a"].weight.dtype, bag(x).dtype)
    print("state is parameters", sorted(bag.state) == sorted(bag), "private" in str(bag.keys()))

    tree = {"a": [mx.array([1, 2]), {"b": mx.array(3.0)}], "c": (mx.ones((2,)), 4)}
    flat = tree_flatten(tree)
    print("tree_flatten", [(k, type(v).__name__) for k, v in flat])
    print("prefix", [k for k, _ in tree_flatten(tree, prefix=".p")])
    print("is_leaf", [k for k, _ in tree_flatten(tree, is_leaf=lambda v: isinstance(v, list))])
    back = tree_unflatten(flat)
    print("tree_unflatten", sorted(back), type(back["a"]).__name__, type(back["c"]).__name__)
    print("unflatten list", tree_unflatten([("0", 1), ("1.x", 2)]))
    doubled = tree_map(lambda v: v * 2, tree)
    print("tree_map", doubled["a"][0].tolist(), doubled["c"][1], type(doubled["c"]).__name__)
    summed = tree_map(lambda a, b: a + b, tree, doubled)
    print("tree_map two", summed["a"][1]["b"].item())
    paths = tree_map_with_path(lambda p, v: p, tree)
    print("with path", paths)
    print("with path", tree_map_with_path(lambda p, a, b: f"{p}={a + b}", {"x": [1, 2]},
                                          {"x": [10, 20]}, path="m"))
    print("flatten to dict", tree_flatten(tree_map(lambda v: 0, tree), destination={}))
    print("unflatten dict", tree_unflatten({"w.0": 1, "w.1": 2, "z": 3}))
    print("tree_reduce", tree_reduce(lambda acc, v: acc + 1, tree, 0),
          tree_reduce(lambda acc, v: max(acc, v), {"a": 3, "b": [5, 1]}))
    print("is_leaf map", tree_map(lambda v: len(v) if isinstance(v, list) else -1, tree,
                                  is_leaf=lambda v: isinstance(v, list)))


def show_io(model):
    x = mx.random.normal((3, 6, 2), key=mx.random.key(5))
    with tempfile.TemporaryDirectory() as tmp:
        npz, st = os.path.join(tmp, "m.npz"), os.path.join(tmp, "m.safetensors")
        model.save_weights(npz)
        model.save_weights(st)
        for path in (npz, st):
            fresh = Regressor(2, 5)
            fresh.load_weights(path)
            print(os.path.basename(path), "reload equal:",
                  mx.array_equal(fresh(x), model(x)).item(), sorted(mx.load(path))[:3])
        print("load order", list(mx.load(st))[:4], list(mx.load(npz))[:4])
        weights = list(mx.load(st).items())
        fresh = Regressor(2, 5)
        fresh.load_weights(weights[:2], strict=False)
        print("partial strict=False", fresh.out.weight.shape,
              mx.array_equal(fresh.rnn.layers[0].Wh, model.rnn.layers[0].Wh).item())
        for bad in (weights[:2], weights + [("extra.weight", mx.zeros((1,)))],
                    [(k, v.T) if k == "out.weight" else (k, v) for k, v in weights],
                    [(k, v.astype(mx.float16)) for k, v in weights]):
            try:
                Regressor(2, 5).load_weights(bad)
                print("loaded")
            except Exception as e:
                print(f"{type(e).__name__}: {e}")
        arrs = {"a": mx.arange(6).reshape(2, 3), "b": mx.array([1.5, 2.5], dtype=mx.float16),
                "c": mx.array([True, False])}
        mx.save(os.path.join(tmp, "one"), arrs["a"])
        one = mx.load(os.path.join(tmp, "one.npy"))
        print("save/load npy", one.dtype, one.tolist())
        mx.savez(os.path.join(tmp, "many"), arrs["a"], b=arrs["b"])
        many = mx.load(os.path.join(tmp, "many.npz"))
        print("savez", sorted(many), many["arr_0"].shape, many["b"].dtype)
        mx.savez_compressed(os.path.join(tmp, "comp.npz"), **arrs)
        comp = mx.load(os.path.join(tmp, "comp.npz"))
        print("savez_compressed", sorted(comp), comp["c"].dtype, comp["c"].tolist())
        mx.save_safetensors(os.path.join(tmp, "s"), arrs, metadata={"epoch": "3", "name": "x"})
        data, meta = mx.load(os.path.join(tmp, "s.safetensors"), return_metadata=True)
        print("safetensors", sorted(data), data["b"].dtype, meta)
        loaded = mx.load(os.path.join(tmp, "s.safetensors"), format="safetensors")
        print("format=", sorted(loaded), loaded["a"].tolist())
        for bad in (lambda: mx.load(os.path.join(tmp, "missing.npz")),
                    lambda: mx.load(os.path.join(tmp, "one.npy"), format="gguf2"),
                    lambda: mx.save_safetensors(os.path.join(tmp, "t"), arrs,
                                                metadata={"epoch": 3}),
                    lambda: mx.savez(os.path.join(tmp, "u"), arrs["a"], arr_0=arrs["b"]),
                    lambda: mx.save(os.path.join(tmp, "v"), [1, 2])):
            try:
                bad()
                print("no error")
            except Exception as e:
                print(f"{type(e).__name__}: {e}")


def main():
    show_layers()
    stacked = Stacked(3, 4)
    x = mx.random.normal((2, 5, 3), key=mx.random.key(0))
    print("stacked", stacked(x).shape, len(stacked.layers), stacked.layers[1].Wx.shape)
    bi = BiLSTM(3, 4)
    out = bi(x)
    rev = bi(x[:, ::-1])
    print("bidirectional", out.shape, "mirror",
          mx.allclose(out[:, :, :4], rev[:, ::-1, 4:], atol=1e-6).item() is False)
    train_tagger()
    model = train_regressor()
    show_init()
    show_tree()
    show_io(model)

    rnn = nn.RNN(3, 4)
    mistakes = [
        lambda: rnn(mx.zeros((2, 5, 4))),
        lambda: nn.LSTM(3, 4)(mx.zeros((2, 5, 3)), mx.zeros((2, 5))),
        lambda: nn.GRU(3, 4)(mx.zeros((5,))),
        lambda: nn.RNN(3, 4, nonlinearity="tanh"),
        lambda: nn.init.identity()(mx.zeros((2, 3))),
        lambda: nn.init.glorot_normal()(mx.zeros((3,))),
        lambda: nn.init.he_uniform()(mx.zeros((3, 3)), mode="fan_avg"),
        lambda: nn.init.orthogonal()(mx.zeros((2, 2, 2))),
        lambda: rnn.update({"Wxh": mx.zeros((4, 3)), "Wq": mx.zeros((1,))}),
        lambda: rnn.update({"Wxh": mx.zeros((4, 3))}, strict=True) is rnn,
        lambda: Bag().update_modules({"heads": {"c": nn.Linear(1, 1)}}),
        lambda: Bag().update_modules({"norm": mx.zeros((2,))}),
        lambda: rnn.freeze(keys=["Wzz"]) is rnn,
        lambda: tree_unflatten([("a.0", 1), ("a.b", 2)]),
        lambda: tree_map(lambda a, b: a + b, {"a": 1}, {"b": 2}),
        lambda: nn.value_and_grad(rnn, lambda m, x: m(x))(rnn, mx.zeros((1, 2, 3))),
    ]
    for mistake in mistakes:
        try:
            print("no error", mistake())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
