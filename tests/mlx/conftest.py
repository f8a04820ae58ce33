"""Every MLX-face test starts with ops recorded (lazy mode on): how earlier tests' graphs
went (`_lazy`'s backing off from graphs that never come back) does not carry over."""

import pytest

from ember.mlx.core import _lazy


@pytest.fixture(autouse=True)
def _recording_afresh():
    _lazy.settle()
    yield
