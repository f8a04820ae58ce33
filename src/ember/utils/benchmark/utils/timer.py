"""`Timer`: time a statement the way PyTorch's benchmark Timer does, on ember.

It is `timeit.Timer` with PyTorch's additions: a warm-up before measuring, the thread count
fixed while measuring (`num_threads`), replicates rather than one number, and labels that
`Compare` groups by. `blocked_autorange` picks a block of runs long enough that reading the
clock costs nothing next to it, then times blocks until `min_run_time` has passed;
`adaptive_autorange` keeps timing blocks until the spread is small.
"""

from __future__ import annotations

import enum
import textwrap
import timeit
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from .common import Measurement, TaskSpec

__all__ = ["Language", "Timer", "timer"]

timer = timeit.default_timer


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@contextmanager
def _threads(n: int):
    """ember's kernels use `n` threads while measuring (PyTorch sets its own pool's)."""
    import ember  # (the package this layer sits on; loaded by the time a Timer runs)

    before = ember.get_num_threads()
    ember.set_num_threads(n)
    try:
        yield
    finally:
        ember.set_num_threads(before)


def _trim(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times `stmt` after `setup`, with `globals` in scope (`torch` is ember, as in a program
    run with `import ember as torch`)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("ember times Python statements only (no C++ Timer)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        import ember

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        self._globals.setdefault("ember", ember)
        stmt, setup = _trim(stmt), _trim(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # (a zero time would divide by zero)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One replicate of `number` runs, after a warm-up of a hundredth as many."""
        with _threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: ten-fold steps until the clock's own cost is under 0.01% of a
        block and a block takes a thousandth of `min_run_time` (or all of it)."""
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                took = self._timeit(number)
                if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                    break
                if took > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measure(self, number: int, stop: Callable[[list], bool], min_run_time: float,
                 max_run_time: float | None = None, callback=None) -> list[float]:
        total, times, can_stop = 0.0, [], False
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                took = self._timeit(number)
                times.append(took)
                total += took
                if callback:
                    callback(number, took)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs (see `_block_size`) until `min_run_time` seconds have been spent."""
        number = self._block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:
        """Blocks until IQR / median is under `threshold` (with more than three replicates
        and `min_run_time` spent), or `max_run_time` is spent."""
        number = self._block_size(0.05)

        def stop(times) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec) \
                .meets_confidence(threshold)

        times = self._measure(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)
