"""RMSprop, Adagrad and AdaDelta against MLX's, step by step."""

import pytest


@pytest.mark.parametrize("kwargs", [{}, {"alpha": 0.9, "eps": 1e-4}])
def test_rmsprop_matches_mlx(twin_run, kwargs):
    # sqrt and division are correctly rounded on both sides: the runs agree to the bit
    twin_run(lambda o: o.RMSprop(learning_rate=1e-2, **kwargs), rtol=0)


@pytest.mark.parametrize("kwargs", [{}, {"eps": 1e-3}])
def test_adagrad_matches_mlx(twin_run, kwargs):
    twin_run(lambda o: o.Adagrad(learning_rate=1e-1, **kwargs), rtol=0)


@pytest.mark.parametrize("kwargs", [{}, {"rho": 0.5, "eps": 1e-4}])
def test_adadelta_matches_mlx(twin_run, kwargs):
    twin_run(lambda o: o.AdaDelta(learning_rate=1.0, **kwargs), rtol=0)


def test_adadelta_keeps_two_running_averages(twin_run):
    ours, _, _, _ = twin_run(lambda o: o.AdaDelta(learning_rate=1.0), steps=2)
    assert list(ours.state["layers"][1]["w"]) == ["v", "u"]


@pytest.mark.parametrize("make", [
    lambda o: o.RMSprop(0.1, alpha=-0.5),
    lambda o: o.RMSprop(0.1, eps=0.0),
    lambda o: o.Adagrad(0.1, eps=-1e-8),
    lambda o: o.AdaDelta(0.1, rho=-0.1),
    lambda o: o.AdaDelta(0.1, eps=0.0),
])
def test_bad_hyperparameters_raise_as_mlx(same_error, make):
    same_error(make)
