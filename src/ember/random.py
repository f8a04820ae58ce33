"""Random state: `Generator`, the default generator, seeding (placeholder streams).

A later change makes every stream match PyTorch's CPU generator bit for bit.
"""

from __future__ import annotations

import contextlib

import numpy as np


class Generator:
    """Holds a random state; `manual_seed` makes draws reproducible."""

    def __init__(self, device="cpu") -> None:
        from ._device import as_device

        self.device = as_device(device)
        self._seed = 67280421310721
        self._rs = np.random.RandomState(self._seed % 2**32)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed) % 2**64
        self._rs = np.random.RandomState(self._seed % 2**32)
        return self

    def seed(self) -> int:
        import secrets

        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from .ops.creation import tensor

        st = self._rs.get_state()
        return tensor(np.frombuffer(st[1].astype(np.uint32).tobytes(), np.uint8).copy())

    def set_state(self, state) -> Generator:
        words = np.frombuffer(state.numpy().tobytes(), np.uint32)
        self._rs.set_state(("MT19937", words, 624))
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, **kwargs):
    """Restore the default generator's state on exit."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
