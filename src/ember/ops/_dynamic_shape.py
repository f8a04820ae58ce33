"""vmap's refusals of ops whose output shape depends on the values, in PyTorch's words.

Inside vmap each example would get its own shape, which one batched result cannot hold:
PyTorch refuses nonzero, unique, unique_consecutive and one-argument where over a batched
input, a batched boolean mask in indexing or masked_select, and has no fallback for
nonzero(as_tuple=True). (argwhere and bincount it runs once per example, as ember does.)
A batched tensor is the only kind with `_is_wrapper` set (func/_vmap.py's BatchedTensor).
"""

from __future__ import annotations

from .._tensor import Tensor


def refuse_batched(t, aten: str) -> None:
    """Raise PyTorch's error when `t` is batched by vmap (`aten`: the op it names)."""
    if isinstance(t, Tensor) and t._is_wrapper:
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over {aten}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")


def refuse_batched_tuple(t) -> None:
    """nonzero(as_tuple=True): PyTorch's nonzero_numpy has neither a rule nor a fallback."""
    if isinstance(t, Tensor) and t._is_wrapper:
        raise RuntimeError("Batching rule not implemented for aten::nonzero_numpy. We could not "
                           "generate a fallback.")


def refuse_batched_mask(mask, where: str) -> None:
    """A boolean mask batched by vmap, in indexing (`where` = "index") or masked_select."""
    if not (isinstance(mask, Tensor) and mask._is_wrapper):
        return
    if where == "index":
        raise RuntimeError("vmap: We do not support batching operators that can support "
                           "dynamic shape. Attempting to batch over indexing with a boolean "
                           "mask.")
    raise RuntimeError("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) "
                       "We cannot support this because for each batch this would return a "
                       "differently shaped Tensor. Please file an issue at "
                       "https://github.com/pytorch/pytorch/issues if you need this feature.")
