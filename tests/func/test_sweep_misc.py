"""torch.func sweep of what the other sweep files leave: factories inside a transformed
function, in-place writes (fill, copy, setitem, the slices a view writes back), detach, the
data-dependent counting ops (vmap loops over them), and the random draws (`fill` members
and the `sample` family), whose values must match torch's bit for bit under a seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tests.func.sweep import Case, make_tests

import ember

from helpers import assert_same

ND = "not differentiable: vmap only"


def _fill_copy(m, x, y):
    """In-place writes of a whole batched tensor: a number, then a tensor."""
    w = x.clone()
    w.zero_()
    w.fill_(1.5)
    w.fill_(m.tensor(0.5, dtype=x.dtype))  # (a 0-d tensor: FillBackward3)
    w.copy_(x * 2 + y)
    w.add_(y)
    return w


def _setitem(m, x, y):
    z = x.clone()
    z[0] = y[1]  # a row
    z[:, 1] = 0.5  # a number
    z[1:, 2:] += y[1:, 2:]  # (an in-place op on a view, then the view assigned back)
    return z


def _through_view(m, x, y):
    """In-place ops on a view of a copy: the base sees the write (copy_slices)."""
    z = x.clone()
    z[1:, 2:].add_(y[1:, 2:])
    z.narrow(1, 0, 1).mul_(3)
    return z




def _learnable_fq(m, x, s, z):
    """LSQ's fake quantisations, per tensor and per channel (positive scales from `s`)."""
    scale = s.abs() * 0.2 + 0.05
    return (m._fake_quantize_learnable_per_tensor_affine(x, scale, z * 3, -8, 7),
            m._fake_quantize_learnable_per_channel_affine(x, scale.expand(4).float(),
                                                          z * 3, 1, -8, 7, 0.5))


def _unique(m, x):
    r = m.round(x * 2)
    return m.unique(r), m.unique_consecutive(r)


CASES = [
    Case("factory", lambda m, x: (x + m.arange(4).to(x.dtype), m.full_like(x, 2.5) * x,
                                  x.new_full((4,), 1.5) - x, m.zeros_like(x) + x,
                                  x * m.ones(3, 1, dtype=x.dtype), m.linspace(0, 1, 4) + x.real,
                                  m.eye(3, 4, dtype=x.dtype) * x), [(3, 4)], complex=True),
    Case("fill_copy", _fill_copy, [(3, 4), (3, 4)], complex=True),
    Case("fill", lambda m, x, y: (m.fill(x, 1.5) * y, m.fill(x, y.sum())), [(3, 4), (3, 4)],
         complex=True),
    Case("setitem", _setitem, [(3, 4), (3, 4)]),
    Case("copy_slices", _through_view, [(3, 4), (3, 4)]),
    Case("detach", lambda m, x: (x.detach() * x, x + x.detach().sin()), [(3, 4)],
         complex=True),
    Case("to_device", lambda m, x: (x.to("cpu") * 2, x.cpu(), x.to(m.float64)), [(3, 4)]),
    Case("histogram", lambda m, x: (m.histogram(x, bins=4, range=(-2.0, 2.0)).hist,
                                    m.histc(x, bins=3)),
         [(3, 4)], jvp=ND, vjp=ND),
    Case("bincount", lambda m, x: m.bincount((x.abs() * 2).long().flatten(), minlength=5),
         [(3, 4)], jvp=ND, vjp=ND,
         vmap="torch's vmap refuses bincount (a data-dependent shape)"),
    Case("unique", _unique, [(3, 4)], jvp=ND, vjp=ND,
         vmap="torch's vmap refuses unique (a data-dependent shape)"),
    Case("fake_quantize_learnable", _learnable_fq, [(3, 4), (1,), (4,)],
         jvp="torch has no forward-mode rule for the learnable fake quantisations",
         vjp="their backward kernels take float32 only (the sweep's vjp runs float64)"),
]

test_jvp, test_vmap, test_vjp = make_tests(CASES)


# --- random draws: same seed, same values --------------------------------------------------

def _clone_draw(method: str, *args):
    return lambda m, x: getattr(x.clone(), method)(*args) * x


RANDOM = {
    "uniform": lambda m, x: x + m.rand_like(x),
    "normal": lambda m, x: x * m.randn_like(x),
    "random": _clone_draw("random_", 0, 5),
    "random_to": _clone_draw("random_", 5),
    "random_all": _clone_draw("random_"),
    "uniform_": _clone_draw("uniform_", -1, 2),
    "normal_": _clone_draw("normal_", 0.5, 2),
    "bernoulli_p": _clone_draw("bernoulli_", 0.3),
    "exponential": _clone_draw("exponential_", 2.0),
    "cauchy": _clone_draw("cauchy_"),
    "log_normal": _clone_draw("log_normal_"),
    "geometric": _clone_draw("geometric_", 0.3),
    "dropout": lambda m, x: m.nn.functional.dropout(x, 0.5),
    "randperm": lambda m, x: x[m.randperm(3)],
    # the sample family, its input unbatched (torch refuses a batched one under "same")
    "bernoulli_tensor": lambda m, x: x * m.bernoulli(m.full((4,), 0.4, dtype=x.dtype)),
    "poisson": lambda m, x: x + m.poisson(m.full((4,), 3.0, dtype=x.dtype)),
    "binomial": lambda m, x: x + m.binomial(m.full((4,), 30.0, dtype=x.dtype),
                                            m.tensor([0.1, 0.5, 0.8, 0.3], dtype=x.dtype)),
    "multinomial": lambda m, x: x[m.multinomial(m.tensor([0.2, 0.5, 0.3, 0.1]), 3)],
    "normal_std": lambda m, x: x * m.normal(0.5, m.full((4,), 2.0, dtype=x.dtype)),
}


def _x(m):
    return m.tensor(np.random.default_rng(7).uniform(0.1, 0.9, (3, 4)))


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_vmap_same(name):
    """randomness='same': one draw for the whole batch, the values torch draws."""
    fn = RANDOM[name]

    def run(m):
        m.manual_seed(0)
        return m.vmap(lambda a: fn(m, a), randomness="same")(_x(m))

    assert_same(run(ember), run(torch))


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_jvp(name):
    fn = RANDOM[name]

    def run(m):
        m.manual_seed(0)
        return m.func.jvp(lambda a: fn(m, a), (_x(m),), (_x(m) * 2 - 1,))

    e, t = run(ember), run(torch)
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


@pytest.mark.parametrize("name", ["uniform", "bernoulli_p"])
def test_random_under_vmap_refuses_error_randomness(name):
    for m in (ember, torch):
        with pytest.raises(RuntimeError):
            m.vmap(lambda a, m=m: RANDOM[name](m, a))(_x(m))


def test_sample_of_a_batched_input_under_same_randomness_raises():
    for m in (ember, torch):
        with pytest.raises(RuntimeError):
            m.vmap(lambda a, m=m: m.poisson(a), randomness="same")(_x(m))
