"""`mx.distributed`: MLX's process groups and collectives, over MPI when the program runs
as several processes.

Started by an MPI launcher with several processes (`mpirun -n 4 python prog.py`, or
ember's `python -m ember.distributed.run --nproc-per-node 4 prog.py`, which runs mpiexec),
a program gets from `init()` (backend "any" or "mpi") the group of all its processes, with
rank and size from MPI through mpi4py, as `ember.distributed` has them. The collectives
then behave as MLX's MPI backend (mlx/distributed/mpi/mpi.cpp, ops.cpp): the same shapes,
dtypes and errors, `Group.split` as `MPI_Comm_split` (key -1: the rank).
- Sums over float16 and bfloat16, and maxima and minima over those and complex64, fold
  the processes' arrays in rank order in the type's own arithmetic (MLX registers such
  folds as MPI operations); bool sums are logical ors (as MLX's ring backend adds
  bools); every other type reduces with MPI's own operations.
- `sum_scatter`, which MLX's MPI and ring backends refuse when evaluated ("[mpi]
  sum_scatter not yet implemented."), computes here, as its NCCL backend does: the sum,
  each process keeping its block of axis 0.
- A collective communicates when it is called: it evaluates its input first (running
  the pending lazy graph) and returns a computed array, where MLX communicates when the
  result is evaluated. Every process must therefore call a group's collectives in the same
  order, and `recv` waits at the call.
- Derivatives are MLX's (mlx/distributed/primitives.cpp): all_sum, all_max and all_min
  pass the cotangent through unchanged, all_gather gives each process its slice of it;
  forward mode and vmap apply the collective to the tangents and batches; `send` and
  `sum_scatter` have no derivative.
- An uncaught exception on one process ends them all (the others would wait on it
  forever), as in `ember.distributed`.

Any other program runs as MLX 0.32.4's CPU build reports to a single process: `init()`
gives the group of that process alone (rank 0, size 1), the collectives return their
input (ops.cpp), point-to-point calls and strict initialisation fail with MLX's messages.
Availability is the CPU wheel's (the ring backend is built in; MPI, NCCL and JACCL are
not), except that "mpi" is available to a program launched as several MPI processes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

import numpy as np

import ember as E

from ..._core.dispatch import transform_active
from ..._core.primitive import defbatch
from ...distributed import _mpi
from .._listing import listing
from ._array import _wrap, array, array_from_numpy, numpy_of
from ._device import check_stream
from ._dtypes import Dtype

__all__ = ["Group", "all_gather", "all_max", "all_min", "all_sum", "init", "is_available",
           "recv", "recv_like", "send", "sum_scatter"]

_AVAILABLE = {"any": True, "ring": True, "mpi": False, "nccl": False, "jaccl": False}
# the MPI launchers' variables that give the number of processes (Open MPI's, MPICH's)
_LAUNCH_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


class Group:
    """A group of processes that communicate: all of a launch's processes (or a split of
    them) over an MPI communicator, or this process alone."""

    __slots__ = ("_comm",)

    def __init__(self) -> None:
        raise TypeError("mlx.core.distributed.Group: no constructor defined!")

    @classmethod
    def _singleton(cls) -> Group:
        return cls._over(None)

    @classmethod
    def _over(cls, comm) -> Group:
        group = object.__new__(cls)
        group._comm = comm
        return group

    def rank(self) -> int:
        """This process's rank in the group."""
        return 0 if self._comm is None else self._comm.Get_rank()

    def size(self) -> int:
        """The number of processes in the group."""
        return 1 if self._comm is None else self._comm.Get_size()

    def split(self, color: int, key: int = -1) -> Group:
        """The subgroup of the processes that pass the same `color`, ranked by `key` (-1:
        by rank in this group). Every process of the group must call it."""
        if self._comm is None:
            raise RuntimeError("Cannot split the distributed group further.")
        MPI = _mpi.mpi()
        try:
            comm = self._comm.Split(color, self.rank() if key < 0 else key)
        except MPI.Exception:
            raise RuntimeError("MPI could not split this group") from None
        return Group._over(comm)


Group.__module__ = "mlx.core.distributed"


# -- initialisation --------------------------------------------------------------------------

class _State:
    world: Group | None = None  # the launch's group, once made
    prev_excepthook = None


_state = _State()


def _launched() -> bool:
    """Whether an MPI launcher started this program as several processes (read from its
    environment, so a single process never initialises MPI)."""
    for name in _LAUNCH_SIZE:
        size = os.environ.get(name, "")
        if size.isdigit():
            return int(size) > 1 and _mpi.available()
    return False


def _world() -> Group | None:
    """The group of every process of the launch (made once), or None."""
    if _state.world is None and _launched():
        world = _mpi.mpi().COMM_WORLD
        if world.Get_size() <= 1:  # (a launcher of another MPI than mpi4py's: alone)
            return None
        _state.world = Group._over(world.Dup())  # (traffic apart from ember.distributed's)
        if sys.excepthook is not _abort_on_uncaught:
            _state.prev_excepthook = sys.excepthook
            sys.excepthook = _abort_on_uncaught
    return _state.world


