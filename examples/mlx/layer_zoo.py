"""A tour of mlx.nn's zoo: activations, pooling, upsampling, norms, dropout, positional
encodings and losses, each on a small input drawn with `mx.random`, in the shape of MLX's docs.

Every activation runs as a function and as a layer class (on large magnitudes and in float16 /
bfloat16 too), then the pooling, `Upsample`, normalisation, dropout, `Bilinear`, `Embedding`,
`ALiBi`, `RoPE` and sinusoidal-encoding layers, every loss of `nn.losses` with its options, a
small classifier trained for a few steps with `nn.value_and_grad` and SGD, the printout of a
model built from many layers and typical mistakes caught. Run on ember with
`python -m ember.run layer_zoo.py`.
"""

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

mx.random.seed(7)


def show(name, value):
    print(f"{name}: {value}")


def activations():
    print("== activations")
    x = mx.array([-100.0, -20.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 20.0, 100.0])
    functions = ["celu", "elu", "gelu", "gelu_approx", "gelu_fast_approx", "hard_shrink",
                 "hard_tanh", "hardswish", "leaky_relu", "log_sigmoid", "log_softmax", "mish",
                 "relu", "relu2", "relu6", "selu", "sigmoid", "silu", "softmax", "softmin",
                 "softplus", "softshrink", "softsign", "step", "tanh"]
    for name in functions:
        if hasattr(nn, name):
            show(name, getattr(nn, name)(x))
    show("celu alpha=2", nn.celu(x, alpha=2.0))
    show("elu alpha=0.5", nn.elu(x, alpha=0.5))
    show("leaky_relu 0.2", nn.leaky_relu(x, negative_slope=0.2))
    show("hard_shrink 1", nn.hard_shrink(x, lambd=1.0))
    show("softshrink 1", nn.softshrink(x, lambd=1.0))
    show("hard_tanh [-2,3]", nn.hard_tanh(x, min_val=-2.0, max_val=3.0))
    show("step 0.5", nn.step(x, threshold=0.5))
    show("prelu", nn.prelu(x, mx.array([0.1])))
    m = mx.random.normal((2, 6))
    show("glu", nn.glu(m))
    show("glu axis 0", nn.glu(m, axis=0))
    show("softmax axis 0", nn.softmax(m, axis=0))
    show("log_softmax axis 0", nn.log_softmax(m, axis=0))
    show("softmin axis 0", nn.softmin(m, axis=0))

    classes = [("CELU", {"alpha": 1.5}), ("ELU", {}), ("GELU", {}), ("GELU", {"approx": "precise"}),
               ("GELU", {"approx": "tanh"}), ("GELU", {"approx": "fast"}), ("GLU", {"axis": 0}),
               ("HardShrink", {}), ("HardTanh", {}), ("Hardswish", {}),
               ("LeakyReLU", {"negative_slope": 0.1}), ("LogSigmoid", {}), ("LogSoftmax", {}),
               ("Mish", {}), ("PReLU", {}), ("PReLU", {"num_parameters": 6, "init": 0.5}),
               ("ReLU", {}), ("ReLU2", {}), ("ReLU6", {}), ("SELU", {}), ("SiLU", {}),
               ("Sigmoid", {}), ("Softmax", {}), ("Softmin", {}), ("Softplus", {}),
               ("Softshrink", {"lambd": 0.25}), ("Softsign", {}), ("Step", {"threshold": 0.1}),
               ("Tanh", {})]
    for name, kwargs in classes:
        if not hasattr(nn, name):
            continue
        layer = getattr(nn, name)(**kwargs)
        print(f"{layer} {kwargs}: {layer(m * 4)}")
    print("PReLU parameters:", nn.PReLU(3, init=0.1).parameters())

    for dtype in (mx.float16, mx.bfloat16):
        h = (x * 0.37).astype(dtype)
        print("--", dtype)
        for name in ["gelu", "gelu_approx", "silu", "sigmoid", "softplus", "mish", "selu",
                     "log_sigmoid", "softmax", "log_softmax", "tanh", "hardswish", "elu"]:
            y = getattr(nn, name)(h)
            show(f"{name} {y.dtype}", y)
        big = mx.array([-70000.0, -300.0, 300.0, 65000.0]).astype(dtype)
        show("softplus big", nn.softplus(big))
        show("log_sigmoid big", nn.log_sigmoid(big))
        show("gelu big", nn.gelu(big))


