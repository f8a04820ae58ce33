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
