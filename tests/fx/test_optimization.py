"""ember.fx.experimental.optimization (fuse, remove_dropout) against torch's: the same
rewritten code, and the fused model computes what the unfused one does."""

from __future__ import annotations

import importlib

import numpy as np
import torch

import ember

from helpers import copy_module_state


def make(L):
    L.manual_seed(0)
    model = L.nn.Sequential(
        L.nn.Conv2d(2, 3, 3), L.nn.BatchNorm2d(3), L.nn.ReLU(), L.nn.Flatten(),
        L.nn.Linear(12, 4), L.nn.BatchNorm1d(4), L.nn.Dropout(0.3), L.nn.Linear(4, 2))
    return model


def test_fuse_and_remove_dropout_match_torch():
    t_model, e_model = make(torch), make(ember)
    with torch.no_grad():
        for m in t_model.modules():
            if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    copy_module_state(e_model, t_model)
    t_model.eval()
    e_model.eval()
    results = []
    for L, model in ((torch, t_model), (ember, e_model)):
        opt = importlib.import_module(f"{L.__name__}.fx.experimental.optimization")
        fused = opt.fuse(model)
        plain = opt.remove_dropout(model)
        results.append((fused.code, plain.code, [type(m).__name__ for m in fused.modules()]))
    assert results[0] == results[1]
    x = np.random.default_rng(0).standard_normal((5, 2, 4, 4)).astype(np.float32)
    opt = importlib.import_module("ember.fx.experimental.optimization")
    with ember.no_grad():
        fused_out = opt.fuse(e_model)(ember.tensor(x)).numpy()
        ref = e_model(ember.tensor(x)).numpy()
    # folding the normalisation into the weights reorders float32 roundings
    np.testing.assert_allclose(fused_out, ref, rtol=1e-5, atol=1e-5)