def pooling():
    print("== pooling")
    x1 = mx.random.normal((2, 9, 3))
    x2 = mx.random.normal((1, 7, 6, 2))
    x3 = mx.random.normal((1, 5, 4, 6, 2))
    layers1 = [nn.MaxPool1d(3), nn.MaxPool1d(3, stride=2, padding=1), nn.AvgPool1d(2),
               nn.AvgPool1d(4, stride=1, padding=2)]
    for layer in layers1:
        y = layer(x1)
        print(layer, y.shape, y[0, :, 0])
    layers2 = [nn.MaxPool2d(2), nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0)),
               nn.AvgPool2d(2, stride=1), nn.AvgPool2d(3, stride=2, padding=1)]
    for layer in layers2:
        y = layer(x2)
        print(layer, y.shape, y[0, :, :, 1])
    layers3 = [nn.MaxPool3d(2), nn.AvgPool3d((2, 2, 3), stride=(1, 2, 3), padding=(1, 1, 0))]
    for layer in layers3:
        y = layer(x3)
        print(layer, y.shape, y.sum(axis=(1, 2, 3)))
    show("int32 max pool", nn.MaxPool1d(2)(mx.arange(12).reshape(1, 6, 2)))
    show("float16 avg pool", nn.AvgPool1d(2)(x1[:1, :4, :1].astype(mx.float16)).flatten())


def upsampling():
    print("== upsample")
    x = mx.arange(1, 7, dtype=mx.float32).reshape(1, 2, 3, 1)
    setups = [dict(scale_factor=2), dict(scale_factor=(2, 1.5)),
              dict(scale_factor=2, mode="linear"),
              dict(scale_factor=2, mode="linear", align_corners=True),
              dict(scale_factor=(1.5, 2), mode="cubic"),
              dict(scale_factor=2, mode="cubic", align_corners=True)]
    for kwargs in setups:
        layer = nn.Upsample(**kwargs)
        y = layer(x)
        print(layer, y.shape)
        print(y[0, :, :, 0])
    seq = mx.array([[[0.0], [1.0], [4.0]]])
    show("1d linear", nn.Upsample(scale_factor=2, mode="linear")(seq).flatten())
    show("1d nearest 2.5", nn.Upsample(scale_factor=2.5)(seq).flatten())
    vol = mx.arange(8, dtype=mx.float32).reshape(1, 2, 2, 2, 1)
    show("3d linear", nn.Upsample(scale_factor=(1, 2, 1), mode="linear")(vol).flatten())


def normalisation():
    print("== normalisation")
    x = mx.random.normal((2, 3, 4, 8)) * 3 + 1
    layers = [nn.LayerNorm(8), nn.LayerNorm(8, affine=False), nn.LayerNorm(8, bias=False),
              nn.RMSNorm(8), nn.RMSNorm(8, eps=1e-2), nn.GroupNorm(4, 8),
              nn.GroupNorm(4, 8, pytorch_compatible=True), nn.GroupNorm(2, 8, affine=False),
              nn.InstanceNorm(8), nn.InstanceNorm(8, affine=True),
              nn.BatchNorm(8, track_running_stats=False), nn.BatchNorm(8, affine=False),
              nn.BatchNorm(8, momentum=0.3)]
    for layer in layers:
        y = layer(x)
        print(layer, sorted(layer.parameters()), y[1, 2, 3, :4], y.std().item())
    bn = nn.BatchNorm(8, momentum=0.3)
    bn(x)
    print("running stats:", bn.running_mean[:3], bn.running_var[:3])
    bn.eval()
    print("eval:", bn(x)[0, 0, 0, :3])
    ln = nn.LayerNorm(8)
    ln.weight = mx.linspace(0.5, 2, 8)
    ln.bias = mx.full((8,), 0.25)
    show("LayerNorm with weights", ln(x[0, 0, 0]))
    show("LayerNorm float16", nn.LayerNorm(8)(x[0, 0, :2].astype(mx.float16)))
    show("RMSNorm bfloat16", nn.RMSNorm(8)(x[0, 0, :2].astype(mx.bfloat16)))
    show("BatchNorm 2d input", nn.BatchNorm(8)(x[0, 0])[:, 0])
    show("InstanceNorm 3d input", nn.InstanceNorm(8)(x[0])[1, 2])


