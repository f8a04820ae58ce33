"""GradScaler against torch.amp.GradScaler: the scale tensor's dtype and float32 arithmetic,
the per-optimizer stages and their errors, state_dict round trips, the disabled scaler."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch

import ember


def _loop(m, steps, inf_at=(), **kw):
    """A few scaled SGD steps on a tiny linear model; what a user would record each step."""
    m.manual_seed(0)
    model = m.nn.Linear(3, 1)
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    scaler = m.amp.GradScaler("cpu", **kw)
    x, y = m.randn(8, 3), m.randn(8, 1)
    seen, values = [], []
    for i in range(steps):
        opt.zero_grad()
        with m.autocast("cpu", dtype=m.bfloat16):
            loss = m.nn.functional.mse_loss(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        if i in inf_at:
            model.bias.grad.fill_(float("inf") if i % 2 else float("nan"))
        ret = scaler.step(opt)
        scaler.update()
        seen.append((str(scaled.dtype).split(".")[1], ret, scaler.get_scale(),
                     scaler.state_dict()["_growth_tracker"]))
        values.append(scaled.item())
    return seen, values + model.weight.detach().flatten().tolist() + model.bias.tolist()


@pytest.mark.parametrize("kw", [
    {"init_scale": 1024.0, "growth_interval": 2},
    # growth and backoff that float32 cannot hold exactly: the scale is a float32 tensor,
    # each update's product taken in float64 and rounded once
    {"init_scale": 3.0, "growth_factor": 1.1, "backoff_factor": 0.3, "growth_interval": 1},
])
def test_training_loop_matches_torch(kw):
    seen, values = _loop(ember, 6, inf_at=(2, 3), **kw)
    want_seen, want_values = _loop(torch, 6, inf_at=(2, 3), **kw)
    assert seen == want_seen  # exact: skips, the float32 scale and the tracker
    # the loss is a float32 mean of bfloat16 products, summed in another order than torch's
    assert values == pytest.approx(want_values, rel=1e-6)


def _stages(m):
    model = m.nn.Linear(2, 1)
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    scaler = m.amp.GradScaler("cpu")
    out = []

    def attempt(fn):
        try:
            fn()
            out.append("ok")
        except (RuntimeError, AssertionError, ValueError) as e:
            out.append((type(e).__name__, str(e)))

    attempt(lambda: scaler.unscale_(opt))  # before any scale()
    attempt(scaler.update)
    scaler.scale(model(m.ones(1, 2)).sum()).backward()
    attempt(lambda: scaler.step(opt, closure=lambda: 0))
    attempt(lambda: scaler.unscale_(opt))
    attempt(lambda: scaler.unscale_(opt))
    attempt(lambda: scaler.step(opt))
    attempt(lambda: scaler.step(opt))
    attempt(lambda: scaler.unscale_(opt))
    attempt(lambda: pickle.dumps(scaler))
    attempt(scaler.update)
    attempt(lambda: scaler.update(m.tensor([2.0, 3.0])))
    attempt(lambda: scaler.update(m.tensor(2.0, requires_grad=True)))
    attempt(lambda: m.amp.GradScaler("cpu", growth_factor=1.0))
    attempt(lambda: m.amp.GradScaler("cpu", backoff_factor=1.0))
    attempt(lambda: m.amp.GradScaler("cpu").scale("loss"))
    half = m.nn.Linear(2, 1).to(m.float16)
    hopt = m.optim.SGD(half.parameters(), lr=0.1)
    hs = m.amp.GradScaler("cpu")
    hs.scale(half(m.ones(1, 2, dtype=m.float16)).sum()).backward()
    attempt(lambda: hs.unscale_(hopt))
    return out


def test_stage_errors_match_torch():
    assert _stages(ember) == _stages(torch)


def _state(m):
    s = m.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    before = (s.get_scale(), s.state_dict())
    scaled = s.scale([m.tensor(1.5), (m.tensor(2.0, dtype=m.bfloat16),)])
    fresh = m.amp.GradScaler("cpu")
    fresh.load_state_dict({**s.state_dict(), "scale": 32.0, "_growth_tracker": 2})
    lazy = fresh.state_dict()
    fresh.scale(m.tensor(1.0))
    fresh.set_growth_factor(4.0)
    fresh.set_backoff_factor(0.25)
    fresh.set_growth_interval(5)
    clone = pickle.loads(pickle.dumps(fresh))
    off = m.amp.GradScaler("cpu", enabled=False)
    t = m.tensor(3.0)
    return (before, [scaled[0].item(), str(scaled[1][0].dtype)[-7:], scaled[1][0].item()], lazy,
            fresh.state_dict(), clone.state_dict(), copy.deepcopy(fresh).get_scale(),
            (off.is_enabled(), off.get_scale(), off.scale(t) is t, off.state_dict(),
             off.load_state_dict({}), off.unscale_(None), off.update()))


def test_state_and_disabled_scaler_match_torch():
    assert _state(ember) == _state(torch)


def test_scaled_low_precision_loss_is_float32():
    # the scale is a 0-d float32 tensor, so a bfloat16 loss times it promotes to float32
    s = ember.amp.GradScaler("cpu", init_scale=3.0)
    out = s.scale(ember.tensor(1.5, dtype=ember.bfloat16))
    assert out.dtype is ember.float32 and out.item() == 4.5
