"""nn.functional helpers against torch.nn.functional: padding, resizing, unfold/fold,
normalisation, distances, one_hot, embedding, dropout and the softmax family."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F

from helpers import assert_same, assert_ulp, check_grads, check_op, rand_array


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_torch(mode):
    kw = {"value": 0.5} if mode == "constant" else {}
    for shape, pads in (((2, 3, 5, 4), (2, 1, 0, 3)), ((2, 3, 5, 4), (1, 1, 2, 2, 1, 0)),
                        ((2, 3, 5), (1, 2)), ((3, 5, 4), (2, 1, 0, 3))):
        check_op(lambda a, p=pads: F.pad(a, p, mode=mode, **kw),
                 lambda a, p=pads: TF.pad(a, p, mode=mode, **kw), rand_array(shape))
    if mode == "constant":
        x = rand_array((2, 3, 5, 4))
        check_op(lambda a: F.pad(a, (-1, 2, 1, -2)), lambda a: TF.pad(a, (-1, 2, 1, -2)), x)
        check_grads(lambda a: F.pad(a, (2, -1)), rand_array((2, 3), np.float64))


def test_pad_errors_match_torch():
    for args in (((2, 3), (1,), "constant"), ((2, 3), (3, 0), "reflect"),
                 ((2, 3, 4, 5), (1, 1), "reflect")):
        shape, pads, mode = args
        with pytest.raises(Exception) as ee:
            F.pad(ember.zeros(shape), pads, mode=mode)
        with pytest.raises(Exception) as et:
            TF.pad(torch.zeros(shape), pads, mode=mode)
        assert type(ee.value) is type(et.value)


@pytest.mark.parametrize("kwargs", [
    {"size": (7, 3), "mode": "nearest"}, {"scale_factor": 2, "mode": "nearest"},
    {"scale_factor": 1.7, "mode": "nearest"}, {"size": (5, 9), "mode": "nearest-exact"},
    {"size": (7, 3), "mode": "bilinear"}, {"scale_factor": 2.5, "mode": "bilinear"},
    {"size": (6, 8), "mode": "bilinear", "align_corners": True},
    {"scale_factor": 0.5, "mode": "bilinear", "recompute_scale_factor": True},
    {"size": (2, 3), "mode": "area"},
], ids=str)
def test_interpolate_2d_matches_torch(kwargs):
    check_op(lambda a: F.interpolate(a, **kwargs), lambda a: TF.interpolate(a, **kwargs),
             rand_array((2, 3, 4, 5)))


def test_interpolate_1d_linear_and_errors():
    check_op(lambda a: F.interpolate(a, size=9, mode="linear"),
             lambda a: TF.interpolate(a, size=9, mode="linear"), rand_array((2, 2, 4)))
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(ember.zeros(1, 1, 2, 2), size=3, align_corners=True)


def test_unfold_fold_match_torch():
    x = rand_array((2, 3, 6, 5))
    kw = {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}
    check_op(lambda a: F.unfold(a, **kw), lambda a: TF.unfold(a, **kw), x)
    cols = TF.unfold(torch.tensor(x), **kw).numpy()
    check_op(lambda a: F.fold(a, (6, 5), **kw), lambda a: TF.fold(a, (6, 5), **kw), cols)


def test_pixel_shuffle_round_trip_matches_torch():
    x = rand_array((2, 8, 3, 2))
    check_op(lambda a: F.pixel_shuffle(a, 2), lambda a: TF.pixel_shuffle(a, 2), x)
    check_op(lambda a: F.pixel_unshuffle(a, 2), lambda a: TF.pixel_unshuffle(a, 2),
             rand_array((2, 2, 4, 6)))


def test_norm_functions_match_torch():
    x = rand_array((4, 6, 3))
    check_op(lambda a: F.layer_norm(a, (6, 3)), lambda a: TF.layer_norm(a, (6, 3)), x)
    check_op(lambda a, w, b: F.group_norm(a, 3, w, b), lambda a, w, b: TF.group_norm(a, 3, w, b),
             x, rand_array((6,), seed=1), rand_array((6,), seed=2))
    check_op(lambda a: F.rms_norm(a, (3,)), lambda a: TF.rms_norm(a, (3,)), x)
    check_op(lambda a: F.instance_norm(a), lambda a: TF.instance_norm(a), x)
    rm_e, rv_e = ember.zeros(6), ember.ones(6)
    rm_t, rv_t = torch.zeros(6), torch.ones(6)
    check_op(lambda a: F.batch_norm(a, rm_e, rv_e, training=True, momentum=0.2),
             lambda a: TF.batch_norm(a, rm_t, rv_t, training=True, momentum=0.2), x)
    assert_same(rm_e, rm_t)
    assert_same(rv_e, rv_t)
    check_op(lambda a: F.batch_norm(a, rm_e, rv_e), lambda a: TF.batch_norm(a, rm_t, rv_t), x)
    with pytest.raises(RuntimeError) as ee:
        F.layer_norm(ember.zeros(2, 3), (4,))
    with pytest.raises(RuntimeError) as et:
        TF.layer_norm(torch.zeros(2, 3), (4,))
    assert str(ee.value) == str(et.value)


def test_distances_and_normalize_match_torch():
    a, b = rand_array((4, 5)), rand_array((4, 5), seed=1)
    check_op(lambda x: F.normalize(x, p=2, dim=1), lambda x: TF.normalize(x, p=2, dim=1), a)
    check_op(lambda x: F.normalize(x, p=1, dim=0), lambda x: TF.normalize(x, p=1, dim=0), a)
    check_op(F.cosine_similarity, TF.cosine_similarity, a, b)
    check_op(lambda x, y: F.cosine_similarity(x, y, dim=0),
             lambda x, y: TF.cosine_similarity(x, y, dim=0), a, b[:1])
    check_op(F.pairwise_distance, TF.pairwise_distance, a, b)
    check_op(lambda x, y: F.pairwise_distance(x, y, p=1, keepdim=True),
             lambda x, y: TF.pairwise_distance(x, y, p=1, keepdim=True), a, b)
    check_op(F.pdist, TF.pdist, a)


def test_one_hot_matches_torch():
    t = np.array([[0, 2], [3, 1]])
    assert_same(F.one_hot(ember.tensor(t)), TF.one_hot(torch.tensor(t)))
    assert_same(F.one_hot(ember.tensor(t), 6), TF.one_hot(torch.tensor(t), 6))
    for bad in (ember.tensor([1.0]), ember.tensor([-1]), ember.tensor([3])):
        with pytest.raises(RuntimeError):
            F.one_hot(bad, 3)


def test_softmax_family_and_glu_match_torch():
    x = rand_array((3, 4, 2))
    for name in ("softmax", "log_softmax", "softmin"):
        check_op(lambda a, n=name: getattr(F, n)(a, dim=1),
                 lambda a, n=name: getattr(TF, n)(a, dim=1), x)
    check_op(lambda a: F.softmax(a, 0, dtype=ember.float64),
             lambda a: TF.softmax(a, 0, dtype=torch.float64), x)
    check_op(lambda a: F.glu(a, 1), lambda a: TF.glu(a, 1), x)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(ember.zeros(3))
    check_op(F.logsigmoid, TF.logsigmoid, x)
    check_op(lambda a: F.hardshrink(a, 0.3), lambda a: TF.hardshrink(a, 0.3), x)
    check_op(lambda a: F.softshrink(a, 0.3), lambda a: TF.softshrink(a, 0.3), x)
    check_op(lambda a, w: F.prelu(a, w), lambda a, w: TF.prelu(a, w), x,
             rand_array((4,), seed=3))


def test_gumbel_softmax_properties():
    logits = ember.tensor(rand_array((5, 4)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(5), rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    hard.sum().backward()
    assert logits.grad is not None


def test_linear_bilinear_embedding_functions():
    x, w, b = rand_array((3, 4)), rand_array((5, 4), seed=1), rand_array((5,), seed=2)
    out, _ = check_op(F.linear, TF.linear, x, w, b)
    check_op(F.linear, TF.linear, rand_array((2, 3, 4)), w)
    check_op(F.bilinear, TF.bilinear, rand_array((3, 2)), rand_array((3, 4), seed=1),
             rand_array((5, 2, 4), seed=2), b)
    idx = np.array([[0, 3], [2, 2]])
    check_op(lambda t: F.embedding(ember.tensor(idx), t, padding_idx=2),
             lambda t: TF.embedding(torch.tensor(idx), t, padding_idx=2),
             rand_array((4, 3)))
    check_grads(lambda t: F.embedding(ember.tensor(idx), t) ** 2, rand_array((4, 3), np.float64))
    check_op(lambda t: F.embedding(ember.tensor(idx), t, scale_grad_by_freq=True),
             lambda t: TF.embedding(torch.tensor(idx), t, scale_grad_by_freq=True),
             rand_array((4, 3)))


def test_dropout_functions_match_torch_under_the_same_seed():
    x = rand_array((4, 6, 3))
    for name, kw in (("dropout", {"p": 0.3}), ("dropout1d", {"p": 0.5}),
                     ("alpha_dropout", {"p": 0.2, "training": True}),
                     ("feature_alpha_dropout", {"p": 0.4, "training": True})):
        ember.manual_seed(9)
        torch.manual_seed(9)
        check_op(lambda a, n=name, k=kw: getattr(F, n)(a, **k),
                 lambda a, n=name, k=kw: getattr(TF, n)(a, **k), x)
    x = ember.ones(3)
    assert F.dropout(x, 0.5, training=False) is x
    assert float(F.dropout(x, 1.0).sum()) == 0.0


def test_linear_of_a_batch_folds_its_rows_into_one_addmm_as_torch():
    """An input of 1 or 3+ dims with a bias: views by the view primitive around one addmm
    (the sizes ints already): torch's values, strides, nodes and gradients; a
    non-contiguous input stays matmul + add."""
    w, b = rand_array((5, 4), seed=1), rand_array((5,), seed=2)
    for shape, make in (((4,), None), ((2, 3, 4), None), ((2, 1, 3, 4), None),
                        ((0, 4), None), ((3, 2, 4), lambda L, a: a.transpose(0, 1))):
        x = rand_array(shape, seed=3)
        got = []
        for L, F_ in ((ember, F), (torch, TF)):
            xs = [L.tensor(a, requires_grad=True) for a in (x, w, b)]
            inp = make(L, xs[0]) if make else xs[0]
            y = F_.linear(inp, xs[1], xs[2])
            y.backward(L.ones_like(y))
            node, chain = y.grad_fn, []
            while node is not None:
                chain.append(type(node).__name__)
                node = next((f for f, _ in node.next_functions if f is not None and
                             type(f).__name__ != "AccumulateGrad"), None)
            got.append((y, chain, [a.grad for a in xs]))
        (ye, ce, ge), (yt, ct, gt) = got
        assert ce == ct
        assert_same(ye, yt, rtol=1e-6, atol=1e-6, check_stride=True)
        for e, t in zip(ge, gt):
            assert_same(e, t, rtol=1e-5, atol=1e-5)


def test_dropout_mask_drawn_scaled_is_torchs_bernoulli_then_division():
    """F.dropout multiplies by a mask drawn already divided by 1 - p (ops/bernoulli
    dropout_mask): torch's bits for each dtype and layout, its node and gradient, the
    generator left where torch leaves it."""
    x = rand_array((5, 4, 3), low=-2, high=2)
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        for p, make in ((0.2, lambda a: a), (0.9, lambda a: a.transpose(0, 2)),
                        (0.5, lambda a: a[:, 1:])):
            got, want = [], []
            for L, out in ((ember, got), (torch, want)):
                L.manual_seed(4)
                a = make(L.tensor(x, dtype=getattr(L, dtype))).requires_grad_()
                y = L.nn.functional.dropout(a, p)
                y.backward(L.ones_like(y))
                out += [y, a.grad, L.rand(2), type(y.grad_fn).__name__]
                b = make(L.tensor(x, dtype=getattr(L, dtype)))
                L.nn.functional.dropout(b, p, inplace=True)
                out += [b, L.nn.functional.dropout2d(b.unsqueeze(-1), p), L.rand(2)]
            for e, t in zip(got, want):
                if isinstance(t, str):
                    assert e == t
                else:
                    assert_same(e, t, rtol=0, atol=0, check_stride=True)
    for L in (ember, torch):  # (a complex input: bernoulli's refusal, as torch's)
        with pytest.raises(NotImplementedError, match="bernoulli_scalar_cpu_"):
            L.nn.functional.dropout(L.ones(3, dtype=L.complex64), 0.5)


def test_low_precision_norms_round_once_like_torch():
    x = rand_array((4, 64), low=-3, high=3)
    w = rand_array((64,), seed=1)
    for dt, tdt in ((ember.float16, torch.float16), (ember.bfloat16, torch.bfloat16)):
        xe, xt = ember.tensor(x).to(dt), torch.tensor(x).to(tdt)
        # torch's float32 moments are vectorised sums (8 or 16 lanes, by CPU): their last bit
        # can show after rounding to 16 bits; computing in 16 bits would be ulps off
        why = "torch's mean and variance are vectorised float32 sums whose order is the CPU's"
        assert_ulp(F.layer_norm(xe, (64,), ember.tensor(w).to(dt)),
                   TF.layer_norm(xt, (64,), torch.tensor(w).to(tdt)), 1, why)
        assert_ulp(F.group_norm(xe.reshape(4, 8, 8), 2), TF.group_norm(xt.reshape(4, 8, 8), 2),
                   1, why)
        small = ember.full((1, 4), 0.01, dtype=dt)
        assert_ulp(F.rms_norm(small, (4,)), TF.rms_norm(torch.full((1, 4), 0.01, dtype=tdt),
                                                        (4,)), 1, why)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_is_one_node_with_torchs_first_and_second_derivatives(affine):
    x = rand_array((3, 4, 5), np.float64)
    w, b = rand_array((4, 5), np.float64, seed=1), rand_array((4, 5), np.float64, seed=2)
    xs = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ye = F.layer_norm(xs[0], (4, 5), *(xs[1:] if affine else ()))
    yt = TF.layer_norm(ts[0], (4, 5), *(ts[1:] if affine else ()))
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "NativeLayerNormBackward0"
    assert len(ye.grad_fn.next_functions) == len(yt.grad_fn.next_functions) == 3
    assert_same(ye, yt)
    ge = ember.autograd.grad((ye * ye).sum(), xs[:1], create_graph=True)[0]
    gt = torch.autograd.grad((yt * yt).sum(), ts[:1], create_graph=True)[0]
    assert_same(ge, gt)
    n = 3 if affine else 1
    assert_same(ember.autograd.grad(ge.pow(3).sum(), xs[:n]),
                torch.autograd.grad(gt.pow(3).sum(), ts[:n]))
    check_op(lambda a: F.layer_norm(a, (5,)), lambda a: TF.layer_norm(a, (5,)),
             rand_array((0, 5)))
    meta = F.layer_norm(ember.empty(2, 7, device="meta"), (7,))
    assert meta.shape == (2, 7) and meta.device.type == "meta"


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

def test_softmin_negates_before_the_dtype_cast():
    from helpers import same_error, same_result

    same_error(lambda L: L.nn.functional.softmin(L.ones(3, dtype=L.bool), dim=0,
                                                 dtype=L.float64))
    same_result(lambda L: L.nn.functional.softmin(L.tensor([1, -2, 3], dtype=L.int8), dim=0,
                                                  dtype=L.float64))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_empty_batch_as_torch(training):
    """No statistics of nothing: the output is empty, the running buffers are untouched,
    weight and bias stay in the graph through their first entries (zero gradients), and
    the module still counts the batch."""
    seen = []
    for lib in (torch, ember):
        m = lib.nn.BatchNorm2d(3).train(training)
        x = lib.zeros(0, 3, 4, 4, requires_grad=True)
        y = m(x)
        y.sum().backward()
        seen.append((tuple(y.shape), type(y.grad_fn).__name__, m.running_mean.tolist(),
                     m.running_var.tolist(), m.weight.grad.tolist(), m.bias.grad.tolist(),
                     int(m.num_batches_tracked), tuple(x.grad.shape)))
    assert seen[0] == seen[1]


EMPTY_BATCH = {
    "group_norm": lambda L, x: L.nn.functional.group_norm(x, 3),
    "instance_norm": lambda L, x: L.nn.functional.instance_norm(x),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (4,)),
    "unfold": lambda L, x: L.nn.functional.unfold(x, 2),
    "grid_sample": lambda L, x: L.nn.functional.grid_sample(x, L.zeros(0, 2, 2, 2),
                                                            align_corners=False),
    # the gradient as a graph (create_graph), through the composite VJP: x's gradient
    # depends on the grid, not on x (so x.grad stays None in both)
    "grid_sample, double backward": lambda L, x: L.autograd.grad(
        L.nn.functional.grid_sample(x, L.zeros(0, 2, 2, 2, requires_grad=True),
                                    align_corners=False).sum(), x, create_graph=True)[0],
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 2),
    "interpolate": lambda L, x: L.nn.functional.interpolate(x, scale_factor=2),
    "linear": lambda L, x: L.nn.functional.linear(x, L.ones(5, 4)),
}


@pytest.mark.parametrize("name", EMPTY_BATCH)
def test_an_empty_batch_goes_through_as_in_torch(name):
    """A batch of none (detection heads with no boxes, a filtered batch) gives the empty
    output and input gradient torch gives; group_norm, instance_norm, unfold and
    grid_sample reshaped by -1 over zero elements and raised before."""
    seen = []
    for lib in (torch, ember):
        x = lib.zeros(0, 3, 4, 4, requires_grad=True)
        y = EMPTY_BATCH[name](lib, x)
        y.sum().backward()
        seen.append((tuple(y.shape), None if x.grad is None else tuple(x.grad.shape)))
    assert seen[0] == seen[1]


EMPTY_SEQUENCES = {
    "multihead_attention": lambda L, x: L.nn.MultiheadAttention(4, 2, batch_first=True)(
        x, x, x)[0],
    "transformer_encoder_layer": lambda L, x: L.nn.TransformerEncoderLayer(
        4, 2, 8, batch_first=True)(x),
    "embedding": lambda L, x: L.nn.functional.embedding(
        L.zeros(0, 3, dtype=L.int64), L.ones(5, 4, requires_grad=True)) + x,
    "lstm": lambda L, x: L.nn.LSTM(4, 5, batch_first=True)(x)[0],
}


@pytest.mark.parametrize("name", EMPTY_SEQUENCES)
def test_an_empty_batch_of_sequences_goes_through_as_in_torch(name):
    """Attention and embedding with no sequences (their reshapes by -1 over zero elements
    raised before)."""
    seen = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.zeros(0, 3, 4, requires_grad=True)
        y = EMPTY_SEQUENCES[name](lib, x)
        y.sum().backward()
        seen.append((tuple(y.shape), tuple(x.grad.shape)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("shape,pad,mode,value", [
    ((2, 3), (1, 2, 3), "constant", None), ((2, 3), (1, 2, 3), "reflect", None),
    ((2, 3), (1,) * 6, "constant", None), ((2, 3), (1,) * 6, "replicate", None),
    ((3,), (1, 1), "reflect", None), ((1, 3), (1, 1), "reflect", 1.0),
    ((1, 2, 3), (1, 1, 1, 1), "circular", None), ((3,), (1, 1), "bad", None)])
def test_pad_error_types_and_messages_match_torch(shape, pad, mode, value):
    got = []
    for m in (ember, torch):
        try:
            m.nn.functional.pad(m.zeros(shape), pad, mode=mode, value=value)
            got.append(None)
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [lambda m, x: m.nn.functional.softmax(x),
                                  lambda m, x: m.nn.functional.log_softmax(x),
                                  lambda m, x: m.nn.functional.softmin(x)])
def test_implicit_softmax_dim_warns_at_the_callers_line(call):
    import warnings

    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(m, m.ones(2, 2))
        assert [x.filename for x in w] == [__file__], m.__name__


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("shape", [(8, 16, 5, 5), (4, 6), (3, 5, 7)], ids=str)
def test_batch_norm_with_running_statistics_is_torchs_bits(shape, affine):
    """Evaluation mode: shift = fma(-mean, scale, bias) and out = fma(x, scale, shift), one
    rounding each as PyTorch's vectorised kernel (its scalar build rounds twice)."""
    from helpers import TORCH_VECTOR_KERNELS

    c = shape[1]
    x, mean = rand_array(shape, seed=1), rand_array((c,), seed=2) * 0.3
    var, w, b = rand_array((c,), seed=3, low=0.5, high=2), rand_array((c,), seed=4), \
        rand_array((c,), seed=5)
    w = w if affine in ("both", "weight") else None
    b = b if affine in ("both", "bias") else None
    t = lambda a: None if a is None else torch.tensor(a)  # noqa: E731
    e = lambda a: None if a is None else ember.tensor(a)  # noqa: E731
    want = TF.batch_norm(t(x), t(mean), t(var), t(w), t(b), training=False).numpy()
    got = F.batch_norm(e(x), e(mean), e(var), e(w), e(b), training=False).numpy()
    if TORCH_VECTOR_KERNELS:
        np.testing.assert_array_equal(got, want)
    else:
        assert_ulp(got, want, 4, "torch's scalar build rounds the multiply-adds twice")


