"""Graph transformations with torch.fx as the tutorials teach them: symbolic tracing of
an MLP and a small CNN, reading the graph (str, node lists, generated code), a pass that
swaps relu for gelu, conv+batchnorm fusion by hand with graph edits, shape propagation,
an Interpreter that counts ops, a Transformer, graphs built by hand, dead code
elimination, inserting nodes, concrete_args, torch.fx.wrap, and the typical mistakes
(control flow on a traced value, erasing a used node, tracing what is not a function)
with their messages."""

import copy
import operator
from collections import Counter

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

torch.manual_seed(0)


def fmt(t, n=4):
    return [round(v, n) for v in t.detach().flatten().tolist()[:6]]


def err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def target_str(node):
    if isinstance(node.target, str):
        return node.target
    return fx.Node._pretty_print_target(node.target)


def show_nodes(graph):
    for n in graph.nodes:
        print(f"  {n.op:<14} {n.name:<12} {target_str(n):<32} args={n.args} kwargs={n.kwargs}")


# -- 1. an MLP: trace, print the graph, the code, the module ---------------------------
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = F.dropout(h, p=0.1, training=self.training)
        out = self.fc2(h) * self.scale
        return F.log_softmax(out, dim=-1)


mlp = MLP().eval()
gm = fx.symbolic_trace(mlp)
print("== MLP graph")
print(gm.graph)
print("== MLP code")
print(gm.code)
print("== MLP module")
print(gm)
show_nodes(gm.graph)
x = torch.randn(3, 8)
print("same output:", torch.allclose(gm(x), mlp(x)), fmt(gm(x)))
print("parameters:", [name for name, _ in gm.named_parameters()])
print("state_dict keys:", list(gm.state_dict().keys()))
print("shares fc1:", gm.fc1 is mlp.fc1, "nodes:", len(gm.graph.nodes))


# -- 2. a CNN with a BatchNorm, shapes, a method chain, and a constant -----------------
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        y = self.bn2(self.conv2(x)).relu()
        x = x + y
        b = x.size(0)
        x = self.pool(x).view(b, -1)
        return self.head(x) + torch.tensor(0.5)


cnn = CNN()
for m in cnn.modules():
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.2, 0.2)
        m.running_var.uniform_(0.5, 1.5)
        m.weight.data.uniform_(0.5, 1.5)
        m.bias.data.uniform_(-0.2, 0.2)
cnn.eval()
traced = fx.symbolic_trace(cnn)
print("== CNN graph")
print(traced.graph)
print("== CNN code")
print(traced.code)
img = torch.randn(2, 3, 8, 8)
ref = cnn(img)
print("CNN same output:", torch.allclose(traced(img), ref, atol=1e-6), fmt(ref))
print("CNN buffers:", [n for n, _ in traced.named_buffers()])


# -- 3. a pass: relu -> gelu (function, method and module forms) -------------------------
def relu_to_gelu(gm):
    count = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.relu, F.relu):
            node.target = F.gelu
            node.kwargs = {}
            count += 1
        elif node.op == "call_method" and node.target == "relu":
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(F.gelu, node.args)
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
            count += 1
    gm.graph.lint()
    gm.recompile()
    return count


g2 = fx.symbolic_trace(cnn)
print("relu nodes replaced:", relu_to_gelu(g2))
print(g2.code)


def cnn_gelu(m, x):
    x = F.gelu(m.bn1(m.conv1(x)))
    x = F.max_pool2d(x, 2)
    x = x + F.gelu(m.bn2(m.conv2(x)))
    return m.head(m.pool(x).view(x.size(0), -1)) + 0.5


print("gelu pass matches:", torch.allclose(g2(img), cnn_gelu(cnn, img), atol=1e-6))


