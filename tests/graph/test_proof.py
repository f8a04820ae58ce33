"""Default mode skips the Python of a call it proves free of Python effects (graph/proof.py):
a straight-line step of built-in pieces replays, and gives eager's numbers step for step;
anything the proof cannot see runs the Python on every call, and a changed name, module,
optimizer or tensor makes the next call trace again.

Run a second time with EMBER_KERNELS=numpy by the Makefile.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import ember
from ember import nn
from ember.graph import proof

SCALE = 1.0  # read by `_scaled_step` as a global


def _setup(opt_name: str = "SGD", **opt_args):
    """A small MLP, its optimizer, a batch and a loss, the same on every call."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = getattr(ember.optim, opt_name)(model.parameters(), lr=0.05, **opt_args)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 5))
    return model, opt, x, y, nn.CrossEntropyLoss()


def _step_of(model, opt, x, y, loss_fn):
    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def _run(compiled: bool, steps: int, opt_name: str = "SGD", **opt_args):
    model, opt, x, y, loss_fn = _setup(opt_name, **opt_args)
    step = _step_of(model, opt, x, y, loss_fn)
    fn = ember.compile(step) if compiled else step
    losses = [fn().numpy().copy() for _ in range(steps)]
    return fn, losses, [p.detach().numpy().copy() for p in model.parameters()], \
        [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("opt", [("SGD", {"momentum": 0.9}), ("Adam", {}),
                                 ("AdamW", {"weight_decay": 0.1})])
def test_a_training_step_replays_and_gives_eagers_trajectory(opt):
    name, args = opt
    fn, lc, pc, gc = _run(True, 50, name, **args)
    _, le, pe, ge = _run(False, 50, name, **args)
    assert fn.replayed > 40, fn.not_replayed
    # the replay runs the very program the traced calls ran: the same bits
    for got, want in zip(lc + pc + gc, le + pe + ge):
        np.testing.assert_array_equal(got, want)


def test_pure_false_runs_the_python_on_every_call():
    model, opt, x, y, loss_fn = _setup()
    fn = ember.compile(_step_of(model, opt, x, y, loss_fn), options={"pure": False})
    for _ in range(5):
        fn()
    assert fn.replayed == 0 and fn.call_memo_hits > 0


def test_a_side_effect_runs_the_python_every_call(capsys):
    model, opt, x, y, loss_fn = _setup()
    seen = []

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        print("step")
        seen.append(1)

    fn = ember.compile(step)
    for _ in range(6):
        fn()
    assert capsys.readouterr().out == "step\n" * 6 and len(seen) == 6
    assert fn.replayed == 0
    assert any("print" in why for why in fn.not_replayed)


def test_bytecode_the_proof_cannot_follow_is_refused():
    model, opt, x, y, loss_fn = _setup()
    box = {"lr": 0.1}

    def branches(flag):
        if flag:
            return model(x)
        return model(x) * 2

    def stores(flag):
        model.last = model(x)
        return model.last

    def subscripts(flag):
        return model(x) * box["lr"]

    def loops(flag):
        out = x
        for _ in range(2):
            out = out * 2
        return out

    for fn in (branches, stores, subscripts, loops):
        assert proof.scan(fn) is None, fn.__name__
    assert proof.scan(_step_of(model, opt, x, y, loss_fn)) is not None


def test_a_custom_module_runs_its_python_every_call():
    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 3)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.fc(x)

    model = Counting()
    x = ember.ones(2, 6)

    def f():
        return model(x).sum().detach()

    fn = ember.compile(f)
    for _ in range(5):
        fn()
    assert model.calls == 5 and fn.replayed == 0


def _scaled_step(model, x):
    return (model(x) * SCALE).sum().detach()


def test_a_changed_global_number_is_seen():
    global SCALE
    model = nn.Linear(6, 3)
    x = ember.ones(2, 6)
    fn = ember.compile(_scaled_step)
    for _ in range(4):
        got = fn(model, x)
    assert fn.replayed > 0
    try:
        SCALE = 3.0
        got = fn(model, x)
        np.testing.assert_allclose(got.numpy(), _scaled_step(model, x).numpy(), rtol=1e-6)
    finally:
        SCALE = 1.0


def test_rebinding_a_captured_tensor_is_seen():
    model = nn.Linear(6, 3)
    x = ember.ones(2, 6)

    def f():
        return model(x).sum().detach()

    fn = ember.compile(f)
    for _ in range(4):
        fn()
    assert fn.replayed > 0
    x = ember.full((2, 6), 2.0)
    np.testing.assert_allclose(fn().numpy(), f().numpy(), rtol=1e-6)
    x = ember.full((3, 6), 2.0)  # (a new shape too)
    np.testing.assert_allclose(fn().numpy(), f().numpy(), rtol=1e-6)


