"""The convolution primitives: values and gradients against torch, gradients of gradients
by finite differences, low-precision dtypes and the meta device."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops import conv as C

from helpers import assert_same, check_grads, check_op, rand_array

TOL = {"rtol": 1e-4, "atol": 1e-5}


@pytest.mark.parametrize("kw", [
    {}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same"},
    {"stride": (1, 2), "padding": (2, 0), "dilation": (2, 1)},
], ids=str)
def test_conv2d_matches_torch(kw):
    check_op(lambda x, w, b: C.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
             rand_array((2, 4, 7, 6)), rand_array((6, 4 // kw.get("groups", 1), 3, 2), seed=1),
             rand_array((6,), seed=2), **TOL)


def test_conv1d_conv3d_and_transposed_match_torch():
    check_op(lambda x, w: C.conv1d(x, w, stride=3, padding=2),
             lambda x, w: TF.conv1d(x, w, stride=3, padding=2),
             rand_array((2, 3, 11)), rand_array((4, 3, 4), seed=1), **TOL)
    check_op(lambda x, w: C.conv3d(x, w, padding=1, groups=2),
             lambda x, w: TF.conv3d(x, w, padding=1, groups=2),
             rand_array((1, 4, 4, 3, 5)), rand_array((2, 2, 3, 2, 3), seed=1), **TOL)
    check_op(lambda x, w, b: C.conv_transpose1d(x, w, b, stride=2, output_padding=1,
                                                dilation=2),
             lambda x, w, b: TF.conv_transpose1d(x, w, b, stride=2, output_padding=1,
                                                 dilation=2),
             rand_array((2, 3, 5)), rand_array((3, 2, 3), seed=1), rand_array((2,), seed=2),
             **TOL)
    check_op(lambda x, w: C.conv_transpose3d(x, w, stride=(2, 1, 1), padding=1),
             lambda x, w: TF.conv_transpose3d(x, w, stride=(2, 1, 1), padding=1),
             rand_array((1, 2, 3, 3, 3)), rand_array((2, 3, 3, 3, 3), seed=1), **TOL)


def test_conv_double_backward_by_finite_differences():
    x0, w0 = rand_array((1, 2, 5, 4), np.float64), rand_array((3, 2, 2, 3), np.float64, seed=1)
    kw = {"stride": (2, 1), "padding": (1, 1), "dilation": (1, 2)}

    def grad_norms(x, w):
        # check_grads also calls this on plain tensors (finite differences).
        x, w = (t if t.requires_grad else t.requires_grad_() for t in (x, w))
        y = C.conv2d(x, w, **kw)
        gx, gw = ember.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw ** 3).sum()

    def by_x(x):
        return grad_norms(x, ember.tensor(w0).requires_grad_())

    check_grads(by_x, x0, rtol=1e-4, atol=1e-6)
    check_grads(lambda w: grad_norms(ember.tensor(x0).requires_grad_(), w), w0, rtol=1e-4,
                atol=1e-6)


def test_conv_transposed_double_backward_by_finite_differences():
    w0 = rand_array((2, 3, 3, 3), np.float64, seed=1)

    def f(x):
        w = ember.tensor(w0, requires_grad=True)
        y = C.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
        gw, = ember.autograd.grad((y ** 2).sum(), (w,), create_graph=True)
        return (gw * gw).sum()

    check_grads(f, rand_array((1, 2, 3, 2), np.float64), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float64])
def test_conv_dtypes_match_torch(dtype):
    from helpers import E2T

    x, w = rand_array((2, 3, 5, 5)), rand_array((4, 3, 3, 3), seed=1)
    out = C.conv2d(ember.tensor(x).to(dtype), ember.tensor(w).to(dtype), padding=1)
    ref = TF.conv2d(torch.tensor(x).to(E2T[dtype]), torch.tensor(w).to(E2T[dtype]), padding=1)
    tol = {ember.float64: 1e-10, ember.float16: 2e-3, ember.bfloat16: 2e-2}[dtype]
    assert_same(out, ref, rtol=tol, atol=tol * 4)


def test_conv_meta_shapes_match_torch():
    x = ember.empty(2, 4, 9, 8, device="meta")
    w = ember.empty(6, 2, 3, 3, device="meta")
    out = C.conv2d(x, w, stride=2, padding=1, groups=2)
    ref = TF.conv2d(torch.empty(2, 4, 9, 8, device="meta"), torch.empty(6, 2, 3, 3, device="meta"),
                    stride=2, padding=1, groups=2)
    assert out.is_meta and tuple(out.shape) == tuple(ref.shape)
    xt = ember.empty(2, 4, 5, 5, device="meta")
    out = C.conv_transpose2d(xt, ember.empty(4, 3, 3, 3, device="meta"), stride=2)
    assert tuple(out.shape) == (2, 3, 11, 11)


def test_conv_errors_match_torch():
    cases = [
        ((1, 3, 5, 5), (4, 2, 3, 3), {}),
        ((1, 4, 5, 5), (4, 2, 3, 3), {"groups": 2, "stride": (1, 1, 1)}),
        ((3, 5), (4, 3, 3, 3), {}),
    ]
    for xs, ws, kw in cases:
        with pytest.raises(RuntimeError) as ee:
            C.conv2d(ember.zeros(xs), ember.zeros(ws), **kw)
        with pytest.raises(RuntimeError) as et:
            TF.conv2d(torch.zeros(xs), torch.zeros(ws), **kw)
        assert str(ee.value) == str(et.value)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        C.conv2d(ember.zeros(1, 1, 3, 3), ember.zeros(1, 1, 2, 2, dtype=ember.float64))


_F32, _F64, _I64, _F16 = "float32", "float64", "int64", "float16"
# (dims, x (shape, dtype), weight (shape, dtype), bias (shape, dtype) or None, kwargs, transposed)
DTYPE_AND_BIAS_CASES = {
    "bias float64": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((3,), _F64), {}, False),
    "bias int64": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((3,), _I64), {}, False),
    "bias float16": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((3,), _F16), {}, False),
    "input float64, module float32": (2, ((1, 2, 5, 5), _F64), ((3, 2, 3, 3), _F32),
                                      ((3,), _F32), {}, False),
    "bias size": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((4,), _F32), {}, False),
    "bias 2-d": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((3, 1), _F32), {}, False),
    "bias 0-d": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), ((), _F32), {}, False),
    "bias dtype before channels": (2, ((1, 5, 5, 5), _F32), ((3, 2, 3, 3), _F32),
                                   ((3,), _F64), {}, False),
    "channels before bias size": (2, ((1, 5, 5, 5), _F32), ((3, 2, 3, 3), _F32),
                                  ((4,), _F32), {}, False),
    "weight float64": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F64), None, {}, False),
    "weight int64, 1-d": (1, ((1, 2, 5), _F32), ((3, 2, 3), _I64), None, {}, False),
    "bias size, 3-d": (3, ((1, 2, 4, 4, 4), _F32), ((3, 2, 2, 2, 2), _F32), ((4,), _F32), {},
                       False),
    "transposed bias size": (2, ((1, 2, 5, 5), _F32), ((2, 3, 3, 3), _F32), ((4,), _F32), {},
                             True),
    "transposed bias size, groups": (2, ((1, 4, 5, 5), _F32), ((4, 3, 3, 3), _F32),
                                     ((5,), _F32), {"groups": 2}, True),
    "transposed bias float64 (taken as float32)": (2, ((1, 2, 5, 5), _F32),
                                                  ((2, 3, 3, 3), _F32), ((3,), _F64), {}, True),
    "transposed 1-d bias int64": (1, ((1, 2, 5), _F32), ((2, 3, 3), _F32), ((3,), _I64), {},
                                  True),
    "transposed 3-d bias float64": (3, ((1, 2, 4, 4, 4), _F32), ((2, 3, 2, 2, 2), _F32),
                                    ((3,), _F64), {}, True),
    "transposed weight float64": (2, ((1, 2, 5, 5), _F32), ((2, 3, 3, 3), _F64), None, {},
                                  True),
    # where PyTorch runs oneDNN (grouped, batched, wide kernels, half inputs) the weight's
    # dtype is refused by oneDNN's operand check, in its words; always after the sizes
    "weight float64, grouped (oneDNN)": (2, ((1, 4, 5, 5), _F32), ((4, 1, 3, 3), _F64), None,
                                         {"groups": 4}, False),
    "weight float64, batch of 2 (oneDNN)": (2, ((2, 2, 5, 5), _F32), ((3, 2, 3, 3), _F64),
                                            None, {}, False),
    "weight float64, 1-d strided (oneDNN)": (1, ((1, 2, 5), _F32), ((3, 2, 3), _F64), None,
                                             {"stride": 2}, False),
    "weight float32, half input (oneDNN)": (2, ((1, 2, 5, 5), _F16), ((3, 2, 3, 3), _F32),
                                            None, {}, False),
    "weight float64, 3-d wide kernel (oneDNN)": (3, ((1, 2, 5, 5, 5), _F32),
                                                 ((3, 2, 4, 4, 4), _F64), None, {}, False),
    "transposed bias float64 (oneDNN)": (2, ((2, 2, 5, 5), _F32), ((2, 3, 3, 3), _F32),
                                         ((3,), _F64), {}, True),
    "transposed weight float64 (oneDNN)": (2, ((2, 2, 5, 5), _F32), ((2, 3, 3, 3), _F64),
                                           None, {}, True),
    "channels before weight dtype": (2, ((1, 5, 5, 5), _F32), ((3, 2, 3, 3), _F64), None, {},
                                     False),
    "kernel size before weight dtype": (2, ((1, 2, 2, 2), _F32), ((3, 2, 3, 3), _F64), None,
                                        {}, False),
    "groups before weight dtype": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F64), None,
                                   {"groups": 0}, False),
    "output padding before weight dtype": (2, ((1, 2, 5, 5), _F32), ((2, 3, 3, 3), _F64),
                                           None, {"output_padding": 2}, True),
    "same padding strided": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), None,
                             {"padding": "same", "stride": 2}, False),
    "same padding strided before channels": (2, ((1, 5, 5, 5), _F32), ((3, 2, 3, 3), _F32),
                                             None, {"padding": "same", "stride": 2}, False),
    "unknown padding string": (2, ((1, 2, 5, 5), _F32), ((3, 2, 3, 3), _F32), None,
                               {"padding": "full"}, False),
}


def _small_ints(lib, shape, dtype: str, k: int):
    return lib.arange(float(np.prod(shape, dtype=int))).reshape(shape).remainder(k).to(
        getattr(lib, dtype))


@pytest.mark.parametrize("name", list(DTYPE_AND_BIAS_CASES))
def test_dtype_and_bias_checks_are_torchs(name):
    """Each case raises PyTorch's error (its message, in PyTorch's order of checks) or, where
    PyTorch runs it, gives its result dtype and values."""
    nd, (xs, xd), (ws, wd), bias, kw, transposed = DTYPE_AND_BIAS_CASES[name]
    outs = []
    for lib in (torch, ember):
        f = getattr(lib.nn.functional, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
        args = [_small_ints(lib, xs, xd, 3), _small_ints(lib, ws, wd, 2)] + (
            [_small_ints(lib, *bias, 5)] if bias else [])
        try:
            outs.append(f(*args, **kw))
        except RuntimeError as e:
            outs.append(str(e))
    if isinstance(outs[0], str):
        assert outs[1] == outs[0]
    else:  # small integers in float32: every product and sum is exact
        assert str(outs[1].dtype).split(".")[1] == str(outs[0].dtype).split(".")[1]
        np.testing.assert_array_equal(outs[1].numpy(), outs[0].numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "bool"])
def test_transposed_convolution_refuses_small_integers_as_torch(nd, dtype):
    """ATen's transposed kernels exist for floating, complex and int64 only."""
    msgs = []
    for lib in (torch, ember):
        x = lib.ones((1, 2) + (4,) * nd, dtype=getattr(lib, dtype))
        w = lib.ones((2, 2) + (3,) * nd, dtype=getattr(lib, dtype))
        with pytest.raises(NotImplementedError) as info:
            getattr(lib.nn.functional, f"conv_transpose{nd}d")(x, w)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


