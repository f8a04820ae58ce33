"""`python -m ember._core`: the primitive count, each rule table's coverage, and the fused
primitives with the reason for each.

A family (`unary`, `binary` ...) counts once; its members are listed by family. A rule
table's line counts primitives with an entry; for a family, every member must have one.
"""

from __future__ import annotations

import ember  # noqa: F401  (defines every primitive)

from .fused import FUSED
from .primitive import (
    BY_LOOP,
    BY_VJP,
    ByParam,
    Family,
    batch_rules,
    jvp_rules,
    kernels,
    meta_rules,
    primitives,
    vjp_rules,
)


def _entries(rules: dict, p) -> list:
    """The entries primitive `p` has in `rules` (one per member for a family), MISSING
    entries left out."""
    rule = rules.get(p, _NONE)
    if rule.__class__ is ByParam:
        return [rule.table[m] for m in p.members.values() if m in rule.table] \
            if len(rule.table) >= len(p.members) else []
    return [] if rule is _NONE else [rule]


_NONE = object()


def report() -> str:
    n = len(primitives)
    families = [p for p in primitives if isinstance(p, Family)]
    members = sum(len(f.members) for f in families)
    lines = [f"{n} primitives ({len(families)} of them families of {members} functions)", ""]
    for table, rules in (("cpu kernel", kernels["cpu"]), ("meta", meta_rules),
                         ("vjp", vjp_rules), ("jvp", jvp_rules), ("batch", batch_rules)):
        have = sum(1 for p in primitives if _entries(rules, p))
        lines.append(f"  {table:<11} {have:>4} / {n}")
    flat = [r for p in primitives for r in _entries(jvp_rules, p)]
    loops = sum(1 for p in primitives if batch_rules.get(p) is BY_LOOP)
    nondiff = sum(1 for p in primitives for r in _entries(vjp_rules, p) if r is None)
    lines += [f"  (vjp and jvp: {nondiff} functions not differentiable; jvp: "
              f"{sum(1 for r in flat if r is BY_VJP)} by the transposed VJP; batch: {loops} "
              "by a loop)", ""]
    for f in families:
        lines.append(f"  family {f.name}: {' '.join(f.members)}")
    lines += ["", f"{len(FUSED)} fused primitives:"]
    lines += [f"  {name:<40} {why}" for name, why in FUSED.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
