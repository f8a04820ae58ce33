"""ember.compile keeps eager's (and PyTorch's) semantics around the numbers: edge values
through fused chains, what a new shape, mode or Python number does, graph breaks with
eager's results, Python side effects on every call, fullgraph's exception, the
OptimizedModule's names, dropout's random stream, backend="eager", nested compiled calls.

Already in tests/graph/test_compiled.py and not repeated here: the recompile limit's
fallback and its one warning for a function (via cache_size_limit), side effects of print
and list.append in a compiled function, a Linear's OptimizedModule names, F.dropout's mask
under one seed, a new shape and eval() on a CNN, explain and TORCH_LOGS.

Run a second time with EMBER_KERNELS=numpy by the Makefile (no C loops then).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn

# --- edge values through fused chains --------------------------------------------------


def _both(fn, values, dtype=np.float32, fused=()):
    """fn compiled and eager on ember, and on torch, for the same input; checks that the
    compiled program computes the C functions named in `fused` in a fused loop (where
    native kernels run)."""
    x = np.array(values, dtype=dtype)
    cf = ember.compile(fn)
    got = cf(ember.tensor(x)).numpy()
    want = fn(ember.tensor(x)).numpy()
    oracle = fn(torch.tensor(x)).numpy()
    source = "".join(getattr(p, "c_source", "") for p in cf.programs.values())
    for name in fused:
        assert f"{name}(" in source or not ember.native.available()
    return got, want, oracle


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_of_large_negatives_is_zero(dtype):
    # (x * 1 + 0: a chain, so the sigmoid is fused with its neighbours where C runs)
    big = [-100.0, -89.0, -88.8, -1e4, -745.5, -710.0, -np.inf]
    got, want, oracle = _both(lambda x: (x * 1.0 + 0.0).sigmoid() * 1.0, big, dtype,
                                  fused=["ember_sigmoid_t"])
    if dtype == np.float32:  # e^-x overflows for all of them: exactly +0 everywhere
        assert (got == 0).all() and not np.signbit(got).any()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(want, oracle)
    else:  # e^-x overflows from -709.78 on (exactly +0); the others are tiny, not 0
        assert (got[3:] == 0).all() and (want[3:] == 0).all() and (oracle[3:] == 0).all()
        assert (got[:3] > 0).all()
        # (a fused transcendental, and torch's vectorised exp: a few ulps apart)
        np.testing.assert_allclose(got, want, rtol=1e-13)
        np.testing.assert_allclose(want, oracle, rtol=1e-13)
    got, want, _ = _both(lambda x: (x * 1.0).sigmoid(), [100.0, 1e4, np.inf, 0.0], dtype,
                       fused=["ember_sigmoid_t"])
    np.testing.assert_array_equal(got, want)
    assert got.tolist() == [1.0, 1.0, 1.0, 0.5]


def test_exp_overflows_to_inf_in_float32():
    vals = [88.0, 88.72, 88.8, 89.0, 100.0, 1e30, np.inf, -np.inf, -104.0, -200.0]
    got, want, oracle = _both(lambda x: (x + 0.0).exp() * 1.0, vals, fused=["ember_exp_t"])
    assert got.dtype == np.float32
    assert np.isposinf(got[2:7]).all() and (got[7:] == 0).all()
    # finite results: exp is a fused transcendental (a few ulps from NumPy's, see
    # deflower(exp, ulps=1)), so compare those within float32's relative 1e-6
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.isinf(want), np.isinf(oracle))
    np.testing.assert_allclose(got[:2], want[:2], rtol=1e-6)
    # exp then log: overflow stays inf, as eager's
    got, want, _ = _both(lambda x: (x * 2.0).exp().log(), [50.0, 44.0, 45.0],
                       fused=["ember_exp_t", "ember_log_t"])
    assert np.isposinf(got[0]) and np.isposinf(want[0])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_nan_propagates_through_a_fused_chain():
    vals = [np.nan, 1.0, -np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0]

    def chain(x):
        y = (x * 2.0 + 1.0).relu()  # relu(NaN) is NaN, as np.maximum and PyTorch
        z = y - y * 1.0  # inf - inf is NaN
        return (z / (x * 0.0 + 1.0)).abs() + (x * 0.0)  # inf * 0 is NaN

    got, want, oracle = _both(chain, vals, fused=["EMBER_ABS"])
    np.testing.assert_array_equal(got, want)  # (assert_array_equal: NaN matches NaN)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(oracle))
    np.testing.assert_array_equal(np.isnan(got), [1, 0, 1, 1, 1, 0, 0, 0])
    # a NaN through tanh and sqrt (fused too)
    got, want, _ = _both(lambda x: (x + 0.0).tanh().abs().sqrt() * 1.0, [np.nan, -1.0, 4.0],
                       fused=["ember_tanh_t", "EMBER_SQRT"])
    np.testing.assert_array_equal(np.isnan(got), [True, False, False])
    np.testing.assert_allclose(got, want, rtol=1e-6)  # (tanh: a fused transcendental)
    got, want, _ = _both(lambda x: (x - 1.0).sqrt() + (x - 1.0).log(), [0.5, 1.0, 2.0],
                       fused=["EMBER_SQRT", "ember_log_t"])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0]) and np.isneginf(got[1]) and got[2] == want[2]


# --- retracing ------------------------------------------------------------------------


def test_a_new_python_number_gives_eagers_result():
    """A float that reaches an op is a runtime input (one program for every value); a
    number that decides a shape or a structure records another graph per value."""

    def f(x, scale, k):
        return (x * scale + 1.0).relu().narrow(0, 0, k).sum(0) * scale

    cf = ember.compile(f)
    x = ember.randn(6, 3)
    for scale, k in [(2.0, 3), (-0.5, 3), (1e-3, 3), (3.0, 5), (3.0, 2), (-2.0, 5)]:
        np.testing.assert_array_equal(cf(x, scale, k).numpy(), f(x, scale, k).numpy())
    assert len(cf.graphs) == 3  # one per k
    assert all("params or Python scalars" in r for r in cf.recompiles)


def test_train_and_eval_switch_back_and_forth():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2))
    cm = ember.compile(model)
    x = ember.randn(5, 4)
    for mode in ("train", "eval", "train", "eval"):
        getattr(model, mode)()
        ember.manual_seed(9)
        got = cm(x)
        ember.manual_seed(9)
        want = model(x)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert len(cm._compiled_fn.graphs) == 2  # the train and the eval graph, each reused
    assert model[1].num_batches_tracked.item() == 4  # (two compiled, two eager train calls)


def test_recompile_limit_then_eager_results_for_a_model():
    """torch._dynamo.config.recompile_limit (set by that name): past it, new graphs run op
    by op with eager's numbers and gradients, and one warning says so."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    cm = ember.compile(model)
    old = ember._dynamo.config.recompile_limit
    ember._dynamo.config.recompile_limit = 1
    try:
        assert ember._dynamo.config.cache_size_limit == 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in (2, 3, 4, 5):
                x = ember.randn(n, 3)
                model.zero_grad()
                cm(x).sum().backward()
                got = [p.grad.clone() for p in model.parameters()]
                model.zero_grad()
                model(x).sum().backward()
                for a, p in zip(got, model.parameters()):
                    # (within the first program a fused tanh may round otherwise)
                    np.testing.assert_allclose(a.numpy(), p.grad.numpy(), rtol=1e-5,
                                               atol=1e-6)
    finally:
        ember._dynamo.config.recompile_limit = old
    msgs = [str(w.message) for w in caught if "recompile limit" in str(w.message)]
    assert len(msgs) == 1 and "changed shape from [2, 3] to [3, 3]" in msgs[0]
    assert "Sequential.forward reached" in msgs[0]  # (PyTorch names the function too)
    # the backward of a compiled forward is compiled with it, not a recompile (PyTorch's
    # AOTAutograd): the first shape's two graphs, then nothing new past the limit
    fn = cm._compiled_fn
    assert len(fn.graphs) == 2 and fn.recompiles == []


