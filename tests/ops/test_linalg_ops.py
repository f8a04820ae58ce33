"""tril triu diag diag_embed trace cross and the top-level spellings of linalg functions
(det logdet slogdet inverse cholesky qr svd pinverse matrix_power) against PyTorch."""

import math

import numpy as np
import pytest
import torch

import ember

from helpers import (
    assert_same,
    check_grads,
    check_op,
    rand_array,
    same_message,
    same_result,
    to_torch,
)

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.bool_, np.complex64]


def _grad_ok(dtype) -> bool:
    return np.dtype(dtype).kind in "fc" and np.dtype(dtype) != np.float16


@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -4])
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_diagonals(op, diagonal):
    check_op(lambda x: getattr(ember, op)(x, diagonal), lambda x: getattr(torch, op)(x, diagonal),
             rand_array((2, 3, 4)))
    check_op(lambda x: getattr(x, op)(diagonal=diagonal),
             lambda x: getattr(x, op)(diagonal=diagonal), rand_array((4, 3)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_dtypes(op, dtype):
    check_op(getattr(ember, op), getattr(torch, op), rand_array((3, 3), dtype),
             grad=_grad_ok(dtype))


@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_transposed_and_empty_inputs(op):
    f_e, f_t = getattr(ember, op), getattr(torch, op)
    check_op(lambda x: f_e(x.mT, 1), lambda x: f_t(x.mT, 1), rand_array((2, 3, 4)),
             check_stride=True)
    check_op(f_e, f_t, rand_array((0, 3)), check_stride=True)


@pytest.mark.parametrize("op", ["tril_", "triu_"])
def test_inplace_tril_triu(op):
    a = rand_array((3, 4))
    e, t = ember.tensor(a), torch.tensor(a)
    assert getattr(e, op)(1) is e
    getattr(t, op)(1)
    assert_same(e, t)

    def chained(x):
        y = x * 2
        getattr(y, op)(-1)
        return y

    check_op(chained, chained, a)


def test_tril_needs_a_matrix():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dim"):
            lib.tril(lib.ones(3))


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0), (0, 1, 0)],
                         ids=str)
def test_diag_embed(offset, dim1, dim2):
    check_op(lambda x: ember.diag_embed(x, offset, dim1, dim2),
             lambda x: torch.diag_embed(x, offset, dim1, dim2), rand_array((2, 3)),
             check_stride=True)


def test_diag_embed_bool_and_errors():
    check_op(ember.diag_embed, torch.diag_embed, rand_array((3,), np.bool_), grad=False)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 0, 0"):
            lib.diag_embed(lib.ones(3), dim1=0, dim2=0)


@pytest.mark.parametrize("shape,k", [((4,), 0), ((4,), 2), ((4,), -1), ((3, 4), 0), ((3, 4), 1),
                                     ((3, 4), -2), ((3, 4), 5)], ids=str)
def test_diag(shape, k):
    check_op(lambda x: ember.diag(x, k), lambda x: torch.diag(x, k), rand_array(shape),
             check_stride=True)
    check_op(lambda x: x.diag(k), lambda x: x.diag(k), rand_array(shape))


def test_diag_rejects_3d():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
            lib.diag(lib.ones(2, 2, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.uint8, np.complex128], ids=str)
def test_trace_dtypes(dtype):
    check_op(ember.trace, torch.trace, rand_array((3, 4), dtype), grad=_grad_ok(dtype))
    check_op(lambda x: x.trace(), lambda x: x.trace(), rand_array((4, 3), dtype),
             grad=_grad_ok(dtype))


def test_trace_errors():
    for lib, exc in ((ember, RuntimeError), (torch, RuntimeError)):
        with pytest.raises(exc, match="trace: expected a matrix, but got tensor with dim 1"):
            lib.trace(lib.ones(3))
        with pytest.raises(NotImplementedError, match="\"trace\" not implemented for 'Bool'"):
            lib.trace(lib.ones(2, 2, dtype=lib.bool))


def test_structure_ops_finite_differences():
    a = rand_array((3, 4), np.float64)
    check_grads(lambda x: ember.tril(x, 1) * ember.triu(x, -1), a)
    check_grads(lambda x: ember.diag_embed(x, 1) ** 2, a)
    check_grads(lambda x: ember.trace(x @ x.mT), a)
    check_grads(lambda x: ember.diag(x, 1) * 3, a)


SECOND_ORDER = {
    "tril": lambda lib, x: lib.tril(x, -1) ** 3,
    "triu": lambda lib, x: lib.triu(x) ** 3,
    "diag_embed": lambda lib, x: lib.diag_embed(x) ** 3,
    "trace": lambda lib, x: lib.trace(x @ x) ** 2,
}


