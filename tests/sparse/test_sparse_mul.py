"""Elementwise products with a sparse COO operand (ember/ops/sparse_mul.py) against torch:
the result's pattern, order, coalesced flag and dtype for sparse * sparse and sparse * dense
(coalesced or not, hybrid, broadcast), the function forms (`torch.mul / add / sub / div`
with a sparse operand), in-place forms, gradients, and the errors; plus `torch.sparse.sum`
of a tensor that is not COO."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import assert_same, same_error, same_message

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning")]

# (indices, values): duplicated and unsorted, unique but unsorted, and another duplicated one
A = ([[2, 0, 0, 1, 2], [0, 1, 1, 2, 0]], [1.0, 2.0, 3.0, 4.0, 5.0])
B = ([[0, 2, 1, 0], [1, 0, 0, 1]], [10.0, 20.0, 30.0, 40.0])
C = ([[1, 0, 2], [2, 1, 0]], [7.0, 8.0, 9.0])
E = ([[0, 1, 0], [1, 1, 1]], [1.0, 2.0, 3.0])
F = ([[1, 0, 2], [1, 1, 2]], [10.0, 20.0, 30.0])


def coo(L, spec, coalesce=False, dtype=None, shape=(3, 3)):
    s = L.sparse_coo_tensor(L.tensor(spec[0]), L.tensor(spec[1], dtype=dtype), shape)
    return s.coalesce() if coalesce else s


def assert_sparse(e, t) -> None:
    """Same sparse tensor: shape, dtype, flag, raw (uncoalesced) indices and values."""
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert e.is_coalesced() == t.is_coalesced()
    assert_same(e._indices(), t._indices())
    # one correctly rounded product per entry (sums of duplicates are of exact small integers)
    assert_same(e._values(), t._values(), rtol=0, atol=0)


def both(fn):
    return fn(ember), fn(torch)


PAIRS = [(A, B), (B, A), (A, C), (C, A), (E, F), (F, E), (C, C), (A, A)]


@pytest.mark.parametrize("x, y", PAIRS)
@pytest.mark.parametrize("cx, cy", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_times_sparse_pattern(x, y, cx, cy):
    # which operand's entries the product keeps, in which order, zeros included, and its flag
    e, t = both(lambda L: coo(L, x, cx) * coo(L, y, cy))
    assert_sparse(e, t)


@pytest.mark.parametrize("dx, dy", [(torch.int64, torch.float32), (torch.float64, torch.int32),
                                    (torch.float16, torch.float32)])
def test_sparse_times_sparse_promotes(dx, dy):
    def run(L):
        tx, ty = (getattr(L, str(d).split(".")[1]) for d in (dx, dy))
        return coo(L, C, dtype=tx) * coo(L, A, dtype=ty)

    e, t = both(run)
    assert_sparse(e, t)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


@pytest.mark.parametrize("cx", [False, True])
@pytest.mark.parametrize("other", [lambda L: L.arange(9.0).reshape(3, 3),
                                   lambda L: L.tensor([1.0, 2.0, 3.0]),
                                   lambda L: L.tensor([[1.0], [-2.0], [3.0]]),
                                   lambda L: L.ones(1, 1, dtype=L.int64),
                                   lambda L: L.tensor(2.5)])
def test_sparse_times_dense(cx, other):
    # the sparse operand's entries and flag, each value times the dense one at its coordinate
    e, t = both(lambda L: coo(L, A, cx) * other(L))
    assert_sparse(e, t)
    e, t = both(lambda L: other(L) * coo(L, A, cx))
    assert_sparse(e, t)
    e, t = both(lambda L: L.mul(other(L), coo(L, A, cx)))
    assert_sparse(e, t)


def test_sparse_times_larger_dense():
    # a dense factor with more leading dims: the sparse operand repeated along them, coalesced
    e, t = both(lambda L: coo(L, A) * L.arange(18.0).reshape(2, 3, 3))
    assert_sparse(e, t)


def test_hybrid_products():
    def h(L):
        return L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([[1.0, 2.0], [3.0, 4.0]]), (3, 2))

    assert_sparse(*both(lambda L: h(L) * h(L)))
    assert_sparse(*both(lambda L: h(L) * L.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])))
    assert_sparse(*both(lambda L: h(L) * L.tensor([5.0, 6.0])))


def test_bool_products():
    e, t = both(lambda L: coo(L, ([[0], [1]], [True])) * L.ones(3, 3, dtype=L.bool))
    assert_sparse(e, t)
    msg = same_message(lambda L: coo(L, ([[0], [1]], [True])) * coo(L, ([[0], [1]], [True])),
                       NotImplementedError)
    assert "Bool" in msg


def test_function_forms():
    d = lambda L: L.arange(9.0).reshape(3, 3)  # noqa: E731
    for fn in (lambda L: L.mul(coo(L, A), coo(L, B)), lambda L: L.multiply(coo(L, A), d(L)),
               lambda L: L.add(coo(L, A), coo(L, C)), lambda L: L.sub(coo(L, C), coo(L, C),
                                                                      alpha=3),
               lambda L: L.div(coo(L, A), 2), lambda L: L.true_divide(coo(L, A), 4.0),
               lambda L: L.div(coo(L, A), 2, rounding_mode="floor"),
               lambda L: coo(L, A).div(3, rounding_mode="trunc"),
               lambda L: L.mul(L.tensor(3.0), coo(L, A))):
        assert_sparse(*both(fn))
    # dense + / - sparse is dense
    assert_same(*both(lambda L: L.add(d(L), coo(L, A), alpha=2)))
    assert_same(*both(lambda L: L.sub(d(L), coo(L, A))))


@pytest.mark.parametrize("call", [
    lambda L: L.add(coo(L, A), L.ones(3, 3)),
    lambda L: coo(L, A) - L.ones(3, 3),
    lambda L: L.div(L.ones(3, 3), coo(L, A)),
    lambda L: coo(L, A) / L.ones(3, 3),
    lambda L: coo(L, A) / coo(L, B),
    lambda L: coo(L, A) * coo(L, A, shape=(3, 4)),
    lambda L: coo(L, A) * L.ones(4),
    lambda L: coo(L, ([[0], [1]], [3])).mul_(L.ones(3, 3)),
    lambda L: coo(L, ([[0], [1]], [3])).mul_(coo(L, ([[0], [1]], [3.0]))),
    lambda L: L.ones(3, 3, dtype=L.int64).mul_(coo(L, A)),
])
def test_errors_match(call):
    same_message(call)


def test_in_place():
    # scalar / dense factor: marked uncoalesced; sparse factor: the product's flag
    for make in (lambda L: coo(L, A, True).mul_(L.arange(9.0).reshape(3, 3)),
                 lambda L: coo(L, A, True).mul_(2.0),
                 lambda L: coo(L, A, True).mul_(coo(L, B, True)),
                 lambda L: coo(L, A).mul_(coo(L, B)),
                 lambda L: coo(L, A, True).div_(4.0)):
        assert_sparse(*both(make))

    def dense_in_place(L):
        x = L.arange(9.0).reshape(3, 3)
        x *= coo(L, A)
        return x

    assert_same(*both(dense_in_place))


@pytest.mark.parametrize("cx, cy", [(True, True), (False, True), (False, False)])
def test_gradients_sparse_sparse(cx, cy):
    def run(L):
        x = coo(L, A, cx).detach().requires_grad_()
        y = coo(L, B, cy).detach().requires_grad_()
        z = x * y
        L.sparse.sum(z * 2.0).backward()
        return z.grad_fn.name(), x.grad.to_dense(), y.grad.to_dense(), x.grad.is_sparse

    (ne, xe, ye, se), (nt, xt, yt, st) = both(run)
    assert (ne, se) == (nt, st) == ("MulBackward0", True)
    assert_same(xe, xt, rtol=0, atol=0)
    assert_same(ye, yt, rtol=0, atol=0)


# (a dense factor broadcast to the sparse shape: torch's backward fails, 'aten::view' on a
# sparse gradient; ember sums the gradient back to the factor's shape)
@pytest.mark.parametrize("dense_shape", [(3, 3)])
@pytest.mark.parametrize("cx", [False, True])
def test_gradients_sparse_dense(dense_shape, cx):
    def run(L):
        x = coo(L, A, cx).detach().requires_grad_()
        n = 1
        for s in dense_shape:
            n *= s
        y = L.arange(float(n)).reshape(dense_shape).requires_grad_()
        z = x * y
        (L.sparse.sum(z) if z.is_sparse else z.sum()).backward()
        return x.grad.to_dense(), y.grad.to_dense(), y.grad.is_sparse

    (xe, ye, se), (xt, yt, st) = both(run)
    assert se == st
    assert_same(xe, xt, rtol=0, atol=0)
    assert_same(ye, yt, rtol=0, atol=0)


def test_sparse_sum_needs_coo():
    for layout in ("to_dense", "to_sparse_csr", "to_sparse_csc"):
        msg = same_message(lambda L, f=layout: L.sparse.sum(getattr(L.eye(2), f)()))
        assert msg.startswith("coalesce expected sparse coordinate tensor layout")
    same_error(lambda L: L.sparse.sum(L.ones(2, 2), 0))
    same_error(lambda L: L.sparse.sum(L.eye(2).to_sparse_csr(), 0))


def _csr(L):
    return L.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()


@pytest.mark.parametrize("call", [
    lambda L: L.mul(_csr(L), _csr(L)), lambda L: L.mul(L.tensor(3.0), _csr(L)),
    lambda L: L.add(_csr(L), _csr(L)), lambda L: L.mul(_csr(L).to_sparse_csc(), 2),
])
def test_compressed_function_forms(call):
    e, t = both(call)
    assert str(e.layout).split(".")[1] == str(t.layout).split(".")[1]
    assert_same(e.to_dense(), t.to_dense(), rtol=0, atol=0)


def test_compressed_dense_add_and_refusals():
    assert_same(*both(lambda L: L.add(L.ones(2, 2), _csr(L), alpha=2)))
    for call in (lambda L: _csr(L) - _csr(L), lambda L: L.ones(2, 2) - _csr(L),
                 lambda L: L.sub(_csr(L).to_sparse_csc(), _csr(L).to_sparse_csc()),
                 lambda L: _csr(L).to_sparse() * _csr(L), lambda L: L.div(_csr(L), 2)):
        same_message(call)
