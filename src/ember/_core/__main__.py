"""`python -m ember._core`: the primitive count, each rule table's coverage, and the fused
primitives with the reason for each."""

from __future__ import annotations

import ember  # noqa: F401  (defines every primitive)

from .fused import FUSED
from .primitive import batch_rules, jvp_rules, kernels, meta_rules, primitives, vjp_rules


def report() -> str:
    n = len(primitives)
    lines = [f"{n} primitives ({len({p.name for p in primitives})} distinct names)", ""]
    for table, rules in (("cpu kernel", kernels["cpu"]), ("meta", meta_rules),
                         ("vjp", vjp_rules), ("jvp", jvp_rules), ("batch", batch_rules)):
        have = sum(1 for p in primitives if p in rules)
        lines.append(f"  {table:<11} {have:>4} / {n}")
    none = sum(1 for p in primitives if vjp_rules.get(p, 0) is None)
    data = sum(1 for p in primitives if getattr(meta_rules.get(p), "data_dependent", False))
    lines += [f"  (vjp: {none} marked not differentiable; meta: {data} with data-dependent "
              "shapes)", "", f"{len(FUSED)} fused primitives:"]
    lines += [f"  {name:<40} {why}" for name, why in FUSED.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
