"""Tensor collectives and point-to-point messages on MPI.

Contiguous tensors hand MPI the NumPy array over their own storage, so data lands in place
without copies; non-contiguous tensors go through a contiguous copy. MPI cannot reduce
float16, bfloat16 or bool, so those are widened for reductions. Synchronous calls use MPI's
blocking operations under the watchdog; `async_op=True` starts the nonblocking ones and
returns a `Work`.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import _tensor as T
from ..autograd.graph import increment_version
from . import _mpi
from .group import resolve, watchdog
from .work import Work


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


def _mpi_op(op: ReduceOp, widened_bool: bool):
    MPI = _mpi.mpi()
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a ReduceOp, got {op!r}")
    if widened_bool:  # logical meaning of sum and product on bool
        return {ReduceOp.SUM: MPI.MAX, ReduceOp.AVG: MPI.MAX,
                ReduceOp.PRODUCT: MPI.MIN}.get(op) or _mpi_op(op, False)
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _check_tensor(t, name: str) -> None:
    if not isinstance(t, T.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"Tensor but got {type(t)} instead.")
    if t.device.type != "cpu":
        raise ValueError(f"`{name}` must be a CPU tensor, not on {t.device}")


def _check_list(ts, name: str) -> None:
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(ts)} instead.")
    for t in ts:
        _check_tensor(t, name)


class _Buf:
    """A flat NumPy array MPI reads or writes for tensor `t`, and how to write it back."""

    def __init__(self, t, reduce: bool = False, out: bool = True) -> None:
        self.t = t
        arr = t._array()
        self.direct = arr.flags.c_contiguous and (not reduce or _mpi.reducible(arr))
        self.bool = reduce and arr.dtype == np.bool_
        if self.direct:
            flat = arr.reshape(-1)
        elif reduce and not _mpi.reducible(arr):
            flat = arr.astype(np.uint8 if self.bool else np.float32).reshape(-1)
        else:
            flat = np.ascontiguousarray(arr).reshape(-1)
        self.flat = flat
        self.out = out

    def data(self) -> np.ndarray:
        """What MPI sees: the array itself for reductions, its bytes for moves."""
        return self.flat

    def bytes(self) -> np.ndarray:
        return _mpi.as_bytes(self.flat)

    def done(self, divide: int = 1) -> None:
        if divide != 1:
            if self.flat.dtype.kind in "fc":
                self.flat /= divide
            else:
                self.flat //= divide
        if not self.out:
            return
        if not self.direct:
            arr = self.t._array()
            arr[...] = self.flat.reshape(arr.shape).astype(arr.dtype, copy=False)
        increment_version(self.t)


def _run(name: str, g, async_op: bool, blocking, start, finish=None, result=None):
    """A synchronous call runs `blocking()` under the watchdog; an async one `start()`s."""
    if async_op:
        return Work(start(), name, g, finish, result)
    with watchdog().guard(name, g.timeout):
        blocking()
    if finish is not None:
        finish()
    return None


def _in_place():
    return _mpi.mpi().IN_PLACE


# --- collectives ------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `tensor` across the group, every rank receiving the result in place."""
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    b = _Buf(tensor, reduce=True)
    mop = _mpi_op(op, b.bool)
    divide = g.size() if op is ReduceOp.AVG else 1
    return _run("all_reduce", g, async_op,
                lambda: g.comm.Allreduce(_in_place(), b.data(), mop),
                lambda: [g.comm.Iallreduce(_in_place(), b.data(), mop)],
                lambda: b.done(divide))


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst=None):
    """Reduce `tensor` across the group into rank `dst`'s tensor."""
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    root = group_dst if group_dst is not None else g.group_rank(dst, "dst")
    b = _Buf(tensor, reduce=True, out=g.rank() == root)
    mop = _mpi_op(op, b.bool)
    divide = g.size() if op is ReduceOp.AVG and b.out else 1
    send = _in_place() if b.out else b.data()
    recv = b.data() if b.out else None
    return _run("reduce", g, async_op,
                lambda: g.comm.Reduce(send, recv, mop, root),
                lambda: [g.comm.Ireduce(send, recv, mop, root)],
                lambda: b.done(divide))


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """Copy rank `src`'s `tensor` into every other rank's `tensor`."""
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    root = group_src if group_src is not None else g.group_rank(src, "src")
    b = _Buf(tensor, out=g.rank() != root)
    return _run("broadcast", g, async_op,
                lambda: g.comm.Bcast(b.bytes(), root),
                lambda: [g.comm.Ibcast(b.bytes(), root)],
                b.done)


