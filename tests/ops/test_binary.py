"""binary.py against torch: add/sub/mul/div/pow/float_power and the comparisons, over every
dtype, broadcast / 0-d / empty / transposed operands and Python scalars on either side;
gradients, in-place forms, Python operators, PyTorch's special integer cases, and meta."""

import operator

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import Spec, binary_tests, make, same_outcome

from helpers import TORCH_VECTOR_KERNELS, assert_same, assert_ulp, check_op, rand_array

NONZERO = ((-2.0, 2.0), (0.5, 3.0))
POS_BASE = ((0.5, 2.0), (-2.0, 2.0))
SPECS = [
    Spec("add", ember.add, torch.add),
    Spec("add_alpha", lambda a, b: ember.add(a, b, alpha=2), lambda a, b: torch.add(a, b, alpha=2),
         inplace=(lambda a, b: a.add_(b, alpha=2), lambda a, b: a.add_(b, alpha=2))),
    Spec("sub", ember.sub, torch.sub),
    Spec("sub_alpha", lambda a, b: ember.sub(a, b, alpha=3), lambda a, b: torch.sub(a, b, alpha=3),
         inplace=(lambda a, b: a.sub_(b, alpha=3), lambda a, b: a.sub_(b, alpha=3))),
    Spec("rsub", ember.rsub, torch.rsub, inplace=None, scalars=False,
         extra={"meta_stride": False}),
    Spec("mul", ember.mul, torch.mul),
    Spec("div", ember.div, torch.div, NONZERO),
    Spec("div_trunc", lambda a, b: ember.div(a, b, rounding_mode="trunc"),
         lambda a, b: torch.div(a, b, rounding_mode="trunc"), NONZERO, fd=False,
         extra={"meta_stride": False},
         inplace=(lambda a, b: a.div_(b, rounding_mode="trunc"),
                  lambda a, b: a.div_(b, rounding_mode="trunc"))),
    Spec("div_floor", lambda a, b: ember.div(a, b, rounding_mode="floor"),
         lambda a, b: torch.div(a, b, rounding_mode="floor"), NONZERO, fd=False,
         extra={"meta_stride": False},
         inplace=(lambda a, b: a.div_(b, rounding_mode="floor"),
                  lambda a, b: a.div_(b, rounding_mode="floor"))),
    Spec("true_divide", ember.true_divide, torch.true_divide, NONZERO),
    Spec("floor_divide", ember.floor_divide, torch.floor_divide, NONZERO, grad=False,
         extra={"meta_stride": False}),
    Spec("pow", ember.pow, torch.pow, POS_BASE),
    Spec("float_power", ember.float_power, torch.float_power, POS_BASE,
         grad_dtypes=(ember.float64,)),
    Spec("eq", ember.eq, torch.eq, grad=False),
    Spec("ne", ember.ne, torch.ne, grad=False),
    Spec("lt", ember.lt, torch.lt, grad=False),
    Spec("le", ember.le, torch.le, grad=False),
    Spec("gt", ember.gt, torch.gt, grad=False),
    Spec("ge", ember.ge, torch.ge, grad=False),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = binary_tests(SPECS)

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.pow, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
             operator.ge, operator.mod, operator.and_, operator.or_, operator.xor,
             operator.lshift, operator.rshift]
IOPERATORS = [operator.iadd, operator.isub, operator.imul, operator.itruediv,
              operator.ifloordiv, operator.ipow, operator.imod, operator.iand, operator.ior,
              operator.ixor, operator.ilshift, operator.irshift]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [ember.int64, ember.float32, ember.bool, ember.uint8])
def test_python_operators_and_reflected_forms(op, dtype):
    a = make((3, 4), dtype, (1.0, 4.0), seed=1)
    b = make((4,), dtype, (1.0, 3.0), seed=2)
    same_outcome(op, op, (a[0], b[0]), (a[1], b[1]))
    for s in (2, 1.5, True):
        same_outcome(op, op, (a[0], s), (a[1], s))
        same_outcome(op, op, (s, a[0]), (s, a[1]))