# --- the bias: one convolution node, as PyTorch's ------------------------------------------

def _node_shape(lib, fn, x, w, b, needs):
    """The output's node name and, per edge, the name of the node it leads to (or None)."""
    args = [None if a is None else lib.tensor(a).requires_grad_(need)
            for a, need in zip((x, w, b), needs)]
    out = fn(lib, *args)
    edges = [None if n is None else n.name().rpartition("::")[2]
             for n, _ in out.grad_fn.next_functions]
    return out.grad_fn.name(), edges


BIAS_FNS = {
    "conv1d": (lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, padding=1), (2, 3, 7),
               (4, 3, 3)),
    "conv2d": (lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=2), (2, 3, 7, 6),
               (4, 3, 3, 2)),
    "conv3d": (lambda L, x, w, b: L.nn.functional.conv3d(x, w, b), (1, 2, 4, 4, 3),
               (3, 2, 2, 2, 2)),
    "conv_transpose1d": (lambda L, x, w, b: L.nn.functional.conv_transpose1d(x, w, b, stride=2),
                         (2, 3, 5), (3, 4, 3)),
    "conv_transpose2d": (lambda L, x, w, b: L.nn.functional.conv_transpose2d(x, w, b),
                         (2, 3, 5, 4), (3, 4, 3, 3)),
}


