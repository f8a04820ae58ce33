"""Matrix products against PyTorch: matmul / @ rank rules, mm bmm mv dot vdot, and the fused
addmm addmv baddbmm addbmm addr.

Values, dtypes, shapes, gradients (first and second order), exception types and the
meta device all come from torch; float64 finite differences are a second oracle.
"""

import itertools

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

from helpers import (
    assert_same,
    assert_ulp,
    check_grads,
    check_op,
    rand_array,
    same_message,
    to_torch,
)

# (shape of a, shape of b) for every rank rule of matmul.
MATMUL_SHAPES = [
    ((4,), (4,)),  # dot
    ((3, 4), (4,)),  # mv
    ((4,), (4, 5)),  # vector @ matrix
    ((3, 4), (4, 5)),  # mm
    ((2, 3, 4), (2, 4, 5)),  # bmm
    ((2, 3, 4), (4, 5)),  # batch @ matrix
    ((4,), (2, 4, 5)),  # vector @ batch
    ((2, 3, 4), (4,)),  # batch @ vector
    ((2, 1, 3, 4), (5, 4, 2)),  # broadcast batch dims
    ((1, 3, 4), (2, 2, 4, 5)),
    ((0, 3, 4), (4, 2)),  # empty batch
    ((3, 0), (0, 2)),  # empty inner dim: zeros
]


def _matmul(a, b):
    return a @ b


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_rank_rules_values_and_grads(sa, sb):
    check_op(_matmul, _matmul, rand_array(sa), rand_array(sb, seed=1))


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES[:9], ids=str)
def test_matmul_finite_differences(sa, sb):
    check_grads(torch_free_matmul, rand_array(sa, np.float64), rand_array(sb, np.float64, seed=2))


def torch_free_matmul(a, b):
    return ember.matmul(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.complex128, np.int64, np.int32],
                         ids=str)
def test_matmul_dtypes(dtype):
    a, b = rand_array((2, 3, 4), dtype), rand_array((4, 5), dtype, seed=1)
    check_op(_matmul, _matmul, a, b, grad=np.dtype(dtype).kind in "fc")


@pytest.mark.parametrize("np_dtype,t_dtype", [(np.float16, torch.float16),
                                              (ml_dtypes.bfloat16, torch.bfloat16)], ids=str)
def test_low_precision_matmul_accumulates_in_float32(np_dtype, t_dtype):
    # 256 products of ~1 each: accumulating in float16 would drift far from the float32 sum.
    a = rand_array((8, 256), np.float32, 0.5, 1.5).astype(np_dtype)
    b = rand_array((256, 8), np.float32, 0.5, 1.5, seed=1).astype(np_dtype)
    e = ember.tensor(a) @ ember.tensor(b)
    exact = (a.astype(np.float32) @ b.astype(np.float32)).astype(np_dtype)
    assert e.dtype == ember.tensor(a).dtype
    # rounded once, from a float32 sum (accumulating in 16 bits would be many ulps off)
    assert_ulp(e, exact, 1, "the float32 sums come from OpenBLAS, whose kernel depends on "
               "the CPU and the operands' layout; rounding can show their last bit")
    t = torch.from_numpy(a.astype(np.float32)).to(t_dtype) @ \
        torch.from_numpy(b.astype(np.float32)).to(t_dtype)
    assert_same(e, t)


def test_named_products_match_torch():
    v, w = rand_array((4,)), rand_array((4,), seed=1)
    m, m2 = rand_array((3, 4)), rand_array((4, 5), seed=2)
    b1, b2 = rand_array((2, 3, 4)), rand_array((2, 4, 5), seed=3)
    check_op(ember.mm, torch.mm, m, m2)
    check_op(ember.bmm, torch.bmm, b1, b2)
    check_op(ember.mv, torch.mv, m, v)
    check_op(ember.dot, torch.dot, v, w)
    check_op(lambda a, b: a.matmul(b), lambda a, b: a.matmul(b), m, m2)


def test_vdot_conjugates_its_first_argument():
    v, w = rand_array((5,), np.complex128), rand_array((5,), np.complex128, seed=1)
    check_op(ember.vdot, torch.vdot, v, w)
    check_op(ember.vdot, torch.vdot, rand_array((5,)), rand_array((5,), seed=1))