@pytest.mark.parametrize("op", IOPERATORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [ember.int64, ember.float32, ember.bool])
def test_augmented_assignment_mutates_in_place(op, dtype):
    a = make((3, 4), dtype, (1.0, 4.0), seed=1)
    b = make((4,), dtype, (1.0, 3.0), seed=2)
    ea = a[0]
    got = same_outcome(op, op, (a[0], b[0]), (a[1], b[1]))
    if got is not None:
        assert got is ea
    same_outcome(op, op, (make((2,), dtype)[0], 2), (make((2,), dtype)[1], 2))


def test_operators_with_unsupported_types_raise_type_error():
    e, t = make((2,), ember.float32)
    for op in (operator.add, operator.mul, operator.sub, operator.and_):
        same_outcome(op, op, (e, "x"), (t, "x"))
        same_outcome(op, op, ("x", e), ("x", t))
    assert (e == None) is False  # noqa: E711 - torch returns False too
    assert (t == None) is False  # noqa: E711


def _as(x, name: str):
    """`x` cast to the dtype called `name`, in whichever framework `x` belongs to."""
    return x.to(getattr(torch if isinstance(x, torch.Tensor) else ember, name))


INT_CASES = [
    ("int // 0", lambda x: x // 0),
    ("int % 0", lambda x: x % 0),
    ("int / 0", lambda x: x / 0),
    ("fmod int 0", lambda x: x.fmod(0)),
    ("div trunc by zero tensor", lambda x: x.div(x * 0, rounding_mode="trunc")),
    ("float // 0", lambda x: x.float() // 0),
    ("float % 0", lambda x: x.float() % 0),
    ("int ** -1", lambda x: x ** -1),
    ("int ** negative tensor", lambda x: x ** (-x.abs() - 1)),
    ("negative tensor exponent edge bases", lambda x: (x % 3 - 1) ** (-x.abs())),
    ("2 ** int", lambda x: 2 ** x),
    ("int ** 2.5", lambda x: x ** 2.5),
    ("-2 ** int", lambda x: (-2) ** x),
    ("bool ** 2", lambda x: (x > 0) ** 2),
    ("bool ** bool", lambda x: (x > 0) ** (x > 1)),
    ("bool ** -1", lambda x: (x > 0) ** -1),
    ("2 ** bool", lambda x: 2 ** (x > 0)),
    ("bool - bool", lambda x: (x > 0) - (x > 1)),
    ("bool - int", lambda x: (x > 0) - 1),
    ("float - bool", lambda x: x.float() - (x > 0)),
    ("1 - bool", lambda x: 1 - (x > 0)),
    ("bool.sub_(True)", lambda x: (x > 0).sub_(True)),
    ("bool + bool", lambda x: (x > 0) + (x > 1)),
    ("bool / bool", lambda x: (x > 0) / (x > 1)),
    ("bool // bool", lambda x: (x > 0) // (x > 1)),
    ("uint8 wraps", lambda x: _as(x, "uint8") - 3),
    ("int8 * 300", lambda x: _as(x, "int8") * 300),
    ("int add float alpha", lambda x: x.add(x, alpha=0.5)),
    ("bool add alpha", lambda x: (x > 0).add(x > 1, alpha=2)),
    ("int.add_(1.5)", lambda x: x.add_(1.5)),
    ("int.div_(2)", lambda x: x.div_(2)),
    ("int.div_ floor", lambda x: x.div_(2, rounding_mode="floor")),
    ("int.pow_(2.5)", lambda x: x.pow_(2.5)),
    ("int.pow_(-1)", lambda x: x.pow_(-1)),
    ("float.float_power_", lambda x: x.float().float_power_(2)),
    ("double.float_power_", lambda x: x.double().float_power_(2)),
    ("float_power int", lambda x: x.float_power(2)),
    ("float_power complex", lambda x: x.float_power(2j)),
    ("rounding mode bad", lambda x: x.div(2, rounding_mode="round")),
    ("complex lt", lambda x: _as(x, "complex64") < 1),
    ("complex eq", lambda x: _as(x, "complex64") == 1j),
    ("bool ** True", lambda x: (x > 0) ** True),
    ("bool ** False", lambda x: (x > 0) ** False),
    ("True ** bool", lambda x: True ** (x > 0)),
]


@pytest.mark.parametrize("case", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_pytorch_integer_and_bool_semantics(case):
    values = [5, -5, 0, 3, -1, 1, 7]
    same_outcome(case[1], case[1], (ember.tensor(values),), (torch.tensor(values),))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 4, 5, -1, -2, -3, 0.5, -0.5, 2.0, 7, 16, 1.5])
@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32, ember.float64])
def test_pow_small_exponent_fast_paths_match_torch(exponent, dtype):
    e, t = make((50,), dtype, (0.3, 2.0))
    same_outcome(lambda x: x ** exponent, lambda x: x ** exponent, (e,), (t,))


