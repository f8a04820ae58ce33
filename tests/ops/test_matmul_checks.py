"""The matrix products' dtype errors against torch: each product compares dtypes after the
shapes (dot excepted) with its own kernel's words (bmm's "expected scalar type", mv's
addmv list), and the structured products refuse an `out=` of another dtype rather than cast
into it (mm, bmm, mv, dot, matmul, addmm, addmv, baddbmm, addbmm, tensordot / inner)."""

import pytest
import torch

import ember

from helpers import same_message


def r(m, *shape, dtype="float32"):
    return m.ones(*shape, dtype=getattr(m, dtype))


def empty(m, *shape, dtype="float64"):
    return m.empty(shape, dtype=getattr(m, dtype))


CASES = {
    # operands of two dtypes, and the order of the checks
    "bmm dtypes": lambda m: m.bmm(r(m, 2, 3, 4), r(m, 2, 4, 5, dtype="float64")),
    "bmm int": lambda m: m.bmm(r(m, 2, 3, 4), r(m, 2, 4, 5, dtype="int64")),
    "bmm shape before dtype": lambda m: m.bmm(r(m, 2, 3, 4), r(m, 2, 5, 5, dtype="float64")),
    "bmm rank before dtype": lambda m: m.bmm(r(m, 3, 4), r(m, 4, 5, dtype="float64")),
    "bmm 0-d": lambda m: m.bmm(m.tensor(1.0), r(m, 2, 4, 5)),
    "Tensor.bmm": lambda m: r(m, 2, 3, 4).bmm(r(m, 2, 4, 5, dtype="float16")),
    "mv dtypes": lambda m: m.mv(r(m, 3, 4), r(m, 4, dtype="float64")),
    "mv dtypes reversed": lambda m: m.mv(r(m, 3, 4, dtype="float64"), r(m, 4)),
    "mv shape before dtype": lambda m: m.mv(r(m, 3, 4), r(m, 5, dtype="float64")),
    "mv 0-d": lambda m: m.mv(r(m, 2, 3), m.tensor(1.0)),
    "mm shape before dtype": lambda m: m.mm(r(m, 3, 4), r(m, 5, 5, dtype="float64")),
    "matmul 2-d shape first": lambda m: m.matmul(r(m, 3, 4), r(m, 5, 5, dtype="float64")),
    "matmul 3-d shape first": lambda m: m.matmul(r(m, 2, 3, 4), r(m, 2, 5, 5, dtype="float64")),
    "matmul batch clash first": lambda m: m.matmul(r(m, 2, 3, 4), r(m, 3, 4, 5, dtype="float64")),
    "matmul bool shape first": lambda m: m.matmul(r(m, 3, 4, dtype="bool"),
                                                  r(m, 5, 5, dtype="bool")),
    "matmul mv shape first": lambda m: m.matmul(r(m, 3, 4), r(m, 5, dtype="float64")),
    # out= of another dtype
    "mm out": lambda m: m.mm(r(m, 3, 4), r(m, 4, 5), out=empty(m, 3, 5)),
    "mm out int": lambda m: m.mm(r(m, 3, 4, dtype="int64"), r(m, 4, 5, dtype="int64"),
                                 out=empty(m, 3, 5, dtype="int32")),
    "mm out before dtypes": lambda m: m.mm(r(m, 3, 4), r(m, 4, 5, dtype="float64"),
                                           out=empty(m, 3, 5, dtype="float16")),
    "bmm out (mat2's dtype)": lambda m: m.bmm(r(m, 2, 3, 4), r(m, 2, 4, 5, dtype="float64"),
                                              out=empty(m, 2, 3, 5, dtype="float16")),
    "mv out": lambda m: m.mv(r(m, 3, 4), r(m, 4), out=empty(m, 3)),
    "dot out": lambda m: m.dot(r(m, 4), r(m, 5), out=empty(m)),
    "vdot out": lambda m: m.vdot(r(m, 4), r(m, 4), out=empty(m)),
    "matmul out": lambda m: m.matmul(r(m, 3, 4), r(m, 4, 5), out=empty(m, 3, 5)),
    "matmul 3-d out": lambda m: m.matmul(r(m, 2, 3, 4), r(m, 4, 5), out=empty(m, 2, 3, 5)),
    "matmul @ 1-d out": lambda m: m.matmul(r(m, 2, 3, 4), r(m, 4), out=empty(m, 2, 3)),
    "matmul dot out": lambda m: m.matmul(r(m, 4), r(m, 4), out=empty(m)),
    "addmm out": lambda m: m.addmm(r(m, 3, 5), r(m, 3, 4), r(m, 4, 5), out=empty(m, 3, 5)),
    "addmv out": lambda m: m.addmv(r(m, 3), r(m, 3, 4), r(m, 4), out=empty(m, 3)),
    "baddbmm out": lambda m: m.baddbmm(r(m, 2, 3, 5), r(m, 2, 3, 4), r(m, 2, 4, 5),
                                       out=empty(m, 2, 3, 5)),
    "addbmm out": lambda m: m.addbmm(r(m, 3, 5), r(m, 2, 3, 4), r(m, 2, 4, 5),
                                     out=empty(m, 3, 5)),
    "tensordot out": lambda m: m.tensordot(r(m, 2, 3), r(m, 3, 4), dims=1, out=empty(m, 2, 4)),
    "inner out": lambda m: m.inner(r(m, 2, 3), r(m, 4, 3), out=empty(m, 2, 4)),
}


@pytest.mark.parametrize("call", CASES.values(), ids=CASES.keys())
def test_dtype_errors_match_torch(call):
    same_message(call)


@pytest.mark.parametrize("name", ["mm", "bmm", "matmul", "addmm", "tensordot"])
def test_an_out_of_the_results_dtype_is_written(name):
    calls = {
        "mm": lambda m, o: m.mm(r(m, 3, 4), r(m, 4, 5), out=o),
        "bmm": lambda m, o: m.bmm(r(m, 1, 3, 4), r(m, 1, 4, 5), out=o[None]),
        "matmul": lambda m, o: m.matmul(r(m, 3, 4), r(m, 4, 5), out=o),
        "addmm": lambda m, o: m.addmm(r(m, 3, 5), r(m, 3, 4), r(m, 4, 5), out=o),
        "tensordot": lambda m, o: m.tensordot(r(m, 3, 4), r(m, 4, 5), dims=1, out=o),
    }
    for m in (ember, torch):
        o = m.zeros(3, 5)
        calls[name](m, o)
        assert o.sum().item() in (60.0, 75.0)  # (addmm adds the ones of its input)
