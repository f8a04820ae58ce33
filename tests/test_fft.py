"""ember.fft against torch.fft: values, dtypes and gradients of every transform, with `n` / `s`
trimming and padding, `dim`, each `norm`; the frequency helpers and shifts; PyTorch's errors.

Gradients go through check_op's random real cotangent (the real part of <out, c> for complex
outputs), so they test the adjoint transforms with torch's conventions for complex gradients.
"""

import numpy as np
import pytest
import torch

import ember
from ember import fft as E

from helpers import assert_same, check_grads, check_op, rand_array, same_error, same_message

T = torch.fft
F32 = {"rtol": 1e-4, "atol": 1e-5}


def arr(shape, complex_=False, dtype=np.float32):
    if complex_:
        return rand_array(shape, np.complex64 if dtype == np.float32 else np.complex128)
    return rand_array(shape, dtype)


@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
@pytest.mark.parametrize("n", [None, 5, 12, 20])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_one_dimensional(name, n, norm):
    x = arr((3, 8), complex_=name in ("fft", "ifft", "irfft", "hfft"))
    check_op(lambda a: getattr(E, name)(a, n=n, norm=norm),
             lambda a: getattr(T, name)(a, n=n, norm=norm), x, **F32)


@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft"])
def test_real_input_of_a_complex_transform_gets_real_gradients(name):
    check_op(lambda a: getattr(E, name)(a, dim=0), lambda a: getattr(T, name)(a, dim=0),
             arr((6, 3), dtype=np.float64))


@pytest.mark.parametrize("s,dim", [(None, None), ((3, 5), None), (None, (0, 2)),
                                   ((5, -1), (2, 0)), ((4,), (1,))], ids=str)
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_n_dimensional(name, s, dim):
    x = arr((2, 4, 6), complex_=name in ("fftn", "irfftn", "hfftn"), dtype=np.float64)
    kw = {} if dim is None else {"dim": dim}
    check_op(lambda a: getattr(E, name)(a, s=s, norm="ortho", **kw),
             lambda a: getattr(T, name)(a, s=s, norm="ortho", **kw), x)


@pytest.mark.parametrize("s", [None, (3, 7)], ids=str)
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_two_dimensional(name, s):
    x = arr((2, 4, 6), complex_=name in ("ifft2", "irfft2", "hfft2"))
    check_op(lambda a: getattr(E, name)(a, s=s), lambda a: getattr(T, name)(a, s=s), x, **F32)


@pytest.mark.parametrize("dtype,want", [(ember.float32, torch.complex64),
                                        (ember.float64, torch.complex128),
                                        (ember.int64, torch.complex64)], ids=str)
def test_result_dtypes(dtype, want):
    x = ember.arange(6).to(dtype)
    assert_same(E.fft(x), T.fft(torch.arange(6).to(want.to_real() if dtype._kind >= 2
                                                      else torch.int64)))
    assert E.rfft(x).dtype is {torch.complex64: ember.complex64,
                               torch.complex128: ember.complex128}[want]
    assert E.irfft(E.rfft(x)).dtype is E.rfft(x).dtype.to_real()


def test_round_trip_and_finite_differences():
    x = ember.tensor(rand_array((2, 9), np.float64))
    np.testing.assert_allclose(E.irfft(E.rfft(x), n=9).numpy(), x.numpy(), atol=1e-12)
    check_grads(lambda a: E.irfft(E.rfft(a) * (1 + 0.5j), n=9) ** 2, rand_array((9,), np.float64))
    check_grads(lambda a: E.fft2(a).abs(), rand_array((3, 4), np.float64, seed=2))