def test_pow_by_small_integer_avoids_numpys_generic_path(monkeypatch):
    # NumPy's generic float pow is ~250x slower than multiplying; small integral exponents
    # (and 0.5, -0.5) must never reach it.
    x = ember.rand(1000) + 0.5
    expected = {k: x.numpy().astype(np.float64) ** k for k in (2, 3, 4, 7, -3, 0.5, 16)}

    def refuse(*args, **kwargs):
        raise AssertionError("np.power called for a small integer exponent")

    monkeypatch.setattr(np, "power", refuse)
    for k, want in expected.items():
        np.testing.assert_allclose((x ** k).numpy(), want, rtol=1e-6)


def test_pow_gradients_at_zero_and_scalar_bases():
    check_op(lambda a, b: a ** b, lambda a, b: a ** b, np.array([0.0, 0.0, 2.0, 3.0]),
             np.array([0.0, 2.0, 0.0, 1.5]))
    check_op(lambda b: 2.5 ** b, lambda b: 2.5 ** b, rand_array((3, 2)))
    check_op(lambda b: 0.0 ** b, lambda b: 0.0 ** b, np.array([0.0, 1.0, 2.0]))
    check_op(lambda a: a ** 0, lambda a: a ** 0, rand_array((3,)))


def test_grad_fn_names_match_torch():
    def name(x):
        return type(x.grad_fn).__name__

    pairs = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
             lambda a, b: a ** 2, lambda a, b: a ** b, lambda a, b: a.div(b, rounding_mode="floor")]
    for f in pairs:
        ea, eb = ember.tensor([1.5, 2.0], requires_grad=True), ember.tensor([0.5, 3.0])
        ta, tb = torch.tensor([1.5, 2.0], requires_grad=True), torch.tensor([0.5, 3.0])
        assert name(f(ea, eb)) == name(f(ta, tb))


@pytest.mark.parametrize("f", [
    lambda m, a: a * 2, lambda m, a: 2 * a, lambda m, a: a + 1.5, lambda m, a: 1.5 + a,
    lambda m, a: a - 3, lambda m, a: a / 4, lambda m, a: a ** 2, lambda m, a: 2 ** a,
    lambda m, a: a % 0.7, lambda m, a: m.where(a > 1.8, a, 0.5), lambda m, a: m.where(
        a > 1.8, 0.5, a), lambda m, a: a.clamp(0.5, 1.8), lambda m, a: m.lerp(a, a * 2, 0.3),
])
def test_a_number_operand_is_listed_in_next_functions_as_torch_lists_it(f):
    """PyTorch wraps a number given for `Tensor other` (add, sub, mul, div, where) into a
    0-d tensor, listed as (None, 0); for overloads taking a Scalar, it is not listed."""
    kinds = []
    for m in (ember, torch):
        a = m.tensor([1.5, 2.0], dtype=m.float64, requires_grad=True)
        y = f(m, a)
        kinds.append([type(n).__name__ if n is not None else None
                      for n, _ in y.grad_fn.next_functions])
        if m is ember:
            assert type(y.grad_fn).__name__ == type(f(torch, torch.tensor(
                [1.5, 2.0], dtype=torch.float64, requires_grad=True)).grad_fn).__name__
            value = y.detach().numpy()
        else:
            np.testing.assert_array_equal(value, y.detach().numpy())
    assert kinds[0] == kinds[1]


def _graph(y) -> tuple:
    """A result's node name and its next_functions' node names (torch's are qualified)."""
    def name(n):
        return None if n is None else type(n).__name__

    return name(y.grad_fn), [name(n) for n, _ in y.grad_fn.next_functions]


