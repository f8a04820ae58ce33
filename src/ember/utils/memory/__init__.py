"""ember.utils.memory: what a model costs in memory (`summary`, counted on the meta device,
in `summary.py`) and how many bytes CPU tensors hold now and at most (`allocated`,
`max_allocated`, `reset_peak`, in `counters.py`)."""

from .counters import *
from .counters import __all__ as _counters
from .summary import MemorySummary, summary

__all__ = ["MemorySummary", "summary", *_counters]
