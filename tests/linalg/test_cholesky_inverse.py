"""cholesky_inverse against PyTorch: values (lower and upper factors, batched, complex),
gradients (both triangles, as torch's formula fills them), finite differences on the read
triangle, the graph node, and the bad-input errors; and the linalg error type and the
names the *_ex functions and torch's argument parser give their errors.

Factors come from well-conditioned SPD matrices, so float results agree with torch to
assert_same's tolerance (the factor's inverse and its Gram product round differently
from LAPACK's potri)."""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L
from ember.linalg.solvers import cholesky_inverse

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg


def spd(n=4, batch=(), dtype=np.float64, seed=0):
    """A Hermitian positive-definite matrix: A A^H + n I."""
    a = rand_array(batch + (n, n), dtype, seed=seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def factor(a, upper=False) -> np.ndarray:
    return L.cholesky(ember.tensor(a), upper=upper).numpy()


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=str)
@pytest.mark.parametrize("batch", [(), (3,), (2, 1)], ids=str)
def test_values_and_gradients_match_torch(batch, dtype, upper):
    f = factor(spd(4, batch, dtype), upper)
    out, _ = check_op(lambda x: cholesky_inverse(x, upper),
                      lambda x: torch.cholesky_inverse(x, upper), f)
    assert_same(out, TL.inv(torch.tensor(spd(4, batch, dtype))))


def test_graph_node_and_keyword_form():
    f = factor(spd(3))
    e = cholesky_inverse(ember.tensor(f, requires_grad=True), upper=False)
    t = torch.cholesky_inverse(torch.tensor(f, requires_grad=True), upper=False)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "CholeskyInverseBackward0"


@pytest.mark.parametrize("upper", [False, True])
def test_finite_differences_on_the_read_triangle(upper):
    # potri reads one triangle; its entries move the result, the other triangle's do not
    f = factor(spd(3, (2,)), upper)
    mask = np.triu(np.ones((3, 3))) if upper else np.tril(np.ones((3, 3)))
    rest = ember.tensor(f * (1 - mask))
    check_grads(lambda t: cholesky_inverse(t * ember.tensor(mask) + rest, upper), f * mask)


def test_other_triangle_is_not_read_but_gets_torch_gradient():
    f = factor(spd(3))
    junk = f + np.triu(np.full((3, 3), 5.0), 1)
    check_op(lambda x: cholesky_inverse(x), lambda x: torch.cholesky_inverse(x), f)
    e = cholesky_inverse(ember.tensor(junk))
    assert_same(e, torch.cholesky_inverse(torch.tensor(junk)))


def test_empty_and_out():
    for shape in ((0, 0), (3, 0, 0)):
        assert_same(cholesky_inverse(ember.ones(shape)), torch.cholesky_inverse(torch.ones(shape)))
    f = factor(spd(3, dtype=np.float32))
    oe, ot = ember.empty(3, 3, dtype=ember.float64), torch.empty(3, 3, dtype=torch.float64)
    cholesky_inverse(ember.tensor(f), out=oe)
    torch.cholesky_inverse(torch.tensor(f), out=ot)
    assert_same(oe, ot, 1e-5, 1e-6)  # computed in float32, then written into float64


LINALG_ERROR = "_LinAlgError"
BAD = [
    (lambda m, ci: ci(m.zeros(2, 2)), LINALG_ERROR),
    (lambda m, ci: ci(m.tensor([[1.0, 0.0], [1.0, 0.0]])), LINALG_ERROR),
    (lambda m, ci: ci(m.tensor([[0.0, 0.0], [1.0, 1.0]])), LINALG_ERROR),  # LU would pivot here
    (lambda m, ci: ci(m.tensor([[1.0, 1.0], [0.0, 0.0]]), True), LINALG_ERROR),
    (lambda m, ci: ci(m.stack([m.eye(2), m.zeros(2, 2)])), LINALG_ERROR),
    (lambda m, ci: ci(m.ones(2, 3)), "RuntimeError"),
    (lambda m, ci: ci(m.ones(3, dtype=m.long)), "RuntimeError"),
    (lambda m, ci: ci(m.ones(2, 3, dtype=m.half)), "RuntimeError"),
    (lambda m, ci: ci(m.ones(2, 2, dtype=m.long)), "NotImplementedError"),
    (lambda m, ci: ci(m.ones(2, 2, dtype=m.bool)), "NotImplementedError"),
    (lambda m, ci: ci(m.ones(2, 2, dtype=m.bfloat16)), "NotImplementedError"),
    (lambda m, ci: ci(m.eye(2), 1), "TypeError"),
    (lambda m, ci: ci(m.eye(2), upper=None), "TypeError"),
    (lambda m, ci: ci(1), "TypeError"),
    (lambda m, ci: ci(), "TypeError"),
]


