"""ember.linalg products against PyTorch: multi_dot (and the bracketing it picks), vecdot,
matrix_power, and the aliases matmul / diagonal / cross."""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L
from ember.linalg.products import chain_order

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg


def test_multi_dot_brackets_the_cheap_way():
    # A (512x512), B (512x8), C (8x512): (AB)C costs 4.2M multiply-adds, A(BC) 136M.
    order, cost = chain_order([(512, 512), (512, 8), (8, 512)])
    assert order == ((0, 1), 2)
    assert cost == 512 * 512 * 8 + 512 * 8 * 512
    # Mirrored: (512x8), (8x512), (512x512) wants A(BC), at the same 4.2M.
    order, cost = chain_order([(512, 8), (8, 512), (512, 512)])
    assert order == (0, (1, 2))
    assert cost == 8 * 512 * 512 + 512 * 8 * 512


def test_multi_dot_runs_the_cheap_order():
    a = ember.tensor(rand_array((512, 512), np.float64), requires_grad=True)
    b = ember.tensor(rand_array((512, 8), np.float64, seed=1))
    c = ember.tensor(rand_array((8, 512), np.float64, seed=2))
    out = L.multi_dot([a, b, c])
    # The last product's left operand is AB (512x8), recorded on its graph node (under
    # the view to the result's shape that ends PyTorch's multi_dot)
    assert type(out.grad_fn).__name__ == "ViewBackward0"
    last = out.grad_fn.next_functions[0][0]
    assert type(last).__name__ == "MmBackward0" and last._in_meta[0][0] == (512, 8)
    expected = TL.multi_dot([torch.tensor(x.detach().numpy()) for x in (a, b, c)])
    assert_same(out, expected, 1e-9, 1e-9)


def test_chain_order_matches_brute_force():
    rng = np.random.default_rng(0)
    for n in (3, 4, 5):
        dims = [int(d) for d in rng.integers(1, 30, n + 1)]
        shapes = [(dims[i], dims[i + 1]) for i in range(n)]
        assert chain_order(shapes)[1] == _brute(dims, 0, n - 1)


def _brute(dims, i, j):
    if i == j:
        return 0
    return min(_brute(dims, i, k) + _brute(dims, k + 1, j) + dims[i] * dims[k + 1] * dims[j + 1]
               for k in range(i, j))


MULTI = {
    "three": [(3, 4), (4, 5), (5, 2)],
    "four": [(2, 6), (6, 3), (3, 7), (7, 2)],
    "vec_first": [(4,), (4, 5), (5, 3)],
    "vec_last": [(3, 4), (4, 5), (5,)],
    "vec_both": [(4,), (4, 5), (5,)],
    "two": [(3, 4), (4, 2)],
    "two_vectors": [(3,), (3,)],
}


@pytest.mark.parametrize("case", MULTI, ids=str)
def test_multi_dot_matches_torch(case):
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(MULTI[case])]
    check_op(lambda *x: L.multi_dot(x), lambda *x: TL.multi_dot(x), *arrays)


def test_multi_dot_float32_and_finite_differences():
    arrays = [rand_array(s, seed=i) for i, s in enumerate(MULTI["four"])]
    check_op(lambda *x: L.multi_dot(x), lambda *x: TL.multi_dot(x), *arrays, rtol=1e-5,
             atol=1e-6)
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(MULTI["vec_first"])]
    check_grads(lambda *x: L.multi_dot(list(x)), *arrays)


@pytest.mark.parametrize("shapes", [[(3,)], [(3, 4), (5, 6)], [(3, 4), (4,), (3,)],
                                    [(3, 4, 1), (4, 2)], [(3,), (3,), (3,)]], ids=str)
