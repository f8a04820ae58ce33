"""Process groups: the default (world) group made by `init_process_group`, and subgroups.

A group wraps an MPI communicator. Ranks passed to and returned by the public functions are
global (world) ranks, as in PyTorch; `group_rank` translates them for the communicator.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

from . import _mpi
from .watchdog import DistBackendError, Watchdog

DEFAULT_TIMEOUT = timedelta(minutes=30)
_BACKENDS = ("mpi", "gloo", "nccl")


class Backend(str):
    """A backend name; ember runs every one of them on MPI."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        low = name.lower()
        if low not in _BACKENDS:
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, low)


class ProcessGroup:
    """A set of ranks that run collectives together over one MPI communicator."""

    def __init__(self, comm, ranks: list[int], timeout: float, backend: str = "mpi") -> None:
        self.comm = comm
        self.ranks = ranks  # global rank of each group rank
        self.timeout = timeout
        self.backend = backend
        self._index = {g: i for i, g in enumerate(ranks)}

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return len(self.ranks)

    def name(self) -> str:
        return self.backend

    def group_rank(self, global_rank: int, what: str = "rank") -> int:
        try:
            return self._index[global_rank]
        except KeyError:
            raise ValueError(f"{what} {global_rank} is not part of the group (ranks "
                             f"{self.ranks})") from None

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, ranks={self.ranks})"


class GroupMember:
    """`WORLD` is the default group; `NON_GROUP_MEMBER` is what `new_group` gives outsiders."""

    WORLD = None
    NON_GROUP_MEMBER = object()


class _State:
    world: ProcessGroup | None = None
    watchdog: Watchdog | None = None
    prev_excepthook = None


_state = _State()


def _seconds(timeout) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and timeout > 0:
        return float(timeout)
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


def is_initialized() -> bool:
    return _state.world is not None


def _world() -> ProcessGroup:
    if _state.world is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return _state.world


def resolve(group) -> ProcessGroup:
    """The group a collective runs on (`None` means the world)."""
    if group is None or group is GroupMember.WORLD:
        return _world()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("this rank is not part of the group it was asked to use")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def watchdog() -> Watchdog:
    return _state.watchdog


def _abort_on_uncaught(exc_type, exc, tb) -> None:
    """Report the exception, then end every rank: the others would wait on this one.

    (A timed-out collective just ends this rank: see `watchdog`.)"""
    prev = _state.prev_excepthook or sys.__excepthook__
    prev(exc_type, exc, tb)
    world = _state.world
    if issubclass(exc_type, DistBackendError):
        sys.stderr.flush()
        os._exit(1)
    if world is not None and world.size() > 1:
        sys.stderr.flush()
        _mpi.mpi().COMM_WORLD.Abort(1)


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the MPI job as the default process group (every rank calls this once).

    Ranks and world size come from MPI; `rank` / `world_size` (or RANK / WORLD_SIZE set by
    a launcher) are checked against them. "gloo" and "nccl" run on MPI too, with a notice.
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or "mpi")
    seconds = _seconds(timeout)
    MPI = _mpi.mpi()
    comm = MPI.COMM_WORLD.Dup()
    me, n = comm.Get_rank(), comm.Get_size()
    for key, given, actual in (("rank", rank, me), ("world_size", world_size, n)):
        env = os.environ.get(key.upper())
        if given is not None and given >= 0 and given != actual:
            raise ValueError(f"init_process_group: {key}={given} but MPI started this process "
                             f"as {key} {actual}")
        if env is not None and env.isdigit() and int(env) != actual:
            raise ValueError(f"init_process_group: {key.upper()}={env} in the environment but "
                             f"MPI started this process as {key} {actual}")
    if name != "mpi" and me == 0:
        print(f"ember.distributed: backend '{name}' runs on MPI here", file=sys.stderr)
    _state.world = ProcessGroup(comm, list(range(n)), seconds, str(name))
    GroupMember.WORLD = _state.world
    _state.watchdog = Watchdog(me)
    if sys.excepthook is not _abort_on_uncaught:
        _state.prev_excepthook = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def destroy_process_group(group=None) -> None:
    """Leave the default group (or free a subgroup); MPI itself ends at interpreter exit."""
    if group is not None and group is not _state.world:
        if isinstance(group, ProcessGroup):
            group.comm.Free()
        return
    if _state.world is None:
        return
    _state.watchdog.stop()
    _state.world.comm.Free()
    _state.world = _state.watchdog = None
    GroupMember.WORLD = None
    if sys.excepthook is _abort_on_uncaught:
        sys.excepthook = _state.prev_excepthook or sys.__excepthook__


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None):
    """A group of the given global ranks; every rank of the world must call it."""
    world = _world()
    n = world.size()
    members = sorted(set(range(n) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is outside the world of size {n}")
    me = world.rank()
    MPI = _mpi.mpi()
    color = 0 if me in members else MPI.UNDEFINED
    with _state.watchdog.guard("new_group", world.timeout):
        comm = world.comm.Split(color, members.index(me) if me in members else 0)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    seconds = world.timeout if timeout is None else _seconds(timeout)
    return ProcessGroup(comm, members, seconds, str(Backend(backend)) if backend else
                        world.backend)


def get_rank(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    g = resolve(group)
    return _world().rank() if g is _state.world else g.rank()


def get_world_size(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group=None) -> str:
    return resolve(group).backend


def get_process_group_ranks(group) -> list[int]:
    return list(resolve(group).ranks)


def get_global_rank(group, group_rank: int) -> int:
    return resolve(group).ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    return resolve(group).group_rank(global_rank)


def __getattr__(name: str):
    # `torch.distributed.group.WORLD`: in ember `distributed.group` is this module (the
    # attribute set by importing it hides the package's alias for GroupMember), so it
    # answers GroupMember's names itself.
    if name in ("WORLD", "NON_GROUP_MEMBER"):
        return getattr(GroupMember, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
