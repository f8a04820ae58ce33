"""What linalg functions raise for float16 / bfloat16 (and integer) input, against torch: most
find no CPU kernel (NotImplementedError naming it), a few refuse in their own words."""

import pytest

from helpers import same_message


def _half(L, shape=(3, 3), dtype="float16"):
    return L.eye(*shape[-2:], dtype=getattr(L, dtype)).expand(shape)


CALLS = {
    "cholesky": lambda L, A: L.linalg.cholesky(A),
    "cholesky_ex": lambda L, A: L.linalg.cholesky_ex(A),
    "det": lambda L, A: L.linalg.det(A),
    "torch.det": lambda L, A: L.det(A),
    "solve": lambda L, A: L.linalg.solve(A, A),
    "solve_ex": lambda L, A: L.linalg.solve_ex(A, A),
    "lu_factor": lambda L, A: L.linalg.lu_factor(A),
    "lu": lambda L, A: L.linalg.lu(A),
    "qr": lambda L, A: L.linalg.qr(A),
    "svd": lambda L, A: L.linalg.svd(A),
    "svdvals": lambda L, A: L.linalg.svdvals(A),
    "eigh": lambda L, A: L.linalg.eigvalsh(A),
    "eigvals": lambda L, A: L.linalg.eigvals(A),
    "solve_triangular": lambda L, A: L.linalg.solve_triangular(A, A, upper=True),
    "householder_product": lambda L, A: L.linalg.householder_product(A, A[..., 0, :2]),
    "cond": lambda L, A: L.linalg.cond(A),
}
# refused up front, each in its own words
WORDS = {
    "inv_ex": lambda L, A: L.linalg.inv_ex(A),  # (under inv's name)
    "logdet": lambda L, A: L.logdet(A),
    "matrix_norm 2": lambda L, A: L.linalg.matrix_norm(A, 2),
    "matrix_norm nuc": lambda L, A: L.linalg.norm(A, "nuc"),
    "cond fro": lambda L, A: L.linalg.cond(A, "fro"),  # (inv's check)
    "pinv": lambda L, A: L.linalg.pinv(A),
    "lstsq": lambda L, A: L.linalg.lstsq(A, A),
    "matrix_rank": lambda L, A: L.linalg.matrix_rank(A, hermitian=True),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_low_precision_kernel(name, dtype):
    msg = same_message(lambda L: CALLS[name](L, _half(L, (2, 3, 3), dtype)), NotImplementedError)
    assert "not implemented for" in msg


@pytest.mark.parametrize("name", sorted(WORDS))
def test_low_precision_refused_in_own_words(name):
    same_message(lambda L: WORDS[name](L, _half(L)))


def test_dtype_mismatch_is_checked_before_the_kernel():
    # a half A with a float B: the mismatch, not the missing kernel
    same_message(lambda L: L.linalg.solve(_half(L), L.eye(3)))
    same_message(lambda L: L.linalg.lstsq(L.eye(3), L.eye(3, dtype=L.float64)))
    same_message(lambda L: L.linalg.lstsq(L.eye(3), L.ones(3, dtype=L.int64)))


@pytest.mark.parametrize("call", [
    lambda L: L.linalg.pinv(L.ones(3)),
    lambda L: L.linalg.pinv(L.eye(3, dtype=L.int64)),
    lambda L: L.linalg.lstsq(L.eye(3, dtype=L.int64), L.eye(3, dtype=L.int64)),
    lambda L: L.linalg.cond(L.eye(3, dtype=L.int64)),
    lambda L: L.linalg.cond(L.eye(3, dtype=L.int64), 1),
    lambda L: L.linalg.svd(L.eye(2), driver="gesvd"),  # cuSOLVER only
    lambda L: L.linalg.svdvals(L.eye(2), driver="gesvd"),
])
def test_other_dtype_and_argument_errors(call):
    same_message(call)


def test_lstsq_needs_a_tensor_b():
    same_message(lambda L: L.linalg.lstsq(L.eye(2), 3), TypeError)
