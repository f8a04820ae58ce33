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


# --- the autograd node of an out-of-place list op -------------------------------------------

def grad_lists(L):
    """float64 lists (finite differences need them): a requires grad, b only in part."""
    a = [L.tensor([1.5, 2.0, 3.0], dtype=L.float64, requires_grad=True),
         L.tensor([[0.5, 0.75], [4.0, 1.25]], dtype=L.float64, requires_grad=True)]
    b = [L.tensor([0.25, 1.5, 2.5], dtype=L.float64),
         L.tensor([[2.0, 1.5], [0.5, 0.75]], dtype=L.float64, requires_grad=True)]
    return a, b


# every op and overload with a node of its own in PyTorch, named per overload
NODES = {
    "add_list": lambda L, a, b: L._foreach_add(a, b, alpha=2),
    "add_scalar": lambda L, a, b: L._foreach_add(a, 2),
    "add_scalars": lambda L, a, b: L._foreach_add(a, [2, 3]),
    # (torch's backward fails where the 0-dim tensor requires grad: it does not here)
    "add_tensor": lambda L, a, b: L._foreach_add(a, L.tensor(2.0, dtype=L.float64), alpha=2),
    "sub_list": lambda L, a, b: L._foreach_sub(a, b, alpha=0.5),
    "sub_scalars": lambda L, a, b: L._foreach_sub(a, [2, 3]),
    "mul_list": lambda L, a, b: L._foreach_mul(a, b),
    "mul_scalar": lambda L, a, b: L._foreach_mul(a, 2),
    "mul_scalars": lambda L, a, b: L._foreach_mul(a, [2, 3]),
    "mul_tensor": lambda L, a, b: L._foreach_mul(a, L.tensor(2.0, dtype=L.float64)),
    "div_list": lambda L, a, b: L._foreach_div(a, b),
    "div_scalar": lambda L, a, b: L._foreach_div(a, 2),
    "div_tensor": lambda L, a, b: L._foreach_div(a, L.tensor(4.0, dtype=L.float64)),
    "clamp_min_list": lambda L, a, b: L._foreach_clamp_min(a, b),
    "clamp_max_scalar": lambda L, a, b: L._foreach_clamp_max(a, 1.0),
    "clamp_min_scalars": lambda L, a, b: L._foreach_clamp_min(a, [2, 1]),
    "maximum_list": lambda L, a, b: L._foreach_maximum(a, b),
    "minimum_scalar": lambda L, a, b: L._foreach_minimum(a, 1.0),
    "maximum_scalar_tie": lambda L, a, b: L._foreach_maximum(a, 2.0),  # (a tie: half)
    # (torch's backward of the number-list overload fails with two tensors or more)
    "maximum_scalars": lambda L, a, b: L._foreach_maximum(a[:1], [2]),
    "minimum_scalars_tie": lambda L, a, b: L._foreach_minimum(a[1:], [0.75]),
    "pow_list": lambda L, a, b: L._foreach_pow(a, b),
    "pow_scalar": lambda L, a, b: L._foreach_pow(a, 3),
    "pow_scalars": lambda L, a, b: L._foreach_pow(a, [2, 0.5]),
    "pow_number_first": lambda L, a, b: L._foreach_pow(2.0, a),
    "lerp_scalar": lambda L, a, b: L._foreach_lerp(a, b, 0.25),
    "lerp_scalars": lambda L, a, b: L._foreach_lerp(a, b, [0.25, 0.5]),
    "lerp_weights": lambda L, a, b: L._foreach_lerp(a, b, [L.tensor(0.5, dtype=L.float64),
                                                          L.full((2, 2), 0.25, dtype=L.float64)]),
    "addcmul_scalar": lambda L, a, b: L._foreach_addcmul(a, a, b, value=2),
    "addcdiv_scalars": lambda L, a, b: L._foreach_addcdiv(a, b, a, [2, -1]),
    "norm": lambda L, a, b: L._foreach_norm(a),
    "norm_1": lambda L, a, b: L._foreach_norm(b, 1),
    "max": lambda L, a, b: L._foreach_max(a),
    "clone": lambda L, a, b: L._foreach_clone(b),
    "mm": lambda L, a, b: L._foreach_mm([a[1]], [b[1]]),
    **{u: (lambda L, a, b, u=u: getattr(L, f"_foreach_{u}")(a))
       for u in ("exp", "log", "log1p", "expm1", "sqrt", "neg", "abs", "sigmoid", "tanh",
                 "reciprocal", "sin", "atan", "erf", "lgamma", "floor", "sign")},
}


