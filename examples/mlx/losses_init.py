"""mlx.nn.losses, mlx.nn.init and the training utilities around them, on data drawn with
seeded keys, in the shape of MLX's docs.

Every loss of `nn.losses` with each reduction, printed as values and as gradients (`mx.grad`,
`nn.value_and_grad`), the dtypes of their results for float16 / bfloat16 inputs; every
`nn.init` initializer's statistics under `mx.random.seed` (mode and gain for He, gain for
Glorot), `model.apply(init_fn)` / `apply_to_modules`; `nn.utils.checkpoint` of a block against
the plain one; `update` / `update_modules`, `trainable_parameters` after `freeze`;
`clip_grad_norm`, optimizer state after a step, `opt.init`, saving and restoring optimizer
state with `tree_flatten` + `mx.savez`; typical mistakes caught. Run on ember with
`python -m ember.run losses_init.py`.
"""

import os
import tempfile

from mlx.utils import tree_flatten, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

L = nn.losses
REDUCTIONS = ["none", "mean", "sum"]


def fmt(a, digits=4):
    """An array's values as a flat list rounded to `digits` decimals."""
    return [round(v, digits) for v in mx.array(a).astype(mx.float32).reshape(-1).tolist()]


def data():
    """Inputs for the losses, each drawn from its own key."""
    k = mx.random.split(mx.random.key(3), 8)
    logits = mx.random.normal((4, 5), key=k[0])
    return {
        "logits": logits,
        "labels": mx.random.randint(0, 5, (4,), key=k[1]),
        "probs": mx.softmax(mx.random.normal((4, 5), key=k[2]), axis=-1),
        "p": mx.random.normal((3, 4), key=k[3]),
        "t": mx.random.normal((3, 4), key=k[4]),
        "var": mx.random.uniform(0.1, 2.0, (3, 4), key=k[5]),
        "bits": (mx.random.uniform(shape=(3, 4), key=k[6]) > 0.5).astype(mx.float32),
        "trip": mx.random.normal((3, 3, 4), key=k[7]),
    }


