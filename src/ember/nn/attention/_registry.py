"""The flash-attention implementation registry of torch.nn.attention: kernel providers
register a callable that installs their kernels; a program activates one by name. The two
PyTorch names (FA3, FA4) are CUDA libraries: activating them fails at their import, as in
PyTorch without them. ember's attention does not consult the registry (one CPU kernel)."""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

logger = logging.getLogger(__name__)


def _needs(module: str) -> Callable[[], None]:
    def register() -> None:
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)

    return register


_IMPLS: dict[str, Callable] = {"FA3": _needs("flash_attn_interface"),
                               "FA4": _needs("flash_attn")}
_active: tuple | None = None  # (name, handle) of the activated impl


def register_flash_attention_impl(impl: str, *, register_fn: Callable) -> None:
    """Record `register_fn` as the way to activate implementation `impl`."""
    _IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Run `impl`'s registration (after restoring the default); a handle it returns is kept
    until restore_flash_attention_impl."""
    global _active
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _active = (impl, handle)


def list_flash_attention_impls() -> list[str]:
    """The registered implementation names."""
    return list(_IMPLS)


def current_flash_attention_impl() -> str | None:
    """The activated implementation's name, or None (the default)."""
    return None if _active is None else _active[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Remove the activated implementation (its handle's remove()), back to the default."""
    global _active
    handle = None if _active is None else _active[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _active = None
