"""F's activations that ember composes but PyTorch runs as one kernel (glu, prelu, hardshrink,
softshrink, rrelu): the graph node users see as grad_fn carries PyTorch's name (its in-place
node's too), and values and gradients match; rrelu's in-place form keeps the gradient through
the slopes it drew."""

import math

import numpy as np
import pytest
import torch

import ember

A = np.linspace(-1.5, 1.2, 24, dtype=np.float32).reshape(4, 6)

CASES = {
    "glu": (lambda m, t: m.nn.functional.glu(t), "GluBackward0"),
    "glu_dim0": (lambda m, t: m.nn.functional.glu(t, 0), "GluBackward0"),
    "GLU_module": (lambda m, t: m.nn.GLU(dim=-2)(t), "GluBackward0"),
    "prelu_one": (lambda m, t: m.nn.functional.prelu(t, m.tensor([0.25])),
                  "PreluKernelBackward0"),
    "prelu_channels": (lambda m, t: m.nn.functional.prelu(t, m.linspace(0.1, 0.6, 6)),
                       "PreluKernelBackward0"),
    "hardshrink": (lambda m, t: m.nn.functional.hardshrink(t, 0.4), "HardshrinkBackward0"),
    "softshrink": (lambda m, t: m.nn.functional.softshrink(t, 0.4), "SoftshrinkBackward0"),
    "rrelu_eval": (lambda m, t: m.nn.functional.rrelu(t), "RreluWithNoiseBackward0"),
    "rrelu_eval_inplace": (lambda m, t: m.nn.functional.rrelu(t * 1, inplace=True),
                           "RreluWithNoiseBackward1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_node_name_values_and_gradient(name):
    fn, want = CASES[name]
    t, e = torch.tensor(A, requires_grad=True), ember.tensor(A, requires_grad=True)
    rt, re = fn(torch, t), fn(ember, e)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == want
    (rt * rt.detach()).sum().backward()
    (re * re.detach()).sum().backward()
    # (sigmoid in glu: a float32 ulp or two; the rest are exact selects and products)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_rrelu_training_inplace_gradient_is_the_drawn_slope(dtype):
    # the slopes come from the same generator stream as torch's, so the in-place result and
    # its gradient (the slope where x <= 0, 1 elsewhere) are torch's bit for bit
    outs = []
    for m in (torch, ember):
        m.manual_seed(7)
        x = m.tensor(A, requires_grad=True)
        y = x.to(getattr(m, dtype)) * 1
        z = m.nn.functional.rrelu(y, training=True, inplace=True)
        assert z is y and type(z.grad_fn).__name__ == "RreluWithNoiseBackward1"
        z.float().sum().backward()
        outs.append((z.detach().float().numpy(), x.grad.numpy()))
    (tz, tg), (ez, eg) = outs
    np.testing.assert_array_equal(ez, tz)
    np.testing.assert_array_equal(eg, tg)
    assert ((eg > 1 / 8 - 1e-2) & (eg < 1 / 3 + 1e-2) | (eg == 1)).all() and (eg != 1).any()


def test_glu_odd_halving_dimension_refused_in_torch_words():
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension "
                                               "1 is size 5"):
            m.nn.functional.glu(m.ones(2, 5))


# The shrinks' and rrelu's number arguments, read as PyTorch reads them: hardshrink's lambd as
# the input's C type (after its float-only dtype check), softshrink's and rrelu's as doubles
# (before it); softshrink's lambd must lie in [0, the dtype's largest] (NaN too).
SHRINK_REFUSALS = {
    "hardshrink int": lambda m, x: m.nn.functional.hardshrink(x.long()),
    "hardshrink beyond half": lambda m, x: m.nn.functional.hardshrink(x.half(), 1e6),
    "hardshrink complex": lambda m, x: m.nn.functional.hardshrink(x.double(), 1j),
    "softshrink bool": lambda m, x: m.nn.functional.softshrink(x.bool()),
    "softshrink complex into int": lambda m, x: m.nn.functional.softshrink(x.int(), 2j),
    "softshrink negative": lambda m, x: m.nn.functional.softshrink(x, -0.5),
    "softshrink beyond half": lambda m, x: m.nn.functional.softshrink(x.half(), 70000.0),
    "softshrink nan bfloat16": lambda m, x: m.nn.functional.softshrink(x.bfloat16(), math.nan),
    "softshrink inf double": lambda m, x: m.nn.functional.softshrink(x.double(), math.inf),
    "rrelu complex": lambda m, x: m.nn.functional.rrelu(x, 1j, 0.5),
}


@pytest.mark.parametrize("name", SHRINK_REFUSALS)
def test_shrink_number_arguments_are_refused_as_torch(name):
    msgs = []
    for m in (ember, torch):
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            SHRINK_REFUSALS[name](m, m.tensor(A))
        msgs.append((info.type, str(info.value)))
    assert msgs[0] == msgs[1]


def test_shrinks_take_a_complex_number_with_no_imaginary_part():
    got = [(m.nn.functional.hardshrink(m.tensor(A), 0.5 + 0j).tolist(),
            m.nn.functional.softshrink(m.tensor(A).half(), 0.25 + 0j).tolist())
           for m in (ember, torch)]
    assert got[0] == got[1]


def test_shrink_and_prelu_double_backward():
    # PyTorch's hardshrink / softshrink / prelu derivative kernels take the input (prelu's
    # the weight too): a create_graph gradient requires grad, its own gradient zeros
    from helpers import check_double_backward

    slopes = np.array([0.25, 0.1, 0.3])
    x = np.random.RandomState(2).standard_normal((2, 3, 4))
    cases = [
        ("hardshrink", lambda M, v: M.nn.functional.hardshrink(v), (4, 3), True),
        ("softshrink", lambda M, v: M.nn.functional.softshrink(v, 0.3), (4, 3), True),
        ("prelu input", lambda M, v: M.nn.functional.prelu(v, M.tensor(slopes)), (2, 3, 4),
         False),
        ("prelu one slope", lambda M, v: M.nn.functional.prelu(
            v, M.tensor([0.2], dtype=M.float64)), (5,), False),
        ("prelu weight", lambda M, v: M.nn.functional.prelu(M.tensor(x), v), (3,), False),
    ]
    check_double_backward(cases)
