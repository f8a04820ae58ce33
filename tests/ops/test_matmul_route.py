"""matmul takes PyTorch's route through dot / mv / mm / bmm (`_matmul_impl`): the same graph
nodes (what `print(q @ k.mT)` shows as grad_fn), the same folding of batch dims, the same
gradients; F.linear of a 1-D input is one addmm row (ViewBackward0)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, rand_array

SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
          ((3,), (5, 3, 2)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
          ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)),
          ((2, 3, 4, 5), (2, 3, 5, 2)), ((0, 2, 3), (3, 4))]


def _chain(node, depth=6):
    """The node names along the first differentiable input, as a list."""
    out = []
    while node is not None and len(out) < depth:
        out.append(type(node).__name__)
        nxt = [n for n, _ in node.next_functions
               if n is not None and type(n).__name__ != "AccumulateGrad"]
        node = nxt[0] if nxt else None
    return out


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_graph_and_gradients_match_torch(sa, sb, grads):
    a, b = rand_array(sa, np.float64), rand_array(sb, np.float64, seed=1)
    res = {}
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=grads[0])
        y = m.tensor(b, requires_grad=grads[1])
        z = x @ y
        z.sum().backward()
        res[m] = (z, _chain(z.grad_fn), tuple(z.shape), z.stride() if z.numel() else None,
                  [t.grad for t in (x, y) if t.requires_grad])
    (ze, ce, she, ste, ge), (zt, ct, sht, stt, gt) = res[ember], res[torch]
    assert (ce, she, ste) == (ct, sht, stt)
    # float64 products: BLAS (MKL for torch, OpenBLAS for NumPy) picks its kernel by CPU
    assert_ulp(ze, zt, 8, "a BLAS product's summation order depends on the CPU's kernel",
               scale=np.abs(a).max(initial=1) * np.abs(b).max(initial=1) * a.shape[-1])
    for e, t in zip(ge, gt):
        assert_ulp(e, t, 8, "a BLAS product's summation order depends on the CPU's kernel",
                   scale=np.abs(a).max(initial=1) * np.abs(b).max(initial=1) * 16)


def test_matmul_of_a_vector_and_a_matrix_keeps_its_forward_tangent():
    # (PyTorch's squeeze_ node, made by an ordinary squeeze: forward mode sees a view)
    import ember.func as func

    a, b = ember.tensor(rand_array((3,), np.float64)), ember.tensor(rand_array((3, 2), np.float64))
    out, tangent = func.jvp(lambda x: x @ b, (a,), (ember.ones(3, dtype=ember.float64),))
    assert tangent.shape == (2,) and out.shape == (2,)


@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 5), (0, 5)])
def test_linear_node_matches_torch(shape):
    w, bias, x = rand_array((3, 5)), rand_array((3,), seed=1), rand_array(shape, seed=2)
    names = []
    for m in (ember, torch):
        lin = m.nn.functional.linear(m.tensor(x, requires_grad=True), m.tensor(w),
                                     m.tensor(bias, requires_grad=True))
        names.append(_chain(lin.grad_fn, 2))
    assert names[0] == names[1]
