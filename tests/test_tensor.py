"""The Tensor itself against torch: metadata, storage sharing, conversions, DLPack."""

import numpy as np
import pytest
import torch

import ember
from ember import _names

from helpers import DTYPE_PAIRS, E2T, assert_same, same_message, to_torch

# --- metadata ------------------------------------------------------------------------------


def test_shape_size_dim_numel():
    e, t = ember.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    assert isinstance(e.shape, ember.Size) and isinstance(e.shape, tuple)
    assert e.shape == t.shape and e.size() == t.size()
    assert repr(e.shape) == repr(t.shape).replace("torch.", f"{_names.prefix}.")
    assert e.size(1) == t.size(1) and e.size(-1) == t.size(-1)
    assert (e.dim(), e.ndim, e.numel(), e.nelement()) == (t.dim(), t.ndim, t.numel(), t.nelement())
    assert e.shape[1:] == ember.Size([3, 4]) and isinstance(e.shape[1:], ember.Size)
    assert e.shape.numel() == t.shape.numel()
    with pytest.raises(IndexError):
        e.size(3)
    assert ember.zeros(()).shape == () and ember.zeros(()).numel() == 1


def test_strides_offsets_contiguity_follow_torch():
    e, t = ember.arange(24).reshape(2, 3, 4), torch.arange(24).reshape(2, 3, 4)
    for fe, ft in [(e, t), (e[1:, ::2], t[1:, ::2]), (e.transpose(0, 2), t.transpose(0, 2)),
                   (e[:, :1], t[:, :1]), (e[1, 2], t[1, 2])]:
        assert fe.stride() == ft.stride()
        assert fe.storage_offset() == ft.storage_offset()
        assert fe.is_contiguous() == ft.is_contiguous()
        if fe.ndim:
            assert fe.stride(-1) == ft.stride(-1)


@pytest.mark.parametrize("e,t", DTYPE_PAIRS, ids=str)
def test_bytes_per_element_for_every_dtype(e, t):
    a, b = ember.zeros(3, 5, dtype=e), torch.zeros(3, 5, dtype=t)
    assert a.element_size() == b.element_size() and a.itemsize == b.itemsize
    assert a.nbytes == b.nbytes == a.numel() * a.element_size()
    assert a[:, 1:].nbytes == b[:, 1:].nbytes
    assert a.untyped_storage().nbytes() == b.untyped_storage().nbytes()


def test_views_share_storage_and_report_offsets_in_data_ptr():
    e, t = ember.zeros(4, 3), torch.zeros(4, 3)
    for fe, ft in [(e[1:], t[1:]), (e.t(), t.t()), (e[2, 1:], t[2, 1:]), (e.view(-1), t.view(-1))]:
        assert fe.untyped_storage().data_ptr() == e.untyped_storage().data_ptr()
        assert fe.data_ptr() - e.data_ptr() == ft.data_ptr() - t.data_ptr()
    assert e.clone().untyped_storage().data_ptr() != e.untyped_storage().data_ptr()
    assert ember.zeros(0).data_ptr() == torch.zeros(0).data_ptr() == 0


def test_views_see_writes_to_their_base():
    base = ember.zeros(3, 4)
    view = base.t()[1:]
    base.numpy()[1, 2] = 5.0
    assert view[1, 1].item() == 5.0
    view.numpy()[0, 0] = 7.0
    assert base[0, 1].item() == 7.0


# --- conversions -----------------------------------------------------------------------------


def test_numpy_shares_memory_and_keeps_strides():
    e = ember.arange(6.0).reshape(2, 3)
    a = e.numpy()
    a[0, 0] = 10
    assert e[0, 0].item() == 10
    at = e.t().numpy()
    assert at.strides == torch.arange(6.0).reshape(2, 3).t().numpy().strides
    assert np.shares_memory(at, a)