def dropout_and_friends():
    print("== dropout, identity, bilinear, embedding")
    x = mx.ones((2, 3, 4, 5))
    x5 = mx.ones((1, 2, 2, 2, 6))
    for layer, inp in [(nn.Dropout(0.25), x), (nn.Dropout2d(0.5), x), (nn.Dropout3d(0.4), x5),
                       (nn.Dropout(0.0), x)]:
        y = layer(inp)
        kept = (y != 0).astype(mx.float32).mean().item()
        print(layer, "train kept", round(kept, 2), "scale", y.max().item(), end=" ")
        layer.eval()
        print("| eval equal", mx.array_equal(layer(inp), inp).item())
    y = nn.Dropout2d(0.5)(x)
    whole = (y == 0).all(axis=(1, 2)) | (y != 0).all(axis=(1, 2))
    print("Dropout2d channel-wise:", mx.all(whole).item())
    print(nn.Identity(), nn.Identity(3, k=4)(x[0, 0, 0]))
    bil = nn.Bilinear(3, 4, 2)
    a, b = mx.random.normal((5, 3)), mx.random.normal((5, 4))
    print(bil, bil(a, b)[:2], bil.weight.shape)
    print(nn.Bilinear(2, 2, 3, bias=False), sorted(nn.Bilinear(2, 2, 3, bias=False).parameters()))
    emb = nn.Embedding(6, 4)
    ids = mx.array([[0, 5, 2], [1, 1, 3]])
    print(emb, emb(ids).shape, emb(ids)[1, 0])
    h = mx.random.normal((2, 4))
    print("as_linear:", emb.as_linear(h), mx.allclose(emb.as_linear(h), h @ emb.weight.T).item())


def positional():
    print("== positional encodings")
    scores = mx.zeros((1, 4, 3, 3))
    alibi = nn.ALiBi()
    print(alibi, alibi(scores)[0, :, -1])
    show("alibi with mask", nn.ALiBi()(scores, mask=mx.array([0.0, -1e9, 0.0]))[0, 1])
    show("alibi offset", nn.ALiBi.create_alibi_matrix(q_sequence_length=2, k_sequence_length=4,
                                                       num_heads=2, offset=2))
    q = mx.random.normal((1, 2, 5, 8))
    for rope in [nn.RoPE(8), nn.RoPE(8, traditional=True), nn.RoPE(6, base=500.0),
                 nn.RoPE(8, scale=0.5), nn.RoPE(4, traditional=True, base=100.0, scale=2.0)]:
        print(rope, rope(q)[0, 1, 3], rope(q, offset=3)[0, 0, 1, :3])
    show("rope float16", nn.RoPE(8)(q.astype(mx.float16))[0, 0, 4])
    pos = mx.arange(5)
    for pe in [nn.SinusoidalPositionalEncoding(6),
               nn.SinusoidalPositionalEncoding(6, cos_first=True, scale=1.0),
               nn.SinusoidalPositionalEncoding(4, min_freq=0.01, max_freq=2.0, full_turns=True)]:
        print(pe, pe(pos)[-1], pe(pos).shape)


