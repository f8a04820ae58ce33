"""Model surgery with the mlx.nn.Module API and the mlx.utils tree functions.

A model built from nested lists and dicts of submodules is inspected as trees of shapes
(parameters, trainable parameters, children, leaf / named modules), frozen and unfrozen
(keys=, recurse=, strict=), updated (update / update_modules, strict), saved and reloaded
(.npz / .safetensors, strict mismatches), mapped (apply, apply_to_modules, set_dtype with a
predicate, filter_and_map), printed, switched between train and eval, cut into (Sequential
indexing, LoRA wrappers put in place, weight tying) and quantized (nn.quantize with a
class_predicate). Then mlx.utils (tree_flatten / unflatten / map / map_with_path / reduce /
merge), optimizer state trees and parameter counts; typical mistakes caught.
Run on ember with `python -m ember.run module_surgery.py`.
"""

import os
import tempfile

from mlx.utils import (
    tree_flatten,
    tree_map,
    tree_map_with_path,
    tree_merge,
    tree_reduce,
    tree_unflatten,
)

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
from mlx.optimizers import schedulers
from mlx.optimizers import tree_merge as opt_tree_merge


def shapes(tree):
    """A tree of shapes, as MLX users print a parameter tree."""
    return tree_map(lambda x: x.shape, tree)


def count(tree):
    """The number of scalars in a tree of arrays."""
    return sum(v.size for _, v in tree_flatten(tree))


TMP = []  # the temporary directory, named <tmp> in printed messages


