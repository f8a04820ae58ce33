"""The committed list of known differences (KNOWN_DIFFERENCES.toml beside this file): each
entry says which `different` outcomes it covers (ops, tags the case must carry, a regular
expression over the outcome's detail or the call) and why the difference remains."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

KNOWN_FILE = Path(__file__).with_name("KNOWN_DIFFERENCES.toml")
BUCKETS = ("torch-inconsistent", "open")


@dataclass(frozen=True)
class Known:
    id: str
    bucket: str
    reason: str
    ops: tuple = ()
    tags: tuple = ()
    detail: str = ""
    expr: str = ""

    def covers(self, outcome) -> bool:
        case = outcome.case
        if self.ops and case.op not in self.ops:
            return False
        if not set(self.tags) <= case.tags:
            return False
        if self.detail and not re.search(self.detail, outcome.detail):
            return False
        return not self.expr or re.search(self.expr, case.expr) is not None


def load(path: Path = KNOWN_FILE) -> list:
    """The entries of the known-differences file, checked for the fields each must have."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    out = []
    for raw in data.get("difference", []):
        entry = Known(id=raw["id"], bucket=raw["bucket"], reason=raw["reason"],
                      ops=tuple(raw.get("ops", ())), tags=tuple(raw.get("tags", ())),
                      detail=raw.get("detail", ""), expr=raw.get("expr", ""))
        if entry.bucket not in BUCKETS:
            raise ValueError(f"{path.name}: {entry.id}: bucket must be one of {BUCKETS}")
        if not entry.reason.strip():
            raise ValueError(f"{path.name}: {entry.id}: every entry needs a reason")
        out.append(entry)
    return out


def match(outcome, known: list):
    """The first entry covering a `different` outcome, or None."""
    if outcome.cls != "different":
        return None
    return next((k for k in known if k.covers(outcome)), None)
