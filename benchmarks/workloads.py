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


def mlp_step(lib, quick):
    model = _mlp(lib, [64, 128, 10])
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


# 7. digits end to end -------------------------------------------------------------------

def digits(lib, quick):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    epochs = 2 if quick else 20

    def run():
        lib.manual_seed(0)
        model = _mlp(lib, [64, 128, 10])
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        data = lib.utils.data
        loader = data.DataLoader(data.TensorDataset(lib.tensor(x), lib.tensor(y)),
                                 batch_size=64, shuffle=True)
        loss_fn = lib.nn.CrossEntropyLoss()
        for _ in range(epochs):
            for xb, yb in loader:
                opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                opt.step()

    return run


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


WORKLOADS = [
    Workload("dispatch_add", dispatch_add, 3.0),
    Workload("dispatch_mul_grad", dispatch_mul_grad, 3.0),
    Workload("mlp_step", mlp_step, 1.3),
    Workload("elementwise_16M", elementwise, 0.5, _gbps(N_ELEM), memory=True),
    Workload("matmul_1024", matmul(1024), 1.0, _gflops(1024)),
    Workload("matmul_2048", matmul(2048), 1.0, _gflops(2048)),
    Workload("softmax_xent", softmax_xent, 2.0, memory=True),
    Workload("gpt_step", gpt_step, 1.3, memory=True),
    Workload("digits_e2e", digits, 1.0),
    Workload("index_get", index_get, None),
    Workload("index_set", index_set, None),
    Workload("classifier_head", classifier_head, None),
]