def test_double_backward():
    xe = ember.tensor(rand_array((6,), np.float64), requires_grad=True)
    xt = torch.tensor(xe.detach().numpy(), requires_grad=True)
    for L, x in ((ember, xe), (torch, xt)):
        (g,) = L.autograd.grad(L.fft.rfft(x).abs().pow(2).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
    assert_same(xe.grad, xt.grad)


@pytest.mark.parametrize("d", [1.0, 0.1])
@pytest.mark.parametrize("n", [1, 6, 7])
def test_frequencies(n, d):
    assert_same(E.fftfreq(n, d), T.fftfreq(n, d), rtol=0, atol=0)
    assert_same(E.rfftfreq(n, d), T.rfftfreq(n, d), rtol=0, atol=0)
    assert_same(E.fftfreq(n, d, dtype=ember.float64), T.fftfreq(n, d, dtype=torch.float64),
                rtol=0, atol=0)


@pytest.mark.parametrize("dim", [None, 0, (1, 0), -1])
def test_shifts(dim):
    x = arr((5, 6))
    check_op(lambda a: E.fftshift(a, dim), lambda a: T.fftshift(a, dim), x)
    check_op(lambda a: E.ifftshift(a, dim), lambda a: T.ifftshift(a, dim), x)


@pytest.mark.parametrize("call", [
    lambda L: L.fft.fft(L.ones(4, dtype=L.float16)),
    lambda L: L.fft.fft(L.ones(4, dtype=L.bfloat16)),
    lambda L: L.fft.fft(L.ones(4), norm="bad"),
    lambda L: L.fft.fft(L.ones(4), n=0),
    lambda L: L.fft.irfft(L.ones(1, dtype=L.complex64)),
    lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)),
    lambda L: L.fft.fftn(L.ones(3, 4), s=(2,), dim=(0, 1)),
    lambda L: L.fft.fftn(L.ones(3, 4), dim=(0, -2)),
    lambda L: L.fft.fft(L.ones(4), dim=3),
    lambda L: L.fft.fft(L.tensor(1.0)),
], ids=["half", "bfloat16", "norm", "n0", "irfft-n0", "rfft-complex", "s-dim", "repeat-dim",
        "dim-range", "0-d"])
def test_errors(call):
    same_error(call)


@pytest.mark.parametrize("name", ["rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_real_transforms_refuse_complex_input_in_torch_words(name, dtype):
    # torch names the kernel that refuses: rfft2 says rfftn, ihfft2/ihfftn fail a dtype check
    same_message(lambda L: getattr(L.fft, name)(L.ones(2, 4, dtype=getattr(L, dtype))))


def test_reachable_as_torch_fft():
    assert ember.fft is E
    assert set(E.__all__) <= set(dir(T))


def test_meta_shapes_and_dtypes():
    e = E.irfft(E.rfft(ember.empty(3, 8, device="meta"), n=10), n=7)
    t = T.irfft(T.rfft(torch.empty(3, 8, device="meta"), n=10), n=7)
    assert e.shape == t.shape and str(e.dtype) == str(t.dtype).replace("torch", "ember")


def _strided_pair(shape, perm):
    """The same values in torch and ember, laid out densely in the dim order `perm`."""
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    base = np.ascontiguousarray(a.transpose(perm))
    back = tuple(int(i) for i in np.argsort(perm))
    return torch.tensor(base).permute(*back), ember.tensor(base).permute(*back)


LAYOUT_CALLS = {
    "fft last": lambda L, x: L.fft.fft(x),
    "fft dim1": lambda L, x: L.fft.fft(x, dim=1),
    "ifft": lambda L, x: L.fft.ifft(x, dim=2),
    "fft2": lambda L, x: L.fft.fft2(x),
    "ifft2 complex": lambda L, x: L.fft.ifft2(x.to(L.complex64)),
    "fftn": lambda L, x: L.fft.fftn(x),
    "fftn dims": lambda L, x: L.fft.fftn(x, dim=(0, 2)),
    "rfft dim1": lambda L, x: L.fft.rfft(x, dim=1),
    "rfft2": lambda L, x: L.fft.rfft2(x),
    "rfft2 s": lambda L, x: L.fft.rfft2(x, s=(4, 4)),
    "rfftn dims": lambda L, x: L.fft.rfftn(x, dim=(1, 2)),
    "irfft2": lambda L, x: L.fft.irfft2(x.to(L.complex64)),
    "irfftn": lambda L, x: L.fft.irfftn(x.to(L.complex64), dim=(0, 1, 3)),
    "hfft": lambda L, x: L.fft.hfft(x.to(L.complex64)),
    "hfft2": lambda L, x: L.fft.hfft2(x.to(L.complex64)),
    "ihfft": lambda L, x: L.fft.ihfft(x, dim=1),
    "ihfft2": lambda L, x: L.fft.ihfft2(x),
    "ihfftn": lambda L, x: L.fft.ihfftn(x, dim=(1, 2, 3)),
}


@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (0, 2, 3, 1), (0, 1, 3, 2), (3, 1, 0, 2)],
                         ids=str)
