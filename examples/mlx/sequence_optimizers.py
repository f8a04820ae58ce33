"""Character-level sequence models and every MLX optimizer on one small problem: a vowel
counting classifier (Embedding, grouped/dilated Conv1d, pooling, norms, GRU) trained from
the same weights by each optimizer and schedule (one state saved and restored), an LSTM
next-character predictor, the array utilities they use, and typical mistakes. Run on
ember with `python -m ember.run sequence_optimizers.py`."""

import os
import tempfile

from mlx.utils import tree_flatten, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

VOCAB, LENGTH = 26, 16


def make_strings(key, n):
    """`n` random strings (letter ids) and whether each has more than 3 vowels."""
    ids = mx.random.randint(0, VOCAB, (n, LENGTH), key=key)
    vowels = mx.array([0, 4, 8, 14, 20])
    is_vowel = (ids[..., None] == vowels).any(axis=-1)
    return ids, (is_vowel.sum(axis=1) > 3).astype(mx.int32)


class Classifier(nn.Module):
    def __init__(self, dims: int = 12, hidden: int = 8):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dims)
        self.conv = nn.Sequential(
            nn.Conv1d(dims, dims, kernel_size=3, padding=2, dilation=2, groups=3),
            nn.GroupNorm(3, dims, pytorch_compatible=True), nn.GELU(),
            nn.Conv1d(dims, hidden, kernel_size=3, stride=2, padding=1, bias=False))
        self.pool = nn.MaxPool1d(kernel_size=2, stride=1)
        self.norm = nn.LayerNorm(hidden, affine=True, bias=False)
        self.gru = nn.GRU(hidden, hidden)
        self.drop = nn.Dropout(p=0.25)
        self.head = nn.Linear(hidden, 2)

    def __call__(self, ids):
        h = self.pool(self.conv(self.embed(ids)))
        h = self.gru(self.norm(h))[:, -1, :]
        return self.head(self.drop(h))


def cls_loss(model, ids, labels):
    return nn.losses.cross_entropy(model(ids), labels, reduction="mean")


class NextChar(nn.Module):
    def __init__(self, dims: int = 10, hidden: int = 16):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dims)
        self.lstm = nn.LSTM(dims, hidden)
        self.out = nn.Linear(hidden, VOCAB)

    def __call__(self, ids, hidden=None, cell=None):
        hs, cs = self.lstm(self.embed(ids), hidden, cell)
        return self.out(hs), (hs[..., -1, :], cs[..., -1, :])


def initialise(model):
    """glorot_uniform for matrices, he_normal for conv kernels, uniform for biases."""
    glorot, he, new = nn.init.glorot_uniform(), nn.init.he_normal(), []
    for name, p in tree_flatten(model.parameters()):
        if name.endswith(("bias", ".b", "bhn")):
            new.append((name, nn.init.uniform(-0.1, 0.1)(p)))
        elif p.ndim == 3:
            new.append((name, he(p, mode="fan_out", gain=0.5)))
        elif p.ndim == 2 and "embed" not in name:
            new.append((name, glorot(p, gain=1.5)))
    model.update(tree_unflatten(new))
    model.apply(lambda p: p.astype(mx.float32))
    return model


def array_tour():
    x = mx.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    print("pad constant:", mx.pad(x, [(0, 0), (1, 2)], constant_values=-1).tolist())
    print("pad edge:", mx.pad(x, ((1, 0), (0, 2)), mode="edge").tolist())
    print("sort:", mx.sort(x).tolist(), "argsort axis 0:", mx.argsort(x, axis=0).tolist())
    print("partition kth=2:", mx.partition(x, 2, axis=1)[:, 2].tolist(),
          "argpartition dtype:", mx.argpartition(x, 1).dtype)
    print("topk:", mx.sort(mx.topk(x, 2, axis=-1)).tolist(), mx.topk(x.flatten(), 3).tolist())
    f = x.astype(mx.float32) / 4
    print("cumsum reverse:", mx.cumsum(f, axis=1, reverse=True).tolist(), "exclusive:",
          mx.cumsum(x, axis=1, inclusive=False).tolist())
    print("cumprod reverse exclusive:", mx.cumprod(x, 1, reverse=True, inclusive=False).tolist())
    print("cummax:", mx.cummax(x, axis=1).tolist(), mx.cummax(x, reverse=True, axis=0).tolist())
    print("where/clip:", mx.where(x > 3, x, -x).tolist(), mx.clip(f, 0.5, None).tolist())
    print(x > 3, mx.cumsum(x, axis=0, reverse=True))
    print(f.astype(mx.float16) * 3, mx.clip(f, 0.3, 1.7).astype(mx.bfloat16))
    print(mx.array(True), mx.array(2.5, mx.float16), mx.arange(3, dtype=mx.bfloat16) / 3)


