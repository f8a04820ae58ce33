"""torch._foreach_* list ops against torch: every overload of the second operand, the
in-place forms handing back their list, the list ops' own errors, and gradients."""

import numpy as np
import pytest
import torch

import ember


def lists(L):
    """Two lists of float32 tensors of different shapes, and a float64 / int64 pair."""
    a = [L.tensor([-1.5, 2.0, -3.25]), L.tensor([[0.5, -0.75], [4.0, 1.0]])]
    b = [L.tensor([3.0, -0.5, 2.0]), L.tensor([[2.0, 1.5], [-1.0, 0.25]])]
    return a, b


def same(e, t, exact=True):
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for x, y in zip(e, t):
            same(x, y, exact)
        return
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
    if exact:
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    else:
        # transcendentals: NumPy's and torch's vector math differ in the last float32 bits
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=2e-6)


def both(call, exact=True):
    res = [call(L, *lists(L)) for L in (ember, torch)]
    same(*res, exact=exact)


# add / mul / div: all four overloads; every other binary op: three (a 0-dim tensor is read
# as a number there). Each with exactly representable values, so results are exact.
BINARY = {
    "add_list": lambda L, a, b: L._foreach_add(a, b),
    "add_list_alpha": lambda L, a, b: L._foreach_add(a, b, alpha=2),
    "add_scalar": lambda L, a, b: L._foreach_add(a, 1.5),
    "add_scalars": lambda L, a, b: L._foreach_add(a, [1, 0.25]),
    "add_tensor_alpha": lambda L, a, b: L._foreach_add(a, L.tensor(2.0), alpha=3),
    "sub_list_alpha": lambda L, a, b: L._foreach_sub(a, b, alpha=0.5),
    "sub_zero_dim_tensor": lambda L, a, b: L._foreach_sub(a, L.tensor(2.0)),
    "mul_tensor": lambda L, a, b: L._foreach_mul(a, L.tensor(0.5)),
    "mul_scalar_keyword": lambda L, a, b: L._foreach_mul(a, scalar=2.0),
    "div_list": lambda L, a, b: L._foreach_div(a, b),
    "div_int_by_int": lambda L, a, b: L._foreach_div([L.arange(3)], 2),
    "add_int_and_float": lambda L, a, b: L._foreach_add([L.arange(3)], 0.5),
    "add_mixed_dtypes": lambda L, a, b: L._foreach_add(a, [b[0].double(), b[1].long()]),
    "clamp_min": lambda L, a, b: L._foreach_clamp_min(a, 0.5),
    "clamp_max_list": lambda L, a, b: L._foreach_clamp_max(a, b),
    "maximum_scalar_int": lambda L, a, b: L._foreach_maximum([L.arange(3)], 1.5),
    "minimum_list": lambda L, a, b: L._foreach_minimum(a, b),
    "maximum_scalars": lambda L, a, b: L._foreach_maximum(a, [0.0, 1.0]),
    "pow_scalar": lambda L, a, b: L._foreach_pow(a, 2),
    "pow_scalars": lambda L, a, b: L._foreach_pow(a, [3, 2]),
    "pow_number_first": lambda L, a, b: L._foreach_pow(2.0, b),
    "lerp_scalar": lambda L, a, b: L._foreach_lerp(a, b, 0.25),
    "lerp_scalars": lambda L, a, b: L._foreach_lerp(a, b, [0.5, 0.75]),
    "lerp_weights": lambda L, a, b: L._foreach_lerp(a, b, [L.tensor(0.5), L.full((2, 2), 0.25)]),
    "addcmul": lambda L, a, b: L._foreach_addcmul(a, b, b, value=0.5),
    "addcmul_scalars": lambda L, a, b: L._foreach_addcmul(a, a, b, [2, -1]),
    "addcdiv_packed": lambda L, a, b: L._foreach_addcdiv(a, a, b, L.tensor([1.0, 2.0])),
    "clone": lambda L, a, b: L._foreach_clone(a),
    "max": lambda L, a, b: L._foreach_max(a),
    "max_int": lambda L, a, b: L._foreach_max([L.arange(5)]),
    "norm_inf": lambda L, a, b: L._foreach_norm(a, float("inf")),
    "norm_1": lambda L, a, b: L._foreach_norm(a, ord=1),
    "powsum_1": lambda L, a, b: L._foreach_powsum(a, 1),
    "powsum_0_counts_zeros_too": lambda L, a, b: L._foreach_powsum([L.tensor([0.0, 2.0])], 0),
    "mm": lambda L, a, b: L._foreach_mm([a[1]], [b[1]]),
    "neg": lambda L, a, b: L._foreach_neg(a),
    "abs": lambda L, a, b: L._foreach_abs(a),
    "sign": lambda L, a, b: L._foreach_sign(a),
    "round_half_even": lambda L, a, b: L._foreach_round([L.tensor([0.5, 1.5, -2.5])]),
    "frac": lambda L, a, b: L._foreach_frac(a),
    "reciprocal_of_powers_of_two": lambda L, a, b: L._foreach_reciprocal([L.tensor([4.0, -.5])]),
}


