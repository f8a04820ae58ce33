"""A call that repeats the graph an earlier call recorded *follows* it (graph/capture.py):
each op is checked against the expected node and the node itself joins the recording, so a
repeated recording is that graph, built from nothing new. Every case compares results with
the same function run eagerly, bit for bit (no transcendental is fused here)."""

from __future__ import annotations

import numpy as np

import ember
from ember import nn


def _x(seed, shape=(4, 5)):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _graphs(fn) -> list:
    return [g for g, _, _ in fn.expected.get(0, ())]


def test_a_repeated_call_records_the_same_graph_object():
    def f(a, b):
        return (a * b + a).relu().sum(0)

    fn = ember.compile(f)
    a, b = _x(0), _x(1)
    fn(a, b)
    (first,) = _graphs(fn)
    for seed in range(2, 5):  # new values, same layout: followed, not recorded anew
        a, b = _x(seed), _x(seed + 10)
        np.testing.assert_array_equal(fn(a, b).numpy(), f(a, b).numpy())
    assert _graphs(fn) == [first] and len(fn.programs) == 1


def test_a_call_that_leaves_the_graph_midway_records_its_own():
    def f(a, b, flip):
        y = a * b
        y = y - b if flip else y + b  # (a Python branch: the graph differs from here)
        return y * a

    fn = ember.compile(f)
    a, b = _x(0), _x(1)
    for flip in (False, True, False, True):
        np.testing.assert_array_equal(fn(a, b, flip).numpy(), f(a, b, flip).numpy())
    assert len(fn.programs) == 2  # one program per branch, each compiled once
    assert {g.nodes[1].member.name for g in _graphs(fn)} == {"sub", "add"}


def test_a_new_input_layout_or_number_is_checked_while_following():
    def f(a, b, k):
        return a * k + b

    fn = ember.compile(f)
    a, b = _x(0), _x(1)
    fn(a, b, 2.0)
    out = fn(a, b, 3.5)  # a number of the graph: followed, the new value used
    np.testing.assert_array_equal(out.numpy(), f(a, b, 3.5).numpy())
    t = _x(2, (5, 4)).t()  # same shape, other strides: not the graph's input
    np.testing.assert_array_equal(fn(t, b, 3.5).numpy(), f(t, b, 3.5).numpy())
    assert len(fn.programs) == 2
    assert [v.stride for v in _graphs(fn)[0].inputs][0] == (1, 4)


def test_a_training_step_follows_its_forward_backward_and_update():
    def make():
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        return model, opt

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    runs = []
    for compiled in (False, True):
        model, opt = make()
        fn = ember.compile(step) if compiled else step
        losses = []
        for i in range(6):
            if i == 4:  # a learning rate a scheduler moved: a number, not a new graph
                opt.param_groups[0]["lr"] = 0.05
            x = _x(i)
            y = ember.tensor(np.random.default_rng(i).integers(0, 3, 4))
            losses.append(fn(model, opt, x, y).item())
        runs.append((fn, losses, [p.detach().numpy().copy() for p in model.parameters()]))
    (_, eager_losses, eager_params), (fn, losses, params) = runs
    assert losses == eager_losses
    for p, q in zip(params, eager_params):
        np.testing.assert_array_equal(p, q)
    assert fn.backward_replays >= 3
    # the update graph that ran after the replayed backwards is the one recorded first
    assert len(fn.per_segment.get(0, ())) == len(_graphs(fn))


def test_a_last_short_batch_does_not_cost_the_full_batches_their_replays():
    """Batches of 8 with a last batch of 3 each epoch: the graphs part at the first op that
    reads the batch, and the recording switches to the graph seen before for its shape, so
    every call after the first epoch follows a graph and replays its backward."""
    sizes = [8, 8, 8, 3] * 6
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        opt = ember.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        fn = ember.compile(step) if compiled else step
        for i, n in enumerate(sizes):
            y = ember.tensor(np.random.default_rng(i).integers(0, 3, n))
            fn(_x(i, (n, 5)), y)
        runs.append((fn, [p.detach().numpy().copy() for p in model.parameters()]))
    (_, eager_params), (fn, params) = runs
    for p, q in zip(params, eager_params):
        np.testing.assert_array_equal(p, q)
    assert len(fn.programs) == 2
    # the engine runs at the first call of each shape and at its first repeat: 4 calls
    assert fn.backward_replays == len(sizes) - 4


def test_a_switch_that_fails_at_the_next_op_follows_nothing():
    """Three graphs that share their first op and part at the second; the third call's
    recording switches to a graph that begins alike, whose second op differs too: it must
    follow nothing from there (a later op reading only the shared prefix would otherwise
    match that graph, and its program compute the other graph's values)."""
    def f(a, b, mode):
        y = a * b
        z = y + 1 if mode == 0 else y - 1 if mode == 1 else y / 3
        return z, y * 2

    fn = ember.compile(f)
    a, b = _x(0), _x(1)
    for mode in (0, 0, 1, 1, 2, 2, 0, 2):
        got = fn(a, b, mode)
        want = f(a, b, mode)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
