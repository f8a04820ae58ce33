"""Lazy evaluation: mx ops record a graph (ember's IR) and run it when a value is needed;
a graph that recurs runs fused from its second run."""

import numpy as np
import pytest

import ember
import ember.mlx.core as mx
from ember.mlx.core import _lazy


@pytest.fixture(autouse=True)
def _fresh_world():
    was, _lazy.enabled[0] = _lazy.enabled[0], True  # (the suite also runs with it off)
    _lazy.evaluate("test start")
    _lazy.settle()
    yield
    _lazy.evaluate("test end")
    _lazy.enabled[0] = was


def test_ops_record_nodes_until_a_value_is_needed():
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    y = x * 2 + 1  # nothing has been computed
    assert mx.graph_size() == 2
    assert type(y._t).__name__ == "LazyTensor"
    mx.eval(y)
    assert mx.graph_size() == 0
    assert type(y._t) is ember.Tensor  # evaluated arrays keep no graph
    assert y.tolist() == [[3.0, 5.0], [7.0, 9.0]]


@pytest.mark.parametrize("read", [
    lambda a: a.item(), lambda a: a.tolist(), lambda a: np.array(a), lambda a: repr(a),
    lambda a: bool(a), lambda a: float(a),
])
def test_reading_a_value_runs_the_pending_graph(read):
    x = mx.array([3.0])
    y = mx.sqrt(x * x)
    assert mx.graph_size() == 2
    read(y)
    assert mx.graph_size() == 0
    assert y.item() == 3.0


def test_only_what_is_still_referenced_is_computed():
    x = mx.array([1.0, 2.0])
    kept = x + 1
    dropped = x * 5  # noqa: F841  (dropped before the graph runs)
    del dropped
    mx.eval(kept)
    assert kept.tolist() == [2.0, 3.0]


def test_lazy_results_equal_eager_results_bit_for_bit():
    rng = np.random.default_rng(0)
    a = mx.array(rng.standard_normal((5, 7)).astype(np.float32))
    b = mx.array(rng.standard_normal((7,)).astype(np.float32))

    def f():
        return ((a * b - 0.5) * (a + b)).sum(axis=1) / 3.0

    lazy = np.array(f())
    _lazy.enabled[0] = False
    try:
        eager = np.array(f())
    finally:
        _lazy.enabled[0] = True
    assert np.array_equal(lazy, eager)


def test_a_recurring_graph_runs_fused_from_its_second_run_with_the_same_values():
    x = mx.array(np.linspace(-2, 2, 33, dtype=np.float32))
    before = {id(p): p.runs for p in _lazy.world().programs.values()}
    outs = []
    for i in range(3):
        y = (x * (i + 1) + 1) * x  # the same structure each time (the number is an input)
        outs.append(np.array(y))
    programs = [p for p in _lazy.world().programs.values()
                if p.runs - before.get(id(p), 0) == 3]
    assert len(programs) == 1 and programs[0].fused
    for i, out in enumerate(outs):
        xs = np.linspace(-2, 2, 33, dtype=np.float32)
        assert np.array_equal(out, (xs * np.float32(i + 1) + np.float32(1)) * xs)


def test_a_one_off_graph_is_never_compiled(monkeypatch):
    compiled = []
    monkeypatch.setattr(_lazy, "lower", compiled.append)
    y = mx.array([1.0, 2.0]) * 7 - mx.array([0.5, 0.25]) * 3
    mx.eval(y)
    assert compiled == []
    assert y.tolist() == [5.5, 13.25]


def test_transforms_work_on_pending_arrays():
    w = mx.array([1.0, 2.0]) * 3  # pending when grad starts
    g = mx.grad(lambda v: (v * v).sum())(w)
    assert g.tolist() == [6.0, 12.0]


def test_eval_inside_grad_is_allowed():
    def loss(v):
        y = v * v
        mx.eval(y)
        return y.sum()

    assert mx.grad(loss)(mx.array([2.0])).tolist() == [4.0]


def test_disabled_lazy_mode_runs_each_op_at_once():
    _lazy.enabled[0] = False
    try:
        y = mx.array([1.0]) + 1
        assert type(y._t) is ember.Tensor and mx.graph_size() == 0
    finally:
        _lazy.enabled[0] = True


def _train(steps: int) -> list:
    """An MLP trained with SGD as MLX programs train: one mx.eval per step."""
    import ember.mlx.nn as nn
    import ember.mlx.optimizers as optim

    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = optim.SGD(learning_rate=0.1)
    x = mx.random.normal((8, 16))
    y = mx.array([0, 1, 2, 3, 0, 1, 2, 3])
    step = nn.value_and_grad(model, lambda m, x, y: nn.losses.cross_entropy(m(x), y).mean())
    losses = []
    for _ in range(steps):
        loss, grads = step(model, x, y)
        opt.update(model, grads)
        mx.eval(loss, model.parameters(), opt.state)
        losses.append(loss.item())
    return losses + [np.array(p) for p in model.parameters()["layers"][0].values()]


