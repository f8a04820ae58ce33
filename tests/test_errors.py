"""ember.OutOfMemoryError: PyTorch's class, a RuntimeError."""

import pytest
import torch

import ember


def test_out_of_memory_error_is_a_runtime_error_as_in_torch():
    assert [c.__name__ for c in ember.OutOfMemoryError.__mro__] == \
        [c.__name__ for c in torch.OutOfMemoryError.__mro__]
    with pytest.raises(RuntimeError, match="no room"):
        raise ember.OutOfMemoryError("no room")
