"""torch.multiprocessing's launcher: run `fn(i, *args)` in `nprocs` processes, join them,
and re-raise the first failure in the parent (`start_processes`, `spawn`).

A child that raises writes its traceback to a file of its own, which the parent reads
when it sees that child exit with a non-zero code; a child that dies of a signal or
calls `sys.exit(n)` leaves no file and is reported by its exit code.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings

from .. import _names
from .._user_warnings import user_stacklevel

log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A launched process failed: which one (`error_index`) and its pid (`error_pid`)."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's function raised; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _run(fn, index: int, args: tuple, error_file: str) -> None:
    """A child's entry point: call fn, and leave the traceback behind if it raises."""
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped us
    except Exception:
        with open(error_file, "w") as f:
            f.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The launched processes; `join` waits for them and raises the first failure."""

    def __init__(self, processes: list, error_files: list[str]) -> None:
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait (up to `timeout` seconds) for processes to exit. True once all exited
        cleanly; on a failure, stop the others (SIGTERM, then SIGKILL) and raise."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(grace_period)
        raise self._failure(failed)

    def _stop_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting "
                            "via SIGKILL", p.pid)
                p.kill()
            p.join()

    def _failure(self, index: int) -> ProcessException:
        process, path = self.processes[index], self.error_files[index]
        if not os.path.exists(path):
            code = process.exitcode
            if code >= 0:
                return ProcessExitedException(
                    f"process {index} terminated with exit code {code}", index, process.pid,
                    code)
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {index} terminated with signal {name}",
                                          index, process.pid, code, name)
        with open(path) as f:
            trace = f.read()
        os.unlink(path)
        msg = f"\n\n-- Process {index} terminated with the following error:\n{trace}"
        return ProcessRaisedException(msg, index, process.pid)


class SpawnContext(ProcessContext):
    """ProcessContext's name before PyTorch 1.4."""

    def __init__(self, processes: list, error_files: list[str]) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=user_stacklevel())
        super().__init__(processes, error_files)


def _error_file_name() -> str:
    """A fresh path that does not exist yet: the child creates it only if it fails."""
    fd, path = tempfile.mkstemp(prefix="ember-errorfile-", suffix=".txt")
    os.close(fd)
    os.unlink(path)
    return path


def start_processes(fn, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn"):
    """Start `nprocs` processes running `fn(i, *args)` with the given start method; join
    them (None) or return their ProcessContext (`join=False`)."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        path = _error_file_name()
        p = ctx.Process(target=_run, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """`start_processes` with the "spawn" start method (the only one it takes)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      f"{_names.prefix}.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=user_stacklevel())
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
