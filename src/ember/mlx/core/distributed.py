"""`mx.distributed` as MLX 0.32.4's CPU build reports it to a plain, single process.

ember runs in one process: `init()` gives the group of that process alone (rank 0,
size 1), and the collectives return their input, as MLX's do for a group of one
(mlx/distributed/ops.cpp). Point-to-point calls and strict initialisation fail with
MLX's messages. The availability answers are the CPU wheel's (the ring backend is
built in; MPI, NCCL and JACCL are not).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ._array import array
from ._device import check_stream
from ._dtypes import Dtype

__all__ = ["Group", "all_gather", "all_max", "all_min", "all_sum", "init", "is_available",
           "recv", "recv_like", "send", "sum_scatter"]

_AVAILABLE = {"any": True, "ring": True, "mpi": False, "nccl": False, "jaccl": False}


class Group:
    """A group of processes that communicate; here always this process alone."""

    def __init__(self) -> None:
        raise TypeError("mlx.core.distributed.Group: no constructor defined!")

    @classmethod
    def _singleton(cls) -> Group:
        return object.__new__(cls)

    def rank(self) -> int:
        """This process's rank in the group."""
        return 0

    def size(self) -> int:
        """The number of processes in the group."""
        return 1

    def split(self, color: int, key: int = -1) -> Group:
        """Split into subgroups by `color` (a group of one cannot split)."""
        raise RuntimeError("Cannot split the distributed group further.")


Group.__module__ = "mlx.core.distributed"


def is_available(backend: str = "any") -> bool:
    """Whether `backend` ("any", "ring", "mpi", "nccl" or "jaccl") is built in."""
    return _AVAILABLE.get(backend, False)


def init(strict: bool = False, backend: str = "any", *,
         all_gather_factory: Callable | None = None) -> Group:
    """The group of this process; `strict=True` raises instead, as MLX does when no
    backend can connect processes."""
    if backend not in _AVAILABLE:
        raise ValueError("[distributed] The only valid values for backend are 'any', 'mpi', "
                         f"'nccl', 'jaccl' and 'ring' but '{backend}' was provided.")
    if strict:
        raise RuntimeError(_strict_failure(backend))
    return Group._singleton()


def _strict_failure(backend: str) -> str:
    if backend == "any":
        return "[distributed] Couldn't initialize any backend"
    if backend == "mpi":
        return "Cannot initialize MPI"
    if backend == "ring":
        rank, hosts = os.environ.get("MLX_RANK", ""), os.environ.get("MLX_HOSTFILE", "")
        if rank and hosts:  # (MLX would connect to the hosts: ember cannot)
            return "[ring] ember.mlx runs in a single process and cannot join a ring"
        return ("[ring] You need to provide via environment variables both a rank (MLX_RANK) "
                f'and a hostfile (MLX_HOSTFILE) but provided MLX_RANK="{rank}" and '
                f'MLX_HOSTFILE="{hosts}"')
    return f"Cannot initialize {backend} distributed backend."


def _input(x, fn: str, group, stream) -> array:
    """`x` as MLX's binding converts it, after checking `group` and `stream`."""
    if group is not None and not isinstance(group, Group):
        raise TypeError(f"{fn}(): incompatible function arguments: group must be a "
                        f"Group, got {type(group).__name__}")
    check_stream(stream)
    if isinstance(x, array):
        return x
    if isinstance(x, bool | int | float | complex):
        return array(x)
    raise ValueError(f"Invalid type {type(x).__name__} received in array initialization.")


def all_sum(x: array, *, group: Group | None = None, stream=None) -> array:
    """Sum of `x` over the group's processes: `x` itself for a group of one."""
    return _input(x, "all_sum", group, stream)


def all_max(x: array, *, group: Group | None = None, stream=None) -> array:
    """Elementwise maximum of `x` over the group: `x` itself for a group of one."""
    return _input(x, "all_max", group, stream)


def all_min(x: array, *, group: Group | None = None, stream=None) -> array:
    """Elementwise minimum of `x` over the group: `x` itself for a group of one."""
    return _input(x, "all_min", group, stream)


def all_gather(x: array, *, group: Group | None = None, stream=None) -> array:
    """The processes' `x` concatenated on axis 0: `x` itself for a group of one."""
    return _input(x, "all_gather", group, stream)


def sum_scatter(x: array, *, group: Group | None = None, stream=None) -> array:
    """Sum over the group, each process keeping its slice of axis 0: `x` for one."""
    return _input(x, "sum_scatter", group, stream)


def send(x: array, dst: int, *, group: Group | None = None, stream=None) -> array:
    """Send `x` to process `dst` (impossible in a group of one)."""
    _input(x, "send", group, stream)
    raise ValueError("Cannot send to a singleton group")


def recv(shape: Sequence[int], dtype: Dtype, src: int, *, group: Group | None = None,
         stream=None) -> array:
    """Receive an array from process `src` (impossible in a group of one)."""
    _input(0, "recv", group, stream)
    raise ValueError("Cannot recv from a singleton group")


def recv_like(x: array, src: int, *, group: Group | None = None, stream=None) -> array:
    """Receive an array shaped like `x` from process `src` (impossible here)."""
    _input(x, "recv_like", group, stream)
    raise ValueError("Cannot recv from a singleton group")
