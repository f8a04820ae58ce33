"""What a tensor is, asked as PyTorch asks it: isreal, is_signed, is_nonzero,
is_same_size, and the conjugate / negative bits (ember conjugates and negates eagerly, so
no tensor carries either lazily).
"""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor


def isreal(input: Tensor) -> Tensor:
    if input.dtype.is_complex:
        return input.imag == 0
    from .creation import ones_like

    return ones_like(input, dtype=dt.bool_)  # (laid out as the input, as PyTorch's)


def is_signed(input: Tensor) -> bool:
    return input.dtype.is_signed


def is_conj(input: Tensor) -> bool:
    """ember conjugates eagerly, so no tensor carries a lazy conjugate bit."""
    return False


def is_neg(input: Tensor) -> bool:
    """No tensor carries a lazy negative bit in ember."""
    return False


def resolve_conj(input: Tensor) -> Tensor:
    return input


def resolve_neg(input: Tensor) -> Tensor:
    return input


def is_nonzero(self: Tensor) -> bool:
    """The one value of `self` as a bool (Tensor.is_nonzero; ember.is_nonzero is its twin)."""
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no' if n == 0 else 'more than one'} "
                           f"value{'s' if n == 0 else ''} is ambiguous")
    return bool(self.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return input.shape == other.shape


TENSOR_METHODS = {
    "isreal": isreal, "is_conj": is_conj, "is_neg": is_neg, "is_same_size": is_same_size,
    "is_nonzero": is_nonzero,
}

__all__ = ["isreal", "is_signed", "is_conj", "is_neg", "resolve_conj", "resolve_neg",
           "is_same_size"]
