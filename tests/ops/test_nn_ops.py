"""The nn-only primitives (embedding, nll_loss, constant_pad_nd, ctc_loss): meta shapes,
dtypes, and gradients of gradients."""

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops import nn_ops

from helpers import assert_same, check_grads, check_op, rand_array, same_message, same_result


def test_nll_loss_kdim_uint8_targets_and_meta():
    x = rand_array((2, 4, 3, 2))
    t = np.random.default_rng(0).integers(0, 4, size=(2, 3, 2))
    check_op(lambda a: ember.nn.functional.nll_loss(a[:, :, 0, 0], ember.tensor(t[:, 0, 0]
                                                                                .astype(np.uint8))),
             lambda a: TF.nll_loss(a[:, :, 0, 0], torch.tensor(t[:, 0, 0].astype(np.uint8))), x)
    for reduction in ("mean", "none"):
        check_op(lambda a, r=reduction: ember.nn.functional.nll_loss(a, ember.tensor(t),
                                                                      reduction=r),
                 lambda a, r=reduction: TF.nll_loss(a, torch.tensor(t), reduction=r), x)
    out = nn_ops.nll_loss_prim(ember.empty(5, 3, device="meta"),
                               ember.empty(5, dtype=ember.int64, device="meta"), None, "none",
                               -100)
    assert out.is_meta and tuple(out.shape) == (5,)


def test_nll_loss_all_ignored_is_nan_like_torch():
    x = rand_array((3, 2))
    e = ember.nn.functional.nll_loss(ember.tensor(x), ember.tensor([-100, -100, -100]))
    t = TF.nll_loss(torch.tensor(x), torch.tensor([-100, -100, -100]))
    assert_same(e, t)


def test_embedding_double_backward_and_meta():
    idx = ember.tensor([[0, 2], [2, 1]])

    def f(w):
        w = w if w.requires_grad else w.requires_grad_()
        y = nn_ops.embedding(w, idx, padding_idx=1)
        g, = ember.autograd.grad((y ** 3).sum(), w, create_graph=True)
        return g * w

    check_grads(f, rand_array((3, 2), np.float64))
    out = nn_ops.embedding(ember.empty(7, 3, device="meta"),
                           ember.empty(2, 5, dtype=ember.int64, device="meta"))
    assert out.is_meta and tuple(out.shape) == (2, 5, 3)


def test_constant_pad_grad_and_meta():
    check_grads(lambda a: nn_ops.constant_pad_nd(a, (1, -1, 2, 0), 3.0) ** 2,
                rand_array((3, 4), np.float64))
    out = nn_ops.constant_pad_nd(ember.empty(2, 3, device="meta"), (1, 2))
    assert out.is_meta and tuple(out.shape) == (2, 6)
    check_op(lambda a: nn_ops.constant_pad_nd(a.half(), (1, 1), 2.0),
             lambda a: TF.pad(a.half(), (1, 1), value=2.0), rand_array((2, 2)))


def test_ctc_unbatched_matches_torch():
    lp = torch.tensor(rand_array((5, 4))).log_softmax(1).numpy()
    check_op(lambda a: ember.nn.functional.ctc_loss(a, ember.tensor([1, 2]), ember.tensor(5),
                                                    ember.tensor(2)),
             lambda a: TF.ctc_loss(a, torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2)),
             lp, rtol=1e-4, atol=1e-5)


def test_embedding_gradient_sums_repeated_rows_like_torch():
    # Many lookups of few rows (a token embedding), padding_idx and frequency scaling.
    idx = np.random.default_rng(1).integers(0, 50, size=(40, 64))
    w = rand_array((50, 16))
    for kw in (dict(), dict(padding_idx=3), dict(padding_idx=7, scale_grad_by_freq=True)):
        check_op(lambda x, kw=kw: ember.nn.functional.embedding(ember.tensor(idx), x, **kw),
                 lambda x, kw=kw: TF.embedding(torch.tensor(idx), x, **kw), w)


def test_nll_loss_node_names_follow_torchs_2d_kernel():
    """Inputs of 3+ dims run through PyTorch's 2-d kernel (NllLoss2DBackward0); 3-d and 5+-d
    ones are viewed as 4-d first, so an unreduced loss ends in a ViewBackward0."""
    rng = np.random.default_rng(1)
    for shape in [(5,), (4, 5), (4, 5, 3), (4, 5, 3, 2), (2, 5, 3, 2, 2), (0, 5, 3)]:
        x = rand_array(shape, seed=2)
        t = rng.integers(0, 5, size=shape[:1] + shape[2:] if len(shape) > 1 else ())
        for kw in ({}, {"reduction": "none"}, {"reduction": "sum"}, {"ignore_index": 1}):
            xe = ember.tensor(x, requires_grad=True)
            xt = torch.tensor(x, requires_grad=True)
            le = ember.nn.functional.cross_entropy(xe, ember.tensor(t), **kw)
            lt = TF.cross_entropy(xt, torch.tensor(t), **kw)
            assert le.grad_fn.name() == lt.grad_fn.name(), (shape, kw)
            assert_same(le, lt, rtol=1e-6)  # (log_softmax's float32 sum order)
            if le.numel():
                le.sum().backward()
                lt.sum().backward()
                assert_same(xe.grad, xt.grad, rtol=1e-6, atol=1e-7)