@pytest.mark.parametrize("name", BINARY)
def test_list_ops_match_torch(name):
    both(BINARY[name])


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin",
                                  "expm1", "log1p", "erf", "lgamma", "atan"])
def test_unary_transcendentals(name):
    pos = lambda L: [L.tensor([0.25, 1.5, 3.0]), L.tensor([[0.5, 2.0], [4.0, 0.75]])]  # noqa: E731
    res = [getattr(L, f"_foreach_{name}")(pos(L)) for L in (ember, torch)]
    same(*res, exact=False)


def test_norm_and_powsum():
    # a square root / sum over a few elements: last-bit differences only
    both(lambda L, a, b: L._foreach_norm(a), exact=False)
    both(lambda L, a, b: L._foreach_norm(a, 3, dtype=L.float64), exact=False)
    both(lambda L, a, b: L._foreach_powsum(a, 2, dtype=L.float64), exact=False)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L._foreach_add_(a, b, alpha=-1),
    lambda L, a, b: L._foreach_mul_(a, L.tensor(0.5)),
    lambda L, a, b: L._foreach_lerp_(a, b, 0.125),
    lambda L, a, b: L._foreach_addcdiv_(a, b, b, value=-1),
    lambda L, a, b: L._foreach_sqrt_(L._foreach_abs_(a)),
    lambda L, a, b: L._foreach_zero_(a),
    lambda L, a, b: L._foreach_copy_(a, b),
    lambda L, a, b: L._foreach_maximum_(tuple(a), [0.0, 1.0]),
], ids=["add_", "mul_", "lerp_", "addcdiv_", "sqrt_", "zero_", "copy_", "maximum_tuple"])
def test_in_place_forms_update_and_return_their_list(call):
    for L in (ember, torch):
        a, b = lists(L)
        before = list(a)
        out = call(L, a, b)
        assert type(out) in (list, tuple) and all(x is y for x, y in zip(out, before))
    a_e, b_e = lists(ember)
    a_t, b_t = lists(torch)
    same(list(call(ember, a_e, b_e)), list(call(torch, a_t, b_t)), exact=False)


def test_ema_update_as_timm_writes_it():
    # ema = decay * ema + (1 - decay) * model, once with lerp_ and once with mul_ / add_
    res = []
    for L in (ember, torch):
        ema, model = lists(L)
        L._foreach_lerp_(ema, model, 1 - 0.875)
        L._foreach_mul_(ema, 0.875)
        L._foreach_add_(ema, model, alpha=1 - 0.875)
        res.append(ema)
    same(*res)


ERRORS = [
    lambda L, a, b: L._foreach_add([], []),
    lambda L, a, b: L._foreach_exp([]),
    lambda L, a, b: L._foreach_add(a, b[:1]),
    lambda L, a, b: L._foreach_lerp(a, b, [L.tensor(0.5)]),
    lambda L, a, b: L._foreach_add(a, [1.0]),
    lambda L, a, b: L._foreach_add(a, []),
    lambda L, a, b: L._foreach_addcmul(a, a, b, [1.0]),
    lambda L, a, b: L._foreach_add(a, L.tensor([2.0])),
    lambda L, a, b: L._foreach_addcdiv(a, a, b, L.tensor([[1.0, 2.0]])),
    lambda L, a, b: L._foreach_addcdiv(a, a, b, L.tensor([1.0, 2.0, 3.0])),
    lambda L, a, b: L._foreach_add(a, b[::-1]),
    lambda L, a, b: L._foreach_add_([L.arange(3)], 0.5),
    lambda L, a, b: L._foreach_neg([L.tensor([True])]),
    lambda L, a, b: L._foreach_norm([L.arange(3)]),
    lambda L, a, b: L._foreach_powsum([L.arange(3)]),
    lambda L, a, b: L._foreach_max([L.ones(0)]),
    lambda L, a, b: L._foreach_mm([a[1]], []),
    lambda L, a, b: L._foreach_add(a, [1.0, b[1]]),
    lambda L, a, b: L._foreach_exp(a[0]),
    lambda L, a, b: L._foreach_lerp([L.arange(2)], [L.arange(2)], 0.5),
    lambda L, a, b: L._foreach_add([L.arange(2)], [L.arange(2)], alpha=0.5),
    lambda L, a, b: L._foreach_addcmul(a, a, b, L.tensor(2.0)),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch, *lists(torch))
    with pytest.raises(Exception) as ee:
        call(ember, *lists(ember))
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L._foreach_add(a, 1.5, alpha=2),
    lambda L, a, b: L._foreach_sub(a, L.tensor([2.0])),
    lambda L, a, b: L._foreach_add(a[0], 1.0),
    lambda L, a, b: L._foreach_lerp(a, b, L.tensor([0.5])),
])
def test_no_overload_matches_is_a_type_error_with_torchs_first_line(call):
    with pytest.raises(TypeError) as te:
        call(torch, *lists(torch))
    with pytest.raises(TypeError) as ee:
        call(ember, *lists(ember))
    assert str(ee.value).splitlines()[0] == str(te.value).splitlines()[0]


