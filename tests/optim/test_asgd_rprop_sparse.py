"""ASGD, Rprop and SparseAdam against torch step by step (bit for bit on the CPU, but for
ASGD's last bits: see `_close`), plus the
optimizer shell's torch behaviours around them: numbers loaded as tensor steps, tensor
learning rates under schedulers, a differentiable learning rate, and error messages."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, torch_sqrt_off

STEPS = 30


def _trajectory(lib, name, kwargs, dtype, steps=STEPS, seed=0):
    """Two parameters fed the same seeded gradients (every third step made positive, so
    Rprop sees signs both kept and flipped); the parameters after each step and the
    optimizer."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal((4, 5)), rng.standard_normal(7)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(steps)]
    d = getattr(lib, dtype)
    params = [lib.tensor(a, dtype=d, requires_grad=True) for a in init]
    opt = getattr(lib.optim, name)(params, **kwargs)
    out = []
    for s in range(steps):
        for p, g in zip(params, grads[s]):
            p.grad = lib.tensor(g if s % 3 else np.abs(g), dtype=d)
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out, opt


CASES = [
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.75, t0=5)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, t0=3, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.75, t0=5, foreach=True)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, t0=3, weight_decay=0.1, maximize=True, foreach=True)),
    ("ASGD", dict()),
    ("Rprop", dict(lr=1e-2, etas=(0.4, 1.3), step_sizes=(1e-5, 0.5))),
    ("Rprop", dict(lr=1e-2, maximize=True)),
    ("Rprop", dict(lr=1e-2, etas=(0.3, 1.7), foreach=True, maximize=True)),
]


def _close(x, y, name: str, what: str, foreach: bool = False) -> None:
    """Rprop and SparseAdam are torch's bits. ASGD's update rounds once more than torch's
    CPU kernels (they fuse `add(alpha=)` and `addcmul` into one multiply-add; ember's ops
    round the product first): a few ulps of the O(1) parameters after 30 steps, so 1e-6
    (float32) or 1e-14 (float64), relative or absolute (a cancelled small entry). foreach
    ASGD's eta is float32 pow on its float32 step counter, whatever the parameters' dtype
    (see `test_foreach_asgd_eta_with_default_lambd`): float32's 1e-6 there."""
    if name != "ASGD":
        np.testing.assert_array_equal(x, y, err_msg=what)
    else:
        tol = 1e-6 if x.dtype == np.float32 or foreach else 1e-14
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, err_msg=what)


def _ids(case):
    return case[0] + "-" + ",".join(f"{k}={v}" for k, v in case[1].items())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_trajectory_and_state_match_torch(case, dtype):
    name, kwargs = case
    te, oe = _trajectory(ember, name, kwargs, dtype)
    tt, ot = _trajectory(torch, name, kwargs, dtype)
    foreach = kwargs.get("foreach", False)
    for s, (a, b) in enumerate(zip(te, tt)):
        for x, y in zip(a, b):
            _close(x, y, name, f"step {s}", foreach)
    se, st = oe.state_dict(), ot.state_dict()
    assert se["param_groups"] == st["param_groups"]
    for k in st["state"]:
        assert list(se["state"][k]) == list(st["state"][k])
        for key, v in st["state"][k].items():
            e = se["state"][k][key]
            assert str(e.dtype).split(".")[1] == str(v.dtype).split(".")[1], key
            _close(e.numpy(), v.numpy(), name, key, foreach)
    assert repr(oe) == repr(ot)


def test_foreach_asgd_eta_with_default_lambd():
    def go(lib):
        p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.ASGD([p], lr=0.05, foreach=True)
        p.grad = lib.ones(2, dtype=lib.float64)
        opt.step()
        return opt.state[p]["eta"].item()

    # foreach ASGD's eta is float32 arithmetic on its float32 step counter, through pow:
    # 1.0000050067901611 ** 0.75 is NumPy's 1.0000038 on the AVX-512 machines, torch's
    # (glibc powf) 1.0000037, and both are 1.0000037 on an AMD EPYC Zen 3; an ulp of the
    # power near 1 is 1.6 ulps of 0.05 / power, so the quotients may be 2 apart
    assert_ulp(np.float32(_outcome(ember, go)), np.float32(_outcome(torch, go)), 2,
               "ember's float32 pow is NumPy's SIMD loop, torch's 0-d one glibc's powf")


