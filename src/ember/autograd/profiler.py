"""`torch.autograd.profiler`: PyTorch's older face of its profiler, which programs still use
(`profile(record_shapes=...)` with `.function_events`, `record_function`).

It is a face over `ember.profiler`, a layer above autograd; this module is loaded only on
first use, so the arrow up is an import of the face, never of autograd's own machinery.
"""

from __future__ import annotations

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function
from ..profiler import profile as _profile


class profile:
    """The legacy profiler: records while `enabled`, results in `function_events`."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None) -> None:
        self.enabled = enabled
        self.profile_memory = profile_memory
        self._prof = _profile(record_shapes=record_shapes, profile_memory=profile_memory,
                              with_stack=with_stack)
        self.function_events: EventList | None = None

    def __enter__(self) -> profile:
        if self.enabled:
            self._prof.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._prof.stop()
            self.function_events = self._prof.events()

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self._prof.export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()


__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]
