"""`torch.types`: the type aliases PyTorch programs annotate with (`Number`, `Device`, `_size`...).

ember has no symbolic shapes, so the `*LikeType` aliases are the plain Python types and
`py_sym_types` is empty (an `isinstance(x, py_sym_types)` check is False, as it is in
PyTorch for every concrete value).
"""

from __future__ import annotations

import os
from builtins import bool as _bool  # noqa: F401
from builtins import bytes as _bytes  # noqa: F401
from builtins import complex as _complex  # noqa: F401
from builtins import float as _float  # noqa: F401
from builtins import int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, TypeAlias

from ._device import device as _device
from ._dtype import dtype as _dtype  # noqa: F401
from ._layout import layout as _layout  # noqa: F401
from ._tensor import Size, Tensor
from .storage import UntypedStorage as Storage

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]
IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types: tuple[type, ...] = ()
Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None
