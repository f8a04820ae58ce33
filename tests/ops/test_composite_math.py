"""composite_math.py against torch: values, dtypes, gradients, errors (and the
unary shape helpers and predicates in the shared value sweep)."""

import math

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_op, same_error, same_message, same_result

F = np.array([[1.5, -2.0, 0.0, 3.0], [-0.5, 0.25, 2.0, -1.0]])
G = np.array([[0.5, 1.0, -3.0, 3.0], [2.0, -0.25, 1.0, 4.0]])
POS = np.array([[0.5, 2.0, 1e-3, 3.0], [1.0, 0.25, 7.0, 4.0]])
I = np.array([180, -90, 0, 45])
EDGE = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])

UNARY = ["deg2rad", "rad2deg", "sinc", "signbit", "isreal", "positive", "atleast_1d",
         "atleast_2d", "atleast_3d", "diagflat", "corrcoef", "cov"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("arr", [F, F[0], np.array(2.5), I, F.astype(np.float32)],
                         ids=["2d", "1d", "0d", "int", "f32"])
def test_unary_matches_torch(name, arr):
    if name in ("corrcoef", "cov", "diagflat") and arr.ndim == 0 and name != "diagflat":
        pytest.skip("needs at least one dim")
    grad = name not in ("signbit", "isreal")
    check_op(getattr(ember, name), getattr(torch, name), arr, grad=grad)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "sinc", "signbit", "isreal", "positive"])
def test_unary_on_edge_values(name):
    check_op(getattr(ember, name), getattr(torch, name), EDGE, grad=False)


def test_signbit_sees_negative_zero_and_nan_sign():
    x = np.array([-0.0, 0.0, -np.nan, np.nan, -1.0], np.float32)
    for d in (np.float16, np.float32, np.float64):
        assert_same(ember.signbit(ember.tensor(x.astype(d))),
                    torch.signbit(torch.tensor(x.astype(d))))


def test_sinc_gradient_at_zero_is_zero():
    check_op(ember.sinc, torch.sinc, np.array([0.0, 0.5, -1.5]))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "xlogy", "copysign", "dist"])
