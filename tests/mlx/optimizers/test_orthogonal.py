"""Muon against MLX's, step by step: matrices (wide, tall, 3-d reshaped), vectors and
scalars, with and without Nesterov momentum and weight decay."""

import numpy as np
import pytest

SHAPES = {"wide": (4, 6), "tall": (7, 3), "b": (5,), "conv": (3, 2, 4), "s": ()}


@pytest.mark.parametrize("kwargs", [
    {},
    {"nesterov": False, "weight_decay": 0.0},
    {"momentum": 0.8, "weight_decay": 0.1, "ns_steps": 3},
])
def test_muon_matches_mlx(twin_run, kwargs):
    # NOTE: float32 matmuls sum in a different order than MLX's CPU GEMM; five
    # Newton-Schulz steps leave them at a few 1e-6 relative (measured: 3.4e-6, 1.5e-8 abs)
    twin_run(lambda o: o.Muon(learning_rate=0.02, **kwargs), shapes=SHAPES, steps=10,
             rtol=1e-5, atol=1e-7)


def test_muon_state_and_step_without_matrices_are_exact(twin_run):
    # vectors and scalars take the plain momentum step: only multiplies and adds
    twin_run(lambda o: o.Muon(learning_rate=0.1), shapes={"b": (5,), "s": ()}, rtol=0)


def test_muon_step_is_orthogonal():
    import ember.mlx.core as mx
    import ember.mlx.optimizers as optim

    opt = optim.Muon(learning_rate=1.0, momentum=0.0, weight_decay=0.0, nesterov=False,
                     ns_steps=10)
    g = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    step = -np.array(opt.apply_gradients({"w": mx.array(g)}, {"w": mx.zeros((4, 6))})["w"])
    # singular values pushed towards 1 (Muon's iteration oscillates in about [0.7, 1.2])
    s = np.linalg.svd(step, compute_uv=False)
    assert np.all((s > 0.6) & (s < 1.3))
