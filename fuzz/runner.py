"""Running one case in both libraries under a time limit, and classifying the outcome:
`equal`, `same-exception`, `different`, `crash` (ember fails with an internal error type
torch does not raise, e.g. AttributeError) or `hang` (over the time limit)."""

from __future__ import annotations

import signal
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from .catalogue import Case
from .compare import diff

# The exception types PyTorch raises for bad input; anything else from ember is internal.
PUBLIC_ERRORS = ("RuntimeError", "TypeError", "IndexError", "ValueError",
                 "NotImplementedError", "ZeroDivisionError", "OverflowError")
CLASSES = ("equal", "same-exception", "different", "crash", "hang")


class Hang(BaseException):
    """Raised inside a call that outran its time limit (BaseException: op code that catches
    Exception must not swallow it)."""


@dataclass
class Outcome:
    case: Case
    cls: str
    detail: str = ""


@contextmanager
def time_limit(seconds: float):
    """Raise Hang in the block after `seconds` (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def evaluate(case: Case, lib, timeout: float):
    """(result, None) or (None, exception) of the case's expression in `lib`."""
    env = {"L": lib, "F": lib.nn.functional}
    try:
        with time_limit(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, v in case.args.items():
                env[k] = v.build(lib)
            return eval(case.expr, env), None
    except Hang as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - every failure is an outcome to compare
        return None, exc


def run_case(case: Case, ember, torch, timeout: float = 5.0) -> Outcome:
    out_t, exc_t = evaluate(case, torch, timeout)
    out_e, exc_e = evaluate(case, ember, timeout)
    if isinstance(exc_e, Hang):
        return Outcome(case, "hang", f"ember: {exc_e}")
    if exc_e is not None and exc_t is not None:
        ne, nt = type(exc_e).__name__, type(exc_t).__name__
        if ne == nt:
            return Outcome(case, "same-exception", ne)
        cls = "crash" if ne not in PUBLIC_ERRORS else "different"
        return Outcome(case, cls, f"ember raised {ne}: {_short(exc_e)}; torch raised {nt}: "
                                  f"{_short(exc_t)}")
    if exc_e is not None:
        ne = type(exc_e).__name__
        cls = "crash" if ne not in PUBLIC_ERRORS else "different"
        return Outcome(case, cls, f"ember raised {ne}: {_short(exc_e)}; torch returned")
    if exc_t is not None:
        return Outcome(case, "different",
                       f"ember returned; torch raised {type(exc_t).__name__}: {_short(exc_t)}")
    try:
        d = diff(out_e, out_t)
    except Exception as exc:  # noqa: BLE001 - a result ember cannot turn into values
        return Outcome(case, "crash", f"comparing results: {type(exc).__name__}: {exc}")
    return Outcome(case, "different", d) if d else Outcome(case, "equal")


def _short(exc: BaseException, n: int = 160) -> str:
    s = str(exc).replace("\n", " ")
    return s if len(s) <= n else s[: n - 3] + "..."
