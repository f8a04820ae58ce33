"""_common.py against torch: `write_out`, the one place every `out=` is honoured, refuses a
call that would need autograd (an input or `out` requiring grad, grad mode on) with
PyTorch's RuntimeError and message, before any other check; without grad it writes."""

import pytest
import torch

import ember

from helpers import assert_same

CALLS = {
    "add": lambda m, a, b, o: m.add(a, b, out=o(2, 3)),
    "add_grad_second": lambda m, a, b, o: m.add(b, a, out=o(2, 3)),
    "mul": lambda m, a, b, o: m.mul(a, b, out=o(2, 3)),
    "matmul": lambda m, a, b, o: m.matmul(a, b.t(), out=o(2, 2)),
    "mm": lambda m, a, b, o: m.mm(a, b.t(), out=o(2, 2)),
    "sum": lambda m, a, b, o: m.sum(a, 0, out=o(3)),
    "cat": lambda m, a, b, o: m.cat([a, b], out=o(4, 3)),
    "exp": lambda m, a, b, o: m.exp(a, out=o(2, 3)),
    "clamp": lambda m, a, b, o: m.clamp(a, 0, 1, out=o(2, 3)),
    "where": lambda m, a, b, o: m.where(b > 0, a, b, out=o(2, 3)),
    "remainder": lambda m, a, b, o: m.remainder(a, b, out=o(2, 3)),
    "max_dim": lambda m, a, b, o: m.max(a, 0, out=(o(3), m.empty(3, dtype=m.int64))),
    "int_out": lambda m, a, b, o: m.add(a, b, out=m.empty(2, 3, dtype=m.int64)),
}
MESSAGE = ("(): functions with out=... arguments don't support automatic differentiation, but "
           "one of the arguments requires grad.")


@pytest.mark.parametrize("name", CALLS)
def test_out_with_an_input_requiring_grad_raises_torchs_error(name):
    msgs = []
    for m in (torch, ember):
        a = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        b = m.tensor([[0.5, 1.5, 2.5], [1.0, 2.0, 3.0]])
        with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments") as exc:
            CALLS[name](m, a, b, m.empty)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1] and msgs[1].endswith(MESSAGE)
    with ember.no_grad():  # no graph to record: the write goes through
        a = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = ember.empty(2, 3)
        assert ember.add(a, a, out=out) is out and not out.requires_grad


def test_an_out_requiring_grad_is_refused_too_and_non_differentiable_results_are_not():
    for m in (torch, ember):
        b = m.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match=r"add\(\): functions with out="):
            m.add(b, b, out=m.empty(2, requires_grad=True))
        a = b.clone().requires_grad_()
        r = m.eq(a, b, out=m.empty(2, dtype=m.bool))  # a bool result has no derivative
        a_max = m.argmax(a, 0, out=m.empty((), dtype=m.int64))
        if m is torch:
            want = r, a_max
    assert_same(r, want[0])
    assert_same(a_max, want[1])


_OUT_CALLS = {
    "max": lambda L, A: L.max(A, 0, out=(L.empty(3), L.empty(3, dtype=L.long))),
    "sort": lambda L, A: L.sort(A, out=(L.empty(3, 3), L.empty(3, 3, dtype=L.long))),
    "topk": lambda L, A: L.topk(A, 1, out=(L.empty(3, 1), L.empty(3, 1, dtype=L.long))),
    "aminmax": lambda L, A: L.aminmax(A, out=(L.empty(()), L.empty(()))),
    "linalg.qr": lambda L, A: L.linalg.qr(A, out=(L.empty(3, 3), L.empty(3, 3))),
    "linalg.slogdet": lambda L, A: L.linalg.slogdet(A, out=(L.empty(()), L.empty(()))),
    "slogdet": lambda L, A: L.slogdet(A, out=(L.empty(()), L.empty(()))),
    "linalg.eigh": lambda L, A: L.linalg.eigh(A + A.T, out=(L.empty(3), L.empty(3, 3))),
    "lu_factor": lambda L, A: L.linalg.lu_factor(A, out=(L.empty(3, 3),
                                                         L.empty(3, dtype=L.int32))),
}


