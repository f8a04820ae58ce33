"""ternary.py against torch: where, clamp / clip (scalar and tensor bounds), lerp, addcmul,
addcdiv: values over dtypes and broadcast shapes, exceptions, gradients, in-place, meta."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import ALL_DTYPES, Spec, _grad_compare, make, same_outcome

from helpers import check_grads, check_op, rand_array, same_message

SHAPES3 = [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((), (2, 3), ()),
           ((0, 2), (2,), (1, 2)), ((2, 3, 4), (3, 1), (4,))]


def triple(shapes, dtypes, domains=((-2, 2),) * 3, transpose_first=True):
    out = []
    for k, (shape, d, dom) in enumerate(zip(shapes, dtypes, domains)):
        out.append(make(shape, d, dom, seed=60 + k, transpose=transpose_first and k == 0))
    return [e for e, _ in out], [t for _, t in out]


def cond(shape, seed=1):
    e, t = make(shape, ember.bool, seed=seed)
    return e, t


# --- where -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_where_values_over_shapes(dtype):
    for shapes in SHAPES3:
        c, ce = cond(shapes[0])
        es, ts = triple(shapes[1:] + ((),), (dtype, dtype, dtype))
        same_outcome(ember.where, torch.where, (c, es[0], es[1]), (ce, ts[0], ts[1]))
    e, t = make((3, 4), dtype)
    c, ct = cond((3, 4))
    for s in (2, 1.5, True):
        same_outcome(ember.where, torch.where, (c, e, s), (ct, t, s))
        same_outcome(ember.where, torch.where, (c, s, e), (ct, s, t))


def test_where_scalars_promotion_and_condition_dtypes():
    c, ct = cond((4,))
    for a, b in ((1, 2), (1.0, 2), (True, False), (1, 2.5j)):
        same_outcome(ember.where, torch.where, (c, a, b), (ct, a, b))
    i, it = make((4,), ember.int64)
    same_outcome(ember.where, torch.where, (i, 1, 2), (it, 1, 2))
    f, ft = make((4,), ember.float32)
    same_outcome(lambda x: ember.where(x > 0, x, ember.tensor(0, dtype=ember.float64)),
                 lambda x: torch.where(x > 0, x, torch.tensor(0, dtype=torch.float64)), (f,), (ft,))
    same_outcome(lambda x: ember.where(x > 0), lambda x: torch.where(x > 0), (f,), (ft,))
    same_outcome(ember.where, torch.where, (c, f, make((3,), ember.float32)[0]),
                 (ct, ft, make((3,), ember.float32)[1]))


def test_where_gradients_and_method():
    c = rand_array((3, 4), np.bool_)
    ce, ct = ember.tensor(c), torch.tensor(c)
    check_op(lambda a, b: ember.where(ce, a, b), lambda a, b: torch.where(ct, a, b),
             rand_array((3, 4)), rand_array((4,), seed=2))
    check_op(lambda a: a.where(ce, 0.5), lambda a: a.where(ct, 0.5), rand_array((3, 4)))
    check_grads(lambda a, b: ember.where(ce, a * b, b), rand_array((3, 4)), rand_array((4,)))


# --- clamp ----------------------------------------------------------------------------------

CLAMP_BOUNDS = [(-0.5, 0.5), (None, 0.3), (-0.3, None), (1.0, -1.0), (0, 1), (0.5, None),
                (float("nan"), None)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_clamp_with_number_bounds(dtype):
    e, t = make((3, 4), dtype, transpose=True)
    for lo, hi in CLAMP_BOUNDS:
        same_outcome(lambda x, a=lo, b=hi: ember.clamp(x, a, b),
                     lambda x, a=lo, b=hi: torch.clamp(x, a, b), (e,), (t,))
        same_outcome(lambda x, a=lo, b=hi: x.clip(min=a, max=b),
                     lambda x, a=lo, b=hi: x.clip(min=a, max=b), (e,), (t,))
    same_outcome(ember.clamp, torch.clamp, (e,), (t,))  # neither bound: RuntimeError


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_clamp_with_tensor_bounds(dtype):
    for shapes in SHAPES3:
        es, ts = triple(shapes, (dtype, dtype, dtype))
        same_outcome(ember.clamp, torch.clamp, es, ts)
        same_outcome(lambda x, lo: ember.clamp(x, min=lo), lambda x, lo: torch.clamp(x, min=lo),
                     es[:2], ts[:2])
        same_outcome(lambda x, hi: x.clamp(max=hi), lambda x, hi: x.clamp(max=hi),
                     es[::2], ts[::2])
    i, it = make((4,), ember.int64)
    f, ft = make((4,), ember.float32)
    # A tensor bound next to a number bound is refused (TypeError), as torch's overloads do.
    same_outcome(lambda x, lo: ember.clamp(x, lo, 1), lambda x, lo: torch.clamp(x, lo, 1),
                 (i, f), (it, ft))


def test_clamp_in_place_and_aliases():
    for dtype in (ember.float32, ember.int32, ember.bool):
        for lo, hi in ((-0.5, 0.5), (0, 1), (-1, None)):
            e, t = make((3, 4), dtype)
            got = same_outcome(lambda x, a=lo, b=hi: x.clamp_(a, b),
                               lambda x, a=lo, b=hi: x.clamp_(a, b), (e,), (t,))
            assert got is None or got is e
            e, t = make((3, 4), dtype)
            same_outcome(lambda x: x.clamp_min_(0), lambda x: x.clamp_min_(0), (e,), (t,))
            same_outcome(lambda x: x.clamp_max_(0), lambda x: x.clamp_max_(0), (e,), (t,))
    e, t = make((3, 4), ember.float32)
    same_outcome(ember.clamp_min, torch.clamp_min, (e, 0.2), (t, 0.2))
    same_outcome(ember.clamp_max, torch.clamp_max, (e, 0.2), (t, 0.2))
    lo, lot = make((4,), ember.float32, seed=3)
    same_outcome(lambda x, b: x.clamp_(min=b), lambda x, b: x.clamp_(min=b), (e, lo), (t, lot))


def test_clamp_gradients_for_input_and_tensor_bounds():
    x = rand_array((3, 4), seed=1)
    lo = rand_array((4,), low=-1.0, high=0.0, seed=2)
    hi = rand_array((3, 1), low=0.0, high=1.0, seed=3)
    check_op(ember.clamp, torch.clamp, x, lo, hi)
    check_op(lambda a, b: ember.clamp(a, max=b), lambda a, b: torch.clamp(a, max=b), x, hi)
    # min > max: the result is max everywhere, and max takes the gradient.
    check_op(ember.clamp, torch.clamp, x, hi.reshape(3, 1) + 1, lo.reshape(1, 4))
    check_op(lambda a: a.clamp(-0.5, 0.5), lambda a: a.clamp(-0.5, 0.5), x)
    check_grads(ember.clamp, x.astype(np.float64) * 1.37, lo, hi)
    spec = Spec("clamp", ember.clamp, torch.clamp)
    es, ts = triple(((3, 4), (4,), (3, 1)), (ember.float64,) * 3)
    _grad_compare(spec, es, ts)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form", ["clamp", "clamp_min", "clamp_max", "clip", "in_place",
                                  "hardtanh"])
def test_clamp_16_bit_number_bounds_gradient_and_tangent(dtype, form):
    # (a number bound reaches the rule rounded, as an ml_dtypes scalar for bfloat16, which
    # the masks' comparisons once refused with a TypeError)
    call = {"clamp": lambda m, x: m.clamp(x, 0.3, 1.7), "clamp_min": lambda m, x: x.clamp(min=0.9),
            "clamp_max": lambda m, x: m.clamp_max(x, 1.3), "clip": lambda m, x: x.clip(max=1.1),
            "in_place": lambda m, x: x.clone().clamp_(0.75, 1.7),
            "hardtanh": lambda m, x: m.nn.functional.hardtanh(x, -1.3, 1.3)}[form]
    res = []
    for m in (ember, torch):
        x = m.tensor([0.7, 1.2, 2.5, -1.5, 0.3], dtype=getattr(m, dtype), requires_grad=True)
        call(m, x).sum().backward()
        _, t = m.func.jvp(lambda y, m=m: call(m, y), (x.detach(),), (m.ones_like(x.detach()),))
        res.append((x.grad, t))
    for e, t in zip(res[0], res[1]):
        # (masks of 0s and 1s: exact)
        assert e.tolist() == t.tolist() and str(e.dtype) == str(t.dtype).replace("torch", "ember")


def test_clamp_grad_fn_names_and_complex():
    e = ember.tensor([0.5, 1.5], requires_grad=True)
    t = torch.tensor([0.5, 1.5], requires_grad=True)
    assert type(e.clamp(0, 1).grad_fn).__name__ == type(t.clamp(0, 1).grad_fn).__name__
    assert type(e.clamp(e * 0).grad_fn).__name__ == type(t.clamp(t * 0).grad_fn).__name__
    c, ct = make((3,), ember.complex64)
    same_outcome(lambda x: x.clamp(0, 1), lambda x: x.clamp(0, 1), (c,), (ct,))


def _clamp_forms():
    """Every clamp entry point with one bound `b` (and clamp with it on both sides)."""
    return {
        "clamp min": lambda L, x, b: L.clamp(x, b),
        "clamp max": lambda L, x, b: L.clamp(x, max=b),
        "clamp both": lambda L, x, b: L.clamp(x, b, b),
        "clamp_min": lambda L, x, b: L.clamp_min(x, b),
        "clamp_max": lambda L, x, b: L.clamp_max(x, b),
        "clip": lambda L, x, b: L.clip(x, b),
        "clamp_": lambda L, x, b: x.clone().clamp_(b),
        "clamp_max_": lambda L, x, b: x.clone().clamp_max_(b),
        "clip_ max": lambda L, x, b: x.clone().clip_(max=b),
        "clamp_min_": lambda L, x, b: x.clone().clamp_min_(b),
    }


def test_clamp_bounds_of_other_kinds_than_the_input():
    """Complex, bool and NumPy number bounds, and tensor bounds of other dtypes, over float,
    integer, bool and complex inputs: torch's results or its exception type and words. A
    float input reads number bounds as doubles (1+0j is 1, 1j overflows); clamp_min /
    clamp_max refuse any complex number; an integer input promotes (complex refused, in place
    as a cast); complex tensor bounds reach kernels that have none (maximum_cpu ...)."""
    inputs = {"float32": ([1.0, 2.5], "float32"), "int64": ([1, 3], "int64"),
              "uint8": ([1, 3], "uint8"), "bool": ([True, False], "bool"),
              "complex64": ([1 + 1j, 2], "complex64")}
    bounds = {
        "1j": lambda L: 1j, "1+0j": lambda L: 1 + 0j, "np complex128": lambda L: np.complex128(1j),
        "np complex64": lambda L: np.complex64(1), "np bool": lambda L: np.bool_(True),
        "True": lambda L: True, "2.5": lambda L: 2.5,
        "complex tensor": lambda L: L.tensor(1 + 0j),
        "complex tensor 1-d": lambda L: L.tensor([1j, 2]),
        "bool tensor": lambda L: L.tensor(True), "int tensor": lambda L: L.tensor(2),
        "float64 tensor": lambda L: L.tensor(2.0, dtype=L.float64),
        "uint8 tensor": lambda L: L.tensor([2, 1], dtype=L.uint8),
    }
    for iname, (values, dname) in inputs.items():
        for bname, bound in bounds.items():
            for fname, form in _clamp_forms().items():
                got = []
                for L in (ember, torch):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # (NumPy's ComplexWarning)
                        try:
                            r = form(L, L.tensor(values, dtype=getattr(L, dname)), bound(L))
                            got.append((str(r.dtype).split(".")[1], r.tolist()))
                        except Exception as exc:  # noqa: BLE001 - the refusal is compared
                            got.append((type(exc).__name__, str(exc)))
                assert got[0] == got[1], (iname, bname, fname, got)


def test_clamp_on_meta():
    e = ember.empty(4, 3, device="meta").t()
    t = torch.empty(4, 3, device="meta").t()
    same_outcome(lambda x: x.clamp(0, 1), lambda x: x.clamp(0, 1), (e,), (t,), check_stride=True)
    lo, lot = ember.empty(3, 1, device="meta"), torch.empty(3, 1, device="meta")
    same_outcome(ember.clamp, torch.clamp, (e, lo), (t, lot), check_stride=True)


# --- lerp -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_lerp_values_and_dtype_rules(dtype):
    for shapes in SHAPES3:
        es, ts = triple(shapes, (dtype,) * 3, ((-2, 2), (-2, 2), (-0.5, 1.5)))
        same_outcome(ember.lerp, torch.lerp, es, ts)
        for w in (0.25, 0.75, 1.0):
            same_outcome(ember.lerp, torch.lerp, (*es[:2], w), (*ts[:2], w))
    es, ts = triple(((3,), (3,), (3,)), (dtype, ember.float64, ember.float32))
    same_outcome(ember.lerp, torch.lerp, es, ts)


def test_lerp_gradients_in_place_and_meta():
    a, b, w = rand_array((3, 4)), rand_array((4,), seed=2), rand_array((3, 1), seed=3)
    check_op(ember.lerp, torch.lerp, a, b, w)
    check_op(lambda x, y: ember.lerp(x, y, 0.3), lambda x, y: torch.lerp(x, y, 0.3), a, b)
    check_grads(ember.lerp, a, b, w)
    for weight in (0.3, None):
        (e, f), (t, u) = triple(((3, 4), (4,)), (ember.float32,) * 2)
        we, wt = (weight, weight) if weight is not None else make((4,), ember.float32, seed=9)
        got = same_outcome(lambda x, y, z: x.lerp_(y, z), lambda x, y, z: x.lerp_(y, z),
                           (e, f, we), (t, u, wt))
        assert got is e
    m = ember.empty(4, 3, device="meta").t()
    mt = torch.empty(4, 3, device="meta").t()
    same_outcome(lambda x: x.lerp(x, 0.5), lambda x: x.lerp(x, 0.5), (m,), (mt,),
                 check_stride=True)


# --- addcmul / addcdiv ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_addc_values_over_shapes_and_values(name, dtype):
    fe, ft = getattr(ember, name), getattr(torch, name)
    for shapes in SHAPES3:
        es, ts = triple(shapes, (dtype,) * 3, ((-2, 2), (-2, 2), (0.5, 2)))
        same_outcome(fe, ft, es, ts)
        for v in (0.5, 2, -1):
            same_outcome(lambda *xs, v=v: fe(*xs, value=v), lambda *xs, v=v: ft(*xs, value=v),
                         es, ts)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addc_mixed_dtypes_gradients_and_in_place(name):
    fe, ft = getattr(ember, name), getattr(torch, name)
    for dtypes in ((ember.float32, ember.int64, ember.float64), (ember.int64,) * 3,
                   (ember.float32, ember.int32, ember.int64), (ember.int32, ember.float32,
                                                              ember.float32)):
        es, ts = triple(((3,), (3,), (3,)), dtypes, ((-2, 2), (-2, 2), (1, 3)))
        same_outcome(fe, ft, es, ts)
        same_outcome(lambda *xs: getattr(xs[0], name + "_")(*xs[1:], value=2),
                     lambda *xs: getattr(xs[0], name + "_")(*xs[1:], value=2), es, ts)
    arrays = (rand_array((3, 4)), rand_array((4,), seed=2),
              rand_array((3, 1), np.float32, 0.5, 2.0, seed=3))
    check_op(lambda *xs: fe(*xs, value=0.7), lambda *xs: ft(*xs, value=0.7), *arrays)
    check_grads(lambda *xs: fe(*xs, value=0.7), *arrays)
    e = ember.tensor([0.5, 1.5], requires_grad=True)
    t = torch.tensor([0.5, 1.5], requires_grad=True)
    assert type(fe(e, e, e).grad_fn).__name__ == type(ft(t, t, t).grad_fn).__name__
    m = ember.empty(4, 3, device="meta").t()
    mt = torch.empty(4, 3, device="meta").t()
    same_outcome(lambda x: fe(x, x, x), lambda x: ft(x, x, x), (m,), (mt,), check_stride=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int8", "bool",
                                   "complex64", "complex128"])
def test_large_where_and_masked_fill_select_exactly(dtype):
    # Past a few thousand elements the select is branch-free on the values' bits; it must
    # give torch's results bit for bit, with broadcast conditions and scalar operands.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 64, 80)) * 3
    cond = rng.random((64, 80)) < 0.5
    row = rng.random((1, 80)) < 0.5
    e = [ember.tensor(v).to(getattr(ember, dtype)) for v in (a, b)]
    t = [torch.tensor(v).to(getattr(torch, dtype)) for v in (a, b)]
    for c in (cond, row):
        ce, ct = ember.tensor(c), torch.tensor(c)
        same_outcome(ember.where, torch.where, (ce, *e), (ct, *t))
        same_outcome(lambda x, m: x.masked_fill(m, 1), lambda x, m: x.masked_fill(m, 1),
                     (e[0], ce), (t[0], ct))
    if dtype.startswith("float"):
        same_outcome(lambda m, x: ember.where(m, x, 0.5), lambda m, x: torch.where(m, x, 0.5),
                     (ember.tensor(cond), e[0]), (torch.tensor(cond), t[0]))


@pytest.mark.parametrize("size", [5, 300_000])
def test_clamp_keeps_the_input_on_a_tie_with_a_bound_as_torch(size):
    """clamp(-0.0, min=0) is -0.0 and clamp(0.0, max=-0.0) is 0.0: the input is kept on a
    tie, with scalar or tensor bounds; NaN stays NaN. 300,000 elements take the blockwise
    comparison of a scalar bound; there torch's own vectorised loop gives +0.0 and a
    negative NaN, so only the values are compared (bit for bit on small inputs)."""
    base = [-0.0, 0.0, float("nan"), 2.0, -3.0]
    calls = (lambda L, x: L.clamp(x, min=0), lambda L, x: L.clamp(x, max=-0.0),
             lambda L, x: L.clamp(x, min=L.zeros(x.shape)), lambda L, x: x.clamp_min(0),
             lambda L, x: L.clamp(x, min=-1, max=0.0), lambda L, x: x.clip(0, 1))
    for call in calls:
        got, want = (call(L, L.tensor(base * (size // 5))).numpy() for L in (ember, torch))
        if size == 5:
            assert np.array_equal(got.view(np.int32), want.view(np.int32))
        else:
            np.testing.assert_array_equal(got, want)


def test_inplace_clamp_checks_the_broadcast_shape_before_the_dtype():
    """A bool self with bool tensor bounds that broadcast past self's shape: torch reports
    the shape first (found by the fuzzer, seed 20261185; ember reported clamp_cpu's bool)."""
    msgs = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as exc:
            L.zeros(4, 4, dtype=L.bool).clamp_(min=L.zeros(4, 4, dtype=L.bool),
                                                max=L.zeros(3, 4, 4, dtype=L.bool))
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]


