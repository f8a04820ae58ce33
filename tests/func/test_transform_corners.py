"""Function transforms in corners real programs reach, against torch.func: `new_*`
factories under vmap, `make_dual`'s layout rule, products whose node names read the ranks
vmap batches (vmap of vjp then jvp, nested vmap of the add* family), and `functional_call`
writing a reassigned buffer back into the caller's dict."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwad
import torch.func as tfunc

import ember
import ember.autograd.forward_ad as efwad
import ember.func as efunc

from helpers import assert_same, copy_module_state, same_error

FUNC = {ember: efunc, torch: tfunc}
FWAD = {ember: efwad, torch: tfwad}
X = np.arange(6.0).reshape(2, 3)


def both(call):
    return call(ember), call(torch)


# --- new_* (and *_like) under vmap: batched like self ----------------------------------

NEW = {  # each factory, then an in-place write of the (batched) example into it
    "new_zeros": lambda x: x.new_zeros(3).copy_(x),
    "new_ones": lambda x: x.new_ones(3).add_(x),
    "new_empty": lambda x: x.new_empty(3).copy_(x * 2),
    "new_full": lambda x: x.new_full((3,), 7.0).mul_(x),
    "new_empty_strided": lambda x: x.new_empty_strided((3,), (1,)).copy_(x),
    "new_zeros 2-d, dtype": lambda x: _row(x.new_zeros(2, 3, dtype=x.dtype), x),
    "new_zeros setitem": lambda x: _setitem(x.new_zeros((3,)), x),
    # the *_like factories, batched the same way
    "zeros_like": lambda x: _like(x, "zeros_like").copy_(x),
    "ones_like": lambda x: _like(x, "ones_like").add_(x),
    "empty_like": lambda x: _like(x, "empty_like").copy_(x),
    "full_like": lambda x: _like(x, "full_like", 2.0).mul_(x),
}


def _like(x, name: str, *args):
    lib = ember if isinstance(x, ember.Tensor) else torch
    return getattr(lib, name)(x, *args)


def _row(z, x):
    z[1].copy_(x)
    return z


def _setitem(z, x):
    z[0] = x[2]
    return z


@pytest.mark.parametrize("name", list(NEW))
def test_new_factories_are_batched_like_self(name):
    f = NEW[name]
    e, t = both(lambda L: FUNC[L].vmap(f)(L.tensor(X)))
    assert_same(e, t)
    # the batch on another axis, and nested vmap (each level batches the result again)
    e, t = both(lambda L: FUNC[L].vmap(f, in_dims=1)(L.tensor(X.T.copy())))
    assert_same(e, t)
    e, t = both(lambda L: FUNC[L].vmap(FUNC[L].vmap(f))(L.tensor(np.arange(12.).reshape(
        2, 2, 3))))
    assert_same(e, t)


def test_new_factories_keep_dtype_device_and_shape_per_example():
    def f(L, x):
        z = x.new_zeros((2, 1), dtype=L.float64)
        return z + x.sum(), x.new_full((), 5).expand(3) + x

    e, t = both(lambda L: FUNC[L].vmap(lambda x: f(L, x))(L.tensor(X)))
    assert_same(e, t)


def test_what_stays_unbatched_inside_vmap():
    # new_tensor copies data (no batch), and a factory of an unbatched tensor is unbatched:
    # an in-place write of a batched value into either fails in both
    y = np.ones(3)
    assert same_error(lambda L: FUNC[L].vmap(lambda x: x.new_tensor([1.0, 2, 3]).add_(x))(
        L.tensor(X))) is RuntimeError
    assert same_error(lambda L: FUNC[L].vmap(lambda x: L.tensor(y).new_zeros(3).copy_(x))(
        L.tensor(X))) is RuntimeError


def test_new_zeros_under_grad_and_outside_transforms():
    e, t = both(lambda L: FUNC[L].grad(lambda x: (x.new_zeros(3).copy_(x) * x).sum())(
        L.tensor([1.0, 2.0, 3.0])))
    assert_same(e, t)
    for L in (ember, torch):  # eager: the plain factories, requires_grad honoured
        z = L.ones(2, dtype=L.float64).new_empty_strided((2, 3), (1, 2), requires_grad=True)
        assert z.stride() == (1, 2) and z.requires_grad and z.dtype is L.float64


# --- make_dual: the tangent in the primal's layout --------------------------------------

def _layouts(L):
    """(primal, tangent) pairs: equal layouts, a transposed or strided tangent, a tangent
    at another storage offset, a primal that is itself a view."""
    x = L.arange(6.0).reshape(2, 3)
    return {
        "same": (x, L.ones(2, 3)),
        "transposed tangent": (x, L.ones(3, 2).t()),
        "expanded tangent": (x, L.ones(3).expand(2, 3)),
        "transposed primal": (L.arange(6.0).reshape(3, 2).t(), L.ones(2, 3)),
        "both transposed": (L.arange(6.0).reshape(3, 2).t(), L.ones(3, 2).t()),
        "strided primal": (L.arange(12.0).reshape(2, 6)[:, ::2], L.ones(2, 3)),
        "strided tangent": (x, L.arange(12.0).reshape(2, 6)[:, ::2]),
        "offset tangent": (x, L.arange(8.0)[2:].view(2, 3)),
        "0-d": (L.tensor(1.0), L.tensor(2.0)),
        "size-1 dim": (L.ones(1, 3), L.ones(3, 1).t()),
    }


@pytest.mark.parametrize("case", list(_layouts(ember)))
def test_make_dual_stores_the_tangent_in_the_primals_layout(case):
    got = {}
    for L in (ember, torch):
        p, t = _layouts(L)[case]
        with FWAD[L].dual_level():
            d = FWAD[L].make_dual(p, t)
            u = FWAD[L].unpack_dual(d)
            kept = u.tangent is t
            layout = (u.tangent.stride(), u.tangent.storage_offset(), d.stride())
            if case != "expanded tangent":  # (an expanded tensor cannot be written)
                t.mul_(5)  # reaches the dual's tangent only when it was kept
            got[L] = (kept, layout, u.tangent.clone(), FWAD[L].unpack_dual(d.sin()).tangent)
    (ke, le, te, se), (kt, lt, tt, st) = got[ember], got[torch]
    assert (ke, le) == (kt, lt)
    assert_same(te, tt)
    assert_same(se, st, check_stride=True)


def test_make_dual_of_an_expanded_primal_with_another_layout_refuses():
    def call(L):
        with FWAD[L].dual_level():
            FWAD[L].make_dual(L.ones(3).expand(2, 3), L.ones(2, 3))

    assert same_error(call) is RuntimeError


def test_func_jvp_applies_the_same_rule():
    for L in (ember, torch):
        x, t, t2 = L.arange(6.0).reshape(2, 3), L.ones(3, 2).t(), L.ones(2, 3)
        _, out = FUNC[L].jvp(lambda v: v, (x,), (t,))
        assert out.stride() == (3, 1) and out is not t
        _, out = FUNC[L].jvp(lambda v: v, (x,), (t2,))
        assert out is t2
    # inside vmap the tangent is a batched value: kept (its example has no storage)
    e, t = both(lambda L: FUNC[L].vmap(lambda x, v: FUNC[L].jvp(L.sin, (x,), (v,))[1],
                                       in_dims=(0, 2))(L.tensor(X.reshape(2, 1, 3)),
                                                       L.ones(1, 3, 2)))
    assert_same(e, t)


# --- products under vmap: node names from batched ranks ----------------------------------

def _linear(L):
    torch.manual_seed(0)
    t = torch.nn.Linear(3, 2).double()
    if L is torch:
        return t
    e = ember.nn.Linear(3, 2).double()
    copy_module_state(e, t)
    return e


def _vjp_then_jvp(L, lin):
    F = FUNC[L]

    def f(x):
        out, pull = F.vjp(lin, x)
        (g,) = pull(L.ones_like(out))
        return F.jvp(lin, (x,), (g,))[1]

    return f


@pytest.mark.parametrize("nest", [1, 2])
@pytest.mark.parametrize("per_example", [(3,), (4, 3)])
def test_vmap_of_vjp_then_jvp_through_a_linear_layer(nest, per_example):
    x = np.random.default_rng(0).standard_normal((2,) * nest + per_example)
    res = {}
    for L in (ember, torch):
        f = _vjp_then_jvp(L, _linear(L))
        for _ in range(nest):
            f = FUNC[L].vmap(f)
        out = f(L.tensor(x))
        assert out.grad_fn is not None and out.grad_fn.name()  # a named node
        # NOTE: not backward to the layer's weights: ember's func.vjp keeps no graph to
        # tensors it closes over (torch's does), which the vjp's cotangent here reaches.
        res[L] = out
    assert_same(res[ember], res[torch])


def _add_family(L, w, b, m):
    """The add* family on one example x (3,), weights w (2, 3), b (2,), m (2, 2)."""
    return {
        "addmv": lambda x: L.addmv(b, w, x),
        "addr": lambda x: L.addr(w, b, x),
        "addmm": lambda x: L.addmm(b, x.unsqueeze(0), w.t()),
        "baddbmm": lambda x: L.baddbmm(b.expand(2, 1, 2), x.expand(2, 1, 3), w.t().expand(
            2, 3, 2)),
        "addbmm": lambda x: L.addbmm(m, w.t().expand(2, 3, 2).transpose(1, 2), x.expand(
            2, 3).unsqueeze(-1).expand(2, 3, 2)),
        "matmul": lambda x: x @ w.t(),
        "mv": lambda x: L.mv(w, x),
        "dot": lambda x: L.dot(w[0], x),
    }


def _transformed(F, f, how: str):
    if how == "vmap(jvp)":
        return F.vmap(F.vmap(lambda v: F.jvp(f, (v,), (v * 2,))[1]))
    if how == "vmap(vmap(vjp))":
        return F.vmap(F.vmap(lambda v: F.vjp(f, v)[1](f(v).detach() + 1)[0]))
    return F.vmap(f) if how == "vmap" else F.vmap(F.vmap(f))


@pytest.mark.parametrize("op", ["addmv", "addr", "addmm", "baddbmm", "addbmm", "matmul",
                                "mv", "dot"])
@pytest.mark.parametrize("how", ["vmap", "vmap(vmap)", "vmap(jvp)", "vmap(vmap(vjp))"])
def test_products_under_vmap_with_weights_that_require_grad(op, how):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 3))
    arrays = [rng.standard_normal(s) for s in ((2, 3), (2,), (2, 2))]
    res = {}
    for L in (ember, torch):
        w, b, m = (L.tensor(a, requires_grad=True) for a in arrays)
        out = _transformed(FUNC[L], _add_family(L, w, b, m)[op], how)(
            L.tensor(x[0] if how == "vmap" else x))
        if how == "vmap(vmap(vjp))":  # (func.vjp: no graph to w, see above)
            res[L] = out.detach()
            continue
        assert "Backward" in out.grad_fn.name()
        out.sin().sum().backward()
        res[L] = (out, w.grad, b.grad, m.grad)
    assert_same(res[ember], res[torch])


# --- functional_call: a reassigned buffer goes back into the caller's dict ---------------

def _counter(L):
    class Counter(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(2, 2)
            self.register_buffer("steps", L.tensor(0))
            self.register_buffer("seen", L.zeros(2))

        def forward(self, x):
            self.steps = self.steps + 1
            self.seen = self.seen + x.sum(0)
            return self.lin(x)

    return Counter()


def _calls(L, m):
    """A dict of buffers; parameters and buffers; two dicts; none of the buffers."""
    params = {k: v.detach() for k, v in m.named_parameters()}
    return {
        "buffers": {"steps": L.tensor(10), "seen": L.ones(2)},
        "params and buffers": {**params, "steps": L.tensor(5)},
        "two dicts": (params, {"steps": L.tensor(7), "seen": L.ones(2)}),
        "empty": {},
    }


@pytest.mark.parametrize("case", ["buffers", "params and buffers", "two dicts", "empty"])
def test_functional_call_writes_reassigned_buffers_back(case):
    res = {}
    for L in (ember, torch):
        m = _counter(L)
        state = _calls(L, m)[case]
        out = FUNC[L].functional_call(m, state, (L.ones(3, 2),))
        dicts = state if isinstance(state, tuple) else (state,)
        res[L] = ([{k: v for k, v in d.items() if "lin" not in k} for d in dicts],
                  m.steps, m.seen, out.shape)
    (de, se, ve, oe), (dt_, st, vt, ot) = res[ember], res[torch]
    assert [sorted(d) for d in de] == [sorted(d) for d in dt_]
    for a, b in zip(de, dt_):
        for k in b:
            assert_same(a[k], b[k])
    assert_same(se, st)
    assert_same(ve, vt)
    assert tuple(oe) == tuple(ot)


def test_functional_call_write_back_with_tied_weights_strict_and_none():
    def module(L):
        class Tied(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Linear(2, 2, bias=False)
                self.b = L.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight
                self.register_buffer("c", L.zeros(1))
                self.register_buffer("gone", L.zeros(1))

            def forward(self, x):
                self.c = self.c + 1
                self.gone = None
                return self.b(self.a(x))

        return Tied()

    for tie in (True, False):
        res = {}
        for L in (ember, torch):
            m = module(L)
            state = {"a.weight": L.eye(2), "c": L.zeros(1), "gone": L.ones(1)}
            out = FUNC[L].functional_call(m, state, (L.ones(1, 2),), tie_weights=tie)
            res[L] = (state["c"], state["gone"], m.c, m.gone,
                      out if tie else out.shape)
        (ce, ge, mce, mge, oe), (ct, gt, mct, mgt, ot) = res[ember], res[torch]
        assert_same(ce, ct)
        assert ge is None and gt is None
        assert_same(mce, mct)
        assert_same(mge, mgt)
        if tie:
            assert_same(oe.detach(), ot.detach())
    # strict refuses before anything runs: the dict is left alone
    for L in (ember, torch):
        m = module(L)
        state = {"c": L.zeros(1)}
        with pytest.raises(RuntimeError, match="Missing key"):
            FUNC[L].functional_call(m, state, (L.ones(1, 2),), strict=True)
        assert float(state["c"]) == 0.0


def test_functional_call_write_back_of_an_in_place_update_and_batch_norm():
    res = {}
    for L in (ember, torch):
        bn = L.nn.BatchNorm1d(2)
        state = {"running_mean": L.zeros(2), "num_batches_tracked": L.tensor(0)}
        rm = state["running_mean"]
        FUNC[L].functional_call(bn, state, (L.tensor(X.T.copy(), dtype=L.float32),))
        assert state["running_mean"] is rm  # updated in place: the same tensor
        res[L] = (state["running_mean"], state["num_batches_tracked"], bn.running_mean,
                  bn.num_batches_tracked)
    assert_same(res[ember], res[torch])
