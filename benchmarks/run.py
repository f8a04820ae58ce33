"""Run every workload in ember and torch in this one process and print ratios.

    python -m benchmarks.run [--quick] [--only a,b] [--json out.json]

Timing: warm-up, then `repeats` samples of an adaptive number of calls; the
median, min and max per call are reported with ember / torch ratios. Peak memory
is measured in a fresh subprocess per framework (Linux VmHWM, reset before the
workload runs), so one framework's allocations never count against the other.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

from .workloads import WORKLOADS, Workload


def _libs():
    import torch

    import ember

    torch.set_num_threads(os.cpu_count() or 1)
    return {"ember": ember, "torch": torch}


def time_call(fn, budget: float, repeats: int) -> list[float]:
    """Seconds per call: `repeats` samples, each of enough calls to fill budget/repeats."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    per_sample = budget / repeats
    number = max(1, int(per_sample / once))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return samples


def peak_memory(name: str, lib_name: str, quick: bool) -> int | None:
    """Peak resident bytes above the post-setup level while running one call (subprocess)."""
    code = (
        "import sys, gc\n"
        f"from benchmarks.workloads import WORKLOADS\n"
        f"import {lib_name} as lib\n"
        f"w = next(w for w in WORKLOADS if w.name == {name!r})\n"
        f"step = w.setup(lib, {quick})\n"
        "step()\n"
        "gc.collect()\n"
        "def rss(key):\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(key):\n"
        "            return int(line.split()[1]) * 1024\n"
        "base = rss('VmRSS:')\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "step()\n"
        "print(rss('VmHWM:') - base)\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=600, cwd=os.path.dirname(os.path.dirname(__file__)))
        return int(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError, OSError, subprocess.SubprocessError):
        return None


def machine_limits(quick: bool) -> dict:
    """What NumPy itself reaches here: copy bandwidth and float32 matmul rate."""
    n = (64 if quick else 256) * 1024 * 1024 // 4
    src = np.ones(n, np.float32)
    dst = np.empty_like(src)
    t = min(time_call(lambda: np.copyto(dst, src), 1.0, 5))
    m = 1024 if quick else 2048
    a = np.random.default_rng(0).standard_normal((m, m)).astype(np.float32)
    tm = min(time_call(lambda: a @ a, 2.0, 5))
    return {"copy_GBps": 2 * n * 4 / t / 1e9, "matmul_GFLOPs": 2 * m**3 / tm / 1e9}


def run(selected: list[Workload], quick: bool, memory: bool) -> list[dict]:
    libs = _libs()
    budget, repeats = (0.5, 5) if quick else (2.0, 7)
    results = []
    for w in selected:
        row = {"name": w.name, "target": w.target}
        for lib_name, lib in libs.items():
            lib.manual_seed(0)
            step = w.setup(lib, quick)
            samples = time_call(step, budget if w.name != "digits_e2e" else budget * 2,
                                repeats if w.name != "digits_e2e" else 3)
            row[lib_name] = {"median": statistics.median(samples), "min": min(samples),
                             "max": max(samples)}
            if w.rate is not None:
                row[lib_name]["rate"] = w.rate(row[lib_name]["median"])
            if memory and w.memory:
                row[lib_name]["peak_bytes"] = peak_memory(w.name, lib_name, quick)
        row["ratio"] = row["ember"]["median"] / row["torch"]["median"]
        pe, pt = row["ember"].get("peak_bytes"), row["torch"].get("peak_bytes")
        if pe and pt:
            row["memory_ratio"] = pe / pt
        results.append(row)
        print(_format_row(row), flush=True)
    return results


def _fmt_time(s: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:7.2f} {unit}"
    return f"{s / 1e-9:7.1f} ns"


def _format_row(r: dict) -> str:
    e, t = r["ember"], r["torch"]
    ok = "ok" if r["target"] is None or r["ratio"] <= r["target"] else "MISS"
    mem = f"  mem x{r['memory_ratio']:.2f}" if "memory_ratio" in r else ""
    rate = f"  [{e['rate']} vs {t['rate']}]" if "rate" in e else ""
    return (f"{r['name']:<18} ember {_fmt_time(e['median'])} (min {_fmt_time(e['min'])})  "
            f"torch {_fmt_time(t['median'])}  ratio {r['ratio']:5.2f} "
            f"(target <= {r['target']}) {ok}{mem}{rate}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, shorter timing")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "latest.json"))
    p.add_argument("--no-memory", action="store_true", help="skip peak-memory subprocesses")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    selected = [w for w in WORKLOADS if not names or w.name in names]
    if names and len(selected) != len(names):
        known = ", ".join(w.name for w in WORKLOADS)
        p.error(f"unknown workload in --only; known: {known}")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}")
    limits = machine_limits(args.quick)
    print(f"machine: copy {limits['copy_GBps']:.1f} GB/s, NumPy float32 matmul "
          f"{limits['matmul_GFLOPs']:.1f} GFLOP/s")
    results = run(selected, args.quick, not args.no_memory)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"machine": limits, "quick": args.quick, "results": results}, f, indent=2)
    print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
