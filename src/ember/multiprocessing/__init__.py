"""ember.multiprocessing: Python's multiprocessing under torch's name, the tensor-sharing
strategy calls, torch's process launcher (`start_processes`, `spawn`) and how a tensor
crosses a process boundary through a Queue or a Pipe (`reductions`)."""

from __future__ import annotations

from multiprocessing import *  # noqa: F403
from multiprocessing import get_context, get_start_method, set_start_method  # noqa: F401

from .reductions import reduce_tensor  # noqa: F401 (registers it with ForkingPickler)
from .spawn import (  # noqa: F401
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    return {"file_descriptor", "file_system"}


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy
