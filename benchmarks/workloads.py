"""The benchmark workloads, each written once against a `lib` that is ember or torch.

A workload is a function `setup(lib, quick) -> step` that builds identical inputs
(fixed seeds, NumPy-generated data) and returns a zero-argument callable doing one
unit of work. `WORKLOADS` lists them with how to turn a time into a rate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Workload:
    name: str
    setup: Callable
    target: float | None  # the ember / torch median ratio to stay under
    rate: Callable[[float, bool], str] | None = None  # (seconds per call, quick) -> rate
    memory: bool = False  # also compare peak memory
    jax: str | None = None  # the JAX port in anchors.py (with --anchors: torch.compile too)
    numpy: bool = False  # also time NumPy's own call (`lib` is then `NumPyLib`)


class NumPyLib:
    """What a workload needs of `lib` to run on plain NumPy arrays (NumPy's own call is
    the bound of a row that is one BLAS product)."""

    tensor = staticmethod(np.asarray)

    @staticmethod
    def manual_seed(_seed: int) -> None:
        pass


def _arr(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _t(lib, a, requires_grad=False):
    t = lib.tensor(a)
    return t.requires_grad_() if requires_grad else t


# 1. dispatch --------------------------------------------------------------------------

def dispatch_add(lib, quick):
    a, b = _t(lib, _arr(16)), _t(lib, _arr(16, 1))
    return lambda: a + b


def dispatch_mul_grad(lib, quick):
    a, b = _t(lib, _arr(16), True), _t(lib, _arr(16, 1))
    return lambda: a * b


# 2. MLP training step -------------------------------------------------------------------

def _mlp(lib, sizes):
    nn = lib.nn
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))
    return model


def mlp_step(lib, quick, wrap_model=lambda m: m):
    """The MLP training step; `wrap_model` may compile the model alone (see below)."""
    model = wrap_model(_mlp(lib, [64, 128, 10]))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = _t(lib, _arr((64, 64)))
    y = lib.tensor(np.random.default_rng(1).integers(0, 10, 64))
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def mlp_model_step(lib, quick, wrap=lambda m: m):
    """The MLP step with the model passed through `wrap`: `torch.compile(model)` as most
    programs use it (the forward compiled; the loss, backward and step eager around it)."""
    return mlp_step(lib, quick, wrap)


# 3. elementwise bandwidth ---------------------------------------------------------------

N_ELEM = 16 * 1024 * 1024


def elementwise(lib, quick):
    n = N_ELEM // (16 if quick else 1)
    a, b, c = (_t(lib, _arr(n, s)) for s in range(3))
    return lambda: a * b + c


def _gbps(n):
    # three reads and one write of float32
    return lambda s, quick: f"{4 * (n // 16 if quick else n) * 4 / s / 1e9:.1f} GB/s"


# 4. matmul ------------------------------------------------------------------------------

def matmul(n):
    def setup(lib, quick):
        m = n // 2 if quick else n
        a, b = _t(lib, _arr((m, m))), _t(lib, _arr((m, m), 1))
        return lambda: a @ b

    return setup


def _gflops(n):
    return lambda s, quick: f"{2 * (n // 2 if quick else n)**3 / s / 1e9:.1f} GFLOP/s"


# 5. softmax + cross-entropy --------------------------------------------------------------

def softmax_xent(lib, quick):
    rows = 1024 if quick else 4096
    logits = _t(lib, _arr((rows, 1000)) * 3, True)
    y = lib.tensor(np.random.default_rng(1).integers(0, 1000, rows))
    f = lib.nn.functional

    def step():
        logits.grad = None
        f.cross_entropy(logits, y).backward()

    return step


# 6. GPT training step -----------------------------------------------------------------

def build_gpt(lib, vocab=65, d=128, heads=4, layers=2, seq=64):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    model = GPT()
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.02))
    return model


def gpt_step(lib, quick):
    model = build_gpt(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(1)
    idx = lib.tensor(rng.integers(0, 65, (16, 64)))
    tgt = lib.tensor(rng.integers(0, 65, (16, 64)))
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        logits = model(idx)
        F.cross_entropy(logits.view(-1, 65), tgt.view(-1)).backward()
        opt.step()

    return step


def gpt_step_products(lib, quick, vocab=65, d=128, heads=4, layers=2, seq=64, batch=16):
    """The GPT step's matrix products alone, in its shapes and layouts (each linear layer's
    forward, input gradient and weight gradient; attention's two products forward and four
    backward; the tied head's): the floor under any schedule of that step, compiled or not,
    set by the BLAS the library multiplies with."""
    tokens, hd = batch * seq, d // heads
    linears = [(d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)] * layers + [(d, vocab)]
    mats = [(_t(lib, _arr((tokens, i))), _t(lib, _arr((o, i), 1)), _t(lib, _arr((tokens, o), 2)))
            for i, o in linears]
    q, k, v, g = (_t(lib, _arr((batch, heads, seq, hd), s)) for s in range(4))
    w = _t(lib, _arr((batch, heads, seq, seq), 4))

    def step():
        for x, wt, gy in mats:
            x @ wt.t()  # forward
            gy @ wt  # input gradient
            gy.t() @ x  # weight gradient
        for _ in range(layers):
            q @ k.transpose(-1, -2), w @ v  # forward
            w.transpose(-1, -2) @ g, g @ v.transpose(-1, -2)  # backward: dv, dw
            w @ k, w.transpose(-1, -2) @ q  # dq, dk

    return step


# 7. digits end to end -------------------------------------------------------------------

def digits_data() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits: 1797 images as float32 in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)


def _digits_trainer(lib, quick, x, y, wrap=lambda f: f):
    """digits' training on (x, y): a fresh model, Adam and shuffling loader, and `run()` for
    its epochs, the per-batch step passed through `wrap` (a compiler, for the compiled row)."""
    epochs = 2 if quick else 20
    model = _mlp(lib, [64, 128, 10])
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    data = lib.utils.data
    loader = data.DataLoader(data.TensorDataset(lib.tensor(x), lib.tensor(y)),
                             batch_size=64, shuffle=True)
    loss_fn = lib.nn.CrossEntropyLoss()

    @wrap
    def train_step(xb, yb):
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()

    def run():
        for _ in range(epochs):
            for xb, yb in loader:
                train_step(xb, yb)

    return run


def digits(lib, quick):
    """digits end to end: each call builds the model, optimizer and loader and trains."""
    x, y = digits_data()

    def run():
        lib.manual_seed(0)
        _digits_trainer(lib, quick, x, y)()

    return run


def digits_trained(lib, quick, wrap=lambda f: f):
    """digits' epochs with the model, optimizer and loader built once and the per-batch
    step passed through `wrap` (a compiler): the compiled row compiles that step on the
    first call, whose time is reported apart, and every later call trains on."""
    return _digits_trainer(lib, quick, *digits_data(), wrap)


# Beyond the list: calls real programs make most often (shared/research/api-usage.md)

def index_get(lib, quick):
    x = _t(lib, _arr((32, 16)))

    def step():
        return x[3], x[:, 2], x[1:5]

    return step


def index_set(lib, quick):
    x, v = _t(lib, _arr((32, 16))), _t(lib, _arr(16, 1))

    def step():
        x[3] = v
        x[:, 2] = 0.5

    return step


def classifier_head(lib, quick):
    """What a training loop does with a batch's class scores besides the loss."""
    logits = _t(lib, _arr((4096, 10)))
    y = lib.tensor(np.random.default_rng(1).integers(0, 10, 4096))

    def step():
        probs = logits.softmax(1)
        accuracy = (logits.argmax(1) == y).float().mean()
        return probs.amax(1).sum(), accuracy

    return step