def _same_layout(tensors, like, what: str) -> None:
    for t in tensors:
        if t.dtype is not like.dtype:
            raise TypeError(f"{what}: tensors must all have dtype {like.dtype}, got {t.dtype}")
        if t.numel() != like.numel():
            raise ValueError(f"{what}: every tensor must have {like.numel()} elements, "
                             f"got {t.numel()}")


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Every rank's `tensor`, gathered into `tensor_list` on every rank."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    if len(tensor_list) != g.size():
        raise ValueError(f"all_gather: tensor_list must hold {g.size()} tensors (the group "
                         f"size), got {len(tensor_list)}")
    _same_layout(tensor_list, tensor, "all_gather")
    src = _Buf(tensor, out=False)
    whole = np.empty(g.size() * src.flat.size, src.flat.dtype)
    recv = _mpi.as_bytes(whole)

    def finish():
        for i, t in enumerate(tensor_list):
            b = _Buf(t)
            b.flat[...] = whole[i * src.flat.size:(i + 1) * src.flat.size]
            b.done()

    return _run("all_gather", g, async_op,
                lambda: g.comm.Allgather(src.bytes(), recv),
                lambda: [g.comm.Iallgather(src.bytes(), recv)],
                finish, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's `input_tensor`, concatenated (or stacked) into `output_tensor`."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = resolve(group)
    if output_tensor.dtype is not input_tensor.dtype:
        raise TypeError("all_gather_into_tensor: output and input must have the same dtype")
    if output_tensor.numel() != g.size() * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to "
                         f"world_size times input tensor size ({g.size()} x "
                         f"{input_tensor.numel()}), got {output_tensor.numel()}")
    src, out = _Buf(input_tensor, out=False), _Buf(output_tensor)
    return _run("all_gather_into_tensor", g, async_op,
                lambda: g.comm.Allgather(src.bytes(), out.bytes()),
                lambda: [g.comm.Iallgather(src.bytes(), out.bytes())],
                out.done)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `input` across ranks; rank i keeps the i-th equal chunk in `output`."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = resolve(group)
    if output.dtype is not input.dtype:
        raise TypeError("reduce_scatter_tensor: output and input must have the same dtype")
    if input.numel() != g.size() * output.numel():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as "
                         f"output size times world size ({g.size()} x {output.numel()}), "
                         f"got {input.numel()}")
    src, out = _Buf(input, reduce=True, out=False), _Buf(output, reduce=True)
    mop = _mpi_op(op, out.bool)
    divide = g.size() if op is ReduceOp.AVG else 1
    return _run("reduce_scatter_tensor", g, async_op,
                lambda: g.comm.Reduce_scatter_block(src.data(), out.data(), mop),
                lambda: [g.comm.Ireduce_scatter_block(src.data(), out.data(), mop)],
                lambda: out.done(divide))


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False,
           group_dst=None):
    """Every rank's `tensor`, gathered into `gather_list` on rank `dst`."""
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    root = group_dst if group_dst is not None else g.group_rank(dst, "dst")
    src = _Buf(tensor, out=False)
    me_root = g.rank() == root
    if me_root:
        _check_list(gather_list or [], "gather_list")
        if gather_list is None or len(gather_list) != g.size():
            raise ValueError("gather: Argument ``gather_list`` must be specified on "
                             "destination rank, with one tensor per rank.")
        _same_layout(gather_list, tensor, "gather")
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    whole = np.empty(g.size() * src.flat.size if me_root else 0, src.flat.dtype)
    recv = _mpi.as_bytes(whole) if me_root else None

    def finish():
        if me_root:
            for i, t in enumerate(gather_list):
                b = _Buf(t)
                b.flat[...] = whole[i * src.flat.size:(i + 1) * src.flat.size]
                b.done()

    return _run("gather", g, async_op,
                lambda: g.comm.Gather(src.bytes(), recv, root),
                lambda: [g.comm.Igather(src.bytes(), recv, root)],
                finish)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False,
            group_src=None):
    """Rank `src`'s `scatter_list[i]` copied into rank i's `tensor`."""
    _check_tensor(tensor, "tensor")
    g = resolve(group)
    root = group_src if group_src is not None else g.group_rank(src, "src")
    out = _Buf(tensor)
    send = None
    if g.rank() == root:
        _check_list(scatter_list or [], "scatter_list")
        if scatter_list is None or len(scatter_list) != g.size():
            raise ValueError("scatter: Argument ``scatter_list`` must be specified on source "
                             "rank, with one tensor per rank.")
        _same_layout(scatter_list, tensor, "scatter")
        send = _mpi.as_bytes(np.concatenate([_Buf(t, out=False).flat for t in scatter_list]))
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on "
                         "non-source ranks.")
    return _run("scatter", g, async_op,
                lambda: g.comm.Scatter(send, out.bytes(), root),
                lambda: [g.comm.Iscatter(send, out.bytes(), root)],
                out.done)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Rank i's `input_tensor_list[j]` lands in rank j's `output_tensor_list[i]`."""
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    g = resolve(group)
    n = g.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists must hold {n} tensors (the group size)")
    ins = [_Buf(t, out=False) for t in input_tensor_list]
    outs = [_Buf(t) for t in output_tensor_list]
    send = np.concatenate([b.bytes() for b in ins])
    counts_in = [b.flat.nbytes for b in ins]
    counts_out = [b.flat.nbytes for b in outs]
    recv = np.empty(sum(counts_out), np.uint8)
    spec_in = [send, (counts_in, list(np.cumsum([0] + counts_in[:-1])))]
    spec_out = [recv, (counts_out, list(np.cumsum([0] + counts_out[:-1])))]

    def finish():
        at = 0
        for b, c in zip(outs, counts_out):
            b.bytes()[...] = recv[at:at + c]
            at += c
            b.done()

    return _run("all_to_all", g, async_op,
                lambda: g.comm.Alltoallv(spec_in, spec_out),
                lambda: [g.comm.Ialltoallv(spec_in, spec_out)],
                finish)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op: bool = False):
    """`all_to_all` on dim-0 chunks of one tensor each way (equal chunks, or the sizes given)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = resolve(group)
    n = g.size()
    outs = (list(output.split(output_split_sizes)) if output_split_sizes
            else list(output.chunk(n)))
    ins = list(input.split(input_split_sizes)) if input_split_sizes else list(input.chunk(n))
    if len(outs) != n or len(ins) != n:
        raise ValueError(f"all_to_all_single: the tensors must split into {n} chunks")
    work = all_to_all(outs, ins, group, async_op)
    if not async_op:
        increment_version(output)
    return work


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank of the group reached this call."""
    g = resolve(group)
    return _run("barrier", g, async_op, g.comm.Barrier, lambda: [g.comm.Ibarrier()])


# --- point to point -----------------------------------------------------------------------

def _p2p_check(tensor, peer, g, what: str) -> int:
    _check_tensor(tensor, "tensor")
    r = g.group_rank(peer, what)
    if r == g.rank():
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the "
                         "rank of the current process.")
    return r


def send(tensor, dst: int, group=None, tag: int = 0) -> None:
    """Send `tensor` to rank `dst` (which calls `recv`)."""
    g = resolve(group)
    peer = _p2p_check(tensor, dst, g, "dst")
    b = _Buf(tensor, out=False)
    _run("send", g, False, lambda: g.comm.Send(b.bytes(), peer, tag), None)


def isend(tensor, dst: int, group=None, tag: int = 0) -> Work:
    g = resolve(group)
    peer = _p2p_check(tensor, dst, g, "dst")
    b = _Buf(tensor, out=False)
    return _run("isend", g, True, None, lambda: [g.comm.Isend(b.bytes(), peer, tag)])


def recv(tensor, src: int | None = None, group=None, tag: int = 0) -> int:
    """Receive into `tensor` from rank `src` (any rank if None); returns the sender's rank."""
    g = resolve(group)
    MPI = _mpi.mpi()
    peer = MPI.ANY_SOURCE if src is None else _p2p_check(tensor, src, g, "src")
    _check_tensor(tensor, "tensor")
    b = _Buf(tensor)
    status = MPI.Status()
    _run("recv", g, False, lambda: g.comm.Recv(b.bytes(), peer, tag, status), None, b.done)
    return g.ranks[status.Get_source()]


def irecv(tensor, src: int | None = None, group=None, tag: int = 0) -> Work:
    g = resolve(group)
    MPI = _mpi.mpi()
    peer = MPI.ANY_SOURCE if src is None else _p2p_check(tensor, src, g, "src")
    _check_tensor(tensor, "tensor")
    b = _Buf(tensor)
    return _run("irecv", g, True, None, lambda: [g.comm.Irecv(b.bytes(), peer, tag)], b.done)