@pytest.mark.parametrize("name", list(LAYOUT_CALLS))
def test_result_layout_node_and_values_follow_torch(name, perm):
    # torch's CPU transforms lay their results out by the input's strides: batch dims by
    # decreasing stride, then the transformed dims in the order they run
    tx, ex = _strided_pair((2, 3, 6, 5), perm)
    want, got = LAYOUT_CALLS[name](torch, tx), LAYOUT_CALLS[name](ember, ex)
    assert got.shape == want.shape and got.stride() == want.stride()
    # (pocketfft and torch's kernels round differently: float32 ulps, not bit for bit)
    np.testing.assert_allclose(got.resolve_conj().numpy(), want.resolve_conj().numpy(),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,want", [("fft", ("FftR2CBackward0", "AccumulateGrad")),
                                       ("ifft", ("ConjBackward0", "FftR2CBackward0")),
                                       ("fft2", ("FftC2CBackward0", "ToCopyBackward0")),
                                       ("ihfft2", ("FftC2CBackward0", "ConjPhysicalBackward0")),
                                       ("ihfft", ("ConjBackward0", "FftR2CBackward0"))])
def test_real_input_nodes_are_torchs(name, want):
    x = ember.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    y = getattr(E, name)(x)
    assert (type(y.grad_fn).__name__, type(y.grad_fn.next_functions[0][0]).__name__) == want
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = getattr(T, name)(tx)
    assert (type(ty.grad_fn).__name__, type(ty.grad_fn.next_functions[0][0]).__name__) == want
    ty.abs().sum().backward()
    y.abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("args, kw", [((0,), {}), ((-1,), {}), ((-3,), {}), ((-5,), {}),
                                      ((4,), {"d": 0}), ((5,), {"d": 0.0}), ((1,), {"d": 0}),
                                      ((4,), {"d": -2.0}), ((7,), {"d": 0.3}),
                                      ((4,), {"dtype": "int64"}),
                                      ((4,), {"dtype": "complex64"})])
def test_frequency_ramps_at_their_edges_as_torch(name, args, kw):
    # n = 0 or d = 0 divide by zero (the zero frequency NaN), negative n counts by C's
    # division, integer and complex dtypes are refused in torch's words
    outs = []
    for lib in (ember, torch):
        k = {key: getattr(lib, v) if key == "dtype" else v for key, v in kw.items()}
        try:
            outs.append(getattr(lib.fft, name)(*args, **k))
        except (RuntimeError, NotImplementedError) as e:
            outs.append((type(e), str(e)))
    if isinstance(outs[1], tuple):
        assert outs[0] == outs[1]
    else:
        assert_same(outs[0], outs[1])


def _chain(y, depth=3):
    """Names of the first `depth` nodes along first inputs from y's grad_fn."""
    names, node = [], y.grad_fn
    while node is not None and len(names) < depth:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("call", [
    lambda m, t: m.fft.rfft(t, n=12), lambda m, t: m.fft.rfft(t, n=4),
    lambda m, t: m.fft.fft(t, n=9), lambda m, t: m.fft.fftn(t, s=(5, 8)),
    lambda m, t: m.fft.fftn(t, s=(2, 8)), lambda m, t: m.fft.rfft2(t, s=(6, 7)),
    lambda m, t: m.fft.irfft(m.fft.rfft(t), n=12),
    lambda m, t: m.fft.fft(t.to(m.complex64), n=10)],
    ids=["rfft_pad", "rfft_trim", "fft_pad", "fftn_pad", "fftn_trim_pad", "rfft2_pad",
         "irfft_pad", "fft_complex_pad"])