def test_changes_to_the_model_and_optimizer_are_seen():
    """A new parameter, a frozen layer, a hook, a new learning rate and a step hook, each
    made after the replays began, act on the next call as in eager mode."""
    def run(compiled: bool):
        model, opt, x, y, loss_fn = _setup("SGD", momentum=0.5)
        step = _step_of(model, opt, x, y, loss_fn)
        fn = ember.compile(step) if compiled else step
        log = []
        for i in range(16):
            if i == 4:
                with ember.no_grad():
                    model[0].bias = nn.Parameter(ember.ones(8))
                opt.param_groups[0]["params"][1] = model[0].bias
                opt.state.pop(model[0].bias, None)
            if i == 6:
                model[2].weight.requires_grad_(False)
            if i == 8:
                model[0].weight.register_hook(lambda g, i=i: log.append(i) or g * 0.5)
            if i == 10:
                opt.param_groups[0]["lr"] = 0.01
            if i == 12:
                opt.register_step_post_hook(lambda o, a, k, i=i: log.append(-i))
            fn()
        return fn, [p.detach().numpy().copy() for p in model.parameters()], log

    fn, pc, lc = run(True)
    _, pe, le = run(False)
    assert fn.replayed > 0
    assert len(lc) == len(le) == 12
    for got, want in zip(pc, pe):
        np.testing.assert_array_equal(got, want)


def test_zero_grad_after_the_step_leaves_no_grad():
    model, opt, x, y, loss_fn = _setup("Adam")

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    fn = ember.compile(step)
    for _ in range(6):
        fn()
    assert fn.replayed > 0
    assert all(p.grad is None for p in model.parameters())


def test_no_replay_under_another_profiler():
    model, opt, x, y, loss_fn = _setup()
    fn = ember.compile(_step_of(model, opt, x, y, loss_fn))
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(event))
    try:
        for _ in range(5):
            fn()
    finally:
        sys.setprofile(None)
    assert fn.replayed == 0 and calls


def test_new_batches_as_arguments_replay():
    """The loader's pattern: a new tensor each call, decided by the call's signature."""
    def run(compiled: bool):
        model, opt, x, y, loss_fn = _setup("Adam")

        def step(xb, yb):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            return loss.detach()

        fn = ember.compile(step) if compiled else step
        rng = np.random.default_rng(1)
        losses = [fn(ember.tensor(rng.standard_normal((5, 6)).astype(np.float32)),
                     ember.tensor(rng.integers(0, 3, 5))).item() for _ in range(12)]
        return fn, losses

    fn, got = run(True)
    _, want = run(False)
    assert got == want and fn.replayed >= 8


def test_a_name_that_changes_every_call_stops_the_proving():
    model = nn.Linear(6, 3)
    x = ember.ones(2, 6)
    calls = []

    def f():
        return (model(x) * SCALE).sum().detach()

    fn = ember.compile(f)
    audits = []
    real = proof.Audit

    class Counted(real):
        def __init__(self, code):
            super().__init__(code)
            audits.append(self)

    global SCALE
    want = []
    try:
        proof.Audit = Counted
        for i in range(40):
            SCALE = float(i)
            calls.append(fn().item())
            want.append(f().item())
    finally:
        proof.Audit = real
        SCALE = 1.0
    assert calls == want
    assert len(audits) <= proof.MAX_MISSES + 1 and fn.proven is None
    assert any("differ" in why for why in fn.not_replayed)


