"""binary_math.py against torch: remainder/fmod, atan2/hypot, maximum/minimum/fmax/fmin,
isclose/allclose/equal: every dtype, broadcast / 0-d / empty / transposed operands, scalars,
gradients, in-place forms and meta."""

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import Spec, binary_tests, make, same_outcome

from helpers import check_op, same_message

NONZERO = ((-3.0, 3.0), (0.5, 3.0))
SPECS = [
    Spec("remainder", ember.remainder, torch.remainder, NONZERO),
    Spec("fmod", ember.fmod, torch.fmod, NONZERO),
    Spec("atan2", ember.atan2, torch.atan2, scalars=False),
    Spec("arctan2", ember.arctan2, torch.arctan2, scalars=False),
    Spec("hypot", ember.hypot, torch.hypot, scalars=False),
    Spec("maximum", ember.maximum, torch.maximum, inplace=None, scalars=False),
    Spec("minimum", ember.minimum, torch.minimum, inplace=None, scalars=False),
    Spec("fmax", ember.fmax, torch.fmax, inplace=None, scalars=False),
    Spec("fmin", ember.fmin, torch.fmin, inplace=None, scalars=False),
    Spec("isclose", lambda a, b: ember.isclose(a, a + b * 1e-6),
         lambda a, b: torch.isclose(a, a + b * 1e-6), grad=False, inplace=None, scalars=False,
         extra={"meta_stride": False}),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = binary_tests(SPECS)


def test_ties_split_the_gradient_like_torch():
    a = np.array([1.0, 2.0, 3.0, np.nan, 5.0])
    b = np.array([1.0, 3.0, 2.0, 4.0, np.nan])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        check_op(getattr(ember, name), getattr(torch, name), a, b)


def test_nan_propagation():
    a = [1.0, float("nan"), float("nan"), 2.0]
    b = [float("nan"), 1.0, float("nan"), 3.0]
    for name in ("maximum", "minimum", "fmax", "fmin", "hypot", "atan2", "remainder", "fmod"):
        same_outcome(getattr(ember, name), getattr(torch, name),
                     (ember.tensor(a), ember.tensor(b)), (torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [4, 20], ids=["short", "vectorised"])
def test_a_zero_remainder_keeps_the_dividends_sign_like_torch(dtype, n):
    """PyTorch's remainder is fmod adjusted by the divisor: a zero result is fmod's, with the
    dividend's sign (3 % -1 is +0.0, -3 % 1 is -0.0), on its scalar and vectorised paths."""
    a = ([3.0, -3.0, 0.0, -0.0, 2.0, -2.0, 5.5, -5.5] * 3)[:n]
    b = ([-1.0, 1.0, -1.0, 1.0, 2.0, 2.0, -5.5, 5.5] * 3)[:n]
    for call in (lambda m: m.remainder(m.tensor(a, dtype=getattr(m, dtype)),
                                       m.tensor(b, dtype=getattr(m, dtype))),
                 lambda m: m.tensor(a, dtype=getattr(m, dtype)) % -1.0,
                 lambda m: 3.0 % m.tensor(b, dtype=getattr(m, dtype))):
        got, want = call(ember), call(torch)
        # exact, signs included: the zeros are what differs
        assert np.array_equal(np.signbit(got.float().numpy()), np.signbit(want.float().numpy()))
        assert got.tolist() == want.tolist()


def test_isclose_options_and_errors():
    a = [1.0, float("nan"), float("inf"), -float("inf"), 1.0 + 1e-9, 0.0]
    b = [1.0, float("nan"), float("inf"), float("inf"), 1.0, 1e-9]
    ea, eb, ta, tb = ember.tensor(a), ember.tensor(b), torch.tensor(a), torch.tensor(b)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 0}, {"atol": 1e-8, "rtol": 0},
               {"rtol": 0, "atol": 0, "equal_nan": True},
               {"rtol": -1.0}, {"atol": -1.0}):
        for fe, ft in ((ember.isclose, torch.isclose), (ember.allclose, torch.allclose)):
            same_outcome(lambda x, y, f=fe, k=kw: f(x, y, **k),
                         lambda x, y, f=ft, k=kw: f(x, y, **k), (ea, eb), (ta, tb))
    # Mismatched dtypes are refused; integers compare in floating point.
    same_outcome(ember.isclose, torch.isclose, (ember.tensor([1, 2]), ember.tensor([1.0, 2.0])),
                 (torch.tensor([1, 2]), torch.tensor([1.0, 2.0])))
    same_outcome(ember.isclose, torch.isclose, (ember.tensor([100, 2]), ember.tensor([101, 2])),
                 (torch.tensor([100, 2]), torch.tensor([101, 2])))


