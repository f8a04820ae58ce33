"""A graph whose every node has a C rule runs as one C function (graph/c_program.py): the
same calls as its Python program, so the same bits. Each case compares against eager, bit
for bit, and checks which program ran."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native, nn
from ember.graph.c_program import CProgram

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


def _x(seed, shape):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _programs(fn) -> list:
    return list(fn.programs.values())


def _step(model, opt, returns_loss: bool = False):
    """A training step on cross-entropy, returning its loss or nothing."""
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach() if returns_loss else None

    return step


def _train(make_opt, compiled: bool, steps: int = 6, pure: bool = False,
           returns_loss: bool = False):
    """(compiled function or None, the losses returned, the final parameters)."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
    step = _step(model, make_opt(model.parameters()), returns_loss)
    fn = ember.compile(step, options={"pure": pure}) if compiled else step
    losses = []
    for i in range(steps):
        out = fn(_x(i, (8, 12)), ember.tensor(np.random.default_rng(i).integers(0, 5, 8)))
        losses.append(None if out is None else out.item())
    return (fn if compiled else None), losses, [p.detach().numpy().copy()
                                               for p in model.parameters()]


OPTIMIZERS = {
    "sgd": lambda ps: ember.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                               weight_decay=0.01),
    "sgd_nesterov": lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                               maximize=True),
    "adam": lambda ps: ember.optim.Adam(ps, lr=1e-2),
    "adamw_amsgrad": lambda ps: ember.optim.AdamW(ps, lr=1e-2, amsgrad=True),
    "adam_l2": lambda ps: ember.optim.Adam(ps, lr=1e-2, weight_decay=0.1, maximize=True),
}


@pytest.mark.parametrize("opt", OPTIMIZERS)
@pytest.mark.parametrize("pure", [False, True], ids=["default", "pure"])
def test_a_training_step_is_one_c_call_with_eagers_bits(opt, pure):
    fn, _, params = _train(OPTIMIZERS[opt], True, pure=pure)
    _, _, eager = _train(OPTIMIZERS[opt], False)
    for p, q in zip(params, eager):
        np.testing.assert_array_equal(p.view(np.uint32), q.view(np.uint32))
    assert any(isinstance(p, CProgram) for p in _programs(fn))
    c = next(p for p in _programs(fn) if isinstance(p, CProgram))
    assert "ember_program" in c.c_source and "ember_gemm_f32" in c.c_source


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_of_every_layout_are_numpys(ta, tb, dtype):
    """a @ b with either operand transposed (a view): the gemm NumPy's matmul makes for
    that layout, so eager's bits; plus a bias added as addmm does."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 9) if not ta else (9, 7)).astype(dtype)
    b = rng.standard_normal((9, 5) if not tb else (5, 9)).astype(dtype)
    bias = rng.standard_normal(5).astype(dtype)

    def f(a, b, bias):
        a = a.t() if ta else a
        b = b.t() if tb else b
        return (a @ b).relu() * 2, ember.addmm(bias, a, b)

    args = [ember.tensor(v) for v in (a, b, bias)]
    fn = ember.compile(f)
    for _ in range(2):
        got = fn(*args)
    want = f(*args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert isinstance(_programs(fn)[0], CProgram)


def test_a_matrix_times_its_own_transpose_is_numpys_syrk():
    """x @ x.T at one address: NumPy multiplies it with syrk (other bits than gemm), so
    the C refuses before doing anything and the Python program runs it."""
    x = _x(0, (6, 4))
    fn = ember.compile(lambda x: (x @ x.t()) * 3)
    for _ in range(2):
        got = fn(x)
    program = _programs(fn)[0]
    assert isinstance(program, CProgram) and "syrk" in program.c_source
    np.testing.assert_array_equal(got.numpy(), ((x @ x.t()) * 3).numpy())


def test_a_target_out_of_range_raises_torchs_error():
    torch = pytest.importorskip("torch")
    w = _x(1, (4, 3)).requires_grad_()

    def step(x, y):
        loss = nn.functional.cross_entropy(x @ w, y)
        loss.backward()
        return w.grad

    fn = ember.compile(step)
    y = ember.tensor([0, 1, 2, 1, 0])
    for _ in range(2):
        w.grad = None
        fn(_x(2, (5, 4)), y)
    bad = ember.tensor([0, 1, 7, 1, 0])
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.zeros(5, 3), torch.tensor(bad.tolist()))
    w.grad = None
    with pytest.raises(IndexError) as ours:
        fn(_x(2, (5, 4)), bad)
    assert str(ours.value) == str(theirs.value)


def test_a_graph_with_a_node_without_a_c_rule_keeps_its_python_program():
    """cumsum has no C rule and the product reads it: not an epilogue either."""
    fn = ember.compile(lambda a, b: a.cumsum(1) @ b)
    x, w = _x(4, (5, 6)), _x(5, (6, 3))
    for _ in range(2):
        got = fn(x, w)
    np.testing.assert_array_equal(got.numpy(), (x.cumsum(1) @ w).numpy())
    assert not any(isinstance(p, CProgram) for p in _programs(fn))


def test_inputs_laid_out_otherwise_run_the_python_program():
    """The program checks its inputs' layouts (a caller handing other strides gets the
    Python program's results, never a misread)."""
    fn = ember.compile(lambda a, b: (a @ b) + 1)
    a, b = _x(5, (4, 6)), _x(6, (6, 3))
    fn(a, b)
    program = _programs(fn)[0]
    assert isinstance(program, CProgram)
    arrays = [a.numpy(), np.asfortranarray(b.numpy()), 1]  # (the 1: a number of the graph)
    (got,) = program.run(arrays)
    np.testing.assert_array_equal(got, a.numpy() @ b.numpy() + np.float32(1))