# 8. convolutional networks ------------------------------------------------------------

def _init_params(lib, model, scale=0.1):
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * scale))


def build_resnet(lib, widths=(32, 64, 128), classes=10):
    """A ResNet-18-style stack: a 3x3 stem, one basic block per width (the later ones
    stride 2 with a 1x1 projection shortcut), global average pooling, a linear head."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.short = nn.Sequential()
            if stride != 1 or c_in != c_out:
                self.short = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                           nn.BatchNorm2d(c_out))

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(y)) + self.short(x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False),
                                      nn.BatchNorm2d(widths[0]), nn.ReLU())
            blocks, c = [], widths[0]
            for i, w in enumerate(widths):
                blocks.append(Block(c, w, 1 if i == 0 else 2))
                c = w
            self.blocks = nn.Sequential(*blocks)
            self.head = nn.Linear(c, classes)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))

    model = ResNet()
    _init_params(lib, model)
    with lib.no_grad():  # BatchNorm starts as the identity affine, as PyTorch initialises it
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.fill_(1.0)
                m.bias.zero_()
    return model


def resnet_step(lib, quick):
    model = build_resnet(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    batch = 8 if quick else 32
    x = _t(lib, _arr((batch, 3, 32, 32)))
    y = lib.tensor(np.random.default_rng(1).integers(0, 10, batch))
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def build_mnist_cnn(lib):
    """The network of PyTorch's MNIST example (examples/mnist/main.py)."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net()
    _init_params(lib, model, 0.05)
    return model


def mnist_cnn_step(lib, quick):
    model = build_mnist_cnn(lib)
    opt = lib.optim.Adadelta(model.parameters(), lr=1.0)
    batch = 16 if quick else 64
    x = _t(lib, _arr((batch, 1, 28, 28)))
    y = lib.tensor(np.random.default_rng(1).integers(0, 10, batch))
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()

    return step