def loss_cases(d):
    """(name, loss of the first argument, first argument) for every loss and option."""
    lg, y, pr, p, t, v, b = (d[k] for k in ["logits", "labels", "probs", "p", "t", "var", "bits"])
    a, pos, neg = d["trip"]
    signs = mx.where(b > 0, 1.0, -1.0)
    w5 = mx.array([1.0, 2.0, 0.5, 1.0, 3.0])
    cases = []
    for r in REDUCTIONS:
        cases += [
            (f"ce idx {r}", lambda x, r=r: L.cross_entropy(x, y, reduction=r), lg),
            (f"ce probs {r}", lambda x, r=r: L.cross_entropy(x, pr, reduction=r), lg),
            (f"bce logits {r}", lambda x, r=r: L.binary_cross_entropy(x, b, reduction=r), p),
            (f"bce probs {r}", lambda x, r=r: L.binary_cross_entropy(
                mx.sigmoid(x), b, with_logits=False, reduction=r), p),
            (f"l1 {r}", lambda x, r=r: L.l1_loss(x, t, reduction=r), p),
            (f"mse {r}", lambda x, r=r: L.mse_loss(x, t, reduction=r), p),
            (f"nll {r}", lambda x, r=r: L.nll_loss(nn.log_softmax(x), y, reduction=r), lg),
            (f"kl_div {r}", lambda x, r=r: L.kl_div_loss(nn.log_softmax(x), pr, reduction=r), lg),
            (f"smooth_l1 {r}", lambda x, r=r: L.smooth_l1_loss(x, t, beta=0.5, reduction=r), p),
            (f"huber {r}", lambda x, r=r: L.huber_loss(x, t, delta=0.7, reduction=r), p),
            (f"log_cosh {r}", lambda x, r=r: L.log_cosh_loss(x, t, reduction=r), p),
            (f"hinge {r}", lambda x, r=r: L.hinge_loss(x, signs, reduction=r), p),
            (f"margin_ranking {r}", lambda x, r=r: L.margin_ranking_loss(
                x, t, signs, margin=0.3, reduction=r), p),
            (f"triplet {r}", lambda x, r=r: L.triplet_loss(x, pos, neg, reduction=r), a),
            (f"cosine {r}", lambda x, r=r: L.cosine_similarity_loss(x, t, reduction=r), p),
            (f"gaussian_nll {r}", lambda x, r=r: L.gaussian_nll_loss(x, t, v, reduction=r), p),
        ]
    cases += [
        ("ce weights", lambda x: L.cross_entropy(x, y, weights=mx.array([1.0, 0.5, 2.0, 0.0])), lg),
        ("ce class weights probs", lambda x: L.cross_entropy(x, pr * w5, reduction="sum"), lg),
        ("ce axis 0", lambda x: L.cross_entropy(x.T, y, axis=0), lg),
        ("ce smoothing 0.2", lambda x: L.cross_entropy(x, y, label_smoothing=0.2), lg),
        ("ce smoothing probs", lambda x: L.cross_entropy(x, pr, label_smoothing=0.1,
                                                         reduction="mean"), lg),
        ("bce weights", lambda x: L.binary_cross_entropy(x, b, weights=mx.abs(t),
                                                         reduction="sum"), p),
        ("bce probs weights", lambda x: L.binary_cross_entropy(
            mx.sigmoid(x), b, weights=v, with_logits=False, reduction="none"), p),
        ("nll axis 0", lambda x: L.nll_loss(nn.log_softmax(x, axis=0), mx.array([0, 3, 1, 2, 0]),
                                            axis=0), lg),
        ("kl_div axis 0", lambda x: L.kl_div_loss(nn.log_softmax(x, axis=0), pr, axis=0), lg),
        ("smooth_l1 beta 2", lambda x: L.smooth_l1_loss(x, t, beta=2.0), p),
        ("huber delta 0.1", lambda x: L.huber_loss(x, t, delta=0.1, reduction="mean"), p),
        ("triplet p1 m2 sum", lambda x: L.triplet_loss(x, pos, neg, p=1, margin=2.0,
                                                       reduction="sum"), a),
        ("triplet p3 eps", lambda x: L.triplet_loss(x, x, neg, p=3, eps=0.5), a),
        ("triplet swap", lambda x: L.triplet_loss(x, pos, mx.minimum(neg, pos), margin=0.5), a),
        ("triplet axis 0", lambda x: L.triplet_loss(x.T, pos.T, neg.T, axis=0), a),
        ("cosine axis 0 eps", lambda x: L.cosine_similarity_loss(x, t, axis=0, eps=0.1), p),
        ("cosine zeros", lambda x: L.cosine_similarity_loss(x * 0, t, reduction="mean"), p),
        ("gaussian_nll full", lambda x: L.gaussian_nll_loss(x, t, v, full=True,
                                                            reduction="sum"), p),
        ("gaussian_nll eps", lambda x: L.gaussian_nll_loss(x, t, v * 0, eps=0.25), p),
    ]
    return cases


def losses(d):
    print("== losses: values and gradients")
    for name, fn, x in loss_cases(d):
        out = fn(x)
        grad = mx.grad(lambda z, fn=fn: fn(z).sum())(x)
        print(f"{name}: {out.shape} {out.dtype} {fmt(out)}")
        print(f"  grad {grad.shape} {fmt(grad)}")