@pytest.mark.parametrize("case", SECOND_ORDER, ids=str)
def test_structure_ops_second_order(case):
    f = SECOND_ORDER[case]
    a = rand_array((3, 3), np.float64)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    (ge,) = ember.autograd.grad(f(ember, xe).sum(), xe, create_graph=True)
    (gt,) = torch.autograd.grad(f(torch, xt).sum(), xt, create_graph=True)
    assert_same(ge, gt, 1e-10, 1e-12)
    assert_same(ember.autograd.grad(ge.sin().sum(), xe)[0],
                torch.autograd.grad(gt.sin().sum(), xt)[0], 1e-10, 1e-12)


# --- cross --------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb,dim", [((4, 3), (4, 3), -1), ((3, 5), (3, 5), 0),
                                       ((2, 1, 3), (1, 4, 3), -1), ((4, 3), (1, 3), 1)], ids=str)
def test_linalg_cross(sa, sb, dim):
    check_op(lambda a, b: ember.linalg.cross(a, b, dim=dim),
             lambda a, b: torch.linalg.cross(a, b, dim=dim), rand_array(sa), rand_array(sb, seed=1))
    check_grads(lambda a, b: ember.linalg.cross(a, b, dim=dim), rand_array(sa, np.float64),
                rand_array(sb, np.float64, seed=1))


def test_cross_complex_and_int():
    check_op(lambda a, b: ember.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b),
             rand_array((2, 3), np.complex128), rand_array((2, 3), np.complex128, seed=1))
    check_op(lambda a, b: ember.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b),
             rand_array((2, 3), np.int64, -5, 5), rand_array((2, 3), np.int64, -5, 5, seed=1))


def test_torch_cross_default_dim_warns_and_picks_first_size_3():
    a, b = rand_array((3, 4)), rand_array((3, 4), seed=1)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        e = ember.cross(ember.tensor(a), ember.tensor(b))
    with pytest.warns(UserWarning):
        t = torch.cross(torch.tensor(a), torch.tensor(b))
    assert_same(e, t)
    check_op(lambda x, y: x.cross(y, dim=0), lambda x, y: x.cross(y, dim=0), a, b)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.cross(m.randn(4, 3), m.randn(4, 2)),
    lambda m: m.linalg.cross(m.randn(4, 3), m.randn(3)),
    lambda m: m.linalg.cross(m.randn(4, 3), m.randn(4, 3, dtype=m.float64)),
    lambda m: m.linalg.cross(m.randn(4, 3), m.randn(2, 3)),
])
def test_cross_errors(call):
    with pytest.raises(RuntimeError) as t_info:
        call(torch)
    with pytest.raises(RuntimeError) as e_info:
        call(ember)
    assert type(e_info.value) is type(t_info.value)


# --- top-level linalg spellings -------------------------------------------------------------