def _abort_on_uncaught(exc_type, exc, tb) -> None:
    """Report the exception, then end every process: the others would wait on this one."""
    (_state.prev_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    sys.stderr.flush()
    _mpi.mpi().COMM_WORLD.Abort(1)


def is_available(backend: str = "any") -> bool:
    """Whether `backend` ("any", "ring", "mpi", "nccl" or "jaccl") is available."""
    if backend == "mpi" and _launched():
        return True
    return _AVAILABLE.get(backend, False)


def init(strict: bool = False, backend: str = "any", *,
         all_gather_factory: Callable | None = None) -> Group:
    """The group of all the launch's processes ("any" or "mpi" in a multi-process MPI
    launch), else of this process alone; `strict=True` raises instead of the latter, as
    MLX does when no backend can connect processes."""
    if all_gather_factory is not None:
        if not callable(all_gather_factory):
            raise TypeError("init(): incompatible function arguments: all_gather_factory "
                            "must be callable")
        if backend != "jaccl":
            raise ValueError("all_gather_factory is only supported with backend='jaccl'.")
    if backend not in _AVAILABLE:
        raise ValueError("[distributed] The only valid values for backend are 'any', 'mpi', "
                         f"'nccl', 'jaccl' and 'ring' but '{backend}' was provided.")
    if backend in ("any", "mpi"):
        world = _world()
        if world is not None:
            return world
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
            return "[ring] ember.mlx cannot join a ring: launch with MPI instead"
        return ("[ring] You need to provide via environment variables both a rank (MLX_RANK) "
                f'and a hostfile (MLX_HOSTFILE) but provided MLX_RANK="{rank}" and '
                f'MLX_HOSTFILE="{hosts}"')
    return f"Cannot initialize {backend} distributed backend."


# -- moving NumPy buffers --------------------------------------------------------------------

def _bytes(a: np.ndarray) -> np.ndarray:
    """An array's bytes, in C order (MPI moves every dtype, bfloat16 included, as bytes);
    a view when `a` is C-contiguous."""
    return np.array(a, order="C", copy=None).reshape(-1).view(np.uint8)


def _gathered(comm, a: np.ndarray) -> np.ndarray:
    """Every process's `a`, stacked in rank order: shape (size, *a.shape)."""
    out = np.empty((comm.Get_size(), *a.shape), a.dtype)
    comm.Allgather(_bytes(a), _bytes(out))
    return out


def _less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a < b` as MLX's C++ compares (complex64: by real part, then imaginary part)."""
    if a.dtype.kind == "c":
        return (a.real < b.real) | ((a.real == b.real) & (a.imag < b.imag))
    return a < b


def _fold(parts: np.ndarray, op: str) -> np.ndarray:
    """The processes' arrays combined in rank order, each step in their own type:
    `acc += x`, `acc = std::max(acc, x)` or `acc = std::min(acc, x)`."""
    acc = parts[0]
    for x in parts[1:]:
        if op == "sum":
            acc = acc + x
        elif op == "max":
            acc = np.where(_less(acc, x), x, acc)
        else:
            acc = np.where(_less(x, acc), x, acc)
    return acc


def _reduced(comm, a: np.ndarray, op: str) -> np.ndarray:
    """`a` summed ("sum"), or its maximum or minimum, over the processes of `comm`."""
    MPI = _mpi.mpi()
    dt = a.dtype
    if dt == np.bool_:
        mpi_op = MPI.LAND if op == "min" else MPI.LOR
    elif dt.kind in "iu" or dt in (np.float32, np.float64) or (dt.kind == "c" and op == "sum"):
        mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
    else:  # float16, bfloat16; complex64 maxima and minima
        return _fold(_gathered(comm, a), op)
    out = np.array(a, order="C")
    comm.Allreduce(MPI.IN_PLACE, out, op=mpi_op)
    return out


def _compute(kind: str, x: array, group: Group, dst: int | None = None) -> array:
    """Collective `kind` of `x` over `group` (of two processes or more), run now."""
    a, comm = numpy_of(x), group._comm  # (numpy_of runs the pending graph x depends on)
    if kind == "send":
        comm.Send(_bytes(a), dest=dst, tag=0)
        return x
    if kind == "all_gather":
        out = _gathered(comm, a)
        out = out.reshape(-1, *a.shape[1:]) if a.ndim else out
    elif kind == "sum_scatter":
        block = a.shape[0] // comm.Get_size()
        start = comm.Get_rank() * block
        out = _reduced(comm, a, "sum")[start:start + block]
    else:  # all_sum, all_max, all_min
        out = _reduced(comm, a, kind[4:])
    return array_from_numpy(out, x.dtype)


# -- MLX's transform rules -------------------------------------------------------------------

_NAMES = {"all_sum": "Sum AllReduce", "all_max": "Max AllReduce", "all_min": "Min AllReduce",
          "all_gather": "AllGather", "send": "Send", "sum_scatter": "Sum ReduceScatter"}


def _not_implemented(rule: str, kind: str) -> ValueError:
    return ValueError(f"[Primitive::{rule}] Not implemented for {_NAMES[kind]}.")


class _Collective(E.autograd.Function):
    """A collective as one op, for MLX's derivatives (see the module docstring)."""

    @staticmethod
    def forward(t, kind, group, dtype, dst):
        return _compute(kind, _wrap(t, dtype), group, dst)._t

    @staticmethod
    def setup_context(ctx, inputs, output):
        t, ctx.kind, ctx.group, ctx.dtype, ctx.dst = inputs
        ctx.in_shape = tuple(t.shape)

    @staticmethod
    def backward(ctx, cotangent):
        if ctx.kind in ("send", "sum_scatter"):
            raise _not_implemented("vjp", ctx.kind)
        if ctx.kind == "all_gather":  # (this process's block of the gathered axis)
            r = ctx.group.rank()
            if not ctx.in_shape:
                cotangent = cotangent[r]
            else:
                n = ctx.in_shape[0]
                cotangent = cotangent[r * n:(r + 1) * n]
        return cotangent, None, None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        if ctx.kind in ("send", "sum_scatter"):
            raise _not_implemented("jvp", ctx.kind)
        return _compute(ctx.kind, _wrap(tangent, ctx.dtype), ctx.group)._t


def _batched(args, dims, **_params):
    t, kind, group, dtype, dst = args
    if kind == "sum_scatter":
        raise _not_implemented("vmap", kind)
    return _compute(kind, _wrap(t, dtype), group, dst)._t, dims[0]


defbatch(_Collective._prim, _batched)


def _collective(kind: str, x: array, group: Group, dst: int | None = None) -> array:
    if transform_active() or x._t._requires_grad:
        return _wrap(_Collective.apply(x._t, kind, group, x.dtype, dst), x.dtype)
    return _compute(kind, x, group, dst)


# -- the collectives -------------------------------------------------------------------------

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


def _run(kind: str, x, group: Group | None, stream) -> array:
    x = _input(x, kind, group, stream)
    group = init() if group is None else group
    if group.size() == 1:
        return x
    return _collective(kind, x, group)


def all_sum(x: array, *, group: Group | None = None, stream=None) -> array:
    """Sum of `x` over the group's processes (`x` itself for a group of one)."""
    return _run("all_sum", x, group, stream)


def all_max(x: array, *, group: Group | None = None, stream=None) -> array:
    """Elementwise maximum of `x` over the group (`x` itself for a group of one)."""
    return _run("all_max", x, group, stream)


def all_min(x: array, *, group: Group | None = None, stream=None) -> array:
    """Elementwise minimum of `x` over the group (`x` itself for a group of one)."""
    return _run("all_min", x, group, stream)


def all_gather(x: array, *, group: Group | None = None, stream=None) -> array:
    """The processes' `x` concatenated on axis 0, in rank order (a 0-d `x` gives a vector;
    `x` itself for a group of one)."""
    return _run("all_gather", x, group, stream)


def sum_scatter(x: array, *, group: Group | None = None, stream=None) -> array:
    """Sum over the group, each process keeping its block of axis 0 (`x` for one)."""
    x = _input(x, "sum_scatter", group, stream)
    group = init() if group is None else group
    n = group.size()
    if n == 1:
        return x
    if x.ndim == 0 or x.shape[0] % n != 0:
        raise ValueError(f"[sum_scatter] Invalid shape={_shape(x.shape)} for a group of size "
                         f"{n}. The first dimension (axis 0) must be divisible by the group "
                         "size and input mst have at least one.")
    return _collective("sum_scatter", x, group)


def _shape(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def send(x: array, dst: int, *, group: Group | None = None, stream=None) -> array:
    """Send `x` to process `dst` of the group; returns `x`."""
    x = _input(x, "send", group, stream)
    group = init() if group is None else group
    if group.size() == 1:
        raise ValueError("Cannot send to a singleton group")
    if dst < 0 or dst >= group.size():
        raise ValueError(f"Invalid destination={dst} for a group of size {group.size()}")
    return _collective("send", x, group, dst)


def recv(shape: Sequence[int], dtype: Dtype, src: int, *, group: Group | None = None,
         stream=None) -> array:
    """The array of `shape` and `dtype` that process `src` of the group sends."""
    _input(0, "recv", group, stream)
    group = init() if group is None else group
    if group.size() == 1:
        raise ValueError("Cannot recv from a singleton group")
    if src < 0 or src >= group.size():
        raise ValueError(f"Invalid source={src} for a group of size {group.size()}")
    out = np.empty(tuple(int(d) for d in shape), dtype.np)
    group._comm.Recv(_bytes(out), source=src, tag=_mpi.mpi().ANY_TAG)
    return array_from_numpy(out, dtype)


def recv_like(x: array, src: int, *, group: Group | None = None, stream=None) -> array:
    """`recv` of an array shaped and typed like `x`."""
    x = _input(x, "recv_like", group, stream)
    return recv(x.shape, x.dtype, src, group=group, stream=stream)


__dir__ = listing(globals(), __all__)
