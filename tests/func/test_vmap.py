"""ember.vmap against torch.vmap: one example's function, mapped over a batch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from func.test_transforms import both

from helpers import rand_array


def _x(m, shape, seed=0):
    return m.tensor(rand_array(shape, np.float64, seed=seed))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (loop fallbacks announce themselves)
        yield


def test_an_elementwise_and_reducing_function_over_the_first_axis():
    both(lambda m: m.vmap(lambda r: (r.sin() * r).sum() / r.norm())(_x(m, (5, 4))))


def test_in_dims_out_dims_and_an_unbatched_argument():
    def run(m):
        f = m.vmap(lambda a, w, b: a @ w + b, in_dims=(1, None, 0), out_dims=1)
        return f(_x(m, (3, 6, 4)), _x(m, (4, 2), 1), _x(m, (6, 2), 2))
    both(run)


def test_negative_in_dim_and_a_pytree_input():
    def run(m):
        f = m.vmap(lambda p: p["w"].exp() - p["b"].sum(), in_dims=({"w": -1, "b": 0},))
        return f({"w": _x(m, (2, 5)), "b": _x(m, (5, 3), 1)})
    both(run)


def test_nested_vmaps_make_an_outer_product():
    both(lambda m: m.vmap(m.vmap(lambda a, b: a * b + 1, in_dims=(None, 0)),
                          in_dims=(0, None))(_x(m, (3,)), _x(m, (4,), 1)))


def test_outputs_that_do_not_depend_on_the_batch_are_broadcast():
    both(lambda m: m.vmap(lambda r: (r.sum(), m.ones(2, dtype=m.float64)))(_x(m, (3, 2))))


def test_chunk_size_gives_the_same_result():
    def run(m):
        return m.vmap(lambda r: r.cumsum(0) * 2, chunk_size=2)(_x(m, (5, 3)))
    both(run)


def test_per_sample_gradients_of_a_small_mlp_equal_a_loop():
    def run(m):
        w1, w2 = _x(m, (4, 8)), _x(m, (8, 3), 1)
        xs, ys = _x(m, (6, 4), 2), _x(m, (6, 3), 3)

        def loss(params, x, y):
            h = (x @ params[0]).tanh()
            return ((h @ params[1] - y) ** 2).mean()

        return m.vmap(m.func.grad(loss), in_dims=(None, 0, 0))((w1, w2), xs, ys)
    both(run)
    e = run(ember)
    w1, w2 = _x(torch, (4, 8)).requires_grad_(), _x(torch, (8, 3), 1).requires_grad_()
    xs, ys = _x(torch, (6, 4), 2), _x(torch, (6, 3), 3)
    for i in range(6):
        loss = (((xs[i] @ w1).tanh() @ w2 - ys[i]) ** 2).mean()
        g1, g2 = torch.autograd.grad(loss, (w1, w2))
        np.testing.assert_allclose(e[0][i].numpy(), g1.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(e[1][i].numpy(), g2.numpy(), rtol=1e-10, atol=1e-12)


def test_vmap_of_jvp_and_jacrev_of_vmap():
    both(lambda m: m.vmap(lambda x, t: m.func.jvp(m.sin, (x,), (t,))[1])(
        _x(m, (4, 3)), _x(m, (4, 3), 1)))
    both(lambda m: m.func.jacrev(m.vmap(lambda r: (r * r).sum()))(_x(m, (3, 2))))


def test_inplace_inside_vmap_writes_the_batch():
    def run(m):
        def f(r):
            y = r.clone()
            y.mul_(2).add_(1)
            return y
        return m.vmap(f)(_x(m, (3, 2)))
    both(run)


def test_like_factories_of_a_batched_tensor_are_batched():
    """zeros_like(x) inside vmap is one per example (so an in-place write of a batched value
    into it works), laid out as torch lays it out."""
    def run(m):
        def f(v):
            z = m.zeros_like(v)
            z.add_(v * 2)
            return z + m.ones_like(v) + m.full_like(v, 0.5) + m.empty_like(v).zero_()
        return m.vmap(f, in_dims=1)(_x(m, (3, 4)))
    both(run)


def test_clone_of_a_batch_along_a_later_axis():
    both(lambda m: m.vmap(lambda v: v.clone() * 2, in_dims=1)(_x(m, (3, 4))))


def test_errors_are_torchs_types():
    for m in (ember, torch):
        with pytest.raises(RuntimeError):  # data-dependent control flow
            m.vmap(lambda r: r * 2 if r.sum() > 0 else r)(_x(m, (3, 2)))
        with pytest.raises(RuntimeError):  # .item()
            m.vmap(lambda r: r.sum().item())(_x(m, (3, 2)))
        with pytest.raises(ValueError, match="same size"):
            m.vmap(lambda a, b: a + b)(_x(m, (3,)), _x(m, (4,)))
        with pytest.raises(ValueError):  # an in_dim for a non-tensor
            m.vmap(lambda a, n: a * n, in_dims=(0, 0))(_x(m, (3,)), 2.0)
        with pytest.raises(RuntimeError):  # a batched value written into an unbatched tensor
            w = _x(m, (2,))
            m.vmap(lambda r, w=w: w.add_(r))(_x(m, (3, 2)))


def test_random_ops_follow_the_randomness_flag():
    def noisy(m):
        return lambda r: r + m.rand(2, dtype=m.float64)

    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="randomness"):
            m.vmap(noisy(m))(_x(m, (3, 2)))
        with pytest.raises(RuntimeError, match="randomness"):
            m.vmap(lambda r, m=m: m.nn.functional.dropout(r, 0.5))(_x(m, (3, 2)))
    # 'same': one draw shared by every example, as torch (same generator state, same draw)
    out = {}
    for m in (ember, torch):
        m.manual_seed(0)
        xs = _x(m, (3, 2))
        out[m.__name__] = m.vmap(noisy(m), randomness="same")(xs) - xs
    e, t = out["ember"], out["torch"]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(e.numpy(), np.broadcast_to(e.numpy()[0], (3, 2)), atol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_fill_value_batched_per_example():
    """masked_fill / index_fill with a 0-d value that vmap batches: each example's own value
    (the overflow check reads a number only outside transforms)."""
    mask, idx = [True, False, True, False], [1, 3]
    for lib in (torch, ember):
        x, v, m, i = lib.zeros(3, 4), lib.arange(3.0), lib.tensor(mask), lib.tensor(idx)
        got = lib.vmap(lambda xi, vi, m=m: xi.masked_fill(m, vi))(x, v)
        assert got.tolist() == [[0, 0, 0, 0], [1, 0, 1, 0], [2, 0, 2, 0]]
        got = lib.vmap(lambda xi, vi, i=i: xi.index_fill(0, i, vi))(x, v)
        assert got.tolist() == [[0, 0, 0, 0], [0, 1, 0, 1], [0, 2, 0, 2]]
