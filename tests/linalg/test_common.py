"""The input checks linalg functions share (linalg/_common.py), against torch: an integer or bool
input is refused by the function's kernel (NotImplementedError naming it) or in the words of
the function it forwards to, and the rank / squareness is checked before the dtype."""

import pytest
import torch

import ember

from helpers import assert_same, same_message

L_FNS = {
    "eigh": lambda L, A, b: L.linalg.eigh(A),
    "eigvalsh": lambda L, A, b: L.linalg.eigvalsh(A),
    "eig": lambda L, A, b: L.linalg.eig(A),
    "cholesky": lambda L, A, b: L.linalg.cholesky(A),
    "cholesky_ex": lambda L, A, b: L.linalg.cholesky_ex(A),
    "torch.cholesky": lambda L, A, b: L.cholesky(A),
    "inv": lambda L, A, b: L.linalg.inv(A),
    "inv_ex": lambda L, A, b: L.linalg.inv_ex(A),
    "det": lambda L, A, b: L.linalg.det(A),
    "slogdet": lambda L, A, b: L.linalg.slogdet(A),
    "qr": lambda L, A, b: L.linalg.qr(A),
    "svd": lambda L, A, b: L.linalg.svd(A),
    "lu_factor": lambda L, A, b: L.linalg.lu_factor(A),
    "lu_factor_ex": lambda L, A, b: L.linalg.lu_factor_ex(A),
    "lu": lambda L, A, b: L.linalg.lu(A),
    "solve": lambda L, A, b: L.linalg.solve(A, b),
    "solve_ex": lambda L, A, b: L.linalg.solve_ex(A, b),
    "solve_triangular": lambda L, A, b: L.linalg.solve_triangular(A, b, upper=True),
    "lu_solve": lambda L, A, b: L.linalg.lu_solve(A, L.ones(3, dtype=L.int32), b),
    "householder_product": lambda L, A, b: L.linalg.householder_product(A, A[..., 0]),
    "orgqr": lambda L, A, b: L.orgqr(A, A[..., 0]),
    "norm": lambda L, A, b: L.linalg.norm(A),
    "norm fro": lambda L, A, b: L.linalg.norm(A, "fro"),
    "norm 2": lambda L, A, b: L.linalg.norm(A, 2),
    "vecdot": lambda L, A, b: L.linalg.vecdot(A, A),
}


def _inputs(L, shape, dtype):
    A = L.ones(*shape, dtype=getattr(L, dtype))
    return A, L.ones(3, 1, dtype=A.dtype)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(L_FNS))
def test_integer_input_is_refused_as_torch_does(name, dtype):
    kinds = []
    for L in (ember, torch):
        try:
            L_FNS[name](L, *_inputs(L, (3, 3), dtype))
        except RuntimeError as e:
            kinds.append(type(e))
    assert len(kinds) == 2 and kinds[0] is kinds[1]
    same_message(lambda L: L_FNS[name](L, *_inputs(L, (3, 3), dtype)))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["int64", "float16"])
@pytest.mark.parametrize("shape", [(3, 4), (3,)])
@pytest.mark.parametrize("name", sorted(set(L_FNS) - {"vecdot", "norm", "norm fro", "norm 2"}))
def test_shape_is_checked_before_dtype(name, shape, dtype):
    if name in ("qr", "svd") and len(shape) == 2:
        pytest.skip("a non-square matrix is fine")
    kinds = []
    for L in (ember, torch):
        try:
            L_FNS[name](L, *_inputs(L, shape, dtype))
        except RuntimeError as e:
            kinds.append(type(e))
    assert len(kinds) == 2 and kinds[0] is kinds[1]
    same_message(lambda L: L_FNS[name](L, *_inputs(L, shape, dtype)))


def test_norm_checks_dims_before_dtype_and_names_its_argument():
    same_message(lambda L: L.linalg.norm(L.ones(3, dtype=L.int64), dim=(0, 1, 2)))
    same_message(lambda L: L.linalg.norm(L.ones(2, 2, 2, dtype=L.int64), 2))
    same_message(lambda L: L.linalg.norm(L.ones(2, 2, dtype=L.int64), dim=1))
    same_message(lambda L: L.linalg.norm([1.0]), TypeError)


