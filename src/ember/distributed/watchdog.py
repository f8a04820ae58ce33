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
    """One daemon thread per process group; `guard(op)` arms it around a blocking call."""

    def __init__(self, rank: int) -> None:
        self._rank = rank
        self._cv = threading.Condition()
        self._op: str | None = None
        self._timeout = 0.0
        self._deadline = 0.0
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="ember-dist-watchdog",
                                        daemon=True)
        self._thread.start()

    @contextmanager
    def guard(self, op: str, timeout: float):
        with self._cv:
            self._op, self._timeout = op, timeout
            self._deadline = time.monotonic() + timeout
            self._cv.notify()
        try:
            yield
        finally:
            with self._cv:
                self._op = None

    def stop(self) -> None:
        with self._cv:
            self._stopped = True
            self._cv.notify()
        self._thread.join()

    def _loop(self) -> None:
        with self._cv:
            while not self._stopped:
                if self._op is None:
                    self._cv.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                err = timeout_error(self._op, self._rank, self._timeout)
                sys.stderr.write(f"RuntimeError: {err}\n")
                sys.stderr.flush()
                os._exit(1)
