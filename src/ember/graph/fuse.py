"""Fusion: chains of pointwise nodes lowered to one generated C kernel each (wip)."""

from __future__ import annotations

from .ir import Graph
from .program import Program, lower_python


def lower_fused(graph: Graph) -> Program:
    return lower_python(graph)