def test_vecdot_of_two_vectors_is_vdot():
    # two 1-D inputs: PyTorch's vdot, whatever `dim` says and with its length message
    same_message(lambda L: L.linalg.vecdot(L.ones(3), L.ones(2)))
    same_message(lambda L: L.linalg.vecdot(L.ones(3), L.ones(1)))
    same_message(lambda L: L.linalg.vecdot(L.ones(3), L.ones(2, dtype=L.int64)))
    same_message(lambda L: L.linalg.vecdot(L.ones(3, dtype=L.int64), L.ones(2)))
    for L in (ember, torch):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        r = L.linalg.vecdot(x, L.tensor([4.0, 5.0, 6.0]), dim=1)
        assert r.item() == 32.0 and r.grad_fn.name() == "VdotBackward0"
        c = L.linalg.vecdot(L.tensor([1j, 2.0]), L.tensor([1j, 1.0]))
        assert c.item() == 3 + 0j  # conj(x) . y, exact in floats
    # more dims broadcast as before
    assert_same(ember.linalg.vecdot(ember.ones(2, 3), ember.ones(3)),
                torch.linalg.vecdot(torch.ones(2, 3), torch.ones(3)))


def test_solve_triangular_casts_b_to_a_dtype():
    A = [[2.0, 1.0], [0.0, 4.0]]
    for b_dtype in ["int64", "float64", "bool"]:
        def call(L, b_dtype=b_dtype):
            return L.linalg.solve_triangular(L.tensor(A), L.ones(2, 1, dtype=getattr(L, b_dtype)),
                                             upper=True)
        # (two divisions and a subtraction, each correctly rounded: exact agreement)
        assert_same(call(ember), call(torch))
    same_message(lambda L: L.linalg.solve_triangular(L.tensor(A).long(), L.ones(2, 1),
                                                     upper=True), NotImplementedError)


def test_solve_with_integer_b_reports_the_dtype_mismatch():
    same_message(lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.int64)))
    same_message(lambda L: L.linalg.solve_ex(L.eye(3), L.ones(3, dtype=L.int64)))


def _o(L, dtype, *shape):
    return L.empty(shape, dtype=getattr(L, dtype))


# calls whose out= must have the result's dtype exactly (PyTorch's structured kernels cast
# nothing into `out`), each with the out tensors it is given
EXACT_OUT = {
    "inv": lambda L, A, d: L.linalg.inv(A, out=_o(L, d, 3, 3)),
    "inverse": lambda L, A, d: L.inverse(A, out=_o(L, d, 3, 3)),
    "det": lambda L, A, d: L.linalg.det(A, out=_o(L, d)),
    "slogdet": lambda L, A, d: L.linalg.slogdet(A, out=(_o(L, "float32"), _o(L, d))),
    "solve": lambda L, A, d: L.linalg.solve(A, A, out=_o(L, d, 3, 3)),
    "solve_ex": lambda L, A, d: L.linalg.solve_ex(A, A, out=(_o(L, d, 3, 3), _o(L, "int32"))),
    "inv_ex info": lambda L, A, d: L.linalg.inv_ex(A, out=(_o(L, "float32", 3, 3),
                                                          _o(L, "int64"))),
    "cholesky": lambda L, A, d: L.linalg.cholesky(A, out=_o(L, d, 3, 3)),
    "cholesky_ex": lambda L, A, d: L.linalg.cholesky_ex(A, out=(_o(L, d, 3, 3),
                                                               _o(L, "int32"))),
    "qr": lambda L, A, d: L.linalg.qr(A, out=(_o(L, d, 3, 3), _o(L, d, 3, 3))),
    "torch.qr": lambda L, A, d: L.qr(A, out=(_o(L, "float32", 3, 3), _o(L, d, 3, 3))),
    "svd": lambda L, A, d: L.linalg.svd(A, out=(_o(L, d, 3, 3), _o(L, d, 3), _o(L, d, 3, 3))),
    "torch.svd": lambda L, A, d: L.svd(A, out=(_o(L, d, 3, 3), _o(L, d, 3), _o(L, d, 3, 3))),
    "svdvals": lambda L, A, d: L.linalg.svdvals(A, out=_o(L, d, 3)),
    "eigh": lambda L, A, d: L.linalg.eigh(A, out=(_o(L, d, 3), _o(L, "float32", 3, 3))),
    "eigvalsh": lambda L, A, d: L.linalg.eigvalsh(A, out=_o(L, d, 3)),
    "vector_norm": lambda L, A, d: L.linalg.vector_norm(A, out=_o(L, d)),
    "vector_norm dtype": lambda L, A, d: L.linalg.vector_norm(A, dtype=L.float64,
                                                              out=_o(L, "float32")),
    "lu_factor": lambda L, A, d: L.linalg.lu_factor(A, out=(_o(L, d, 3, 3), _o(L, "int32", 3))),
    "lu_factor pivots": lambda L, A, d: L.linalg.lu_factor(A, out=(_o(L, "float32", 3, 3),
                                                                   _o(L, "int64", 3))),
    "lu": lambda L, A, d: L.linalg.lu(A, out=(_o(L, d, 3, 3), _o(L, d, 3, 3), _o(L, d, 3, 3))),
    "lu_solve": lambda L, A, d: L.linalg.lu_solve(*L.linalg.lu_factor(A), A,
                                                  out=_o(L, d, 3, 3)),
    "matrix_norm": lambda L, A, d: L.linalg.matrix_norm(A, out=_o(L, d)),
    "matrix_norm 2": lambda L, A, d: L.linalg.matrix_norm(A, 2, out=_o(L, d)),
    "norm": lambda L, A, d: L.linalg.norm(A, out=_o(L, d)),
    "norm dim": lambda L, A, d: L.linalg.norm(A, dim=0, out=_o(L, d, 3)),
    "norm nuc": lambda L, A, d: L.linalg.norm(A, "nuc", out=_o(L, d)),
    "solve_triangular": lambda L, A, d: L.linalg.solve_triangular(A, A, upper=True,
                                                                  out=_o(L, d, 3, 3)),
    "vecdot": lambda L, A, d: L.linalg.vecdot(A, A, out=_o(L, d, 3)),
    "multi_dot": lambda L, A, d: L.linalg.multi_dot([A, A, A], out=_o(L, d, 3, 3)),
    "matrix_power": lambda L, A, d: L.linalg.matrix_power(A, 3, out=_o(L, d, 3, 3)),
    "matrix_power -1": lambda L, A, d: L.matrix_power(A, -1, out=_o(L, d, 3, 3)),
    "torch.slogdet": lambda L, A, d: L.slogdet(A, out=(_o(L, d), _o(L, "float32"))),
}


