"""PyTorch's legacy tensor constructors: `torch.FloatTensor(2, 3)`, `torch.Tensor([1, 2])`,
`t.new(...)`, and the legacy type names they go by (`t.type('torch.LongTensor')`)."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._nested_data import is_sequence, type_name
from .creation import empty, from_data

_LEGACY = {
    "FloatTensor": dt.float32, "DoubleTensor": dt.float64, "HalfTensor": dt.float16,
    "BFloat16Tensor": dt.bfloat16, "LongTensor": dt.int64, "IntTensor": dt.int32,
    "ShortTensor": dt.int16, "CharTensor": dt.int8, "ByteTensor": dt.uint8,
    "BoolTensor": dt.bool_,
}


def legacy_type_dtype(name: str) -> dt.dtype:
    short = name.rsplit(".", 1)[-1]
    if short not in _LEGACY:
        raise ValueError(f"invalid type: '{name}'")
    return _LEGACY[short]


def legacy_new(dtype: dt.dtype, *args, device=None, base: bool = False) -> Tensor:
    """PyTorch's `Tensor(2, 3)` (uninitialised) / `Tensor([1, 2])` (data) constructors; `base`
    for `Tensor(...)` itself, which takes a tensor of any dtype (`LongTensor(t)` does not)."""
    from .._device import device as _device
    from .._tensor import Size

    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if not base and a._dtype is not dtype:
                raise TypeError(f"expected {dtype} (got {a._dtype})")
            return a
        if isinstance(a, _device):
            return empty(0, dtype=dtype, device=a)
        if isinstance(a, Size):
            return empty(tuple(a), dtype=dtype, device=device)
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            return empty(a, dtype=dtype, device=device)
        if not is_sequence(a):
            raise TypeError(f"new(): data must be a sequence (got {type_name(type(a))})")
        return from_data(a, dtype, device, copy=False)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
           for a in args):
        return empty(*args, dtype=dtype, device=device)
    got = ", ".join(type_name(type(a)) for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                    "expected one of: (*, torch.device device = None), (Tensor other), "
                    "(tuple of ints size, *, torch.device device = None), "
                    "(object data, *, torch.device device = None)")


def legacy_tensor_new(cls, *args, **kwargs):
    t = legacy_new(dt.get_default_dtype(), *args, device=kwargs.get("device"), base=True)
    if cls is not Tensor:
        return cls._make_subclass(cls, t) if hasattr(cls, "_make_subclass") else t
    return t


TENSOR_METHODS = {
    "new": lambda self, *args, **kw: legacy_new(self._dtype, *args, device=self.device),
}
__all__: list = []
