"""What a profile holds: one `FunctionEvent` per op call or range, their per-key averages, and
the table PyTorch's profiler prints.

Times are kept in nanoseconds and shown in microseconds, as PyTorch's fields are. An event's
total time includes the events that ran inside it (its `cpu_children`); its self time does
not. Memory is bytes allocated less bytes freed while the event ran (CPU Mem), and the same
less its children's (Self CPU Mem).
"""

from __future__ import annotations

from collections import namedtuple

Interval = namedtuple("Interval", "start end")  # microseconds since the profile started


def _elapsed_us(interval: Interval) -> float:
    return interval.end - interval.start


Interval.elapsed_us = _elapsed_us


class FunctionEvent:
    """One op call or named range, with the events that ran inside it."""

    __slots__ = ("id", "name", "thread", "start_ns", "end_ns", "cpu_parent", "cpu_children",
                 "input_shapes", "stack", "cpu_memory_usage", "is_user_annotation",
                 "trace_name")
    count = 1
    sequence_nr = -1
    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    use_device = None
    overload_name = ""
    device_type = "CPU"
    device_time_total = self_device_time_total = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    scope = 0

    def __init__(self, id: int, name: str, thread: int, parent: FunctionEvent | None,
                 input_shapes: list, stack: list, user: bool = False) -> None:
        self.id = id
        # A profiler's step ranges share one key, as PyTorch's do; the trace keeps each number.
        self.trace_name = name
        self.name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.thread = thread
        self.cpu_parent = parent
        self.cpu_children: list[FunctionEvent] = []
        self.input_shapes = input_shapes
        self.stack = stack
        self.cpu_memory_usage = 0
        self.is_user_annotation = user

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> Interval:
        return Interval(self.start_ns / 1000, self.end_ns / 1000)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time = self_device_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.start_ns / 1000:.3f} end_us={self.end_ns / 1000:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """The events of one key summed: `count` calls, their total and self times and memory."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_parent = None
        self.cpu_children = None
        self.is_user_annotation = False
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.use_device = None
        self.overload_name = ""
        self.device_type = "CPU"
        self.device_time_total = self.self_device_time_total = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.flops = 0
        self.scope = 0

    def add(self, other) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.is_user_annotation = other.is_user_annotation
        elif other.key != self.key:
            raise AssertionError(f"cannot add {other.key} to the average of {self.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    device_time = self_device_time_total = 0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events (or of their averages) that prints as PyTorch's table."""

    def __init__(self, *args, profile_memory: bool = False, **kwargs) -> None:
        super().__init__(*args)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False,
                     group_by_stack_n: int = 0, group_by_overload_name: bool = False
                     ) -> EventList:
        """One `FunctionEventAvg` per key (per key and input shapes, per key and the first
        `group_by_stack_n` stack frames), in the order the keys first occur."""
        stats: dict = {}
        for e in self:
            key = (e.key, e.is_user_annotation)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(e)
        out = EventList(stats.values(), profile_memory=self._profile_memory)
        for avg in out:
            avg.stack = avg.stack[:group_by_stack_n] if avg.stack else []
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return out

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """PyTorch's table: one row per event, sorted by the field `sort_by` (descending)."""
        return build_table(self, sort_by, row_limit, max_src_column_width,
                           max_name_column_width, max_shapes_column_width, header,
                           self._profile_memory, top_level_events_only, time_unit)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        from .trace import write_chrome_trace

        write_chrome_trace(self, path)


# --- the table ------------------------------------------------------------------------------

def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_unit(us: float, unit: str | None) -> str:
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit)
    return _format_time(us) if scale is None else f"{us / scale:.3f}{unit}"


def _format_share(us: float, total: float) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


def _format_memory(nbytes: int) -> str:
    for size, unit in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _trim_source(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
                max_shapes_column_width, header, profile_memory, top_level_events_only,
                time_unit) -> str:
    """The rows of `events` laid out as PyTorch lays them out: a name column, fixed-width
    columns of 12 for the numbers, Input Shapes and Source Location when any event has them,
    two spaces between columns, a dashed rule above and below the header and at the end."""
    if not events:
        return ""
    if sort_by is not None:
        field = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, field), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    columns = [("Name", name_width, ">")]
    columns += [(h, 12, ">") for h in
                ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
    if profile_memory:
        columns += [("CPU Mem", 12, ">"), ("Self CPU Mem", 12, ">")]
    columns.append(("# of Calls", 12, ">"))
    if has_shapes:
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_column_width is not None:
            shapes_width = min(shapes_width, max_shapes_column_width)
        columns.append(("Input Shapes", shapes_width, ">"))
    if stacks:
        src_width = max(len(line) for s in stacks for line in s) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        columns.append(("Source Location", src_width, "<"))

    row_format = "".join("{:" + align + str(w) + "}  " for _, w, align in columns)
    rule = "".join("-" * w + "  " for _, w, _ in columns)
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * (len(rule) - 2), header]
    if top_level_events_only:
        lines += ["=" * (len(rule) - 2), "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*(h for h, _, _ in columns)), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total),
               _format_unit(e.self_cpu_time_total, time_unit),
               _format_share(e.cpu_time_total, total), _format_unit(e.cpu_time_total, time_unit),
               _format_unit(e.cpu_time, time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim_source(e.stack[0], src_width) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks and e.stack:
            blanks = [""] * (len(columns) - 1)
            lines += [row_format.format(*blanks, _trim_source(s, src_width))
                      for s in e.stack[1:]]
            lines.append(row_format.format(*blanks, ""))
    lines.append(rule)
    lines.append(f"Self CPU time total: {_format_unit(total, time_unit)}")
    return "".join(line + "\n" for line in lines)
