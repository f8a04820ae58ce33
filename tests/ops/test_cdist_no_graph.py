"""cdist's direct route without a graph (ops/_pair_norms.py `direct_distances`): the same
bits as the differentiable composite it stands in for (an input that requires grad takes
that one), and PyTorch's for p = 1, over shapes, batches, strided inputs and special
values."""

import numpy as np
import torch

import ember


def _bits(t) -> tuple:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.dtype.str, a.shape, a.tobytes()


def test_without_a_graph_gives_the_composites_bits():
    r = np.random.default_rng(0)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3e38])
    shapes = [((5, 7), (4, 7)), ((3, 1), (6, 1)), ((2, 5, 9), (5, 9)),
              ((2, 1, 4, 3), (3, 5, 3)), ((40, 20), (130, 20)), ((1, 8), (1, 8)),
              ((4, 2), (1, 2))]
    for dtype in (np.float32, np.float64):
        for s1, s2 in shapes:
            a, b = r.standard_normal(s1), r.standard_normal(s2)
            a.flat[::3] = r.choice(special, a.size)[::3]
            for x1 in (ember.tensor(a.astype(dtype)),  # and a strided x1
                       ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))
                                    .astype(dtype)).mT):
                x2 = ember.tensor(b.astype(dtype))
                for p in (1.0, 0.5, 3.0, 1.5, 2.0, 0.0, 1.0000001):
                    plain = ember.cdist(x1, x2, p)
                    graph = ember.cdist(x1.detach().requires_grad_(), x2, p)
                    assert graph.grad_fn is not None
                    if p == 2:  # NOTE: a NaN's sign may differ (see direct_distances)
                        nan = np.isnan(plain.numpy())
                        assert np.array_equal(nan, np.isnan(graph.detach().numpy()))
                        plain, graph = plain[~nan], graph[~nan]
                    assert _bits(plain) == _bits(graph), (dtype, s1, s2, p)
                    if p == 1:
                        want = torch.cdist(torch.tensor(x1.numpy()), torch.tensor(b.astype(dtype)),
                                           p)
                        assert np.array_equal(plain.numpy(), want.numpy(), equal_nan=True)
