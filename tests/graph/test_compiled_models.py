"""ember.compile on whole models against eager ember, same initial weights and data: an MLP,
a CNN (conv2d, BatchNorm2d, max pooling, dropout) in train and in eval mode, an LSTM, a GPT
block (LayerNorm, causal softmax attention, GELU MLP) and the digits MLP on scikit-learn's
bundled digits.

Checked for each: the forward output, the input and parameter gradients after backward
(through the compiled backward the engine hook records), and 50-step training trajectories
(loss per step, final parameters) with SGD (momentum), Adam and AdamW, three ways: the
module compiled (loss, backward and step eager), the whole step compiled, and the whole
step in pure mode. Then the other ways autograd is driven (double backward, retain_graph,
autograd.grad), a step with accumulation, clipping and a scheduler, epochs through a
DataLoader with a ragged last batch, and pure mode replaying BatchNorm's statistics.

Bit for bit wherever the compiled programs do eager's operations in eager's order: a
captured graph calls eager's kernels on eager's operands in
eager's order (matmuls, convolutions, reductions, softmax, LSTM cells), and a fused
pointwise loop does each member's operation in the member kernel's precision and order,
compiled with -ffp-contract=off (no fused multiply-add). The exception is a fused
transcendental: exp, log, tanh, sigmoid, expm1 and log1p in a C loop call ember_math.h's
versions, which may land a few ulps from the NumPy kernel's (`deflower(..., ulps=)`), and
NumPy's own tanh and exp differ between CPUs. Of these models the MLP (its Tanh), the
LSTM (its gates' sigmoid and tanh) and the GPT block (its GELU's exp) fuse one; there
float32 results are asserted within 1e-5 of eager relative to each tensor's largest
magnitude (measured: under 1e-6 after 50 steps for the MLP; the LSTM happened to agree bit
for bit here, which is not relied on). The tests check that the compiled programs fuse a
transcendental in exactly those three models, so that every other one is held to bit for
bit (with EMBER_KERNELS=numpy nothing is fused, and all six are bit for bit).
(tests/graph/test_compiled.py has the whole-step trajectories of four of these models at
20 steps for the CNN and LSTM; here every model runs 50 steps in every mode.)

The Makefile runs tests/graph a second time with EMBER_KERNELS=numpy: there the same
programs run as generated Python over the NumPy kernels, and the same assertions hold.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from sklearn.datasets import load_digits

import ember
from ember import nn
from ember._core.primitive import lower_rules, lower_ulps
from ember.nn import functional as F


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4)
        self.conv2, self.bn2 = nn.Conv2d(4, 8, 3), nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(8 * 2 * 2, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)  # 4 x 5 x 5
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2, 1)  # 8 x 2 x 2
        return self.fc(self.drop(x.flatten(1)))


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(5, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, (h, _) = self.rnn(x)
        return self.head(out[:, -1] + h[0])


class GPTBlock(nn.Module):
    """Pre-norm block: causal self-attention written out (masked softmax), GELU MLP."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
        mask = ember.ones(t, t, dtype=ember.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class DigitsMLP(nn.Module):
    """examples/digits.py's MLP, narrower."""

    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10))

    def forward(self, x):
        return self.net(x)


