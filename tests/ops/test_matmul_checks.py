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


# --- inside vmap: PyTorch's batch rules run another product (or a decomposition) -------

def _vm(m, f, *batched):
    return m.func.vmap(f)(*batched)


VMAP_DTYPE_CASES = {
    # mm: a batched right matrix goes to bmm, a batched left one folds into mm's rows
    "mm right batched": lambda m: _vm(m, lambda b: m.mm(r(m, 2, 4), b),
                                      r(m, 5, 4, 3, dtype="float64")),
    "mm right batched rev": lambda m: _vm(m, lambda b: m.mm(r(m, 2, 4, dtype="float64"), b),
                                          r(m, 5, 4, 3)),
    "mm left batched": lambda m: _vm(m, lambda a: m.mm(a, r(m, 4, 3, dtype="float64")),
                                     r(m, 5, 2, 4)),
    "mm both": lambda m: _vm(m, m.mm, r(m, 5, 2, 4), r(m, 5, 4, 3, dtype="float64")),
    "matmul 1-d @ batched": lambda m: _vm(m, lambda b: r(m, 4) @ b, r(m, 5, 4, 3, dtype="float64")),
    "matmul 3-d @ batched": lambda m: _vm(m, lambda b: r(m, 6, 2, 4) @ b,
                                          r(m, 5, 4, 3, dtype="float64")),
    # mv / dot: a batched vector goes to mm, a batched left operand to addmv
    "mv vec batched": lambda m: _vm(m, lambda v: m.mv(r(m, 3, 4), v), r(m, 5, 4, dtype="float64")),
    "mv both": lambda m: _vm(m, m.mv, r(m, 5, 3, 4), r(m, 5, 4, dtype="float64")),
    "dot left batched": lambda m: _vm(m, lambda a: m.dot(a, r(m, 4, dtype="float64")),
                                      r(m, 5, 4)),
    "dot right batched": lambda m: _vm(m, lambda b: m.dot(r(m, 4), b), r(m, 5, 4, dtype="float64")),
    "dot both": lambda m: _vm(m, m.dot, r(m, 5, 4), r(m, 5, 4, dtype="float64")),
    "matmul 1-d @ 1-d": lambda m: _vm(m, lambda a: a @ r(m, 4, dtype="float64"), r(m, 5, 4)),
    # linear / addmm decompose to matmul + add: the product's words
    "linear weight batched": lambda m: _vm(m, lambda w: m.nn.functional.linear(r(m, 2, 4), w),
                                           r(m, 5, 3, 4, dtype="float64")),
    "linear input batched": lambda m: _vm(
        m, lambda x: m.nn.functional.linear(x, r(m, 3, 4, dtype="float64"), r(m, 3)),
        r(m, 5, 2, 4)),
    "addmm bias batched": lambda m: _vm(
        m, lambda b: m.addmm(b, r(m, 2, 4), r(m, 4, 3, dtype="float64")), r(m, 5, 3)),
    "addmv vec batched": lambda m: _vm(
        m, lambda v: m.addmv(r(m, 3), r(m, 3, 4), v), r(m, 5, 4, dtype="float64")),
}


@pytest.mark.parametrize("call", VMAP_DTYPE_CASES.values(), ids=VMAP_DTYPE_CASES.keys())
def test_dtype_errors_inside_vmap_match_torch(call):
    same_message(call)


VMAP_PROMOTE_CASES = {
    # the add* family inside vmap: beta * input + alpha * product, with type promotion
    "addmm f64 bias": lambda m, g: _vm(m, lambda b: m.addmm(b, g(m, 2, 4), g(m, 4, 3)),
                                       g(m, 5, 3, dtype="float64")),
    "addmm int bias beta alpha": lambda m, g: _vm(
        m, lambda b: m.addmm(b, g(m, 2, 4), g(m, 4, 3), beta=3, alpha=0.5),
        g(m, 5, 3, dtype="int64")),
    "addmm beta 0 keeps input": lambda m, g: _vm(
        m, lambda b: m.addmm(b, g(m, 2, 4), g(m, 4, 3), beta=0), g(m, 5, 3, dtype="float64")),
    "linear f64 bias": lambda m, g: _vm(
        m, lambda x: m.nn.functional.linear(x, g(m, 3, 4), g(m, 3, dtype="float64")),
        g(m, 5, 2, 4)),
    "linear batched weight": lambda m, g: _vm(
        m, lambda w: m.nn.functional.linear(g(m, 2, 4), w, g(m, 3, dtype="float64")),
        g(m, 5, 3, 4)),
    "addmv": lambda m, g: _vm(m, lambda b: m.addmv(b, g(m, 3, 4), g(m, 4), alpha=2),
                              g(m, 5, 3, dtype="float64")),
    "baddbmm": lambda m, g: _vm(m, lambda b: m.baddbmm(b, g(m, 2, 2, 4), g(m, 2, 4, 3), beta=0.5),
                                g(m, 5, 3, dtype="float64")),
    "addbmm": lambda m, g: _vm(m, lambda b: m.addbmm(b, g(m, 2, 2, 4), g(m, 2, 4, 3), beta=0),
                               g(m, 5, 3, dtype="float64")),
}


@pytest.mark.parametrize("call", VMAP_PROMOTE_CASES.values(), ids=VMAP_PROMOTE_CASES.keys())
def test_add_products_promote_inside_vmap(call):
    def g(m, *shape, dtype="float32"):
        # small integers: every product and sum is exact, so the values compare bit for bit
        n = 1
        for s in shape:
            n *= s
        return (m.arange(n) % 5 - 2).reshape(shape).to(getattr(m, dtype))

    got, want = call(ember, g), call(torch, g)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert got.tolist() == want.tolist()


META_CASES = {
    # addmm / addmv run on the matrix's device: the bias is checked against it
    "addmm meta bias": lambda m: m.addmm(m.ones(3, device="meta"), r(m, 2, 4), r(m, 4, 3)),
    "addmm meta mat1": lambda m: m.addmm(r(m, 3), m.ones(2, 4, device="meta"),
                                         m.ones(4, 3, device="meta")),
    "linear meta bias": lambda m: m.nn.functional.linear(r(m, 2, 4), r(m, 3, 4),
                                                         m.ones(3, device="meta")),
    "linear meta input": lambda m: m.nn.functional.linear(m.ones(2, 4, device="meta"),
                                                          r(m, 3, 4), r(m, 3)),
    "addmv meta vec": lambda m: m.addmv(r(m, 2), r(m, 2, 4), m.ones(4, device="meta")),
    "addmv cpu vec": lambda m: m.addmv(m.ones(2, device="meta"), m.ones(2, 4, device="meta"),
                                       r(m, 4)),
}


@pytest.mark.parametrize("call", META_CASES.values(), ids=META_CASES.keys())
def test_meta_beside_cpu_names_the_matrix_device(call):
    same_message(call)


def test_cpu_scalar_input_joins_meta_matrices():
    for m in (ember, torch):
        out = m.addmm(m.tensor(1.0), m.ones(2, 4, device="meta"), m.ones(4, 3, device="meta"))
        assert out.device.type == "meta" and tuple(out.shape) == (2, 3)