@pytest.mark.parametrize("a,b", [(F, G), (F, G[0]), (POS, G)], ids=["same", "bcast", "pos"])
def test_binary_matches_torch(name, a, b):
    check_op(getattr(ember, name), getattr(torch, name), a, b)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_infinities(name):
    inf = np.array([-np.inf, np.inf, -np.inf, 1.0])
    check_op(getattr(ember, name), getattr(torch, name), inf, np.array([-np.inf, np.inf, 2.0,
                                                                         np.inf]), grad=False)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp_second_derivatives_at_ties_match_torch(name, dtype):
    # at a == b the second derivative is sigmoid'(0) (0.25 for logaddexp): a max + |a - b|
    # composite gave 0 there (its pieces' kinks)
    a = np.array([0.0, 1.5, -2.0, 0.3, 4.0, -30.0])
    b = np.array([0.0, 1.5, -2.0, -0.7, 4.5, 0.0])

    def second(lib):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        gx, gy = lib.autograd.grad(getattr(lib, name)(x, y).sum(), (x, y), create_graph=True)
        hxx, hxy = lib.autograd.grad(gx.sum(), (x, y), retain_graph=True)
        (hyy,) = lib.autograd.grad(gy.sum(), (y,))
        return [t.detach().numpy() for t in (gx, gy, hxx, hxy, hyy)]

    # NOTE: composite exp / log1p against torch's one kernel: a few ulps
    for ours, theirs in zip(second(ember), second(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-12,
                                   atol=1e-30)


def test_logaddexp_node_guards_its_inputs():
    # PyTorch's node saves both inputs: changing one in place before backward raises
    for lib in (ember, torch):
        a = lib.tensor([0.5, -1.0], requires_grad=True) * 1.0
        b = lib.tensor([0.0, 2.0], requires_grad=True) * 1.0
        out = lib.logaddexp(a, b)
        b.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_complex_logaddexp_with_an_infinite_operand():
    # the operand with the infinite real part wins (a fuzzer find: ember gave nan+nanj)
    inf = np.inf
    a = np.array([0.73 + 1.64j, 1 + 2j, 1 + 1j, -0.5 + 0.2j])
    b = np.array([complex(inf, 0), complex(-inf, 0), complex(inf, 3), 0.25 - 1j])
    check_op(ember.logaddexp, torch.logaddexp, a, b, grad=False)


def test_xlogy_zeros_nans_and_scalars():
    x = np.array([0.0, 0.0, 0.0, 0.0, 2.0])
    y = np.array([0.0, np.nan, -1.0, 3.0, 0.5])
    check_op(ember.xlogy, torch.xlogy, x, y)
    check_op(lambda y: ember.xlogy(2, y), lambda y: torch.xlogy(2, y), POS)
    check_op(lambda x: ember.xlogy(x, 3), lambda x: torch.xlogy(x, 3), F)
    check_op(ember.xlogy, torch.xlogy, I, I, grad=False)


def test_xlogy_of_zero_and_infinity_is_zero_with_pytorchs_gradients():
    # composed, 0 * log(inf) was NaN (fuzzer seed 20261250); the gradient in x where x is 0
    # stays log(y) (inf at y = inf), and 0 where y <= 0, as PyTorch's XlogyBackward0
    x = np.array([0.0, 0.0, 0.0, 2.0, 0.0, 1.5])
    y = np.array([np.inf, 3.0, np.nan, np.inf, 0.0, 0.7])
    check_op(ember.xlogy, torch.xlogy, x, y)
    check_op(ember.special.xlogy, torch.special.xlogy, x, y)
    check_op(lambda y: ember.xlogy(0.0, y), lambda y: torch.xlogy(0.0, y), y, grad=False)
    check_op(lambda x: ember.xlogy(x, np.inf), lambda x: torch.xlogy(x, np.inf), x, grad=False)
    a = ember.tensor([0.0], requires_grad=True)
    r = ember.xlogy(a, ember.tensor([np.inf]))
    assert type(r.grad_fn).__name__ == "XlogyBackward0"


def test_copysign_scalars_and_ints():
    check_op(lambda a: ember.copysign(a, -1), lambda a: torch.copysign(a, -1), F)
    check_op(ember.copysign, torch.copysign, I, I, grad=False)
    check_op(ember.copysign, torch.copysign, F.astype(np.float32), G, grad=False)
    check_op(ember.copysign, torch.copysign, F, np.array([-0.0, 0.0, -0.0, 0.0]))


def test_copysign_plain_call_is_the_composites_bits():
    """Two float tensors of one dtype and shape, nothing wanting a gradient: one
    np.copysign (composite_math._copysign_plain), the composite's bits (-0.0, +-inf and
    NaNs of both signs on either side) and torch's; a transposed operand, another dtype, a
    broadcast or an input wanting a gradient run the composite."""
    from native._differential import assert_bits

    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -2.0])
    a0, b0 = np.repeat(vals, vals.size), np.tile(vals, vals.size)
    for d in (np.float32, np.float64):
        a, b = a0.astype(d), b0.astype(d)
        plain = ember.copysign(ember.tensor(a), ember.tensor(b)).numpy()
        held = ember.tensor(b, requires_grad=True)
        composite = ember.copysign(ember.tensor(a), held).detach().numpy()
        assert_bits(plain, composite)
        assert_bits(plain, torch.copysign(torch.tensor(a), torch.tensor(b)).numpy())
        assert (np.signbit(plain) == np.signbit(b)).all()
    x, y = ember.randn(3, 4), ember.randn(4, 3)
    assert_same(ember.copysign(x, y.t()), torch.copysign(torch.tensor(x.numpy()),
                                                         torch.tensor(y.numpy()).t()))
    r = ember.copysign(ember.randn(3, requires_grad=True), ember.randn(3))
    assert type(r.grad_fn).__name__ == "CopysignBackward0"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_copysign_gradients_at_edges_are_torchs(dtype):
    """d copysign(x, y) / dx is result / x, 0 where x is 0: NaN at x = +-inf or NaN, +0 at
    +-0 (the sign bit the tape keeps); y gets zeros. Forward mode and the scalar form alike."""
    from native._differential import assert_bits

    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, -3.0, 0.5])
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -0.0])
    g = np.array([1.0, -2.0, 1.0, 3.0, -1.0, 1.0, 0.5, np.inf])
    results = []
    for lib in (ember, torch):
        d = getattr(lib, dtype)
        a = lib.tensor(x, dtype=d, requires_grad=True)
        b = lib.tensor(y, dtype=d, requires_grad=True)
        out = lib.copysign(a, b)
        ga, gb = lib.autograd.grad(out, (a, b), lib.tensor(g, dtype=d))
        (gs,) = lib.autograd.grad(lib.copysign(a, -2.0), a, lib.tensor(g, dtype=d))
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(a.detach(), lib.tensor(g, dtype=d))
            tangent = lib.autograd.forward_ad.unpack_dual(lib.copysign(dual, b.detach())).tangent
        results.append([t.detach().float().numpy() for t in (ga, gb, gs, tangent)])
        assert type(out.grad_fn).__name__ == "CopysignBackward0"
    for got, want in zip(*results):
        assert_bits(got, want)