@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("shape", [(8, 16, 5, 5), (32, 8, 8, 8), (3, 5, 7), (2, 3, 4, 4, 4)],
                         ids=str)
def test_batch_norm_with_batch_statistics_is_torchs_bits(shape, affine):
    """Training mode, inputs with spatial dims: PyTorch's sums in double, rounded squares,
    var = rounded sum / count, rstd in double, then the two fused multiply-adds (its scalar
    build rounds those twice). The batch mean comes out bit for bit too. (An (N, C) input
    takes another statistics kernel in PyTorch, vectorised across channels: not matched.)"""
    from helpers import TORCH_VECTOR_KERNELS

    c = shape[1]
    x = rand_array(shape, seed=1, low=-2, high=3)
    w = rand_array((c,), seed=4) if affine != "none" else None
    b = rand_array((c,), seed=5) if affine == "both" else None
    tm, tv = torch.zeros(c), torch.ones(c)
    em, ev = ember.zeros(c), ember.ones(c)
    t = lambda a: None if a is None else torch.tensor(a)  # noqa: E731
    e = lambda a: None if a is None else ember.tensor(a)  # noqa: E731
    want = TF.batch_norm(t(x), tm, tv, t(w), t(b), training=True).numpy()
    got = F.batch_norm(e(x), em, ev, e(w), e(b), training=True).numpy()
    if TORCH_VECTOR_KERNELS:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(em.numpy(), tm.numpy())
    else:
        assert_ulp(got, want, 8, "torch's scalar build rounds the multiply-adds twice")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(64, 6), (256, 33), (5, 3)], ids=str)
