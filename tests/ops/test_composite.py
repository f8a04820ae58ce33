"""Composite ops (diff, trapezoid, isin, tri indices, block_diag, cdist, vander, histogram,
complex views) against torch, gradients included where torch differentiates them."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_grads, check_op, rand_array, same_message, same_result


@pytest.mark.parametrize("kw", [dict(), dict(n=2), dict(dim=0), dict(n=3, dim=1)])
def test_diff_matches_torch(kw):
    check_op(lambda x: ember.diff(x, **kw), lambda x: torch.diff(x, **kw), rand_array((4, 5)))


def test_diff_prepend_append_and_bool():
    a, p = rand_array((3, 4)), rand_array((3, 1), seed=2)
    check_op(lambda x, y: x.diff(prepend=y, append=y), lambda x, y: x.diff(prepend=y, append=y),
             a, p)
    b = np.array([True, False, False, True])
    assert_same(ember.diff(ember.tensor(b)), torch.diff(torch.tensor(b)))
    with pytest.raises(RuntimeError):
        ember.diff(ember.tensor(1.0))


def test_trapezoid_and_cumulative_match_torch():
    y, x = rand_array((3, 6)), np.sort(rand_array(6, seed=3))
    check_op(lambda a: ember.trapezoid(a), lambda a: torch.trapezoid(a), y)
    check_op(lambda a: ember.trapezoid(a, dx=0.5, dim=0), lambda a: torch.trapezoid(a, dx=0.5,
                                                                                 dim=0), y)
    check_op(lambda a, b: ember.trapezoid(a, b), lambda a, b: torch.trapezoid(a, b), y, x)
    check_op(lambda a, b: ember.cumulative_trapezoid(a, b),
             lambda a, b: torch.cumulative_trapezoid(a, b), y, x)
    check_grads(lambda a: ember.trapezoid(a, dx=0.3), y.astype(np.float64))


def test_isin_matches_torch():
    e, t = np.array([[1, 5, 3], [4, 2, 9]]), np.array([2, 3, 7])
    for invert in (False, True):
        assert_same(ember.isin(ember.tensor(e), ember.tensor(t), invert=invert),
                    torch.isin(torch.tensor(e), torch.tensor(t), invert=invert))
    assert_same(ember.isin(ember.tensor(e), 5), torch.isin(torch.tensor(e), 5))


@pytest.mark.parametrize("args", [(3, 3), (3, 4, 1), (4, 3, -1), (2, 5, 10), (0, 3)])
def test_tril_triu_indices_match_torch(args):
    assert_same(ember.tril_indices(*args), torch.tril_indices(*args))
    assert_same(ember.triu_indices(*args), torch.triu_indices(*args))


def test_block_diag_matches_torch_and_differentiates():
    arrays = [rand_array((2, 2)), rand_array((1, 3), seed=1), rand_array(2, seed=2)]
    check_op(ember.block_diag, torch.block_diag, *arrays)
    assert_same(ember.block_diag(ember.tensor(5), ember.tensor([[1, 2]])),
                torch.block_diag(torch.tensor(5), torch.tensor([[1, 2]])))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 0.0, float("inf")])
def test_cdist_matches_torch(p):
    a, b = rand_array((2, 4, 3)), rand_array((2, 5, 3), seed=1)
    check_op(lambda x, y: ember.cdist(x, y, p=p), lambda x, y: torch.cdist(x, y, p=p), a, b,
             grad=p not in (0.0,), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError):
        ember.cdist(ember.ones(2, 3), ember.ones(2, 4))


def test_vander_matches_torch():
    for x in (np.array([1, 2, 3]), np.array([0.5, -1.0, 2.0], np.float32)):
        for kw in (dict(), dict(N=4), dict(increasing=True)):
            assert_same(ember.vander(ember.tensor(x), **kw), torch.vander(torch.tensor(x), **kw))


def test_histogram_matches_torch():
    x = rand_array(50)
    e = ember.histogram(ember.tensor(x), bins=7)
    t = torch.histogram(torch.tensor(x), bins=7)
    assert_same(e.hist, t.hist)
    assert_same(e.bin_edges, t.bin_edges)
    w = rand_array(50, seed=4, low=0, high=1)
    e = ember.histogram(ember.tensor(x), bins=3, range=(-1.0, 1.0), weight=ember.tensor(w),
                        density=True)
    t = torch.histogram(torch.tensor(x), bins=3, range=(-1.0, 1.0), weight=torch.tensor(w),
                        density=True)
    assert_same(e.hist, t.hist)


def test_complex_keeps_each_part_and_broadcasts():
    """Built from its parts (`0 + nan*1j` by complex arithmetic would be nan + nanj)."""
    nan, inf = float("nan"), float("inf")
    re_ = np.array([0.0, nan, 1.0, -0.0], np.float32)
    im = np.array([[nan, 0.0, inf, -0.0], [1.0, 2.0, -inf, 4.0]], np.float32)
    e, t = ember.complex(ember.tensor(re_), ember.tensor(im)), \
        torch.complex(torch.tensor(re_), torch.tensor(im))
    got, want = ember.view_as_real(e).numpy(), torch.view_as_real(t).numpy()
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # (-0.0 kept)
    check_op(ember.complex, torch.complex, rand_array((2, 3)), rand_array(3, seed=4))


def test_complex_polar_and_views_match_torch():
    re_, im = rand_array(4), rand_array(4, seed=1)
    check_op(ember.complex, torch.complex, re_, im)
    check_op(ember.polar, torch.polar, np.abs(re_), im)
    z = (re_ + 1j * im).astype(np.complex64)
    e, t = ember.tensor(z), torch.tensor(z)
    v = ember.view_as_real(e)
    assert_same(v, torch.view_as_real(t), check_stride=True)
    v[0, 0] = 9.0  # a true view: the write shows in the complex tensor
    assert e[0].real.item() == 9.0
    back = ember.view_as_complex(v)
    assert back.shape == e.shape and back.tolist() == e.tolist()
    assert back.data_ptr() == e.data_ptr()
    with pytest.raises(RuntimeError):
        ember.view_as_real(ember.ones(2))
    with pytest.raises(RuntimeError):
        ember.view_as_complex(ember.ones(2, 3))


def test_view_as_real_differentiates_like_torch():
    z = (rand_array((2, 3)) + 1j * rand_array((2, 3), seed=1)).astype(np.complex64)
    check_op(lambda a: ember.view_as_real(a) * 2, lambda a: torch.view_as_real(a) * 2, z)


@pytest.mark.parametrize("dtypes", [
    # a 0-d tensor decides the dtype only from a higher kind (found by the fuzzer)
    (("int64", ()), ("int32", (3, 4))),
    (("int64", ()), ("float32", ()), ("bfloat16", (1, 2))),
    (("float64", ()), ("int32", (2,))),
    (("float16", (2, 2)), ("float32", (1,))),
])
def test_block_diag_result_dtype(dtypes):
    def run(L):
        return L.block_diag(*(L.ones(s, dtype=getattr(L, d)) for d, s in dtypes))
    assert_same(run(ember), run(torch))


def test_block_diag_promotes_as_torch_with_0d_tensors():
    """A 0-d tensor decides the result only through a higher kind, and then keeps the
    dimensioned tensors' precision: float32 with a 0-d complex128 gives complex64 (found by
    the fuzzer, seed 20261134: ember gave complex128)."""
    import itertools

    kinds = ["float32", "float64", "complex64", "complex128", "int32", "int64", "bool"]
    for (d1, n1), (d2, n2) in itertools.product(itertools.product(kinds, (0, 1)), repeat=2):
        got, want = (L.block_diag(L.ones((2,) * n1, dtype=getattr(L, d1)),
                                  L.ones((3,) * n2, dtype=getattr(L, d2))).dtype
                     for L in (ember, torch))
        assert str(got).split('.')[-1] == str(want).split('.')[-1], (d1, n1, d2, n2)


# --- pdist --------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_matches_torch_with_gradients(p):
    # rows 0 and 1 are equal: a zero distance, whose gradient torch gives as 0 (no NaN)
    x = rand_array((6, 3), np.float64)
    x[1] = x[0]
    check_op(lambda a: ember.pdist(a, p), lambda a: torch.pdist(a, p), x)
    check_op(lambda a: ember.nn.functional.pdist(a, p), lambda a: torch.nn.functional.pdist(a, p),
             x.astype(np.float32))


def test_pdist_shapes_errors_and_finite_differences():
    for shape in ((1, 4), (0, 4), (3, 0)):
        assert_same(ember.pdist(ember.ones(*shape)), torch.pdist(torch.ones(*shape)))
    for call in (lambda m: m.pdist(m.ones(2, 3, 4)), lambda m: m.pdist(m.ones(3, 4).long()),
                 lambda m: m.pdist(m.ones(3, 4).half()), lambda m: m.pdist(m.ones(3, 4), -1.0),
                 lambda m: m.pdist(m.ones(3, 4, dtype=m.complex64))):
        with pytest.raises(Exception) as et:
            call(torch)
        with pytest.raises(type(et.value)) as ee:
            call(ember)
        assert str(ee.value) == str(et.value)
    check_grads(lambda a: ember.pdist(a, 1.5), rand_array((4, 3), np.float64))


NAN = float("nan")


@pytest.mark.parametrize("p", [True, 3, np.float32(3), NAN, -0.5, "2", None, 1 + 0j, [2]])
@pytest.mark.parametrize("op", ["cdist", "pdist"])
def test_norm_order_p_read_and_refused_as_torch(op, p):
    """p is read as the parser reads a float (bools, ints, NumPy numbers, 0-d tensors),
    refused in its words otherwise and before the other checks; NaN is not non-negative."""
    x = rand_array((3, 2), np.float32)

    def call(m, p):
        t = m.tensor(x)
        return m.cdist(t, t, p) if op == "cdist" else m.nn.functional.pdist(t, p)

    if isinstance(p, bool | int | np.floating):
        same_result(lambda m: call(m, p), rtol=1e-6)
    else:
        real = isinstance(p, float)  # (NaN and -0.5: read, then refused by value)
        same_message(lambda m: call(m, p), RuntimeError if real else TypeError)
    same_result(lambda m: call(m, m.tensor(2.0)), rtol=1e-6)
    if op == "cdist":  # (a wrong p is refused before a wrong shape)
        same_message(lambda m: m.cdist(m.ones(3), m.ones(3), "2"), TypeError)


# --- gradient -----------------------------------------------------------------------------

def _gradient_cases(m, x, coords):
    """torch.gradient's call forms: default and scalar steps, a step per dim, chosen dims,
    sample coordinates (float64 beside a float32 input: the weights promote the centre)."""
    return {
        "default": lambda eo: m.gradient(x, edge_order=eo),
        "scalar": lambda eo: m.gradient(x, spacing=0.3, edge_order=eo),
        "per_dim": lambda eo: m.gradient(x, spacing=[2, 0.5, 3], edge_order=eo),
        "one_dim": lambda eo: m.gradient(x, dim=1, edge_order=eo),
        "dims": lambda eo: m.gradient(x, dim=[2, 0], spacing=[2, 0.5], edge_order=eo),
        "scalar_dims": lambda eo: m.gradient(x, spacing=2, dim=[-1], edge_order=eo),
        "coords": lambda eo: m.gradient(x, spacing=[m.tensor(c) for c in coords],
                                        edge_order=eo),
        "coords_dim": lambda eo: m.gradient(x, spacing=(m.tensor(coords[1]),), dim=1,
                                            edge_order=eo),
    }


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_gradient_matches_torch_bit_for_bit(dtype, edge_order):
    # the same differences and weights in the same order as torch's, so the same roundings;
    # integers divide into the default float dtype
    rng = np.random.default_rng(0)
    x = np.round(rng.standard_normal((4, 5, 6)) * 4, 2)
    coords = [np.cumsum(rng.random(n) + 0.1) for n in (4, 5, 6)]
    cases_e = _gradient_cases(ember, ember.tensor(x).to(getattr(ember, dtype)), coords)
    cases_t = _gradient_cases(torch, torch.tensor(x).to(getattr(torch, dtype)), coords)
    for name in cases_e:
        got, want = cases_e[name](edge_order), cases_t[name](edge_order)
        assert isinstance(got, tuple) and len(got) == len(want), name
        for a, b in zip(got, want):
            assert_same(a, b, 0, 0)


def test_gradient_backpropagates_like_torch():
    x = rand_array((5, 4), np.float64)
    c = np.cumsum(np.random.default_rng(1).random(5) + 0.2)
    for eo in (1, 2):
        check_op(lambda a, eo=eo: ember.gradient(a, edge_order=eo),
                 lambda a, eo=eo: torch.gradient(a, edge_order=eo), x)
        check_op(lambda a, s, eo=eo: ember.gradient(a, spacing=(s,), dim=0, edge_order=eo),
                 lambda a, s, eo=eo: torch.gradient(a, spacing=(s,), dim=0, edge_order=eo),
                 x, c)
    check_grads(lambda a: ember.gradient(a, spacing=0.5, dim=1, edge_order=2)[0], x)


@pytest.mark.parametrize("call", [
    lambda m, x: m.gradient(x, spacing=[2]),
    lambda m, x: m.gradient(x, dim=[1, 1]),
    lambda m, x: m.gradient(x, dim=3),
    lambda m, x: m.gradient(x, edge_order=3),
    lambda m, x: m.gradient(x[:2], edge_order=2),
    lambda m, x: m.gradient(x.to(m.uint8)),
    lambda m, x: m.gradient(x, spacing=(m.ones(4, 1), m.ones(5), m.ones(6))),
    lambda m, x: m.gradient(x, spacing=[m.tensor(2.0), 3, 4]),
    lambda m, x: m.gradient(x, dim=[0], spacing=[1, 2]),
], ids=range(9))
def test_gradient_errors_as_torch(call):
    x = rand_array((4, 5, 6))
    with pytest.raises(Exception) as et:
        call(torch, torch.tensor(x))
    with pytest.raises(type(et.value)) as ee:
        call(ember, ember.tensor(x))
    assert str(ee.value) == str(et.value)


# --- isin refuses bool (and complex) on either side, tensors and Python numbers ------------

@pytest.mark.parametrize("call", [
    lambda ns: ns.isin(ns.tensor([True, False]), ns.tensor([True])),
    lambda ns: ns.isin(ns.tensor([True, False]), True),
    lambda ns: ns.isin(True, ns.tensor([True, False])),
    lambda ns: ns.isin(ns.tensor([1, 0]), ns.tensor([True])),
    lambda ns: ns.isin(ns.tensor([1, 0]), True),
    lambda ns: ns.isin(False, ns.tensor([1, 0])),
    lambda ns: ns.isin(ns.tensor([], dtype=ns.bool), ns.tensor([1])),
    lambda ns: ns.isin(ns.tensor([1j]), ns.tensor([1j])),
], ids=["bool-bool", "bool-scalar", "scalar-bool", "int-bool", "int-True", "False-int",
        "empty-bool", "complex"])
def test_isin_refuses_bool_like_torch(call):
    same_message(call)


def test_isin_mixed_numbers_like_torch():
    same_result(lambda ns: ns.isin(ns.tensor([1.0, 2.5]), ns.tensor([1, 2])))
    same_result(lambda ns: ns.isin(ns.tensor([1, 2, 3]), 1.5))


@pytest.mark.parametrize("values", [[float("inf"), 1.0, 2.0], [1.0, 2.0, float("inf")],
                                    [1.0, float("inf"), 2.0], [float("inf")], [3.0],
                                    [-float("inf"), float("inf")], [1e38, 3e38, 1e38]])
def test_trapezoid_family_follows_torchs_formulas_at_infinities(values):
    # Over a constant spacing torch computes (sum - (first + last) / 2) * dx: an infinite
    # end gives inf - inf = NaN there, and 3e38 overflows the float32 sum. Exact: these are
    # infinities and NaNs, or sums of few exactly representable terms.
    calls = [lambda L, y: L.trapezoid(y), lambda L, y: L.trapezoid(y, dx=0.25),
             lambda L, y: L.trapz(y, dx=2), lambda L, y: L.cumulative_trapezoid(y),
             lambda L, y: L.cumulative_trapezoid(y, dx=0.25),
             lambda L, y: L.trapezoid(y, L.arange(float(len(values))) * 0.5),
             lambda L, y: L.cumulative_trapezoid(y, L.arange(float(len(values))) * 0.5)]
    for call in calls:
        want = call(torch, torch.tensor(values))
        got = call(ember, ember.tensor(values))
        assert str(got.tolist()) == str(want.tolist())


def test_trapezoid_nodes_are_named_as_torchs():
    y = np.random.default_rng(0).standard_normal((3, 5))
    x = np.cumsum(np.random.default_rng(1).random(5))
    for call in (lambda L, a: L.trapezoid(a), lambda L, a: L.trapezoid(a, dx=0.5),
                 lambda L, a: L.trapezoid(a, L.tensor(x)),
                 lambda L, a: L.cumulative_trapezoid(a, L.tensor(x)),
                 lambda L, a: L.cumulative_trapezoid(a, dx=2.0)):
        ye, yt = ember.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        oe, ot = call(ember, ye), call(torch, yt)
        assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
        oe.sum().backward()
        ot.sum().backward()
        # float64 gradients of sums of a few products: equal to rounding
        np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("given", ["int", "list", "one_list"])
def test_block_diag_refuses_non_tensor_elements(given):
    """PyTorch's parser TypeError (with the element's position), not an AttributeError."""
    def call(L):
        a = L.ones(2, 2)
        return L.block_diag(*{"int": (a, 3), "list": (a, [1.0]), "one_list": ([a, a],)}[given])

    same_message(call, TypeError)


def test_gradient_with_coordinates_along_a_dim_of_two():
    # two samples have one step: the one-sided difference at both ends (it read a second)
    x = np.arange(6.0).reshape(2, 3) ** 2
    coords = ([0.0, 2.0], [0.0, 1.0, 3.0])
    for lib in (ember, torch):
        got = lib.gradient(lib.tensor([1.0, 3.0]), spacing=(lib.tensor(coords[0]),))
        got2 = lib.gradient(lib.tensor(x), spacing=tuple(lib.tensor(c) for c in coords),
                            dim=(0, 1))
        if lib is ember:
            mine = (got, got2)
    for a, b in zip(mine[0] + mine[1], got + got2):
        assert_same(a, b)
