"""Run a script as one rank of an MPI job with torchrun's environment variables set.

`ember.distributed.run` starts `mpiexec ... python -m ember.distributed.launch_env
script.py`; each process reads its rank from the MPI launcher's variables (Open MPI's or
MPICH's, without initialising MPI), exports RANK / WORLD_SIZE / LOCAL_RANK /
LOCAL_WORLD_SIZE, then runs the script as `__main__`.
"""

from __future__ import annotations

import os
import runpy
import sys

# (Open MPI's name, MPICH's name) for each variable torchrun sets.
_FROM_MPI = {
    "RANK": ("OMPI_COMM_WORLD_RANK", "PMI_RANK"),
    "WORLD_SIZE": ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"),
    "LOCAL_WORLD_SIZE": ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"),
}


def export_ranks(environ=os.environ) -> None:
    """Set torchrun's rank variables from the MPI launcher's, where it provides them.

    The launcher places ranks node by node in blocks of LOCAL_WORLD_SIZE, so the local rank
    and node index follow from the rank as under torchrun (MPI's own local numbering may
    follow its placement over sockets instead).
    """
    for ours, names in _FROM_MPI.items():
        for name in names:
            if name in environ:
                environ[ours] = environ[name]
                break
    if "RANK" in environ and "WORLD_SIZE" in environ:
        rank = int(environ["RANK"])
        per_node = int(environ.setdefault("LOCAL_WORLD_SIZE", environ["WORLD_SIZE"]))
        environ["LOCAL_RANK"] = str(rank % per_node)
        environ["GROUP_RANK"] = str(rank // per_node)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        raise SystemExit("usage: python -m ember.distributed.launch_env [-m module | script] "
                         "[args...]")
    export_ranks()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