def test_resized_input_nodes_and_gradients_are_torchs(call):
    # zero-padding to n is one constant_pad_nd over every padded dim (trims are slices), so
    # grad_fn chains read as torch's; the gradient crops the pad back off
    a = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    tx, ex = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    ty, ey = call(torch, tx), call(ember, ex)
    assert _chain(ey) == _chain(ty)
    ty.abs().sum().backward()
    ey.abs().sum().backward()
    # (pocketfft and torch's kernels round differently: float32 ulps, not bit for bit)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("call", [
    lambda m, t: m.fft.hfft(t, n=14), lambda m, t: m.fft.hfft(t, n=6),
    lambda m, t: m.fft.hfft2(t), lambda m, t: m.fft.hfft2(t, s=(5, 12)),
    lambda m, t: m.fft.hfftn(t, s=(3, 5, 12)), lambda m, t: m.fft.hfftn(t, dim=(0, 2)),
    lambda m, t: m.fft.ihfft2(t.real, s=(5, 8)), lambda m, t: m.fft.ihfftn(t.real, s=(3, 2, 9)),
    lambda m, t: m.fft.hfft2(t.transpose(0, 2), norm="ortho"),
    lambda m, t: m.fft.ihfft2(t.real.transpose(1, 2), norm="forward")],
    ids=["hfft_pad", "hfft_trim", "hfft2", "hfft2_s", "hfftn_s", "hfftn_dims", "ihfft2_s",
         "ihfftn_s", "hfft2_strided", "ihfft2_strided"])
def test_hermitian_transforms_run_torchs_steps(call):
    # hfftn: resize, a forward c2c over all but the last dim, conj, c2r over the last;
    # ihfftn: resize, r2c over the last, conj_physical, c2c over the rest. The nodes, the
    # result's layout and (up to rounding) the values and gradients are torch's
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((3, 4, 6)) + 1j * rng.standard_normal((3, 4, 6))).astype(np.complex64)
    tx, ex = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    ty, ey = call(torch, tx), call(ember, ex)
    assert _chain(ey, 5) == _chain(ty, 5)
    assert ey.shape == ty.shape and ey.stride() == ty.stride()
    assert ey.dtype.is_complex == ty.dtype.is_complex and ey.element_size() == ty.element_size()
    ty.abs().sum().backward()
    ey.abs().sum().backward()
    # (pocketfft and torch's kernels round differently: float32 ulps, not bit for bit)
    np.testing.assert_allclose(ey.detach().resolve_conj().numpy(),
                               ty.detach().resolve_conj().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft",
                                  "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"])
@pytest.mark.parametrize("out_dtype", ["int64", "float32", "float64"])
def test_a_complex_result_refuses_a_real_out_with_torchs_words(name, out_dtype):
    same_message(lambda L: getattr(L.fft, name)(L.ones(4, 4),
                                               out=L.empty(0, dtype=getattr(L, out_dtype))))


@pytest.mark.parametrize("name", ["irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"])
@pytest.mark.parametrize("out_dtype", ["int64", "complex64", "bool"])
def test_a_real_result_refuses_a_complex_or_integer_out_with_torchs_words(name, out_dtype):
    same_message(lambda L: getattr(L.fft, name)(L.ones(4, 4, dtype=L.complex64),
                                               out=L.empty(0, dtype=getattr(L, out_dtype))))


def test_a_wider_out_is_written():
    for L in (ember, torch):
        o = L.empty(4, dtype=L.complex128)
        L.fft.fft(L.ones(4), out=o)
        assert o.tolist() == [4, 0, 0, 0]


@pytest.mark.parametrize("n", [1, 2, 4, 5, 8])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_a_real_signals_upper_half_is_the_conjugate_of_its_lower_half(name, n):
    # PyTorch runs a one-sided r2c and fills the rest with conjugates: where the lower half
    # has a zero imaginary part, the upper half has -0 (printed "0.-0.j").
    x = np.array([1.0, 2.0, 2.0, 1.0, 0.0, 3.0, 1.0, 1.0][:n], np.float32)
    for dtype in ("float32", "float64"):
        got = getattr(E, name)(ember.tensor(x, dtype=getattr(ember, dtype)))
        want = getattr(T, name)(torch.tensor(x, dtype=getattr(torch, dtype)))
        assert_same(got, want, rtol=1e-6, atol=1e-6)
        g, w = got.numpy(), want.resolve_conj().numpy()  # (torch: a conjugate view)
        zero = w.imag == 0
        np.testing.assert_array_equal(np.signbit(g.imag[zero]), np.signbit(w.imag[zero]))
    assert str(E.fft(ember.ones(4))) == str(T.fft(torch.ones(4)))
