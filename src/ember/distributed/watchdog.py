"""Deadlines for collectives, so a failed peer ends a job instead of hanging it.

A blocking MPI call cannot be interrupted from Python, so while one runs a watchdog thread
holds its deadline; past it the thread reports the stuck operation on stderr as a
RuntimeError and ends the process. Nonblocking operations are polled against the same
deadline and raise `DistBackendError` (a RuntimeError) in the calling thread (`Work.wait`).

A timed-out rank exits rather than calling MPI_Abort: its peer is most likely gone already,
every surviving rank reaches its own deadline, and Open MPI's launcher was seen to hang now
and then when aborts raced with a dead rank.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager


class DistBackendError(RuntimeError):
    """A collective failed (here: it did not complete within the process group's timeout)."""


def timeout_error(op: str, rank: int, seconds: float) -> DistBackendError:
    return DistBackendError(
        f"ember.distributed: rank {rank}: {op} did not complete within the timeout "
        f"({seconds:g} s); a peer rank has probably failed, exited or stopped calling "
        "collectives."
    )


class Watchdog:
    """One daemon thread per process; `guard(op, timeout)` arms it around a blocking call.

    Arming is two attribute writes (no lock, no wake-up), so a small collective pays almost
    nothing; the thread looks every `tick` seconds, so it fires at most that late.
    """

    def __init__(self, rank: int, tick: float = 0.1) -> None:
        self._rank = rank
        self._tick = tick
        self._current: tuple | None = None  # (op, deadline, timeout) while a call runs
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ember-dist-watchdog",
                                        daemon=True)
        self._thread.start()

    @contextmanager
    def guard(self, op: str, timeout: float):
        self._current = (op, time.monotonic() + timeout, timeout)
        try:
            yield
        finally:
            self._current = None

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stopped.wait(self._tick):
            current = self._current
            if current is None or time.monotonic() <= current[1]:
                continue
            op, _, timeout = current
            sys.stderr.write(f"RuntimeError: {timeout_error(op, self._rank, timeout)}\n")
            sys.stderr.flush()
            os._exit(1)
