"""ember.profiler: PyTorch's `torch.profiler`, with every op ember runs in view.

Every op passes one `bind`, so one interpreter on the stack (`recorder.Recorder`) sees
them all: each call is one event named as PyTorch's profiler names that op
(`aten_names`), the backward pass appears node by node as
`autograd::engine::evaluate_function: MulBackward0`, an optimizer's step as
`Optimizer.step#SGD.step`. `key_averages().table()` prints PyTorch's table;
`export_chrome_trace` writes a trace Perfetto opens. With no profiler recording, ops pay
nothing: `bind` consults the stack only while a level is pushed.
"""

from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import profile, record_function
from .schedule import ProfilerAction, ProfilerActivity, schedule, supported_activities
from .trace import tensorboard_trace_handler

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
