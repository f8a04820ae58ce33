"""Copies and conversions against torch: clone, contiguous, to(), .float() & co., copy_."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import DTYPE_PAIRS, E2T, assert_same, check_grads, check_op, rand_array, to_torch

VALUES = [0.0, 1.7, -2.7, 0.5, 255.0, -1.0, 1e-3, 300.0, 65536.0, 1 + 2**-11 + 2**-30]


def _source(dtype):
    e = ember.tensor(VALUES, dtype=ember.float64)
    if dtype.is_complex:
        e = e.to(ember.complex128) + ember.tensor(VALUES[::-1]).to(ember.complex128) * 1j
    elif dtype is ember.bool:
        e = e != 0
    elif not dtype.is_floating_point:
        e = e.abs().to(ember.int64) if dtype is ember.uint8 else e.to(ember.int64)
    return e.to(dtype)


@pytest.mark.parametrize("src", [e for e, _ in DTYPE_PAIRS], ids=str)
def test_to_dtype_converts_every_pair_like_torch(src):
    e = _source(src)
    t = to_torch(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real discards the imaginary part
        for dst, tdst in DTYPE_PAIRS:
            assert_same(e.to(dst), t.to(tdst), rtol=0, atol=0)


METHODS = ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte",
           "bool", "cfloat", "cdouble"]


@pytest.mark.parametrize("method", METHODS)
def test_conversion_methods(method):
    e = ember.tensor([[1.7, -2.7], [0.0, 3.5]])
    t = torch.tensor([[1.7, -2.7], [0.0, 3.5]])
    if method == "byte":
        e, t = e.abs(), t.abs()
    assert_same(getattr(e, method)(), getattr(t, method)())
    assert_same(getattr(e.t(), method)(), getattr(t.t(), method)(), check_stride=True)


def test_to_returns_self_when_nothing_changes():
    x = ember.arange(3)
    assert x.to(ember.int64) is x and x.to("cpu") is x and x.long() is x
    assert x.to(ember.int64, copy=True) is not x
    y = x.to(ember.float32, copy=True)
    assert y.data_ptr() != x.data_ptr()


def test_to_argument_forms():
    e, t = ember.arange(3), torch.arange(3)
    assert_same(e.to("cpu", ember.float64), t.to("cpu", torch.float64))
    assert_same(e.to(ember.device("cpu")), t.to(torch.device("cpu")))
    assert_same(e.to(dtype=ember.float16, device="cpu"), t.to(dtype=torch.float16, device="cpu"))
    assert_same(e.to(ember.zeros(1, dtype=ember.float16)), t.to(torch.zeros(1,
                                                                          dtype=torch.float16)))
    assert_same(e.type(ember.float32), t.type(torch.float32))
    assert e.type() == t.type()
    assert_same(e.type("torch.DoubleTensor"), t.type("torch.DoubleTensor"))
    for bad in (lambda m: m.arange(3).to("foo"), lambda m: m.arange(3).to(bogus=1)):
        with pytest.raises(Exception) as err:
            bad(torch)
        with pytest.raises(err.type):
            bad(ember)


def test_to_meta_and_back():
    x = ember.arange(6.0).reshape(2, 3)
    m = x.to("meta")
    assert m.is_meta and m.shape == (2, 3) and m.dtype is ember.float32
    assert x.to("meta", ember.float16).dtype is ember.float16
    with pytest.raises(NotImplementedError):
        m.to("cpu")


def test_to_keeps_the_graph():
    check_op(lambda x: x.to(ember.float32) * 2, lambda x: x.to(torch.float32) * 2,
             rand_array((3,), np.float64))
    check_op(lambda x: x.double().half().float(), lambda x: x.double().half().float(),
             rand_array((2, 2), np.float32), rtol=1e-3, atol=1e-3)
    x = ember.ones(2, requires_grad=True)
    assert type(x.double().grad_fn).__name__ == type(torch.ones(2, requires_grad=True)
                                                     .double().grad_fn).__name__


# --- clone and contiguous ---------------------------------------------------------------------

CLONE_INPUTS = [
    lambda m: m.arange(24.0).reshape(2, 3, 4),
    lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    lambda m: m.arange(24.0).reshape(2, 3, 4)[:, ::2],
    lambda m: m.arange(24.0).reshape(2, 3, 4)[:, :1].expand(2, 5, 4),
    lambda m: m.arange(24.0).reshape(2, 3, 4).transpose(0, 2)[1:],
    lambda m: m.arange(2.0).reshape(1, 2).unfold(0, 1, 1),
    lambda m: m.arange(0.0).reshape(0, 3).t(),
]


@pytest.mark.parametrize("make", CLONE_INPUTS)
def test_clone_copies_and_preserves_dense_layouts(make):
    e, t = make(ember), make(torch)
    ce, ct = e.clone(), t.clone()
    assert_same(ce, ct, check_stride=True)
    if e.numel():
        assert ce.untyped_storage().data_ptr() != e.untyped_storage().data_ptr()
    assert_same(e.clone(memory_format=ember.contiguous_format),
                t.clone(memory_format=torch.contiguous_format), check_stride=True)
    cm = e.to("meta").clone()
    assert cm.stride() == t.to("meta").clone().stride()


@pytest.mark.parametrize("make", CLONE_INPUTS)
def test_contiguous_copies_only_when_needed(make):
    e, t = make(ember), make(torch)
    ce, ct = e.contiguous(), t.contiguous()
    assert_same(ce, ct, check_stride=True)
    assert (ce is e) == (ct is t)


def test_clone_and_contiguous_gradients():
    check_op(lambda x: x.t().clone() * 3, lambda x: x.t().clone() * 3, rand_array((2, 3),
                                                                                    np.float64))
    check_op(lambda x: x.t().contiguous().view(-1), lambda x: x.t().contiguous().view(-1),
             rand_array((2, 3), np.float64))
    check_grads(lambda x: x.transpose(0, 1).contiguous() * x.t(), rand_array((2, 3)))
    e = ember.ones(2, requires_grad=True).clone()
    assert type(e.grad_fn).__name__ == "CloneBackward0"


# --- copy_ ------------------------------------------------------------------------------------

def test_copy_broadcasts_and_casts():
    for dst, src in [(lambda m: m.zeros(2, 3), lambda m: m.arange(3)),
                     (lambda m: m.zeros(2, 3, dtype=m.int32), lambda m: m.tensor([[1.7], [-2.7]])),
                     (lambda m: m.zeros(3, 2).t(), lambda m: m.arange(6.0).reshape(2, 3)),
                     (lambda m: m.zeros(3, dtype=m.float16), lambda m: m.tensor(
                         [1 + 2**-11 + 2**-30, 2.0, 3.0], dtype=m.float64)),
                     (lambda m: m.zeros(2, dtype=m.bool), lambda m: m.tensor([0.0, 0.5]))]:
        e, t = dst(ember), dst(torch)
        e.copy_(src(ember))
        t.copy_(src(torch))
        assert_same(e, t, check_stride=True)


def test_copy_into_views_writes_the_base():
    e, t = ember.zeros(3, 4), torch.zeros(3, 4)
    e[:, 1].copy_(ember.arange(3.0))
    t[:, 1].copy_(torch.arange(3.0))
    e.t()[2:].copy_(ember.ones(2, 3))
    t.t()[2:].copy_(torch.ones(2, 3))
    assert_same(e, t)


def test_copy_errors_and_version_counter():
    for bad in (lambda m: m.zeros(2).copy_(m.zeros(3)),
                lambda m: m.zeros(2, requires_grad=True).copy_(m.ones(2))):
        with pytest.raises(Exception) as err:
            bad(torch)
        with pytest.raises(err.type):
            bad(ember)
    x = ember.zeros(2)
    before = x._version
    x.copy_(ember.ones(2))
    assert x._version == before + 1


def test_copy_gradients():
    def fn(m):
        def f(a, b):
            out = a * 1
            out.copy_(b.t())
            return out * a
        return f

    check_op(fn(ember), fn(torch), rand_array((3, 2), np.float64), rand_array((2, 3), np.float64))


def test_element_bytes_for_every_dtype_after_conversion():
    x = ember.arange(10)
    for e, t in DTYPE_PAIRS:
        assert x.to(e).nbytes == torch.arange(10).to(t).nbytes == 10 * E2T[e].itemsize


def test_channels_last_contiguous_and_clone():
    for make in (lambda m: m.arange(24.0).reshape(1, 2, 3, 4), lambda m: m.ones(2, 3, 1, 1),
                 lambda m: m.arange(48.0).reshape(2, 3, 2, 4).permute(0, 2, 3, 1)):
        e = make(ember).contiguous(memory_format=ember.channels_last)
        t = make(torch).contiguous(memory_format=torch.channels_last)
        assert_same(e, t, check_stride=True)
        assert e.is_contiguous(memory_format=ember.channels_last)
        assert e.is_contiguous() == t.is_contiguous()
        assert_same(e.clone(), t.clone(), check_stride=True)
        assert e.contiguous(memory_format=ember.channels_last) is e


def test_resize_reuses_or_grows_storage_like_torch():
    for shape, new in [((6,), (2, 2)), ((4,), (3, 3)), ((2, 3), (6,))]:
        e = ember.arange(float(np.prod(shape))).reshape(shape).contiguous()
        t = torch.arange(float(np.prod(shape))).reshape(shape).contiguous()
        e.resize_(*new)
        t.resize_(*new)
        assert e.shape == t.shape and e.stride() == t.stride()
        n = min(np.prod(shape), np.prod(new))
        assert e.flatten()[:n].tolist() == t.flatten()[:n].tolist()
    with pytest.raises(RuntimeError, match="require grad"):
        ember.ones(2, requires_grad=True).resize_(3)


def test_out_with_empty_tensor_is_resized():
    out = ember.empty(0)
    ember.add(ember.ones(2, 2), 1, out=out)
    assert out.shape == (2, 2) and out.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_to_memory_format_channels_last_matches_torch():
    e = ember.ones(2, 3, 4, 5).to(memory_format=ember.channels_last)
    t = torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert e.stride() == t.stride()


# --- casts and requires_grad (issue 14): integer and bool results never require grad ------

CASTS = {
    "long": lambda L, x: x.long(), "int": lambda L, x: x.int(), "bool": lambda L, x: x.bool(),
    "byte": lambda L, x: x.byte(), "short": lambda L, x: x.short(),
    "to_int64": lambda L, x: x.to(L.int64), "to_py_int": lambda L, x: x.to(int),
    "to_py_bool": lambda L, x: x.to(bool), "to_cpu_int": lambda L, x: x.to("cpu", int),
    "to_dtype_kw_int": lambda L, x: x.to(dtype=int),
    "type_LongTensor": lambda L, x: x.type(L.LongTensor),
    "type_str": lambda L, x: x.type("torch.LongTensor"),
    "to_like_long": lambda L, x: x.to(L.zeros(1, dtype=L.long)),
    "double": lambda L, x: x.double(), "half": lambda L, x: x.half(),
    "bfloat16": lambda L, x: x.bfloat16(), "to_py_float": lambda L, x: x.to(float),
    "to_py_complex": lambda L, x: x.to(complex), "cfloat": lambda L, x: x.cfloat(),
    "type_DoubleTensor": lambda L, x: x.type(L.DoubleTensor),
    "float_same": lambda L, x: x.float(), "to_same": lambda L, x: x.to(L.float32),
    "nonleaf_long": lambda L, x: (x * 2).long(), "nonleaf_double": lambda L, x: (x * 2).double(),
}


def _cast_flags(L, name, src_dtype, grad=True):
    x = L.tensor([1.5, -2.0, 3.0], dtype=getattr(L, src_dtype), requires_grad=True)
    with L.set_grad_enabled(grad), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real
        y = CASTS[name](L, x)
    fn = y.grad_fn
    return (str(y.dtype).split(".")[1], y.requires_grad, y.is_leaf,
            None if fn is None else type(fn).__name__)


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("src", ["float32", "complex64"])
@pytest.mark.parametrize("name", list(CASTS))
def test_cast_requires_grad_and_node_like_torch(name, src, grad):
    assert _cast_flags(ember, name, src, grad) == _cast_flags(torch, name, src, grad)


def test_float_cast_keeps_graph_and_int_cast_cuts_it():
    x = ember.tensor([1.5, -2.0], requires_grad=True)
    assert x.long().requires_grad is False and x.long().grad_fn is None
    y = x.double()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * 3).sum().backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [3.0, 3.0]


def _message(call, L):
    try:
        call(L)
    except Exception as exc:  # noqa: BLE001 - compared with torch's below
        return type(exc), str(exc).splitlines()[0].split(" - got")[0]
    return None


REQUIRES_GRAD_ERRORS = {
    "method": lambda L: L.ones(2, dtype=L.long).requires_grad_(),
    "setter": lambda L: setattr(L.ones(2, dtype=L.int32), "requires_grad", True),
    "factory": lambda L: L.ones(2, dtype=L.long, requires_grad=True),
    "tensor": lambda L: L.tensor([1, 2], requires_grad=True),
    "bool_factory": lambda L: L.zeros(2, dtype=L.bool, requires_grad=True),
    "cast_then_method": lambda L: L.ones(2, requires_grad=True).long().requires_grad_(),
    "type_py_int": lambda L: L.ones(2).type(int),
    "type_number": lambda L: L.ones(2).type(3),
    "to_str_type": lambda L: L.ones(2).to(str),
    "to_list": lambda L: L.ones(2).to([1]),
}


@pytest.mark.parametrize("name", list(REQUIRES_GRAD_ERRORS))
def test_cast_and_requires_grad_errors_like_torch(name):
    call = REQUIRES_GRAD_ERRORS[name]
    expected = _message(call, torch)
    assert expected is not None
    assert _message(call, ember) == expected


@pytest.mark.parametrize("py, name", [(int, "int64"), (float, "float64"), (bool, "bool"),
                                      (complex, "complex128")])
def test_python_types_name_dtypes_like_torch(py, name):
    assert str(ember.ones(2, dtype=py).dtype) == str(torch.ones(2, dtype=py).dtype) \
        .replace("torch", "ember") == f"ember.{name}"
    assert ember.tensor([1], dtype=py).dtype is getattr(ember, name)
    assert ember.ones(2).to(py).dtype is getattr(ember, name)


# --- float8 ----------------------------------------------------------------------------------

FLOAT8 = [(ember.float8_e4m3fn, torch.float8_e4m3fn), (ember.float8_e5m2, torch.float8_e5m2)]
# ties to even at both formats' steps, subnormals, the largest finite values and beyond
F8_VALUES = [0.0, -0.0, 0.3, 1.0625, 1.1875, 17.0, 19.0, -2.7, 240.0, 448.0, 449.0, 464.0,
             1000.0, 57344.0, 61439.0, 61440.0, 1e5, 2.0**-10, 3 * 2.0**-10, 2.0**-17, 1e-9,
             float("inf"), float("-inf"), float("nan")]


def _bits(x):
    return x.view(torch.uint8 if isinstance(x, torch.Tensor) else ember.uint8).tolist()


@pytest.mark.parametrize("e8,t8", FLOAT8, ids=str)
@pytest.mark.parametrize("src", [ember.float32, ember.float64, ember.float16, ember.bfloat16,
                                 ember.int64, ember.int16, ember.bool], ids=str)
def test_to_float8_rounds_and_saturates_like_torch(e8, t8, src):
    # exact: one rounding (through float32, as c10 converts) and e4m3fn's saturation to 448
    vals = F8_VALUES if src.is_floating_point else [0, 3, -17, 300, 1000, 30000]
    e = ember.tensor(vals if src is not ember.bool else [True, False]).to(src)
    t = to_torch(e)
    assert _bits(e.to(e8)) == _bits(t.to(t8))
    assert _bits(ember.tensor(vals, dtype=e8)) == _bits(torch.tensor(vals, dtype=t8))
    for v in vals[-4:]:  # 0-d
        assert _bits(ember.tensor(v).to(src).to(e8)) == _bits(torch.tensor(v).to(E2T[src]).to(t8))


@pytest.mark.parametrize("e8,t8", FLOAT8, ids=str)
def test_from_float8_and_its_storage_ops_like_torch(e8, t8):
    bits = np.arange(256, dtype=np.uint8)  # every float8 value
    e, t = ember.tensor(bits).view(e8), torch.tensor(bits).view(t8)
    for d in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        assert_same(e.to(d), t.to(E2T[d]))
    finite = torch.isfinite(t.float())
    assert_same(e[ember.tensor(finite.numpy())].to(ember.int32), t[finite].to(torch.int32))
    assert _bits(e.to(ember.float8_e5m2 if e8 is ember.float8_e4m3fn else ember.float8_e4m3fn)
                 ) == _bits(t.to(torch.float8_e5m2 if t8 is torch.float8_e4m3fn
                                 else torch.float8_e4m3fn))
    assert _bits(ember.cat([e[:3], e[-2:]])) == _bits(torch.cat([t[:3], t[-2:]]))
    assert _bits(e.reshape(16, 16).T.contiguous()) == _bits(t.reshape(16, 16).T.contiguous())
    assert (e.element_size(), e.dtype.itemsize) == (t.element_size(), t.dtype.itemsize)
    small = ember.tensor([0.3, -2.7, 448.0], dtype=e8)
    assert str(small).replace("ember", "torch") == str(
        torch.tensor([0.3, -2.7, 448.0], dtype=t8))
    assert small.tolist() == torch.tensor([0.3, -2.7, 448.0], dtype=t8).tolist()
    assert str(ember.full((2,), 3.3, dtype=e8)) .replace("ember", "torch") == str(
        torch.full((2,), 3.3, dtype=t8))


@pytest.mark.parametrize("expr", [
    "q.copy_(q.t())", "q.copy_(q)", "q[1:].copy_(q[:-1])", "q.copy_(q[0])",
    "q.view(-1)[1:].copy_(q.view(-1)[:-1])", "q[0].copy_(q[1])", "q.copy_(q.view(3, 3))",
    "q[:, 0].copy_(q[:, 1])", "q.copy_(q.mT)"])
def test_copy_from_a_view_of_itself_as_torch(expr):
    # dense views that partly overlap the destination are refused; disjoint or identical
    # ones copy (torch leaves views that are not dense unchecked, in an order of its own)
    got = []
    for lib in (ember, torch):
        q = lib.arange(9.0).view(3, 3)
        try:
            eval(expr, {"q": q})
            got.append(q.tolist())
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]