class CNNWithoutDropout(CNN):
    """The CNN in train mode with no random draw: BatchNorm's running statistics are then
    the state a pure-mode replay must update."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Identity()


def _mlp():
    return nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 24), nn.ReLU(),
                         nn.Linear(24, 4))


def _cnn_eval():
    m = CNN()
    m.eval()
    return m


MODELS = {"mlp": _mlp, "cnn_train": CNN, "cnn_eval": _cnn_eval, "lstm": LSTMModel,
          "gpt_block": GPTBlock, "digits": DigitsMLP}


@functools.cache
def _digits():
    d = load_digits()
    x = (d.images[:96] / 16.0).astype(np.float32)[:, None]
    return x, d.target[:96].astype(np.int64)


def _data(kind):
    """(input, target) as NumPy arrays for `kind`."""
    rng = np.random.default_rng(11)
    if kind == "mlp":
        return rng.standard_normal((16, 10)).astype(np.float32), rng.integers(0, 4, 16)
    if kind.startswith("cnn") or kind == "batchnorm":
        return rng.standard_normal((6, 1, 10, 10)).astype(np.float32), rng.integers(0, 4, 6)
    if kind == "lstm":
        return rng.standard_normal((4, 6, 5)).astype(np.float32), rng.integers(0, 3, 4)
    if kind == "gpt_block":
        return (rng.standard_normal((2, 6, 16)).astype(np.float32),
                rng.standard_normal((2, 6, 16)).astype(np.float32))
    return _digits()


def _loss(kind, out, y):
    return F.mse_loss(out, y) if kind == "gpt_block" else F.cross_entropy(out, y)


def _model(kind):
    ember.manual_seed(0)
    return {**MODELS, "batchnorm": CNNWithoutDropout}[kind]()


# the C functions of fused members that may differ from their kernels by a few ulps
_APPROXIMATE = {lower_rules[m].split("(")[0] for m, ulps in lower_ulps.items() if ulps}


def _exact(fn) -> bool:
    """Whether every program of compiled function `fn` rounds as eager: none of its fused
    C loops calls an approximate transcendental."""
    sources = [getattr(p, "c_source", "") for p in fn.programs.values()]
    return not any(name + "(" in src for src in sources for name in _APPROXIMATE)


def _expected_exact(kind) -> bool:
    """The MLP's Tanh, the LSTM's gates and the GPT block's GELU are the fused
    transcendentals of these models (with native kernels)."""
    return kind not in ("mlp", "lstm", "gpt_block") or not ember.native.available()


def _assert_same(got, want, exact=True):
    """Bit for bit (NaNs in the same places); or, where not `exact`, within 1e-5 of eager
    relative to the tensor's largest magnitude."""
    got = [np.asarray(g) for g in got]
    want = [np.asarray(w) for w in want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            assert np.abs(g - w).max() <= 1e-5 * np.abs(w).max()


# --- forward and gradients -------------------------------------------------------------


def _forward_backward(kind, compiled, backend="inductor"):
    model = _model(kind)
    x0, y0 = _data(kind)
    x = ember.tensor(x0, requires_grad=True)
    run = ember.compile(model, backend=backend) if compiled else model
    ember.manual_seed(5)  # (dropout draws from here, in the same order both ways)
    out = run(x)
    _loss(kind, out, ember.tensor(y0)).backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    buffers = [b.numpy() for b in model.buffers()]
    return out.detach().numpy(), grads, buffers, run


@pytest.mark.parametrize("kind", list(MODELS))
def test_forward_and_gradients_are_eagers(kind):
    out_e, grads_e, bufs_e, _ = _forward_backward(kind, compiled=False)
    out_c, grads_c, bufs_c, run = _forward_backward(kind, compiled=True)
    fn = run._compiled_fn
    exact = _exact(fn)
    assert exact == _expected_exact(kind)
    _assert_same([out_c], [out_e], exact)
    _assert_same(grads_c, grads_e, exact)
    _assert_same(bufs_c, bufs_e, exact)  # BatchNorm's running statistics in train mode
    assert fn.breaks == []
    # one graph for the forward, one for the backward pass the engine hook captured
    assert len(fn.graphs) == 2


@pytest.mark.parametrize("kind", ["cnn_train", "gpt_block"])
def test_backend_eager_gives_the_same_numbers(kind):
    """backend="eager": the graph runs node by node, no fusion; still eager's numbers."""
    out_e, grads_e, _, _ = _forward_backward(kind, compiled=False)
    out_c, grads_c, _, run = _forward_backward(kind, compiled=True, backend="eager")
    _assert_same([out_c], [out_e])
    _assert_same(grads_c, grads_e)
    assert all(not hasattr(p, "c_source") for p in run._compiled_fn.programs.values())


def _backward_variant(model, run, x0, variant):
    """Input and parameter gradients by one of the ways autograd is driven."""
    model.zero_grad()
    x = ember.tensor(x0, requires_grad=True)
    out = run(x)
    if variant == "gradient penalty":
        (g,) = ember.autograd.grad(out.sum(), x, create_graph=True)
        ((g * g).sum() + out.pow(2).mean()).backward()
    elif variant == "retain_graph":
        out.sum().backward(retain_graph=True)
        (out * 2).sum().backward()
    elif variant == "gradient argument":
        out.backward(ember.ones_like(out) * 0.5)
    else:  # autograd.grad
        return [g.numpy() for g in ember.autograd.grad(out.sum(), [x, *model.parameters()])]
    return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("variant", ["gradient penalty", "retain_graph",
                                     "gradient argument", "autograd.grad"])
def test_other_backward_calls_through_a_compiled_forward(variant):
    model = nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 2))
    x0 = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    cm = ember.compile(model)
    for _ in range(2):  # (the second call reuses the programs)
        got = _backward_variant(model, cm, x0, variant)
        want = _backward_variant(model, model, x0, variant)
        # GELU and its backward fuse ember_math.h's exp: a few ulps
        _assert_same(got, want, _exact(cm._compiled_fn))
    assert cm._compiled_fn.breaks == []
    assert _exact(cm._compiled_fn) == (not ember.native.available())


