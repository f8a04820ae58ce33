"""Exception classes PyTorch exports at the top level that ember has no other home for."""

from __future__ import annotations


class OutOfMemoryError(RuntimeError):
    """An allocation failed for lack of device memory (PyTorch's class, a RuntimeError, so
    `except RuntimeError` handlers catch it as in PyTorch). ember's CPU path reports host
    memory exhaustion as NumPy does; the class exists so programs can name it."""


OutOfMemoryError.__module__ = "ember"  # (PyTorch's is `torch.OutOfMemoryError`)
