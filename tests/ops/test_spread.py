"""var / std / var_mean / std_mean against torch in-process.

torch's CPU kernel accumulates float32 (and float16 / bfloat16) in double and rounds once,
so those results are compared bit for bit. var_mean / std_mean are one node with two
outputs (VarMeanBackward0 / StdMeanBackward0), whose gradients, forward tangents and vmap
are compared with torch's (float64, to a relative 1e-12: sums in another order).
"""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, raised, to_torch

pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")

SHAPES_DIMS = [((7, 13), None), ((7, 13), 0), ((7, 13), 1), ((50,), 0), ((3, 4, 5), (0, 2)),
               ((3, 4, 5), -1), ((64, 33), 0), ((1000,), None), ((), None), ((2, 0), 1)]
CORRECTIONS = [0, 1, 2, 0.5]


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + 1.5).astype(dtype)


def _both(a):
    e = ember.tensor(a)
    return e, to_torch(e)


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("correction", CORRECTIONS)
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_float32_spread_is_torchs_to_the_bit(shape, dim, correction, fn):
    e, t = _both(_data(shape))
    for keepdim in (False, True):
        got = getattr(e, fn)(dim=dim, correction=correction, keepdim=keepdim)
        want = getattr(t, fn)(dim=dim, correction=correction, keepdim=keepdim)
        assert got.shape == tuple(want.shape) and got.dtype == ember.float32
        np.testing.assert_array_equal(got.numpy(), want.numpy())  # (NaN == NaN here)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS[:7])
def test_low_precision_spread_is_torchs_to_the_bit(shape, dim, dtype):
    e = ember.tensor(_data(shape)).to(getattr(ember, dtype))
    t = to_torch(e)
    for fn in ("var", "std"):
        got = getattr(e, fn)(dim=dim, correction=1).float().numpy()
        np.testing.assert_array_equal(got, getattr(t, fn)(dim=dim, correction=1).float().numpy())


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS[:7])
def test_complex_spread_adds_the_parts_variances(shape, dim):
    a = (_data(shape) + 1j * _data(shape, seed=1)).astype(np.complex64)
    e, t = _both(a)
    got, want = e.var(dim=dim, correction=0.5), t.var(dim=dim, correction=0.5)
    assert got.dtype == ember.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # std is torch.sqrt of that float32 sum: torch's vectorised float32 sqrt is not always
    # correctly rounded (its vector path, CPU-dependent), ember's is: one ulp allowed.
    np.testing.assert_array_max_ulp(e.std(dim=dim, correction=0.5).numpy(),
                                    t.std(dim=dim, correction=0.5).numpy(), maxulp=1)
    (v, m), (tv, tm) = ember.var_mean(e, dim), torch.var_mean(t, dim)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(m.numpy(), tm.numpy())


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_moments_values(shape, dim, fn):
    e, t = _both(_data(shape))
    s, m = getattr(ember, fn)(e, dim, correction=1)
    ts, tm = getattr(torch, fn)(t, dim, correction=1)
    assert s.shape == tuple(ts.shape) and m.shape == tuple(tm.shape)
    np.testing.assert_array_equal(s.numpy(), ts.numpy())
    # The mean is the double mean rounded once, as torch's; torch's Welford update can end
    # a double ulp from the pairwise mean, which flips the float32 rounding only when the
    # mean sits on a float32 midpoint (rare): one float32 ulp allowed.
    np.testing.assert_array_max_ulp(m.numpy(), tm.numpy(), maxulp=1)
    same = (m.numpy() == tm.numpy()) | (np.isnan(m.numpy()) & np.isnan(tm.numpy()))
    assert same.mean() > 0.9 if m.numel() else True


@pytest.mark.parametrize("fn,node", [("var_mean", "VarMeanBackward0"),
                                     ("std_mean", "StdMeanBackward0")])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True)])