def test_batch_norm_of_rows_is_torchs_bits_at_the_same_thread_count(shape, threads):
    """An (N, C) input: PyTorch reduces across rows in float32 in one chunk per thread, then
    adds the chunks in double, the squares as fused multiply-adds; ember does the same with
    its own thread count, so equal counts give equal bits."""
    from helpers import TORCH_VECTOR_KERNELS

    x, w, b = rand_array(shape, seed=1), rand_array(shape[1:], seed=2), rand_array(shape[1:],
                                                                                  seed=3)
    old = torch.get_num_threads(), ember.get_num_threads()
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    try:
        want = TF.batch_norm(torch.tensor(x), None, None, torch.tensor(w), torch.tensor(b),
                             training=True).numpy()
        got = F.batch_norm(ember.tensor(x), None, None, ember.tensor(w), ember.tensor(b),
                           training=True).numpy()
    finally:
        torch.set_num_threads(old[0])
        ember.set_num_threads(old[1])
    if TORCH_VECTOR_KERNELS:
        np.testing.assert_array_equal(got, want)
    else:
        assert_ulp(got, want, 8, "torch's scalar build rounds the multiply-adds twice")


def _node_chain(t) -> list[str]:
    names, node = [], t.grad_fn
    while node is not None:
        names.append(node.name())
        node = next((n for n, _ in node.next_functions if n is not None), None)
    return names


@pytest.mark.parametrize("permuted", [False, True])
def test_rms_norm_returns_a_contiguous_result_as_torch(permuted):
    # (PyTorch's composite ends in .contiguous(): a clone node for an input in another layout)
    x = rand_array((4, 6, 5), np.float32)
    out = []
    for lib in (torch, ember):
        t = lib.tensor(x)
        t = (t.permute(0, 2, 1) if permuted else t).requires_grad_()
        n = 5 if not permuted else 6
        r = lib.nn.RMSNorm(n)(t)
        out.append((r.stride(), _node_chain(r)[:-1]))
        np.testing.assert_array_equal(  # (the module is the function: the same bits)
            r.detach().numpy(), lib.nn.functional.rms_norm(t, (n,), lib.ones(n)).detach().numpy())
    assert out[0] == out[1]
