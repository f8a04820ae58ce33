"""Shared pytest setup: every test starts from the same seeds and default dtype."""

import numpy as np
import pytest
import torch

import ember
import native_line


def pytest_configure(config):
    native_line.configure(config)


@pytest.fixture(autouse=True)
def _seed_and_defaults():
    ember.manual_seed(0)
    torch.manual_seed(0)
    np.random.seed(0)
    ember.set_default_dtype(ember.float32)
    torch.set_default_dtype(torch.float32)
    # (a test's torch.compile / ember.compile turns this off for the process, as PyTorch's)
    ember.distributions.Distribution.set_default_validate_args(True)
    torch.distributions.Distribution.set_default_validate_args(True)
    # (PyTorch's warn-once warnings: once per process there, once per test here, so that
    # what a test sees does not depend on which tests ran before it in the same worker)
    ember._user_warnings._warned_once.clear()
    yield
    # (a test's Tensor subclass turns the __torch_function__ protocol on for the process:
    # off again, so that the next test sees the API as a program without one does)
    if ember._torch_function.is_active():
        ember._torch_function.deactivate()