def test_heaviside():
    check_op(ember.heaviside, torch.heaviside, F, np.array([0.5]), grad=False)
    check_op(ember.heaviside, torch.heaviside, I, np.array([7]), grad=False)


@pytest.mark.parametrize("call", [
    lambda L: L.heaviside(L.ones(2), 0.5),
    lambda L: L.heaviside(L.ones(2, dtype=L.int64), L.ones(1)),
    lambda L: L.logaddexp(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: L.logaddexp(L.ones(2), 1.0),
    lambda L: L.deg2rad(L.ones(2, dtype=L.complex64)),
    lambda L: L.positive(L.ones(2, dtype=L.bool)),
    lambda L: L.vsplit(L.ones(4), 2),
    lambda L: L.dsplit(L.ones(2, 4), 2),
    lambda L: L.hsplit(L.ones(2, 4), 3),
    lambda L: L.ones(3).is_nonzero(),
    lambda L: L.ones(0).is_nonzero(),
    lambda L: L.cov(L.ones(2, 2, 2)),
    lambda L: L.unravel_index(L.tensor([1.0]), (2, 2)),
])
def test_errors_match_torch(call):
    same_error(call)


def test_constants():
    assert (ember.pi, ember.e, ember.inf, ember.newaxis) == (torch.pi, torch.e, torch.inf,
                                                             torch.newaxis)
    assert math.isnan(ember.nan) and math.isnan(torch.nan)
    x = np.arange(6.0).reshape(2, 3)
    assert_same(ember.tensor(x)[:, ember.newaxis], torch.tensor(x)[:, torch.newaxis])


# --- found by the differential fuzzer (python -m fuzz) --------------------------------

def _both(fn):
    return fn(ember), fn(torch)


@pytest.mark.parametrize("call", [
    lambda L: L.logaddexp(L.tensor([0, 2], dtype=L.uint8), L.tensor([-1.5, 3.0],
                                                                      dtype=L.bfloat16)),
    lambda L: L.logaddexp(L.tensor([True, False]), L.tensor([0.5, -2.0])),
    lambda L: L.logaddexp2(L.tensor([1, 0], dtype=L.int32), L.tensor([0.5, -2.0])),
    lambda L: L.logaddexp(L.tensor([-0.26 + 2.49j, 1j, 3 - 1j]),
                          L.tensor([1.38, -1.5, -2.8], dtype=L.float64)),
    lambda L: L.xlogy(L.tensor([-1.813, -2.132], dtype=L.float64),
                      L.tensor([0.534, -0.535], dtype=L.float32)),
    lambda L: L.xlogy(L.tensor([[-1.66, 0.0, 1.45]], dtype=L.float16), -1),
    lambda L: L.xlogy(2, L.tensor([0.5, 3.0], dtype=L.float16)),
    lambda L: L.copysign(L.tensor([-2, 3]), L.tensor([-2.4, 2.0], dtype=L.float16)),
    lambda L: L.cov(L.tensor([[1.0, 2.0, 4.0]])),
    lambda L: L.corrcoef(L.tensor([[1.0, 2.0, 4.0]])),
    lambda L: L.cov(L.ones(1, 0)),
    lambda L: L.cov(L.tensor([[1.0, 2.0, 4.0], [0.0, 1.0, -1.0]]))[None, :].squeeze(0),
])
def test_fuzz_found_dtypes_shapes_and_values(call):
    e, t = _both(call)
    assert_same(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.logaddexp2(L.tensor([1j]), L.tensor([1j])),
    lambda L: L.logaddexp(L.tensor([1, 2]), L.tensor([3, 4])),
    lambda L: L.xlogy(L.tensor([1j]), L.tensor([2.0])),
    lambda L: L.xlogy(L.tensor([1j]), 2.0),
    lambda L: L.copysign(L.tensor([1.0]), L.tensor([1j])),
    lambda L: L.signbit(L.tensor([1j])),
    lambda L: L.atleast_1d(L.ones(2), "x"),
    lambda L: L.atleast_3d(L.ones(2), L.ones(1), "x"),
    lambda L: L.kron(L.ones(2), "x"),
    lambda L: L.ones(2).kron("x"),
])
def test_fuzz_found_errors(call):
    same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([1 - 2j, 0.5j]).heaviside(L.tensor([1j])),
    lambda L: L.ones(3, 3).heaviside(L.ones(4, 3)),
])
def test_fuzz_found_heaviside_errors(call):
    same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.xlogy(L.zeros(4, 2, 0, 2), complex(-0.5, 0.5)),
    lambda L: L.copysign(L.ones(2), 1j),
    lambda L: L.diagflat(L.ones(2), "x"),
    lambda L: L.mvlgamma(L.tensor([True]), 1),
    lambda L: L.logaddexp(L.ones(2, dtype=L.int16), L.ones(3)),
])
def test_fuzz_found_more_errors(call):
    same_error(call)


