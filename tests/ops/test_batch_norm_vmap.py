"""Batch norm under vmap: the running statistics' update is per example when the buffers
are batched, refused in PyTorch's words when they are not (training mode), and absent in
eval mode or without buffers."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import assert_same, rand_array


def _x(m, shape, seed=0):
    return m.tensor(rand_array(shape, seed=seed))


def test_batched_running_statistics_take_one_update_per_example():
    def run(m):
        rm, rv = _x(m, (3, 6), 1), _x(m, (3, 6), 2) + 1
        out = m.func.vmap(lambda x, a, b: m.nn.functional.batch_norm(
            x, a, b, training=True, momentum=0.25))(_x(m, (3, 8, 6)), rm, rv)
        return out, rm, rv

    # (means, variances and rsqrt: vectorised reductions, so a float32 tolerance)
    for ours, theirs in zip(run(ember), run(torch)):
        assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", [
    ((3, 6), 0, False), ((6, 3), 1, False), ((6, 3), 0, True), ((3, 6), 1, True)],
    ids=["batch-first", "transposed", "batch-first-view", "transposed-view"])
def test_running_statistics_batched_along_any_axis(layout):
    """PyTorch updates the buffer only when its batch-first layout is its own memory."""
    shape, dim, transposed = layout

    def run(m):
        rm = m.zeros(*shape)
        rm = rm.t() if transposed else rm
        rv = m.ones(3, 6)
        m.func.vmap(lambda x, a, b: m.nn.functional.batch_norm(x, a, b, training=True),
                    in_dims=(0, dim, 0))(_x(m, (3, 8, 6)), rm, rv)
        return rm, rv

    for ours, theirs in zip(run(ember), run(torch)):
        assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m, bn: m.func.vmap(bn)(_x(m, (3, 8, 6))),
    lambda m, bn: m.func.vmap(lambda x: m.nn.functional.batch_norm(
        x, bn.running_mean, bn.running_var, training=True))(_x(m, (3, 8, 6))),
], ids=["module", "functional"])
def test_unbatched_running_statistics_are_refused(call):
    def run(m):
        bn = m.nn.BatchNorm1d(6)
        with pytest.raises(RuntimeError) as info:
            call(m, bn)
        return str(info.value), bn.running_mean.tolist()

    assert run(ember) == run(torch)


def test_eval_mode_and_no_buffers_need_no_update():
    def run(m):
        m.manual_seed(0)
        bn = m.nn.BatchNorm1d(6).eval()
        x = _x(m, (3, 8, 6))
        plain = m.func.vmap(lambda t: m.nn.functional.batch_norm(t, None, None,
                                                                 training=True))(x)
        return m.func.vmap(bn)(x), plain

    for ours, theirs in zip(run(ember), run(torch)):
        assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
