"""Every scheduler produces exactly PyTorch's learning rates, step by step."""

import math

import pytest
import torch

import ember


def _opt(lib, cls="SGD", **kw):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    opt_cls = getattr(lib.optim, cls)
    kw.setdefault("lr", 0.1)
    return opt_cls([{"params": [a]}, {"params": [b], "lr": 0.05}], **kw)


def _schedule(lib, make, steps=40, metric=None, opt_kw=None):
    opt = _opt(lib, **(opt_kw or {}))
    sched = make(lib.optim.lr_scheduler, opt)
    lrs = [sched.get_last_lr()]
    moms = []
    for i in range(steps):
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric(i))
        lrs.append(list(sched.get_last_lr()))
        moms.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return lrs, moms, sched


def _lin(s, o):
    return s.LinearLR(o, start_factor=0.2, total_iters=7)


MAKERS = {
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda e: 0.95**e),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda s, o: s.StepLR(o, step_size=7, gamma=0.3),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.5),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": _lin,
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=9, eta_min=1e-3),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=1e-4),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=41),
    "OneCycleLR-3phase-linear": lambda s, o: s.OneCycleLR(
        o, max_lr=0.8, total_steps=45, three_phase=True, anneal_strategy="linear"),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=3,
                                                    step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                  mode="exp_range", gamma=0.97),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=12, power=2.0),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5), s.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.95)]),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_learning_rates_equal_torch_exactly(name):
    opt_kw = {"momentum": 0.9} if name.startswith(("OneCycle", "Cyclic")) else None
    lr_e, mom_e, _ = _schedule(ember, MAKERS[name], opt_kw=opt_kw)
    lr_t, mom_t, _ = _schedule(torch, MAKERS[name], opt_kw=opt_kw)
    assert lr_e == lr_t
    assert mom_e == mom_t


def test_onecycle_cycles_adam_beta1_like_torch():
    def make(s, o):
        return s.OneCycleLR(o, max_lr=0.3, total_steps=20)

    e = _schedule(ember, make, steps=19, opt_kw={"cls": "Adam"})
    t = _schedule(torch, make, steps=19, opt_kw={"cls": "Adam"})
    assert e[0] == t[0] and e[1] == t[1]


def test_reduce_on_plateau_matches_torch():
    def metric(i):
        return 1.0 / (1 + i) if i < 10 else 0.1 + 0.001 * math.sin(i)

    def make(s, o):
        return s.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1, min_lr=[1e-3, 0])

    assert _schedule(ember, make, metric=metric)[0] == _schedule(torch, make, metric=metric)[0]


def test_state_dict_round_trip_continues_identically():
    def make(s, o):
        return s.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2)

    full, _, _ = _schedule(ember, make, steps=20)
    opt = _opt(ember)
    sched = make(ember.optim.lr_scheduler, opt)
    for _ in range(8):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd
    opt2 = _opt(ember)
    opt2.load_state_dict(opt.state_dict())
    sched2 = make(ember.optim.lr_scheduler, opt2)
    sched2.load_state_dict(sd)
    rest = []
    for _ in range(12):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    assert rest == full[9:]


def test_invalid_arguments_raise_like_torch():
    for lib in (ember, torch):
        o = _opt(lib)
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.ConstantLR(o, factor=2.0)
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0)
        with pytest.raises(TypeError):
            lib.optim.lr_scheduler.StepLR(object(), step_size=1)


@pytest.mark.parametrize("name", [n for n in MAKERS if n not in ("SequentialLR",
                                                                  "ChainedScheduler")])
def test_state_dict_keys_and_get_lr_outside_step_warn_like_torch(name):
    import warnings

    def seen(lib):
        opt = _opt(lib, momentum=0.9)
        sched = MAKERS[name](lib.optim.lr_scheduler, opt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opt.step()
            sched.step()  # (get_lr inside step: no warning)
            quiet = len(caught)
            sched.get_lr()  # outside step: "use get_last_lr()"
        messages = [str(w.message) for w in caught[quiet:] if w.category is UserWarning]
        return quiet, messages, list(sched.state_dict())

    assert seen(ember) == seen(torch)


def test_user_get_lr_is_silent_but_an_inherited_one_warns_like_torch():
    import warnings

    def seen(lib):
        S = lib.optim.lr_scheduler

        class Warmup(S.LRScheduler):
            def get_lr(self):
                return [b * (self.last_epoch + 1) / 4 for b in self.base_lrs]

        class MyStep(S.StepLR):  # keeps StepLR's get_lr
            pass

        out = []
        for make in (lambda o: Warmup(o), lambda o: MyStep(o, step_size=2)):
            opt = _opt(lib)
            sched = make(opt)
            opt.step()
            sched.step()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                rates = sched.get_lr()
            out.append((rates, [str(w.message) for w in caught]))
        return out

    assert seen(ember) == seen(torch)


def test_optimizer_prints_its_groups_like_torch():
    assert repr(_opt(ember, momentum=0.9)) == repr(_opt(torch, momentum=0.9))
    assert repr(_opt(ember, "Adam")) == repr(_opt(torch, "Adam"))
