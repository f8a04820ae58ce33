"""clamp_min / clamp_max are overloads of their own in PyTorch: their graph nodes
(ClampMinBackward0/1, ClampMaxBackward0/1), their profiler names and their gradients,
in function, method and in-place forms, against torch in-process."""

import pytest
import torch

import ember

from helpers import assert_same

X = [-1.5, -0.2, 0.0, 0.4, 2.0]
B = [0.0, -0.5, 0.0, 1.0, 1.0]

FORMS = {
    "clamp_min number": lambda lib, x, b: lib.clamp_min(x, 0.0),
    "clamp_min method": lambda lib, x, b: x.clamp_min(0.0),
    "clamp_min tensor": lambda lib, x, b: lib.clamp_min(x, b),
    "clamp_max number": lambda lib, x, b: x.clamp_max(0.0),
    "clamp_max tensor": lambda lib, x, b: x.clamp_max(b),
    "clamp_min_ in place": lambda lib, x, b: (x * 1).clamp_min_(0.0),
    "clamp_max_ tensor in place": lambda lib, x, b: (x * 1).clamp_max_(b),
    "clamp min only": lambda lib, x, b: x.clamp(min=0.0),
    "clamp tensors": lambda lib, x, b: x.clamp(min=b),
    "clip": lambda lib, x, b: x.clip(max=0.0),
}


@pytest.mark.parametrize("form", FORMS)
def test_node_name_value_and_gradient(form):
    res = []
    for lib in (torch, ember):
        x = lib.tensor(X, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        out = FORMS[form](lib, x, b)
        grads = lib.autograd.grad((out * lib.arange(1.0, 6.0)).sum(), (x, b), allow_unused=True)
        res.append((out, grads, type(out.grad_fn).__name__))
    (t, tg, tname), (e, eg, ename) = res
    assert ename == tname
    assert_same(e, t)
    for a, c in zip(eg, tg):
        assert (a is None) == (c is None)
        if c is not None:
            assert_same(a, c)


def test_profiler_names():
    names = []
    for lib in (torch, ember):
        x, b = lib.tensor(X), lib.tensor(B)
        with lib.profiler.profile() as prof:
            x.clamp_min(0.0)
            x.clamp_min(b)
            x.clamp_max(b)
        names.append(sorted({e.name for e in prof.events()} - {"aten::to"}))
    assert names[1] == names[0]