def half_losses(d):
    print("== losses in float16 / bfloat16")
    for dt in [mx.float16, mx.bfloat16]:
        lg, p, t = d["logits"].astype(dt), d["p"].astype(dt), d["t"].astype(dt)
        y, b, v = d["labels"], d["bits"].astype(dt), d["var"].astype(dt)
        a, pos, neg = d["trip"].astype(dt)
        outs = {
            "ce": L.cross_entropy(lg, y),
            "ce probs": L.cross_entropy(lg, d["probs"]),
            "ce smoothing": L.cross_entropy(lg, y, label_smoothing=0.1, reduction="mean"),
            "bce": L.binary_cross_entropy(p, b),
            "bce probs": L.binary_cross_entropy(mx.sigmoid(p), b, with_logits=False),
            "bce f32 targets": L.binary_cross_entropy(p, d["bits"]),
            "l1": L.l1_loss(p, t), "mse": L.mse_loss(p, t),
            "nll": L.nll_loss(nn.log_softmax(lg), y, reduction="sum"),
            "kl_div": L.kl_div_loss(nn.log_softmax(lg), d["probs"].astype(dt)),
            "smooth_l1": L.smooth_l1_loss(p, t), "huber": L.huber_loss(p, t),
            "log_cosh": L.log_cosh_loss(p, t), "hinge": L.hinge_loss(p, t),
            "margin": L.margin_ranking_loss(p, t, mx.sign(t)),
            "triplet": L.triplet_loss(a, pos, neg), "cosine": L.cosine_similarity_loss(p, t),
            "gaussian_nll": L.gaussian_nll_loss(p, t, v),
            "gaussian_nll full": L.gaussian_nll_loss(p, t, v, full=True),
        }
        for name, out in outs.items():
            print(f"{dt} {name}: {out.dtype} {fmt(out, 2)}")
        g = mx.grad(lambda z, t=t: L.mse_loss(z, t))(p)
        print(f"{dt} mse grad: {g.dtype} {fmt(g, 2)}")
        g = mx.grad(lambda z, y=y: L.cross_entropy(z, y, reduction="sum"))(lg)
        print(f"{dt} ce grad: {g.dtype} {fmt(g)}")
        g = mx.grad(lambda z, b=b: L.binary_cross_entropy(z, b, reduction="sum"))(p)
        print(f"{dt} bce grad: {g.dtype} {fmt(g)}")
        g = mx.grad(lambda z, y=y: L.nll_loss(nn.log_softmax(z), y, reduction="sum"))(lg)
        print(f"{dt} nll grad: {g.dtype} {fmt(g)}")


def value_and_grad_model(d):
    print("== nn.value_and_grad on a model")
    mx.random.seed(11)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 5))

    def loss_fn(m, x, y):
        return L.cross_entropy(m(x), y, label_smoothing=0.05, reduction="mean")

    x = d["trip"].reshape(-1, 4)[:4]
    loss, grads = nn.value_and_grad(model, loss_fn)(model, x, d["labels"])
    print("loss", round(loss.item(), 5), loss.dtype, loss.shape)
    for k, g in tree_flatten(grads):
        print(" ", k, g.shape, round(mx.abs(g).sum().item(), 5), round(mx.abs(g).max().item(), 5))


def stats(a):
    a = a.astype(mx.float32)
    return (f"{a.shape} mean {a.mean().item():.4f} std {mx.sqrt(a.var()).item():.4f} "
            f"min {a.min().item():.4f} max {a.max().item():.4f}")


