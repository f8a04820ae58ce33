"""Run every workload in ember and in torch, one after the other, and print ratios.

    python -m benchmarks.run [--quick] [--only a,b] [--json out.json]
                             [--threads N] [--cpu-time] [--anchors]

Each (workload, framework) pair is timed in its own fresh subprocess: NumPy's OpenBLAS
threads and torch's OpenMP threads spin between calls, and sharing two cores inside
one process slows both unpredictably. Each pair runs three times, ember and torch
alternating, and each library's better run is kept, so a burst of load from elsewhere
on a shared machine does not decide a ratio. Timing: warm-up, then `repeats` samples
of an adaptive number of calls; the median, min and max per call are reported with
ember / torch ratios. Peak memory is the growth of the Linux VmHWM of that subprocess
over its first call (made before the timed ones).

On a machine shared with other jobs, `--threads 1 --cpu-time` compares the work each
library does per call instead: one thread each (OpenBLAS held to one as well) and
process CPU time, which other tenants' load barely moves (wall time with two threads is
where a loaded machine hurts most: a kernel split over both cores waits for its slower
half, and torch's OpenMP threads spin).

A workload that is one BLAS product (the matmul rows) also runs on NumPy's own `a @ b`
in the same alternating rounds: its `numpy` ratio (ember / NumPy) is the row's bound.

`--anchors` adds, under each compiled row that has one, torch.compile of torch's own step
and the step's JAX port under jax.jit (anchors.py), each as a ratio to torch eager from the
same alternating rounds, with its first call's time (compilation included, with the
on-disk caches as earlier runs left them: the compile-time table is the controlled
measurement); and that table, printed whenever compiled_mlp_step runs, gets torch.compile's
and JAX's lines beside ember's. torch.compile costs seconds to a minute per model and
round, so this is opt-in.
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

from . import anchors
from .workloads import WORKLOADS, NumPyLib, Workload


def time_call(fn, budget: float, repeats: int, clock=time.perf_counter) -> list[float]:
    """Seconds per call: `repeats` samples, each of enough calls to fill budget/repeats."""
    fn()
    t0 = clock()
    fn()
    once = max(clock() - t0, 1e-7)
    per_sample = budget / repeats
    number = max(1, int(per_sample / once))
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(number):
            fn()
        samples.append((clock() - t0) / number)
    return samples


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


def measure(name: str, lib_name: str, quick: bool, memory: bool, threads: int = 0,
            cpu_time: bool = False) -> dict:
    """Time one workload in one framework ("ember", "torch", "numpy", or an anchor:
    "torch.compile" or "jax") inside this (fresh) process."""
    import importlib

    w = next(w for w in WORKLOADS if w.name == name)
    if lib_name == "jax":
        anchors.limit_jax_threads(threads)
        lib = None
    elif lib_name == "numpy":
        lib = NumPyLib
        if threads:  # OpenBLAS's pool, as ember's worker holds it
            from ember.native.blas import thread_setter

            thread_setter()(threads)
    else:
        lib = importlib.import_module(lib_name.split(".")[0])
    if lib_name.startswith("torch"):
        lib.set_num_threads(threads or os.cpu_count() or 1)
    elif lib_name == "ember":  # (as a plain `import ember` program: no tune_allocator)
        if threads:
            lib.set_num_threads(threads)
        if threads == 1:  # OpenBLAS's own pool too, for the rest of this worker process
            from ember.ops._parallel import one_blas_thread

            one_blas_thread.__enter__()
    budget, repeats = (0.5, 5) if quick else (2.0, 7)
    if "digits" in name:
        budget, repeats = budget * 2, 3
    if lib_name == "jax":
        step = getattr(anchors, w.jax)(quick)
    else:
        lib.manual_seed(0)
        step = (w.setup(lib, quick, torch_compile=True) if lib_name == "torch.compile"
                else w.setup(lib, quick))
    # Peak memory of the first call, before any warm-up: later calls reuse memory the
    # allocator kept (each library's differently), which would hide what a step needs.
    # The first call's time is kept too: it includes compiling, for the compiled rows.
    t0 = time.perf_counter()
    peak = None
    if memory and w.memory:
        peak = _peak_of(step)
    else:
        step()
    first = time.perf_counter() - t0
    samples = time_call(step, budget, repeats, time.process_time if cpu_time else time.perf_counter)
    row = {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
           "first": first}
    if w.rate is not None:
        row["rate"] = w.rate(row["median"], quick)
    if peak is not None:
        row["peak_bytes"] = peak
    return row


def _rss(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def _peak_of(step) -> int | None:
    """Bytes of resident memory one call adds at its peak (Linux only)."""
    import gc

    gc.collect()
    try:
        base = _rss("VmRSS:")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    step()
    return max(_rss("VmHWM:") - base, 0)


def _in_subprocess(name: str, lib_name: str, quick: bool, memory: bool, threads: int = 0,
                   cpu_time: bool = False) -> dict:
    args = [sys.executable, "-m", "benchmarks.run", "--worker", name, lib_name,
            "--threads", str(threads)]
    if cpu_time:
        args.append("--cpu-time")
    if quick:
        args.append("--quick")
    if not memory:
        args.append("--no-memory")
    out = subprocess.run(args, capture_output=True, text=True, timeout=1800,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if out.returncode != 0:
        raise RuntimeError(f"{name} on {lib_name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _anchor_in_subprocess(name: str, lib_name: str, quick: bool, threads: int,
                          cpu_time: bool) -> dict:
    """An anchor's measurement, or {"error": why} (a failing anchor is reported, and the
    rest of the run goes on)."""
    if lib_name == "jax" and not anchors.installed("jax"):
        return {"error": "not installed"}
    try:
        return _in_subprocess(name, lib_name, quick, False, threads, cpu_time)
    except RuntimeError as e:
        lines = [line for line in str(e).splitlines() if line.strip()]
        return {"error": lines[-1] if lines else str(e)}


# Worker runs per library, alternating (so a burst of load elsewhere hits both); the one
# with the lower median is kept. A workload without a target only informs: one round.
ROUNDS = 3


ANCHORS = ("torch.compile", "jax")


def run(selected: list[Workload], quick: bool, memory: bool, threads: int = 0,
        cpu_time: bool = False, with_anchors: bool = False) -> list[dict]:
    results = []
    for w in selected:
        row = {"name": w.name, "target": w.target}
        libs = ("ember", "torch") + (("numpy",) if w.numpy else ()) \
            + (ANCHORS if with_anchors and w.jax else ())
        for _ in range(ROUNDS if w.target is not None else 1):
            for lib_name in libs:
                if lib_name in ANCHORS:
                    got = _anchor_in_subprocess(w.name, lib_name, quick, threads, cpu_time)
                else:
                    got = _in_subprocess(w.name, lib_name, quick, memory, threads, cpu_time)
                if lib_name not in row or got.get("median", np.inf) < row[lib_name].get(
                        "median", np.inf):
                    row[lib_name] = got
        row["ratio"] = row["ember"]["median"] / row["torch"]["median"]
        for lib_name in libs[2:]:
            if "median" not in row[lib_name]:
                continue
            if lib_name == "numpy":  # the row's bound: ember / NumPy
                row["numpy_ratio"] = row["ember"]["median"] / row["numpy"]["median"]
            else:
                row[f"{lib_name}_ratio"] = row[lib_name]["median"] / row["torch"]["median"]
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
    if r["target"] is None:
        verdict = "(no target)"
    else:
        verdict = f"(target <= {r['target']}) " + ("ok" if r["ratio"] <= r["target"] else "MISS")
    mem = f"  mem x{r['memory_ratio']:.2f}" if "memory_ratio" in r else ""
    rate = f"  [{e['rate']} vs {t['rate']}]" if "rate" in e else ""
    line = (f"{r['name']:<18} ember {_fmt_time(e['median'])} (min {_fmt_time(e['min'])})  "
            f"torch {_fmt_time(t['median'])}  ratio {r['ratio']:5.2f} {verdict}{mem}{rate}")
    if "numpy_ratio" in r:
        line += (f"\n    vs NumPy's own call: {_fmt_time(r['numpy']['median']).strip()}, "
                 f"ember / NumPy {r['numpy_ratio']:.2f}")
    anchored = [a for a in ANCHORS if a in r]
    if anchored:
        cells = [f"ember first call {e['first']:.2f} s"]
        for a in anchored:
            got = r[a]
            if "error" in got:
                cells.append(f"{a}: {got['error']}")
                continue
            rate = f", {got['rate']}" if "rate" in got else ""
            ratio = r[a + "_ratio"]
            ratio = f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"
            cells.append(f"{a} {_fmt_time(got['median']).strip()} ratio {ratio}"
                         f" (first call {got['first']:.2f} s{rate})")
        line += "\n    vs torch eager: " + "; ".join(cells)
    return line


def processor() -> str:
    """The CPU's model name and widest vector unit (the tables in README.md are per kind)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    vector = next((v for v in ("avx512f", "avx2", "avx", "neon", "asimd") if v in flags), "")
    return f"{model} ({vector.replace('avx512f', 'avx512')})" if vector else model


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, shorter timing")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "latest.json"))
    p.add_argument("--no-memory", action="store_true", help="skip peak-memory measurement")
    p.add_argument("--threads", type=int, default=0,
                   help="threads per library (default: one per core)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time with process CPU time (with --threads 1: work per call)")
    p.add_argument("--anchors", action="store_true",
                   help="also torch.compile and JAX jit beside the compiled rows (minutes)")
    p.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "LIB"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(*args.worker, args.quick, not args.no_memory, args.threads,
                                 args.cpu_time)))
        return 0
    names = [n for n in args.only.split(",") if n]
    selected = [w for w in WORKLOADS if not names or w.name in names]
    if names and len(selected) != len(names):
        known = ", ".join(w.name for w in WORKLOADS)
        p.error(f"unknown workload in --only; known: {known}")
    print(f"{processor()}, {os.cpu_count()} cores, numpy {np.__version__}")
    limits = machine_limits(args.quick)
    print(f"machine: copy {limits['copy_GBps']:.1f} GB/s, NumPy float32 matmul "
          f"{limits['matmul_GFLOPs']:.1f} GFLOP/s")
    results = run(selected, args.quick, not args.no_memory, args.threads, args.cpu_time,
                  args.anchors)
    compile_rows = None
    if any(w.name == "compiled_mlp_step" for w in selected):
        compile_rows = anchors.compile_times(args.anchors, args.threads)
        print(anchors.format_compile_times(compile_rows), flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"machine": limits, "quick": args.quick, "results": results,
                   "compile_times": compile_rows}, f, indent=2)
    print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