@pytest.mark.parametrize("kw", [{"rtol": -1.0}, {"rtol": -1}, {"atol": -2.5},
                                {"rtol": -1e-7}, {"atol": -123456789.0}])
@pytest.mark.parametrize("fn", ["isclose", "allclose"])
def test_negative_tolerances_print_as_torch(fn, kw):
    # torch streams the double as C++ does (%g): rtol=-1.0 reads "-1", not "-1.0".
    same_message(lambda L: getattr(L, fn)(L.ones(2), L.ones(2), **kw))


def test_equal_compares_shapes_and_values():
    cases = [([1, 2], [1, 2]), ([1, 2], [1.0, 2.0]), ([1, 2], [1, 3]), ([1, 2], [1]),
             ([float("nan")], [float("nan")]), ([[1, 2]], [1, 2])]
    for a, b in cases:
        same_outcome(ember.equal, torch.equal, (ember.tensor(a), ember.tensor(b)),
                     (torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("name", ["fmod", "atan2", "hypot", "maximum", "logical_and", "isclose"])
def test_number_where_a_tensor_is_required_raises_type_error(name):
    e, t = make((3,), ember.float32)
    same_outcome(getattr(ember, name), getattr(torch, name), (2.0, e), (2.0, t))
    if name != "fmod":
        same_outcome(getattr(ember, name), getattr(torch, name), (e, 2.0), (t, 2.0))


def test_grad_fn_names_match_torch():
    for name in ("remainder", "fmod", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin"):
        e = ember.tensor([0.5, 1.5], requires_grad=True)
        t = torch.tensor([0.5, 1.5], requires_grad=True)
        ye = getattr(ember, name)(e, ember.tensor([1.0, 1.0]))
        yt = getattr(torch, name)(t, torch.tensor([1.0, 1.0]))
        assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__, name


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

def test_fmod_and_remainder_in_place_take_a_number_on_bfloat16():
    from helpers import same_result

    for op in ("fmod_", "remainder_"):
        same_result(lambda L, op=op: getattr(L.tensor([-2.25, 1.5], dtype=L.bfloat16), op)(0.5))


@pytest.mark.parametrize("call", [
    # the result type (float) can't be cast into the int tensor: checked before the kernel
    lambda L: L.ones(4, 2, dtype=L.int32).bitwise_and_(1.5),
    lambda L: L.ones(3, dtype=L.uint8).bitwise_or_(L.ones(3, dtype=L.float16)),
    # the broadcast shape is checked before the dtype
    lambda L: L.ones((), dtype=L.uint8).hypot_(L.ones(3, dtype=L.uint8)),
    lambda L: L.ones(4, 3, dtype=L.bool).hypot_(L.ones(1, 4, 3, dtype=L.bool)),
    # hypot_ takes a tensor only
    lambda L: L.ones(1, 3, dtype=L.uint8).hypot_(1.5),
])
def test_in_place_checks_come_in_pytorchs_order(call):
    from helpers import same_error

    same_error(call)


@pytest.mark.parametrize("f", [lambda m, a: 3 % a, lambda m, a: m.remainder(3.5, a)],
                         ids=["3%a", "remainder(3.5,a)"])
def test_a_number_modulo_a_tensor_has_no_derivative_like_torch(f):
    """`number % tensor` (PyTorch's remainder.Scalar_Tensor) records a NotImplemented node
    with one edge, and its backward raises PyTorch's error."""
    seen = []
    for m in (ember, torch):
        a = m.tensor([1.5, 2.0, 4.0], requires_grad=True)
        y = f(m, a)
        seen.append((type(y.grad_fn).__name__,
                     [type(n).__name__ for n, _ in y.grad_fn.next_functions],
                     y.detach().numpy().tolist()))
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not "
                                               "implemented"):
            y.sum().backward()
    assert seen[0] == seen[1]
    with pytest.raises(NotImplementedError, match="forward AD with aten::remainder"):
        ember.func.jvp(lambda v: 3 % v, (ember.ones(2),), (ember.ones(2),))


def _both_isclose(a, b, dtype, **kw):
    e = ember.isclose(ember.tensor(a, dtype=getattr(ember, dtype)),
                      ember.tensor(b, dtype=getattr(ember, dtype)), **kw)
    t = torch.isclose(torch.tensor(a, dtype=getattr(torch, dtype)),
                      torch.tensor(b, dtype=getattr(torch, dtype)), **kw)
    assert e.tolist() == t.tolist(), (dtype, kw, e.tolist(), t.tolist())


@pytest.mark.parametrize("kw", [{"atol": 1}, {"atol": 0.99}, {"rtol": 1.0}, {"rtol": 2, "atol": 0},
                                {"atol": 2.5, "equal_nan": True}, {"rtol": 0.5}])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64"])
def test_isclose_tolerances_apply_to_bools_and_integers(dtype, kw):
    # torch converts bools (like integers) to the default float before the tolerance test,
    # so isclose(True, False, atol=1) is True; bit-for-bit (a comparison).
    a, b = ([True, False, True, True], [False, False, True, False]) if dtype == "bool" \
        else ([1, 5, 3, 5, 100, 0], [2, 5, 5, 3, 0, 100])
    _both_isclose(a, b, dtype, **kw)


def test_isclose_of_integers_goes_through_the_default_float():
    # 2**53 + 1 and 2**53 are one float apart in neither float32 nor float64: close.
    _both_isclose([2 ** 53 + 1, 2 ** 40 + 1], [2 ** 53, 2 ** 40], "int64", rtol=0, atol=0.5)
    prev = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        ember.set_default_dtype(ember.float64)
        _both_isclose([2 ** 53 + 1], [2 ** 53], "int64", rtol=1e-17, atol=0.5)
    finally:
        torch.set_default_dtype(prev)
        ember.set_default_dtype(getattr(ember, str(prev).split(".")[1]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_isclose_in_low_precision_rounds_each_step(dtype):
    # torch's composite rounds rtol * other, atol + ..., and a - b to the tensor's dtype:
    # 60000 - (-60000) overflows float16 to inf, never close whatever atol.
    a = [60000.0, 1.0, 1000.0, 0.1, 1.0, 2.0]
    b = [-60000.0, 1.001, 1000.5, 0.1001, 1.01, 2.02]
    for kw in ({"atol": 1e6}, {}, {"rtol": 1e-3}, {"rtol": 1e-2, "atol": 1e-3},
               {"rtol": 0.0099, "atol": 0}):
        _both_isclose(a, b, dtype, **kw)
    # Bit-for-bit on random pairs near the boundary (each step is one correctly rounded op).
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20000, generator=g)
    y = x * (1 + torch.randn(20000, generator=g) * 1e-2)
    for rtol, atol in ((1e-2, 1e-3), (5e-3, 0.0), (0.0, 1e-2), (3e-3, 1e-4)):
        _both_isclose(x.tolist(), y.tolist(), dtype, rtol=rtol, atol=atol)


def _bits(values) -> list[str]:
    """Each float as its hex text, so -0.0 and +0.0 (and NaN) compare as torch prints them."""
    return [float(v).hex() for v in values]


EXTREMES = ("maximum", "minimum", "fmax", "fmin")
_A = [1.0, 2.0, 3.0, float("nan"), 2.0, -1.0]
_B = [2.0, 1.0, 3.0, 5.0, float("nan"), -1.0]


@pytest.mark.parametrize("name", EXTREMES)
@pytest.mark.parametrize("cot", [[-0.0, -0.0, -0.0, -1.0, -0.0, -2.0],
                                 [float("inf"), -0.0, 2.0, float("nan"), -0.0, 4.0]],
                         ids=["negative-zeros", "inf-nan"])
def test_the_losing_operand_gets_a_plus_zero_fill_like_torch(name, cot):
    # torch's formulas masked_fill the loser's gradient: +0.0 even where the cotangent is
    # -0.0, inf or NaN (a product with the mask would give -0.0 or NaN)
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        a = lib.tensor(_A, requires_grad=True)
        b = lib.tensor(_B, requires_grad=True)
        ga, gb = lib.autograd.grad(getattr(lib, name)(a, b), [a, b], lib.tensor(cot))
        out += [_bits(ga.tolist()), _bits(gb.tolist())]
    assert got == want


@pytest.mark.parametrize("name", EXTREMES)
@pytest.mark.parametrize("which", ["both", "input", "other"])
def test_forward_mode_follows_torchs_formula(name, which):
    # torch's forward formula is tb + w * (ta - tb): at a tie maximum/minimum weigh 1/2,
    # fmax takes tb and fmin ta, NaN picks by the comparison, and zero signs follow the order
    ta = [-0.0, -0.0, -2.0, 1.0, 3.0, 0.5]
    tb = [-0.0, 0.5, 4.0, 1.5, -0.0, -0.0]
    got = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(lib.tensor(_A), lib.tensor(ta)) if which != "other" \
                else lib.tensor(_A)
            b = fw.make_dual(lib.tensor(_B), lib.tensor(tb)) if which != "input" \
                else lib.tensor(_B)
            got.append(_bits(fw.unpack_dual(getattr(lib, name)(a, b)).tangent.tolist()))
    assert got[0] == got[1]


def test_triplet_swap_gradients_keep_torchs_zero_signs():
    # the swap takes a minimum of distances; rows the hinge clamps must carry torch's signed
    # zeros back through the distances (the minimum's loser gets +0.0)
    torch.manual_seed(3)
    vals = [torch.randn(4, 5) for _ in range(3)]
    got = []
    for lib in (ember, torch):
        xs = [lib.tensor(v.tolist(), requires_grad=True) for v in vals]
        loss = lib.nn.functional.triplet_margin_loss(*xs, margin=0.5, swap=True, p=1.0)
        got.append([_bits(g.reshape(-1).tolist()) for g in lib.autograd.grad(loss, xs)])
    assert got[0] == got[1]


def test_atan2_gradients_are_torchs_bits_and_zero_at_the_origin():
    # PyTorch's steps: g * other * (1 / (a^2 + b^2)), with 0 for that reciprocal where
    # a^2 + b^2 is 0 (a division instead rounds differently in about half the elements)
    r = np.random.default_rng(11)
    for dtype in (np.float32, np.float64):
        a = np.concatenate([r.standard_normal(4000), [0.0, -0.0, 0.0, 1e-30, np.inf, 2.0]])
        b = np.concatenate([r.standard_normal(4000), [0.0, 0.0, -0.0, 1e-30, 1.0, np.nan]])
        g = r.standard_normal(a.size)
        got, want = [], []
        for lib, out in ((ember, got), (torch, want)):
            x = lib.tensor(a.astype(dtype), requires_grad=True)
            y = lib.tensor(b.astype(dtype), requires_grad=True)
            lib.atan2(x, y).backward(lib.tensor(g.astype(dtype)))
            out += [x.grad.numpy(), y.grad.numpy()]
        for e, t in zip(got, want):
            np.testing.assert_array_equal(e, t)
            assert np.array_equal(np.signbit(e), np.signbit(t))
