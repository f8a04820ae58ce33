"""The Chrome trace format (Perfetto and chrome://tracing open it) and the TensorBoard
profiler plugin's folder of `*.pt.trace.json` files."""

from __future__ import annotations

import gzip
import json
import os
import socket
import time


def chrome_trace(events, base_ns: int, record_shapes: bool = False,
                 profile_memory: bool = False) -> dict:
    """One complete ("X") event per op call and range, timed in microseconds from
    `base_ns` (wall-clock nanoseconds when the profile started), as PyTorch writes them."""
    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": base_ns / 1000,
            "args": {"name": "python"}}]
    out += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "ts": base_ns / 1000,
             "args": {"name": f"thread {t}"}} for t in threads]
    for i, e in enumerate(events):
        args = {"External id": e.id + 1, "Ev Idx": i}
        if record_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(reversed(e.stack))
        out.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                    "name": e.trace_name, "pid": pid, "tid": e.thread,
                    "ts": (base_ns + e.start_ns) / 1000, "dur": (e.end_ns - e.start_ns) / 1000,
                    "args": args})
    return {"schemaVersion": 1, "deviceProperties": [], "record_shapes": int(record_shapes),
            "profile_memory": int(profile_memory), "host_name": socket.gethostname(),
            "displayTimeUnit": "ms", "baseTimeNanoseconds": base_ns, "traceEvents": out}


def write_chrome_trace(events, path: str, base_ns: int = 0, record_shapes: bool = False,
                       profile_memory: bool = False, metadata: dict | None = None) -> None:
    """Write the trace to `path` (gzip-compressed when it ends in `.gz`), `metadata`'s
    entries in its header."""
    trace = chrome_trace(events, base_ns, record_shapes, profile_memory)
    trace.update(metadata or {})
    trace["traceName"] = path
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt") as f:
        json.dump(trace, f)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An `on_trace_ready` that writes each trace into `dir_name` as
    `<worker>.<nanoseconds>.pt.trace.json[.gz]`, the folder TensorBoard's profiler plugin
    reads (`worker_name` defaults to `<hostname>_<pid>`)."""

    def handler(prof) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler
