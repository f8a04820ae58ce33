"""torch.nn.attention.bias: causal masks described by their variant and sequence lengths
(`causal_upper_left`, `causal_lower_right`), usable as F.scaled_dot_product_attention's
attn_mask.

# NOTE: PyTorch's CausalBias is a tensor subclass that reroutes attention itself; here it
# is a Tensor subclass holding the materialised boolean mask, so attention reads it as an
# ordinary mask: the same numbers, and its shape is the mask's (L, S).
"""

from __future__ import annotations

import enum
import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Where the causal triangle is anchored: the top-left or the bottom-right corner."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2

    def __repr__(self) -> str:
        return f"<CausalVariant.{self.name}: {self.value}>"


class CausalBias(Tensor):
    """A (seq_len_q, seq_len_kv) causal mask of the given variant."""

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {variant!r}")
        offset = 0 if variant is CausalVariant.UPPER_LEFT else seq_len_kv - seq_len_q
        mask = E.ones(seq_len_q, seq_len_kv, dtype=E.bool).tril(offset)
        self = Tensor._make_subclass(cls, mask)
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        return self

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if variant is CausalVariant.LOWER_RIGHT and seq_len_q > seq_len_kv:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", UserWarning, stacklevel=user_stacklevel())

    def _materialize(self, device=None) -> Tensor:
        """The mask as a plain boolean tensor."""
        out = Tensor.detach(self)
        out.__class__ = Tensor
        return out.clone() if device is None else out.to(device).clone()

    def __repr__(self, *, tensor_contents=None) -> str:
        """Printed as the plain boolean mask it stands for (as PyTorch prints it)."""
        return self._materialize().__repr__(tensor_contents=tensor_contents)


def causal_upper_left(*size) -> CausalBias:
    """A causal mask whose triangle starts at the top-left corner (row i sees keys 0..i)."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size) -> CausalBias:
    """A causal mask whose triangle ends at the bottom-right corner (the last query sees
    every key)."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
