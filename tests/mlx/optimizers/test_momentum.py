"""SGD (every option) and Lion against MLX's, step by step."""

import pytest


@pytest.mark.parametrize("kwargs", [
    {},
    {"weight_decay": 0.01},
    {"momentum": 0.9},
    {"momentum": 0.9, "dampening": 0.1},
    {"momentum": 0.9, "nesterov": True, "weight_decay": 0.05},
])
def test_sgd_matches_mlx(twin_run, kwargs):
    # only multiplies and adds, each correctly rounded: the runs agree to the bit
    twin_run(lambda o: o.SGD(learning_rate=0.1, **kwargs), rtol=0)


def test_sgd_without_momentum_still_keeps_a_v_entry(twin_run):
    # MLX makes the (unused) momentum buffer anyway: the state layouts must agree
    ours, _, _, _ = twin_run(lambda o: o.SGD(learning_rate=0.1), steps=1)
    assert sorted(ours.state["w"]) == ["v"]
    assert ours.state["w"]["v"].tolist() == [[0.0] * 5] * 4


@pytest.mark.parametrize("kwargs", [{}, {"betas": [0.5, 0.8], "weight_decay": 0.1}])
def test_lion_matches_mlx(twin_run, kwargs):
    twin_run(lambda o: o.Lion(learning_rate=0.01, **kwargs), rtol=0)


@pytest.mark.parametrize("make", [
    lambda o: o.SGD(0.1, nesterov=True),
    lambda o: o.SGD(0.1, momentum=0.9, dampening=0.1, nesterov=True),
    lambda o: o.Lion(0.1, betas=[0.9, 1.0]),
    lambda o: o.Lion(0.1, betas=[-0.1, 0.9]),
])
def test_bad_hyperparameters_raise_as_mlx(same_error, make):
    same_error(make)