@pytest.mark.parametrize("name", ["ASGD", "Rprop"])
def test_state_dict_resumes_identically(name):
    straight, _ = _trajectory(ember, name, dict(lr=0.05), "float32", steps=12)
    _, half = _trajectory(ember, name, dict(lr=0.05), "float32", steps=6)
    fresh = ember.optim.ASGD if name == "ASGD" else ember.optim.Rprop
    params = [p for g in half.param_groups for p in g["params"]]
    again = fresh(params, lr=0.05)
    again.load_state_dict(half.state_dict())
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((4, 5)), rng.standard_normal(7)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(12)]
    for s in range(6, 12):
        for p, g in zip(params, grads[s]):
            p.grad = ember.tensor(g if s % 3 else np.abs(g), dtype=ember.float32)
        again.step()
    for a, b in zip(straight[-1], params):
        np.testing.assert_array_equal(a, b.detach().numpy())


def _outcome(lib, fn):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)


def _same(fn):
    assert _outcome(ember, fn) == _outcome(torch, fn)


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.Rprop([p], etas=(1.2, 0.5)),
    lambda lib, p: lib.optim.Rprop([p], lr=-1),
    lambda lib, p: lib.optim.ASGD([p], lr=-1),
    lambda lib, p: lib.optim.ASGD([p], weight_decay=-1),
    lambda lib, p: lib.optim.ASGD([p], lr=lib.tensor([0.1, 0.2])),
    lambda lib, p: lib.optim.SparseAdam([p], lr=0),
    lambda lib, p: lib.optim.SparseAdam([p], eps=0),
    lambda lib, p: lib.optim.SparseAdam([p], betas=(1.0, 0.5)),
])
def test_constructor_errors_match_torch(make):
    _same(lambda lib: repr(make(lib, lib.nn.Parameter(lib.ones(3)))))


@pytest.mark.parametrize("name", ["ASGD", "Rprop"])
@pytest.mark.parametrize("kw", [dict(capturable=True), dict(capturable=True, foreach=True),
                                dict(foreach=True, differentiable=True)])
def test_refused_flags_raise_after_making_state(name, kw):
    def go(lib):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        opt = getattr(lib.optim, name)([p], **kw)
        try:
            opt.step()
        except AssertionError as e:
            return str(e), sorted(opt.state[p])
        return None

    _same(go)


