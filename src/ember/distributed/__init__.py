"""ember.distributed: process groups and collectives on MPI (through mpi4py).

Start several processes with `python -m ember.distributed.run --nproc-per-node N script.py`
(or `mpiexec -n N python script.py`) and call `init_process_group()` in each. mpi4py is
imported only then, so `import ember` and single-process programs need no MPI.
"""

from __future__ import annotations

from . import _mpi
from .collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_initialized,
    new_group,
)
from .objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .watchdog import DistBackendError
from .work import Work


def is_available() -> bool:
    """True when mpi4py (and so an MPI library) can be imported."""
    return _mpi.available()


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def __getattr__(name: str):
    if name == "group":
        return GroupMember
    from ..compat import missing

    raise missing(__name__, name)