def _edges(node):
    return [None if f is None else (f.name(), nr) for f, nr in node.next_functions]


@pytest.mark.parametrize("name", NODES)
def test_list_node_name_edges_and_gradients_match_torch(name):
    res = []
    for L in (ember, torch):
        a, b = grad_lists(L)
        out = NODES[name](L, a, b)
        node = out[0].grad_fn
        # one node for the list: every output is one of its outputs, all require grad
        assert all(o.grad_fn is node and o.output_nr == i and o.requires_grad
                   for i, o in enumerate(out))
        sum((o * (i + 1.5)).sum() for i, o in enumerate(out)).backward()
        res.append((node.name(), _edges(node), [t.grad for t in a + b]))
    (e_name, e_edges, e_grads), (t_name, t_edges, t_grads) = res
    assert e_name == t_name and e_edges == t_edges
    for ge, gt in zip(e_grads, t_grads):
        assert (ge is None) == (gt is None)
        if gt is not None:
            # float64: transcendentals and norms may differ in their last bits
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["mul_list", "lerp_scalar", "addcmul_scalar", "pow_list",
                                  "norm", "exp", "div_list"])
def test_list_node_gradients_pass_gradcheck_and_gradgradcheck(name):
    # finite differences in float64, first and second order (the node's derivative is the
    # per-tensor ops' graphs, so double backward goes through them)
    a, b = grad_lists(ember)
    n = len(a)

    def fn(*ts):
        return NODES[name](ember, list(ts[:n]), list(ts[n:]))

    inputs = tuple(a) + tuple(t.detach().requires_grad_() for t in b)
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)


def test_an_output_without_a_gradient_and_an_input_given_twice():
    res = []
    for L in (ember, torch):
        a, b = grad_lists(L)
        out = L._foreach_addcmul(a, a, b, value=2)  # a[i] is self and tensor1: two edges
        out[1].sum().backward()
        res.append([None if t.grad is None else t.grad.numpy() for t in a + b])
    for ge, gt in zip(*res):
        assert (ge is None) == (gt is None)
        if gt is not None:
            np.testing.assert_array_equal(ge, gt)  # (products of exact binary fractions)


@pytest.mark.parametrize("call", [
    lambda L, a: L._foreach_addcmul(a, a, a, L.tensor([2.0, 3.0], dtype=L.float64)),
    lambda L, a: L._foreach_powsum(a),
], ids=["addcmul_packed_values", "powsum"])
def test_list_nodes_without_a_derivative_refuse_backward_as_torch(call):
    msgs = []
    for L in (ember, torch):
        a, _ = grad_lists(L)
        out = call(L, a)
        assert out[0].grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError) as e:
            out[0].sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


# the `_` forms: per-tensor nodes, the number overloads' own (MulBackward1: self's edge only)
IN_PLACE_NODES = [
    lambda L, y, x: L._foreach_add_([y], 2), lambda L, y, x: L._foreach_sub_([y], [2]),
    lambda L, y, x: L._foreach_mul_([y], 2), lambda L, y, x: L._foreach_div_([y], 2),
    lambda L, y, x: L._foreach_mul_([y], L.tensor(2.0)),
    lambda L, y, x: L._foreach_add_([y], [x], alpha=2),
    lambda L, y, x: L._foreach_clamp_min_([y], 0.5),
    lambda L, y, x: L._foreach_pow_([y], 2), lambda L, y, x: L._foreach_exp_([y]),
    lambda L, y, x: L._foreach_lerp_([y], [x], 0.5),
]