@pytest.mark.parametrize("name,kw", [("ASGD", dict(t0=1)), ("Rprop", {})])
def test_differentiable_step_records_the_update(name, kw):
    def go(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        q = w * 1.0
        q.retain_grad()
        opt = getattr(lib.optim, name)([q], lr=0.1, differentiable=True, **kw)
        for i in range(3):
            q.grad = lib.tensor([0.3, -0.1, 0.2]) * (i - 0.5)
            opt.step()
        q.sum().backward()
        return q.detach().tolist(), w.grad.tolist(), type(q.grad_fn).__name__

    _same(go)


@pytest.mark.parametrize("name", ["ASGD", "Rprop"])
@pytest.mark.parametrize("foreach", [False, True])
def test_tensor_lr(name, foreach):
    def go(lib):
        q = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
        opt = getattr(lib.optim, name)([q], lr=lib.tensor(0.05), foreach=foreach)
        for i in range(4):
            q.grad = lib.tensor([0.3, -0.1, 0.2]) * (i - 1.5)
            opt.step()
        return q.detach().tolist(), {k: v.tolist() for k, v in opt.state[q].items()}

    _same(go)


# -- SparseAdam ------------------------------------------------------------------------------


def _sparse_run(lib, dtype, maximize, steps=12):
    rng = np.random.default_rng(1)
    d = getattr(lib, dtype)
    p = lib.nn.Parameter(lib.tensor(rng.standard_normal((10, 4)), dtype=d))
    opt = lib.optim.SparseAdam([p], lr=0.05, betas=(0.8, 0.9), maximize=maximize)
    out = []
    for _ in range(steps):
        idx = rng.integers(0, 10, size=5)  # (repeats: the gradient is coalesced)
        vals = lib.tensor(rng.standard_normal((5, 4)), dtype=d)
        p.grad = lib.sparse_coo_tensor(lib.tensor(idx[None]), vals, (10, 4))
        opt.step()
        out.append([p.detach().numpy().copy()]
                   + [opt.state[p][k].numpy().copy() for k in ("exp_avg", "exp_avg_sq")])
    return out, opt


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_matches_torch_bitwise(dtype, maximize):
    (te, oe), (tt, ot) = _sparse_run(ember, dtype, maximize), _sparse_run(torch, dtype, maximize)
    for a, b in zip(te, tt):
        for x, y in zip(a, b):
            if torch_sqrt_off(dtype) < 0.01:
                np.testing.assert_array_equal(x, y)
            else:  # (an element collects an ulp where torch's own sqrt is off IEEE's)
                assert_ulp(x, y, 8, "torch's vectorised sqrt, off IEEE's on this CPU",
                           scale=np.maximum(np.abs(y), 0.1))
    se, st = oe.state_dict(), ot.state_dict()
    assert se["state"][0]["step"] == st["state"][0]["step"] == 12  # (a Python int)
    assert se["param_groups"] == st["param_groups"]
    assert repr(oe) == repr(ot)


def test_sparse_adam_refuses_a_dense_gradient():
    def go(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SparseAdam([p])
        p.sum().backward()
        opt.step()

    _same(go)


def test_sparse_adam_on_a_sparse_embedding_updates_its_rows_only():
    """Embedding(sparse=True) gives a sparse gradient: the rows it looked up update as
    torch's, bit for bit, the rest stay."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((10, 4)).astype(np.float32)
    out = {}
    for lib in (ember, torch):
        emb = lib.nn.Embedding(10, 4, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(list(emb.parameters()), lr=0.05)
        idx = lib.tensor([[1, 2, 4], [4, 3, 9]])
        for _ in range(5):
            opt.zero_grad()
            (emb(idx) * lib.tensor([1.0, -2.0, 0.5, 3.0])).sum().backward()
            opt.step()
        out[lib.__name__] = emb.weight.detach().numpy(), opt.state[emb.weight]["step"]
    np.testing.assert_array_equal(out["ember"][0], out["torch"][0])
    np.testing.assert_array_equal(out["ember"][0][[0, 5, 6, 7, 8]], w0[[0, 5, 6, 7, 8]])
    assert out["ember"][1] == out["torch"][1] == 5


# -- the shell: loaded steps, tensor learning rates, messages -------------------------------


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
@pytest.mark.parametrize("name,kw", [
    ("Adam", {}), ("Adam", dict(fused=True)), ("AdamW", {}), ("Adamax", {}), ("NAdam", {}),
    ("RAdam", {}), ("RMSprop", {}), ("Adagrad", {}), ("Adagrad", dict(fused=True)),
    ("Adadelta", {}), ("ASGD", {}), ("Rprop", {}), ("SGD", dict(momentum=0.9)),
    ("SparseAdam", {})])
def test_loaded_number_steps_become_tensors_as_in_torch(name, kw):
    def go(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = getattr(lib.optim, name)([p], **kw)
        p.grad = (lib.sparse_coo_tensor(lib.tensor([[0, 2]]), lib.tensor([1.0, 2.0]), (3,))
                  if name == "SparseAdam" else lib.ones(3))
        opt.step()
        sd = opt.state_dict()
        for k in sd["state"][0]:
            if k in ("step", "mu_product", "eta", "mu"):
                sd["state"][0][k] = 5 if k == "step" else 0.5
        again = getattr(lib.optim, name)([p], **kw)
        again.load_state_dict(sd)
        return {k: (repr(v) if not hasattr(v, "dim") else (v.tolist(), str(v.dtype)[-7:]))
                for k, v in again.state[p].items()
                if not hasattr(v, "dim") or v.dim() == 0}

    _same(go)


SCHEDULERS = [
    lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=6, cycle_momentum=False),
    lambda L, o: L.ExponentialLR(o, 0.5),
    lambda L, o: L.StepLR(o, 2, gamma=0.5),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 2),
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, 2, cycle_momentum=False),
    lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [2]),
]


@pytest.mark.parametrize("make", SCHEDULERS)
def test_schedulers_fill_a_tensor_lr_in_place(make):
    def go(lib):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = lib.optim.Adam([p], lr=lib.tensor(0.1))
        lr0 = opt.param_groups[0]["lr"]
        sched = make(lib.optim.lr_scheduler, opt)
        seen = []
        for _ in range(4):
            p.grad = lib.ones(2)
            opt.step()
            sched.step()
            seen.append(opt.param_groups[0]["lr"].item())
        last = sched.get_last_lr()
        return (seen, opt.param_groups[0]["lr"] is lr0, last[0].item(), last[0] is lr0,
                opt.param_groups[0]["initial_lr"] is lr0, p.detach().tolist())

    _same(go)


def test_reduce_lr_on_plateau_fills_a_tensor_lr_in_place():
    def go(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=lib.tensor(0.1))
        lr0 = opt.param_groups[0]["lr"]
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
        for m in (1.0, 2.0, 3.0, 4.0):
            sched.step(m)
        return opt.param_groups[0]["lr"].item(), opt.param_groups[0]["lr"] is lr0

    _same(go)


def test_adam_refuses_a_tensor_lr_with_foreach():
    _same(lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.zeros(2))], lr=lib.tensor(0.01),
                                     foreach=True))


def test_sgd_with_a_differentiable_tensor_lr():
    def go(lib):
        w = lib.ones(3, requires_grad=True)
        lr = lib.tensor(0.1, requires_grad=True)
        p = w.clone()
        p.retain_grad()
        opt = lib.optim.SGD([p], lr=lr, differentiable=True)
        p.grad = lib.ones(3)
        opt.step()
        p.sum().backward()
        return p.detach().tolist(), type(p.grad_fn).__name__, lr.grad.item(), w.grad.tolist()

    assert _outcome(ember, go)[2] == -3.0
    _same(go)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.optim.SGD([0.5, 1.5], lr=0.1),
    lambda lib: lib.optim.AdamW(lib.nn.Linear(2, 2).named_parameters()).add_param_group(
        {"params": [lib.nn.Parameter(lib.ones(1))]}),
    lambda lib: lib.optim.AdamW(lib.nn.Linear(2, 2).parameters()).add_param_group(
        {"params": [("x", lib.nn.Parameter(lib.ones(1)))]}),
    lambda lib: lib.optim.SGD([("a", lib.nn.Parameter(lib.ones(1))),
                               lib.nn.Parameter(lib.ones(1))], lr=0.1),
    lambda lib: lib.optim.lr_scheduler.StepLR(
        lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1), 2, last_epoch=3),
])
def test_messages_match_torch(fn):
    _same(fn)


@pytest.mark.parametrize("order", ["scheduler_first", "optimizer_replaced", "right"])
def test_scheduler_warns_as_torch_about_step_order(order):
    import warnings

    def warned(L):
        opt = L.optim.SGD(L.nn.Linear(2, 1).parameters(), lr=0.1)
        sched = L.optim.lr_scheduler.StepLR(opt, 1)
        if order == "optimizer_replaced":
            opt.step = lambda *a, **k: None
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            if order == "right":
                opt.step()
            sched.step()
            sched.step()
        return [str(w.message) for w in got]

    assert warned(ember) == warned(torch)
    assert (len(warned(ember)) == 0) == (order == "right")