@pytest.mark.parametrize("f", [
    lambda m, a: 3 - a, lambda m, a: 2.5 - a, lambda m, a: m.rsub(a, 3),
    lambda m, a: m.rsub(a, 3, alpha=2), lambda m, a: m.rsub(a, m.tensor([1.0, 4.0])),
    lambda m, a: m.rsub(a, a * 2, alpha=0.5), lambda m, a: m.rsub(a * 2, a),
    lambda m, a: 3 / a, lambda m, a: 2 ** a, lambda m, a: 2.5 ** a, lambda m, a: m.pow(2, a),
    lambda m, a: 3 + a, lambda m, a: 3 * a,
], ids=["3-a", "2.5-a", "rsub", "rsub_alpha", "rsub_tensor", "rsub_tensor_alpha",
        "rsub_self", "3/a", "2**a", "2.5**a", "pow(2,a)", "3+a", "3*a"])
def test_a_number_on_the_left_records_torchs_node(f):
    """`number - tensor` is PyTorch's rsub (RsubBackward1, one edge; RsubBackward0 with a
    tensor `other`, alpha inside the node), not a sub with a wrapped number; values and
    gradients are unchanged."""
    graphs, values, grads = [], [], []
    for m in (ember, torch):
        a = m.tensor([1.5, 2.0], dtype=m.float64, requires_grad=True)
        y = f(m, a)
        graphs.append(_graph(y))
        values.append(y.detach().numpy())
        grads.append(m.autograd.grad((y * m.tensor([1.0, -3.0], dtype=m.float64)).sum(),
                                     a)[0].numpy())
    assert graphs[0] == graphs[1]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-14)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14)


def test_rsub_checks_alpha_and_bool_as_torch():
    for f in (lambda m: m.rsub(m.tensor([1, 2]), 3, alpha=1.5),
              lambda m: m.rsub(m.tensor([1.0, 2.0]), 3, alpha=2j),
              lambda m: m.rsub(m.tensor([True]), 1), lambda m: 3 - m.tensor([True]),
              lambda m: m.rsub(m.tensor([1.0]), m.tensor([True])),
              lambda m: m.rsub(m.tensor([1, 2]), 5, alpha=3),
              lambda m: m.rsub(m.tensor([1.0 + 1j]), 1, alpha=2j)):
        same_outcome(f, f, (ember,), (torch,))


def test_rsub_complex_alpha_gradient_is_conjugated():
    z = [1 + 2j, 3 - 1j]
    got = []
    for m in (ember, torch):
        x = m.tensor(z, requires_grad=True)
        y = m.rsub(x, 1, alpha=2j)
        assert type(y.grad_fn).__name__ == "RsubBackward1"
        got.append(m.autograd.grad(y, x, m.tensor([1 + 1j, 2.0 + 0j]))[0].numpy())
    np.testing.assert_allclose(got[0], got[1])


def test_rsub_forward_mode_and_vmap():
    x = ember.tensor([[1.5, 2.0], [0.5, 3.0]], dtype=ember.float64)
    t = ember.tensor([[1.0, -1.0], [2.0, 0.5]], dtype=ember.float64)
    _, tangent = ember.func.jvp(lambda v: ember.rsub(v, 3.0, alpha=2), (x,), (t,))
    np.testing.assert_array_equal(tangent.numpy(), -2 * t.numpy())
    out = ember.func.vmap(lambda v: 3 - v)(x)
    np.testing.assert_array_equal(out.numpy(), 3 - x.numpy())