def _spd(n=4, batch=(), seed=0):
    a = rand_array(batch + (n, n), np.float64, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_top_level_det_inverse_logdet_slogdet():
    a = _spd(3, (2,))
    check_op(ember.det, torch.det, a)
    check_op(ember.inverse, torch.inverse, a)
    check_op(ember.logdet, torch.logdet, a)
    check_op(lambda x: tuple(ember.slogdet(x)), lambda x: tuple(torch.slogdet(x)), a)
    check_op(lambda x: x.det(), lambda x: x.det(), a)
    check_op(lambda x: x.inverse(), lambda x: x.inverse(), a)


def test_logdet_of_negative_determinant_is_nan():
    a = np.diag([-1.0, 2.0, 3.0])
    check_op(ember.logdet, torch.logdet, a, grad=False)
    check_op(ember.logdet, torch.logdet, np.zeros((2, 2)), grad=False)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_top_level_cholesky_upper_and_lower():
    a = _spd(4)
    check_op(ember.cholesky, torch.cholesky, a)
    check_op(lambda x: ember.cholesky(x, upper=True), lambda x: torch.cholesky(x, upper=True), a)


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
def test_top_level_qr_some_flag():
    a = rand_array((5, 3), np.float64)
    check_op(lambda x: tuple(ember.qr(x)), lambda x: tuple(torch.qr(x)), a)
    check_op(lambda x: tuple(ember.qr(x, some=False)), lambda x: tuple(torch.qr(x, some=False)),
             a, grad=False)


@pytest.mark.filterwarnings("ignore:torch.svd is deprecated")
def test_top_level_svd_returns_v_not_vh():
    a = rand_array((5, 3), np.float64)
    check_op(lambda x: [t.abs() for t in ember.svd(x)], lambda x: [t.abs() for t in torch.svd(x)],
             a)
    e, t = ember.svd(ember.tensor(a), compute_uv=False), torch.svd(torch.tensor(a),
                                                                   compute_uv=False)
    for x, y in zip(e, t):
        assert_same(x, y)
    e = ember.svd(ember.tensor(a), some=False)
    assert tuple(e.U.shape) == (5, 5) and tuple(e.V.shape) == (3, 3)


def test_top_level_pinverse_and_matrix_power():
    a = rand_array((4, 3), np.float64)
    check_op(ember.pinverse, torch.pinverse, a)
    sq = rand_array((3, 3), np.float64) + 2 * np.eye(3)
    for n in (0, 1, 3, -2):
        check_op(lambda x, n=n: ember.matrix_power(x, n), lambda x, n=n: torch.matrix_power(x, n),
                 sq)
    check_op(lambda x: x.matrix_power(5), lambda x: x.matrix_power(5),
             rand_array((3, 3), np.int64, -2, 3), grad=False)


META = {
    "tril": lambda m, d: m.tril(m.empty(2, 3, 4, **d).mT, 1),
    "diag_embed": lambda m, d: m.diag_embed(m.empty(2, 3, **d), 1, 0, 2),
    "diag_vec": lambda m, d: m.diag(m.empty(4, **d), -1),
    "diag_mat": lambda m, d: m.diag(m.empty(3, 4, **d), 1),
    "trace": lambda m, d: m.trace(m.empty(3, 4, **d)),
    "cross": lambda m, d: m.linalg.cross(m.empty(2, 1, 3, **d), m.empty(1, 4, 3, **d)),
}


@pytest.mark.parametrize("case", META, ids=str)
def test_meta(case):
    e = META[case](ember, {"device": "meta"})
    t = META[case](torch, {"device": "meta"})
    assert e.device.type == "meta"
    assert_same(e, t, check_stride=True)


def test_tensor_methods_bound():
    x = ember.tensor(rand_array((3, 3)))
    assert_same(x.tril(), torch.tril(to_torch(x)))
    assert_same(x.diag_embed(), torch.diag_embed(to_torch(x)))


@pytest.mark.parametrize("name", ["svd", "qr", "slogdet"])
def test_top_level_decompositions_return_torchs_named_types(name):
    a = rand_array((3, 3), np.float64)
    got = []
    for m in (ember, torch):
        r = getattr(m, name)(m.tensor(a))
        got.append((type(r).__name__, type(r).__module__.split(".", 1)[1],
                    repr(r).split("(")[0].split(".", 1)[1], len(r)))
    assert got[0] == got[1]


def test_return_types_module_names_the_types():
    r = ember.sort(ember.tensor([2, 1]))
    assert isinstance(r, ember.return_types.sort)
    assert isinstance(ember.svd(ember.eye(2)), ember.return_types.svd)
    assert isinstance(ember.linalg.qr(ember.eye(2)), ember.return_types.linalg_qr)


def test_deprecated_cholesky_names_itself_and_warns_once():
    from fresh_process import with_server

    prog = ("import warnings, {L} as T\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    T.cholesky(T.eye(2)); T.cholesky(T.eye(2), upper=True)\n"
            "    try:\n        T.cholesky(-T.eye(2))\n"
            "    except Exception as e:\n        print(type(e).__name__, e)\n"
            "print(len(w), str(w[0].message).split(chr(10))[0])\n")
    outs = [with_server(L).run_code(prog.format(L=L), timeout=120).stdout
            for L in ("ember", "torch")]
    assert outs[0] == outs[1]
    assert outs[0].startswith("_LinAlgError cholesky: ") and "\n1 torch.cholesky is" in outs[0]


# --- cross: out='s dtype, bool, mixed dtypes in PyTorch's order ---------------------------

@pytest.mark.parametrize("call,kind", [
    (lambda ns: ns.linalg.cross(ns.tensor([True, False, True]), ns.tensor([True, True, False])),
     NotImplementedError),
    (lambda ns: ns.cross(ns.tensor([True, False, True]), ns.tensor([1, 2, 3]), dim=0),
     NotImplementedError),
    (lambda ns: ns.linalg.cross(ns.tensor([1, 2, 3]), ns.tensor([True, False, True])),
     RuntimeError),
    (lambda ns: ns.linalg.cross(ns.tensor([1, 2, 3]), ns.tensor([1.0, 2.0, 3.0])), RuntimeError),
    (lambda ns: ns.linalg.cross(ns.tensor([1, 2, 3]), ns.tensor([3, 1, 2]), out=ns.empty(3)),
     RuntimeError),
    (lambda ns: ns.cross(ns.tensor([1, 2, 3]), ns.tensor([3, 1, 2]), dim=0,
                         out=ns.empty(3, dtype=ns.int32)), RuntimeError),
    (lambda ns: ns.linalg.cross(ns.tensor([True, False]), ns.tensor([True, False])),
     RuntimeError),
    (lambda ns: ns.linalg.cross(ns.tensor([True, False, True]), ns.tensor([True, False, True]),
                                out=ns.empty(3)), RuntimeError),
], ids=["bool", "bool-int", "int-bool", "int-float", "out-float-of-int", "out-int32-of-int",
        "bool-bad-shape", "bool-out-float"])
def test_cross_refusals_like_torch(call, kind):
    same_message(call, kind)


def test_cross_integer_out_like_torch():
    same_result(lambda ns: ns.linalg.cross(ns.tensor([1, 2, 3], dtype=ns.int8),
                                           ns.tensor([4, 5, 6], dtype=ns.int8),
                                           out=ns.empty(3, dtype=ns.int8)))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shapes", [((4, 2), (4, 2)), ((4, 2), (5, 2)), ((), ()), ((1, 3), (3, 1)),
                                    ((3, 1), (1, 3)), ((2, 3), (3,)), ((3, 3), (3, 3))])
