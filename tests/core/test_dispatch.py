"""bind and the interpreter stack: an interpreter pushed on the stack sees the ops bound
inside it, passes them down, and leaves nothing behind."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember._core import Family, Interpreter, bind, current_interpreter, interpret
from ember.ops.binary import add_fn, binary_p


class Recorder(Interpreter):
    """Records each op's primitive name (a family's: its member's), then evaluates it
    below."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def process(self, prim, args, params):
        fam = prim if isinstance(prim, Family) else getattr(prim, "base", None)  # (in place)
        self.names.append(params["fn"].name + prim.name[len(fam.name):]
                          if isinstance(fam, Family) else prim.name)
        return self.lower(prim, args, params)


def test_a_recorder_sees_functional_method_operator_view_and_inplace_ops():
    x = ember.arange(6.0).reshape(2, 3)
    with interpret(Recorder()) as rec:
        y = (x * 2).t()
        y.add_(1)
        z = ember.matmul(y, x)
    assert rec.names == ["mul", "t", "add_", "matmul"]
    t = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(z.numpy(), ((t * 2).t() + 1).matmul(t).numpy())


def test_backward_runs_its_vjps_through_bind():
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = ember.tensor([[1.0], [1.0]])
    loss = (w @ x).relu().sum()
    with interpret(Recorder()) as rec:
        loss.backward()
    assert "matmul" in rec.names  # MmBackward's gradient is a matrix product, bound like any op
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0, 1.0], [1.0, 1.0]])


def test_ops_inside_lower_are_not_seen_twice_and_the_stack_unwinds():
    outer, inner = Recorder(), Recorder()
    with interpret(outer):
        with interpret(inner):
            assert current_interpreter() is inner
            ember.ones(2).exp() + ember.arange(2.0)
        assert current_interpreter() is outer
    assert current_interpreter() is None
    assert inner.names == outer.names == ["full", "exp", "arange", "add"]


def test_an_interpreter_can_replace_an_op():
    class AddIsSub(Interpreter):
        def process(self, prim, args, params):
            if prim is binary_p and params["fn"] is add_fn:
                return self.lower(prim, (args[0], -args[1]), params)
            return self.lower(prim, args, params)

    with interpret(AddIsSub()):
        r = bind(binary_p, ember.tensor([5.0]), ember.tensor([2.0]), fn=add_fn)
    assert r.item() == 3.0


def test_the_stack_unwinds_when_an_op_raises():
    with pytest.raises(RuntimeError, match="size of tensor a"):
        with interpret(Recorder()):
            ember.ones(2) + ember.ones(3)
    assert current_interpreter() is None


def test_import_leaves_numpy_error_state_alone():
    code = ("import numpy as np; e = np.geterr(); import ember; "
            "x = ember.tensor([1.0, 0.0]); y = (1 / x).log(); assert np.geterr() == e, "
            "np.geterr(); print(y.tolist())")
    out = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[0.0, inf]"  # and no NumPy warning was raised


def test_optimizer_updates_are_primitives_the_recorder_sees():
    w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    v = ember.nn.Parameter(ember.tensor([0.5, 0.5]))
    adam = ember.optim.Adam([w], lr=0.1)
    sgd = ember.optim.SGD([v], lr=0.1, momentum=0.9)
    tw, tv = (torch.nn.Parameter(torch.tensor(a)) for a in ([1.0, -2.0], [0.5, 0.5]))
    tadam, tsgd = torch.optim.Adam([tw], lr=0.1), torch.optim.SGD([tv], lr=0.1, momentum=0.9)
    names = []
    for _ in range(3):
        for p, tp in ((w, tw), (v, tv)):
            p.grad, tp.grad = ember.tensor([0.3, -0.1]), torch.tensor([0.3, -0.1])
        with interpret(Recorder()) as rec:
            adam.step()
            sgd.step()
        names.append(rec.names)
        tadam.step()
        tsgd.step()
    assert all("adam_step" in n for n in names)
    assert "sgd_step" not in names[0] and "sgd_step" in names[1]  # (the first makes the buffer)
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(v.detach().numpy(), tv.detach().numpy(), rtol=1e-6)