def losses():
    print("== losses")
    L = nn.losses
    logits = mx.random.normal((4, 5))
    targets = mx.array([0, 3, 4, 1])
    probs = mx.softmax(logits, axis=-1)
    onehot = mx.eye(5)[targets]
    weights = mx.array([1.0, 0.5, 2.0, 0.0])
    for reduction in ["none", "mean", "sum"]:
        show(f"cross_entropy {reduction}", L.cross_entropy(logits, targets, reduction=reduction))
    show("cross_entropy weights", L.cross_entropy(logits, targets, weights=weights))
    show("cross_entropy smoothing", L.cross_entropy(logits, targets, label_smoothing=0.2))
    show("cross_entropy probs", L.cross_entropy(logits, onehot * 0.9 + 0.02))
    show("cross_entropy axis 0", L.cross_entropy(logits.T, targets, axis=0))
    show("nll_loss", L.nll_loss(mx.log(probs), targets, reduction="mean"))
    show("nll_loss axis 0", L.nll_loss(mx.log(probs).T, targets, axis=0))
    bl = mx.random.normal((6,))
    bt = mx.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    show("bce logits", L.binary_cross_entropy(bl, bt))
    show("bce probs", L.binary_cross_entropy(mx.sigmoid(bl), bt, with_logits=False,
                                             reduction="none"))
    show("bce weights sum", L.binary_cross_entropy(bl, bt, weights=mx.arange(6), reduction="sum"))
    show("bce saturated", L.binary_cross_entropy(mx.array([0.0, 1.0]), mx.array([1.0, 0.0]),
                                                 with_logits=False))
    p, t = mx.random.normal((3, 4)), mx.random.normal((3, 4))
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "log_cosh_loss"]:
        fn = getattr(L, name)
        show(name, [round(fn(p, t, reduction=r).sum().item(), 5) for r in ["none", "mean", "sum"]])
    show("smooth_l1 beta 0.5", L.smooth_l1_loss(p, t, beta=0.5, reduction="none")[0])
    show("huber delta 0.3", L.huber_loss(p, t, delta=0.3, reduction="mean"))
    show("kl_div", L.kl_div_loss(mx.log(probs), mx.softmax(-logits, axis=-1)))
    show("kl_div axis 0 sum", L.kl_div_loss(mx.log(probs).T, mx.softmax(-logits, axis=-1).T,
                                            axis=0, reduction="sum"))
    signs = mx.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    show("hinge", L.hinge_loss(bl, signs))
    show("hinge mean", L.hinge_loss(bl, signs, reduction="mean"))
    a, b = mx.random.normal((6,)), mx.random.normal((6,))
    show("margin_ranking", L.margin_ranking_loss(a, b, signs))
    show("margin_ranking 0.5 mean", L.margin_ranking_loss(a, b, signs, margin=0.5,
                                                          reduction="mean"))
    anc, pos_, neg = mx.random.normal((3, 4)), mx.random.normal((3, 4)), mx.random.normal((3, 4))
    show("triplet", L.triplet_loss(anc, pos_, neg))
    show("triplet p=1 margin 2 sum", L.triplet_loss(anc, pos_, neg, p=1, margin=2.0,
                                                    reduction="sum"))
    show("triplet axis 0", L.triplet_loss(anc.T, pos_.T, neg.T, axis=0))
    show("cosine_similarity", L.cosine_similarity_loss(anc, pos_))
    show("cosine_similarity axis 0 mean", L.cosine_similarity_loss(anc, pos_, axis=0,
                                                                   reduction="mean"))
    var = mx.random.uniform(0.1, 2.0, (3, 4))
    show("gaussian_nll", L.gaussian_nll_loss(p, t, var))
    show("gaussian_nll full none", L.gaussian_nll_loss(p, t, var, full=True, reduction="none")[0])
    show("gaussian_nll eps", L.gaussian_nll_loss(p, t, mx.zeros((3, 4)), eps=0.5,
                                                 reduction="sum"))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 16), nn.LayerNorm(16), nn.GELU(approx="tanh"),
                                    nn.Dropout(0.1), nn.Linear(16, 16), nn.Mish(),
                                    nn.Linear(16, 3))

    def __call__(self, x):
        return self.layers(x)