def test_complex_matmul_grads():
    check_op(_matmul, _matmul, rand_array((2, 3, 4), np.complex64),
             rand_array((4, 2), np.complex64, seed=1))


# --- the fused add* family --------------------------------------------------------------

ADD_CASES = {
    "addmm": ((3, 5), (3, 4), (4, 5)),
    "addmm_bias": ((5,), (3, 4), (4, 5)),
    "addmv": ((3,), (3, 4), (4,)),
    "addmv_scalar_input": ((1,), (3, 4), (4,)),
    "baddbmm": ((2, 3, 5), (2, 3, 4), (2, 4, 5)),
    "baddbmm_broadcast": ((3, 1), (2, 3, 4), (2, 4, 5)),
    "addbmm": ((3, 5), (2, 3, 4), (2, 4, 5)),
    "addr": ((3, 4), (3,), (4,)),
}


def _fn(name, lib, beta, alpha):
    op = getattr(lib, name.split("_")[0])
    return lambda i, a, b: op(i, a, b, beta=beta, alpha=alpha)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (-1, 0.25)], ids=str)
@pytest.mark.parametrize("case", ADD_CASES, ids=str)
def test_add_family_values_and_grads(case, beta, alpha):
    shapes = ADD_CASES[case]
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    check_op(_fn(case, ember, beta, alpha), _fn(case, torch, beta, alpha), *arrays)


@pytest.mark.parametrize("case", ["addmm", "addmv", "baddbmm", "addbmm"])
def test_add_family_grad_fn_names(case):
    arrays = [ember.tensor(rand_array(s), requires_grad=True) for s in ADD_CASES[case]]
    t_arrays = [to_torch(a) for a in arrays]
    name_e = type(getattr(ember, case)(*arrays).grad_fn).__name__
    assert name_e == type(getattr(torch, case)(*t_arrays).grad_fn).__name__


def test_addmm_is_one_primitive_for_linear():
    # nn.Linear's F.linear(x, W, b) = addmm(b, x, W.t()): one node, three edges.
    x = ember.tensor(rand_array((4, 3)), requires_grad=True)
    w = ember.tensor(rand_array((5, 3), seed=1), requires_grad=True)
    b = ember.tensor(rand_array((5,), seed=2), requires_grad=True)
    y = ember.addmm(b, x, w.t())
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    assert len(y.grad_fn.next_functions) == 3
    check_op(lambda b, x, w: ember.addmm(b, x, w.t()), lambda b, x, w: torch.addmm(b, x, w.t()),
             rand_array((5,), seed=2), rand_array((4, 3)), rand_array((5, 3), seed=1))


def _grad_fn_chain(y) -> list[str]:
    names, fn = [], y.grad_fn
    while fn is not None and fn.next_functions:
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0]
    return names


@pytest.mark.parametrize("perm", [(0, 1, 2), (1, 0, 2)], ids=["contiguous", "transposed"])
def test_batch_dims_fold_into_one_product_as_in_torch(perm):
    # (..., n, k) @ (k, m) is one mm over the folded rows, then an unsafe view (a copy first
    # when the rows cannot be viewed); F.linear on a contiguous batch folds into addmm.
    x, w, b = rand_array((2, 3, 4)), rand_array((5, 4), seed=1), rand_array((5,), seed=2)

    def matmul_case(x, w, b):
        return x.permute(perm) @ w.t()

    def linear_case(fn):
        return lambda x, w, b: fn(x.permute(perm), w, b)

    for t_fn, e_fn in ((matmul_case, matmul_case),
                       (linear_case(torch.nn.functional.linear),
                        linear_case(ember.nn.functional.linear))):
        xe, we, be = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
        xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
        assert _grad_fn_chain(e_fn(xe, we, be)) == _grad_fn_chain(t_fn(xt, wt, bt))
        check_op(e_fn, t_fn, x, w, b)


