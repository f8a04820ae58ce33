"""The switch for PyTorch's fused inference paths of MultiheadAttention and the Transformer
encoder (`torch.backends.mha`).

ember has no separate fused kernels, but those paths differ visibly (NaN for a query whose
every key is masked, the is_causal hint ignored, relu / exact gelu only), so the attention
modules copy their behaviour while this switch is on, as PyTorch does.
"""

from __future__ import annotations

_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether MultiheadAttention and TransformerEncoder may take the fused inference path."""
    return _fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Allow (True) or forbid (False) the fused inference path."""
    global _fastpath_enabled
    _fastpath_enabled = value