def test_fuzz_found_zero_dim_operand_ranks_lower():
    def run(L):
        return L.logaddexp(L.tensor([0.5, -1.0]), L.tensor(2.0, dtype=L.float64))
    assert_same(run(ember), run(torch))


@pytest.mark.parametrize("name", ["xlogy", "copysign"])
def test_fuzz_found_non_number_other_is_a_type_error(name):
    same_error(lambda L: getattr(L, name)(L.tensor([1 + 2j]), "x"))
    same_error(lambda L: getattr(L, name)(L.tensor([1.0]), "x"))


# --- out= on deg2rad / rad2deg / signbit ------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.deg2rad(L.tensor([180, 90]), out=L.empty(2, dtype=L.float64)),
    lambda L: L.rad2deg(L.tensor([1.0, -0.5]), out=L.empty(2, dtype=L.float64)),
    lambda L: L.signbit(L.tensor([-0.0, 1.0, -2.0]), out=L.empty(3, dtype=L.bool)),
    lambda L: L.signbit(L.tensor([-3, 0, 2]), out=L.empty(3, dtype=L.bool)),
])
def test_out_forms_like_torch(call):
    same_result(call)


@pytest.mark.parametrize("call", [
    lambda L: L.deg2rad(L.tensor([180]), out=L.empty(1, dtype=L.int32)),
    lambda L: L.rad2deg(L.tensor([1.0]), out=L.empty(1, dtype=L.int64)),
    lambda L: L.signbit(L.tensor([-1.0]), out=L.empty(1)),
    lambda L: L.signbit(L.tensor([-1]), out=L.empty(1, dtype=L.int64)),
])
def test_out_dtype_refusals_like_torch(call):
    same_message(call)


# --- out= on the binary composites and sinc; float16 / bfloat16 in float32 ----------------