# -- 4. conv + batchnorm fusion by hand, as the fx tutorial does ---------------------------
def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    if conv_b is None:
        conv_b = torch.zeros_like(bn_rm)
    bn_var_rsqrt = torch.rsqrt(bn_rv + bn_eps)
    conv_w = conv_w * (bn_w * bn_var_rsqrt).reshape([-1] + [1] * (conv_w.dim() - 1))
    conv_b = (conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b
    return nn.Parameter(conv_w), nn.Parameter(conv_b)


def fuse_conv_bn_eval(conv, bn):
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def _parent_name(target):
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def fuse(model):
    model = copy.deepcopy(model)
    fx_model = fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    fused = 0
    for node in fx_model.graph.nodes:
        if node.op != "call_module":
            continue
        prev = node.args[0]
        if type(modules[node.target]) is nn.BatchNorm2d and isinstance(prev, fx.Node) \
                and prev.op == "call_module" and type(modules[prev.target]) is nn.Conv2d:
            if len(prev.users) > 1:
                continue
            new_conv = fuse_conv_bn_eval(modules[prev.target], modules[node.target])
            parent, name = _parent_name(prev.target)
            setattr(modules[parent], name, new_conv)
            node.replace_all_uses_with(prev)
            fx_model.graph.erase_node(node)
            fused += 1
    fx_model.graph.lint()
    fx_model.delete_all_unused_submodules()
    fx_model.recompile()
    return fx_model, fused


fused_model, n_fused = fuse(cnn)
print("fused pairs:", n_fused)
print(fused_model.code)
print("fused modules:", [n for n, _ in fused_model.named_children()])
out_f = fused_model(img)
print("fused matches:", torch.allclose(out_f, ref, atol=1e-5),
      f"max diff < 1e-5: {(out_f - ref).abs().max().item() < 1e-5}")


# -- 5. shape propagation ------------------------------------------------------------------
sp = fx.symbolic_trace(cnn)
ShapeProp(sp).propagate(img)
for node in sp.graph.nodes:
    meta = node.meta.get("tensor_meta")
    if meta is not None and hasattr(meta, "shape"):
        print(f"  {node.name:<12} {str(meta.dtype):<14} {tuple(meta.shape)} "
              f"stride={meta.stride} grad={meta.requires_grad}")
    else:
        print(f"  {node.name:<12} {node.meta['type'].__name__}")


# -- 6. an Interpreter that counts what runs -----------------------------------------------
class CountingInterpreter(fx.Interpreter):
    def __init__(self, module):
        super().__init__(module)
        self.counts = Counter()

    def run_node(self, n):
        self.counts[n.op] += 1
        return super().run_node(n)

    def call_module(self, target, args, kwargs):
        self.counts[type(self.fetch_attr(target)).__name__] += 1
        return super().call_module(target, args, kwargs)


interp = CountingInterpreter(traced)
res = interp.run(img)
print("interpreter matches:", torch.allclose(res, ref, atol=1e-6))
print("counts:", sorted(interp.counts.items()))


# -- 7. a Transformer: every add becomes a mul ------------------------------------------------
class AddToMul(fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target is operator.add:
            target = operator.mul
        return super().call_function(target, args, kwargs)


def adds(x, y):
    return (x + y) + 2


swapped = AddToMul(fx.symbolic_trace(adds)).transform()
print(swapped.code)
a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
print("add->mul:", swapped(a, b).tolist())


# -- 8. a graph built by hand ---------------------------------------------------------------
graph = fx.Graph()
xp = graph.placeholder("x")
yp = graph.placeholder("y", default_value=2.0)
s = graph.call_function(torch.add, (xp, yp))
m = graph.call_method("mul", (s, 3))
r = graph.call_function(torch.sin, (m,))
graph.output((r, s))
print(graph)
hand = fx.GraphModule(torch.nn.Module(), graph, "Hand")
print(hand.code)
outs = hand(torch.tensor([0.5, 1.0]))
print("hand-built:", fmt(outs[0]), fmt(outs[1]), type(hand).__name__)


# -- 9. editing: insert a node, dead code, copies ------------------------------------------
def fn(x):
    y = x * 2
    z = torch.exp(x)  # noqa: F841 (unused: dead code elimination removes it)
    return y + 1


g = fx.symbolic_trace(fn)
print("before DCE:", [n.name for n in g.graph.nodes])
print("changed:", g.graph.eliminate_dead_code())
print("after DCE:", [n.name for n in g.graph.nodes])
mul_node = next(n for n in g.graph.nodes if n.target is operator.mul)
with g.graph.inserting_after(mul_node):
    neg = g.graph.call_function(torch.neg, (mul_node,))
mul_node.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
g.recompile()
print(g.code)
print("edited:", g(torch.tensor([1.0, -2.0])).tolist())
print("users of mul:", list(mul_node.users), "inputs of neg:", neg.all_input_nodes)
print("prev/next:", neg.prev.name, neg.next.name)
new_graph = fx.Graph()
val_map = {}
out_val = new_graph.graph_copy(g.graph, val_map)
new_graph.output(out_val)
print("copy:", [n.name for n in new_graph.nodes], len(val_map))
copied = copy.deepcopy(g)
print("deepcopy runs:", copied(torch.tensor([3.0])).tolist(), copied.graph is not g.graph)


# -- 10. concrete_args and wrap ---------------------------------------------------------------
def maybe_double(x, double=True):
    if double:
        return x * 2
    return x


cg = fx.symbolic_trace(maybe_double, concrete_args={"double": False})
print(cg.code)
print("specialised:", cg(torch.tensor([4.0]), False).tolist())
try:
    cg(torch.tensor([4.0]))
except AssertionError as e:
    print(err(e))


def clamp_count(x):
    return len(x.shape)


fx.wrap("clamp_count")


def uses_wrapped(x):
    return x * clamp_count(x)


wg = fx.symbolic_trace(uses_wrapped)
print(wg.code)
print("wrapped:", wg(torch.ones(2, 3)).tolist())


# -- 11. the typical mistakes ------------------------------------------------------------------
def branchy(x):
    if x.sum() > 0:
        return x
    return -x


for bad in (branchy, lambda x: [v for v in x], lambda x: len(x)):
    try:
        fx.symbolic_trace(bad)
    except Exception as e:
        print(err(e))
try:
    fx.symbolic_trace(42)
except Exception as e:
    print(err(e))
g = fx.symbolic_trace(fn)
first_mul = next(n for n in g.graph.nodes if n.target is operator.mul)
try:
    g.graph.erase_node(first_mul)
except RuntimeError as e:
    print(err(e))
try:
    bad_graph = fx.Graph()
    p = bad_graph.placeholder("x")
    other = fx.Graph().placeholder("y")
    bad_graph.call_function(torch.add, (p, other))
    bad_graph.lint()
except RuntimeError as e:
    print(err(e))


# -- 12. decomposition with Proxies over a new graph (the fx docs' recipe) ------------------
def relu_decomposition(x):
    return (x > 0) * x


decomposition_rules = {F.relu: relu_decomposition, torch.relu: relu_decomposition}


def decompose(model):
    graph = fx.Tracer().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = torch.fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a
                          for a in node.args]
            env[node.name] = decomposition_rules[node.target](*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    return fx.GraphModule(model, new_graph)


decomposed = decompose(mlp)
print(decomposed.code)
print("decomposed matches:", torch.allclose(decomposed(x), mlp(x), atol=1e-6))


# -- 13. factories fed traced shapes, and the retraced GraphModule ---------------------------
def with_factories(x):
    mask = torch.ones(x.shape).tril()
    steps = torch.arange(x.size(-1)).float()
    return x * mask + torch.zeros_like(x) + steps


fg = fx.symbolic_trace(with_factories)
print(fg.code)
print("factories:", fmt(fg(torch.ones(3, 3))))
retraced = fx.symbolic_trace(fg)
print("retraced same code:", retraced.code == fg.code)


# -- 14. containers: a Sequential root, ModuleList loops, ModuleDict heads --------------------
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 2), nn.Tanh()))
print(fx.symbolic_trace(seq))


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 1)})
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x) * self.scale
        return {k: h(x) for k, h in self.heads.items()}, self.layers[0](x)


