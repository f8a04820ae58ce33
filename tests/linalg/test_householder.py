"""geqrf and ormqr against torch 2.13: values, layouts, node names, gradients, errors."""

import numpy as np
import pytest
import torch

import ember

# NOTE: LAPACK's Householder QR is not correctly rounded; ember runs NumPy's (float32 computed
# in float64), PyTorch runs sgeqrf/dgeqrf, so values agree to a few ulps of the input scale.
TOL = {torch.float32: 2e-5, torch.float64: 1e-12, torch.complex64: 2e-5,
       torch.complex128: 1e-12}


def _e(t: torch.Tensor, grad: bool = False) -> ember.Tensor:
    return ember.from_numpy(t.detach().numpy().copy()).requires_grad_(grad)


def _close(e, t, tol):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=tol, rtol=tol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 3), (0, 3), (2, 0, 3), (3, 0)])
@pytest.mark.parametrize("dtype", list(TOL))
def test_geqrf_matches_torch(shape, dtype):
    torch.manual_seed(0)
    a = torch.randn(*shape, dtype=dtype)
    h, tau = torch.geqrf(a)
    eh, etau = ember.geqrf(_e(a))
    _close(eh, h, TOL[dtype])
    _close(etau, tau, TOL[dtype])
    assert eh.stride() == h.stride() and etau.stride() == tau.stride()
    # method form and out=
    mh, _ = _e(a).geqrf()
    _close(mh, h, TOL[dtype])
    oa, ot = ember.empty(0, dtype=eh.dtype), ember.empty(0, dtype=eh.dtype)
    res = ember.geqrf(_e(a), out=(oa, ot))
    assert res[0] is oa and res[1] is ot
    _close(oa, h, TOL[dtype])


def test_geqrf_results_do_not_require_grad():
    # NOTE: torch gives them a GeqrfBackward0 node whose backward raises NotImplementedError;
    # ember's do not require grad (a refusing node would need a primitive of its own).
    h, tau = ember.geqrf(_e(torch.randn(4, 3), grad=True))
    assert not h.requires_grad and not tau.requires_grad


@pytest.mark.parametrize("bad,exc,msg", [
    (lambda L: L.randn(3), RuntimeError, "input must have at least 2 dimensions"),
    (lambda L: L.ones(3, 3, dtype=L.long), NotImplementedError, "\"geqrf_cpu\" not implemented "
     "for 'Long'"),
    (lambda L: L.ones(3, 3, dtype=L.float16), NotImplementedError, "for 'Half'"),
])
def test_geqrf_errors(bad, exc, msg):
    for lib in (torch, ember):
        with pytest.raises(exc, match=msg):
            lib.geqrf(bad(lib))


@pytest.mark.parametrize("a_shape,c_shape,left", [
    ((4, 3), (4, 2), True), ((4, 3), (2, 4), False), ((2, 5, 5), (2, 5, 3), True),
    ((3, 5), (3, 2), True), ((2, 4, 2), (2, 3, 4), False), ((4, 4), (4, 4), True)])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_ormqr_matches_torch_with_gradients(a_shape, c_shape, left, transpose, dtype):
    torch.manual_seed(1)
    h, tau = torch.geqrf(torch.randn(*a_shape, dtype=dtype))
    c = torch.randn(*c_shape, dtype=dtype)
    ins = [h.requires_grad_(), tau.requires_grad_(), c.requires_grad_()]
    eins = [_e(x, grad=True) for x in ins]
    r = torch.ormqr(*ins, left=left, transpose=transpose)
    er = ember.ormqr(*eins, left=left, transpose=transpose)
    _close(er, r, 1e-12)
    assert er.stride() == r.stride() and er._base is None
    assert er.grad_fn.name() == r.grad_fn.name() == "OrmqrBackward0"
    w = torch.randn(*r.shape, dtype=dtype)
    (r * w).abs().sum().backward()
    (er * _e(w)).abs().sum().backward()
    for e, t in zip(eins, ins):
        # (composite vs PyTorch's closed form: same math, different rounding)
        _close(e.grad, t.grad, 1e-10)
    _close(eins[0].ormqr(eins[1], eins[2], left, transpose), r, 1e-12)


R = torch.randn


@pytest.mark.parametrize("args", [
    ((3,), (3,), (3, 2)), ((4, 3), (3,), (4,)), ((4, 3), (3,), (5, 2)), ((4, 3), (2,), (4, 2)),
    ((4, 6), (6,), (4, 3)), ((4, 3), (2, 3), (4, 2)), ((4, 3), (2, 2), (4, 2)),
    ((2, 4, 3), (2, 3), (4, 2)), ((2, 4, 3), (3, 3), (2, 4, 2)), ((2, 4, 3), (2, 3), (3, 4, 2)),
    ((4, 3), (2,), (2, 4), False), ((4, 3), (3,), (2, 5), False),
])
def test_ormqr_shape_errors(args):
    shapes, left = args[:3], (args[3] if len(args) > 3 else True)
    ts = [R(*s) for s in shapes]
    with pytest.raises(RuntimeError) as te:
        torch.ormqr(*ts, left=left)
    with pytest.raises(RuntimeError) as ee:
        ember.ormqr(*[_e(t) for t in ts], left=left)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("dtypes", [
    ("float32", "float64", "float32"), ("float32", "float32", "int64"),
    ("int64", "float32", "float32"), ("float32", "float32", "complex64"),
    ("int64", "int64", "int64"), ("float16", "float16", "float16")])
def test_ormqr_dtype_errors(dtypes):
    shapes = [(4, 3), (3,), (4, 2)]
    ts = [R(*s).to(getattr(torch, d)) for s, d in zip(shapes, dtypes)]
    with pytest.raises((RuntimeError, NotImplementedError)) as te:
        torch.ormqr(*ts)
    with pytest.raises(te.type) as ee:
        ember.ormqr(*[_e(t) for t in ts])
    assert str(ee.value) == str(te.value)