@pytest.mark.parametrize("dtype", ["float64", "int64", "complex64"])
@pytest.mark.parametrize("name", sorted(EXACT_OUT))
def test_out_must_have_the_result_dtype(name, dtype):
    same_message(lambda L: EXACT_OUT[name](L, L.eye(3) * 2, dtype))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_out_with_the_result_dtype_or_a_casting_function_is_written():
    # (the deprecated torch.cholesky casts into `out`, and so do pinv and cond)
    for call in (lambda L: L.cholesky(L.eye(3) * 4, out=_o(L, "float64", 3, 3)),
                 lambda L: L.linalg.pinv(L.eye(3) * 4, out=_o(L, "float64", 3, 3)),
                 lambda L: L.linalg.cond(L.eye(3) * 4, out=_o(L, "float64")),
                 lambda L: L.linalg.inv(L.eye(3) * 4, out=_o(L, "float32", 3, 3)),
                 lambda L: L.linalg.vector_norm(L.ones(4), out=_o(L, "float32")),
                 lambda L: L.linalg.matrix_power(L.eye(3) * 4, 0, out=_o(L, "float64", 3, 3)),
                 lambda L: L.linalg.householder_product(L.eye(3) * 4, L.zeros(3),
                                                        out=_o(L, "float64", 3, 3))):
        # (powers of two and their square roots of 4: exact)
        assert_same(call(ember), call(torch))
    # matrix_power(A, 0) is a copy, cast into `out` unless the cast would lose the kind
    same_message(lambda L: L.linalg.matrix_power(L.eye(3), 0, out=_o(L, "int64", 3, 3)))


def test_matrix_power_one_is_a_copy():
    for L in (ember, torch):
        A = L.eye(2, requires_grad=True)
        B = L.linalg.matrix_power(A, 1)
        assert B is not A and B.grad_fn.name() == "CloneBackward0"
        C = L.linalg.matrix_power(A.detach(), 1)
        C[0, 0] = 7.0
        assert A[0, 0].item() == 1.0


@pytest.mark.parametrize("outs", [("float32",), ("float64",), ("complex128",),
                                  ("float32", "complex64"), ("complex64", "float32"),
                                  ("complex128", "complex64")])
def test_eig_out_takes_what_the_complex_results_cast_to(outs):
    def call(L):
        A = L.tensor([[2.0, 1.0], [0.0, 3.0]])
        if len(outs) == 1:
            return L.linalg.eigvals(A, out=_o(L, outs[0], 2))
        return L.linalg.eig(A, out=(_o(L, outs[0], 2), _o(L, outs[1], 2, 2)))
    try:
        want = call(torch)
    except RuntimeError:
        same_message(call)
        return
    # (a triangular 2x2: eigenvalues 2 and 3 exactly)
    got = call(ember)
    assert (got if isinstance(got, tuple) else (got,))[0].tolist() == \
        (want if isinstance(want, tuple) else (want,))[0].tolist()


