"""`Sequential`: calls its layers in order."""

from __future__ import annotations

from collections.abc import Callable

from .base import Module


class Sequential(Module):
    """Applies `layers` one after the other; they are kept in the list `layers`, so
    their parameters sit under "layers.0", "layers.1", ... Plain callables (functions
    such as `nn.relu`) are allowed too."""

    def __init__(self, *modules: Callable) -> None:
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