hg = fx.symbolic_trace(Heads())
print(hg.graph)
outs, first = hg(torch.ones(1, 2))
print({k: fmt(v) for k, v in outs.items()}, fmt(first))
print("module stacks:", [(n.name, list(n.meta["nn_module_stack"])) for n in hg.graph.nodes
                         if "nn_module_stack" in n.meta])


# -- 15. subgraph rewriting, and the annotated listing ----------------------------------------
def pattern(x, y):
    return torch.relu(x) + y


def replacement(x, y):
    return torch.sigmoid(x) - y


def twice(x, y):
    a = torch.relu(x) + y
    return torch.relu(a * 2) + y, a


rg = fx.symbolic_trace(twice)
matches = fx.replace_pattern(rg, pattern, replacement)
print("matches:", len(matches), [m.anchor.name for m in matches])
print(rg.code)
print("rewritten:", fmt(rg(torch.tensor([1.0, -2.0]), torch.tensor([0.5, 0.5]))[0]))
ShapeProp(rg).propagate(torch.ones(4), torch.ones(4))
rg.print_readable()


# -- 16. the library's own inference passes ----------------------------------------------------
from torch.fx.experimental.optimization import fuse as fx_fuse  # noqa: E402
from torch.fx.experimental.optimization import remove_dropout  # noqa: E402

lib_fused = fx_fuse(cnn)
print(lib_fused.code)
print("library fuse matches:", torch.allclose(lib_fused(img), ref, atol=1e-5))
no_drop = remove_dropout(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU()).eval())
print(no_drop.code)
