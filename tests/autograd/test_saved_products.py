"""The fused add* products (addmm addmv baddbmm addbmm addr, and linear / nn.Linear, which
call addmm) save as PyTorch's nodes do: each operand only when the other operand's gradient
reads it, the rest kept as shapes. Against torch: what the user's saved_tensors_hooks pack for
every choice of inputs needing grad, the gradients, and the node's `_saved_mat1` /
`_saved_mat2` / `_saved_*_sym_sizes` attributes."""

import itertools
import math

import pytest
import torch

import ember

from helpers import assert_same

CASES = {
    "addmm": [(3, 5), (3, 4), (4, 5)],
    "addmv": [(3,), (3, 4), (4,)],
    "baddbmm": [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
    "addbmm": [(3, 5), (2, 3, 4), (2, 4, 5)],
    "addr": [(3, 4), (3,), (4,)],
    "linear": [(3, 4), (5, 4), (5,)],
    "linear3d": [(2, 3, 4), (5, 4), (5,)],
    "Linear": [(3, 4), (5, 4), (5,)],
}


def _run(m, name: str, need: tuple):
    """Shapes packed by the user's hooks, and the gradients of the inputs needing one."""
    ts = [m.linspace(-1, 1, 60, dtype=m.float64)[:math.prod(s)].reshape(s)
          .requires_grad_(r) for s, r in zip(CASES[name], need)]
    packs = []
    with m.autograd.graph.saved_tensors_hooks(lambda t: packs.append(tuple(t.shape)) or t,
                                              lambda t: t):
        if name == "Linear":
            lin = m.nn.Linear(4, 5, dtype=m.float64)
            with m.no_grad():
                lin.weight.copy_(ts[1])
                lin.bias.copy_(ts[2])
            lin.weight.requires_grad_(need[1])
            lin.bias.requires_grad_(need[2])
            ts[1:] = [lin.weight, lin.bias]
            y = lin(ts[0])
        elif name.startswith("linear"):
            y = m.nn.functional.linear(*ts)
        else:
            y = getattr(m, name)(*ts, beta=2, alpha=3)
    y.sum().backward()
    return sorted(packs), [t.grad for t in ts if t.requires_grad]


@pytest.mark.parametrize("name", list(CASES))
def test_saves_only_what_the_wanted_gradients_read(name):
    for need in itertools.product([False, True], repeat=3):
        if any(need):
            got, want = _run(ember, name, need), _run(torch, name, need)
            assert got[0] == want[0], need
            # (sums of a few float64 products: BLAS may order them differently)
            assert_same(got[1], want[1], rtol=1e-13, atol=1e-14)


def _attributes(m, need: tuple, linear: bool):
    c, a, b = (m.ones(*s, dtype=m.float64).requires_grad_(r)
               for s, r in zip(CASES["addmm"], need))
    fn = (m.nn.functional.linear(a, b.mT, c[0]) if linear else m.addmm(c, a, b)).grad_fn
    return [None if v is None else tuple(v.shape) if hasattr(v, "shape") else tuple(v)
            for v in (fn._saved_mat1, fn._saved_mat2, fn._saved_mat1_sym_sizes,
                      fn._saved_mat2_sym_sizes)] + [fn._saved_alpha, fn._saved_beta]


@pytest.mark.parametrize("linear", [False, True])
def test_saved_attributes_read_none_where_torchs_do(linear):
    for need in itertools.product([False, True], repeat=3):
        if any(need):
            assert _attributes(ember, need, linear) == _attributes(torch, need, linear), need


def _saved(m, name: str, need: tuple) -> list:
    """Every `_saved_*` attribute of the node, shapes for tensors."""
    ts = [m.ones(*s, dtype=m.float64).requires_grad_(r) for s, r in zip(CASES[name], need)]
    node = getattr(m, name)(*ts, beta=0.5, alpha=2).grad_fn
    return [(a, tuple(v.shape) if hasattr(v, "shape") else v)
            for a in sorted(dir(node)) if a.startswith("_saved_") for v in [getattr(node, a)]]


@pytest.mark.parametrize("name", ["addmv", "baddbmm", "addbmm", "addr"])
def test_the_other_products_saved_attributes_as_torchs(name):
    # (addbmm keeps three of its operands' sizes, as PyTorch's `*_sym_argsize_*`)
    for need in itertools.product([False, True], repeat=3):
        if any(need):
            assert _saved(ember, name, need) == _saved(torch, name, need), need
