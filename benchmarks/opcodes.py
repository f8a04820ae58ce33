"""Count the interpreter work of one call of a workload: Python opcodes and calls.

    python -m benchmarks.opcodes mlp_step [--top 20]

On a shared machine a timing moves by 20% from run to run, which hides a change worth
2%. The number of bytecode instructions ember executes for one training step does not
move at all, so it measures the framework's own Python work exactly (the NumPy kernels,
which run in C, do not count). It is ember only: PyTorch's work is in C++.
"""

from __future__ import annotations

import argparse
import collections
import sys

from .workloads import WORKLOADS


def count(step) -> tuple[collections.Counter, collections.Counter]:
    """(opcodes, calls) per Python function for one call of `step`."""
    opcodes: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        code = frame.f_code
        key = f"{code.co_filename.rsplit('/src/', 1)[-1]}:{code.co_name}"
        if event == "opcode":
            opcodes[key] += 1
        elif event == "call":
            calls[key] += 1
        return tracer

    sys.settrace(tracer)
    try:
        step()
    finally:
        sys.settrace(None)
    return opcodes, calls


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=[w.name for w in WORKLOADS])
    p.add_argument("--top", type=int, default=0, help="list the functions doing the most")
    args = p.parse_args(argv)
    import ember

    w = next(w for w in WORKLOADS if w.name == args.workload)
    ember.manual_seed(0)
    step = w.setup(ember, True)
    for _ in range(3):  # warm: first calls build caches
        step()
    opcodes, calls = count(step)
    print(f"{w.name}: {sum(opcodes.values())} opcodes in {sum(calls.values())} Python calls")
    for key, n in opcodes.most_common(args.top):
        print(f"{n:8d} {calls[key]:6d}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
