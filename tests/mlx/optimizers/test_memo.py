"""A built-in optimizer's update, recorded lazily, is taken from the memo of the step it
repeats (mlx/optimizers/_memo.py): the same arrays as running it, a schedule's new value
read each step, and a user's own update always run."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.optimizers as optim
from ember.graph import memo
from ember.mlx.core import _lazy


@pytest.fixture(autouse=True)
def _lazy_on():
    was, _lazy.enabled[0] = _lazy.enabled[0], True  # (the suite also runs with it off)
    yield
    _lazy.evaluate("test end")
    _lazy.enabled[0] = was


def _train(make, steps, lazy=True):
    rng = np.random.default_rng(0)
    params = {"w": mx.array(rng.standard_normal((6, 5)).astype(np.float32)),
              "b": [mx.zeros((5,)), mx.ones((3,))]}
    opt = make()
    _lazy.enabled[0] = lazy
    try:
        for i in range(steps):
            grads = {"w": mx.full((6, 5), 0.1 * (i + 1)), "b": [mx.full((5,), -0.2), mx.ones((3,))]}
            params = opt.apply_gradients(grads, params)
            mx.eval(params, opt.state)
    finally:
        _lazy.enabled[0] = True
    return [np.array(params["w"]), np.array(params["b"][0]), np.array(params["b"][1])]


MAKERS = {
    "AdamW": lambda: optim.AdamW(learning_rate=1e-2),
    "Adam with bias correction": lambda: optim.Adam(1e-2, bias_correction=True),
    "SGD momentum nesterov": lambda: optim.SGD(0.1, momentum=0.9, nesterov=True),
    "RMSprop": lambda: optim.RMSprop(1e-2),
    "Lion": lambda: optim.Lion(1e-3, weight_decay=0.1),
    "AdamW on a cosine schedule": lambda: optim.AdamW(optim.cosine_decay(1e-2, 10)),
}


@pytest.mark.parametrize("name", MAKERS)
def test_memoised_updates_give_the_eager_arrays(name, monkeypatch):
    replays = []
    real = memo._replay
    monkeypatch.setattr(memo, "_replay", lambda *a: replays.append(1) or real(*a))
    lazy = _train(MAKERS[name], 5)
    if name == "Adam with bias correction":
        # (its factors 1 - b ** step are computed at once from the integer step count:
        # values the memo cannot find again, so the update runs every step)
        assert not replays
    else:
        assert replays  # the later steps' updates came from the memo
    eager = _train(MAKERS[name], 5, lazy=False)
    for a, b in zip(lazy, eager):
        np.testing.assert_array_equal(a, b)


def test_a_users_own_update_runs_every_step():
    calls = []

    class Logged(optim.SGD):
        def apply_single(self, gradient, parameter, state):
            calls.append(1)
            return super().apply_single(gradient, parameter, state)

    _train(lambda: Logged(0.1), 4)
    assert len(calls) == 4 * 3


def test_a_changed_hyperparameter_is_read():
    opt = optim.AdamW(learning_rate=1e-2)
    p = {"w": mx.ones((4,))}
    g = {"w": mx.full((4,), 0.5)}
    outs = []
    for wd in (0.0, 0.0, 0.5, 0.5):
        opt.weight_decay = wd
        p = opt.apply_gradients(g, p)
        mx.eval(p, opt.state)
        outs.append(np.array(p["w"]))
    ref = optim.AdamW(learning_rate=1e-2)
    q = {"w": mx.ones((4,))}
    _lazy.enabled[0] = False
    try:
        for wd, out in zip((0.0, 0.0, 0.5, 0.5), outs):
            ref.weight_decay = wd
            q = ref.apply_gradients(g, q)
            np.testing.assert_array_equal(np.array(q["w"]), out)
    finally:
        _lazy.enabled[0] = True
