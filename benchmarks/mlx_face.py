"""The MLX face against MLX itself: the same MLX programs on ember.mlx and on mlx[cpu],
with torch eager's version of each workload beside them.

    python -m benchmarks.mlx_face [--quick] [--only a,b] [--threads N] [--cpu-time]

Each (workload, framework) pair runs in its own fresh subprocess, three rounds alternating,
the better median kept (as benchmarks.run does). Frameworks: `ember.mlx` (lazy: each step
ends in `mx.eval`, so the step's graph is recorded, and run fused from its second run),
`ember.mlx eager` (the same program with EMBER_MLX_LAZY=0: each op runs at once), `mlx`
(mlx[cpu] 0.32.4), and `torch` (the PyTorch workload of benchmarks.workloads). Ratios are
to mlx[cpu]; torch's is printed beside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from . import workloads as W
from .run import processor, time_call


def _np(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def matmul_2048(mx, nn, optim, quick):
    n = 1024 if quick else 2048
    a, b = mx.array(_np((n, n))), mx.array(_np((n, n), 1))
    return lambda: mx.eval(a @ b)


def elementwise_16M(mx, nn, optim, quick):
    n = W.N_ELEM // (16 if quick else 1)
    a, b, c = (mx.array(_np(n, s)) for s in range(3))
    return lambda: mx.eval(a * b + c)


def _mlp(mx, nn, sizes):
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    rng = np.random.default_rng(0)
    from mlx.utils import tree_flatten, tree_unflatten  # (the framework's own, aliased)

    flat = [(k, mx.array(rng.standard_normal(v.shape).astype(np.float32) * 0.1))
            for k, v in tree_flatten(model.parameters())]
    model.update(tree_unflatten(flat))
    return model


def _mlp_parts(mx, nn, optim) -> tuple:
    """(model, SGD, x, y, value_and_grad of the mean cross-entropy) of the MLP rows."""
    model = _mlp(mx, nn, [64, 128, 10])
    x = mx.array(_np((64, 64)))
    y = mx.array(np.random.default_rng(1).integers(0, 10, 64).astype(np.int32))

    def loss_fn(model, x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    return model, optim.SGD(learning_rate=0.01), x, y, nn.value_and_grad(model, loss_fn)


def mlp_step(mx, nn, optim, quick):
    """The MLP training step of benchmarks.workloads.mlp_step, written as MLX programs
    write it: nn.value_and_grad, optimizer.update, one mx.eval per step."""
    model, opt, x, y, value_and_grad = _mlp_parts(mx, nn, optim)

    def step():
        loss, grads = value_and_grad(model, x, y)
        opt.update(model, grads)
        mx.eval(loss, model.parameters(), opt.state)

    return step


def mlp_step_compiled(mx, nn, optim, quick):
    """The MLP step under `mx.compile` with MLX's state pattern
    (`inputs=outputs=[model.state, optimizer.state]`): traced once, then replayed."""
    from functools import partial

    model, opt, x, y, value_and_grad = _mlp_parts(mx, nn, optim)
    state = [model.state, opt.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def train(x, y):
        loss, grads = value_and_grad(model, x, y)
        opt.update(model, grads)
        return loss

    def step():
        loss = train(x, y)
        mx.eval(loss, state)

    return step


def gpt_step(mx, nn, optim, quick):
    """benchmarks.workloads.gpt_step's tiny GPT (d 128, 4 heads, 2 blocks, 16 x 64 tokens,
    AdamW) as an MLX program: nn layers, mx.fast's causal attention, one eval per step."""
    vocab, d, heads, layers, seq = 65, 128, 4, 2, 64

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def __call__(self, x):
            b, t, _ = x.shape
            q, k, v = mx.split(self.qkv(self.ln1(x)), 3, axis=-1)
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
                       for z in (q, k, v))
            y = mx.fast.scaled_dot_product_attention(q, k, v, scale=(d // heads) ** -0.5,
                                                     mask="causal")
            x = x + self.proj(y.transpose(0, 2, 1, 3).reshape(b, t, d))
            return x + self.out(nn.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = [Block() for _ in range(layers)]
            self.ln = nn.LayerNorm(d)

        def __call__(self, idx):
            x = self.tok(idx) + self.pos(mx.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            return self.tok.as_linear(self.ln(x))

    model = GPT()
    rng = np.random.default_rng(1)
    idx = mx.array(rng.integers(0, vocab, (16, seq)).astype(np.int32))
    tgt = mx.array(rng.integers(0, vocab, (16, seq)).astype(np.int32))
    opt = optim.AdamW(learning_rate=3e-4)

    def loss_fn(model, idx, tgt):
        return nn.losses.cross_entropy(model(idx).reshape(-1, vocab), tgt.reshape(-1),
                                       reduction="mean")

    value_and_grad = nn.value_and_grad(model, loss_fn)

    def step():
        loss, grads = value_and_grad(model, idx, tgt)
        opt.update(model, grads)
        mx.eval(loss, model.parameters(), opt.state)

    return step


WORKLOADS = {
    "mlp_step": (mlp_step, W.mlp_step),
    "mlp_step_compiled": (mlp_step_compiled, W.mlp_step),
    "gpt_step": (gpt_step, W.gpt_step),
    "matmul_2048": (matmul_2048, W.matmul(2048)),
    "elementwise_16M": (elementwise_16M, W.elementwise),
}
FRAMEWORKS = ("ember.mlx", "ember.mlx eager", "mlx", "torch")


def measure(name: str, framework: str, quick: bool, threads: int, cpu_time: bool) -> dict:
    """Time one workload in one framework inside this (fresh) process."""
    mlx_setup, torch_setup = WORKLOADS[name]
    if framework == "torch":
        import torch

        torch.set_num_threads(threads or os.cpu_count() or 1)
        torch.manual_seed(0)
        step = torch_setup(torch, quick)
    else:
        if framework.startswith("ember"):
            from ember import compat

            compat.install()  # `import mlx` now means ember.mlx
            if threads:
                import ember

                ember.set_num_threads(threads)
        import mlx.core as mx
        import mlx.nn as nn
        import mlx.optimizers as optim

        step = mlx_setup(mx, nn, optim, quick)
    budget, repeats = (0.5, 5) if quick else (2.0, 7)
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    samples = time_call(step, budget, repeats, time.process_time if cpu_time else time.perf_counter)
    return {"median": statistics.median(samples), "min": min(samples), "first": first}


def _in_subprocess(name: str, framework: str, quick: bool, threads: int,
                   cpu_time: bool) -> dict:
    env = dict(os.environ)
    if framework == "ember.mlx eager":
        env["EMBER_MLX_LAZY"] = "0"
    if threads == 1:  # one thread everywhere, OpenBLAS's pool and MLX's included
        env.update(OMP_NUM_THREADS="1", MLX_NUM_THREADS="1")
    args = [sys.executable, "-m", "benchmarks.mlx_face", "--worker", name, framework,
            "--threads", str(threads)] + (["--cpu-time"] if cpu_time else []) + \
        (["--quick"] if quick else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=1800, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--cpu-time", action="store_true")
    p.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "FRAMEWORK"))
    args = p.parse_args(argv)
    if args.worker:
        row = measure(*args.worker, args.quick, args.threads, args.cpu_time)
        print(json.dumps(row))
        return 0
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    print(f"# {processor()}; threads {args.threads or 'all'}; "
          f"{'CPU' if args.cpu_time else 'wall'} time; ratios to mlx[cpu] (lower is faster)")
    for name in names:
        best: dict = {}
        for _ in range(3):
            for fw in FRAMEWORKS:
                got = _in_subprocess(name, fw, args.quick, args.threads, args.cpu_time)
                if fw not in best or got.get("median", np.inf) < best[fw].get("median", np.inf):
                    best[fw] = got
        ref = best["mlx"].get("median")
        cells = []
        for fw in FRAMEWORKS:
            r = best[fw]
            if "median" not in r:
                cells.append(f"{fw} failed: {r['error']}")
                continue
            ratio = f" ({r['median'] / ref:.2f}x)" if ref and fw != "mlx" else ""
            cells.append(f"{fw} {_fmt(r['median'])}{ratio}")
        print(f"{name:16s} " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