@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
def test_named_tuple_written_into_out_is_the_out_return_type(name):
    # (PyTorch returns torch.return_types.<name>_out holding the `out` tensors themselves)
    A = [[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]
    e, t = _OUT_CALLS[name](ember, ember.tensor(A)), _OUT_CALLS[name](torch, torch.tensor(A))
    assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
    assert repr(e).split("(")[0].split(".")[-1] == repr(t).split("(")[0].split(".")[-1]
    for field in type(e)._fields:
        # (small factorizations: they agree to a few float32 ulps)
        assert_same(getattr(e, field), getattr(t, field), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m, A, o: m.index_add(A, 0, m.tensor([0]), A[:1], out=o(3, 3)),
    lambda m, A, o: m.linalg.vector_norm(A, out=o()),
    lambda m, A, o: m.index_select(A, 0, m.tensor([0]), out=o(1, 3)),
    lambda m, A, o: m.tril(A, out=o(3, 3)),
])
def test_exact_out_refuses_autograd_before_the_dtype(call):
    # (a float64 `out` for a float32 result that needs grad: the autograd refusal comes first)
    for m in (torch, ember):
        A = (m.eye(3) * 2).requires_grad_()
        with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments"):
            call(m, A, lambda *s, m=m: m.empty(s, dtype=m.float64))
        with m.no_grad(), pytest.raises(RuntimeError, match="dtype|scalar type"):
            call(m, A, lambda *s, m=m: m.empty(s, dtype=m.float64))


def test_composite_out_checks_the_dtype_before_autograd():
    # (linalg.norm / matrix_norm, vecdot and multi_dot check `out`'s dtype themselves first)
    for call in (lambda m, A, o: m.linalg.matrix_norm(A, out=o(())),
                 lambda m, A, o: m.linalg.norm(A, out=o(())),
                 lambda m, A, o: m.linalg.vecdot(A, A, out=o((3,))),
                 lambda m, A, o: m.linalg.multi_dot([A, A, A], out=o((3, 3)))):
        msgs = []
        for m in (torch, ember):
            A = (m.eye(3) * 2).requires_grad_()
            with pytest.raises(RuntimeError) as info:
                call(m, A, lambda s, m=m: m.empty(s, dtype=m.float64))
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1] and "automatic differentiation" not in msgs[0]


_OUT_GRAD_CASES = {
    "max": lambda m, x, e: m.max(x, 1, out=(e(), m.empty(0, dtype=m.long))),
    "min": lambda m, x, e: m.min(x, 1, out=(e(), m.empty(0, dtype=m.long))),
    "amax": lambda m, x, e: m.amax(x, 1, out=e()),
    "cummax": lambda m, x, e: m.cummax(x, 1, out=(e(), m.empty(0, dtype=m.long))),
    "logsumexp": lambda m, x, e: m.logsumexp(x, 1, out=e()),
    "sum": lambda m, x, e: m.sum(x, 1, out=e()),
    "argmax": lambda m, x, e: m.argmax(x, 1, out=e()),  # (not differentiable: dtype error)
    "sort": lambda m, x, e: m.sort(x, 1, out=(e(), m.empty(0, dtype=m.long))),
}


@pytest.mark.parametrize("name", list(_OUT_GRAD_CASES))
def test_out_that_requires_grad_is_refused_naming_the_op_called(name):
    """The message names the public op (it said `none_type()` where the op is a factory's
    inner function), and only where the result is of a differentiable dtype."""
    import torch

    msgs = []
    for m in (ember, torch):
        x = m.randn(3, 4)
        with pytest.raises(RuntimeError) as e:
            _OUT_GRAD_CASES[name](m, x, lambda m=m: m.empty(0, requires_grad=True))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


_BIG = 2**24 + 2**16 + 1  # (a float32 tie, rounded down to 2**24 + 2**16, then a bfloat16 tie
# rounded to even, 2**24; rounded once to bfloat16 it is 2**24 + 2**17)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("call", [
    lambda L, x: x + _BIG, lambda L, x: x - 4097, lambda L, x: L.where(x > 0, x, _BIG),
    lambda L, x: x.clamp(max=2049), lambda L, x: x.add(_BIG, alpha=2),
    lambda L, x: (x + 1000) == 1025, lambda L, x: L.remainder(x, 2049)],
    ids=["add", "sub", "where", "clamp", "add_alpha", "eq", "remainder"])
def test_an_int_a_16_bit_float_cannot_hold_rounds_through_float32(dtype, call):
    """`fit_scalar`: a Python int beside a float16 / bfloat16 tensor is read as PyTorch's
    Scalar conversion makes it, int -> float -> 16 bits; NumPy beside a bfloat16 array rounds
    it once since ml_dtypes 0.7 (and ints 16 bits hold exactly are unchanged)."""
    vals = [1.0, -3.0, 0.5, 2.0, -1.5, 100.0]
    got, want = (call(L, L.tensor(vals).to(getattr(L, dtype))) for L in (ember, torch))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert got.float().tolist() == want.float().tolist()  # (single roundings: exact)
