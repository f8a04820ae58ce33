"""Schedules against MLX's: values (and dtypes) at many steps, inside an optimizer,
and their errors."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.optimizers as optim

mlx_core = pytest.importorskip("mlx.core")
mlx_opt = pytest.importorskip("mlx.optimizers")

SCHEDULES = {
    "exponential": lambda o: o.exponential_decay(0.1, 0.97),
    "step": lambda o: o.step_decay(0.1, 0.5, 7),
    "cosine": lambda o: o.cosine_decay(0.1, 50),
    "cosine_to_end": lambda o: o.cosine_decay(1e-3, 30, end=1e-5),
    "linear": lambda o: o.linear_schedule(0.0, 0.1, 40),
    "linear_down": lambda o: o.linear_schedule(1.0, 0.25, 13),
    "warmup_cosine": lambda o: o.join_schedules(
        [o.linear_schedule(0.0, 0.1, 10), o.cosine_decay(0.1, 60)], [10]),
    "three_pieces": lambda o: o.join_schedules(
        [o.linear_schedule(1e-4, 1e-2, 5), o.exponential_decay(1e-2, 0.9),
         o.step_decay(5e-3, 0.1, 4)], [5, 25]),
}
STEPS = list(range(0, 120, 1)) + [1000, 123456]


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_mlx_at_uint64_steps(name, assert_same_tree):
    ours, theirs = SCHEDULES[name](optim), SCHEDULES[name](mlx_opt)
    for step in STEPS:
        # NOTE: cos and pow are not correctly rounded on either side: 1 ulp apart at
        # some steps. In a cosine decay 1 + cos(x) cancels near the end, so that ulp
        # (of cos, ~6e-8) becomes up to init * 6e-8 absolute: atol 1e-8 for init <= 0.1
        assert_same_tree(ours(mx.array(step).astype(mx.uint64)),
                         theirs(mlx_core.array(step, mlx_core.uint64)), rtol=3e-7,
                         path=f"{name} at step {step}", atol=1e-8)


@pytest.mark.parametrize("name", ["cosine", "linear", "warmup_cosine"])
def test_schedule_of_a_python_int_step_is_an_array(name, assert_same_tree):
    ours, theirs = SCHEDULES[name](optim), SCHEDULES[name](mlx_opt)
    for step in (0, 5, 10, 75):
        assert_same_tree(ours(step), theirs(step), rtol=3e-7, atol=1e-8)  # as above


def test_exponential_decay_of_a_python_int_is_a_python_float():
    assert optim.exponential_decay(0.1, 0.9)(2) == mlx_opt.exponential_decay(0.1, 0.9)(2)


def test_cosine_decay_holds_end_after_decay_steps():
    schedule = optim.cosine_decay(1.0, 10, end=0.5)
    values = [schedule(mx.array(s).astype(mx.uint64)).item() for s in (10, 11, 500)]
    assert values == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("name", ["step", "warmup_cosine", "three_pieces"])
def test_scheduled_learning_rate_in_an_optimizer_matches_mlx(name, twin_run):
    # a learning rate 1 ulp apart (pow, cos) moves a parameter by ~1e-9: slack for
    # parameters that pass near zero
    ours, theirs, _, _ = twin_run(lambda o: o.SGD(learning_rate=SCHEDULES[name](o),
                                                   momentum=0.9), steps=30, atol=1e-8)
    # the state holds the value the schedule gave before the last step (step 29)
    assert ours.learning_rate.item() == pytest.approx(theirs.learning_rate.item(), rel=1e-6)
    assert ours.state["step"].item() == 30


def test_schedule_value_is_in_the_state_before_any_step():
    opt = optim.Adam(learning_rate=optim.linear_schedule(0.0, 0.1, 10))
    assert opt.learning_rate.item() == 0.0
    assert str(opt.learning_rate.dtype) == "mlx.core.float32"


@pytest.mark.parametrize("make", [
    lambda o: o.step_decay(0.1, 0.9, 0),
    lambda o: o.cosine_decay(0.1, 0),
    lambda o: o.linear_schedule(0.0, 1.0, -3),
    lambda o: o.join_schedules([], []),
    lambda o: o.join_schedules([o.cosine_decay(0.1, 5)], [3]),
])
def test_bad_arguments_raise_as_mlx(same_error, make):
    same_error(make)


def test_values_equal_the_formulas():
    # independent of MLX: the documented formulas in float64
    steps = np.arange(0, 60)
    cos = optim.cosine_decay(0.1, 50, end=0.01)
    expected = 0.01 + 0.5 * (1 + np.cos(np.pi * np.minimum(steps, 50) / 50)) * 0.09
    got = [cos(mx.array(int(s)).astype(mx.uint64)).item() for s in steps]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    lin = optim.linear_schedule(0.2, 0.0, 20)
    got = [lin(mx.array(int(s)).astype(mx.uint64)).item() for s in steps]
    np.testing.assert_allclose(got, 0.2 - 0.01 * np.minimum(steps, 20), rtol=1e-6, atol=1e-7)