# --- graph breaks ----------------------------------------------------------------------


def _item(y):
    return y * y.sum().item()


def _bool(y):
    return y + 1 if bool(y.max() > 0.5) else y - 1


def _print(y):
    print("value:", y)
    return y * 3


def _nonzero(y):
    idx = (y > 0).nonzero()
    return y.sum() + idx.sum()


def _mask(y):
    return y[y > 0].sum() * y


def _tolist(y):
    return y * len([v for v in y.flatten().tolist() if v > 0])


def _float(y):
    return y * float(y.sum())


def _unique(y):
    return y * y.unique().numel()


BREAKS = {".item()": _item, "bool()": _bool, "print": _print,
          "dynamic shape operator": _nonzero, "mask": _mask, "tolist": _tolist,
          "float": _float, "unique": _unique}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_graph_break_gives_eagers_result_and_gradients(name, capsys):
    body = BREAKS[name]

    def f(x):
        y = (x * 2.0 + 0.5).relu()
        return body(y).sum() * 2

    cf = ember.compile(f)
    for seed in (0, 1):
        ember.manual_seed(seed)
        x = ember.randn(3, 4, requires_grad=True)
        got = cf(x)
        got.backward()
        g = x.grad.clone()
        x.grad = None
        want = f(x)
        want.backward()
        assert got.item() == want.item()
        np.testing.assert_array_equal(g.numpy(), x.grad.numpy())
    assert len(cf.breaks) >= 2
    reason = {"mask": "dynamic shape operator", "unique": "dynamic shape operator",
              "tolist": ".tolist()", "float": ".item()"}.get(name, name)
    assert cf.breaks[0].reason == reason
    assert "test_compiled_semantics.py" in cf.breaks[0].op
    if name == "print":
        out = capsys.readouterr().out
        assert out.count("value: tensor(") == 4  # two compiled calls, two eager