def inits():
    print("== nn.init statistics")
    w = mx.zeros((64, 32))
    conv = mx.zeros((16, 3, 3, 8))
    mx.random.seed(5)
    cases = [
        ("constant 0.3", nn.init.constant(0.3), w),
        ("constant int32", nn.init.constant(2, dtype=mx.int32), w),
        ("normal", nn.init.normal(), w),
        ("normal mean 2 std 0.1", nn.init.normal(mean=2.0, std=0.1), w),
        ("normal float16", nn.init.normal(std=3.0, dtype=mx.float16), conv),
        ("uniform", nn.init.uniform(), w),
        ("uniform -3 -1", nn.init.uniform(low=-3.0, high=-1.0), conv),
        ("uniform bfloat16", nn.init.uniform(dtype=mx.bfloat16), w),
        ("identity", nn.init.identity(), mx.zeros((5, 5))),
        ("glorot_normal", nn.init.glorot_normal(), w),
        ("glorot_normal conv", nn.init.glorot_normal(), conv),
        ("glorot_uniform", nn.init.glorot_uniform(), w),
        ("glorot_uniform f16", nn.init.glorot_uniform(mx.float16), conv),
        ("he_normal", nn.init.he_normal(), w),
        ("he_uniform", nn.init.he_uniform(), conv),
    ]
    for name, init, a in cases:
        out = init(a)
        print(f"{name}: {out.dtype} {stats(out)}")
    print("identity values", nn.init.identity()(mx.zeros((3, 3))).tolist())
    print("identity dtype", nn.init.identity(mx.bfloat16)(mx.zeros((2, 2))).dtype)
    for gain in [0.5, 2.0]:
        print(f"glorot_normal gain {gain}: {stats(nn.init.glorot_normal()(w, gain=gain))}")
        print(f"glorot_uniform gain {gain}: {stats(nn.init.glorot_uniform()(conv, gain))}")
    for mode in ["fan_in", "fan_out"]:
        for gain in [1.0, 3.0]:
            hn = nn.init.he_normal()(conv, mode=mode, gain=gain)
            hu = nn.init.he_uniform()(w, mode, gain)
            print(f"he_normal {mode} gain {gain}: {stats(hn)}")
            print(f"he_uniform {mode} gain {gain}: {stats(hu)}")
    # glorot_uniform draws within +-sqrt(6 / (fan_in + fan_out))
    limit = (6.0 / (32 + 64)) ** 0.5
    inside = (mx.abs(nn.init.glorot_uniform()(w)) <= limit).all()
    print("glorot_uniform within bound", inside.item())
    mx.random.seed(5)
    a1 = nn.init.normal()(w)
    mx.random.seed(5)
    print("seeded repeat equal", mx.array_equal(a1, nn.init.normal()(w)).item())