def test_results_are_new_memory_and_threads_have_their_own_workspace():
    """Values no caller sees live in a workspace each thread reuses; what a call returns
    is new memory (an earlier call's result is never overwritten), and two threads running
    the program at once each get their own answers."""
    import threading

    def f(a, b):
        h = (a @ b).relu()
        return h.sum(0), (h * 2) @ b.t()

    fn = ember.compile(f)
    xs = [(_x(10 + i, (200, 128)), _x(20 + i, (128, 128))) for i in range(4)]
    first = fn(*xs[0])
    kept = [t.numpy().copy() for t in first]
    fn(*xs[1])
    for t, k in zip(first, kept):
        np.testing.assert_array_equal(t.numpy(), k)
    assert isinstance(_programs(fn)[0], CProgram)
    errors = []

    def work(a, b):
        want = [t.numpy() for t in f(a, b)]
        for _ in range(150):
            got = [t.numpy() for t in fn(a, b)]
            if not all(np.array_equal(g, w) for g, w in zip(got, want)):
                errors.append("a thread read another's values")
                return

    threads = [threading.Thread(target=work, args=xs[i]) for i in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_returned_view_shares_its_bases_memory():
    """A graph may return a transposed view (a compiled model's forward returns the
    weights' `.t()` its backward reads): it is a view of the same memory, as eager's."""
    x, w = _x(7, (4, 5)), _x(8, (3, 5))

    def f(x, w):
        wt = w.t()
        return x @ wt, wt, (x * 2).permute(1, 0)

    fn = ember.compile(f)
    fn(x, w)
    y, wt, xp = fn(x, w)
    assert isinstance(_programs(fn)[0], CProgram)
    for got, want in zip((y, wt, xp), f(x, w)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.stride() == want.stride()
    w.add_(1)  # (in place: the view sees it)
    np.testing.assert_array_equal(wt.numpy(), w.numpy().T)
    assert wt.data_ptr() == w.data_ptr()


def test_negative_and_changing_numbers_reach_the_update():
    """A learning rate a scheduler moves, and a negative one (gradient ascent written as
    lr < 0 with maximize=False), with momentum: numbers of the graph, as eager uses them,
    in the update the C program writes out."""
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = nn.Linear(6, 3)
        opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)  # (then moved)
        step = _step(model, opt)
        fn = ember.compile(step) if compiled else step
        for i in range(6):
            opt.param_groups[0]["lr"] = -0.05 * (i + 1)
            fn(_x(i, (4, 6)), ember.tensor(np.random.default_rng(i).integers(0, 3, 4)))
        runs.append([p.detach().numpy().copy() for p in model.parameters()])
    for p, q in zip(*runs):
        np.testing.assert_array_equal(p, q)
    c = [p for p in _programs(fn) if isinstance(p, CProgram)]
    assert c and "sgd_step" in c[0].c_source and "b + g" in c[0].c_source  # (momentum)


@pytest.mark.parametrize("pure", [False, True], ids=["default", "pure"])
def test_a_step_that_returns_its_loss_is_one_c_call_and_the_loss_after_it(pure):
    """The loss's forward (nll_loss: no C rule) runs after the C call on the
    log-probabilities the C wrote (log_softmax has one); losses and parameters as eager."""
    sgd = OPTIMIZERS["sgd"]
    fn, losses, params = _train(sgd, True, pure=pure, returns_loss=True)
    _, eager_losses, eager_params = _train(sgd, False, returns_loss=True)
    assert losses == eager_losses
    for p, q in zip(params, eager_params):
        np.testing.assert_array_equal(p, q)
    c = [p for p in _programs(fn) if isinstance(p, CProgram)]
    assert c and any(p._epilogue for p in c) and "softmax_forward" in c[0].c_source


def test_a_bad_target_raises_before_the_update_as_eager():
    """A step that returns its loss, then a target out of range: the C program refuses
    before any work (its targets are checked first), so the Python program raises eager's
    error and no parameter moved."""
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    model = nn.Linear(6, 3)
    fn = ember.compile(_step(model, ember.optim.SGD(model.parameters(), lr=0.1), True))
    x = _x(0, (4, 6))
    for _ in range(3):
        fn(x, ember.tensor([0, 1, 2, 1]))
    assert any(p._epilogue for p in _programs(fn) if isinstance(p, CProgram))
    before = [p.detach().numpy().copy() for p in model.parameters()]
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 5, 2, 1]))
    with pytest.raises(IndexError) as ours:
        fn(x, ember.tensor([0, 5, 2, 1]))
    assert str(ours.value) == str(theirs.value)
    for p, q in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), q)


def test_a_reshaping_view_of_a_dense_value_is_its_pointer():
    """`view` between two C orders (a loss reshaped to 0-d, a product flattened) is the
    same memory in the same order: the program stays one C call, with eager's bits."""
    x, w = _x(9, (4, 5)), _x(10, (5, 3))

    def f(x, w):
        y = (x @ w).view(-1)
        return y * 2, y.view(2, 6) + 1

    fn = ember.compile(f)
    fn(x, w)
    got = fn(x, w)
    program = _programs(fn)[0]
    assert isinstance(program, CProgram) and "view.view" in program.c_source
    for g, want in zip(got, f(x, w)):
        np.testing.assert_array_equal(g.numpy(), want.numpy())
        assert g.shape == want.shape