def conv2d(c_in, c_out, k, stride, size, groups=1):
    """conv2d forward and backward (input and weight gradients) alone, batch 32."""
    def setup(lib, quick):
        batch = 8 if quick else 32
        x = _t(lib, _arr((batch, c_in, size, size)), True)
        w = _t(lib, _arr((c_out, c_in // groups, k, k), 1) * 0.1, True)
        F = lib.nn.functional

        def step():
            x.grad = w.grad = None
            F.conv2d(x, w, None, stride, k // 2, 1, groups).sum().backward()

        return step

    return setup



def batchnorm2d(lib, quick):
    """BatchNorm2d in training mode, forward and backward (input, weight and bias gradients)
    on a ResNet-sized activation (batch 32, 64 channels, 32x32)."""
    batch = 8 if quick else 32
    bn = lib.nn.BatchNorm2d(64)
    x = _t(lib, _arr((batch, 64, 32, 32)), True)
    g = _t(lib, _arr((batch, 64, 32, 32), 1))

    def step():
        x.grad = bn.weight.grad = bn.bias.grad = None
        bn(x).backward(g)

    return step


# 6b. kernels inside training and sampling programs -------------------------------------

def adam_step(lib, quick):
    """Adam's update of two 1024 x 1024 float32 parameters (gradients set once)."""
    n = 256 if quick else 1024
    params = [lib.nn.Parameter(_t(lib, _arr((n, n), s))) for s in range(2)]
    for k, p in enumerate(params):
        p.grad = _t(lib, _arr((n, n), 2 + k))
    return lib.optim.Adam(params, lr=1e-3).step


def group_norm_step(lib, quick):
    """GroupNorm(8 groups, 64 channels) forward and backward on an 8 x 64 x 32 x 32 input."""
    gn = lib.nn.GroupNorm(8, 64)
    x = _t(lib, _arr((2 if quick else 8, 64, 32, 32)), True)

    def step():
        x.grad = gn.weight.grad = gn.bias.grad = None
        gn(x).sum().backward()

    return step


def transpose_copy(lib, quick):
    """`x.t().contiguous()` of a 1024 x 1024 float32 matrix."""
    n = 256 if quick else 1024
    x = _t(lib, _arr((n, n)))
    return lambda: x.t().contiguous()


def sample_token(lib, quick):
    """One token drawn from a softmax over a GPT-2-sized vocabulary (torch.multinomial)."""
    probs = _t(lib, _arr((1, 50257))).softmax(-1)
    return lambda: lib.multinomial(probs, 1)


# 7. function transforms --------------------------------------------------------------

def _small_mlp_params(lib):
    return {"w1": _t(lib, _arr((32, 64), 1) * 0.2), "b1": _t(lib, _arr((64,), 2) * 0.1),
            "w2": _t(lib, _arr((64, 10), 3) * 0.2), "b2": _t(lib, _arr((10,), 4) * 0.1)}


def per_sample_grads(lib, quick):
    """Per-example gradients of a small MLP's loss, batch 64: vmap(grad(loss))."""
    params = _small_mlp_params(lib)
    xs = _t(lib, _arr((64, 32), 5))
    ys = lib.tensor(np.random.default_rng(6).integers(0, 10, 64))

    def loss(p, x, y):
        h = (x @ p["w1"] + p["b1"]).tanh()
        logits = h @ p["w2"] + p["b2"]
        return lib.nn.functional.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))

    fn = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: fn(params, xs, ys)


def _f64(lib):
    w = _t(lib, _arr((64, 64), 7) * 0.1)
    return lambda x: (x @ w).tanh() @ w.T


def jacrev_64(lib, quick):
    x = _t(lib, _arr((64,), 8))
    fn = lib.func.jacrev(_f64(lib))
    return lambda: fn(x)


def jacfwd_64(lib, quick):
    x = _t(lib, _arr((64,), 8))
    fn = lib.func.jacfwd(_f64(lib))
    return lambda: fn(x)


def hessian_64(lib, quick):
    """hessian (jacfwd over jacrev) of a scalar function of 64 inputs."""
    x = _t(lib, _arr((64,), 8))
    f = _f64(lib)
    fn = lib.func.hessian(lambda v: f(v).sum())
    return lambda: fn(x)


def per_example_jacobians(lib, quick):
    """vmap(jacrev(f)) of a 16 -> 16 function over a batch of 32."""
    w = _t(lib, _arr((16, 16), 9) * 0.1)
    xs = _t(lib, _arr((32, 16), 10))
    fn = lib.func.vmap(lib.func.jacrev(lambda v: (v @ w).tanh() @ w.T))
    return lambda: fn(xs)


def per_example_hessians(lib, quick):
    """vmap(hessian(f)) of a scalar function of 16 inputs over a batch of 32."""
    w = _t(lib, _arr((16, 16), 9) * 0.1)
    xs = _t(lib, _arr((32, 16), 10))
    fn = lib.func.vmap(lib.func.hessian(lambda v: ((v @ w).tanh() @ w.T).sum()))
    return lambda: fn(xs)


# 8. compile: ember.compile's modes against torch eager (the rows' torch side runs eagerly;
# `torch_compiled` runs torch.compile on the torch side instead, for the comparison)

_PURE = {"default": "proven", "python": False, "pure": True, "torch_compiled": True}


def compiled(setup, how="default", inner=False):
    """`setup`'s step with ember's side compiled: "default" (PyTorch's semantics: a call
    replays only where ember proves its Python free of effects, graph/proof.py), "python"
    (the Python runs every call: `options={"pure": False}`), "pure" (ember's option: a
    matching call replays the program), or "torch_compiled" (ember pure against
    torch.compile). `torch_compile=True` compiles torch's side too (the torch.compile
    anchor). With `inner`, the setup takes the compiler and applies it to its own
    per-batch step (a loop over batches)."""
    def wrapped(lib, quick, torch_compile=False):
        if lib.__name__ == "ember":
            wrap = lambda f: lib.compile(f, options={"pure": _PURE[how]})
        elif how == "torch_compiled" or torch_compile:
            wrap = lib.compile
        else:
            wrap = lambda f: f
        return setup(lib, quick, wrap) if inner else wrap(setup(lib, quick))

    return wrapped


WORKLOADS = [
    Workload("dispatch_add", dispatch_add, 3.0),
    Workload("dispatch_mul_grad", dispatch_mul_grad, 3.0),
    Workload("mlp_step", mlp_step, 1.3),
    Workload("elementwise_16M", elementwise, 0.5, _gbps(N_ELEM), memory=True),
    Workload("matmul_1024", matmul(1024), 1.0, _gflops(1024), numpy=True),
    Workload("matmul_2048", matmul(2048), 1.0, _gflops(2048), numpy=True),
    Workload("softmax_xent", softmax_xent, 2.0, memory=True),
    Workload("gpt_step", gpt_step, 1.3, memory=True),
    Workload("gpt_step_products", gpt_step_products, None),
    Workload("digits_e2e", digits, 1.0),
    Workload("index_get", index_get, None),
    Workload("index_set", index_set, None),
    Workload("classifier_head", classifier_head, None),
    Workload("resnet_step", resnet_step, 1.2, memory=True),
    Workload("mnist_cnn_step", mnist_cnn_step, 1.0, memory=True),
    Workload("batchnorm2d", batchnorm2d, 1.0, memory=True),
    Workload("conv2d_3x3", conv2d(64, 64, 3, 1, 16), None, memory=True),
    Workload("conv2d_1x1", conv2d(64, 128, 1, 1, 16), None, memory=True),
    Workload("conv2d_stride2", conv2d(64, 128, 3, 2, 16), None, memory=True),
    Workload("conv2d_depthwise", conv2d(128, 128, 3, 1, 16, groups=128), None, memory=True),
    Workload("adam_step", adam_step, None),
    Workload("group_norm_step", group_norm_step, None),
    Workload("transpose_copy", transpose_copy, None),
    Workload("sample_token", sample_token, None),
    Workload("compiled_mlp_step", compiled(mlp_step), 0.3, jax="mlp_step"),
    Workload("compiled_mlp_step_python", compiled(mlp_step, "python"), None),
    Workload("compiled_mlp_step_pure", compiled(mlp_step, "pure"), 0.3),
    Workload("compiled_mlp_step_vs_torch_compile", compiled(mlp_step, "torch_compiled"), None),
    Workload("compiled_model_mlp_step", compiled(mlp_model_step, inner=True), None),
    Workload("compiled_gpt_step", compiled(gpt_step), 0.6, jax="gpt_step"),
    Workload("compiled_gpt_step_pure", compiled(gpt_step, "pure"), 0.6),
    Workload("compiled_softmax_xent", compiled(softmax_xent), 0.6, jax="softmax_xent"),
    Workload("compiled_elementwise_16M", compiled(elementwise), 0.25, _gbps(N_ELEM),
             memory=True, jax="elementwise"),
    Workload("compiled_digits", compiled(digits_trained, inner=True), 0.5, jax="digits"),
    Workload("per_sample_grads", per_sample_grads, 1.5),
    Workload("jacrev_64", jacrev_64, 2.0),
    Workload("jacfwd_64", jacfwd_64, 2.0),
    Workload("hessian_64", hessian_64, None),
    Workload("per_example_jacobians", per_example_jacobians, None),
    Workload("per_example_hessians", per_example_hessians, None),
]
