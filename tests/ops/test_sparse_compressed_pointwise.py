"""Pointwise functions of CSR / CSC matrices (and the function forms that hand a COO tensor
to its own method) against torch: the zero-preserving ones keep the pattern, their in-place
forms return the same object, the rest are refused with torch's exception and words."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning",
                                        "ignore:Sparse invariant checks:UserWarning")

DATA = [[0.0, -0.5, 0.0], [0.25, 0.0, 0.75], [-0.0, 0.0, -2.0]]
ZERO_PRESERVING = ["abs", "neg", "negative", "absolute", "sqrt", "sin", "tan", "tanh", "sign",
                   "sgn", "expm1", "log1p", "asin", "atan", "sinh", "asinh", "atanh", "ceil",
                   "floor", "round", "trunc", "frac", "relu", "rad2deg", "deg2rad", "erf",
                   "erfinv", "angle", "signbit", "isnan", "isinf", "isposinf", "isneginf"]
# results of transcendental kernels (sin, tanh ...) may differ from torch's vectorised
# float32 ones in the last bit; float64 data makes every one of them correctly rounded
# or within an ulp, so the comparison is at 2 ulp of float64
TOL = dict(rtol=4.5e-16, atol=0.0)


def _matrix(L, layout):
    return getattr(L.tensor(DATA, dtype=L.float64), f"to_sparse_{layout}")()


def _compressed(t, layout):
    first = t.crow_indices() if layout == "csr" else t.ccol_indices()
    second = t.col_indices() if layout == "csr" else t.row_indices()
    return first.tolist(), second.tolist()


def _close(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    ev, tv = torch.from_numpy(e.values().numpy()), t.values()
    torch.testing.assert_close(ev, tv, equal_nan=True, **(TOL if tv.is_floating_point() else {}))


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("name", ZERO_PRESERVING)
def test_zero_preserving_method_and_function(name, layout):
    for form in ("method", "function"):
        res = {}
        for L in (ember, torch):
            m = _matrix(L, layout)
            res[L] = getattr(m, name)() if form == "method" else getattr(L, name)(m)
        e, t = res[ember], res[torch]
        assert e.layout is getattr(ember, f"sparse_{layout}")
        assert _compressed(e, layout) == _compressed(t, layout)
        _close(e, t)


@pytest.mark.parametrize("name", ["abs", "sqrt", "sign", "tan", "relu", "erf", "asinh", "expm1",
                                  "trunc", "frac", "sgn", "neg"])
def test_in_place_returns_self(name):
    out = {}
    for L in (ember, torch):
        m = _matrix(L, "csr")
        r = getattr(m, name + "_")()
        assert r is m
        out[L] = m
    _close(out[ember], out[torch])


def test_in_place_bumps_version():
    m = _matrix(ember, "csr")
    before = m._version
    m.abs_()
    assert m._version == before + 1


def test_positive_and_conj_physical_are_the_same_object():
    for L in (ember, torch):
        m = _matrix(L, "csr")
        assert m.positive() is m and m.conj_physical() is m


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("name", ["exp", "cos", "cosh", "log", "acos", "reciprocal", "rsqrt",
                                  "sigmoid", "square", "log2", "erfc", "i0", "isfinite"])
def test_densifying_refused(name, layout):
    same_message(lambda L: getattr(_matrix(L, layout), name)())
    same_message(lambda L: getattr(L, name)(_matrix(L, layout)))


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_no_kernel(layout):
    # (torch's message goes on to list its dispatch keys; ember's is its first sentences)
    msgs = {}
    for L in (ember, torch):
        with pytest.raises(NotImplementedError) as info:
            _matrix(L, layout).nan_to_num()
        msgs[L] = str(info.value)
    assert "'SparseCsrCPU'" in msgs[ember] and msgs[torch].startswith(msgs[ember])


def test_gradient_reaches_values():
    # torch cannot differentiate a CSR sin; ember's values go through ordinary ops, so the
    # gradient of sum(sin(values)) is cos(values) on the pattern (worked by hand)
    v = ember.tensor([-0.5, 0.25, 0.75], dtype=ember.float64, requires_grad=True)
    m = ember.sparse_csr_tensor(ember.tensor([0, 1, 3]), ember.tensor([1, 0, 2]), v, (2, 3))
    m.sin().values().sum().backward()
    assert v.grad.tolist() == ember.cos(v.detach()).tolist()


@pytest.mark.parametrize("name", ["signbit", "isposinf", "isneginf", "square"])
def test_coo_function_forms(name):
    e = getattr(ember, name)(ember.tensor(DATA).to_sparse())
    t = getattr(torch, name)(torch.tensor(DATA).to_sparse())
    assert e.layout is ember.sparse_coo
    assert e._indices().tolist() == t._indices().tolist()
    assert e._values().tolist() == t._values().tolist()  # (exact: sign bits, squares)