def test_addmm_kernel_result_is_fresh_memory():
    from ember.ops.matmul import addmm_p

    inp, m1, m2 = rand_array((3, 5)), rand_array((3, 4)), rand_array((4, 5))
    r = addmm_p.kernel(inp, m1, m2, beta=1, alpha=1)
    assert not any(np.shares_memory(r, x) for x in (inp, m1, m2))
    np.testing.assert_allclose(r, inp + m1 @ m2, rtol=1e-6)


def test_beta_zero_ignores_nan_input():
    nan = np.full((3, 5), np.nan, np.float32)
    m1, m2 = rand_array((3, 4)), rand_array((4, 5), seed=1)
    check_op(lambda i, a, b: ember.addmm(i, a, b, beta=0),
             lambda i, a, b: torch.addmm(i, a, b, beta=0), nan, m1, m2, grad=False)


@pytest.mark.parametrize("name", ["addmm_", "addmv_", "baddbmm_", "addbmm_", "addr_"])
def test_inplace_add_family(name):
    base = name[:-1] if name != "addmm_" else "addmm"
    shapes = {"addmm": ADD_CASES["addmm"], "addmv": ADD_CASES["addmv"],
              "baddbmm": ADD_CASES["baddbmm"], "addbmm": ADD_CASES["addbmm"],
              "addr": ADD_CASES["addr"]}[base]
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    e = [ember.tensor(a) for a in arrays]
    t = [to_torch(x) for x in e]
    r_e = getattr(e[0], name)(e[1], e[2], beta=0.5, alpha=2)
    r_t = getattr(t[0], name)(t[1], t[2], beta=0.5, alpha=2)
    assert r_e is e[0]
    assert_same(e[0], t[0])
    assert_same(r_e, r_t)


def test_inplace_addmm_records_grad_through_self():
    def f(lib):
        def run(i, a, b):
            s = i * 1
            s.addmm_(a, b, alpha=0.5)
            return s

        return run

    check_op(f(ember), f(torch), rand_array((3, 5)), rand_array((3, 4)), rand_array((4, 5)))


def test_integer_addmm():
    arrays = [rand_array(s, np.int64, -5, 5, seed=i)
              for i, s in enumerate(ADD_CASES["addmm"])]
    check_op(lambda i, a, b: ember.addmm(i, a, b, beta=2, alpha=3),
             lambda i, a, b: torch.addmm(i, a, b, beta=2, alpha=3), *arrays, grad=False)


# --- errors ---------------------------------------------------------------------------