_CLAMP_OUT_CASES = {
    "int8 into int8, float bounds": lambda m: m.clamp(m.tensor([1, 2, 3], dtype=m.int8), 0.5, 2.5,
                                                      out=m.zeros(3, dtype=m.int8)),
    "float32 into float64": lambda m: m.clamp(m.tensor([1., 2, 3]), 0.5, 2.5,
                                              out=m.zeros(3, dtype=m.float64)),
    "int64 into int32": lambda m: m.clamp(m.tensor([1, 2, 3]), 1, 2,
                                          out=m.zeros(3, dtype=m.int32)),
    "clamp_min into int8": lambda m: m.clamp_min(m.tensor([1, 2, 3], dtype=m.int8), 0.5,
                                                 out=m.zeros(3, dtype=m.int8)),
    "clamp_max into float32": lambda m: m.clamp_max(m.tensor([1., 2, 3]), 2.5,
                                                    out=m.zeros(3)),
    "tensor bounds into float64": lambda m: m.clamp(m.tensor([1., 2, 3]), m.tensor(0.5),
                                                    m.tensor(2.5), out=m.zeros(3, dtype=m.float64)),
    "tensor bounds into int8": lambda m: m.clamp(m.tensor([1, 2, 3], dtype=m.int8), m.tensor(0.5),
                                                 m.tensor(2.5), out=m.zeros(3, dtype=m.int8)),
}