def test_floor_divide_has_no_derivative_like_torch():
    e = ember.tensor([3.0, 4.0], requires_grad=True)
    t = torch.tensor([3.0, 4.0], requires_grad=True)
    same_outcome(lambda x: (x // 2).sum().backward(), lambda x: (x // 2).sum().backward(),
                 (e,), (t,))


def test_out_argument():
    a, b = make((2, 3), ember.float32), make((3,), ember.float32, seed=1)
    oe, ot = ember.empty(2, 3), torch.empty(2, 3)
    assert ember.add(a[0], b[0], out=oe) is oe
    torch.add(a[1], b[1], out=ot)
    assert_same(oe, ot)
    same_outcome(lambda x, y: ember.add(x, y, out=ember.empty(2, 3, dtype=ember.int64)),
                 lambda x, y: torch.add(x, y, out=torch.empty(2, 3, dtype=torch.int64)),
                 (a[0], b[0]), (a[1], b[1]))


def test_incompatible_shapes_raise_runtime_error():
    a, b = make((2, 3), ember.float32), make((4,), ember.float32)
    for f in (ember.add, ember.mul, ember.pow, ember.eq, ember.div):
        tf = getattr(torch, f.__name__)
        same_outcome(f, tf, (a[0], b[0]), (a[1], b[1]))


def test_mixed_devices_raise():
    e = ember.ones(2)
    m = ember.ones(2, device="meta")
    with pytest.raises(RuntimeError):
        e + m


def test_expressions_never_write_into_their_operands():
    # Each operator returns a fresh tensor, as PyTorch's do: an intermediate, a named
    # tensor and an array shared with NumPy all keep their values.
    n = 1 << 17
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    a, b, c = (ember.tensor(x) for x in xs)
    ta, tb, tc = (torch.tensor(x) for x in xs)
    for fe, ft in ((lambda a, b, c: a * b + c, lambda a, b, c: a * b + c),
                   (lambda a, b, c: (a - b) / c - 1.5, lambda a, b, c: (a - b) / c - 1.5),
                   (lambda a, b, c: c + a * b * 2.0, lambda a, b, c: c + a * b * 2.0),
                   (lambda a, b, c: a * b + c[:1].double(), lambda a, b, c: a * b + c[:1].double()),
                   (lambda a, b, c: sum([a * b, c]), lambda a, b, c: sum([a * b, c]))):
        assert_same(fe(a, b, c), ft(ta, tb, tc))
    prod = a * b
    kept = prod.numpy().copy()
    _ = prod + c
    np.testing.assert_array_equal(prod.numpy(), kept)
    shared = np.ones(n, np.float32)
    _ = ember.from_numpy(shared) + c
    assert (shared == 1).all()
    w = ember.tensor(xs[0], requires_grad=True)
    (w * b + c).sum().backward()
    assert_same(w.grad, tb)


def test_integer_division_by_zero_of_an_empty_tensor_divides_nothing():
    # PyTorch raises ZeroDivisionError only when something is divided.
    for fe, ft in ((lambda a, b: a % b, lambda a, b: a % b),
                   (lambda a, b: a // b, lambda a, b: a // b),
                   (lambda a, b: ember.div(a, b, rounding_mode="trunc"),
                    lambda a, b: torch.div(a, b, rounding_mode="trunc"))):
        assert_same(fe(ember.tensor([], dtype=ember.uint8), ember.tensor(0, dtype=ember.uint8)),
                    ft(torch.tensor([], dtype=torch.uint8), torch.tensor(0, dtype=torch.uint8)))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fe(ember.tensor([3], dtype=ember.uint8), ember.tensor(0, dtype=ember.uint8))


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    # a non-broadcastable `other`: RuntimeError naming the shapes (NumPy's ValueError before)
    lambda L: L.ones(2, 4).pow_(L.ones(3, 4)),
    lambda L: L.ones(3, 3, dtype=L.bfloat16).floor_divide_(L.ones(4, 3, dtype=L.bfloat16)),
    lambda L: L.ones(4, dtype=L.bool).div_(L.ones(5, dtype=L.bool), rounding_mode="floor"),
    # the output shape is checked before the dtype
    lambda L: L.ones(2, 1, dtype=L.int64).ge_(L.ones(2, 3, dtype=L.complex64)),
    lambda L: L.ones((), dtype=L.complex128).floor_divide_(L.ones(2, dtype=L.complex128)),
    # a string is no operand: TypeError before the cast check
    lambda L: L.ones((), dtype=L.int64).true_divide_("x"),
])
def test_in_place_shape_and_type_checks_come_first(call):
    from helpers import same_error

    same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([2, 1], dtype=L.uint8) ** -1,  # -1 fitted to uint8 read 255
    lambda L: L.tensor([2, 1], dtype=L.uint8).pow_(-1),
    lambda L: L.tensor([[1], [0]], dtype=L.uint8).expand(2, 0).pow(-2),  # no elements
])
def test_integer_tensor_to_a_negative_int_power_is_refused(call):
    from helpers import same_error

    same_error(call)


def test_bfloat16_in_place_power_by_an_int64_tensor():
    from helpers import same_result

    same_result(lambda L: L.tensor([[1.5, -2.0], [0.5, 3.0]], dtype=L.bfloat16).pow_(
        L.tensor([[2], [-1]], dtype=L.int64).transpose(0, 1)))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "bool"])
