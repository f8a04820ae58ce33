"""`Work`: the handle an `async_op=True` collective returns, waited with a deadline."""

from __future__ import annotations

import time

from . import _mpi
from .watchdog import timeout_error


class Work:
    """Pending MPI requests; `wait()` polls them until done or the group's timeout passes.

    Polling (rather than a blocking MPI wait) keeps Python in control, so a peer that died
    turns into a RuntimeError here instead of a hang.
    """

    def __init__(self, requests: list, op: str, group, finish=None, result=None) -> None:
        self._requests = requests
        self._op = op
        self._group = group
        self._finish = finish
        self._result = result
        self._done = False

    def is_completed(self) -> bool:
        if not self._done and _mpi.mpi().Request.Testall(self._requests):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def wait(self, timeout=None) -> bool:
        """Block until the operation finished; RuntimeError once the timeout has passed."""
        if self._done:
            return True
        from .group import _seconds

        seconds = self._group.timeout if timeout is None else _seconds(timeout)
        testall = _mpi.mpi().Request.Testall
        start = time.monotonic()
        deadline = start + seconds
        while not testall(self._requests):
            now = time.monotonic()
            if now > deadline:
                raise timeout_error(self._op, self._group.ranks[self._group.rank()], seconds)
            # Spin (yielding the core) while a reply is likely soon, then back off to 1 ms.
            time.sleep(0 if now - start < 0.01 else 1e-3)
        self._complete()
        return True

    def result(self) -> list:
        self.wait()
        return list(self._result or [])

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()
            self._finish = None

    def __repr__(self) -> str:
        return f"Work({self._op}, completed={self._done})"