@pytest.mark.parametrize("case", list(_CLAMP_OUT_CASES))
def test_clamp_out_dtype_rules_are_torchs(case):
    """Number bounds: out must be the result's dtype ("Found dtype Char but expected
    Float"); tensor bounds: out takes whatever the result casts to."""
    import torch

    got = []
    for m in (ember, torch):
        try:
            r = _CLAMP_OUT_CASES[case](m)
            got.append((str(r.dtype).split(".")[-1], r.tolist()))
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int32", "int64",
           "bool"]
_BOUNDS = [(-1e5, 1e5), (None, 1e39), (-1e39, None), (None, float("inf")), (float("nan"), None),
           (None, 1000), (-1, None), (-300, None), (None, 2 ** 40), (None, 2 ** 63),
           (None, 2 ** 70), (-(2 ** 63) - 1, None), (True, None), (None, False), (0, 1)]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_clamp_number_bounds_must_fit_the_result_type(dtype):
    # torch converts a number bound to the result's C type and refuses what overflows it
    # (clamp(max=1e5) on float16: "c10::Half"), refuses number bounds on a bool result,
    # and reads ints past int64 as Python's OverflowError.
    def x(L):
        return L.tensor([1, 7]).to(getattr(L, dtype))

    for lo, hi in _BOUNDS:
        for call in (lambda L, lo=lo, hi=hi: x(L).clamp(lo, hi),
                     lambda L, lo=lo, hi=hi: x(L).clone().clamp_(lo, hi),
                     lambda L, lo=lo, hi=hi: L.clip(x(L), lo, hi)):
            try:
                want = call(torch)
            except Exception as exc:  # noqa: BLE001 - torch's error is the expectation
                with pytest.raises(type(exc)) as got:
                    call(ember)
                assert str(got.value) == str(exc), (lo, hi)
            else:
                assert str(call(ember).tolist()) == str(want.tolist()), (lo, hi)
    same_message(lambda L: L.tensor([1.0], dtype=L.float16).clamp_min(-1e5))
    same_message(lambda L: L.tensor([1.0], dtype=L.bfloat16).clamp_max(1e39))