def layer_tour(key):
    k1, k3 = mx.random.split(key, 2)
    x = mx.random.normal((2, 7, 6), key=k1)
    rnn = nn.RNN(6, 5, nonlinearity=nn.relu)
    print("RNN relu:", rnn(x).shape, rnn(x[0]).shape, f"{rnn(x).sum().item():.4f}")
    gru, lstm, h0 = nn.GRU(6, 4, bias=False), nn.LSTM(6, 3), mx.full((2, 4), 0.5)
    print("GRU with h0:", gru(x, h0).shape, f"{gru(x, h0)[:, -1].sum().item():.4f}",
          "unbatched:", gru(x[1], h0[1]).shape)
    hs, cs = lstm(x, mx.zeros((2, 3)), mx.full((2, 3), -1.0))
    print("LSTM all steps:", hs.shape, cs.shape, f"{cs[:, 0].mean().item():.4f}",
          "unbatched:", [a.shape for a in lstm(x[0])])
    conv = nn.Conv1d(6, 4, kernel_size=3, stride=2, padding=1, dilation=2, groups=2)
    print("Conv1d:", conv.weight.shape, conv(x).shape,
          nn.Conv1d(6, 6, 2, groups=6, bias=False)(x).shape)
    print("MaxPool1d:", nn.MaxPool1d(3, stride=2, padding=1)(x).shape,
          "AvgPool1d:", nn.AvgPool1d(2)(x).shape, f"{nn.AvgPool1d(4, 1)(x).sum().item():.4f}")
    drop, ones = nn.Dropout(0.5), mx.ones((2, 8))
    print("Dropout train: values", sorted(set(drop(ones).flatten().tolist())), "eval:",
          drop.train(False)(ones).sum().item(), "training:", drop.training)
    for norm in (nn.LayerNorm(6, bias=False), nn.GroupNorm(2, 6),
                 nn.GroupNorm(3, 6, affine=False, pytorch_compatible=True),
                 nn.InstanceNorm(6, affine=True)):
        print(f"{norm}: keys {sorted(norm.parameters())}, std {mx.std(norm(x)).item():.3f}")
    half = nn.LayerNorm(6)(x.astype(mx.float16))
    print("LayerNorm of float16:", half.dtype, f"{half.abs().sum().item():.2f}",
          mx.fast.rms_norm(x.astype(mx.bfloat16), None, 1e-5).dtype)
    seq = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 2))
    seq.layers[0].apply(nn.init.constant(0.25))
    print("Sequential:", seq(x).shape, [k for k, _ in tree_flatten(seq.parameters())][:3])
    wide = mx.random.normal((1, 9, 4, 6), key=k3)
    print("conv1d of a 4-d input:", mx.conv1d(wide, mx.ones((2, 3, 3, 6)), stride=2).shape,
          "negative padding:", mx.conv1d(x, mx.ones((2, 3, 6)), padding=-1).shape)


def train(opt, steps, data, name, init):
    model = Classifier().update(init).train(False)
    loss_and_grad = nn.value_and_grad(model, cls_loss)
    for _ in range(steps):
        loss, grads = loss_and_grad(model, *data)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
    print(f"{name:<28} loss {loss.item():.4f} -> {cls_loss(model, *data).item():.4f}")
    return model


