"""Weight averaging (AveragedModel, SWALR, update_bn) gives PyTorch's numbers."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, assert_ulp, copy_module_state, to_ember

# NOTE: PyTorch's float32 lerp_ is one fused multiply-add; ember's rounds the product and
# the sum (src/ember/ops/_rounding.py), so the routes through lerp_ differ in the last bit.
LERP = "lerp_ is a fused multiply-add in PyTorch, two roundings in ember"
LERP_ROUTES = {"ema", "swa_multi", "ema_buffers"}


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2))


def _set_params(model_e, model_t, step):
    """Give both models the same fresh parameter and buffer values (step-dependent)."""
    rng = np.random.default_rng(step)
    with torch.no_grad():
        for pt in list(model_t.parameters()) + list(model_t.buffers()):
            if pt.is_floating_point():
                pt.copy_(torch.from_numpy(rng.standard_normal(pt.shape).astype(np.float32)))
            else:
                pt.fill_(step)
    copy_module_state(model_e, model_t)


def _averaged(lib, model, kind):
    swa = lib.optim.swa_utils
    return {
        "swa": lambda: swa.AveragedModel(model),
        "ema": lambda: swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
        "ema_avg_fn": lambda: swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn(0.95)),
        "swa_multi": lambda: swa.AveragedModel(model, multi_avg_fn=swa.get_swa_multi_avg_fn()),
        "swa_avg_fn": lambda: swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn()),
        "ema_buffers": lambda: swa.AveragedModel(
            model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.99), use_buffers=True),
    }[kind]()


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_avg_fn", "swa_multi", "swa_avg_fn",
                                  "ema_buffers"])
def test_averages_equal_torchs_bit_for_bit_over_twenty_updates(kind):
    model_e, model_t = _net(ember), _net(torch)
    avg_e, avg_t = _averaged(ember, model_e, kind), _averaged(torch, model_t, kind)
    assert list(avg_e.state_dict()) == list(avg_t.state_dict())
    for step in range(20):
        _set_params(model_e, model_t, step)
        avg_e.update_parameters(model_e)
        avg_t.update_parameters(model_t)
        for e, t in zip(avg_e.state_dict().values(), avg_t.state_dict().values()):
            if kind in LERP_ROUTES and e.is_floating_point():
                # (an EMA forgets old rounding errors: they do not pile up over the steps)
                assert_ulp(e, t, 2, LERP, scale=1.0)
            else:
                assert_same(e, t, rtol=0, atol=0)
    assert avg_e.n_averaged.item() == 20 and avg_e.n_averaged.dtype is ember.int64


def test_buffers_are_copied_not_averaged_by_default():
    model_e, model_t = _net(ember), _net(torch)
    avg_e = ember.optim.swa_utils.AveragedModel(model_e)
    for step in (3, 5):
        _set_params(model_e, model_t, step)
        avg_e.update_parameters(model_e)
    assert_same(avg_e.module[1].running_mean, model_t[1].running_mean, rtol=0, atol=0)
    assert avg_e.module[1].num_batches_tracked.item() == 5


def test_state_dict_keys_and_forward_delegate_to_the_copy():
    model_e, model_t = _net(ember), _net(torch)
    avg_e = ember.optim.swa_utils.AveragedModel(model_e)
    avg_t = torch.optim.swa_utils.AveragedModel(model_t)
    assert list(avg_e.state_dict()) == list(avg_t.state_dict())
    assert list(avg_e.state_dict())[0] == "n_averaged"
    assert avg_e.module is not model_e
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    copy_module_state(avg_e, avg_t)
    avg_e.eval()
    avg_t.eval()
    assert_same(avg_e(ember.tensor(x)), avg_t(torch.tensor(x)))


def test_errors_match():
    m = ember.nn.Linear(2, 2)
    swa = ember.optim.swa_utils
    with pytest.raises(AssertionError):
        swa.AveragedModel(m, avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match=r"Invalid decay value 1.5"):
        swa.get_ema_multi_avg_fn(1.5)
    with pytest.raises(ValueError, match=r"Invalid decay value -0.1"):
        swa.get_ema_avg_fn(-0.1)


def test_ema_during_training_tracks_torch():
    """A real loop: SGD steps then an EMA update, 20 times. The models train through
    matmuls (whose float32 sums may round differently), hence the tolerance."""
    out, t_model, e_model = {}, _net(torch), _net(ember)
    copy_module_state(e_model, t_model)
    for lib, model in ((ember, e_model), (torch, t_model)):
        ema = lib.optim.swa_utils.AveragedModel(
            model, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(0)
        for _ in range(20):
            x = lib.tensor(rng.standard_normal((8, 4)).astype(np.float32))
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            ema.update_parameters(model)
        out[lib] = ema
    for e, t in zip(out[ember].state_dict().values(), out[torch].state_dict().values()):
        assert_same(e, t, rtol=1e-5, atol=1e-6)


# --- SWALR ---------------------------------------------------------------------------------

def _opt(lib):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1)


@pytest.mark.parametrize("kw", [
    dict(swa_lr=0.01), dict(swa_lr=[0.02, 0.3], anneal_epochs=4, anneal_strategy="linear"),
    dict(swa_lr=0.5, anneal_epochs=0), dict(swa_lr=0.01, anneal_epochs=1),
    dict(swa_lr=0.003, anneal_epochs=7, anneal_strategy="cos"),
])
def test_swalr_rates_equal_torchs_exactly(kw):
    lrs = {}
    for lib in (ember, torch):
        opt = _opt(lib)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        seen = [sched.get_last_lr()]
        for _ in range(15):
            opt.step()
            sched.step()
            seen.append(list(sched.get_last_lr()))
        lrs[lib] = seen
        assert [g["swa_lr"] for g in opt.param_groups] == \
            [g["swa_lr"] for g in _swa_groups(torch, kw)]
    assert lrs[ember] == lrs[torch]


def _swa_groups(lib, kw):
    opt = _opt(lib)
    lib.optim.swa_utils.SWALR(opt, **kw)
    return opt.param_groups


def test_swalr_after_a_cosine_schedule_and_its_state_dict():
    lrs, states = {}, {}
    for lib in (ember, torch):
        opt = _opt(lib)
        cos = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa = lib.optim.swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=3)
        seen = []
        for epoch in range(12):
            opt.step()
            (cos if epoch < 5 else swa).step()
            seen.append([g["lr"] for g in opt.param_groups])
        lrs[lib] = seen
        states[lib] = swa.state_dict()
    assert lrs[ember] == lrs[torch]
    assert sorted(states[ember]) == sorted(states[torch])
    assert "anneal_func" not in states[ember]
    opt = _opt(ember)
    again = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="linear")
    again.load_state_dict(states[ember])
    assert again.anneal_func is again._cosine_anneal


def test_swalr_errors():
    opt = _opt(ember)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        ember.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        ember.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        ember.optim.swa_utils.SWALR(opt, [0.1, 0.2, 0.3])


# --- update_bn -----------------------------------------------------------------------------

def test_update_bn_recomputes_running_statistics_as_torch():
    model_e, model_t = _net(ember), _net(torch)
    copy_module_state(model_e, model_t)
    model_e.eval()
    model_t.eval()
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((6, 4)).astype(np.float32) for _ in range(4)]
    ember.optim.swa_utils.update_bn([(to_ember(torch.tensor(b)), 0) for b in batches], model_e)
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], model_t)
    assert not model_e.training
    assert model_e[1].momentum == 0.1
    for e, t in zip(model_e.state_dict().values(), model_t.state_dict().values()):
        assert_same(e, t, rtol=1e-6, atol=1e-7)
    assert model_e[1].num_batches_tracked.item() == 4


def test_update_bn_without_batch_norm_leaves_the_model_alone():
    model = ember.nn.Linear(2, 2).eval()
    ember.optim.swa_utils.update_bn([ember.ones(1, 2)], model)
    assert not model.training
