"""What the profiler costs per op, in ember and in torch.profiler, in one process.

    python -m benchmarks.profiler_overhead

`a + b` on 16 float32 elements, 20,000 calls: with no profiler, while a profiler records
(the time inside the `with` block), the whole `with` block, and the block followed by
`prof.events()` (which builds the event objects). Process CPU time, one thread, ember and torch
alternating, best of 8: on a shared machine each library's noise lands on both alike.
PyTorch records into C++ buffers and builds its Python events when the profile stops;
ember logs ints and strings into lists while recording and builds its events when asked.
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
    """Nanoseconds per op: profiler off, recording, the with-block, and then reading the
    events."""
    run = _adds(lib)
    out = {"off": [], "recording": [], "with block": [], "events read": []}
    for _ in range(rounds):
        out["off"].append(_per_op(run))
        p = prof.profile(activities=[prof.ProfilerActivity.CPU])
        p.start()
        out["recording"].append(_per_op(run))
        p.stop()
        del p

        def whole(read: bool):
            with prof.profile(activities=[prof.ProfilerActivity.CPU]) as p:
                run()
            if read:
                p.events()

        out["with block"].append(_per_op(lambda: whole(False)))
        out["events read"].append(_per_op(lambda: whole(True)))
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
    print("a + b, ns per op     off   recording       with block      events read")
    for lib, runs in rows.items():
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        cells = [f"{best[k]:6.0f} (+{best[k] - best['off']:.0f})"
                 for k in ("recording", "with block", "events read")]
        print(f"{lib:8}        {best['off']:6.0f}   " + "   ".join(cells))


if __name__ == "__main__":
    main()
