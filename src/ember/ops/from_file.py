"""`from_file`: a tensor read from a file of raw elements, private (a copy) or shared (a
memory map whose writes reach the file), as PyTorch's `torch.from_file`."""

from __future__ import annotations

import errno
import os

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import wrong_type
from .creation import from_numpy


def _os_error(what: str, code: int) -> RuntimeError:
    return RuntimeError(f"{what}: {os.strerror(code)} ({code})")


def _check_size(filename: str, have: int, need: int) -> None:
    if have < need:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required "
                           f"mapping size <{need}>")


def _private(filename: str, nbytes: int) -> np.ndarray:
    try:
        with open(filename, "rb") as f:
            _check_size(filename, os.fstat(f.fileno()).st_size, nbytes)
            return np.frombuffer(bytearray(f.read(nbytes)), np.uint8)
    except OSError as exc:
        raise _os_error(f"unable to open file <{filename}> in read-only mode",
                        exc.errno or errno.EIO) from None


def _shared(filename: str, nbytes: int) -> np.ndarray:
    try:
        with open(filename, "ab"):  # (created when missing, as PyTorch's O_CREAT)
            pass
        if os.path.getsize(filename) == 0 and nbytes:
            os.truncate(filename, nbytes)
    except OSError as exc:
        raise _os_error(f"unable to open file <{filename}> in read-write mode",
                        exc.errno or errno.EIO) from None
    _check_size(filename, os.path.getsize(filename), nbytes)
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    return np.memmap(filename, np.uint8, mode="r+", shape=(nbytes,))


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype=None,
              layout=None, device=None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """`size` elements of `dtype` (default: the default dtype) read from the start of
    `filename`. With `shared`, the tensor is a map of the file: writes through it reach the
    file (created, `size` elements of zeros, when missing); otherwise it is a private copy."""
    if not isinstance(filename, str):
        raise wrong_type("from_file", "filename", 1, "str", filename)
    d = dt.get_default_dtype() if dtype is None else dtype
    nbytes = int(size) * d.itemsize
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: "
                           f"{os.strerror(errno.ENOMEM)} ({errno.ENOMEM})")
    raw = _shared(filename, nbytes) if shared else _private(filename, nbytes)
    t = from_numpy(raw.view(d.np))
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(True) if requires_grad else t


TENSOR_METHODS: dict = {}

__all__ = ["from_file"]
