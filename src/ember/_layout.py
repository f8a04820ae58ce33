"""Layouts (strided and the sparse ones) and memory formats (contiguous, channels-last)."""

from __future__ import annotations

from . import _names


class layout:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{_names.prefix}.{self.name}"


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{_names.prefix}.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# the rank each channels-last format is for
CHANNELS_LAST_RANK = {"channels_last": 4, "channels_last_3d": 5}


def channels_last_strides(shape) -> tuple[int, ...]:
    """Dense strides of (N, C, *S) stored as (N, *S, C)."""
    out = [0] * len(shape)
    acc = 1
    for d in (1,) + tuple(range(len(shape) - 1, 1, -1)) + (0,):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def is_channels_last(shape, stride, rank: int = 4) -> bool:
    """Whether (shape, stride) is the dense channels-last layout of its `rank`."""
    if len(shape) != rank:
        return False
    from ._view import is_contiguous

    perm = (0,) + tuple(range(2, rank)) + (1,)
    return is_contiguous(tuple(shape[d] for d in perm), tuple(stride[d] for d in perm))


def suggest_memory_format(shape, stride) -> memory_format:
    """PyTorch's `suggest_memory_format()` of a strided (shape, stride): channels_last
    (channels_last_3d) when c10's stride heuristic reads a 4-d (5-d) layout as one, an
    ambiguous or empty one reading as contiguous_format."""
    nd = len(shape)
    if nd not in (4, 5) or stride[1] == 0:
        return contiguous_format
    low = 0
    for d in (1, 3, 2, 0) if nd == 4 else (1, 4, 3, 2, 0):
        if shape[d] == 0 or stride[d] < low or (d == 0 and low == stride[1]):
            return contiguous_format
        low = stride[d] * max(shape[d], 1)
    return channels_last if nd == 4 else channels_last_3d