def test_cross_without_dim_takes_inputs_first_size_3_dim(shapes):
    # (torch.cross with dim=None looks at `input` alone, before broadcasting with `other`)
    outs = []
    for L in (ember, torch):
        L.manual_seed(0)
        a, b = L.arange(1.0, 1.0 + math.prod(shapes[0])).reshape(shapes[0]), \
            L.arange(2.0, 2.0 + math.prod(shapes[1])).reshape(shapes[1]).flip(-1)
        try:
            outs.append(L.cross(a, b))
        except RuntimeError as e:
            outs.append(f"{type(e).__name__}: {e}")
    if isinstance(outs[1], str):
        assert outs[0] == outs[1]
    else:  # (products of small integers, exact)
        assert_same(outs[0], outs[1])
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            L.ones(2, 2).cross(L.ones(2, 2))


# --- tril / triu: the parser's check of `diagonal` ---------------------------------------

_TRIANGLE_CALLS = {
    "tril": lambda L, d: L.tril(L.ones(3, 3), d),
    "triu method": lambda L, d: L.ones(3, 3).triu(d),
    "tril_": lambda L, d: L.ones(3, 3).tril_(d),
    "triu_": lambda L, d: L.ones(3, 3).triu_(d),
}


@pytest.mark.parametrize("call", _TRIANGLE_CALLS)
@pytest.mark.parametrize("diagonal", [0.5, 1.0, None, True, "1", (1,),
                                      lambda L: L.tensor([1, 2]), lambda L: L.tensor(1.0)])
def test_triangle_diagonal_that_is_no_int_is_refused_as_torch(call, diagonal):
    fn = _TRIANGLE_CALLS[call]
    same_message(lambda L: fn(L, diagonal(L) if callable(diagonal) else diagonal), TypeError)


@pytest.mark.parametrize("call", _TRIANGLE_CALLS)
@pytest.mark.parametrize("diagonal", [np.int32(-1), 2, lambda L: L.tensor(1),
                                      lambda L: L.tensor([[1]])])
def test_triangle_diagonal_integer_likes_as_torch(call, diagonal):
    fn = _TRIANGLE_CALLS[call]
    assert_same(fn(ember, diagonal(ember) if callable(diagonal) else diagonal),
                fn(torch, diagonal(torch) if callable(diagonal) else diagonal))


@pytest.mark.parametrize("call", [
    lambda L: L.det([[1.0]]), lambda L: L.logdet([[1.0]]), lambda L: L.slogdet([[1.0]]),
    lambda L: L.inverse([[1.0]]), lambda L: L.svd([[1.0]]), lambda L: L.pinverse([[1.0]]),
    lambda L: L.matrix_power([[1.0]], 2), lambda L: L.matrix_exp([[1.0]]),
    lambda L: L.lu_unpack([[1.0]], L.ones(1, dtype=L.int32)),
])
def test_top_level_linalg_spellings_name_themselves_for_a_non_tensor(call):
    same_message(call, TypeError)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_torch_cholesky_names_its_own_node():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    got = [type(m.cholesky(m.tensor(a, requires_grad=True)).grad_fn).__name__
           for m in (ember, torch)]
    assert got[0] == got[1]