@pytest.mark.parametrize("name", list(BREAKS))
def test_fullgraph_raises_what_pytorch_raises(name):
    """fullgraph=True against torch.compile(fullgraph=True) on the same code: Unsupported
    for print and tolist, UserError for control flow on a value, and nothing where PyTorch
    traces the value symbolically (.item() into arithmetic, nonzero, a bool mask index),
    where ember breaks the graph and gives eager's result."""
    body = BREAKS[name]

    def f(x):
        return body(x * 2.0 - 1.0).sum()

    torch._dynamo.reset()
    try:
        want, expected = torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2, 3)), None
    except torch._dynamo.exc.TorchDynamoException as e:
        want, expected = None, type(e)
    finally:
        torch._dynamo.reset()
    cf = ember.compile(f, fullgraph=True)
    if expected is None:
        assert cf(ember.ones(2, 3)).item() == want.item()
        assert cf.breaks  # (ember did break the graph there)
    else:
        mine = getattr(ember._dynamo.exc, expected.__name__)
        with pytest.raises(mine, match="graph break"):
            cf(ember.ones(2, 3))
        assert issubclass(mine, ember._dynamo.exc.TorchDynamoException)
        assert issubclass(mine, RuntimeError) and issubclass(expected, RuntimeError)


def test_fullgraph_without_a_break_runs():
    @ember.compile(fullgraph=True)
    def f(x):
        return (x.exp() + 1).log().sum()

    x = ember.randn(5)
    np.testing.assert_allclose(f(x).item(), f.fn(x).item(), rtol=1e-6)  # (fused exp, log)
    assert f.breaks == []


def test_a_compiled_function_called_from_compiled_code_joins_its_graph():
    """A compiled function or an in-place compiled submodule called inside a compiled call
    is inlined (as PyTorch does): one graph, no break, eager's values and gradients."""
    ember.manual_seed(0)
    block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    block.compile()

    @ember.compile
    def inner(x):
        return (x * 2.0).sin()

    @ember.compile
    def outer(x):
        return block(inner(x + 1.0)).sum()

    x = ember.randn(3, 4, requires_grad=True)
    got = outer(x)
    got.backward()
    g = x.grad.clone()
    assert outer.breaks == [] and len(outer.graphs) == 2  # (its forward and backward)
    assert inner.calls == 0 and not inner.graphs
    x.grad = None
    ember.compiler.set_stance("force_eager")  # (the reference: everything eager)
    try:
        want = outer(x)
        want.backward()
    finally:
        ember.compiler.set_stance("default")
    assert got.item() == want.item()
    np.testing.assert_array_equal(g.numpy(), x.grad.numpy())


# --- Python side effects -----------------------------------------------------------------


