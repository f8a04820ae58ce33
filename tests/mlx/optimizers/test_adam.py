"""Adam, AdamW and Adamax against MLX's, step by step."""

import numpy as np
import pytest


@pytest.mark.parametrize("kwargs", [{}, {"betas": [0.8, 0.95], "eps": 1e-6}])
def test_adam_matches_mlx(twin_run, kwargs):
    # sqrt and division are correctly rounded on both sides: the runs agree to the bit
    twin_run(lambda o: o.Adam(learning_rate=1e-2, **kwargs), rtol=0)


def test_adam_with_bias_correction_matches_mlx(twin_run):
    # NOTE: beta**step (pow) differs by 1 ulp from MLX's at some steps, so the step size
    # c1 may too: ~1e-9 absolute in a parameter, which is large relative to one that
    # has come close to zero; hence the small absolute slack
    twin_run(lambda o: o.Adam(learning_rate=1e-2, bias_correction=True), atol=1e-8)


def test_adam_bias_correction_changes_the_first_steps(twin_run):
    plain, _, p_plain, _ = twin_run(lambda o: o.Adam(1e-2), steps=1)
    corrected, _, p_corr, _ = twin_run(lambda o: o.Adam(1e-2, bias_correction=True), steps=1)
    # after one step the corrected update is lr * sign(g) (up to eps): larger than plain
    assert not np.allclose(np.array(p_plain["w"]), np.array(p_corr["w"]))


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.1}, {"bias_correction": True}])
def test_adamw_matches_mlx(twin_run, kwargs):
    atol = 1e-8 if kwargs.get("bias_correction") else 0.0  # pow's ulp, as above
    twin_run(lambda o: o.AdamW(learning_rate=1e-2, **kwargs), atol=atol)


def test_adamw_default_weight_decay_is_mlx_0_01():
    import ember.mlx.optimizers as optim
    assert optim.AdamW(1e-3).weight_decay == 0.01
    assert optim.Adam(1e-3).bias_correction is False


@pytest.mark.parametrize("kwargs", [{}, {"betas": [0.5, 0.9], "eps": 1e-4}])
def test_adamax_matches_mlx(twin_run, kwargs):
    twin_run(lambda o: o.Adamax(learning_rate=1e-2, **kwargs))


def test_adam_in_float16_matches_mlx(twin_run):
    # the learning rate is cast to the gradient's dtype, state stays float16
    twin_run(lambda o: o.Adam(learning_rate=1e-2), dtype=np.float16, rtol=1e-3)


@pytest.mark.parametrize("make", [
    lambda o: o.Adam(1e-3, betas=[1.0, 0.999]),
    lambda o: o.Adam(1e-3, betas=[0.9, -0.1]),
    lambda o: o.Adam(1e-3, eps=-1.0),
    lambda o: o.AdamW(1e-3, betas=[0.9, 1.5]),
])
def test_bad_hyperparameters_raise_as_mlx(same_error, make):
    same_error(make)
