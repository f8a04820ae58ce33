"""Measuring models as practitioners do: FLOPs with torch.utils.flop_counter.FlopCounterMode
(an MLP, a small CNN, a transformer block with scaled_dot_product_attention, forward and
forward+backward, per module at depth 1 and 2, totals checked against the hand formulas
2*M*N*K and 2*N*Cout*Cin*K*K*Hout*Wout, MFU-style FLOPs per token, a custom formula), a
model summary written with forward hooks (output shapes, parameters per layer, trainable
vs frozen, buffers) and the typical mistakes.

(The table printed by display=True / get_table needs the `tabulate` package, so the
counts are printed here from get_total_flops / get_flop_counts.)"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode, register_flop_formula

torch.manual_seed(0)


def err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def show(counter, depth=None, title=""):
    """The counts per module (down to `depth` dots), ops sorted by name."""
    print(f"== {title}: total {counter.get_total_flops()}")
    for mod, ops in sorted(counter.get_flop_counts().items()):
        if depth is not None and mod != "Global" and mod.count(".") + 1 > depth:
            continue
        row = ", ".join(f"{k}={v}" for k, v in sorted((str(k), v) for k, v in ops.items()))
        print(f"  {mod:<22} {sum(ops.values()):>9}  {row}")


def count(model, x, backward=False, depth=2):
    with FlopCounterMode(display=False, depth=depth) as fc:
        out = model(x)
        if backward:
            out.float().sum().backward()
    return fc


# --- an MLP ---------------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self, d_in=32, hidden=64, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(0.1)
        self.fc3 = nn.Linear(hidden, d_out, bias=False)

    def forward(self, x):
        return self.fc3(self.drop(self.act(self.fc2(self.act(self.fc1(x))))))


mlp = MLP()
x = torch.randn(16, 32)
fwd = count(mlp, x)
show(fwd, title="MLP forward")
by_hand = 2 * 16 * (32 * 64 + 64 * 64 + 64 * 10)
print("hand formula 2*B*sum(in*out):", by_hand, "matches:", fwd.get_total_flops() == by_hand)
both = count(mlp, x, backward=True)
show(both, title="MLP forward+backward")
print("backward / forward:", both.get_total_flops() / fwd.get_total_flops())
# the input needs no gradient, so fc1's backward computes only its weight gradient
fc1 = both.get_flop_counts()["MLP.fc1"]
print("fc1 ops:", sorted(str(k) for k in fc1),
      "fc1 backward:", sum(fc1.values()) - 2 * 16 * 32 * 64)
x_req = torch.randn(16, 32, requires_grad=True)
print("with x.requires_grad:", count(mlp, x_req, backward=True).get_total_flops(),
      "= 3x forward:", 3 * by_hand)
with torch.no_grad():
    print("under no_grad:", count(mlp, x).get_total_flops())

# a 3-D input (batch, tokens, features): Linear folds the tokens into rows
seq = torch.randn(4, 8, 32)
show(count(mlp, seq), depth=1, title="MLP on (4, 8, 32)")

# --- a small CNN --------------------------------------------------------------------------


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1, groups=4),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


cnn = SmallCNN()
img = torch.randn(2, 3, 16, 16)
cf = count(cnn, img, depth=1)
show(cf, depth=1, title="CNN forward, depth=1")
show(cf, depth=2, title="CNN forward, depth=2")


def conv_flops(n, cout, cin_per_group, k, hout, wout):
    return 2 * n * cout * cin_per_group * k * k * hout * wout


hand = (conv_flops(2, 8, 3, 3, 16, 16) + conv_flops(2, 16, 8, 3, 4, 4)
        + conv_flops(2, 16, 4, 3, 4, 4) + 2 * 2 * 16 * 10)
print("hand formula:", hand, "matches:", cf.get_total_flops() == hand)
cb = count(cnn, img, backward=True)
show(cb, title="CNN forward+backward")
conv_keys = sorted({str(k) for ops in cb.get_flop_counts().values() for k in ops})
print("ops seen:", conv_keys)

# transposed convolution (a decoder upsampling) forward and backward
up = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
z = torch.randn(2, 16, 5, 5, requires_grad=True)
show(count(up, z, backward=True), title="ConvTranspose2d fwd+bwd")
conv1d = nn.Conv1d(4, 6, 5, padding=2, dilation=1)
show(count(conv1d, torch.randn(3, 4, 20), backward=True), title="Conv1d fwd+bwd")

# --- a transformer block with SDPA --------------------------------------------------------


class Block(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp(self.ln2(x))


block = Block()
tokens = torch.randn(2, 6, 32)
tf = count(block, tokens)
show(tf, title="Block forward")
tb = count(block, tokens, backward=True)
show(tb, depth=1, title="Block forward+backward, depth=1")
n_params = sum(p.numel() for n, p in block.named_parameters() if n.endswith("weight")
               and p.dim() == 2)
print("matmul weights:", n_params, "6*N*tokens rule:", 6 * n_params * 12,
      "counted:", tb.get_total_flops())
print("FLOPs per token (fwd):", tf.get_total_flops() / 12)

# attention written by hand (the math path): the two bmm products appear
def manual_attention(q, k, v):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return torch.softmax(s, dim=-1) @ v


q = torch.randn(2, 4, 6, 8)
with FlopCounterMode(display=False) as fc:
    manual_attention(q, q, q)
show(fc, title="attention by hand (2, 4, 6, 8)")
print("hand 4*B*H*L*L*D:", 4 * 2 * 4 * 6 * 6 * 8)
with FlopCounterMode(display=False) as fc:
    torch.einsum("bhld,bhmd->bhlm", q, q)
    torch.bmm(q.flatten(0, 1), q.flatten(0, 1).transpose(1, 2))
    torch.baddbmm(torch.zeros(8, 6, 6), q.flatten(0, 1), q.flatten(0, 1).transpose(1, 2))
    torch.addmm(torch.zeros(3), torch.randn(5, 4), torch.randn(4, 3))
    torch.randn(7) @ torch.randn(7)  # a dot product is not counted
    torch.randn(5, 7) @ torch.randn(7)  # neither is a matrix-vector product
show(fc, title="einsum / bmm / baddbmm / addmm / dot / mv")

# a custom formula: count an mm as the exact 2*K-1 operations per output
key = next(k for k in fc.get_flop_counts()["Global"] if str(k) == "aten.addmm")


def exact_addmm(self_shape, a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    return m * b_shape[1] * (2 * k - 1)


with FlopCounterMode(display=False, custom_mapping={key: exact_addmm}) as fc:
    mlp.fc1(x)
show(fc, title="custom_mapping for addmm")

# --- a model summary with forward hooks ---------------------------------------------------


def summary(model, x):
    rows, hooks = [], []

    def hook(name):
        def fn(mod, inp, out):
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else "-"
            own = sum(p.numel() for p in mod.parameters(recurse=False))
            rows.append((name, type(mod).__name__, shape, own))
        return fn

    for name, mod in model.named_modules():
        if name and not list(mod.children()):
            hooks.append(mod.register_forward_hook(hook(name)))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    print(f"{'layer':<14}{'type':<20}{'output':<18}{'params':>8}")
    for name, kind, shape, n in rows:
        print(f"{name:<14}{kind:<20}{str(shape):<18}{n:>8}")
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    buffers = sum(b.numel() for b in model.buffers())
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"total {total}, trainable {trainable}, frozen {total - trainable}, "
          f"buffers {buffers}, {size / 1024:.2f} KiB of parameters")
    print("hooks left:", sum(len(m._forward_hooks) for m in model.modules()))


for p in cnn.features[0].parameters():
    p.requires_grad_(False)
summary(cnn, img)
summary(block, tokens)
# frozen layers: no weight gradient, so less backward work
print("CNN fwd+bwd with conv1 frozen:", count(cnn, img, backward=True).get_total_flops(),
      "before:", cb.get_total_flops())

# --- typical mistakes ---------------------------------------------------------------------

# 1. counting outside the context: the counts are those of the last `with` block
fc = FlopCounterMode(display=False)
print("before entering:", fc.get_total_flops(), fc.get_flop_counts())
with fc:
    mlp(x)
first = fc.get_total_flops()
mlp(x)  # not counted
print("after leaving:", fc.get_total_flops() == first)
with fc:  # entering again starts from zero
    mlp.fc1(x)
print("re-entered:", fc.get_total_flops())

# 2. passing the model (the old API) warns and changes nothing
import warnings  # noqa: E402

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    FlopCounterMode(mlp, display=False)
print("mods= warns:", [str(m.message) for m in w])

# 3. register_flop_formula needs an op (torch.ops.<ns>.<name>), not the op's name
try:
    register_flop_formula("aten::addmm")(exact_addmm)
except ValueError as e:
    print(err(e))

# 4. a shape error inside the counter propagates unchanged, and the counter is left off
try:
    with FlopCounterMode(display=False) as fc:
        mlp(torch.randn(4, 31))
except RuntimeError as e:
    print(err(e))
print("counting after the error:", fc.get_total_flops())

# 5. a float32 LSTM on the CPU runs as one oneDNN kernel with no formula: it counts 0
# (float64, or projections, take the plain path whose products count); so do
# MultiheadAttention / TransformerEncoderLayer on their inference fast path
lstm = nn.LSTM(8, 16, batch_first=True)
seq8 = torch.randn(2, 5, 8)
print("LSTM float32:", count(lambda s: lstm(s)[0], seq8, backward=True).get_total_flops())
lstm.double()
print("LSTM float64:", count(lambda s: lstm(s)[0], seq8.double(), backward=True).get_total_flops())
gru = nn.GRU(8, 16, batch_first=True)
print("GRU forward:", count(lambda s: gru(s)[0], seq8).get_total_flops(),
      "hand 2*B*T*3H*(I+H):", 2 * 2 * 5 * 48 * (8 + 16),
      "fwd+bwd:", count(lambda s: gru(s)[0], seq8, backward=True).get_total_flops())
enc = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
print("encoder train:", count(enc, tokens).get_total_flops())
enc.eval()
with torch.no_grad():
    print("encoder eval fast path:", count(enc, tokens).get_total_flops())

# 6. counting elementwise work: only products count, an activation-heavy layer shows 0
with FlopCounterMode(display=False) as fc:
    F.gelu(torch.randn(1000)).softmax(0).sum()
print("gelu+softmax counted:", fc.get_total_flops())
