"""Products of two stacks of as many matrices run as one bmm in the matmul VJP (`_times`) and
without a graph (`_matmul`): bit for bit what matmul's own path (expand, reshape, bmm, view)
gives, on contiguous, transposed and expanded layouts, and torch's."""

import numpy as np
import torch

import ember
from ember.ops import matmul as mm


def _layout(lib, base: np.ndarray, kind: int):
    """A leaf holding `base`'s values and the operand made of it: contiguous, transposed
    (column-major matrices), expanded (stride-0 batch), batch-inner."""
    b, n, k = base.shape
    if kind == 0:
        leaf = lib.tensor(base, requires_grad=True)
        return leaf, leaf
    if kind == 1:
        leaf = lib.tensor(np.ascontiguousarray(base.transpose(0, 2, 1)), requires_grad=True)
        return leaf, leaf.transpose(1, 2)
    if kind == 2:
        leaf = lib.tensor(base[:1].copy(), requires_grad=True)
        return leaf, leaf.expand(b, n, k)
    leaf = lib.tensor(np.ascontiguousarray(base.transpose(1, 0, 2)), requires_grad=True)
    return leaf, leaf.transpose(0, 1)


def _grads(lib, a_np, b_np, g_np, kind):
    la, a = _layout(lib, a_np, kind)
    lb, b = _layout(lib, b_np, (kind + 1) % 4)
    g = _layout(lib, g_np, (kind + 2) % 4)[1].detach()
    (a @ b).backward(g)
    return la.grad.numpy(), lb.grad.numpy()


def test_stack_products_in_the_vjp_are_matmuls_bits_and_torchs(monkeypatch):
    rng = np.random.default_rng(0)
    for b, n, k, p in ((3, 4, 5, 2), (2, 3, 3, 3), (4, 1, 3, 2), (2, 3, 1, 4), (1, 2, 3, 4),
                       (0, 2, 3, 4), (5, 7, 6, 9)):
        for kind in range(4):
            a_np = rng.standard_normal((b, n, k)).astype(np.float32)
            b_np = rng.standard_normal((b, k, p)).astype(np.float32)
            g_np = rng.standard_normal((b, n, p)).astype(np.float32)
            if kind == 2 and b:  # (an expanded operand repeats its first matrix)
                a_np[:], b_np[:], g_np[:] = a_np[:1], b_np[:1], g_np[:1]
            fast = _grads(ember, a_np, b_np, g_np, kind)
            with monkeypatch.context() as m:  # matmul's own path for every VJP product
                m.setattr(mm, "_times", lambda x, y: x @ y)
                slow = _grads(ember, a_np, b_np, g_np, kind)
            for x, y in zip(fast, slow):
                assert np.array_equal(x, y), (b, n, k, p, kind)
            # NOTE: BLAS sums each product's k terms in its own order (float32)
            for x, y in zip(fast, _grads(torch, a_np, b_np, g_np, kind)):
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_a_bmm_gradients_double_backward_matches_torch():
    rng = np.random.default_rng(3)
    a_np, b_np = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 5, 2))
    out = []
    for lib in (ember, torch):
        a = lib.tensor(a_np, requires_grad=True)
        b = lib.tensor(b_np, requires_grad=True)
        (ga,) = lib.autograd.grad((lib.bmm(a, b) ** 2).sum(), a, create_graph=True)
        (gb,) = lib.autograd.grad((ga * ga).sum(), b)
        out.append((ga.detach().numpy(), gb.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


def test_a_stack_product_without_a_graph_is_the_graphs_bits():
    """With no graph to record, `a @ b` of two stacks is the one product its graph's bmm
    computes (no expand / reshape views around it): the same bits, and the result is a fresh
    contiguous tensor either way."""
    rng = np.random.default_rng(4)
    for b, n, k, p in ((3, 4, 5, 2), (2, 1, 3, 4), (6, 3, 2, 5), (0, 2, 2, 2)):
        for kind in range(4):
            a_np = rng.standard_normal((b, n, k)).astype(np.float32)
            b_np = rng.standard_normal((b, k, p)).astype(np.float32)
            la, a = _layout(ember, a_np, kind)
            lb, bt = _layout(ember, b_np, 3 - kind)
            with_graph = a @ bt
            with ember.no_grad():
                without = a @ bt
            assert with_graph.grad_fn is not None and without.grad_fn is None
            assert without.stride() == with_graph.stride() and without._base is None
            assert np.array_equal(without.numpy(), with_graph.detach().numpy())
            expected = (_layout(torch, a_np, kind)[1] @ _layout(torch, b_np, 3 - kind)[1])
            expected = expected.detach().numpy()
            np.testing.assert_allclose(without.numpy(), expected, rtol=1e-5, atol=1e-5)