def train_classifier():
    print("== classifier")
    centres = mx.array([[2.0, 0.0, 0.0, -1.0], [0.0, 2.0, -1.0, 0.0], [-1.0, -1.0, 2.0, 2.0]])
    labels = mx.random.randint(0, 3, (48,))
    data = centres[labels] + 0.5 * mx.random.normal((48, 4))
    model = Classifier()
    mx.eval(model.parameters())
    model.eval()  # dropout off, so the steps are deterministic

    def loss_fn(model, x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    step = nn.value_and_grad(model, loss_fn)
    opt = optim.SGD(learning_rate=0.3, momentum=0.5)
    for i in range(8):
        loss, grads = step(model, data, labels)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        acc = (mx.argmax(model(data), axis=-1) == labels).astype(mx.float32).mean()
        print(f"step {i} loss {loss.item():.4f} acc {acc.item():.3f}")


class Zoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.pe = nn.SinusoidalPositionalEncoding(8)
        self.rope = nn.RoPE(8, traditional=True, base=1000.0)
        self.conv = nn.Conv1d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool1d(2, stride=2)
        self.norms = [nn.LayerNorm(8, bias=False), nn.RMSNorm(8), nn.GroupNorm(2, 8)]
        self.acts = {"a": nn.PReLU(), "b": nn.GELU(approx="fast"), "c": nn.Step(0.5)}
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Bilinear(8, 8, 4), nn.Identity())
        self.up = nn.Upsample(scale_factor=2, mode="linear", align_corners=True)
        self.bn = nn.BatchNorm(8, affine=False)

    def __call__(self, ids):
        return self.conv(self.embed(ids))


def printout():
    print("== module printout")
    model = Zoo()
    print(model)
    print("leaf modules:", len(model.leaf_modules()), "children:", sorted(model.children()))
    print("parameters:", sum(v.size for _, v in tree_flatten(model.parameters())))
    print(model.embed(mx.array([[1, 2, 3]])).shape, model(mx.array([[1, 2, 3, 4]])).shape)


def mistakes():
    print("== typical mistakes")
    cases = [
        lambda: nn.softmax(mx.array([1.0, 2.0]), axis=2),
        lambda: nn.glu(mx.ones((2, 3))),
        lambda: nn.MaxPool2d(2)(mx.ones((4, 4))),
        lambda: nn.AvgPool1d(5)(mx.ones((1, 3, 2))),
        lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
        lambda: nn.LayerNorm(4)(mx.ones((2, 5))),
        lambda: nn.GroupNorm(3, 8)(mx.ones((1, 4, 8))),
        lambda: nn.BatchNorm(4)(mx.ones((2, 5))),
        lambda: nn.Dropout(1.0),
        lambda: nn.Dropout2d(-0.1),
        lambda: nn.Bilinear(3, 4, 2)(mx.ones((2, 3)), mx.ones((2, 3))),
        lambda: nn.Embedding(4, 2)(mx.array([0.5])),
        lambda: nn.RoPE(8)(mx.ones((2, 3))),
        lambda: nn.losses.cross_entropy(mx.ones((2, 3)), mx.array([0, 1]), reduction="avg"),
        lambda: nn.losses.mse_loss(mx.ones((2, 3)), mx.ones((3, 2))),
        lambda: nn.losses.cross_entropy(mx.ones((2, 3)), mx.array([0, 1]), label_smoothing=1.5),
        lambda: nn.losses.binary_cross_entropy(mx.ones(3), mx.ones(2)),
        lambda: nn.losses.kl_div_loss(mx.ones((2, 3)), mx.ones((2, 3)), axis=3),
        lambda: nn.losses.gaussian_nll_loss(mx.ones(3), mx.ones(3), mx.ones(2)),
        lambda: nn.Linear(3, 2)(mx.ones((2, 4))),
        lambda: nn.Sequential(nn.ReLU())(mx.ones(2), mx.ones(2)),
    ]
    for case in cases:
        try:
            print("no error", case())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


def main():
    activations()
    pooling()
    upsampling()
    normalisation()
    dropout_and_friends()
    positional()
    losses()
    train_classifier()
    printout()
    mistakes()


if __name__ == "__main__":
    main()