@pytest.mark.parametrize("bias,needs", [
    (True, (True, True, True)), (True, (False, True, True)), (True, (False, False, True)),
    (True, (True, False, False)), (False, (True, True, False)), (False, (False, True, False)),
    (False, (True, False, False))], ids=str)
@pytest.mark.parametrize("name", list(BIAS_FNS))
def test_convolution_is_one_node_with_a_bias_edge(name, bias, needs):
    """PyTorch's ConvolutionBackward0 has three edges (input, weight, bias), a missing bias's
    edge empty; a transposed convolution is the same node."""
    fn, xs, ws = BIAS_FNS[name]
    x, w = rand_array(xs), rand_array(ws, seed=1)
    channels = ws[1] if "transpose" in name else ws[0]
    b = rand_array((channels,), seed=2) if bias else None
    got = _node_shape(ember, fn, x, w, b, needs)
    assert got == _node_shape(torch, fn, x, w, b, needs)
    assert got[0] == "ConvolutionBackward0" and len(got[1]) == 3


@pytest.mark.parametrize("needs", [(True, True, True), (False, False, True),
                                   (True, False, True)], ids=str)
@pytest.mark.parametrize("name", list(BIAS_FNS))
def test_bias_gradients_and_what_the_node_keeps(name, needs):
    """The gradients of each operand that requires one, against torch; the node keeps the
    input and the weight whatever needs a gradient (an in-place write to either after the
    call makes backward raise, in both), and never the bias (writing to it is harmless)."""
    fn, xs, ws = BIAS_FNS[name]
    channels = ws[1] if "transpose" in name else ws[0]
    arrays = rand_array(xs), rand_array(ws, seed=1), rand_array((channels,), seed=2)
    gy = None

    def run(lib, write):
        leaves = [lib.tensor(a).requires_grad_(n) for a, n in zip(arrays, needs)]
        args = [t.clone() for t in leaves]  # (not leaves: each may be written in place)
        out = fn(lib, *args)
        with lib.no_grad():
            args[write].mul_(2)
        try:
            out.backward(lib.tensor(gy))
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            return "raised"
        return [None if t.grad is None else t.grad.numpy() for t in leaves]

    gy = rand_array(tuple(fn(torch, *(torch.tensor(a) for a in arrays)).shape), seed=3)
    for write in (0, 1, 2):
        got, want = run(ember, write), run(torch, write)
        assert (got == "raised") == (want == "raised") and (write == 2) == (want != "raised")
        if want != "raised":
            for g, t in zip(got, want):
                assert (g is None) == (t is None)
                if t is not None:
                    np.testing.assert_allclose(g, t, **TOL)


