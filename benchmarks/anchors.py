"""The anchors beside ember's compiled rows: JAX ports of their steps under `jax.jit`, and
the first-call (compile) times of the MLP step in ember, torch.compile and JAX.

Each JAX port does what the torch workload of the same name does, with the same layer
sizes, batch, float32 data from the same NumPy seeds, loss and optimizer (written out: the
update formulas of torch.optim's SGD, Adam and AdamW), and jits the whole step, optimizer
update included; the step returns once `block_until_ready` says the results exist. JAX
is optional (`pip install .[bench]`): without it the rows say "jax: not installed".

The torch.compile anchor needs nothing here: it is `torch.compile` of torch's own eager
step (`workloads.compiled(..., torch_compile=True)`).

    python -m benchmarks.anchors --compile-times [--anchors] [--threads N]
    python -m benchmarks.anchors --check   # each JAX port against torch eager, two steps
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .workloads import N_ELEM, _arr, digits_data


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def limit_jax_threads(threads: int) -> None:
    """Hold JAX to one core when asked (before JAX is imported): XLA's CPU client has no
    thread-count setting, so its Eigen matmuls go single-threaded and the process is pinned
    to one core (the rest of XLA's pool then takes turns on it)."""
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _params(shapes: list[tuple], scale: float) -> list[np.ndarray]:
    """Parameters drawn as the workloads draw them: one generator, seed 0, in the order of
    the torch module's `parameters()`, each standard normal times `scale`."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) * scale for s in shapes]


def _runner(jstep, state, *batch):
    """A zero-argument step that advances `state` with `jstep` and waits for the result
    (the batch is placed on the device once, as the torch workloads make their tensors once)."""
    import jax

    box, batch = [state], jax.device_put(batch)

    def step():
        box[0] = jstep(box[0], *batch)
        jax.block_until_ready(box[0])

    return step


def _cross_entropy(logits, y):
    import jax
    import jax.numpy as jnp

    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))


def _linear(x, w, b=None):
    y = x @ w.T  # torch's layout: weight is (out, in)
    return y if b is None else y + b


def _adam(lr, weight_decay=0.0, decoupled=False, b1=0.9, b2=0.999, eps=1e-8):
    """torch.optim.Adam (decoupled=False: L2 added to the gradient) or AdamW
    (decoupled=True: the weight shrinks by lr * weight_decay first), as a pure update."""
    import jax
    import jax.numpy as jnp

    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return {"t": jnp.zeros((), jnp.float32), "m": zeros, "v": zeros}

    def update(params, grads, opt):
        t = opt["t"] + 1
        if weight_decay and not decoupled:
            grads = jax.tree.map(lambda g, p: g + weight_decay * p, grads, params)
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], grads)
        c1, c2 = 1 - b1**t, 1 - b2**t

        def move(p, m, v):
            if weight_decay and decoupled:
                p = p * (1 - lr * weight_decay)
            return p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps)

        return jax.tree.map(move, params, m, v), {"t": t, "m": m, "v": v}

    return init, update


# MLP (64-128-10, ReLU, batch 64, cross-entropy, SGD lr 0.01) --------------------------------

def _mlp_params(sizes):
    shapes = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        shapes += [(n_out, n_in), (n_out,)]
    flat = _params(shapes, 0.1)
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def _mlp_forward(params, x):
    import jax

    for i, (w, b) in enumerate(params):
        x = _linear(x, w, b)
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x


def _mlp_sgd():
    """The jitted step (params, x, y) -> params, and the initial parameters."""
    import jax

    def loss(params, x, y):
        return _cross_entropy(_mlp_forward(params, x), y)

    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    return step, jax.device_put(_mlp_params([64, 128, 10]))


def _mlp_batch():
    return _arr((64, 64)), np.random.default_rng(1).integers(0, 10, 64)


def mlp_step(quick):
    return _runner(*_mlp_sgd(), *_mlp_batch())


# GPT (vocab 65, d 128, 4 heads, 2 blocks, sequence 64, batch 16, tied head, AdamW) ---------

_BLOCK = ["ln1_w", "ln1_b", "ln2_w", "ln2_b", "qkv_w", "qkv_b", "proj_w", "proj_b", "fc_w",
          "fc_b", "out_w", "out_b"]  # a block's parameters in torch's `parameters()` order


def _gpt_flat(p) -> list:
    """The GPT's parameters in torch's `parameters()` order."""
    return ([p["tok"], p["pos"]] + [b[n] for b in p["blocks"] for n in _BLOCK]
            + [p["ln_w"], p["ln_b"]])


def _gpt_params(vocab=65, d=128, layers=2, seq=64):
    block = [(d,), (d,), (d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (4 * d, d), (4 * d,),
             (d, 4 * d), (d,)]
    flat = _params([(vocab, d), (seq, d)] + block * layers + [(d,), (d,)], 0.02)
    blocks = [dict(zip(_BLOCK, flat[2 + i * 12: 14 + i * 12])) for i in range(layers)]
    return {"tok": flat[0], "pos": flat[1], "blocks": blocks, "ln_w": flat[-2],
            "ln_b": flat[-1]}


def _layer_norm(x, w, b, eps=1e-5):
    import jax.numpy as jnp

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * w + b


def _gpt_forward(p, idx, heads=4):
    import jax

    b, t = idx.shape
    d = p["tok"].shape[1]
    x = p["tok"][idx] + p["pos"][:t]
    for k in p["blocks"]:
        qkv = _linear(_layer_norm(x, k["ln1_w"], k["ln1_b"]), k["qkv_w"], k["qkv_b"])
        q, kk, v = (z.reshape(b, t, heads, d // heads) for z in (qkv[..., :d],
                                                                   qkv[..., d:2 * d],
                                                                   qkv[..., 2 * d:]))
        y = jax.nn.dot_product_attention(q, kk, v, is_causal=True)  # (b, t, heads, d/heads)
        x = x + _linear(y.reshape(b, t, d), k["proj_w"], k["proj_b"])
        h = jax.nn.gelu(_linear(_layer_norm(x, k["ln2_w"], k["ln2_b"]), k["fc_w"], k["fc_b"]),
                        approximate=False)  # torch's GELU default is the exact (erf) one
        x = x + _linear(h, k["out_w"], k["out_b"])
    return _linear(_layer_norm(x, p["ln_w"], p["ln_b"]), p["tok"])  # the tied head


def _gpt_adamw():
    """The jitted step (state, idx, targets) -> state, and the initial state."""
    import jax

    init, update = _adam(3e-4, weight_decay=0.01, decoupled=True)  # AdamW's defaults

    def loss(params, idx, tgt):
        return _cross_entropy(_gpt_forward(params, idx).reshape(-1, 65), tgt.reshape(-1))

    @jax.jit
    def step(state, idx, tgt):
        params, opt = state
        return update(params, jax.grad(loss)(params, idx, tgt), opt)

    params = jax.device_put(_gpt_params())
    return step, (params, init(params))


def _gpt_batch():
    rng = np.random.default_rng(1)
    return rng.integers(0, 65, (16, 64)), rng.integers(0, 65, (16, 64))


def gpt_step(quick):
    return _runner(*_gpt_adamw(), *_gpt_batch())


# softmax + cross-entropy forward and backward on (4096, 1000) ------------------------------

def _xent_inputs(quick):
    rows = 1024 if quick else 4096
    return _arr((rows, 1000)) * 3, np.random.default_rng(1).integers(0, 1000, rows)


def softmax_xent(quick):
    import jax

    logits, y = jax.device_put(_xent_inputs(quick))
    fwd_bwd = jax.jit(jax.value_and_grad(_cross_entropy))

    def step():
        jax.block_until_ready(fwd_bwd(logits, y))

    return step


# a * b + c on 16M float32 --------------------------------------------------------------------

def elementwise(quick):
    import jax

    n = N_ELEM // (16 if quick else 1)
    a, b, c = (jax.device_put(_arr(n, s)) for s in range(3))
    fma = jax.jit(lambda a, b, c: a * b + c)

    def step():
        fma(a, b, c).block_until_ready()

    return step


# digits: the MLP on scikit-learn's digits, Adam lr 1e-3, batch 64, shuffled each epoch -----

def _mlp_adam():
    """The jitted step (state, x, y) -> state with Adam (lr 1e-3), and the initial state."""
    import jax

    init, update = _adam(1e-3)

    def loss(params, xb, yb):
        return _cross_entropy(_mlp_forward(params, xb), yb)

    @jax.jit
    def step(state, xb, yb):
        params, opt = state
        return update(params, jax.grad(loss)(params, xb, yb), opt)

    params = jax.device_put(_mlp_params([64, 128, 10]))
    return step, (params, init(params))


def digits(quick):
    """One call = `epochs` epochs of the same model (built once, as the compiled workload's
    is); batches are drawn on the host in a fresh permutation each epoch, as a shuffling
    DataLoader does, and the jitted step takes them (the last one, 5 rows, its own shape)."""
    import jax

    x, y = digits_data()
    epochs = 2 if quick else 20
    step, state = _mlp_adam()
    box = [state]
    rng = np.random.default_rng(0)

    def run():
        for _ in range(epochs):
            order = rng.permutation(len(x))
            for i in range(0, len(x), 64):
                take = order[i:i + 64]
                box[0] = step(box[0], x[take], y[take])
        jax.block_until_ready(box[0])

    return run


# Faithfulness: one step of each port against torch eager's -------------------------------

def check() -> list[tuple[str, float]]:
    """(what, largest absolute difference) between each JAX port and torch's eager step
    from the same start: parameters after two steps (the optimizer's state then counts),
    the softmax + cross-entropy gradient, `a * b + c`. float32 both; differences of
    ~1e-7 are rounding (summation orders, fused multiply-adds); a wrong loss, gradient or
    update shows at the size of a step's change (1e-4 and up)."""
    import jax
    import torch

    from . import workloads as W

    def after_two(model, opt, forward_loss, jstep, state, *batch):
        for _ in range(2):
            opt.zero_grad()
            forward_loss().backward()
            opt.step()
            state = jstep(state, *batch)
        params = state if isinstance(state, list) else state[0]
        ours = _gpt_flat(params) if isinstance(params, dict) else jax.tree.leaves(params)
        theirs = [p.detach().numpy() for p in model.parameters()]
        return max(float(np.abs(np.asarray(a) - b).max()) for a, b in zip(ours, theirs))

    out = []
    torch.manual_seed(0)
    model = W._mlp(torch, [64, 128, 10])
    x, y = _mlp_batch()
    tx, ty = torch.tensor(x), torch.tensor(y)
    out.append(("MLP step, SGD", after_two(
        model, torch.optim.SGD(model.parameters(), lr=0.01),
        lambda: torch.nn.functional.cross_entropy(model(tx), ty), *_mlp_sgd(), x, y)))
    model = W._mlp(torch, [64, 128, 10])
    xd, yd = (a[:64] for a in digits_data())
    tx, ty = torch.tensor(xd), torch.tensor(yd)
    out.append(("digits step, Adam", after_two(
        model, torch.optim.Adam(model.parameters(), lr=1e-3),
        lambda: torch.nn.functional.cross_entropy(model(tx), ty), *_mlp_adam(), xd, yd)))
    model = W.build_gpt(torch)
    idx, tgt = _gpt_batch()
    ti, tt = torch.tensor(idx), torch.tensor(tgt)
    out.append(("GPT step, AdamW", after_two(
        model, torch.optim.AdamW(model.parameters(), lr=3e-4),
        lambda: torch.nn.functional.cross_entropy(model(ti).view(-1, 65), tt.view(-1)),
        *_gpt_adamw(), idx, tgt)))
    logits, y = _xent_inputs(True)
    t = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(t, torch.tensor(y)).backward()
    grad = jax.grad(_cross_entropy)(logits, y)
    out.append(("softmax + cross-entropy gradient",
                float(np.abs(np.asarray(grad) - t.grad.numpy()).max())))
    a, b, c = (_arr(1000, s) for s in range(3))
    got = jax.jit(lambda a, b, c: a * b + c)(a, b, c)
    out.append(("a * b + c", float(np.abs(np.asarray(got) - (a * b + c)).max())))
    return out


# The compile-time table: first call of the MLP step in a new process ------------------------

KINDS = {  # kind -> (library to have, the cache folder's environment variable)
    "ember": ("ember", "EMBER_CACHE_DIR"),
    "ember pure": ("ember", "EMBER_CACHE_DIR"),
    "torch.compile": ("torch", "TORCHINDUCTOR_CACHE_DIR"),
    "jax jit": ("jax", "JAX_COMPILATION_CACHE_DIR"),
}


def first_call(kind: str, threads: int = 0) -> dict:
    """Seconds of the MLP step's first call (compile and one run) and of a later call, in
    this process (a worker: the parent chooses the cache folder)."""
    from . import workloads

    if kind == "jax jit":
        limit_jax_threads(threads)
        step = mlp_step(False)
    else:
        lib = __import__(KINDS[kind][0])
        if threads:
            lib.set_num_threads(threads)
        lib.manual_seed(0)
        how = "pure" if kind == "ember pure" else "default"
        step = workloads.compiled(workloads.mlp_step, how)(lib, False, torch_compile=True)
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    for _ in range(20):
        step()
    t0 = time.perf_counter()
    for _ in range(50):
        step()
    return {"first": first, "steady": (time.perf_counter() - t0) / 50}


def _first_call_in_subprocess(kind: str, env: dict, threads: int) -> dict:
    args = [sys.executable, "-m", "benchmarks.anchors", "--first-call", kind,
            "--threads", str(threads)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=1800, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else
                f"exit status {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_times(anchors: bool, threads: int = 0) -> list[dict]:
    """For each kind: the first call in a new process with an empty cache folder (cold),
    then in another new process with the folder the first one filled (warm)."""
    kinds = ["ember", "ember pure"] + (["torch.compile", "jax jit"] if anchors else [])
    rows = []
    for kind in kinds:
        lib, variable = KINDS[kind]
        if not installed(lib):
            rows.append({"kind": kind, "error": f"{lib}: not installed"})
            continue
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as folder:
            env = {**os.environ, variable: folder}
            if kind == "jax jit":  # JAX writes only compiles longer than 1 s by default
                env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
                env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
            row = {"kind": kind, "cold": _first_call_in_subprocess(kind, env, threads)}
            row["warm"] = _first_call_in_subprocess(kind, env, threads)
        rows.append(row)
    return rows


def format_compile_times(rows: list[dict]) -> str:
    def cell(r):
        if "error" in r:
            return f"{'failed':>10}"
        return f"{r['first']:8.3f} s"

    lines = ["compile time: the MLP step's first call in a new process (cold: empty cache "
             "folder; warm: the folder a first process filled); steady call beside it",
             f"  {'':<14}{'cold':>10}  {'warm cache':>10}  {'steady':>10}"
             "  (ember's target: < 1 s cold, < 0.2 s warm)"]
    for r in rows:
        if "error" in r:
            lines.append(f"  {r['kind']:<14}{r['error']}")
            continue
        steady = r["warm"].get("steady")
        steady = f"{steady * 1e6:7.0f} us" if steady is not None else ""
        lines.append(f"  {r['kind']:<14}{cell(r['cold'])}  {cell(r['warm'])}  {steady:>10}")
        for which in ("cold", "warm"):
            if "error" in r[which]:
                lines.append(f"    {which} failed: {r[which]['error']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compile-times", action="store_true", help="print the compile-time table")
    p.add_argument("--anchors", action="store_true", help="with torch.compile and JAX")
    p.add_argument("--check", action="store_true",
                   help="compare one step of each JAX port with torch eager's")
    p.add_argument("--threads", type=int, default=0,
                   help="threads per library (default: one per core)")
    p.add_argument("--first-call", choices=sorted(KINDS), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.first_call:
        print(json.dumps(first_call(args.first_call, args.threads)))
        return 0
    if args.check:
        for what, diff in check():
            print(f"{what:<34} largest difference {diff:.2e}")
        return 0
    print(format_compile_times(compile_times(args.anchors, args.threads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