def main():
    mx.random.seed(5)
    k_data, k_layers = mx.random.split(mx.random.key(21), 2)
    array_tour()
    mx.random.seed(7)
    layer_tour(k_layers)

    mx.random.seed(3)
    data = make_strings(k_data, 32)
    print("data:", data[0].shape, data[0].dtype, "positives:", data[1].sum().item())
    model = initialise(Classifier())
    init = model.parameters()
    model.train()
    print(f"train-mode loss {cls_loss(model, *data).item():.4f}, eval-mode "
          f"{cls_loss(model.train(False), *data).item():.4f}")

    optimizers = [
        ("SGD", optim.SGD(0.05)),
        ("SGD momentum dampening", optim.SGD(0.05, momentum=0.9, dampening=0.2,
                                             weight_decay=1e-3)),
        ("SGD nesterov", optim.SGD(0.05, momentum=0.8, nesterov=True)),
        ("RMSprop", optim.RMSprop(0.01, alpha=0.9)),
        ("Adagrad", optim.Adagrad(0.1, eps=1e-6)),
        ("AdaDelta", optim.AdaDelta(1.0, rho=0.95)),
        ("Adam", optim.Adam(0.01)),
        ("Adam bias_correction", optim.Adam(0.01, betas=[0.8, 0.99], bias_correction=True)),
        ("AdamW", optim.AdamW(0.01, weight_decay=0.1)),
        ("Adamax", optim.Adamax(0.02)),
        ("Lion", optim.Lion(0.003, weight_decay=0.01)),
        ("Adafactor relative_step", optim.Adafactor()),
        ("Adafactor lr beta_1", optim.Adafactor(0.01, relative_step=False, beta_1=0.9,
                                                scale_parameter=False)),
        ("step_decay SGD", optim.SGD(optim.step_decay(0.2, 0.5, 2))),
        ("exponential_decay Adam", optim.Adam(optim.exponential_decay(0.02, 0.8))),
        ("cosine_decay end RMSprop", optim.RMSprop(optim.cosine_decay(0.02, 4, end=0.002))),
        ("warmup+cosine AdamW", optim.AdamW(optim.join_schedules(
            [optim.linear_schedule(0.0, 0.02, 2), optim.cosine_decay(0.02, 4)], [2]))),
        ("MultiOptimizer", optim.MultiOptimizer([optim.Adam(0.01), optim.SGD(0.1)],
                                                [lambda path, p: "gru" in path])),
    ]
    for name, opt in optimizers:
        train(opt, 3, data, name, init)

    adam = optimizers[7][1]
    print("Adam state:", sorted(adam.state.keys()), "step", adam.state["step"], "lr",
          adam.learning_rate, "head:", sorted(adam.state["head"]["weight"].keys()))
    sched = optimizers[16][1]
    print("schedule lr now:", f"{sched.learning_rate.item():.5f}",
          [round(optim.cosine_decay(1.0, 4, end=0.1)(mx.array(s)).item(), 4) for s in range(6)],
          [optim.step_decay(1.0, 0.5, 2)(s) for s in range(5)])
    fresh = optim.RMSprop(0.01)
    fresh.init(model.trainable_parameters())
    print("init RMSprop:", sorted(fresh.state.keys())[:4], fresh.state["step"].item(),
          fresh.state["gru"]["Wx"]["v"].sum().item())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "adam_state.safetensors")
        mx.save_safetensors(path, dict(tree_flatten(adam.state)))
        loaded = mx.load(path)
        restored = optim.Adam(0.01, betas=[0.8, 0.99], bias_correction=True)
        restored.state = tree_unflatten(list(loaded.items()))
        print("restored:", len(loaded), "arrays, step", restored.step.item(),
              restored.state["step"].dtype, f"lr {restored.learning_rate.item():.3f}")
        a = train(restored, 2, data, "Adam resumed", init)
        b = train(adam, 2, data, "Adam continued", init)
        print("resumed == continued:", all(mx.array_equal(u, v).item() for (_, u), (_, v)
              in zip(tree_flatten(a.parameters()), tree_flatten(b.parameters()))))

    phrase = mx.array([ord(c) - 97 for c in "abracadabra"] * 2)
    lm, lm_opt = NextChar(), optim.Adam(0.05, bias_correction=True)
    lg = nn.value_and_grad(lm, lambda m, x, y: nn.losses.cross_entropy(m(x)[0], y).mean())
    x, y = phrase[None, :-1], phrase[None, 1:]
    for it in range(1, 41):
        loss, grads = lg(lm, x, y)
        lm_opt.update(lm, grads)
        mx.eval(lm.parameters(), lm_opt.state)
        if it % 10 == 0:
            print(f"next-char {it}: loss {loss.item():.4f}")
    logits, (h, c) = lm(phrase[:4])
    out = []
    for _ in range(7):
        out.append(int(mx.argmax(logits[-1]).item()))
        logits, (h, c) = lm(mx.array(out[-1:]), h, c)
    print("continuation of 'abra':", "".join(chr(97 + i) for i in out), h.shape, c.dtype)

    z = mx.zeros
    mistakes = [
        lambda: lm.lstm(z((2, 5, 7))),
        lambda: nn.Conv1d(6, 4, kernel_size=3, groups=4),
        lambda: nn.Conv1d(6, 4, kernel_size=3, groups=2)(z((1, 8, 4))),
        lambda: mx.conv1d(z((1, 8, 6)), z((3, 3, 3)), groups=2),
        lambda: mx.conv1d(z((1, 8, 6), mx.int32), z((4, 3, 6))),
        lambda: optim.Adam(learning_rate="cosine"),
        lambda: nn.MaxPool1d(2)(z((8,))),
        lambda: nn.AvgPool1d(2)(z((1, 4, 8, 2))),
        lambda: lm.update({"out": {"weight": z((3,)), "scale": z((3,))}}),
        lambda: nn.RNN(4, 3)(z((2, 0, 4))),
        lambda: nn.GroupNorm(3, 6)(z((2, 4, 5))),
        lambda: nn.LayerNorm(6)(z((2, 5))),
        lambda: mx.concatenate([z((2, 3)), z((3, 4))], axis=1),
    ]
    for mistake in mistakes:
        try:
            print("no error", mistake())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