def test_nll_loss_2d_double_backward_node_name():
    x = rand_array((2, 3, 4, 2))
    t = np.random.default_rng(3).integers(0, 3, size=(2, 4, 2))
    names = []
    for L, F in ((ember, ember.nn.functional), (torch, TF)):
        a = L.tensor(x, requires_grad=True)
        g, = L.autograd.grad(F.nll_loss(a, L.tensor(t)) ** 2, a, create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1] == "NllLoss2DBackwardBackward0"


@pytest.mark.parametrize("shape,fmt,pad", [
    ((2, 3, 4, 5, 6), "channels_last_3d", (1, 1, 1, 1, 1, 1)),
    ((2, 3, 4, 5), "channels_last", (1, 2, 0, 1)),
])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_keeps_a_channels_last_layout_as_torch(shape, fmt, pad, mode):
    # constant, reflection and replication kernels allocate in the input's suggested format;
    # circular padding is composed of slice copies into a contiguous result
    a = rand_array(shape, np.float64)
    e = ember.tensor(a).contiguous(memory_format=getattr(ember, fmt)).requires_grad_()
    t = torch.tensor(a).contiguous(memory_format=getattr(torch, fmt)).requires_grad_()
    got, want = ember.nn.functional.pad(e, pad, mode=mode), TF.pad(t, pad, mode=mode)
    assert_same(got, want, rtol=0, atol=0, check_stride=True)
    assert got.grad_fn.name() == want.grad_fn.name()
    g = rand_array(tuple(want.shape), np.float64, seed=2)
    got.backward(ember.tensor(g))
    want.backward(torch.tensor(g))
    # (circular: an input position read by several outputs adds their gradients in another
    # order than torch's slice copies, so the last bit may differ)
    assert_same(e.grad, t.grad, rtol=1e-15 if mode == "circular" else 0, atol=0)


def test_constant_pad_nd_of_channels_last_is_a_new_channels_last_tensor():
    a = rand_array((2, 3, 6, 6))
    e = ember.tensor(a).contiguous(memory_format=ember.channels_last)
    t = torch.tensor(a).contiguous(memory_format=torch.channels_last)
    for pad in [(-1, -1), (1, -1), (0, 0)]:
        assert_same(ember.constant_pad_nd(e, pad), torch.constant_pad_nd(t, pad), rtol=0,
                    atol=0, check_stride=True)


@pytest.mark.parametrize("shape, pad", [
    ((2, 3), (-4, 0)), ((2, 3), (-2, -2)), ((2, 3), (0, -4)), ((2, 3), (-4, 2)),
    ((2, 3), (2, -6)), ((2, 3), (-1, -1, -3, 0)), ((2, 3), (-1, 0, 0, -3)),
    ((1, 2, 3), (-4, 5)), ((1, 2, 3), (0, 0, 3, -6)),
])
def test_constant_pad_crop_past_the_edge_fails_in_narrows_words(shape, pad):
    # PyTorch crops with narrow() before padding: a crop past the edge fails there, even
    # where the other side's padding would make the size non-negative
    for call in (lambda L: L.nn.functional.pad(L.ones(shape), pad, value=1.0),
                 lambda L: L.constant_pad_nd(L.ones(shape), pad)):
        assert same_message(call) == "narrow(): length must be non-negative."


@pytest.mark.parametrize("pad", [(-3, 0), (-1, -2), (-3, 2), (1, -2, -1, -1)])
def test_constant_pad_crop_to_the_edge_matches_torch(pad):
    same_result(lambda L: L.nn.functional.pad(L.arange(6.0).view(2, 3), pad, value=7.0))


@pytest.mark.parametrize("dtype, value", [
    ("bfloat16", 1 + 2**-8 + 2**-40), ("float16", 1 + 2**-11 + 2**-40),
    ("bfloat16", 2**24 + 2**16 + 1), ("float16", 0.1), ("float32", 0.1)])
def test_constant_pad_value_converts_as_a_scalar(dtype, value):
    # (a double to float16 / bfloat16 through float: PyTorch's Scalar conversion, not
    # NumPy's single rounding; ml_dtypes 0.7 rounds bfloat16 once)
    got, want = (L.nn.functional.pad(L.ones(2, 3, dtype=getattr(L, dtype)), (1, 2), value=value)
                 for L in (ember, torch))
    assert got.float().tolist() == want.float().tolist()


