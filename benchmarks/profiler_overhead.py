"""What the profiler costs per op, in ember and in torch.profiler, in one process.

    python -m benchmarks.profiler_overhead

`a + b` on 16 float32 elements, 20,000 calls: with no profiler, while a profiler records
(the time inside the `with` block), and the whole `with` block (recording, then building
the events at exit). Process CPU time, one thread, ember and torch alternating, best of 7:
on a shared machine each library's noise lands on both columns alike. PyTorch records into
C++ buffers and builds its Python events when the profile stops; ember builds each event as
the op runs, so its cost is all in the recording column.
"""

from __future__ import annotations

import time

import numpy as np

N = 20_000


def _adds(lib):
    a = lib.tensor(np.ones(16, np.float32))
    b = lib.tensor(np.ones(16, np.float32))

    def run():
        for _ in range(N):
            a + b

    return run


def _per_op(fn) -> float:
    t = time.process_time()
    fn()
    return (time.process_time() - t) / N * 1e9


def measure(lib, prof, rounds: int = 7) -> dict:
    """Nanoseconds per op: profiler off, recording, and the whole with-block."""
    run = _adds(lib)
    out = {"off": [], "recording": [], "with block": []}
    for _ in range(rounds):
        out["off"].append(_per_op(run))
        p = prof.profile(activities=[prof.ProfilerActivity.CPU])
        p.start()
        out["recording"].append(_per_op(run))
        p.stop()

        def whole():
            with prof.profile(activities=[prof.ProfilerActivity.CPU]):
                run()

        out["with block"].append(_per_op(whole))
    return {k: min(v) for k, v in out.items()}


def main() -> None:
    import torch
    import torch.profiler

    import ember
    import ember.profiler

    torch.set_num_threads(1)
    ember.set_num_threads(1)
    rows = {"ember": [], "torch": []}
    for _ in range(2):  # alternate, so both see the machine's load alike
        rows["ember"].append(measure(ember, ember.profiler, 4))
        rows["torch"].append(measure(torch, torch.profiler, 4))
    print("a + b, ns per op   off   recording (+cost)   with block (+cost)")
    for lib, runs in rows.items():
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        print(f"{lib:8}        {best['off']:6.0f}   {best['recording']:6.0f} "
              f"(+{best['recording'] - best['off']:.0f})   {best['with block']:6.0f} "
              f"(+{best['with block'] - best['off']:.0f})")


if __name__ == "__main__":
    main()