def test_moments_one_node_and_gradients(fn, node, dim, keepdim):
    a = _data((3, 4, 5), np.float64)
    grads, names = [], []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        s, m = getattr(lib, fn)(x, dim, keepdim=keepdim, correction=1)
        names.append((type(s.grad_fn).__name__, type(m.grad_fn).__name__, s.grad_fn is m.grad_fn))
        w1 = lib.tensor(_data(tuple(s.shape), np.float64, seed=2))
        w2 = lib.tensor(_data(tuple(m.shape), np.float64, seed=3))
        loss = (s * w1).sum() + (m * w2 * m).sum()
        only_mean = lib.autograd.grad(m.sum(), x, retain_graph=True)[0]
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        grads.append([np.asarray(v.detach().numpy()) for v in (g, gg, only_mean)])
    assert names[0] == names[1] == (node, node, True)
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_var_mean_keeps_no_output_but_std_mean_keeps_its_std():
    # torch's var_mean backward reads the input only: an in-place op on the variance
    # before backward is fine; std_mean's reads the std, so there it is refused.
    outcomes = []
    for lib in (ember, torch):
        row = []
        for fn in ("var_mean", "std_mean"):
            x = lib.tensor(_data((3, 4), np.float64), requires_grad=True)
            s, m = getattr(lib, fn)(x, 1)
            s.mul_(2)
            try:
                (s.sum() + m.sum()).backward()
                row.append(("ok", x.grad.numpy().round(12).tolist()))
            except RuntimeError as exc:
                row.append(("raise", str(exc).split(":")[0]))
        outcomes.append(row)
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_moments_jvp_and_vmap(fn):
    a, t = _data((4, 3, 5), np.float64), _data((4, 3, 5), np.float64, seed=4)
    res = []
    for lib in (ember, torch):
        op = getattr(lib, fn)
        f = lambda x, op=op: op(x, 1, correction=0)  # noqa: E731
        primal, tangent = lib.func.jvp(f, (lib.tensor(a),), (lib.tensor(t),))
        mapped = lib.func.vmap(f, in_dims=2)(lib.tensor(a))
        full = lib.func.vmap(op)(lib.tensor(a))
        res.append([np.asarray(v.numpy()) for v in (*primal, *tangent, *mapped, *full)])
    for got, want in zip(*res):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_moments_out_and_bad_input():
    e, t = _both(_data((3, 4)))
    outs = (ember.empty(3), ember.empty(3))
    r = ember.var_mean(e, 1, out=outs)
    assert r[0] is outs[0] and r[1] is outs[1]
    np.testing.assert_array_equal(outs[0].numpy(), torch.var_mean(t, 1)[0].numpy())
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="var_mean only support floating point and complex"):
            lib.var_mean(lib.ones(3, dtype=lib.int64))


# `fn(L, x, name)`: PyTorch's parser takes a positional `unbiased` only as a bool (None,
# an int or a NumPy bool there match no overload); `dim=None` and a NumPy bool correction
# are taken
PARSER_CALLS = {
    "unbiased_none": lambda L, x, f: getattr(L, f)(x, -1, None),
    "unbiased_none_keepdim": lambda L, x, f: getattr(L, f)(x, -1, None, True),
    "unbiased_int": lambda L, x, f: getattr(L, f)(x, -1, 1),
    "unbiased_numpy_bool": lambda L, x, f: getattr(L, f)(x, -1, np.bool_(False)),
    "unbiased_kw_none": lambda L, x, f: getattr(L, f)(x, -1, unbiased=None),
    "unbiased_kw_none_alone": lambda L, x, f: getattr(L, f)(x, unbiased=None),
    "method_unbiased_none": lambda L, x, f: getattr(x, f)(-1, None) if f in ("std", "var")
    else getattr(L, f)(x, 0, None),
    "unbiased_bool": lambda L, x, f: getattr(L, f)(x, -1, False, True),
    "dim_none": lambda L, x, f: getattr(L, f)(x, None),
    "legacy_bool": lambda L, x, f: getattr(L, f)(x, False),
    "correction_numpy_bool": lambda L, x, f: getattr(L, f)(x, -1, correction=np.bool_(True)),
}


def test_unbiased_slot_takes_only_a_bool_as_torchs_parser():
    x = _data((3, 4))
    for fn in ("std", "var", "std_mean", "var_mean"):
        for name, call in PARSER_CALLS.items():
            want = raised(call, torch, torch.tensor(x), fn)
            got = raised(call, ember, ember.tensor(x), fn)
            if want is None:
                assert got is None, (fn, name, got)
                # (float32 spreads are torch's to the bit: see above)
                assert_same(call(ember, ember.tensor(x), fn), call(torch, torch.tensor(x), fn))
            elif name.startswith("unbiased_kw") or name.startswith("method"):
                # (ember names `unbiased` in the got-list as a keyword, and lists a method's
                # overloads in the function's words)
                assert got is not None and got[0] is want[0], (fn, name, got, want)
                if not name.startswith("method"):
                    assert got[1].split("expected")[1] == want[1].split("expected")[1]
            else:
                assert got == want, (fn, name)