# every ember.linalg function given a list where its first tensor goes
NON_TENSOR_CALLS = {
    "det": lambda L, x: L.linalg.det(x), "inv": lambda L, x: L.linalg.inv(x),
    "slogdet": lambda L, x: L.linalg.slogdet(x), "cholesky": lambda L, x: L.linalg.cholesky(x),
    "qr": lambda L, x: L.linalg.qr(x), "svd": lambda L, x: L.linalg.svd(x),
    "svdvals": lambda L, x: L.linalg.svdvals(x), "eig": lambda L, x: L.linalg.eig(x),
    "eigh": lambda L, x: L.linalg.eigh(x), "eigvals": lambda L, x: L.linalg.eigvals(x),
    "eigvalsh": lambda L, x: L.linalg.eigvalsh(x),
    "matrix_exp": lambda L, x: L.linalg.matrix_exp(x),
    "matrix_power": lambda L, x: L.linalg.matrix_power(x, 2),
    "cond": lambda L, x: L.linalg.cond(x), "norm": lambda L, x: L.linalg.norm(x),
    "vector_norm": lambda L, x: L.linalg.vector_norm(x),
    "matrix_norm": lambda L, x: L.linalg.matrix_norm(x),
    "solve": lambda L, x: L.linalg.solve(x, L.ones(1, 1)),
    "solve B": lambda L, x: L.linalg.solve(L.ones(1, 1), x),
    "lstsq": lambda L, x: L.linalg.lstsq(x, L.ones(1, 1)),
    "lu_factor": lambda L, x: L.linalg.lu_factor(x), "lu": lambda L, x: L.linalg.lu(x),
    "inv_ex": lambda L, x: L.linalg.inv_ex(x), "cholesky_ex": lambda L, x: L.linalg.cholesky_ex(x),
    "solve_triangular": lambda L, x: L.linalg.solve_triangular(x, L.ones(1, 1), upper=True),
    "cross": lambda L, x: L.linalg.cross(x, L.ones(3)),
    "vecdot": lambda L, x: L.linalg.vecdot(x, L.ones(1)),
    "householder_product": lambda L, x: L.linalg.householder_product(x, L.ones(1)),
    "vander": lambda L, x: L.linalg.vander(x),
    "multi_dot": lambda L, x: L.linalg.multi_dot([L.ones(1, 1), x]),
}


@pytest.mark.parametrize("name", sorted(NON_TENSOR_CALLS))
def test_a_non_tensor_operand_gets_the_parsers_type_error(name):
    same_message(lambda L: NON_TENSOR_CALLS[name](L, [[1.0]]), TypeError)


def _g(lib, a):
    return lib.tensor(a, requires_grad=True)


A3 = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
OUT_WITH_GRAD = {
    "solve": lambda L: L.linalg.solve(_g(L, A3), L.ones(3, 1), out=L.empty(3, 1)),
    "solve_triangular": lambda L: L.linalg.solve_triangular(_g(L, A3), L.ones(3, 1), upper=True,
                                                            out=L.empty(3, 1)),
    "lu_solve": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_g(L, A3)), L.ones(3, 1),
                                            out=L.empty(3, 1)),
    "lu": lambda L: L.linalg.lu(_g(L, A3), out=(L.empty(0), L.empty(0), L.empty(0))),
    "pinv": lambda L: L.linalg.pinv(_g(L, A3), out=L.empty(3, 3)),
    "eigvalsh": lambda L: L.linalg.eigvalsh(_g(L, A3), out=L.empty(3)),
    "svdvals": lambda L: L.linalg.svdvals(_g(L, A3), out=L.empty(3)),
    "inv": lambda L: L.linalg.inv(_g(L, A3), out=L.empty(3, 3)),
    "det": lambda L: L.linalg.det(_g(L, A3), out=L.empty(())),
    "cholesky": lambda L: L.linalg.cholesky(_g(L, A3), out=L.empty(3, 3)),
    "qr": lambda L: L.linalg.qr(_g(L, A3), out=(L.empty(3, 3), L.empty(3, 3))),
    "vector_norm": lambda L: L.linalg.vector_norm(_g(L, A3), out=L.empty(())),
    "householder_product": lambda L: L.linalg.householder_product(_g(L, A3), L.ones(2),
                                                                   out=L.empty(3, 3)),
    "multi_dot": lambda L: L.linalg.multi_dot([_g(L, A3), L.eye(3), L.eye(3)],
                                              out=L.empty(3, 3)),
}


@pytest.mark.parametrize("name", sorted(OUT_WITH_GRAD))
def test_out_with_grad_names_torchs_aten_op(name):
    same_message(OUT_WITH_GRAD[name])


@pytest.mark.parametrize("name", ["vander", "diagonal"])
def test_unknown_keyword_is_named_as_torchs_parser_does(name):
    same_message(lambda L: getattr(L.linalg, name)(L.ones(3, 3), out=L.empty(3)), TypeError)


@pytest.mark.parametrize("name", ["det", "inv", "solve", "norm", "vector_norm", "pinv",
                                  "multi_dot", "lu_solve", "cond"])
def test_linalg_functions_pickle_by_name(name):
    import pickle

    fn = getattr(ember.linalg, name)
    assert pickle.loads(pickle.dumps(fn)) is fn