def test_numpy_refuses_tensors_that_require_grad():
    e, t = ember.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as err_t:
        t.numpy()
    with pytest.raises(RuntimeError) as err_e:
        e.numpy()
    assert str(err_e.value) == str(err_t.value)
    with pytest.raises(RuntimeError):
        np.asarray(e)
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    np.testing.assert_array_equal(e.numpy(force=True), t.numpy(force=True))
    # with grad mode off there is no graph to lose: PyTorch shares the memory (as
    # custom-op kernels written in NumPy rely on); so do np.asarray and inference_mode
    for lib, x in ((ember, e), (torch, t)):
        with lib.no_grad():
            assert np.shares_memory(x.numpy(), np.asarray(x))
        with lib.inference_mode():
            assert x.numpy().tolist() == [1.0, 1.0]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's __array__ lacks copy=
def test_array_protocol():
    e, t = ember.arange(4).reshape(2, 2), torch.arange(4).reshape(2, 2)
    np.testing.assert_array_equal(np.asarray(e), np.asarray(t))
    assert np.array(e, dtype=np.float32).dtype == np.array(t, dtype=np.float32).dtype
    assert np.shares_memory(np.asarray(e), e.numpy())


@pytest.mark.parametrize("e,t", DTYPE_PAIRS, ids=str)
def test_tolist_and_item_for_every_dtype(e, t):
    values = [[1.5, -2.0], [0.0, 3.25]] if (e.is_floating_point or e.is_complex) else [[1, 0],
                                                                                       [0, 1]]
    a, b = ember.tensor(values).to(e), torch.tensor(values).to(t)
    assert a.tolist() == b.tolist()
    assert a[0, 0].tolist() == b[0, 0].tolist()
    assert a[1, 1].item() == b[1, 1].item()
    assert type(a[1, 1].item()) is type(b[1, 1].item())


def test_item_errors():
    for bad in ([1, 2], []):
        with pytest.raises(RuntimeError):
            torch.tensor(bad).item()
        with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
            ember.tensor(bad).item()
    assert ember.tensor([[3]]).item() == 3


def test_python_number_conversions():
    for value in (2.7, -2.7, 0.0, 3):
        e, t = ember.tensor(value), torch.tensor(value)
        assert int(e) == int(t) and float(e) == float(t) and bool(e) == bool(t)
        assert complex(e) == complex(t)
    assert [10, 20, 30][ember.tensor(1)] == 20
    for bad in (lambda m: bool(m.tensor([1, 2])), lambda m: bool(m.tensor([])),
                lambda m: int(m.tensor([1, 2])), lambda m: float(m.tensor(1 + 1j)),
                lambda m: [1, 2][m.tensor(1.0)]):
        with pytest.raises(Exception) as err_t:
            bad(torch)
        with pytest.raises(err_t.type):
            bad(ember)


def test_len_and_iteration():
    e, t = ember.arange(6).reshape(3, 2), torch.arange(6).reshape(3, 2)
    assert len(e) == len(t) == 3
    rows = list(e)
    assert len(rows) == 3
    for re, rt in zip(rows, t):
        assert_same(re, rt)
    assert rows[1].untyped_storage().data_ptr() == e.untyped_storage().data_ptr()
    for bad in (len, iter):
        with pytest.raises(TypeError):
            bad(torch.tensor(1))
        with pytest.raises(TypeError):
            bad(ember.tensor(1))


# --- DLPack ------------------------------------------------------------------------------------

DLPACK_DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64,
                 ember.int8, ember.uint8, ember.bool, ember.complex64]


def _samples(dtype):
    base = ember.arange(12).reshape(3, 4).to(dtype)
    return [base, base.t(), base[1:, ::2], base[1, 1], base[:0]]


@pytest.mark.parametrize("dtype", DLPACK_DTYPES, ids=str)
def test_torch_reads_ember_tensors_through_dlpack_without_copying(dtype):
    for e in _samples(dtype):
        t = torch.from_dlpack(e)
        assert t.dtype == E2T[dtype] and t.shape == e.shape and t.stride() == e.stride()
        assert_same(e, t)
        if e.numel():
            assert t.data_ptr() == e.data_ptr()


@pytest.mark.parametrize("dtype", DLPACK_DTYPES, ids=str)
def test_ember_reads_torch_tensors_through_dlpack_without_copying(dtype):
    base = torch.arange(12).reshape(3, 4).to(E2T[dtype])
    for t in (base, base.t(), base[1:, ::2], base[1, 1]):
        e = ember.from_dlpack(t)
        assert e.dtype is dtype and e.stride() == t.stride()
        assert_same(e, t)
        assert e.data_ptr() == t.data_ptr()