def test_the_compiled_output_is_eagers_under_no_grad():
    model = _model("gpt_block")
    x = ember.tensor(_data("gpt_block")[0])
    cm = ember.compile(model)
    with ember.no_grad():
        want = model(x)
        got = cm(x)
    assert got.grad_fn is None and not got.requires_grad
    _assert_same([got.numpy()], [want.numpy()], _exact(cm._compiled_fn))


# --- training trajectories ------------------------------------------------------------

OPTIMIZERS = {
    "sgd": lambda p: ember.optim.SGD(p, lr=0.05, momentum=0.9),
    "adam": lambda p: ember.optim.Adam(p, lr=5e-3),
    "adamw": lambda p: ember.optim.AdamW(p, lr=5e-3, weight_decay=0.05),
}
STEPS = 50
MODES = ["module", "step", "pure"]


def _trajectory(kind, opt_name, mode):
    """Losses per step and final parameters and buffers of STEPS training steps.
    mode: "eager"; "module" (the model compiled, the rest eager); "step" (the whole step
    compiled); "pure" (the whole step compiled with options={"pure": True})."""
    model = _model(kind)
    opt = OPTIMIZERS[opt_name](model.parameters())
    x0, y0 = _data(kind)
    x, y = ember.tensor(x0), ember.tensor(y0)
    forward = ember.compile(model) if mode == "module" else model

    def step():
        opt.zero_grad()
        loss = _loss(kind, forward(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    run = step
    if mode == "step":
        run = ember.compile(step)
    elif mode == "pure":
        run = ember.compile(step, options={"pure": True})
    ember.manual_seed(1)
    losses = [run().item() for _ in range(STEPS)]
    state = [p.detach().numpy().copy() for p in model.parameters()]
    state += [b.numpy().copy() for b in model.buffers()]
    return losses, state, forward._compiled_fn if mode == "module" else run


@functools.cache
def _eager(kind, opt_name, kernels):
    losses, state, _ = _trajectory(kind, opt_name, "eager")
    return losses, state


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opt_name", list(OPTIMIZERS))
@pytest.mark.parametrize("kind", list(MODELS))
def test_training_trajectory_is_eagers(kind, opt_name, mode):
    want_losses, want_state = _eager(kind, opt_name, ember.native.mode())
    losses, state, fn = _trajectory(kind, opt_name, mode)
    exact = _exact(fn)
    assert exact == _expected_exact(kind)
    if exact:
        assert losses == want_losses  # (Python floats: equal means bit for bit)
    else:
        np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    _assert_same(state, want_state, exact)
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
    assert fn.breaks == []
    # the first step creates the optimizer's state: its graphs differ from the rest
    assert len(fn.graphs) <= 4
    if mode == "pure":
        # dropout draws new numbers each step: a random draw reads the generator's state,
        # so those steps are traced every time; every other model replays
        if kind == "cnn_train":
            assert fn.replayed == 0
        else:
            assert fn.replayed >= STEPS - 4


def _step_with_extras(compiled):
    """A digits training step with what real loops add: zero_grad(set_to_none=False),
    two backward passes accumulating into .grad, gradient clipping, an LR scheduler."""
    model = _model("digits")
    opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8)
    x0, y0 = _data("digits")
    x, y = ember.tensor(x0), ember.tensor(y0)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x[:48]), y[:48])
        loss.backward()
        F.cross_entropy(model(x[48:]), y[48:]).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        return loss.detach()

    run = ember.compile(step) if compiled else step
    losses = [run().item() for _ in range(20)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def test_a_step_with_accumulation_clipping_and_a_scheduler_is_eagers():
    le, pe, _ = _step_with_extras(compiled=False)
    lc, pc, run = _step_with_extras(compiled=True)
    assert lc == le
    _assert_same(pc, pe)
    # the learning rate is a runtime number: the scheduler's new values reuse the programs
    assert len(run.graphs) <= 4


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_pure_mode_replays_batchnorm_training(opt_name):
    """BatchNorm in train mode without dropout: pure mode replays the step (its running
    statistics and counter are written by the replayed program) with eager's numbers."""
    want_losses, want_state = _eager("batchnorm", opt_name, ember.native.mode())
    losses, state, fn = _trajectory("batchnorm", opt_name, "pure")
    assert losses == want_losses
    _assert_same(state, want_state)  # (parameters, running_mean/var, num_batches_tracked)
    assert fn.replayed >= STEPS - 4


def _digits_epochs(mode):
    """Three epochs over the digits subset with a shuffling DataLoader (batches of 40, 40
    and 16: the last batch's shape records its own graphs), the step compiled per mode."""
    from ember.utils.data import DataLoader, TensorDataset

    model = _model("digits")
    opt = ember.optim.Adam(model.parameters(), lr=5e-3)
    x0, y0 = _data("digits")
    loader = DataLoader(TensorDataset(ember.tensor(x0), ember.tensor(y0)), batch_size=40,
                        shuffle=True)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    run = {"eager": step, "step": ember.compile(step),
           "pure": ember.compile(step, options={"pure": True})}[mode]
    ember.manual_seed(3)
    losses = [run(x, y).item() for _ in range(3) for x, y in loader]
    return losses, [p.detach().numpy() for p in model.parameters()], run


@pytest.mark.parametrize("mode", ["step", "pure"])
def test_digits_epochs_with_a_ragged_last_batch_are_eagers(mode):
    want_losses, want_params, _ = _digits_epochs("eager")
    losses, params, run = _digits_epochs(mode)
    assert losses == want_losses and len(losses) == 9
    _assert_same(params, want_params)
    assert run.breaks == [] and len(run.graphs) <= 4  # (one program per batch shape here)
    if mode == "pure":
        # new batches are new tensors, not the recorded ones: calls are keyed on their
        # arguments' shapes, so the batches of 40 replay and the batch of 16 too
        assert run.replayed >= 3


def test_pure_mode_follows_an_lr_scheduler():
    """A scheduler changes the learning rate outside the step: a replay made before the
    change is stale (the optimizers a trace stepped are watched), so the call is traced
    again and its trajectory stays eager's."""
    def losses(pure):
        model = _model("mlp")
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        sched = ember.optim.lr_scheduler.StepLR(opt, 3, 0.1)
        x0, y0 = _data("mlp")
        x, y = ember.tensor(x0), ember.tensor(y0)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        run = ember.compile(step, options={"pure": True}) if pure else step
        out = []
        for _ in range(8):
            out.append(run().item())
            sched.step()
        if pure:  # replays between the changes (lr 0.1 at steps 0-2, 0.01 at 3-5, ...)
            assert run.replayed >= 2
        return out

    np.testing.assert_allclose(losses(True), losses(False), rtol=1e-5)


def test_pure_mode_follows_train_and_eval():
    """A pure-compiled forward of a BatchNorm model, called in train mode until it replays,
    then after eval(): the replay of the train-mode graph is stale (it would update the
    running statistics and normalise by the batch's), so the eval call is traced and gives
    eager's eval output, running statistics untouched; back in train mode it replays again."""
    x0, _ = _data("batchnorm")
    x = ember.tensor(x0)

    def outputs(pure):
        model = _model("batchnorm")
        forward = ember.compile(lambda t: model(t).detach(), options={"pure": True}) \
            if pure else (lambda t: model(t).detach())
        with ember.no_grad():
            got = [forward(x) for _ in range(4)]
            model.eval()
            got += [forward(x) for _ in range(3)]
            model.train()
            got += [forward(x) for _ in range(4)]
        state = [b.numpy().copy() for b in model.buffers()]
        return got, state, forward

    (got, state, fn), (want, want_state, _) = outputs(True), outputs(False)
    _assert_same(got, want)
    _assert_same(state, want_state)
    assert fn.replayed >= 3