class _Counting(nn.Module):
    """A module that changes its own Python state on every call."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.calls = 0
        self.scale = 1.0
        self.seen = []

    def forward(self, x):
        self.calls += 1
        self.scale *= 2.0
        self.seen.append(tuple(x.shape))
        return self.lin(x) * self.scale


def test_attribute_mutation_happens_on_every_call():
    ember.manual_seed(0)
    m = _Counting()
    cm = ember.compile(m)
    x = ember.randn(2, 3)
    outs = [cm(x) for _ in range(4)]
    assert m.calls == 4 and m.scale == 16.0 and m.seen == [(2, 3)] * 4
    base = m.lin(x)
    for k, out in enumerate(outs, 1):
        np.testing.assert_array_equal(out.detach().numpy(), (base * 2.0 ** k).detach().numpy())
    assert len(cm._compiled_fn.graphs) == 1  # the new scale is a runtime number
    # the mutation is visible through the wrapper as on the original module
    assert cm.calls == 4 and cm.scale == 16.0


def test_pure_mode_does_not_replay_random_draws():
    """Pure mode replays a call without its Python; a call that draws random numbers is
    traced each time instead (a replay would repeat the first call's numbers)."""
    ember.manual_seed(0)
    drop = nn.Dropout(0.5)

    @ember.compile(options={"pure": True})
    def f(x):
        return drop(x) * 2

    x = ember.ones(32)
    ember.manual_seed(4)
    got = [f(x).numpy() for _ in range(4)]
    ember.manual_seed(4)
    want = [f.fn(x).numpy() for _ in range(4)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert f.replayed == 0 and any("random" in why for why in f.not_replayed)
    assert not np.array_equal(got[0], got[1])


# --- the wrapper's names --------------------------------------------------------------------


def _cnn(nn_):
    return nn_.Sequential(nn_.Conv2d(1, 2, 3), nn_.BatchNorm2d(2), nn_.ReLU(),
                          nn_.Sequential(nn_.Flatten(), nn_.Linear(8, 3)))


def test_orig_mod_and_state_dict_keys_are_pytorchs():
    e_mod, t_mod = _cnn(nn), _cnn(torch.nn)
    e, t = ember.compile(e_mod), torch.compile(t_mod)  # (torch compiles when first called)
    assert e._orig_mod is e_mod and t._orig_mod is t_mod
    assert list(e.state_dict()) == list(t.state_dict())
    assert list(e.state_dict())[0] == "_orig_mod.0.weight"
    assert [k for k, _ in e.named_parameters()] == [k for k, _ in t.named_parameters()]
    assert [k for k, _ in e.named_buffers()] == [k for k, _ in t.named_buffers()]
    assert [k for k, _ in e.named_modules()] == [k for k, _ in t.named_modules()]
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())  # the original's: unprefixed
    # a compiled module's state loads into another compiled module, and the original's
    # keys do not (as PyTorch: strict loading names the missing `_orig_mod.` keys)
    other = ember.compile(_cnn(nn))
    other.load_state_dict(e.state_dict())
    np.testing.assert_array_equal(other._orig_mod[0].weight.detach().numpy(),
                                  e_mod[0].weight.detach().numpy())
    with pytest.raises(RuntimeError, match="Missing key"):
        other.load_state_dict(e_mod.state_dict())
    with pytest.raises(RuntimeError, match="Missing key"):
        torch.compile(_cnn(torch.nn)).load_state_dict(t_mod.state_dict())


def test_dropout_in_a_compiled_module_follows_eagers_stream():
    """nn.Dropout inside a compiled module: the same masks as eager under one seed, and the
    generator is left where eager leaves it (the next draw is the same)."""
    model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.4), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(16, 2))
    cm = ember.compile(model)
    x = ember.randn(4, 6)
    ember.manual_seed(21)
    got = [cm(x).detach().numpy() for _ in range(3)]
    after_c = ember.rand(5).numpy()
    ember.manual_seed(21)
    want = [model(x).detach().numpy() for _ in range(3)]
    after_e = ember.rand(5).numpy()
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after_c, after_e)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_backends_give_eagers_numbers(backend):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                          nn.Linear(12, 2))
    x = ember.randn(2, 1, 4, 4)
    cm = ember.compile(model, backend=backend)
    got = cm(x)
    got.sum().backward()
    g = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x)
    want.sum().backward()
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    for a, p in zip(g, model.parameters()):
        np.testing.assert_array_equal(a.numpy(), p.grad.numpy())
    fused = any(hasattr(p, "c_source") for p in cm._compiled_fn.programs.values())
    assert fused == (backend == "inductor" and ember.native.available())


def test_a_reshape_of_a_kernel_result_laid_out_otherwise_than_recorded():
    # (an FFT of a transposed input comes back column-major where its meta rule says
    # row-major: the recorded reshape was a view, at run time the values are copied)
    @ember.compile
    def f(x):
        y = ember.nn.functional.pad(x.t() * 2, (0, 0, 1, 0))
        return y.reshape(15), ember.fft.fft(x.t() * 2, dim=0).reshape(-1), \
            ember.fft.rfft(x.t() * 1, dim=0).reshape(-1)

    x = ember.arange(12.0).reshape(3, 4)
    for _ in range(2):
        for got, want in zip(f(x), f.fn(x)):
            assert got.shape == want.shape and bool((got == want).all())
    assert ember.nn.functional.pad(x.t(), (0, 0, 1, 0)).stride() == (3, 1)  # as PyTorch's