def test_dlpack_with_numpy_both_ways_shares_memory():
    a = np.zeros(3)
    e = ember.from_dlpack(a)
    e.numpy()[2] = 9
    assert a[2] == 9
    b = np.from_dlpack(ember.ones(2, 3).t())
    assert b.shape == (3, 2) and b.flags.writeable
    e2 = ember.zeros(3)
    np.from_dlpack(e2)[0] = 1
    assert e2[0].item() == 1


def test_dlpack_writes_are_shared_with_torch():
    e = ember.zeros(3)
    torch.from_dlpack(e)[0] = 5
    assert e.tolist() == [5.0, 0.0, 0.0]
    t = torch.zeros(3, dtype=torch.bfloat16)
    ember.from_dlpack(t).numpy()[1] = 7
    assert t.tolist() == [0.0, 7.0, 0.0]


def test_dlpack_refuses_tensors_that_require_grad():
    msgs = []
    for lib in (torch, ember):  # both raise BufferError, as the DLPack protocol asks
        with pytest.raises(BufferError) as err:
            torch.from_dlpack(lib.ones(2, requires_grad=True))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
    assert ember.ones(1).__dlpack_device__() == tuple(torch.ones(1).__dlpack_device__())


def test_to_torch_helper_roundtrip_of_every_dtype():
    for e, t in DTYPE_PAIRS:
        x = ember.ones(2, dtype=e)
        assert to_torch(x).dtype == t


# --- operators ------------------------------------------------------------------------------

OPERATORS = [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a**b, lambda a, b: a == b,
    lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b,
    lambda a, b: a >= b,
]


@pytest.mark.parametrize("op", OPERATORS)
def test_operators_broadcast_and_promote_like_torch(op):
    a = np.arange(1, 7, dtype=np.int64).reshape(2, 3)
    b = np.array([1.5, 2.0, 3.0], dtype=np.float32)
    for x, y in [(a, b), (b, a), (a, a[:1]), (b[:, None], b)]:
        assert_same(op(ember.tensor(x), ember.tensor(y)), op(torch.tensor(x), torch.tensor(y)))
    for scalar in (2, 2.5, True):
        for fn in (lambda m, s=scalar: op(m.tensor(a), s),
                   lambda m, s=scalar: op(s, m.tensor(b))):
            try:
                want = fn(torch)
            except RuntimeError:  # e.g. subtracting a bool
                with pytest.raises(RuntimeError):
                    fn(ember)
                continue
            assert_same(fn(ember), want)


def test_unary_matmul_and_in_place_operators():
    x = np.arange(6.0).reshape(2, 3)
    e, t = ember.tensor(x), torch.tensor(x)
    assert_same(-e, -t)
    assert_same(e @ e.t(), t @ t.t())
    assert_same(e @ ember.ones(3, dtype=ember.float64), t @ torch.ones(3, dtype=torch.float64))
    view_e, view_t = e[:, 1], t[:, 1]
    view_e += 1
    view_t += 1
    e *= 2
    t *= 2
    assert_same(e, t)
    with pytest.raises(RuntimeError):
        i = torch.arange(3)
        i += 1.5
    with pytest.raises(RuntimeError):
        i = ember.arange(3)
        i += 1.5


def test_broadcast_failure_names_both_sizes():
    with pytest.raises(RuntimeError) as err_t:
        torch.zeros(2, 3) + torch.zeros(4)
    with pytest.raises(RuntimeError) as err_e:
        ember.zeros(2, 3) + ember.zeros(4)
    assert str(err_e.value) == str(err_t.value)


_FLOAT_WARNING_CHILD = """
import json, sys, warnings
import {lib} as torch
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    int(torch.ones((), requires_grad=True))          # int() does not warn
    torch.ones((), requires_grad=True).item()        # nor .item()
    float(torch.ones(()))                            # nor float() without grad
    before = len(caught)
    float(torch.ones(3, requires_grad=True).sum())   # warns, once per process
    float(torch.ones((), requires_grad=True))
print(json.dumps([before] + [[w.category.__name__, str(w.message).split(" (Triggered")[0]]
                             for w in caught]))
"""