_OUT_CALLS = {
    "logaddexp": lambda L, o: L.logaddexp(L.tensor([0.5, -1.0]), L.tensor([1.0, -1.0]), out=o),
    "logaddexp2": lambda L, o: L.logaddexp2(L.tensor([0.5, -1.0]), L.tensor([1.0, 3.0]), out=o),
    "xlogy": lambda L, o: L.xlogy(L.tensor([0.0, 2.0]), L.tensor([0.0, 3.0]), out=o),
    "xlogy_number": lambda L, o: L.xlogy(L.tensor([0.0, 2.0]), 2.0, out=o),
    "sinc": lambda L, o: L.sinc(L.tensor([0.0, 0.5]), out=o),
    "heaviside": lambda L, o: L.heaviside(L.tensor([-1.0, 0.0]), L.tensor([0.5, 0.5]), out=o),
    "copysign": lambda L, o: L.copysign(L.tensor([1.0, 2.0]), L.tensor([-0.0, 1.0]), out=o),
    "copysign_number": lambda L, o: L.copysign(L.tensor([1.0, 2.0]), -0.0, out=o),
}


@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
def test_composites_take_out_like_torch(name):
    def call(L):
        o = L.empty(2, dtype=L.float64 if name != "heaviside" else L.float32)
        r = _OUT_CALLS[name](L, o)
        assert r is o
        return o

    same_result(call)
    if name != "heaviside":
        same_message(lambda L: _OUT_CALLS[name](L, L.empty(2, dtype=L.int64)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_composites_compute_in_float32(dtype):
    # torch computes these half kernels in float32 and rounds once: sinc(1) is -2.8e-8
    # (pi * 1 in float16 would give 3e-4) and sinc(65504) is tiny, not NaN. Bit-for-bit
    # in the low dtype (float32 sin may differ from torch's by an ulp, far below its step).
    x = [0.0, -0.0, 1.0, -1.0, 2.5, 0.5, 65504.0 if dtype == "float16" else 1e30, 1e-7]
    y = [1.0, -0.5, 1.0, 0.5, -1.5, 2.0, 3.0, 1e-7]
    e = {k: ember.tensor(v, dtype=getattr(ember, dtype)) for k, v in (("x", x), ("y", y))}
    t = {k: torch.tensor(v, dtype=getattr(torch, dtype)) for k, v in (("x", x), ("y", y))}
    for name in ("sinc", "logaddexp", "logaddexp2"):
        args = ("x",) if name == "sinc" else ("x", "y")
        got = getattr(ember, name)(*(e[a] for a in args))
        want = getattr(torch, name)(*(t[a] for a in args))
        assert got.dtype == getattr(ember, dtype)
        assert got.float().tolist() == want.float().tolist(), name
    # The graph keeps torch's node names; the gradient flows back in the low dtype.
    xe = ember.tensor(x[:4], dtype=getattr(ember, dtype), requires_grad=True)
    out = ember.sinc(xe)
    assert type(out.grad_fn).__name__ == "SincBackward0"
    out.sum().backward()
    assert xe.grad.dtype == getattr(ember, dtype)
    ye = ember.tensor(y[:4], dtype=getattr(ember, dtype))
    assert type(ember.logaddexp(xe, ye).grad_fn).__name__ == "LogaddexpBackward0"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_copysign_by_a_negative_number_sets_a_nans_sign_bit(dtype):
    # torch writes the sign bit (copysign(nan, -1.0) has it set); a product with -1 left a
    # NaN's sign alone. Exact: sign bits.
    vals = [float("nan"), -float("nan"), 1.0, -0.0, float("inf")]
    for other in (-1.0, 1.0, -0.0, 0.0, float("nan"), -float("inf")):
        got = ember.copysign(ember.tensor(vals, dtype=getattr(ember, dtype)), other)
        want = torch.copysign(torch.tensor(vals, dtype=getattr(torch, dtype)), other)
        assert got.signbit().tolist() == want.signbit().tolist(), other
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    y = ember.copysign(x, -1.0)
    y.sum().backward()
    assert type(y.grad_fn).__name__ == "CopysignBackward1"
    assert x.grad.tolist() == [-1.0, 1.0]