@pytest.mark.parametrize("number", [-1, -3, 2, 300])
def test_integer_true_division_by_a_number_does_not_wrap_it(dtype, number):
    # a fuzzer find: uint8 / -1 gave 1/255 (the -1 was wrapped into uint8 before dividing)
    for reverse in (False, True):
        e = ember.tensor([0, 1, 3], dtype=getattr(ember, dtype))
        t = torch.tensor([0, 1, 3], dtype=getattr(torch, dtype))
        if reverse:
            assert_same(number / e, number / t)
        else:
            assert_same(ember.div(e, number), torch.div(t, number))
            assert_same(e / number, t / number)


def test_sub_inplace_refuses_a_wrong_operand_type_before_a_bool_tensor():
    # found by the fuzzer (seed 20261128): torch checks the argument's type first
    for m in (ember, torch):
        a = m.tensor([True])
        with pytest.raises(TypeError, match="must be Tensor, not str"):
            a.sub_("x", alpha=2)


@pytest.mark.parametrize("call", [
    lambda t, b: t.div_(b, rounding_mode="floor"),
    lambda t, b: t.div_(b, rounding_mode="trunc"),
    lambda t, b: t.floor_divide_(b),
    lambda t, b: t.remainder_(b),
    lambda t, b: t.mul_(b),
])
def test_inplace_on_uint8_with_a_negative_0d_tensor_as_torch(call):
    """The 0-d int64 -2 is cast to self's uint8 (254) before the op, as in PyTorch: 3 // -2
    in uint8 is 0, not -2 wrapped to 254 (found by the fuzzer, seed 20261175)."""
    got, want = (call(L.tensor([3, 3, 7, 2], dtype=L.uint8), L.tensor(-2)).tolist()
                 for L in (ember, torch))
    assert got == want


@pytest.mark.parametrize("op", ["add_", "sub_"])
@pytest.mark.parametrize("self_dtype, other_dtype",
                         [("uint8", "int32"), ("int8", "uint8"), ("uint8", "int64"),
                          ("int16", "int64")])
@pytest.mark.parametrize("shape", [(2, 3), (4, 0)], ids=["values", "empty"])
def test_inplace_alpha_into_a_narrower_integer_wraps_as_pytorch(op, self_dtype, other_dtype,
                                                                shape):
    """`a.sub_(b, alpha=3)` with b of a wider or other-signed integer dtype computes in the
    common dtype and wraps into a's, as PyTorch (found by fuzzer seed 20261129: it raised
    NumPy's UFuncTypeError)."""
    n = shape[0] * shape[1]
    a0 = np.arange(n).reshape(shape).astype(self_dtype)
    b0 = (np.arange(n).reshape(shape) * 37).astype(other_dtype)
    got = getattr(ember.tensor(a0), op)(ember.tensor(b0), alpha=3)
    want = getattr(torch.tensor(a0), op)(torch.tensor(b0), alpha=3)
    assert_same(got, want)


# --- alpha's product in the result dtype, whatever ml_dtypes' promotion rules -----------------
# (ml_dtypes 0.7 keeps `bfloat16_array * 0.02` in bfloat16 where 0.6 promoted it to float32,
# as NumPy always keeps float16: ember computes these in the dtype it chooses, not NumPy's)

_RNG = np.random.default_rng(7)
_A, _B = (_RNG.standard_normal(4096).astype(np.float32) for _ in range(2))
_NP = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def _narrow(a: np.ndarray, name: str) -> np.ndarray:
    """float32 data `a` rounded to dtype `name`, as float64 (float32 to 16 bits is one
    correctly rounded conversion in every ml_dtypes release)."""
    low = ember.bfloat16.np if name == "bfloat16" else _NP[name]
    return a.astype(low).astype(np.float64)


def _lib_tensor(lib, a, name):
    return lib.tensor(a).to(getattr(lib, name))


@pytest.mark.parametrize("op", ["add_", "sub_"])
@pytest.mark.parametrize("self_dtype, other_dtype", [
    ("float32", "bfloat16"), ("float32", "float16"), ("float64", "float32"),
    ("float64", "bfloat16")])
