"""Time each drop-in program (tests/compat/programs/) under torch and under `ember.run`.

    python -m benchmarks.programs [--only a,b] [--threads N] [--json out.json]

Each program runs once as `python prog.py` (torch 2.13.0) and once as
`python -m ember.run prog.py`, each in a fresh process, after one warm-up import of
both frameworks (so neither pays for a cold file cache). Reported per program: wall
seconds, CPU seconds (user + system of the child, steadier than wall time on a busy
machine) and ember / torch ratios; the goal is a ratio of at most 2. The bare import
times are reported too, since every program pays them. This is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent.parent / "tests" / "compat" / "programs"
TARGET = 2.0


def _env(threads: int) -> dict:
    n = str(threads)
    return {**os.environ, "OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n,
            "OPENBLAS_NUM_THREADS": n}


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of `cmd`; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run(names: list[str], threads: int) -> list[dict]:
    env = _env(threads)
    py = sys.executable
    for lib in ("torch", "ember"):  # warm-up: file caches
        timed([py, "-c", f"import {lib}"], env, PROGRAMS)
    imports = {lib: timed([py, "-c", f"import {lib}"], env, PROGRAMS) for lib in
               ("torch", "ember")}
    rows = [{"program": "(import only)", "torch_wall": imports["torch"][0],
             "ember_wall": imports["ember"][0], "torch_cpu": imports["torch"][1],
             "ember_cpu": imports["ember"][1]}]
    for name in names:
        path = str(PROGRAMS / f"{name}.py")
        t_wall, t_cpu = timed([py, path], env, PROGRAMS)
        e_wall, e_cpu = timed([py, "-m", "ember.run", path], env, PROGRAMS)
        rows.append({"program": name, "torch_wall": t_wall, "ember_wall": e_wall,
                     "torch_cpu": t_cpu, "ember_cpu": e_cpu})
    for r in rows:
        r["wall_ratio"] = r["ember_wall"] / r["torch_wall"]
        r["cpu_ratio"] = r["ember_cpu"] / r["torch_cpu"]
    return rows


def report(rows: list[dict]) -> str:
    head = (f"{'program':<22}{'torch s':>9}{'ember s':>9}{'ratio':>7}   "
            f"{'torch cpu':>9}{'ember cpu':>10}{'ratio':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        flag = "" if r["program"].startswith("(") or r["cpu_ratio"] <= TARGET else "  > 2x"
        lines.append(f"{r['program']:<22}{r['torch_wall']:>9.2f}{r['ember_wall']:>9.2f}"
                     f"{r['wall_ratio']:>7.2f}   {r['torch_cpu']:>9.2f}{r['ember_cpu']:>10.2f}"
                     f"{r['cpu_ratio']:>7.2f}{flag}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for both frameworks (default 1)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    names = sorted(p.stem for p in PROGRAMS.glob("*.py"))
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - set(names)
        if unknown:
            parser.error(f"unknown programs: {', '.join(sorted(unknown))}")
        names = [n for n in names if n in wanted]
    rows = run(names, args.threads)
    print(report(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