def test_torch_logs_guards_prints_what_a_replay_checks(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_LOGS", "guards")
    model, opt, x, y, loss_fn = _setup("Adam")
    fn = ember.compile(_step_of(model, opt, x, y, loss_fn))
    for _ in range(4):
        fn()
    err = capsys.readouterr().err
    assert "now replay without their Python" in err and "optimizer Adam" in err
    assert fn.replayed >= 1


# -- the user's own modules: their forwards are read too ---------------------------------

class Net(nn.Module):
    """The most common model of all: the user's class with a straight-line forward."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)
        self.scale = 1.0

    def forward(self, x):
        x = nn.functional.relu(self.fc1(x))  # (an argument stored over)
        return self.fc2(x) * self.scale


class Outer(nn.Module):
    """A user module inside a user module, one read through an alias of `self.inner`."""

    def __init__(self):
        super().__init__()
        self.inner = Net()
        self.norm = nn.LayerNorm(3)

    def forward(self, x):
        inner = self.inner
        return self.norm(inner(x)) + inner.scale


def _user_run(model_cls, compiled: bool, steps: int = 30, change=None):
    ember.manual_seed(0)
    model = model_cls()
    opt = ember.optim.Adam(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 5))
    step = _step_of(model, opt, x, y, nn.CrossEntropyLoss())
    fn = ember.compile(step) if compiled else step
    losses = []
    for i in range(steps):
        if change is not None:
            change(i, model)
        losses.append(fn().numpy().copy())
    return fn, losses + [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("model_cls", [Net, Outer])
def test_a_step_of_the_users_modules_replays_and_gives_eagers_trajectory(model_cls):
    fn, got = _user_run(model_cls, True)
    _, want = _user_run(model_cls, False)
    assert fn.replayed > 20, fn.not_replayed
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def _changes(i, model):
    """After replays began (and began again after each): a number forward reads, eval, a
    hook on the module itself with an attribute set beside it, a submodule replaced, a
    hook on a child."""
    net = model.inner if isinstance(model, Outer) else model
    if i == 6:
        net.scale = 0.5
    if i == 9:
        model.eval()
    if i == 13:
        net.register_forward_hook(lambda m, a, out: out * 2)
        model.seen = i
    if i == 16:
        ember.manual_seed(1)
        net.fc2 = nn.Linear(8, 3)
    if i == 18:
        net.fc1.register_forward_hook(lambda m, a, out: out + 1)


@pytest.mark.parametrize("model_cls", [Net, Outer])
def test_changes_to_the_users_modules_are_seen(model_cls):
    fn, got = _user_run(model_cls, True, 24, _changes)
    _, want = _user_run(model_cls, False, 24, _changes)
    assert fn.replayed > 0
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_forward_the_proof_cannot_follow_runs_its_python_every_call():
    class Branching(Net):
        def forward(self, x):
            if x.shape[0] > 2:
                x = self.fc1(x)
            return self.fc2(nn.functional.relu(x))

    class Measuring(Net):
        def forward(self, x):
            return self.fc2(self.fc1(x)) * len(x)

    for cls, why in ((Branching, "cannot follow"), (Measuring, "len")):
        fn, got = _user_run(cls, True, 8)
        _, want = _user_run(cls, False, 8)
        assert fn.replayed == 0 and any(why in w for w in fn.not_replayed), fn.not_replayed
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_scan_follows_aliases_and_arguments_stored_over():
    model = Net()

    def aliased(x):
        m = model.fc1
        x = m(x)
        return x * model.scale

    _, chains, n_args = proof.scan(aliased)
    assert ("cell", "model", ("fc1",)) in chains  # (`m`, where it is loaded)
    assert ("cell", "model", ("scale",)) in chains
    assert ("arg", 0, ()) in chains and n_args == 1


class SmallCNN(nn.Module):
    """MNIST-style: convolutions, a batch norm (its running statistics and count are
    written every training step), max and adaptive pooling, `flatten`."""

    def __init__(self, momentum=0.1):
        super().__init__()
        self.conv1, self.bn = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4, momentum=momentum)
        self.conv2, self.pool = nn.Conv2d(4, 6, 3), nn.MaxPool2d(2)
        self.head, self.fc = nn.AdaptiveAvgPool2d(2), nn.Linear(24, 3)

    def forward(self, x):
        x = self.pool(nn.functional.relu(self.bn(self.conv1(x))))
        x = self.head(nn.functional.relu(self.conv2(x)))
        return self.fc(ember.flatten(x, 1))


def _cnn_run(compiled: bool, momentum=0.1, steps: int = 16):
    ember.manual_seed(0)
    model = SmallCNN(momentum)
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((4, 1, 10, 10)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 4))
    step = _step_of(model, opt, x, y, nn.CrossEntropyLoss())
    fn = ember.compile(step) if compiled else step
    losses = []
    for i in range(steps):
        if i == 10:
            model.eval()
        losses.append(fn().numpy().copy())
    return fn, losses + [t.detach().numpy().copy() for t in model.state_dict().values()]


@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
def test_a_cnn_step_replays_with_its_batch_norm_statistics_as_eager(momentum):
    fn, got = _cnn_run(True, momentum)
    _, want = _cnn_run(False, momentum)
    for g, w in zip(got, want):  # (the parameters, running statistics and counts too)
        np.testing.assert_array_equal(g, w)
    if momentum is None:  # (the count read as a number: a graph break, Python each call)
        assert fn.replayed == 0
    else:
        assert fn.replayed > 8, fn.not_replayed