def test_gradients_flow_through_each_tensor():
    grads = []
    for L in (ember, torch):
        a, b = lists(L)
        for t in a + b:
            t.requires_grad_()
        out = L._foreach_lerp(a, b, 0.25) + L._foreach_mul(a, b) + L._foreach_norm(b)
        sum(o.sum() for o in out).backward()
        assert all(o.requires_grad for o in out)
        grads.append([t.grad for t in a + b])
    same(*grads, exact=False)  # (the norm's gradient divides by a square root)


@pytest.mark.parametrize("call", [
    lambda L, T: L._foreach_add([L.arange(3)], T),            # number overload first
    lambda L, T: L._foreach_add([L.arange(3)], other=T),      # tensor overload
    lambda L, T: L._foreach_add([L.arange(3)], T, alpha=2),   # tensor overload
    lambda L, T: L._foreach_mul([L.arange(3)], T),
    lambda L, T: L._foreach_div([L.arange(3)], T),
    lambda L, T: L._foreach_sub([L.arange(3)], T),            # no tensor overload
    lambda L, T: L._foreach_pow([L.arange(3)], T),
    lambda L, T: L._foreach_clamp_min([L.arange(3)], T),
    lambda L, T: L._foreach_lerp([L.ones(3)], [L.zeros(3)], T),
    lambda L, T: L._foreach_addcmul([L.ones(3)], [L.ones(3)], [L.ones(3)], value=T),
], ids=["add", "add_other", "add_alpha", "mul", "div", "sub", "pow", "clamp_min", "lerp",
        "addcmul_value"])
def test_a_zero_dim_float64_operand_promotes_only_where_torch_reads_it_as_a_tensor(call):
    res = [call(L, L.tensor(0.5, dtype=L.float64)) for L in (ember, torch)]
    same(*res)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L._foreach_maximum_(a, b),
    lambda L, a, b: L._foreach_minimum_(a, b),
    lambda L, a, b: L._foreach_maximum_(a, [L.tensor(float("nan")), L.tensor([[0.5], [2.0]])]),
    lambda L, a, b: L._foreach_minimum_(a, [L.tensor([3, -2, 0]), L.tensor([[2], [-1]])]),
    lambda L, a, b: L._foreach_maximum_(a[:1], [L.tensor(-2.0, dtype=L.float64)]),
], ids=["maximum", "minimum", "nan_and_broadcast", "int_other", "float64_other"])
def test_maximum_minimum_in_place_with_a_list(call):
    # (PyTorch has no Tensor.maximum_: the list form used to call it and raise AttributeError)
    for L in (ember, torch):
        a, b = lists(L)
        before = list(a)
        out = call(L, a, b)
        assert all(x is y for x, y in zip(out, before))
    same(list(call(ember, *lists(ember))), list(call(torch, *lists(torch))))


def test_maximum_in_place_on_integers():
    res = []
    for L in (ember, torch):
        x = [L.tensor([1, 7, -2]), L.tensor([4], dtype=L.int16)]
        L._foreach_maximum_(x, [L.tensor([3, 2, -5]), L.tensor([9], dtype=L.int16)])
        res.append(x)
    same(*res)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L._foreach_maximum_([L.arange(3)], [L.ones(3)]),
    lambda L, a, b: L._foreach_minimum_([L.ones(2)], [L.ones(3)]),
    lambda L, a, b: L._foreach_maximum_([L.ones(1, 2)], [L.ones(2, 1)]),
    lambda L, a, b: L._foreach_maximum_([L.ones(2, requires_grad=True)], [L.ones(2)]),
    lambda L, a, b: L._foreach_mul_([L.ones(2)], [L.ones(3)]),
    lambda L, a, b: L._foreach_add_([L.ones(2)], [L.ones(3)], alpha=2),
    lambda L, a, b: L._foreach_sub_([L.ones(2)], [L.ones(3)]),
], ids=["int_self", "shapes", "larger", "leaf", "mul_shapes", "add_alpha_shapes",
        "sub_shapes"])
def test_in_place_list_refusals_match_torch(call):
    # shapes that do not broadcast fail with "The size of tensor a ..." (a Polyak update
    # over two different networks), not as a result larger than self
    test_errors_match_torch(call)


def test_maximum_in_place_is_recorded_in_the_graph():
    res = []
    for L in (ember, torch):
        x = L.tensor([1.0, 5.0, 2.0], requires_grad=True)
        y = x.clone()
        L._foreach_maximum_([y], [L.tensor([3.0, 2.0, 2.0])])
        (y * L.tensor([1.0, 2.0, 4.0])).sum().backward()
        assert y.grad_fn.name() == "MaximumBackward0"
        res.append([y.detach(), x.grad])  # (a tie splits the gradient in half)
    same(*res)
