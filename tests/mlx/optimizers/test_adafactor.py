"""Adafactor against MLX's, step by step, in each of its modes."""

import pytest

import ember.mlx.core as mx

mlx_core = pytest.importorskip("mlx.core")


@pytest.mark.parametrize("kwargs", [
    {},
    {"warmup_init": True},
    {"beta_1": 0.9, "weight_decay": 0.01},
    {"scale_parameter": False, "clip_threshold": 0.5},
    {"learning_rate": 1e-2, "relative_step": False},
])
def test_adafactor_matches_mlx(twin_run, kwargs):
    # NOTE: step**decay_rate (pow) may differ by 1 ulp from MLX's, and the RMS and
    # row/column means sum in a different order (a few ulp): hence rtol 1e-5, and an
    # absolute slack far below the step size (~1e-2) for entries of the first-moment
    # average that cancel to near zero
    twin_run(lambda o: o.Adafactor(**kwargs), rtol=1e-5, atol=1e-8)


def test_adafactor_factors_matrices_and_not_vectors(twin_run):
    ours, _, _, _ = twin_run(lambda o: o.Adafactor(), steps=1)
    assert ours.state["w"]["exp_avg_sq_row"].shape == (4,)
    assert ours.state["w"]["exp_avg_sq_col"].shape == (5,)
    assert ours.state["layers"][1]["w"]["exp_avg_sq_col"].shape == (2, 4)
    assert list(ours.state["b"]) == ["exp_avg_sq"]


def test_adafactor_without_relative_step_needs_a_learning_rate(same_error):
    # no learning rate in the state: the first step fails on looking it up, as MLX's does
    arrays = {"mlx.optimizers": mlx_core.array, "ember.mlx.optimizers": mx.array}

    def step(o):
        g = {"w": arrays[o.__name__]([1.0, 2.0])}
        o.Adafactor(relative_step=False).apply_gradients(g, g)

    same_error(step)