def test_inplace_alpha_takes_its_product_in_the_wider_self_dtype(op, self_dtype, other_dtype):
    """`p.add_(u, alpha=-0.02)` with `u` narrower than `p` (a bfloat16 update on a float32
    weight: Muon's step) casts `u` to p's dtype and fuses there, as PyTorch; the product
    rounded in u's dtype first was up to half a bfloat16 ulp of it off."""
    alpha = -0.02 if op == "add_" else 0.02
    e, t = (getattr(_lib_tensor(lib, _A, self_dtype), op)(
        _lib_tensor(lib, _B, other_dtype), alpha=alpha).double().numpy() for lib in (ember, torch))
    k = np.float64(_NP[self_dtype](-0.02))  # (alpha read at the result dtype)
    kb = k * _narrow(_B, other_dtype)
    want = (_A.astype(np.float64) + kb).astype(_NP[self_dtype])
    assert_ulp(e.astype(_NP[self_dtype]), want, 1, "the worked value rounds twice (k b is "
               "inexact in float64 for float64 k, and a + k b once more before the dtype)",
               scale=np.abs(_A) + np.abs(kb))
    if TORCH_VECTOR_KERNELS:  # (torch's fused multiply-add in its vectorised loops)
        np.testing.assert_array_equal(e, t)


_LOW_ALPHA_CALLS = {  # (call, the value worked in float64 from x, the tensor's values,
    # and r, a number rounded to its dtype: each product exact, the sum rounded once)
    "add": (lambda L, x: x.add(0.1, alpha=0.37), lambda x, r: x + r(0.1) * r(0.37)),
    "sub": (lambda L, x: x.sub(3, alpha=0.7), lambda x, r: x - 3 * r(0.7)),
    "add_": (lambda L, x: x.clone().add_(0.1, alpha=0.37), lambda x, r: x + r(0.1) * r(0.37)),
    "rsub_number": (lambda L, x: L.rsub(x, 0.1, alpha=0.37), lambda x, r: r(0.1) - r(0.37) * x),
    "rsub_tensor": (lambda L, x: L.rsub(x, x * 3, alpha=0.37),
                    lambda x, r: r(x * 3) - r(0.37) * x),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(_LOW_ALPHA_CALLS))
def test_16_bit_alpha_with_a_number_or_rsub_computes_in_float32(dtype, name):
    """A 16-bit tensor and a number with `alpha=`, and rsub's `alpha=`: the number and alpha
    read at the tensor's dtype, alpha b + a computed in float32 (where 16-bit products are
    exact) and rounded once, as PyTorch's kernel. Before, bfloat16 gave a float32 tensor with
    ml_dtypes 0.6 and products rounded to 16 bits with 0.7; rsub rounded twice."""
    call, worked = _LOW_ALPHA_CALLS[name]
    e, t = (call(L, _lib_tensor(L, _A, dtype)) for L in (ember, torch))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] == dtype
    e, t = e.float().numpy(), t.float().numpy()
    if TORCH_VECTOR_KERNELS:  # (4096 elements: no scalar tail, one thread)
        np.testing.assert_array_equal(e, t)
    low = ember.bfloat16.np if dtype == "bfloat16" else np.float16
    want = worked(_narrow(_A, dtype), lambda v: np.asarray(v, np.float32).astype(low)
                  .astype(np.float64))
    np.testing.assert_array_equal(e, want.astype(np.float32).astype(low).astype(np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
@pytest.mark.parametrize("b, alpha", [(0.1, 0.37), (3, 0.7), (0.5, 2), (3, 0.25)])
def test_a_number_with_alpha_is_fused_as_torch(dtype, op, b, alpha):
    """`x.add(0.1, alpha=0.37)` on float32 / float64: fma(0.1, 0.37, x), each number read at
    the dtype, as PyTorch's kernel (a tensor `other` took this path already); before, the
    product was taken in Python's double and rounded to the dtype, then added. (An exact
    product, 0.5 * 2, is added as it is: the same single rounding.)"""
    e, t = (getattr(_lib_tensor(L, _A, dtype), op)(b, alpha=alpha).double().numpy()
            for L in (ember, torch))
    f = _NP[dtype]
    kb = np.float64(f(b)) * np.float64(f(alpha))
    want = _A.astype(np.float64) + (kb if op.startswith("add") else -kb)
    assert_ulp(e.astype(f), want.astype(f), 1, "the worked value rounds twice (k b is "
               "inexact in float64, and a + k b once more before float32)",
               scale=np.abs(_A) + abs(kb))
    if TORCH_VECTOR_KERNELS:
        np.testing.assert_array_equal(e, t)
