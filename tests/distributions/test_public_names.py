"""ember.distributions exports (its __all__, what a star import binds) no name that
torch.distributions does not: a program relying on one would run under ember and fail
under PyTorch."""

import torch

import ember


def test_star_import_binds_only_torchs_names():
    extra = set(ember.distributions.__all__) - set(torch.distributions.__all__)
    assert not extra, sorted(extra)
    # (still reachable as attributes, as in PyTorch)
    assert ember.distributions.constraints.positive is not None
    assert ember.distributions.transforms.ExpTransform is ember.distributions.ExpTransform


def test_star_import_namespace():
    names: dict = {}
    exec("from ember.distributions import *", names)
    assert "constraints" not in names and "transforms" not in names
    assert "Normal" in names and "kl_divergence" in names and "transform_to" in names