def test_a_training_step_is_one_graph_run_fused_with_eagers_bits():
    from ember import native
    from ember.graph.c_program import CProgram

    before = _lazy.world().evaluations
    runs = {id(p): p.runs for p in _lazy.world().programs.values()}
    lazy = _train(4)
    # each step's forward, backward and update ran as one graph (the loss read is free)
    assert _lazy.world().evaluations - before == 4
    step = [p for p in _lazy.world().programs.values() if p.runs - runs.get(id(p), 0) == 4]
    assert len(step) == 1 and step[0].fused
    if native.available():
        # NOTE: the step's own program (this test once looked at every program, and passed on
        # another test's): its elementwise work runs in fused C loops; it is not one C call,
        # since the loss's nll_loss (no C rule) is read by the mean's nodes, and the whole
        # program in C takes such a node only as its last (an epilogue)
        prog = step[0].program
        assert isinstance(prog, CProgram) or "fused C loop" in prog.code
    _lazy.enabled[0] = False
    eager = _train(4)
    for a, b in zip(lazy, eager):
        np.testing.assert_array_equal(a, b)


def test_a_recurring_steps_backward_is_replayed_not_rerun(monkeypatch):
    # the first backward at this place of the step's graph runs autograd's engine (its
    # nodes are recorded and remembered); the later ones append those nodes at once
    from ember.graph import backward

    replays = []
    real = backward.replay
    monkeypatch.setattr(backward, "replay", lambda *a: replays.append(1) or real(*a))
    lazy = _train(5)
    assert len(replays) >= 3
    _lazy.enabled[0] = False
    eager = _train(5)
    for a, b in zip(lazy, eager):
        np.testing.assert_array_equal(a, b)


def test_evaluated_arrays_are_freed_as_soon_as_they_are_dropped():
    # (mx.eval once kept what it walked in a reference cycle: each step's results stayed
    # until the cycle collector ran, 64 MB a step on `a * b + c` of 16M floats)
    import gc
    import weakref

    from ember.mlx.utils import tree_flatten

    gc.disable()
    try:
        y = mx.array([1.0, 2.0]) * 2
        mx.eval({"y": [y]})
        tree_flatten({"y": [y]})
        gone = weakref.ref(y._t)
        del y
        assert gone() is None
    finally:
        gc.enable()


def _steps(f, n):
    """`f()`'s arrays as NumPy, evaluated `n` times (the first run calls the kernels
    node by node, the later ones run the fused C loops)."""
    outs = []
    for _ in range(n):
        got = f()
        mx.eval(got)
        outs.append([np.array(a) for a in got])
    return outs


def _same_bits(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))


def test_maximum_minimum_and_their_gradients_fuse_with_the_kernels_bits():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal(4000).astype(np.float32)
    xs[::7], xs[::11], xs[::13], xs[::19], xs[::23] = np.nan, 0.0, -0.0, np.inf, -np.inf
    ys = np.where(rng.random(4000) < 0.1, np.nan, rng.standard_normal(4000)).astype(np.float32)
    ys[::17] = xs[::17]  # ties
    x, y = mx.array(xs), mx.array(ys)
    f = mx.value_and_grad(lambda a, b: (mx.maximum(a, b) * 3 + mx.minimum(b, a)
                                        + mx.maximum(a, 0.0) * a).sum(), argnums=(0, 1))

    def step():
        v, (ga, gb) = f(x, y)
        return [v, ga, gb, mx.maximum(x, y), mx.minimum(x, 0.5)]

    first, *fused = _steps(step, 3)
    for later in fused:
        for a, b in zip(first, later):
            _same_bits(a, b)
    # the values MLX defines: NaN in the first argument wins, a tie gives the second
    want = np.where(np.isnan(xs) | (xs > ys), xs, ys)
    _same_bits(first[3], want)