def test_nll_loss_double_backward():
    # PyTorch's nll_loss_backward takes the input: the create_graph gradient requires grad
    # (NllLossBackwardBackward0 / NllLoss2DBackwardBackward0), its own gradient zeros
    from helpers import check_double_backward

    t1 = np.array([0, 2, 1, 1])
    t2 = np.array([[[0, 1], [2, 0]], [[1, 1], [2, 2]]])
    t3 = np.zeros((2, 2, 2, 2), np.int64)
    w = np.array([1.0, 2.0, 0.5])
    cases = [
        ("nll 1d", lambda M, v: M.nn.functional.nll_loss(v, M.tensor(t1)), (4, 3), True),
        ("nll weight sum", lambda M, v: M.nn.functional.nll_loss(
            v, M.tensor(t1), M.tensor(w), reduction="sum"), (4, 3), True),
        ("nll none ignore", lambda M, v: M.nn.functional.nll_loss(
            v, M.tensor(t1), reduction="none", ignore_index=1), (4, 3), True),
        ("nll 2d", lambda M, v: M.nn.functional.nll_loss(v, M.tensor(t2)), (2, 3, 2, 2), True),
        ("nll 3d", lambda M, v: M.nn.functional.nll_loss(v, M.tensor(t3)), (2, 3, 2, 2, 2),
         True),
        ("cross_entropy", lambda M, v: M.nn.functional.cross_entropy(v, M.tensor(t1)), (4, 3),
         True),
    ]
    check_double_backward(cases)


def test_constant_pad_fills_then_copies_as_torch():
    # The kernel fills the padded shape with the value (converted as a Scalar) and copies the
    # input in: torch's bits and row-major strides over dtypes, values, crops and layouts.
    r = np.random.default_rng(3)
    a = r.standard_normal((2, 3, 4, 5)) * 100
    cases = [((1, 1, 1, 1), 0), ((2, 0), 1.5), ((1, -1, 0, 2), -7), ((0, 0, 1, 1, 2, 0), 6e4),
             ((1, 2), float("nan")), ((-1, -1, 0, 0), 3)]
    for dtype, (pad, value), layout in itertools.product(
            ("float32", "float16", "bfloat16", "int64", "bool", "complex64"), cases,
            ("row-major", "transposed")):
        if dtype in ("int64", "bool") and not (value == value and value == int(value)):
            continue  # (a fractional or NaN value for an integer tensor: torch refuses)
        if layout == "transposed" and min(pad) < 0 <= max(pad) == 0:
            continue  # (a crop alone keeps the input's strides in torch: see the report)
        e, t = ember.tensor(a).to(getattr(ember, dtype)), torch.tensor(a).to(getattr(torch, dtype))
        if layout == "transposed":
            e, t = e.transpose(1, 3), t.transpose(1, 3)
        out, ref = TF_pad(ember, e, pad, value), TF_pad(torch, t, pad, value)
        assert out.dtype == e.dtype and out.stride() == ref.stride(), (dtype, pad, layout)
        assert_same(out, ref)


def TF_pad(lib, x, pad, value):
    return lib.nn.functional.pad(x, pad, value=value)


def test_constant_pad_crop_is_the_narrowed_inputs_clone_in_layout():
    # A pad with no positive side is PyTorch's clone of the narrowed input: its strides
    # where that view is dense, else dense in its order (transposed, channels-last, size-1
    # and empty dims included; meta too). A pad that grows keeps its own rule.
    def inputs(L, device):
        yield L.empty(2, 3, 5, device=device).transpose(1, 2)
        yield L.empty(2, 5, 3, device=device).permute(1, 0, 2)
        yield L.empty(1, 6, 1, device=device)
        yield L.empty(1, 1, 6, device=device).transpose(1, 2)
        yield L.empty(12, device=device)[::2].view(1, 6, 1)
        yield L.empty(1, 3, 4, 4, device=device).contiguous(memory_format=L.channels_last)
        yield L.empty(2, 1, 4, 4, device=device).transpose(2, 3)
        yield L.empty(1, 2, 2, 2, 2, device=device).contiguous(memory_format=L.channels_last_3d)
    pads = [(-1, 0), (0, -1), (-1, -1, 0, 0), (0, 0, -1, 0), (0, 0, 0, 0), (1, -1), (0, -6)]
    for device in ("cpu", "meta"):
        for pad in pads:
            for e, t in zip(inputs(ember, device), inputs(torch, device)):
                try:
                    want = torch.constant_pad_nd(t, pad)
                except RuntimeError:
                    continue
                got = ember.constant_pad_nd(e, pad)
                assert (got.shape, got.stride()) == (tuple(want.shape), want.stride()), (
                    device, pad, tuple(t.shape), t.stride())