def test_no_node_without_grad_and_in_place_forms_record_per_tensor_scalar_nodes():
    for L in (ember, torch):
        a, b = grad_lists(L)
        with L.no_grad():
            assert all(o.grad_fn is None for o in L._foreach_mul(a, 2))
        assert all(o.grad_fn is None for o in L._foreach_mul([t.detach() for t in a], 2))
    names = []
    for L in (ember, torch):
        x = L.ones(2, requires_grad=True)
        row = []
        for call in IN_PLACE_NODES:
            y = x * 1
            call(L, y, x)
            row.append((y.grad_fn.name(), len(y.grad_fn.next_functions)))
        names.append(row)
    assert names[0] == names[1]


# --- calls that fit no overload: the parser's whole message ----------------------------------

WRONG_CALLS = [
    lambda L, t, a: L._foreach_add(t, 1),
    lambda L, t, a: L._foreach_add_(t, 1.5),
    lambda L, t, a: L._foreach_sub(t, [1.0]),
    lambda L, t, a: L._foreach_mul(t, 1),
    lambda L, t, a: L._foreach_div_(a, "x"),
    lambda L, t, a: L._foreach_pow(t, 1),
    lambda L, t, a: L._foreach_pow("x", a),
    lambda L, t, a: L._foreach_pow(a),
    lambda L, t, a: L._foreach_clamp_min(t, 1),
    lambda L, t, a: L._foreach_maximum_(t, 1),
    lambda L, t, a: L._foreach_lerp(t, a, 1),
    lambda L, t, a: L._foreach_lerp(a, a, "x"),
    lambda L, t, a: L._foreach_addcmul(t, a, a),
    lambda L, t, a: L._foreach_addcdiv_(t, a, a, 1),
    lambda L, t, a: L._foreach_addcmul(a, a, a, "x"),
    lambda L, t, a: L._foreach_add(a, None),
    lambda L, t, a: L._foreach_add(a),
    lambda L, t, a: L._foreach_add(),
    lambda L, t, a: L._foreach_add(a, 1, 2),
    lambda L, t, a: L._foreach_add(a, 1, foo=2),
    lambda L, t, a: L._foreach_add(a, 1.0, alpha=2),
    lambda L, t, a: L._foreach_add(a, other=1, alpha=2),
    lambda L, t, a: L._foreach_add(a, [1, 2], alpha=2),
    lambda L, t, a: L._foreach_add(a, (x for x in a)),
    lambda L, t, a: L._foreach_add({1: 2}, 1),
    lambda L, t, a: L._foreach_norm(a, "fro"),
    lambda L, t, a: L._foreach_norm(a, 2, 3),
    lambda L, t, a: L._foreach_exp(t),
    lambda L, t, a: L._foreach_lerp(a, a[:1], 0.5),
    lambda L, t, a: L._foreach_addcmul(a, a, a[:1]),
    lambda L, t, a: L._foreach_copy_(a, a[:1]),
    lambda L, t, a: L._foreach_lerp([], [], 0.5),
    lambda L, t, a: L._foreach_add([t], [L.ones(2, device="meta")]),
    lambda L, t, a: L._foreach_add([t], [L.ones(2, dtype=L.float64)]),
]


@pytest.mark.parametrize("call", WRONG_CALLS)
def test_wrong_calls_raise_torchs_type_and_whole_message(call):
    outcomes = []
    for L in (ember, torch):
        t, a = L.ones(2), [L.ones(2), L.ones(3)]
        try:
            r = call(L, t, a)
            outcomes.append(("ok", [tuple(x.shape) for x in r]))
        except Exception as e:  # noqa: BLE001 - the type and words are what is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]


def test_pow_takes_its_exponent_by_keyword_for_both_overloads():
    for call in (lambda L: L._foreach_pow([L.tensor([3.0])], exponent=2),
                 lambda L: L._foreach_pow(2.0, exponent=[L.tensor([3.0])])):
        same(call(ember), call(torch))


def test_a_second_backward_through_a_list_node_that_saved_inputs_raises_as_torch():
    msgs = []
    for L in (ember, torch):
        a, b = grad_lists(L)
        out = L._foreach_mul(a, b)
        out[0].sum().backward(retain_graph=True)
        out[0].sum().backward()  # (retained once: this one frees the graph)
        with pytest.raises(RuntimeError) as e:
            out[0].sum().backward()
        msgs.append(str(e.value))
        np.testing.assert_array_equal(a[0].grad.numpy(), 2 * b[0].numpy())
    assert msgs[0] == msgs[1]