def test_multi_dot_errors(shapes):
    with pytest.raises(RuntimeError) as t_info:
        TL.multi_dot([torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError) as e_info:
        L.multi_dot([ember.ones(s) for s in shapes])
    assert str(e_info.value) == str(t_info.value)


def test_multi_dot_on_meta():
    e = L.multi_dot([ember.empty(s, device="meta") for s in [(4,), (4, 5), (5, 3)]])
    t = TL.multi_dot([torch.empty(s, device="meta") for s in [(4,), (4, 5), (5, 3)]])
    assert_same(e, t, check_stride=True)


@pytest.mark.parametrize("sx,sy,dim", [((2, 3), (3,), -1), ((4, 2), (4, 2), 0),
                                       ((2, 1, 3), (4, 3), -1)], ids=str)
def test_vecdot(sx, sy, dim):
    check_op(lambda x, y: L.vecdot(x, y, dim=dim), lambda x, y: TL.vecdot(x, y, dim=dim),
             rand_array(sx), rand_array(sy, seed=1))
    # Complex: torch's gradient carries a lazy conjugate bit, so resolve it before comparing.
    xs = [rand_array(sx, np.complex128), rand_array(sy, np.complex128, seed=1)]
    te = [ember.tensor(a, requires_grad=True) for a in xs]
    tt = [torch.tensor(a, requires_grad=True) for a in xs]
    out_e, out_t = L.vecdot(*te, dim=dim), TL.vecdot(*tt, dim=dim)
    assert_same(out_e, out_t)
    (out_e.abs() ** 2).sum().backward()
    (out_t.abs() ** 2).sum().backward()
    for e, t in zip(te, tt):
        assert_same(e.grad, t.grad.resolve_conj())


def test_vecdot_dtype_error():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected x and y to have the same dtype"):
            lib.linalg.vecdot(lib.ones(2, 3), lib.ones(3, dtype=lib.float64))


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = rand_array((2, 3, 3), np.float64) + 3 * np.eye(3)
    check_op(lambda x: L.matrix_power(x, n), lambda x: TL.matrix_power(x, n), a)


def test_matrix_power_errors():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
            lib.linalg.matrix_power(lib.ones(2, 3), 2)


def test_aliases():
    a, b = rand_array((2, 3, 4)), rand_array((4, 2), seed=1)
    check_op(L.matmul, TL.matmul, a, b)
    check_op(lambda x: L.diagonal(x, offset=1), lambda x: TL.diagonal(x, offset=1), a)
    check_op(lambda x, y: L.cross(x, y), lambda x, y: TL.cross(x, y), rand_array((4, 3)),
             rand_array((4, 3), seed=2))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int32", "float32", "float64",
                                   "complex64"])
@pytest.mark.parametrize("shape, N", [((3,), None), ((2, 4), 6), ((), 3), ((0,), 2)], ids=str)
def test_vander_matches_torch_bit_for_bit(shape, N, dtype):
    # each power is the previous one times x (torch's cumprod): the same roundings, and
    # integers wrap the same way
    x = rand_array(shape, np.float64, low=-3, high=3)
    e = ember.tensor(x).to(getattr(ember, dtype))
    t = torch.tensor(x).to(getattr(torch, dtype))
    assert_same(ember.linalg.vander(e, N=N), torch.linalg.vander(t, N=N), 0, 0)


def test_vander_gradients_and_errors():
    check_op(lambda x: ember.linalg.vander(x, N=4), lambda x: torch.linalg.vander(x, N=4),
             rand_array((2, 3), np.float64))
    check_grads(lambda x: ember.linalg.vander(x, N=3), rand_array((3,), np.float64))
    for call in (lambda m: m.linalg.vander(m.tensor([True, False])),
                 lambda m: m.linalg.vander(m.tensor([1.0, 2.0]), N=1),
                 lambda m: m.linalg.vander(m.tensor([1.0]))):
        same_message(call)


@pytest.mark.parametrize("shape,dtype", [((3,), "float32"), ((), "float32"), ((3,), "int64")],
                         ids=str)
def test_matrix_power_of_a_vector(shape, dtype):
    same_message(lambda m: m.linalg.matrix_power(m.ones(shape, dtype=getattr(m, dtype)), 2))


@pytest.mark.parametrize("dtypes", [("float64", "float32", "float32"),
                                    ("float32", "float32", "complex64"),
                                    ("int64", "float32", "float32"),
                                    ("bfloat16", "float16", "float16")], ids=str)
def test_multi_dot_dtype_mismatch_names_cpp_types(dtypes):
    same_message(lambda m: m.linalg.multi_dot(
        [m.ones(3, dtype=getattr(m, dtypes[0])), m.ones(3, 2, dtype=getattr(m, dtypes[1])),
         m.ones(2, dtype=getattr(m, dtypes[2]))]))


def test_multi_dot_names_the_element_that_is_no_tensor():
    same_message(lambda m: m.linalg.multi_dot([[1.0], m.ones(1, 1)]), TypeError)
    same_message(lambda m: m.linalg.multi_dot([m.ones(1, 1), m.ones(1, 1), 2.0]), TypeError)


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 2)], [(4,), (4,)], [(4,), (4, 3), (3, 2)],
                                    [(2, 4), (4, 3), (3,)], [(4,), (4, 3), (3,)],
                                    [(2, 3), (3, 4), (4, 5), (5, 2)]], ids=str)
def test_multi_dot_result_is_a_view_as_torchs(shapes):
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *xs: L.multi_dot(list(xs)), lambda *xs: TL.multi_dot(list(xs)), *arrays)
    e = L.multi_dot([ember.tensor(a, requires_grad=True) for a in arrays])
    t = TL.multi_dot([torch.tensor(a, requires_grad=True) for a in arrays])
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__