ERRORS = {
    "matmul_inner": lambda m: m.matmul(m.randn(3, 4), m.randn(3, 5)),
    "matmul_batch": lambda m: m.matmul(m.randn(2, 3, 4), m.randn(3, 4, 6)),
    "matmul_vec_batch": lambda m: m.matmul(m.randn(4), m.randn(3, 5, 6)),
    "matmul_batch_vec": lambda m: m.matmul(m.randn(2, 3, 4), m.randn(5)),
    "matmul_vec_vec": lambda m: m.matmul(m.randn(3), m.randn(4)),
    "matmul_0d": lambda m: m.matmul(m.randn(3), m.tensor(1.0)),
    "matmul_dtype": lambda m: m.matmul(m.randn(3, 4), m.randn(4, 5, dtype=m.float64)),
    "matmul_bool": lambda m: m.matmul(m.ones(3, 3, dtype=m.bool), m.ones(3, 3, dtype=m.bool)),
    "matmul_number": lambda m: m.randn(3, 3) @ 2,
    "mm_vector": lambda m: m.mm(m.randn(3, 4), m.randn(4)),
    "mm_self_vector": lambda m: m.mm(m.randn(4), m.randn(4, 4)),
    "mm_shapes": lambda m: m.mm(m.randn(3, 4), m.randn(5, 2)),
    "bmm_2d": lambda m: m.bmm(m.randn(3, 4), m.randn(2, 4, 5)),
    "bmm_batch": lambda m: m.bmm(m.randn(2, 3, 4), m.randn(3, 4, 5)),
    "mv_matrix": lambda m: m.mv(m.randn(3, 4), m.randn(4, 1)),
    "mv_size": lambda m: m.mv(m.randn(3, 4), m.randn(5)),
    "dot_2d": lambda m: m.dot(m.randn(3, 1), m.randn(3)),
    "dot_dtype": lambda m: m.dot(m.randn(3), m.randn(3, dtype=m.float64)),
    "vdot_size": lambda m: m.vdot(m.randn(3), m.randn(4)),
    "inner_size": lambda m: m.inner(m.randn(3, 4), m.randn(5, 3)),
    "outer_2d": lambda m: m.outer(m.randn(3, 4), m.randn(3)),
    "tensordot_size": lambda m: m.tensordot(m.randn(3, 4), m.randn(5, 3), 1),
    "tensordot_lists": lambda m: m.tensordot(m.randn(3, 4), m.randn(5, 3), ([0, 1], [1])),
    "tensordot_dtype": lambda m: m.tensordot(m.randn(3), m.randn(3, dtype=m.float64), 1),
    "addmm_expand": lambda m: m.addmm(m.randn(2, 5), m.randn(3, 4), m.randn(4, 5)),
    "addmm_shapes": lambda m: m.addmm(m.randn(3, 5), m.randn(3, 4), m.randn(3, 5)),
    "addmm_dtype": lambda m: m.addmm(m.randn(3, 5, dtype=m.float64), m.randn(3, 4),
                                     m.randn(4, 5)),
    "addmm_vector": lambda m: m.addmm(m.randn(3, 5), m.randn(3), m.randn(4, 5)),
    "addmm_inplace_shape": lambda m: m.ones(1, 3).addmm_(m.ones(3, 4), m.ones(4, 3)),
    "addmv_size": lambda m: m.addmv(m.randn(2), m.randn(3, 4), m.randn(4)),
    "addmv_dtype": lambda m: m.addmv(m.randn(3), m.randn(3, 4), m.randn(4, dtype=m.float64)),
    "baddbmm_batch": lambda m: m.baddbmm(m.randn(2, 3, 5), m.randn(2, 3, 4), m.randn(3, 4, 5)),
    "baddbmm_dtype": lambda m: m.baddbmm(m.randn(2, 3, 5, dtype=m.float64), m.randn(2, 3, 4),
                                         m.randn(2, 4, 5)),
    "addbmm_batches": lambda m: m.addbmm(m.randn(3, 5), m.randn(2, 3, 4), m.randn(3, 4, 5)),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_errors_match_torch(case):
    with pytest.raises(Exception) as t_info:
        ERRORS[case](torch)
    with pytest.raises(Exception) as e_info:
        ERRORS[case](ember)
    assert type(e_info.value) is type(t_info.value), str(e_info.value)
    assert str(e_info.value) == str(t_info.value)


# --- second derivatives ------------------------------------------------------------------

def _second_order(fn_e, fn_t, *arrays, seed=5):
    """d/dx_i of <fn, v> (create_graph=True), then d/dx_j of <that, w>, against torch."""
    rng = np.random.default_rng(seed)
    xs_e = [ember.tensor(a, requires_grad=True) for a in arrays]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t = fn_t(*xs_t)
    v = rng.standard_normal(tuple(out_t.shape))
    gs_t = torch.autograd.grad((out_t * torch.tensor(v)).sum(), xs_t, create_graph=True)
    gs_e = ember.autograd.grad((fn_e(*xs_e) * ember.tensor(v)).sum(), xs_e, create_graph=True)
    ws = [rng.standard_normal(a.shape) for a in arrays]
    tot_t = sum((g * torch.tensor(w)).sum() for g, w in zip(gs_t, ws))
    tot_e = sum((g * ember.tensor(w)).sum() for g, w in zip(gs_e, ws))
    gg_t = torch.autograd.grad(tot_t, xs_t, allow_unused=True)
    gg_e = ember.autograd.grad(tot_e, xs_e, allow_unused=True)
    for a, b in zip(gs_e, gs_t):
        assert_same(a, b, 1e-10, 1e-12)
    for a, b in zip(gg_e, gg_t):
        if b is None:
            assert a is None or not a.numpy().any()
        else:
            assert_same(a, b, 1e-10, 1e-12)


SECOND_ORDER = {
    "matmul_broadcast": (lambda m: lambda a, b: (a @ b).sin(), [(2, 1, 3, 4), (3, 4, 2)]),
    "mm": (lambda m: lambda a, b: m.mm(a, b) ** 2, [(3, 4), (4, 2)]),
    "bmm": (lambda m: lambda a, b: m.bmm(a, b) ** 2, [(2, 3, 4), (2, 4, 2)]),
    "mv": (lambda m: lambda a, b: m.mv(a, b) ** 2, [(3, 4), (4,)]),
    "dot": (lambda m: lambda a, b: m.dot(a, b) ** 2, [(4,), (4,)]),
    "vec_matrix": (lambda m: lambda a, b: (a @ b) ** 2, [(4,), (2, 4, 3)]),
    "addmm": (lambda m: lambda i, a, b: m.addmm(i, a, b, beta=0.5, alpha=2) ** 2,
              [(3,), (2, 4), (4, 3)]),
    "addmv": (lambda m: lambda i, a, b: m.addmv(i, a, b, alpha=-1) ** 2, [(3,), (3, 4), (4,)]),
    "baddbmm": (lambda m: lambda i, a, b: m.baddbmm(i, a, b, beta=2) ** 2,
                [(2, 3, 2), (2, 3, 4), (2, 4, 2)]),
    "addbmm": (lambda m: lambda i, a, b: m.addbmm(i, a, b) ** 2, [(3, 2), (2, 3, 4), (2, 4, 2)]),
    "tensordot": (lambda m: lambda a, b: m.tensordot(a, b, ([0], [1])) ** 2, [(3, 4), (2, 3)]),
    "kron": (lambda m: lambda a, b: m.kron(a, b) ** 2, [(2, 2), (2, 3)]),
}


@pytest.mark.parametrize("case", SECOND_ORDER, ids=str)
def test_second_derivatives_match_torch(case):
    make, shapes = SECOND_ORDER[case]
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    _second_order(make(ember), make(torch), *arrays)


# --- meta ------------------------------------------------------------------------------

META = {
    "matmul": lambda m, d: m.matmul(m.empty(2, 1, 3, 4, **d), m.empty(5, 4, 2, **d)),
    "vec_batch": lambda m, d: m.empty(4, **d) @ m.empty(2, 4, 5, **d),
    "batch_vec": lambda m, d: m.empty(2, 3, 4, **d) @ m.empty(4, **d),
    "mm_transposed": lambda m, d: m.mm(m.empty(4, 3, **d).t(), m.empty(4, 5, **d)),
    "bmm": lambda m, d: m.bmm(m.empty(2, 3, 4, **d), m.empty(2, 4, 5, **d)),
    "dot": lambda m, d: m.dot(m.empty(4, **d), m.empty(4, **d)),
    "addmm": lambda m, d: m.addmm(m.empty(5, **d), m.empty(3, 4, **d), m.empty(4, 5, **d)),
    "addmv": lambda m, d: m.addmv(m.empty(3, **d), m.empty(3, 4, **d), m.empty(4, **d)),
    "baddbmm": lambda m, d: m.baddbmm(m.empty(3, 5, **d), m.empty(2, 3, 4, **d),
                                      m.empty(2, 4, 5, **d)),
    "addbmm": lambda m, d: m.addbmm(m.empty(3, 5, **d), m.empty(2, 3, 4, **d),
                                    m.empty(2, 4, 5, **d)),
    "outer": lambda m, d: m.outer(m.empty(3, **d), m.empty(4, **d)),
    "kron": lambda m, d: m.kron(m.empty(2, 3, **d), m.empty(4, 2, **d)),
    "tensordot": lambda m, d: m.tensordot(m.empty(2, 3, 4, **d), m.empty(4, 3, 5, **d),
                                          ([1, 2], [1, 0])),
}


@pytest.mark.parametrize("case", META, ids=str)
def test_meta_shapes_dtypes_strides(case):
    e = META[case](ember, {"device": "meta", "dtype": ember.float64})
    t = META[case](torch, {"device": "meta", "dtype": torch.float64})
    assert e.device.type == "meta"
    assert_same(e, t, check_stride=True)


def test_meta_errors_like_cpu():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.mm(ember.empty(3, 4, device="meta"), ember.empty(5, 2, device="meta"))


def test_out_argument():
    a, b = rand_array((3, 4)), rand_array((4, 5), seed=1)
    out_e, out_t = ember.empty(3, 5), torch.empty(3, 5)
    ember.matmul(ember.tensor(a), ember.tensor(b), out=out_e)
    torch.matmul(torch.tensor(a), torch.tensor(b), out=out_t)
    assert_same(out_e, out_t)


def test_products_hold_openblas_threads_and_restore_the_setting():
    # Small products run on the caller's thread, OpenBLAS held to one thread; a large
    # matrix runs OpenBLAS's split on the native pool, OpenBLAS set to the pool's size;
    # a batch of products is shared out to the pool, OpenBLAS held to one thread for each.
    # The process-wide OpenBLAS setting is the caller's again afterwards, even with
    # threads racing.
    import threading

    from ember.ops import _parallel

    real = _parallel._set_blas_threads
    if real is None:
        pytest.skip("NumPy's OpenBLAS thread control is not available")
    calls = []
    _parallel._set_blas_threads = lambda n: calls.append(n) or real(n)
    try:
        before = real(3)
        check_op(_matmul, _matmul, rand_array((8, 4)), rand_array((4, 3), seed=1))
        for sa, sb in (((100, 100), (100, 100)), ((300, 200), (200, 150)),
                       ((4, 200, 120), (4, 120, 200)), ((3, 40), (40,))):
            a, b = rand_array(sa, np.float64), rand_array(sb, np.float64, seed=1)
            np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b)).numpy(), a @ b,
                                       rtol=1e-12)
        # (a hold and a restore for the small product and, where native kernels run, for
        # the large one and the batch on the native pool)
        from ember import native

        pool = _parallel.workers()
        assert real(before) == 3
        assert calls == [1, 3] + ([pool, 3, 1, 3] if native.available() else []), calls
    finally:
        _parallel._set_blas_threads = real
    before = real(3)
    x = ember.ones(16, 16)
    threads = [threading.Thread(target=lambda: [x @ x for _ in range(200)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert real(before) == 3


@pytest.mark.parametrize("sa,sb", [((2, 3, 5, 4), (2, 3, 4, 6)), ((2, 1, 3, 4), (5, 4, 2))],
                         ids=str)
def test_batched_products_are_one_bmm_as_in_torch(sa, sb):
    # Batch dims expanded to their common shape, folded into one bmm, viewed back.
    a, b = rand_array(sa), rand_array(sb, seed=1)
    ae, be = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    assert _grad_fn_chain(ae @ be) == _grad_fn_chain(at @ bt)
    check_op(_matmul, _matmul, a, b)


@pytest.mark.parametrize("name, shapes", [
    ("addmm", ((3, 2), (3, 4), (4, 2))), ("addmv", ((3,), (3, 4), (4,))),
    ("baddbmm", ((2, 3, 5), (2, 3, 4), (2, 4, 5))), ("addbmm", ((3, 5), (2, 3, 4), (2, 4, 5))),
    ("addr", ((3, 5), (3,), (5,))), ("vdot", ((4,), (4,))), ("dot", ((4,), (4,))),
    ("mv", ((3, 4), (4,))), ("mm", ((3, 4), (4, 2))), ("bmm", ((2, 3, 4), (2, 4, 5))),
    ("matmul", ((2, 1, 3, 4), (3, 4, 2))),
])
def test_one_product_primitive_keeps_pytorchs_node_names(name, shapes):
    """mm bmm mv dot vdot matmul are one primitive, addmm addmv baddbmm addbmm addr
    another; the node name comes from the ranks (and params), as PyTorch's overloads."""
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    e = getattr(ember, name)(*[ember.tensor(a, requires_grad=True) for a in arrays])
    t = getattr(torch, name)(*[torch.tensor(a, requires_grad=True) for a in arrays])
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


def test_bmm_refuses_a_bool_input_before_comparing_dtypes():
    # found by the fuzzer (seed 20261129): torch names the bool kernel first
    for m in (ember, torch):
        a = m.ones(2, 2, 2, dtype=m.bool)
        b = m.ones(2, 2, 2, dtype=m.uint8)
        with pytest.raises(NotImplementedError, match="\"bmm\" not implemented for 'Bool'"):
            m.bmm(a, b)
        with pytest.raises(RuntimeError):
            m.bmm(b, a)


@pytest.mark.parametrize("a, b", [
    (((2,), "bool"), ((2,), "int64")),  # dot: the dtypes first
    (((2,), "bool"), ((2,), "bool")),
    (((2, 2), "bool"), ((2,), "int64")),  # mv: "addmv input tensors ..."
    (((2, 2, 2), "float64"), ((2,), "float32")),
    (((2, 2), "bool"), ((2,), "bool")),
    (((2, 2), "bool"), ((2, 2), "int64")),  # mm
    (((2, 2, 2), "int64"), ((2, 2), "bool")),  # a batch folded into mm's rows
    (((3, 1), "bool"), ((3, 1, 2), "int64")),  # bmm: a bool input before the dtypes
    (((2, 2, 2), "int64"), ((2, 2, 2), "bool")),
    (((2, 2, 2), "float32"), ((2, 2, 2), "int64")),
], ids=str)
def test_matmul_dtype_errors_are_those_of_the_product_its_ranks_take(a, b):
    """Found by the fuzzer (seed 20261159): matmul of a 2-D bool and a 3-D int64 tensor
    raised the mm's dtype error where torch's bmm refuses the bool first."""
    msgs = []
    for L in (torch, ember):
        with pytest.raises((RuntimeError, NotImplementedError)) as exc:
            L.matmul(L.zeros(*a[0], dtype=getattr(L, a[1])), L.zeros(*b[0], dtype=getattr(L, b[1])))
        msgs.append((exc.type, str(exc.value)))
    assert msgs[0] == msgs[1]


_ADD_PRODUCTS = {  # shapes that fit, and shapes that do not (a mismatch besides the dtypes)
    "addmm": (((2,), (2, 1), (1, 2)), ((2,), (2, 1), (3, 2))),
    "addbmm": (((2, 2), (3, 2, 1), (3, 1, 2)), ((2, 2), (3, 2, 1), (4, 1, 2))),
    "baddbmm": (((3, 2, 2), (3, 2, 1), (3, 1, 2)), ((3, 2, 2), (3, 2, 1), (3, 3, 2))),
}


@pytest.mark.parametrize("name", list(_ADD_PRODUCTS))
@pytest.mark.parametrize("fits", [True, False])
def test_added_product_errors_come_in_pytorchs_order(name, fits):
    """addmm / addbmm compare self with mat2 before mat1 with mat2; baddbmm compares input
    with batch1, then the shapes, bool, and batch2 last (found by the fuzzer, seed
    20261258: F.linear's addmm gave mm's message)."""
    shapes = _ADD_PRODUCTS[name][0 if fits else 1]
    for dtypes in itertools.product(("bool", "float32", "float64"), repeat=3):
        got = []
        for L in (torch, ember):
            args = [L.zeros(s, dtype=getattr(L, d)) for s, d in zip(shapes, dtypes)]
            try:
                getattr(L, name)(*args)
                got.append(None)
            except (RuntimeError, NotImplementedError) as e:
                got.append((type(e), str(e)))
        assert got[0] == got[1], dtypes


def test_linear_folds_into_addmm_only_with_a_contiguous_bias():
    # torch's F.linear of a contiguous 3-d input folds into one addmm (addmm's errors) only
    # when the bias is contiguous too; an expanded bias takes matmul, then an add
    for bias in (lambda L: L.zeros(2), lambda L: L.zeros(1).expand(2)):
        msgs = []
        for L in (torch, ember):
            with pytest.raises(RuntimeError) as exc:
                L.nn.functional.linear(L.zeros(3, 2, 1, dtype=L.float64), L.ones(2, 1), bias(L))
            msgs.append(str(exc.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("other", ["uint8", "int8", "int16", "bool", "complex128", "bfloat16"])
def test_mm_dtype_mismatch_names_every_dtype_as_torch(other):
    """The message prints C++ type names (`unsigned char`, `short int`), not ember's."""
    def call(L):
        return L.zeros(2, 2).matmul(L.zeros(2, 2, dtype=getattr(L, other)))
    assert "float != " in same_message(call)