def test_float_of_a_tensor_that_requires_grad_warns_once_as_torch():
    import json

    from fresh_process import with_server

    def run(lib):  # (a fresh process each: the warning is once per process)
        out = with_server(lib).run_code(_FLOAT_WARNING_CHILD.format(lib=lib))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    got = run("ember")
    assert got == run("torch")
    assert got[0] == 0 and len(got) == 2 and got[1][0] == "UserWarning"


NUMPY_MIXES = {
    "sin": lambda m, t: np.sin(t), "greater": lambda m, t: np.greater(t, 0.5),
    "exp0": lambda m, t: np.exp(t[0]), "t+a": lambda m, t: t + np.ones(3),
    "a/t": lambda m, t: np.ones(3) / t, "t+a0": lambda m, t: t + np.array(1.5),
    "t==a": lambda m, t: t == np.array([1.0, 0.0, 1.0]), "a==t": lambda m, t: np.ones(3) == t,
    "t==a0": lambda m, t: t == np.array(1.0), "t+=a": lambda m, t: _iadd(t, np.ones(3)),
    "int+a": lambda m, t: t.long() + np.array([1, 2, 3]),
}


def _iadd(t, a):
    t = t.clone()
    t += a  # (NotImplemented in place: Python rebinds t to t + a)
    return t


@pytest.mark.parametrize("name", NUMPY_MIXES)
def test_numpy_arrays_and_ufuncs_with_tensors_give_tensors_as_torch(name):
    import warnings

    got = []
    for m in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (torch's __array_wrap__)
            r = NUMPY_MIXES[name](m, m.ones(3))
        got.append((type(r).__name__, str(r.dtype).split(".")[-1], r.tolist()))
    assert got[0] == got[1]


def test_tensor_ne_array_is_left_to_python_as_torch():
    assert (ember.ones(2) != np.ones(2)) is (torch.ones(2) != np.ones(2)) is True


def test_size_arithmetic_keeps_the_size_type_as_torch():
    for op in (lambda s: s * 2, lambda s: 2 * s, lambda s: s + (4,), lambda s: (1,) + s,
               lambda s: s[1:]):
        e, t = op(ember.ones(2, 3).shape), op(torch.ones(2, 3).shape)
        assert (type(e).__name__, tuple(e)) == (type(t).__name__, tuple(t))


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool", "complex64"])
def test_grad_of_another_dtype_or_size_is_refused_in_torchs_words(dtype):
    def assign(L, shape=(3,)):
        p = L.zeros(3, requires_grad=True)
        p.grad = L.zeros(shape, dtype=getattr(L, dtype))

    assert same_message(assign).startswith("attempting to assign a gradient with dtype")


def test_grad_of_another_size_is_refused_in_torchs_words():
    def assign(L):
        p = L.zeros(3, requires_grad=True)
        p.grad = L.zeros(4)

    assert same_message(assign).startswith("attempting to assign a gradient of size '[4]'")


@pytest.mark.parametrize("dim", [0, -1, 1, -2])
@pytest.mark.parametrize("what", ["size", "stride"])
def test_size_and_stride_of_a_0d_tensor_take_no_dim(what, dim):
    same_message(lambda L: getattr(L.zeros(()), what)(dim), IndexError)


@pytest.mark.parametrize("dim", [0.5, "1", (0,), True])
@pytest.mark.parametrize("what", ["size", "stride"])
def test_size_and_stride_refuse_a_dim_that_is_no_int_as_torchs_parser(what, dim):
    same_message(lambda L: getattr(L.ones(2, 3), what)(dim), TypeError)


@pytest.mark.parametrize("what", ["size", "stride"])
def test_size_and_stride_take_an_index_like_dim(what):
    import numpy as np

    for L in (torch, ember):
        t = L.ones(2, 3)
        assert getattr(t, what)(np.int64(1)) == getattr(t, what)(L.tensor(1)) == \
            getattr(t, what)(1)