def test_an_optimizer_update_is_one_loop_per_parameter():
    import ember.mlx.optimizers as optim
    from ember import native

    if not native.available():
        pytest.skip("no C compiler here (or EMBER_KERNELS=numpy): no fused loops")

    params = {"w": mx.ones((64, 32)), "b": mx.zeros((32,))}
    grads = {"w": mx.full((64, 32), 0.5), "b": mx.full((32,), -0.25)}
    opt = optim.AdamW(learning_rate=1e-2)
    for _ in range(6):  # (the step recurs from its second run on: fused by the third)
        params = opt.apply_gradients(grads, params)
        mx.eval(params, opt.state)
    (prog,) = [p for p in _lazy.world().programs.values() if p.runs >= 2
               and "fused C loop" in getattr(p.program, "code", "")][-1:]
    code = prog.program.code
    # b1 * m + (1 - b1) * g and the rest of each parameter's update meet in one loop
    loops = [line for line in code.splitlines() if "fused C loop" in line]
    big = [line for line in loops if "sqrt" in line]
    assert len(big) == 2 and all("mul" in line and "div" in line for line in big)
    _lazy.enabled[0] = False
    try:
        ref = {"w": mx.ones((64, 32)), "b": mx.zeros((32,))}
        opt2 = optim.AdamW(learning_rate=1e-2)
        for _ in range(6):
            ref = opt2.apply_gradients(grads, ref)
    finally:
        _lazy.enabled[0] = True
    for k in params:
        _same_bits(np.array(params[k]), np.array(ref[k]))


def test_a_first_run_frees_each_intermediate_after_its_last_read(monkeypatch):
    # the first run interprets the graph (no code written); it drops each intermediate
    # once the node that reads it last has run, as the generated program deletes it
    import weakref

    from ember.graph.program import lower_python

    x = mx.array(np.linspace(-1, 1, 50, dtype=np.float32))
    made, alive_at = [], []
    real_kernel_of = _lazy.kernel_of

    def watched(node):
        kernel, params = real_kernel_of(node)

        def run(*args, **kw):
            alive_at.append((node.op, [r() is not None for r in made]))
            out = kernel(*args, **kw)
            made.append(weakref.ref(out))
            return out
        return run, params

    monkeypatch.setattr(_lazy, "kernel_of", watched)

    def f():
        t = mx.exp(x)
        u = mx.sum(t)
        return [mx.log(t + u)]

    (first,) = _steps(f, 1)
    ops = [op for op, _ in alive_at]
    assert len(ops) == 4 and "exp" in ops[0] and "log" in ops[-1], ops
    assert alive_at[2][1][:2] == [True, True]  # the add reads exp's and sum's results
    assert alive_at[3][1][:3] == [False, False, True]  # then only the add's is needed
    monkeypatch.setattr(_lazy, "kernel_of", real_kernel_of)
    recurring = list(_lazy.world().programs.values())[-1]
    assert recurring.runs == 1 and recurring.program is None  # (nothing generated)
    prog = lower_python(recurring.graph)  # (what the profiler runs: the same deletions)
    dels = [line.strip() for line in prog.code.splitlines() if line.strip().startswith("del ")]
    assert dels
    _lazy.enabled[0] = False
    try:
        (eager,) = _steps(f, 1)
    finally:
        _lazy.enabled[0] = True
    _same_bits(first[0], eager[0])


def test_a_python_number_next_to_float32_gives_the_0d_arrays_bits():
    rng = np.random.default_rng(1)
    a = mx.array((rng.standard_normal(1000) * 10).astype(np.float32))
    for s in [0.9, 0.1, 1e-8, 3, -7, 1 / 3, 1e30, 2**24, 0.999]:
        s32 = mx.array(s, dtype=mx.float32)
        for f in (lambda p, q: p * q, lambda p, q: q * p, lambda p, q: p + q,
                  lambda p, q: q - p, lambda p, q: p - q):
            _same_bits(np.array(f(a, s)), np.array(f(a, s32)))


def test_a_reshape_after_a_kernel_that_keeps_a_transposed_layout():
    def f():
        t = mx.swapaxes(mx.arange(12.0).reshape(3, 4), 0, 1) * 2
        return [mx.reshape(mx.pad(t, [(1, 0), (0, 0)]), (15,)),
                mx.fft.fft(t, axis=0).reshape(-1)]

    lazy = _steps(f, 2)
    _lazy.enabled[0] = False
    try:
        eager = [np.array(a) for a in f()]
    finally:
        _lazy.enabled[0] = True
    for run in lazy:
        for a, b in zip(run, eager):
            np.testing.assert_array_equal(a, b)



