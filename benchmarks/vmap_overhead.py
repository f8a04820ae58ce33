"""vmap against the same computation written batched by hand, in ember (and in torch).

    python -m benchmarks.vmap_overhead

A matmul-heavy function of one example (two dense layers and a softmax over 256 features)
mapped over a batch of 64 with `vmap`, against the same function written for the batch.
The ratio is vmap's time over the hand-batched time in the same library: what batching
through the interpreter costs. Issue target: within 1.2x in ember.
"""

from __future__ import annotations

import time

import numpy as np


def _time(fn, budget: float = 1.0) -> float:
    fn()
    best = float("inf")
    end = time.perf_counter() + budget
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        best = min(best, (time.perf_counter() - t0) / 5)
    return best


def measure(lib) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    w1 = lib.tensor(rng.standard_normal((256, 512)).astype(np.float32) * 0.05)
    w2 = lib.tensor(rng.standard_normal((512, 256)).astype(np.float32) * 0.05)
    xs = lib.tensor(rng.standard_normal((64, 256)).astype(np.float32))

    def one(x):
        return ((x @ w1).tanh() @ w2).softmax(-1)

    mapped = lib.vmap(one)
    return _time(lambda: mapped(xs)), _time(lambda: one(xs))


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(2)
    for name, lib in (("ember", ember), ("torch", torch)):
        v, h = measure(lib)
        print(f"{name:<6} vmap {v * 1e6:9.1f} us   by hand {h * 1e6:9.1f} us   "
              f"vmap / by hand {v / h:5.2f}")


if __name__ == "__main__":
    main()