def _raised(call, m, ci):
    try:
        call(m, ci)
    except Exception as exc:  # noqa: BLE001 - compared across the two libraries
        return type(exc).__name__, str(exc)
    raise AssertionError(f"{m.__name__} did not raise")


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_inputs_raise_as_torch(i):
    call, kind = BAD[i]
    got = _raised(call, ember, cholesky_inverse)
    assert got == _raised(call, torch, torch.cholesky_inverse)
    assert got[0] == kind


def test_public_bindings():
    f = factor(spd(3))
    assert_same(ember.cholesky_inverse(ember.tensor(f)), torch.cholesky_inverse(torch.tensor(f)))
    assert_same(ember.tensor(f).cholesky_inverse(True),
                torch.tensor(f).cholesky_inverse(True))


# --- the linalg error type, *_ex names, the argument parser's messages -------------------

def test_linalg_error_is_named_as_torch():
    with pytest.raises(L.LinAlgError) as e:
        L.cholesky(-ember.eye(2))
    with pytest.raises(TL.LinAlgError) as t:
        TL.cholesky(-torch.eye(2))
    assert type(e.value).__name__ == type(t.value).__name__ == "_LinAlgError"
    assert issubclass(L.LinAlgError, RuntimeError)


NEG = [[-1.0, 0.0], [0.0, -1.0]]
SING = [[0.0, 0.0], [0.0, 0.0]]
NAN = [[float("nan"), 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.cholesky(m.tensor(NEG)),
    lambda m: m.linalg.cholesky_ex(m.tensor(NEG), check_errors=True),
    lambda m: m.linalg.cholesky_ex(m.stack([m.eye(2), m.tensor(NEG)]), check_errors=True),
    lambda m: m.linalg.cholesky_ex(m.tensor(NEG), upper=True, check_errors=True),
    lambda m: m.linalg.inv_ex(m.tensor(SING), check_errors=True),
    lambda m: m.linalg.solve_ex(m.tensor(SING), m.ones(2), check_errors=True),
    lambda m: m.linalg.svd(m.tensor(NAN)),
    lambda m: m.linalg.svdvals(m.stack([m.eye(2), m.tensor(NAN)])),
    lambda m: m.linalg.pinv(m.tensor(NAN)),
    lambda m: m.linalg.matrix_norm(m.tensor(NAN), 2),
], ids=["cholesky", "cholesky_ex", "cholesky_ex_batched", "cholesky_ex_upper", "inv_ex",
        "solve_ex", "svd_nan", "svdvals_nan_batched", "pinv_nan", "norm2_nan"])
def test_linalg_errors_match_torch(call):
    same_message(call, RuntimeError)
    with pytest.raises(L.LinAlgError):
        call(ember)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1)),
    lambda m: m.linalg.solve_triangular(m.eye(2)),
    lambda m: m.linalg.solve_triangular(),
    lambda m: m.linalg.solve_triangular(B=m.eye(2), upper=True),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), False),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), B=m.eye(2), upper=True),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), upper=True, foo=1),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), upper=None),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), upper=1),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1), upper=True, left=None),
    lambda m: m.linalg.solve_triangular(m.eye(2), 1, upper=True),
    lambda m: m.linalg.solve_triangular(m.eye(2), B=1, upper=True),
    lambda m: m.linalg.solve(m.eye(2)),
    lambda m: m.linalg.solve(m.eye(2), m.ones(2), 1),
    lambda m: m.linalg.solve(m.eye(2), m.ones(2), left=1),
    lambda m: m.linalg.inv(),
    lambda m: m.linalg.inv(1),
    lambda m: m.linalg.cholesky(m.eye(2), True),
    lambda m: m.linalg.cholesky([[1.0]]),
    lambda m: m.linalg.cholesky_ex(m.eye(2), check_errors=1),
    lambda m: m.linalg.inv_ex(m.eye(2), check_errors=1),
    lambda m: m.linalg.solve_ex(),
])
def test_argument_errors_match_torch(call):
    same_message(call, TypeError)


def test_torch_argument_names_are_accepted():
    for m in (ember, torch):
        x = m.linalg.solve_triangular(input=m.eye(2) * 2, B=m.ones(2, 1), upper=True)
        assert x.tolist() == [[0.5], [0.5]]


def test_cholesky_solve_node_is_torchs():
    names = []
    for lib in (ember, torch):
        f = lib.linalg.cholesky(lib.eye(2, dtype=lib.float64) * 2).requires_grad_()
        x = lib.cholesky_solve(lib.ones(2, 1, dtype=lib.float64), f)
        names.append(type(x.grad_fn).__name__)
    assert names[0] == names[1] == "CholeskySolveBackward0"