class Block(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.l1 = nn.Linear(dims, dims * 2)
        self.l2 = nn.Linear(dims * 2, dims)
        self.norm = nn.LayerNorm(dims)

    def __call__(self, x):
        return x + self.l2(nn.gelu(self.l1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, dims=4, checkpointed=False):
        super().__init__()
        self.blocks = [Block(dims), Block(dims)]
        self.head = nn.Linear(dims, 3)
        self.checkpointed = checkpointed

    def __call__(self, x):
        for b in self.blocks:
            x = nn.utils.checkpoint(b)(x) if self.checkpointed else b(x)
        return self.head(x)


def modules(d):
    print("== apply / apply_to_modules / update / freeze")
    mx.random.seed(2)
    net = Net()
    net.apply(nn.init.constant(0.1))
    flat = tree_flatten(net.parameters())
    print("apply constant", {k: round(v.sum().item(), 4) for k, v in flat})
    mx.random.seed(4)
    net.apply(nn.init.normal(std=0.02), filter_fn=lambda m, k, v: k == "weight" and v.ndim == 2)
    flat = tree_flatten(net.parameters())
    print("apply filter", [(k, round(v.sum().item(), 4)) for k, v in flat])
    # the filter sees every level of the tree: containers must pass it for leaves to be reached
    net.apply(nn.init.normal(std=0.02), filter_fn=lambda m, k, v: not isinstance(v, mx.array)
              or (k == "weight" and v.ndim == 2))
    flat = tree_flatten(net.parameters())
    print("apply filter (containers pass)", [(k, round(v.sum().item(), 4)) for k, v in flat])

    def reinit(path, m):
        if isinstance(m, nn.Linear):
            m.weight = nn.init.he_uniform()(m.weight)
            if "bias" in m:
                m.bias = mx.zeros_like(m.bias)
    mx.random.seed(9)
    net.apply_to_modules(reinit)
    print("apply_to_modules", [(k, round(v.std().item() if v.ndim == 2 else v.sum().item(), 4))
                               for k, v in tree_flatten(net.parameters())])
    names = []
    net.apply_to_modules(lambda path, m: names.append((path, type(m).__name__)))
    print("visited", names)

    print("params", len(tree_flatten(net.parameters())),
          "trainable", len(tree_flatten(net.trainable_parameters())))
    net.freeze()
    print("after freeze", len(tree_flatten(net.trainable_parameters())))
    net.head.unfreeze()
    print("head unfrozen", [k for k, _ in tree_flatten(net.trainable_parameters())])
    net.unfreeze()
    net.blocks[0].freeze(keys=["weight"])
    print("block0 weights frozen", [k for k, _ in tree_flatten(net.trainable_parameters())])
    net.unfreeze()
    net.update({"head": {"bias": mx.array([1.0, 2.0, 3.0])}})
    print("update head bias", net.head.bias.tolist())
    net.update_modules({"blocks": [{}, {"norm": nn.RMSNorm(4)}]})
    print("update_modules", type(net.blocks[1].norm).__name__,
          sorted(k for k, _ in tree_flatten(net.blocks[1].parameters())))

    print("== checkpoint")
    mx.random.seed(13)
    plain = Net()
    ckpt = Net(checkpointed=True)
    ckpt.update(plain.parameters())
    x = mx.random.normal((5, 4), key=mx.random.key(1))
    y = mx.array([0, 2, 1, 1, 0])

    def loss_fn(m):
        return L.cross_entropy(m(x), y, reduction="mean")
    v1, g1 = nn.value_and_grad(plain, loss_fn)(plain)
    v2, g2 = nn.value_and_grad(ckpt, loss_fn)(ckpt)
    same = all(mx.allclose(a, b, atol=1e-6).item()
               for (_, a), (_, b) in zip(tree_flatten(g1), tree_flatten(g2)))
    print("loss", round(v1.item(), 5), round(v2.item(), 5), "grads equal", same)
    print("grad keys", [k for k, _ in tree_flatten(g2)][:4])
    f = nn.utils.checkpoint(plain.blocks[0], lambda z: (plain.blocks[0](z) ** 2).sum())
    direct = (plain.blocks[0](x) ** 2).sum()
    print("checkpoint with fn", round(f(x).item(), 5), round(direct.item(), 5))
    return plain, loss_fn


def optimizers(net, loss_fn):
    print("== optimizers")
    _, grads = nn.value_and_grad(net, loss_fn)(net)
    total = mx.sqrt(sum((g * g).sum() for _, g in tree_flatten(grads)))
    for max_norm in [0.01, 100.0]:
        clipped, norm = optim.clip_grad_norm(grads, max_norm)
        cn = mx.sqrt(sum((g * g).sum() for _, g in tree_flatten(clipped)))
        print(f"clip {max_norm}: norm {norm.item():.5f} (total {total.item():.5f}) "
              f"clipped {cn.item():.5f} {type(norm).__name__} {norm.dtype}")
    for name, opt in [("SGD", optim.SGD(0.1, momentum=0.9)), ("Adam", optim.Adam(1e-2)),
                      ("AdamW", optim.AdamW(1e-2)), ("RMSprop", optim.RMSprop(1e-2)),
                      ("Adagrad", optim.Adagrad(1e-2)), ("Lion", optim.Lion(1e-3)),
                      ("Adafactor", optim.Adafactor())]:
        print(name, "before", sorted(opt.state.keys()))
        opt.init(net.trainable_parameters())
        st = opt.state
        print(name, "after init", sorted(st.keys()), sorted(st["head"].keys()) if "head" in st
              else None, sorted(st["head"]["weight"].keys()))
    opt = optim.Adam(learning_rate=1e-2, betas=[0.8, 0.99])
    for i in range(3):
        loss, grads = nn.value_and_grad(net, loss_fn)(net)
        opt.update(net, grads)
        mx.eval(net.parameters(), opt.state)
        print(f"adam step {i} loss {loss.item():.5f} step {opt.step.item()} "
              f"lr {opt.learning_rate.item():.4f}")
    flat = tree_flatten(opt.state)
    print("state keys", [k for k, _ in flat][:6], len(flat))
    print("state", [(k, v.shape, v.dtype) for k, v in flat if "head" in k or "." not in k])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "opt.npz")
        mx.savez(path, **dict(flat))
        loaded = mx.load(path)
        print("saved", sorted(loaded.keys())[:4], len(loaded))
        fresh = optim.Adam(learning_rate=1e-2, betas=[0.8, 0.99])
        fresh.state = tree_unflatten(list(loaded.items()))
        print("restored step", fresh.step.item(), "lr", round(fresh.learning_rate.item(), 4))
        net2 = Net()
        net2.update(net.parameters())
        _, grads = nn.value_and_grad(net, loss_fn)(net)
        opt.update(net, grads)
        fresh.update(net2, grads)
        same = all(mx.allclose(a, b).item() for (_, a), (_, b)
                   in zip(tree_flatten(net.parameters()), tree_flatten(net2.parameters())))
        print("resumed step equal", same, opt.step.item(), fresh.step.item())
    sched = optim.SGD(learning_rate=optim.step_decay(0.1, 0.5, 1))
    sched.init(net.trainable_parameters())
    print("schedule state", sorted(sched.state.keys()), sched.learning_rate.item())


def mistakes(d):
    print("== typical mistakes")
    lg, y, p, t = d["logits"], d["labels"], d["p"], d["t"]
    tries = [
        ("ce wrong target shape", lambda: L.cross_entropy(lg, y[:3])),
        ("ce probs wrong shape", lambda: L.cross_entropy(lg, d["probs"][:, :4])),
        ("ce bad reduction", lambda: L.cross_entropy(lg, y, reduction="average")),
        ("ce smoothing with probs", lambda: L.cross_entropy(lg, d["probs"], label_smoothing=1.0)),
        ("ce negative smoothing", lambda: L.cross_entropy(lg, y, label_smoothing=-0.1)),
        ("ce 0-d", lambda: L.cross_entropy(mx.array(2.0), mx.array(1))),
        ("ce empty mean", lambda: L.cross_entropy(mx.zeros((0, 5)), y[:0], reduction="mean")),
        ("ce integer logits", lambda: L.cross_entropy(mx.array([[1, 2, 3]]), mx.array([1]))),
        ("mse shape", lambda: L.mse_loss(p, t.T)),
        ("l1 bad reduction", lambda: L.l1_loss(p, t, reduction=None)),
        ("bce shape", lambda: L.binary_cross_entropy(p, t[:2])),
        ("nll bad reduction", lambda: L.nll_loss(lg, y, reduction="max")),
        ("hinge shape", lambda: L.hinge_loss(p, t[:, :2])),
        ("gaussian_nll var shape", lambda: L.gaussian_nll_loss(p, t, d["var"][:, :1].T)),
        ("cosine shape", lambda: L.cosine_similarity_loss(p, t[:2])),
        ("kl_div shape", lambda: L.kl_div_loss(lg, d["probs"][:2])),
        ("triplet shape", lambda: L.triplet_loss(p, t, t[:1, :1])),
        ("glorot 1-d", lambda: nn.init.glorot_uniform()(mx.zeros((5,)))),
        ("he 1-d", lambda: nn.init.he_normal()(mx.zeros((5,)))),
        ("he bad mode", lambda: nn.init.he_uniform()(mx.zeros((3, 3)), mode="fan_avg")),
        ("identity non-square", lambda: nn.init.identity()(mx.zeros((2, 3)))),
        ("clip non-tree", lambda: optim.clip_grad_norm(mx.ones(3), 1.0)),
        ("update bad key", lambda: nn.Linear(2, 2).update({"weights": mx.ones((2, 2))})),
    ]
    for name, fn in tries:
        try:
            out = fn()
            outs = out if isinstance(out, tuple) else (out,)
            mx.eval(outs)
            print(f"{name}: no error", [(o.dtype, fmt(o)) for o in outs])
        except Exception as e:  # noqa: BLE001  (the error is what is shown)
            print(f"{name}: {type(e).__name__}: {e}")


def main():
    d = data()
    losses(d)
    half_losses(d)
    value_and_grad_model(d)
    inits()
    net, loss_fn = modules(d)
    optimizers(net, loss_fn)
    mistakes(d)


if __name__ == "__main__":
    main()