@pytest.mark.parametrize("shapes", [
    ((3,), (2,), (3,)), ((2,), (2,), (3,)), ((3,), (3,), (2,)),
    ((2, 3), (3,), (2, 2)), ((2, 3), (4, 1, 1), (5, 2, 1, 1)),
], ids=["cond_input", "input_other", "cond_other", "2d", "4d"])
def test_where_broadcasts_in_torch_operand_order(shapes):
    # NOTE: PyTorch broadcasts condition, input, other in that order, so a condition that
    # does not fit `input` is "tensor a" in its message (ember used to broadcast input with
    # other first and name them the other way round).
    sc, sa, sb = shapes

    def call(L):
        return L.where(L.ones(sc, dtype=L.bool), L.ones(sa, requires_grad=True), L.zeros(sb))
    try:
        call(torch)
    except RuntimeError:
        same_message(call)
    else:
        assert tuple(call(ember).shape) == tuple(call(torch).shape)
    same_message(lambda L: L.ones(2).where(L.ones(3, dtype=L.bool), L.ones(2)))


@pytest.mark.parametrize("cond", ["s", "ndarray", None])
def test_where_refuses_a_condition_that_is_not_a_tensor_in_its_one_argument_form(cond):
    # nonzero's form: the parser's words, numpy.ndarray as CPython names it (it raised an
    # AttributeError). (Three arguments: torch lists its overloads; ember names the first.)
    value = np.ones(3) if cond == "ndarray" else cond
    for args in ((value,),):
        msgs = []
        for lib in (ember, torch):
            with pytest.raises(TypeError) as info:
                lib.where(*args)
            msgs.append(str(info.value).splitlines()[0])
        assert msgs[0] == msgs[1]