@pytest.mark.parametrize("dims", [(0, None, None), (None, 0, None), (None, None, 0),
                                  (0, 0, 0), (1, None, 0)], ids=str)
def test_vmap_and_jvp_with_a_bias(dims):
    """vmap over any of input, weight and bias (a batched bias alone gives B results of one
    convolution), and forward mode with a bias tangent, against torch.func."""
    B = 3
    base = [(2, 4, 6, 5), (6, 2, 3, 3), (6,)]
    arrays = []
    for i, (shape, d) in enumerate(zip(base, dims)):
        if d is not None:
            shape = shape[:d] + (B,) + shape[d:]
        arrays.append(rand_array(shape, seed=i))

    def f(lib):
        return lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1, groups=2)

    got = ember.func.vmap(f(ember), in_dims=dims)(*(ember.tensor(a) for a in arrays))
    want = torch.func.vmap(f(torch), in_dims=dims)(*(torch.tensor(a) for a in arrays))
    np.testing.assert_allclose(got.numpy(), want.numpy(), **TOL)
    x, w, b = (rand_array(s, seed=i) for i, s in enumerate(base))
    tangents = [rand_array(s, seed=10 + i) for i, s in enumerate(base)]
    for lib in (ember, torch):
        out, t = lib.func.jvp(f(lib), tuple(lib.tensor(a) for a in (x, w, b)),
                              tuple(lib.tensor(a) for a in tangents))
        if lib is ember:
            mine = (out.numpy(), t.numpy())
    np.testing.assert_allclose(mine[0], out.numpy(), **TOL)
    np.testing.assert_allclose(mine[1], t.numpy(), **TOL)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("case", [
    ("conv1d", (2, 3, 9), (4, 3, 3), True, {"stride": 2, "padding": 1}),
    ("conv2d", (2, 2, 6, 5), (3, 2, 3, 2), True, {"padding": "same"}),
    ("conv2d", (2, 6, 5), (3, 2, 3, 3), False, {}),  # (unbatched)
    ("conv3d", (1, 2, 4, 4, 4), (2, 2, 2, 2, 2), True, {"dilation": 2}),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), True, {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 3, 3), False, {"stride": 2}),
    ("conv_transpose2d", (2, 4, 4), (2, 3, 3, 3), True, {}),  # (unbatched)
], ids=lambda c: c[0] + str(len(c[1])) if isinstance(c, tuple) else None)
def test_complex_convolutions_match_torchs_three_real_ones(dtype, case):
    name, xs, ws, with_bias, kw = case
    out_ch = ws[1] if name.startswith("conv_transpose") else ws[0]
    arrays = [rand_array(xs, dtype), rand_array(ws, dtype, seed=1)]
    if with_bias:
        arrays.append(rand_array((out_ch,), dtype, seed=2))
    e, t = check_op(lambda *a: getattr(C, name)(*a, **kw), lambda *a: getattr(TF, name)(*a, **kw),
                    *arrays, rtol=1e-4, atol=1e-5)
    # PyTorch's complex path is a composite: a - b + i (c - a - b) of real convolutions,
    # whose last node is an add (a squeeze for an unbatched input)
    assert e.grad_fn.name() == t.grad_fn.name()