def caught(label, fn):
    """Run fn and print the exception type and message it raised (or its result)."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the type is printed
        msg = str(e)
        for d in TMP:
            msg = msg.replace(d, "<tmp>")
        print(f"  {label}: {type(e).__name__}: {msg}")
    else:
        print(f"  {label}: no error -> {out!r}")


class Block(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.norm = nn.LayerNorm(dims)
        self.proj = nn.Linear(dims, dims)
        self.scale = mx.ones((dims,))

    def __call__(self, x):
        return self.proj(self.norm(x)) * self.scale + x


class Net(nn.Module):
    def __init__(self, vocab=10, dims=8, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dims)
        self.blocks = [Block(dims) for _ in range(depth)]
        self.heads = {"cls": nn.Linear(dims, 3), "reg": nn.Linear(dims, 1, bias=False)}
        self.mlp = nn.Sequential(nn.Linear(dims, 16), nn.ReLU(), nn.Linear(16, dims))
        self.offsets = [mx.zeros((2,)), {"a": mx.zeros((3,))}]
        self.temperature = 1.0
        self.name = "net"

    def __call__(self, tokens):
        h = self.embed(tokens)
        for b in self.blocks:
            h = b(h)
        h = self.mlp(h).mean(axis=1)
        return self.heads["cls"](h), self.heads["reg"](h)


class LoRALinear(nn.Module):
    @staticmethod
    def from_base(linear, rank=2, scale=2.0):
        out_dims, in_dims = linear.weight.shape
        lora = LoRALinear(in_dims, out_dims, rank, scale, "bias" in linear)
        lora.linear = linear
        return lora

    def __init__(self, in_dims, out_dims, rank=2, scale=2.0, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_dims, out_dims, bias=bias)
        self.scale = scale
        bound = 1 / in_dims ** 0.5
        self.lora_a = mx.random.uniform(-bound, bound, (in_dims, rank))
        self.lora_b = mx.zeros((rank, out_dims))

    def __call__(self, x):
        return self.linear(x) + self.scale * ((x @ self.lora_a) @ self.lora_b)


def rounded(a, digits=4):
    return [round(v, digits) for v in a.reshape(-1)[:4].tolist()]


def show_trees(net):
    print("== trees")
    print("parameters", shapes(net.parameters()))
    print("children keys", sorted(net.children().keys()))
    print("children types", tree_map(lambda m: type(m).__name__, net.children(),
                                      is_leaf=lambda m: isinstance(m, nn.Module)))
    print("leaf modules", tree_map(lambda m: type(m).__name__, net.leaf_modules(),
                                    is_leaf=lambda m: isinstance(m, nn.Module)))
    print("named modules", [(k, type(m).__name__) for k, m in net.named_modules()])
    print("modules", [type(m).__name__ for m in net.modules()])
    print("keys", sorted(net.keys()), "name" in net, "temperature" in net, net.name)
    print("count", count(net.parameters()))
    print("state is self", net.state is net, type(net.state).__name__)
    print("blocks[1].scale", net.blocks[1].scale.shape, net["blocks"][1]["scale"].shape)
    print("filter_and_map arrays only",
          shapes(net.filter_and_map(lambda m, k, v: isinstance(v, mx.array))))
    print("filter_and_map weights to size",
          net.filter_and_map(lambda m, k, v: k == "weight" and isinstance(v, mx.array),
                             map_fn=lambda v: v.size))
    no_bias = net.filter_and_map(
        lambda m, k, v: nn.Module.valid_parameter_filter(m, k, v) and k != "bias",
        map_fn=lambda v: v.size)
    print("filter_and_map no bias", no_bias)
    print("filter_and_map is_leaf_fn", net.blocks[0].filter_and_map(
        nn.Module.valid_parameter_filter, map_fn=lambda v: type(v).__name__,
        is_leaf_fn=lambda m, k, v: isinstance(v, (nn.Module, mx.array))))
    print("valid_parameter_filter", nn.Module.valid_parameter_filter(net, "embed", net.embed),
          nn.Module.valid_parameter_filter(net, "_x", net.embed),
          nn.Module.valid_parameter_filter(net, "name", "net"))
    print("trainable_parameter_filter",
          nn.Module.trainable_parameter_filter(net, "embed", net.embed))


def show_freeze(net):
    print("== freeze")
    net.freeze()
    print("all frozen", count(net.trainable_parameters()), net.trainable_parameters()["blocks"])
    net.unfreeze(keys=["bias"])
    print("bias only", shapes(net.trainable_parameters()))
    net.unfreeze()
    net.freeze(keys="weight")
    print("weight frozen", sorted(k for k, _ in tree_flatten(net.trainable_parameters())))
    net.unfreeze()
    net.blocks[0].freeze(recurse=False)
    print("recurse=False", net.blocks[0]._no_grad, net.blocks[0].norm._no_grad,
          sorted(k for k, _ in tree_flatten(net.blocks[0].trainable_parameters())))
    net.blocks[0].unfreeze(recurse=False)
    net.freeze(keys=["scale"], recurse=False)
    print("keys scale, not recursive", net._no_grad, count(net.trainable_parameters()))
    net.freeze(keys=["offsets"], strict=True)
    print("offsets frozen", sorted(net._no_grad), count(net.trainable_parameters()))
    caught("freeze strict missing", lambda: net.freeze(keys=["nope"], strict=True))
    caught("unfreeze strict missing", lambda: net.unfreeze(keys="nope", strict=True))
    caught("freeze not strict missing", lambda: net.freeze(keys=["nope"]) is net)
    net.unfreeze()
    print("after unfreeze", count(net.trainable_parameters()), net._no_grad)
    print("freeze returns self", net.freeze() is net, net.unfreeze() is net)


def show_update(net):
    print("== update")
    new = tree_map(lambda x: mx.full(x.shape, 0.5, x.dtype), net.parameters())
    net.update(new)
    print("all 0.5", rounded(net.blocks[0].proj.weight), rounded(net.offsets[1]["a"]))
    net.update({"heads": {"cls": {"bias": mx.array([1.0, 2.0, 3.0])}}})
    print("partial", net.heads["cls"].bias.tolist(), rounded(net.heads["cls"].weight))
    net.update({"blocks": [{}, {"scale": mx.full((8,), 2.0)}]}, strict=False)
    print("list partial", net.blocks[0].scale[:2].tolist(), net.blocks[1].scale[:2].tolist())
    caught("update strict missing key", lambda: net.update({"nope": mx.zeros((2,))}))
    caught("update strict nested missing",
           lambda: net.update({"heads": {"cls": {"gamma": mx.zeros((3,))}}}))
    caught("update not strict missing key",
           lambda: net.update({"nope": mx.zeros((2,))}, strict=False) is net)
    caught("update wrong type (int)", lambda: net.update({"heads": {"cls": {"bias": 3}}}))
    caught("update list for dict", lambda: net.update({"heads": [1, 2]}))
    caught("update dict for list", lambda: net.update({"blocks": {"a": 1}}))
    caught("update too long list", lambda: net.update({"blocks": [{}, {}, {}]}))
    caught("update module with array", lambda: net.update({"embed": mx.zeros((2,))}))
    print("update returns self", net.update({}) is net)
    net.update_modules({"heads": {"reg": nn.Linear(8, 2)}})
    print("update_modules", net.heads["reg"], sorted(net.heads["reg"].keys()))
    net.update_modules({"blocks": [{"proj": nn.Identity()}]}, strict=False)
    print("identity in block 0", type(net.blocks[0].proj).__name__,
          type(net.blocks[1].proj).__name__)
    caught("update_modules strict missing",
           lambda: net.update_modules({"decoder": nn.Linear(2, 2)}))
    caught("update_modules array for module",
           lambda: net.update_modules({"embed": mx.zeros((2,))}))
    caught("update_modules module for array",
           lambda: net.update_modules({"blocks": [{"scale": nn.Linear(2, 2)}]}))
    caught("update_modules not strict missing",
           lambda: net.update_modules({"decoder": nn.Linear(2, 2)}, strict=False) is net)
    caught("update_modules wrong container",
           lambda: net.update_modules({"heads": [nn.Linear(2, 2)]}))


def show_io():
    print("== save / load")
    mx.random.seed(3)
    net = Net()
    other = Net()
    with tempfile.TemporaryDirectory() as d:
        TMP.append(d)
        for ext in ("npz", "safetensors"):
            path = os.path.join(d, "w." + ext)
            net.save_weights(path)
            other.load_weights(path)
            same = all(mx.array_equal(a, b).item() for (_, a), (_, b) in
                       zip(tree_flatten(net.parameters()), tree_flatten(other.parameters())))
            loaded = mx.load(path)
            print(ext, "same", same, "file keys", len(loaded), sorted(loaded)[:4])
        path = os.path.join(d, "w.npz")
        small = Net(depth=1)
        caught("strict, extra keys in file", lambda: small.load_weights(path))
        print("not strict loads", small.load_weights(path, strict=False) is small)
        big = Net(depth=3)
        caught("strict, missing keys", lambda: big.load_weights(path))
        wide = Net(dims=4)
        caught("strict, wrong shapes", lambda: wide.load_weights(path))
        caught("not strict, wrong shapes", lambda: wide.load_weights(path, strict=False) is wide)
        pairs = [("heads.cls.bias", mx.array([7.0, 8.0, 9.0]))]
        caught("list, strict", lambda: net.load_weights(pairs))
        net.load_weights(pairs, strict=False)
        print("list, not strict", net.heads["cls"].bias.tolist())
        caught("list, wrong dtype strict",
               lambda: net.load_weights([("heads.cls.bias", mx.array([1, 2, 3]))],
                                        strict=False) is net)
        caught("bad extension", lambda: net.save_weights(os.path.join(d, "w.pt")))
        caught("missing file", lambda: net.load_weights(os.path.join(d, "none.npz")))
        caught("not a module", lambda: nn.Module.load_weights(None, path))
        print("files", sorted(os.listdir(d)))


def show_apply(net):
    print("== apply / dtype / modes")
    net.apply(lambda x: mx.zeros_like(x))
    print("apply zeros", count(net.parameters()),
          tree_reduce(lambda acc, x: acc + x.abs().sum().item(), net.parameters(), 0.0))
    net.apply(lambda x: x + 1, filter_fn=lambda m, k, v: k == "bias" and isinstance(v, mx.array))
    print("apply bias+1", net.heads["cls"].bias.tolist(), net.blocks[1].proj.weight[0, :2].tolist())
    seen = []
    net.apply_to_modules(lambda k, m: seen.append((k, type(m).__name__)))
    print("apply_to_modules", seen)
    print("apply returns self", net.apply(lambda x: x) is net,
          net.apply_to_modules(lambda k, m: None) is None)
    net.set_dtype(mx.float16)
    print("set_dtype f16", sorted({str(v.dtype) for _, v in tree_flatten(net.parameters())}))
    net.set_dtype(mx.bfloat16, predicate=lambda t: t == mx.float16)
    print("bf16 from f16", sorted({str(v.dtype) for _, v in tree_flatten(net.parameters())}))
    net.set_dtype(mx.float32, predicate=lambda t: mx.issubdtype(t, mx.floating))
    print("f32 again", sorted({str(v.dtype) for _, v in tree_flatten(net.parameters())}))
    ints = nn.Module()
    ints.idx = mx.array([1, 2, 3])
    ints.w = mx.zeros((2,), dtype=mx.float16)
    ints.set_dtype(mx.float32)
    print("set_dtype skips ints", ints.idx.dtype, ints.w.dtype)
    print("training", net.training, net.blocks[0].training)
    net.eval()
    print("after eval", net.training, net.blocks[0].norm.training, net.mlp.layers[1].training)
    print("train(False) returns self", net.train(False) is net, net.train() is net,
          net.training, net.heads["cls"].training)
    drop = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    drop.eval()
    x = mx.ones((2, 4))
    print("dropout eval identity", mx.array_equal(drop(x), drop.layers[0](x)).item())


def show_print():
    print("== printing")
    mx.random.seed(0)
    net = Net(depth=1)
    print(net)
    print(repr(nn.Sequential()))
    print(nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1))))
    print(LoRALinear(3, 4))
    empty = nn.Module()
    print(empty, repr(empty))
    print(nn.Module().parameters(), nn.Module().children(), nn.Module().leaf_modules())


def show_surgery():
    print("== surgery")
    mx.random.seed(5)
    seq = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    print("layers", len(seq.layers), type(seq.layers[-1]).__name__, seq.layers[0].weight.shape)
    print("children", type(seq.children()["layers"]).__name__, len(seq.children()["layers"]))
    x = mx.random.normal((3, 4))
    y = seq(x)
    head = nn.Sequential(*seq.layers[:2])
    print("prefix", head(x).shape, mx.allclose(seq.layers[1](seq.layers[0](x)), head(x)).item())
    seq.freeze()
    for i, layer in enumerate(seq.layers):
        if isinstance(layer, nn.Linear):
            seq.layers[i] = LoRALinear.from_base(layer, rank=2)
    print("lora in place", [type(m).__name__ for m in seq.layers])
    print("same output", mx.allclose(seq(x), y, atol=1e-6).item())
    print("trainable", shapes(seq.trainable_parameters()))
    print("trainable count", count(seq.trainable_parameters()), "total", count(seq.parameters()))
    names = [k for k, _ in tree_flatten(seq.trainable_parameters())]
    print("names", names)
    # the same replacement by update_modules on a fresh model
    seq2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    seq2.freeze()
    repl = [(k, LoRALinear.from_base(m)) for k, m in seq2.named_modules()
            if isinstance(m, nn.Linear)]
    print("replacing", [k for k, _ in repl])
    seq2.update_modules(tree_unflatten(repl))
    print("after update_modules", seq2)
    print("lora params", sorted(k for k, _ in tree_flatten(seq2.trainable_parameters())))

    # weight tying: the output projection shares the embedding's array
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(6, 4)
            self.out = nn.Linear(4, 6, bias=False)
            self.out.weight = self.embed.weight

        def __call__(self, t):
            return self.out(self.embed(t))

    tied = Tied()
    print("tied same object", tied.out.weight is tied.embed.weight,
          "flattened", [k for k, _ in tree_flatten(tied.parameters())])
    tokens = mx.array([[0, 1, 2]])
    grads = nn.value_and_grad(tied, lambda m, t: m(t).sum())(tied, tokens)[1]
    print("tied grads", shapes(grads))
    tied.update({"embed": {"weight": mx.zeros((6, 4))}})
    print("update breaks the tie", tied.out.weight is tied.embed.weight,
          tied.out.weight.sum().item() != 0)
    print("as_linear", mx.allclose(tied.embed.as_linear(tied.embed(tokens)),
                                   tied.embed(tokens) @ tied.embed.weight.T).item())


def show_quantize():
    print("== quantize")
    mx.random.seed(7)
    net = nn.Sequential(nn.Embedding(16, 64), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32),
                        nn.Linear(64, 10))
    nn.quantize(net, group_size=32, bits=4,
                class_predicate=lambda p, m: isinstance(m, nn.Linear) and m.weight.shape[0] > 32)
    print(net)
    print("kinds", [type(m).__name__ for m in net.layers])
    print("types", type(net.layers[1]), type(net.layers[1].weight), type(mx.float32),
          type(optim.Adam(1e-3)), type(net.layers[1]).__module__)
    print("q params", shapes(net.layers[1].parameters()))
    print("q dtypes", tree_map(lambda x: str(x.dtype), net.layers[1].parameters()))
    print("q trainable", sorted(net.layers[1].trainable_parameters().keys()),
          "frozen keys", sorted(net.layers[1]._no_grad))
    net2 = nn.Sequential(nn.Embedding(16, 64), nn.Linear(64, 32))
    nn.quantize(net2, 64, 8)
    print(net2)
    print("embed q", type(net2.layers[0]).__name__, net2.layers[0].weight.shape,
          net2.layers[0].scales.shape)
    net3 = nn.Sequential(nn.Linear(64, 32), nn.Linear(64, 16))
    nn.quantize(net3, bits=2, class_predicate=lambda p, m: {"group_size": 32, "bits": 8}
                if p == "layers.0" else p == "layers.1")
    print(net3)
    for mode in ("mxfp4", "mxfp8", "nvfp4"):
        net4 = nn.Sequential(nn.Linear(64, 8), nn.Embedding(4, 64))
        nn.quantize(net4, mode=mode)
        print(mode, net4.layers[0], net4.layers[1],
              tree_map(lambda x: (x.shape, str(x.dtype)), net4.layers[0].parameters()))
    twice = nn.Sequential(nn.Linear(64, 8))
    nn.quantize(twice, 64, 4)
    nn.quantize(twice, 64, 8)
    print("quantize twice", twice.layers[0])
    caught("mxfp4 group size", lambda: nn.quantize(nn.Sequential(nn.Linear(64, 8)),
                                                   group_size=16, mode="mxfp4"))
    caught("bad mode", lambda: nn.quantize(nn.Sequential(nn.Linear(64, 8)), mode="int4"))
    caught("predicate returns an int", lambda: nn.quantize(
        nn.Sequential(nn.Linear(64, 8)), class_predicate=lambda p, m: 3))
    caught("predicate True on a Conv1d", lambda: nn.quantize(
        nn.Sequential(nn.Conv1d(64, 8, 1)), class_predicate=lambda p, m: True))
    caught("quantize bad group size", lambda: nn.quantize(nn.Linear(64, 8), group_size=48))
    caught("quantize too few columns",
           lambda: nn.quantize(nn.Sequential(nn.Linear(16, 8)), group_size=32))


def show_utils():
    print("== mlx.utils")
    tree = {"a": [mx.array(1.0), {"b": mx.array([2.0, 3.0])}], "c": (mx.array(4), 5),
            "d": None}
    flat = tree_flatten(tree)
    print("flatten", [(k, v.tolist() if isinstance(v, mx.array) else v) for k, v in flat])
    print("prefix", [k for k, _ in tree_flatten(tree, prefix=".model")])
    print("is_leaf", [(k, type(v).__name__) for k, v in
                      tree_flatten(tree, is_leaf=lambda x: isinstance(x, list))])
    dest = {}
    out = tree_flatten({"x": [mx.array(1), mx.array(2)]}, destination=dest)
    print("destination", out is None, sorted(dest), type(out).__name__)
    dest2 = []
    tree_flatten({"x": mx.array(1)}, destination=dest2)
    print("destination list", [k for k, _ in dest2])
    back = tree_unflatten([("a.0", 1), ("a.1.b", 2), ("c", 3)])
    print("unflatten", back)
    print("unflatten list root", tree_unflatten([("0", "x"), ("1", "y")]))
    print("unflatten dict", tree_unflatten({"w.0": 1, "w.1": 2}))
    print("unflatten sparse", tree_unflatten([("l.2", "c"), ("l.0", "a")]))
    print("roundtrip", tree_unflatten(tree_flatten({"p": [[1, 2], {"q": 3}]})))
    a = {"x": [1, 2], "y": {"z": 3}}
    b = {"x": [10, 20], "y": {"z": 30}}
    c = {"x": [100, 200], "y": {"z": 300}}
    print("map 3 trees", tree_map(lambda u, v, w: u + v + w, a, b, c))
    print("map is_leaf", tree_map(lambda v: len(v) if isinstance(v, list) else -v, a,
                                  is_leaf=lambda v: isinstance(v, list)))
    print("map tuple", tree_map(lambda v: v * 2, (1, [2, (3,)])))
    print("map with path", tree_map_with_path(lambda p, v: f"{p}={v}", a))
    print("map with path, 2 trees", tree_map_with_path(lambda p, u, v: (p, u * v), a, b))
    print("map with path prefix", tree_map_with_path(lambda p, v: p, [1, {"k": 2}], path="root"))
    print("reduce sum", tree_reduce(lambda acc, v: acc + v, a, 0))
    print("reduce no init", tree_reduce(lambda acc, v: acc * v, {"p": 2, "q": [3, 4]}))
    print("reduce is_leaf", tree_reduce(lambda acc, v: acc + [len(v)], {"r": [1, 2], "s": [3]},
                                        [], is_leaf=lambda v: isinstance(v, list)))
    # (tree_merge builds dicts in a set's key order, which varies by run: print them sorted)
    merged = tree_merge({"a": 1, "b": None, "c": [None, 2]}, {"a": None, "b": 3, "c": [4, None]})
    print("merge", sorted(merged.items()))
    print("merge fn", sorted(tree_merge({"a": 1, "b": 2}, {"a": 10, "b": 20},
                                        merge_fn=lambda u, v: u + v).items()))
    print("merge empties", tree_merge([], []), tree_merge({}, {}), tree_merge([], [1]),
          tree_merge((1, None), [None, 2]))
    print("unflatten '01' and '1'", tree_unflatten([("01", "a"), ("1", "b")]))
    print("reduce restarts after None", tree_reduce(lambda acc, v: acc + v, [None, 2, 3]))
    print("merge none side", tree_merge(None, {"x": 1}), tree_merge([1, None], None))
    print("optim re-exports", opt_tree_merge is not None, schedulers.step_decay(1.0, 0.5, 2)(4))
    caught("map mismatched trees", lambda: tree_map(lambda u, v: u + v, {"a": 1}, {"b": 2}))
    caught("map list vs shorter list", lambda: tree_map(lambda u, v: u + v, [1, 2], [3]))
    caught("merge conflict", lambda: tree_merge({"a": 1}, {"a": 2}))
    caught("merge type mismatch", lambda: tree_merge({"a": 1}, [1]))
    caught("unflatten mixed keys", lambda: tree_unflatten([("0", 1), ("a", 2)]))
    caught("merge list with dict", lambda: tree_merge([], {}))
    caught("merge two Nones", lambda: tree_merge({"a": None}, {"a": None}))
    caught("unflatten a generator", lambda: tree_unflatten(p for p in [("a", 1)]))
    caught("reduce empty no init", lambda: tree_reduce(lambda a, v: a + v, {}))


class HeavyBall(optim.Optimizer):
    """A user-written optimizer: momentum without dampening."""

    def __init__(self, learning_rate):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)

    def init_single(self, parameter, state):
        state["buf"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        state["buf"] = 0.9 * state["buf"] + gradient
        return parameter - self.learning_rate.astype(gradient.dtype) * state["buf"]


def show_optimizer_state():
    print("== optimizer state")
    mx.random.seed(11)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.layers[2].freeze(keys="bias")
    for opt in (optim.SGD(learning_rate=0.1), optim.SGD(learning_rate=0.1, momentum=0.9),
                optim.Adam(learning_rate=1e-2),
                optim.AdamW(learning_rate=schedulers.cosine_decay(1e-2, 10)),
                optim.Adafactor(), optim.Lion(learning_rate=1e-3)):
        before = sorted(opt.state.keys())
        opt.init(model.trainable_parameters())
        flat = tree_flatten(opt.state)
        print(type(opt).__name__, before, "->", len(flat),
              [k for k, _ in flat if k.startswith("layers.0") or "." not in k][:6])
    opt = optim.Adam(learning_rate=1e-2)
    print("initialized?", opt.state, opt.step.item() if hasattr(opt.step, "item") else opt.step)
    x = mx.random.normal((5, 3))
    y = mx.random.normal((5, 2))
    loss_and_grad = nn.value_and_grad(model, lambda m: nn.losses.mse_loss(m(x), y))
    for step in range(3):
        loss, grads = loss_and_grad(model)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        print(f"step {step} loss {loss.item():.5f}")
    print("state", shapes(opt.state))
    print("step", opt.state["step"].item(), opt.step.item(), opt.learning_rate.item())
    print("grads frozen bias", "bias" in grads["layers"][2], shapes(grads["layers"][2]))
    total = tree_reduce(lambda acc, v: acc + v.size, model.parameters(), 0)
    trainable = sum(v.size for _, v in tree_flatten(model.trainable_parameters()))
    print("params", total, "trainable", trainable,
          "by layer", [count(m.parameters()) for m in model.layers])
    saved = dict(tree_flatten(opt.state))
    fresh = optim.Adam(learning_rate=1e-2)
    fresh.state = tree_unflatten(list(saved.items()))
    print("restored", sorted(fresh.state.keys()), fresh.step.item())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "opt.safetensors")
        mx.save_safetensors(path, dict(tree_flatten(opt.state)))
        state = tree_unflatten(list(mx.load(path).items()))
        resumed = optim.Adam(learning_rate=1e-2)
        resumed.state = state
        twin = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        twin.update(model.parameters())
        twin.layers[2].freeze(keys="bias")
        _, grads = loss_and_grad(model)
        opt.update(model, grads)
        resumed.update(twin, grads)
        print("resumed from file", sorted(state), str(state["step"].dtype), resumed.step.item(),
              mx.allclose(twin.layers[0].weight, model.layers[0].weight).item())
    custom = HeavyBall(0.1)
    w = {"w": mx.ones((2,))}
    print("custom optimizer state", sorted(custom.state))
    for _ in range(2):
        w = custom.apply_gradients({"w": mx.ones((2,))}, w)
    print("custom optimizer", w["w"].tolist(), custom.step.item(),
          tree_map(lambda x: x.tolist(), custom.state["w"]))
    caught("update before grads match", lambda: optim.SGD(0.1).update(
        model, {"layers": [{"weight": mx.zeros((4, 3))}]}) is None)
    caught("init twice keeps state", lambda: (opt.init(model.trainable_parameters()),
                                             opt.state["step"].item())[1])


def show_mistakes(net):
    print("== typical mistakes")
    caught("attribute missing", lambda: net.nope)
    caught("item missing", lambda: net["nope"])
    caught("Sequential index out of range", lambda: nn.Sequential(nn.ReLU()).layers[3])
    caught("module called without __call__", lambda: nn.Module()(mx.zeros((1,))))
    caught("parameters of a plain list", lambda: tree_flatten([nn.Linear(2, 2)])[0][0])
    caught("freeze keys not a list", lambda: net.freeze(keys=3) is net)
    net.unfreeze()
    caught("set_dtype with a string", lambda: net.set_dtype("float16"))
    caught("Linear called on wrong dims", lambda: nn.Linear(3, 2)(mx.zeros((2, 4))))
    caught("quantize an Embedding with bad dims",
           lambda: nn.QuantizedEmbedding(4, 40, group_size=32))
    caught("unflatten a non-list", lambda: tree_unflatten(5))
    caught("filter_and_map leaf not a module or container", lambda: net.filter_and_map(
        nn.Module.valid_parameter_filter, is_leaf_fn=lambda m, k, v: isinstance(v, nn.Module)))
    caught("value_and_grad of a non-module",
           lambda: callable(nn.value_and_grad(lambda: 0, lambda: 0)))
    caught("save_weights without an extension", lambda: net.save_weights("weights"))


def main():
    mx.random.seed(42)
    net = Net()
    show_trees(net)
    show_freeze(net)
    show_update(net)
    show_io()
    show_apply(Net())
    show_print()
    show_surgery()
    show_quantize()
    show_utils()
    show_optimizer_state()
    show_mistakes(Net())


if __name__ == "__main__":
    main()
