"""Attach every op module's `TENSOR_METHODS` to Tensor (one table per module, grep-able),
with PyTorch's keyword aliases (`axis=`, `keepdims=`) where it takes them."""

from __future__ import annotations

from ._aliases import with_aliases
from ._tensor import Tensor
from .ops import MODULES
from .ops._arg_parser_text import as_method


def bind_methods() -> None:
    seen: dict[str, str] = {}
    for mod in MODULES:
        for name, fn in mod.TENSOR_METHODS.items():
            if name in seen:
                raise RuntimeError(
                    f"Tensor.{name} is bound by both {seen[name]} and {mod.__name__}"
                )
            seen[name] = mod.__name__
            if getattr(fn, "_method_aware", False):
                fn = as_method(fn)
            setattr(Tensor, name, with_aliases(fn, name, method=True))
