"""A fuzzing run: make and run N cases, tally them, match differences against the known
list, and format the report."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import known as known_mod
from .runner import CLASSES, run_case
from .table import make_case, select_ops


def _libs():
    import torch

    import ember

    return ember, torch


@dataclass
class Result:
    n: int
    seed: int
    ops: str | None
    counts: Counter = field(default_factory=Counter)
    per_op: dict = field(default_factory=lambda: defaultdict(Counter))
    listed: list = field(default_factory=list)     # (outcome, Known)
    unlisted: list = field(default_factory=list)   # `different` outcomes not in the file
    broken: list = field(default_factory=list)     # crash and hang outcomes

    def failures(self) -> list:
        return self.unlisted + self.broken

    @property
    def agree(self) -> float:
        return (self.counts["equal"] + self.counts["same-exception"]) / max(self.n, 1)


def run(n: int, seed: int, ops: str | None = None, timeout: float = 5.0,
        known: list | None = None) -> Result:
    ember, torch = _libs()
    known = known_mod.load() if known is None else known
    table = select_ops(ops)
    if not table:
        raise SystemExit(f"no op matches {ops!r}")
    res = Result(n, seed, ops)
    for i in range(n):
        out = run_case(make_case(seed, i, table), ember, torch, timeout)
        res.counts[out.cls] += 1
        res.per_op[out.case.label][out.cls] += 1
        if out.cls in ("crash", "hang"):
            res.broken.append(out)
        elif out.cls == "different":
            entry = known_mod.match(out, known)
            (res.listed.append((out, entry)) if entry else res.unlisted.append(out))
    return res


def reproduce(key: str, ops: str | None = None, timeout: float = 5.0) -> str:
    """One case's standalone code and its outcome, from `SEED:INDEX`."""
    seed, index = (int(x) for x in key.split(":"))
    case = make_case(seed, index, select_ops(ops))
    ember, torch = _libs()
    out = run_case(case, ember, torch, timeout)
    tags = ", ".join(sorted(case.tags))
    return (f"# case {key} {case.label}: {out.cls} {out.detail}\n# tags: {tags}\n"
            f"{case.code()}")


def _line(out, ops: str | None) -> str:
    ops = f" --ops '{ops}'" if ops else ""
    return (f"  [{out.cls}] {out.case.label} --repro {out.case.seed}:{out.case.index}{ops}\n"
            f"      {out.case.expr}\n      {out.detail}")


def format_report(res: Result, verbose: bool = False) -> str:
    lines = [f"fuzz: {res.n} calls, seed {res.seed}" + (f", ops {res.ops}" if res.ops else ""),
             "  " + "  ".join(f"{c}: {res.counts[c]}" for c in CLASSES),
             f"  agree (equal or same exception): {100 * res.agree:.2f}%",
             f"  differences listed in {known_mod.KNOWN_FILE.name}: {len(res.listed)}, "
             f"unlisted: {len(res.unlisted)}, crash/hang: {len(res.broken)}"]
    by_bucket = Counter(entry.bucket for _, entry in res.listed)
    if by_bucket:
        lines.append("  listed by bucket: " + ", ".join(
            f"{b} {by_bucket[b]}" for b in known_mod.BUCKETS if by_bucket[b]))
    by_entry = Counter(entry.id for _, entry in res.listed)
    if by_entry:
        lines.append("\nknown differences hit (entry: count)")
        lines += [f"  {k}: {v}" for k, v in by_entry.most_common()]
    lines.append("\nper op (label: class counts)")
    for label in sorted(res.per_op):
        c = res.per_op[label]
        lines.append(f"  {label}: " + ", ".join(f"{k} {c[k]}" for k in CLASSES if c[k]))
    if res.broken or res.unlisted:
        lines.append("\nFAILURES (crash, hang, or a difference not in the known list)")
        lines += [_line(o, res.ops) for o in res.broken + res.unlisted]
    if verbose and res.listed:
        lines.append("\nknown differences")
        lines += [_line(o, res.ops) + f"\n      known: {e.id}" for o, e in res.listed]
    return "\n".join(lines)
