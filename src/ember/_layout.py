"""Layouts and memory formats: only `strided`, with contiguous and channels-last orders."""

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
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
preserve_format = memory_format("preserve_format")


def channels_last_strides(shape) -> tuple[int, ...]:
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def is_channels_last(shape, stride) -> bool:
    if len(shape) != 4:
        return False
    from ._view import is_contiguous

    n, c, h, w = shape
    perm_shape = (n, h, w, c)
    perm_stride = (stride[0], stride[2], stride[3], stride[1])
    return is_contiguous(perm_shape, perm_stride)