def test_a_call_like_a_checked_one_still_refuses_what_differs():
    """A call whose checks one like it passed reuses its geometry (`_checked`); anything
    the checks read that differs (dtypes, shapes, layouts, parameter types, autocast) takes
    the checks again, in torch's words; results and nodes are the same either way."""
    def both(f):
        outs = []
        for L in (ember, torch):
            x = L.tensor(rand_array((2, 4, 7, 6)), requires_grad=True)
            w = L.tensor(rand_array((6, 4, 3, 3), seed=1))
            try:
                outs.append(f(L, x, w))
            except Exception as e:  # (the refusals are compared)
                outs.append((type(e), str(e).split("\n")[0]))
        return outs

    first = both(lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2, 1))
    again = both(lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2, 1))
    for a, b in (first, again):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    C._checked.clear()
    assert_same(*both(lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2, 1)))
    assert C._checked  # (that call was kept)
    calls = [lambda L, x, w: L.nn.functional.conv2d(x, w.double(), None, 2, 1),
             lambda L, x, w: L.nn.functional.conv2d(x, w[:, :3], None, 2, 1),
             lambda L, x, w: L.nn.functional.conv2d(x, w, None, (2, 2), -1),
             lambda L, x, w: L.nn.functional.conv2d(x, w, L.ones(5), 2, 1),
             lambda L, x, w: tuple(L.nn.functional.conv2d(x[0], w, None, 2, 1).shape),
             lambda L, x, w: L.nn.functional.conv2d(
                 x.contiguous(memory_format=L.channels_last), w, None, 2, 1).stride()]
    for call in calls:
        e, t = both(call)
        assert e == t, (e, t)
    # (a float stride: a TypeError, whose first line ember words otherwise: not the cache's)
    e, t = both(lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2.0, 1))
    assert e[0] is t[0] is TypeError
