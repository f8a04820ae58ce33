"""ember.utils.memory: what a model costs in memory (`summary`, counted on the meta device).

The live allocation counters (allocated, max_allocated, reset_peak) live in a sibling module.
"""

from .summary import MemorySummary, summary