def test_transcendentals_give_a_recurring_graphs_first_run_bits_on_every_run():
    # NOTE: the fused loops' C exp/log/tanh land some ulps from NumPy's kernels
    # (`deflower(ulps=)`); MLX's `f(x)` is `f(x)` on every call, so a recurring graph's
    # fused program leaves them to the kernels: run 1 (Python), 2 and 3 (fused) agree
    xs = np.linspace(-6, 6, 4001, dtype=np.float32)
    x = mx.array(xs)

    def f():
        a = x * 1.5
        return [mx.tanh(a) + mx.exp(a * 0.5), mx.sigmoid(a) * mx.log(mx.abs(a) + 1),
                mx.expm1(a * 0.25) - mx.log1p(mx.abs(a)), mx.softmax(a.reshape(-1, 1), axis=0)]

    first, *later = _steps(f, 3)
    for run in later:
        for a, b in zip(first, run):
            _same_bits(a, b)
    _lazy.enabled[0] = False
    try:
        eager = [np.array(a) for a in f()]
    finally:
        _lazy.enabled[0] = True
    for a, b in zip(first, eager):
        _same_bits(a, b)
    # MLX's own SIMD exp/log/tanh differ from NumPy's by a few ulps of the terms
    mlx = pytest.importorskip("mlx.core")
    a = mlx.array(xs) * 1.5
    theirs = mlx.tanh(a) + mlx.exp(a * 0.5)
    np.testing.assert_allclose(first[0], np.array(theirs), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("view", [
    lambda t: t.permute(0, 3, 1, 2), lambda t: t.reshape(2, -1), lambda t: t[1:, ::2],
    lambda t: t.transpose(1, 2).contiguous(), lambda t: t.unsqueeze(0).expand(2, -1, -1, -1, -1),
])
def test_an_eager_view_of_a_pending_slice_reads_the_slice(view):
    # a pending slice is laid out as its graph value (offset 0); computed, it lands at its
    # place in its base's storage: ember ops run outside the session (as MLX's layers
    # call ember's convolution) must view what it became
    data = mx.array(np.arange(16 * 4 * 3 * 2, dtype=np.float32).reshape(16, 4, 3, 2))
    mx.eval(data)
    pending = data[8:12]
    assert type(pending._t).__name__ == "LazyTensor"
    want = view(ember.tensor(np.array(data)[8:12])).numpy()
    np.testing.assert_array_equal(view(pending._t).numpy(), want)


def test_a_layer_reads_a_pending_slice_as_mlx_does():
    import ember.mlx.nn as nn
    mlx, mlx_nn = pytest.importorskip("mlx.core"), pytest.importorskip("mlx.nn")
    xs = np.random.default_rng(0).standard_normal((16, 6, 6, 2)).astype(np.float32)
    ours, theirs = nn.Conv2d(2, 4, 3, padding=1), mlx_nn.Conv2d(2, 4, 3, padding=1)
    ours.load_weights([(k, mx.array(np.array(v))) for k, v in theirs.parameters().items()])
    data = mx.array(xs)
    mx.eval(data)
    got = ours(data[8:12])  # the slice pending when the layer's convolution runs
    # (a 3x3x2 window summed in another order than MLX's: ulps of the terms)
    np.testing.assert_allclose(np.array(got), np.array(theirs(mlx.array(xs)[8:12])),
                               rtol=1e-5, atol=1e-6)


def _new_graph(i: int):
    """A graph of a new structure for each i (its shape grows, as a KV cache's does)."""
    x = mx.arange(i + 1, dtype=mx.float32)
    y = (x * 2 + 1) * x
    mx.eval(y)
    return y


def test_ops_run_at_once_while_graphs_keep_being_new_with_the_same_values():
    w = _lazy.world()
    for i in range(_lazy.MISSES):
        assert w.pause == 0
        y = _new_graph(i)
    # the fourth new graph in a row: the next ops run at once (about PAUSE graphs' worth)
    assert w.pause > 0 and w.span == 2 * _lazy.PAUSE
    x = mx.arange(9, dtype=mx.float32)
    z = x * 3 - 1
    assert _lazy.graph_size() == 0 and z._t.__class__ is ember.Tensor
    assert z.tolist() == [3.0 * v - 1 for v in range(9)]
    assert y.tolist() == [(2.0 * v + 1) * v for v in range(_lazy.MISSES)]
    # when the pause is over ops are recorded again, and two more new graphs pause twice
    # as long (the graphs between pauses stayed new)
    w.pause = 1
    x + 1
    assert w.pause == 0
    z = x * 5
    assert _lazy.graph_size() > 0
    mx.eval(z)
    assert w.pause == 0
    _new_graph(50)
    assert w.pause > 0 and w.span == 4 * _lazy.PAUSE
    assert z.tolist() == [5.0 * v for v in range(9)]


def test_a_graph_that_comes_back_ends_the_backing_off():
    w = _lazy.world()
    for i in range(_lazy.MISSES):
        _new_graph(i + 100)
    assert w.pause > 0
    w.pause = 0
    for _ in range(2):  # a structure first recorded after the pause, and then again
        _new_graph(7)
    assert (w.pause, w.misses, w.span) == (0, 0, _lazy.PAUSE)


def test_a_training_loop_keeps_recording():
    w = _lazy.world()
    _train(3 * _lazy.MISSES)
    assert w.pause == 0 and w.misses == 0