class _Net(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        nn = ember.nn
        self.emb, self.conv = nn.Embedding(10, 4), nn.Conv2d(1, 2, 3, padding=1)
        self.bn, self.drop, self.fc = nn.BatchNorm2d(2), nn.Dropout(0.5), nn.Linear(36, 3)

    def forward(self, img, tok):
        h = self.drop(self.bn(self.conv(img)).relu()).flatten(1)
        return self.fc(ember.cat([h, self.emb(tok)], 1))


class _Square(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def _training_step(interpreter=None):
    """One step of a small model touching each path into the core; returns what it changed."""
    ember.manual_seed(0)
    net = _Net()
    opt = ember.optim.Adam(net.parameters(), lr=0.01)
    img, tok = ember.randn(5, 1, 4, 4), ember.randint(0, 10, (5,))
    y = ember.randint(0, 3, (5,))

    def step():
        loss = ember.nn.functional.cross_entropy(_Square.apply(net(img, tok)), y)
        loss.backward()
        ember.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        img.mul_(0.5)
        img[0, 0, 0] = 1.0
        return loss

    if interpreter is None:
        loss = step()
    else:
        with interpret(interpreter):
            loss = step()
    return [loss.detach().clone(), img.clone()] + [p.detach().clone() for p in net.parameters()]


def test_a_recorder_sees_every_path_of_a_training_step_and_changes_nothing():
    rec = Recorder()
    seen = _training_step(rec)
    for name in ("embedding", "convolution", "draw_like", "addmm", "softmax",
                 "nll_loss", "_Square", "convolution_backward_weight", "embedding_backward",
                 "linalg_vector_norm", "adam_step", "mul_", "setitem"):
        assert name in rec.names, name
    for a, b in zip(seen, _training_step()):  # bit for bit what the step gives unobserved
        np.testing.assert_array_equal(a.numpy(), b.numpy())


class Tape(Interpreter):
    """Records every op with its inputs and outputs, so the record can be run again.

    A tensor an op reads that no recorded op made is an input of the record: its value is
    copied when first read (before later ops change it in place). A graph node's saved copy
    of an output shares the output's array; it stands for that output."""

    def __init__(self) -> None:
        self.ops: list = []
        self.inputs: dict = {}  # id -> (tensor, its value when first read)
        self.made: dict = {}  # id -> tensor, for every tensor a recorded op returned
        self.saved: dict = {}  # id(array) -> the made tensor that owns it
        self.aliases: dict = {}  # id(saved copy) -> the output it stands for
        self._copying = False

    def process(self, prim, args, params):
        if self._copying:
            return self.lower(prim, args, params)
        for a in _tensors(args):
            owner = self.saved.get(id(a._np))
            if owner is not None and id(a) not in self.made:
                self.made[id(a)] = a
                self.inputs.pop(id(a), None)
                self.aliases[id(a)] = owner
            if id(a) not in self.made and id(a) not in self.inputs:
                self._copying = True
                try:
                    self.inputs[id(a)] = (a, a.detach().numpy().copy())
                finally:
                    self._copying = False
        out = self.lower(prim, args, params)
        for o in _tensors(out if isinstance(out, tuple) else (out,)):
            self.made[id(o)] = o
            if o._np is not None:
                self.saved[id(o._np)] = o
        self.ops.append((prim, args, params, out))
        return out

    def replay(self) -> dict:
        """Run the record on fresh copies of its inputs; maps id(original) -> replayed."""
        env = {k: ember.tensor(v) for k, (_, v) in self.inputs.items()}
        with ember.no_grad():  # the record holds the backward pass's ops explicitly
            for prim, args, params, out in self.ops:
                for k, owner in self.aliases.items():
                    if id(owner) in env:
                        env[k] = env[id(owner)]
                res = bind(prim, *_substitute(args, env), **params)
                outs = out if isinstance(out, tuple) else (out,)
                news = res if isinstance(res, tuple) else (res,)
                for o, n in zip(outs, news):
                    if isinstance(o, ember.Tensor):
                        env[id(o)] = n
        return env


def _tensors(xs):
    for x in xs:
        if isinstance(x, ember.Tensor):
            yield x
        elif isinstance(x, (tuple, list)):
            yield from _tensors(x)


def _substitute(xs, env):
    return tuple(env.get(id(x), x) if isinstance(x, ember.Tensor)
                 else _substitute(x, env) if isinstance(x, (tuple, list)) else x for x in xs)


def test_replaying_the_record_of_a_training_step_reproduces_it_bit_for_bit():
    tape = Tape()
    ember.manual_seed(0)
    net = _Net()
    opt = ember.optim.Adam(net.parameters(), lr=0.01)
    img, tok = ember.randn(5, 1, 4, 4), ember.randint(0, 10, (5,))
    y = ember.randint(0, 3, (5,))
    rng = ember.get_rng_state()
    with interpret(tape):
        for _ in range(2):  # the second step reads the optimizer state the first one made
            loss = ember.nn.functional.cross_entropy(_Square.apply(net(img, tok)), y)
            opt.zero_grad()
            loss.backward()
            ember.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            img.mul_(0.5)
            img[0, 0, 0] = 1.0
    results = [loss, img] + list(net.parameters())
    # The record's inputs are the step's data and the parameters' first values: every
    # gradient, optimizer state and update was made by a recorded op, and so was each
    # dropout draw (a `draw_like` op; the generator is its input, so the replay starts from
    # the generator's state the record started from).
    params = {id(p) for p in net.parameters()}
    outside = [t for k, (t, _) in tape.inputs.items() if k not in params]
    assert len(outside) == 6, [tuple(t.shape) for t in outside]  # img tok y, bn's 3
    assert [op[0].name for op in tape.ops].count("draw_like") == 2
    ember.set_rng_state(rng)
    env = tape.replay()
    for r in results:
        np.testing.assert_array_equal(env[id(r)].numpy(), r.detach().numpy())
    assert not np.array_equal(env[id(img)].numpy(), tape.inputs[id(img)][1])  # it did run
