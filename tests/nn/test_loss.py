"""Every loss against torch: values and input gradients, each reduction, and torch's errors."""

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import functional as F

from helpers import assert_same, check_grads, check_module, check_op, rand_array, to_ember

REDUCTIONS = ["mean", "sum", "none"]


def _labels(shape, n, seed=0, ignore=None):
    t = np.random.default_rng(seed).integers(0, n, size=shape)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_class_indices(reduction):
    for shape, tshape in (((5, 4), (5,)), ((2, 4, 3, 2), (2, 3, 2)), ((4,), ())):
        x = rand_array(shape)
        t = np.array(_labels(tshape, 4))
        check_module(nn.CrossEntropyLoss(reduction=reduction),
                     torch.nn.CrossEntropyLoss(reduction=reduction), x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_weight_ignore_index_label_smoothing(reduction):
    x = rand_array((6, 5, 2))
    t = _labels((6, 2), 5, ignore=-100)
    w = rand_array((5,), low=0.5, high=2.0, seed=3)
    for smoothing in (0.0, 0.2):
        e = nn.CrossEntropyLoss(weight=ember.tensor(w), reduction=reduction,
                                label_smoothing=smoothing)
        tm = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), reduction=reduction,
                                       label_smoothing=smoothing)
        check_module(e, tm, x, t)
        e = nn.CrossEntropyLoss(ignore_index=2, reduction=reduction, label_smoothing=smoothing)
        tm = torch.nn.CrossEntropyLoss(ignore_index=2, reduction=reduction,
                                       label_smoothing=smoothing)
        check_module(e, tm, x, _labels((6, 2), 5, seed=1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(reduction):
    x = rand_array((4, 3, 2))
    p = np.random.default_rng(0).dirichlet(np.ones(3), size=(4, 2)).transpose(0, 2, 1)
    p = p.astype(np.float32)
    w = rand_array((3,), low=0.5, high=2.0, seed=2)
    for kw in ({}, {"label_smoothing": 0.1}):
        check_op(lambda a, b, kw=kw: F.cross_entropy(a, b, reduction=reduction, **kw),
                 lambda a, b, kw=kw: torch.nn.functional.cross_entropy(a, b, reduction=reduction,
                                                                       **kw),
                 x, p)
    check_op(lambda a, b: F.cross_entropy(a, b, ember.tensor(w), reduction=reduction),
             lambda a, b: torch.nn.functional.cross_entropy(a, b, torch.tensor(w),
                                                            reduction=reduction), x, p)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    x = rand_array((5, 4))
    t = _labels((5,), 4, ignore=-1)
    w = rand_array((4,), low=0.5, high=2.0, seed=5)
    e = nn.NLLLoss(weight=ember.tensor(w), ignore_index=-1, reduction=reduction)
    tm = torch.nn.NLLLoss(weight=torch.tensor(w), ignore_index=-1, reduction=reduction)
    out, _ = check_module(e, tm, x, t)
    if reduction == "mean":
        assert type(out.grad_fn).__name__ == "NllLossBackward0"
    # without class weights: some targets ignored, then none
    for labels in (t, _labels((5,), 4)):
        check_module(nn.NLLLoss(ignore_index=-1, reduction=reduction),
                     torch.nn.NLLLoss(ignore_index=-1, reduction=reduction), x, labels)


def test_nll_loss_double_backward_matches_torch():
    x = rand_array((3, 4), np.float64)
    w = rand_array((4,), np.float64, low=0.5, high=2.0, seed=1)
    grads = []
    for lib, fn in ((ember, F), (torch, torch.nn.functional)):
        xt = lib.tensor(x, requires_grad=True)
        loss = fn.nll_loss(xt.log_softmax(1) * xt, lib.tensor([1, 0, 3]), lib.tensor(w))
        g, = lib.autograd.grad(loss, xt, create_graph=True)
        (g * g).sum().backward()
        grads.append(xt.grad)
    assert_same(grads[0], grads[1])
    check_grads(lambda a: F.nll_loss(a, ember.tensor([2, 1]), reduction="none"),
                rand_array((2, 3), np.float64))


def test_classification_target_errors_match_torch():
    x_e, x_t = ember.zeros(3, 4), torch.zeros(3, 4)
    cases = [
        (ember.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])),  # float class indices
        (ember.tensor([1, 2]), torch.tensor([1, 2])),  # batch size
        (ember.tensor([1, 2, 7]), torch.tensor([1, 2, 7])),  # out of bounds
    ]
    for te, tt in cases:
        with pytest.raises(Exception) as ee:
            F.cross_entropy(x_e, te)
        with pytest.raises(Exception) as et:
            torch.nn.functional.cross_entropy(x_t, tt)
        assert type(ee.value) is type(et.value)
        assert str(ee.value) == str(et.value)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.nll_loss(x_e, ember.tensor([0, 1, 2]), reduction="avg")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction):
    x, y = rand_array((4, 3)), rand_array((4, 3), seed=1)
    pairs = [
        (nn.MSELoss(reduction=reduction), torch.nn.MSELoss(reduction=reduction)),
        (nn.L1Loss(reduction=reduction), torch.nn.L1Loss(reduction=reduction)),
        (nn.SmoothL1Loss(reduction=reduction, beta=0.5),
         torch.nn.SmoothL1Loss(reduction=reduction, beta=0.5)),
        (nn.HuberLoss(reduction=reduction, delta=0.7),
         torch.nn.HuberLoss(reduction=reduction, delta=0.7)),
        (nn.PoissonNLLLoss(reduction=reduction), torch.nn.PoissonNLLLoss(reduction=reduction)),
    ]
    for e, t in pairs:
        check_module(e, t, x, y)
    sign = np.sign(y)
    check_op(lambda a: F.soft_margin_loss(a, ember.tensor(sign), reduction=reduction),
             lambda a: torch.nn.functional.soft_margin_loss(a, torch.tensor(sign),
                                                            reduction=reduction), x)


def test_mse_warns_on_broadcasting_targets_like_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(ember.zeros(3), ember.zeros(2, 3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    x = rand_array((4, 3), low=0.05, high=0.95)
    y = rand_array((4, 3), low=0.0, high=1.0, seed=1)
    w = rand_array((3,), low=0.5, high=1.5, seed=2)
    check_module(nn.BCELoss(weight=ember.tensor(w), reduction=reduction),
                 torch.nn.BCELoss(weight=torch.tensor(w), reduction=reduction), x, y)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.0, 0.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_pos_weight(reduction):
    x = rand_array((4, 3), low=-30, high=30)
    y = rand_array((4, 3), low=0.0, high=1.0, seed=1)
    pw = rand_array((3,), low=0.5, high=3.0, seed=2)
    e = nn.BCEWithLogitsLoss(pos_weight=ember.tensor(pw), reduction=reduction)
    t = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw), reduction=reduction)
    check_module(e, t, x, y)
    assert list(e.state_dict()) == list(t.state_dict()) == ["pos_weight"]


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
def test_kl_div(reduction):
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), size=3)).astype(np.float32)
    y = np.random.default_rng(1).dirichlet(np.ones(4), size=3).astype(np.float32)
    for log_target in (False, True):
        tgt = np.log(y + 1e-3).astype(np.float32) if log_target else y
        check_module(nn.KLDivLoss(reduction=reduction, log_target=log_target),
                     torch.nn.KLDivLoss(reduction=reduction, log_target=log_target), x, tgt)
    y[0, 0] = 0.0  # 0 log 0 counts as 0
    check_op(lambda a: F.kl_div(a, ember.tensor(y), reduction=reduction),
             lambda a: torch.nn.functional.kl_div(a, torch.tensor(y), reduction=reduction), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_embedding_and_ranking_losses(reduction):
    a, b, c = (rand_array((5, 4), seed=s) for s in range(3))
    sign = np.array([1, -1, 1, -1, -1])
    check_module(nn.CosineEmbeddingLoss(margin=0.1, reduction=reduction),
                 torch.nn.CosineEmbeddingLoss(margin=0.1, reduction=reduction), a, b, sign)
    check_module(nn.MarginRankingLoss(margin=0.2, reduction=reduction),
                 torch.nn.MarginRankingLoss(margin=0.2, reduction=reduction), a[:, 0], b[:, 0],
                 sign.astype(np.float32))
    for kw in ({}, {"p": 1.0, "swap": True}):
        check_module(nn.TripletMarginLoss(margin=0.5, reduction=reduction, **kw),
                     torch.nn.TripletMarginLoss(margin=0.5, reduction=reduction, **kw), a, b, c)
    check_module(nn.HingeEmbeddingLoss(reduction=reduction),
                 torch.nn.HingeEmbeddingLoss(reduction=reduction), a, np.sign(b))


def test_ctc_loss_matches_torch():
    T, N, C = 6, 3, 5
    logits = rand_array((T, N, C))
    log_probs = torch.tensor(logits).log_softmax(2).numpy()
    targets = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    in_len, tgt_len = [6, 5, 6], [3, 2, 1]
    for reduction in REDUCTIONS:
        check_op(lambda lp, r=reduction: F.ctc_loss(lp, ember.tensor(targets), in_len, tgt_len,
                                                    reduction=r),
                 lambda lp, r=reduction: torch.nn.functional.ctc_loss(
                     lp, torch.tensor(targets), in_len, tgt_len, reduction=r),
                 log_probs, rtol=1e-4, atol=1e-5)
    flat = np.array([1, 2, 2, 3, 1, 4])
    check_op(lambda lp: F.ctc_loss(lp, ember.tensor(flat), ember.tensor(in_len),
                                   ember.tensor(tgt_len)),
             lambda lp: torch.nn.functional.ctc_loss(lp, torch.tensor(flat),
                                                     torch.tensor(in_len), torch.tensor(tgt_len)),
             log_probs, rtol=1e-4, atol=1e-5)
    # An impossible alignment (target longer than input) is inf, or 0 with zero_infinity.
    lp = to_ember(torch.tensor(log_probs[:2]))
    bad = F.ctc_loss(lp, ember.tensor([[1, 2, 3]] * 3), [2, 2, 2], [3, 3, 3], reduction="none")
    assert np.isinf(bad.numpy()).all()
    z = F.ctc_loss(lp, ember.tensor([[1, 2, 3]] * 3), [2, 2, 2], [3, 3, 3], zero_infinity=True)
    assert float(z) == 0.0
    assert_same(z, torch.tensor(0.0))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_likelihood_and_multilabel_losses(reduction):
    x, y = rand_array((4, 3)), rand_array((4, 3), seed=1)
    var = rand_array((4, 3), low=0.1, high=2, seed=2)
    check_module(nn.GaussianNLLLoss(reduction=reduction, full=True),
                 torch.nn.GaussianNLLLoss(reduction=reduction, full=True), x, y, var)
    check_op(lambda a: F.gaussian_nll_loss(a, ember.tensor(y), ember.tensor(var[:, :1]),
                                           reduction=reduction),
             lambda a: torch.nn.functional.gaussian_nll_loss(
                 a, torch.tensor(y), torch.tensor(var[:, :1]), reduction=reduction), x)
    labels = (rand_array((4, 3), seed=3) > 0).astype(np.float32)
    check_op(lambda a: F.multilabel_soft_margin_loss(a, ember.tensor(labels),
                                                     reduction=reduction),
             lambda a: torch.nn.functional.multilabel_soft_margin_loss(
                 a, torch.tensor(labels), reduction=reduction), x)
    rate = np.abs(y)
    check_op(lambda a: F.poisson_nll_loss(a, ember.tensor(rate), log_input=False, full=True,
                                          reduction=reduction),
             lambda a: torch.nn.functional.poisson_nll_loss(
                 a, torch.tensor(rate), log_input=False, full=True, reduction=reduction),
             np.abs(x) + 0.1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_and_triplet_distance_losses(reduction):
    x = rand_array((4, 3))
    t = np.array([1, 0, 2, 2])
    w = np.array([0.5, 1.0, 2.0], np.float32)
    for p in (1, 2):
        check_module(nn.MultiMarginLoss(p=p, margin=0.7, weight=ember.tensor(w),
                                        reduction=reduction),
                     torch.nn.MultiMarginLoss(p=p, margin=0.7, weight=torch.tensor(w),
                                              reduction=reduction), x, t)
    labels = np.array([[2, 0, -1], [1, -1, 0], [0, 1, 2], [-1, 1, 1]])
    check_module(nn.MultiLabelMarginLoss(reduction=reduction),
                 torch.nn.MultiLabelMarginLoss(reduction=reduction), x, labels)
    check_module(nn.TripletMarginWithDistanceLoss(swap=True, reduction=reduction),
                 torch.nn.TripletMarginWithDistanceLoss(swap=True, reduction=reduction),
                 x, rand_array((4, 3), seed=1), rand_array((4, 3), seed=2))


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

def _half(L, dtype="float32"):
    return L.full((2, 3), 0.5, dtype=getattr(L, dtype))


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.binary_cross_entropy(_half(L), _half(L, "float64")),
    lambda L: L.nn.functional.binary_cross_entropy(_half(L, "float64"), L.ones(2, 3).long()),
    lambda L: L.nn.functional.binary_cross_entropy(L.ones(2).long(), L.ones(2).long()),
    lambda L: L.nn.functional.binary_cross_entropy(_half(L), _half(L) * 4),   # target > 1
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor([float("nan")]), L.tensor([0.5])),
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor([0.5]), L.tensor([float("nan")])),
    lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.ones(2).byte(),
                                                               L.ones(2).byte()),
    lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.ones(2), L.ones(2).long()),
    lambda L: L.nn.functional.nll_loss(L.ones(4, 3).byte(), L.zeros(4).long()),
    lambda L: L.nn.functional.nll_loss(L.ones(3).long(), L.tensor(4)),  # dtype before bounds
    lambda L: L.nn.functional.nll_loss(L.ones(2, 2, 3, 4).int(), L.zeros(2, 3, 4).long()),
    lambda L: L.nn.functional.cross_entropy(L.ones(4, 2).long(), L.ones(4, 2).long()),
])
def test_loss_dtype_and_range_checks(call):
    from helpers import same_error

    same_error(call)


@pytest.mark.parametrize("dtypes", [("float32", "float16"), ("float64", "bfloat16"),
                                    ("float16", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"pos_weight": True}])
def test_bce_with_logits_has_the_targets_dtype(dtypes, kw):
    from helpers import same_result

    def call(L):
        x = L.tensor([-1.5, 0.25, 2.0], dtype=getattr(L, dtypes[0]))
        y = L.tensor([0.0, 0.5, 1.0], dtype=getattr(L, dtypes[1]))
        extra = {"pos_weight": L.tensor([1.0, 2.0, 0.5])} if kw.get("pos_weight") else kw
        return L.nn.functional.binary_cross_entropy_with_logits(x, y, **extra)

    same_result(call, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("int64", "bfloat16"),
                                    ("float16", "int64"), ("float32", "float64"),
                                    ("int64", "int64"), ("bool", "bool"),
                                    ("complex64", "float32")])
def test_pointwise_losses_promote_like_pytorch(name, dtypes):
    """The result has PyTorch's promoted dtype (not NumPy's: int64 with float32 is float32),
    and integer, bool or complex operands are refused."""
    from helpers import same_error, same_result

    def call(L):
        x = L.tensor([1, 0, 3], dtype=getattr(L, dtypes[0]))
        y = L.tensor([0, 2, 1], dtype=getattr(L, dtypes[1]))
        return getattr(L.nn.functional, name)(x, y, reduction="none")

    if dtypes[0] in ("int64", "bool", "complex64") and dtypes[1] in ("int64", "bool") or \
            dtypes[0] == "complex64":
        same_error(call)
    else:
        same_result(call)


def test_pointwise_loss_reports_the_size_mismatch_before_the_dtype():
    """Non-broadcastable integer operands are not refused for their dtype (PyTorch names the
    sizes first; ember's size error for these losses is being aligned separately)."""
    x, y = ember.ones(3, dtype=ember.int64), ember.ones(4, dtype=ember.int64)
    with pytest.raises((RuntimeError, ValueError)) as info, pytest.warns(UserWarning):
        ember.nn.functional.mse_loss(x, y)
    assert not isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize("target", [lambda m: m.rand(2, 4), lambda m: m.zeros(2, 4, dtype=m.int64),
                                    lambda m: m.rand(3)])
def test_cross_entropy_target_errors_match_torch(target):
    got = []
    for m in (ember, torch):
        try:
            m.nn.functional.cross_entropy(m.randn(2, 3), target(m))
            got.append(None)
        except (RuntimeError, ValueError) as e:
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_probabilities_names_its_nodes_as_torch(smoothing, reduction):
    # the mean divides by a C++ integer in PyTorch: the Tensor-by-Scalar node, DivBackward1
    x, p = rand_array((4, 3)), np.random.default_rng(1).dirichlet(np.ones(3), 4).astype(np.float32)
    out_e, out_t = check_op(
        lambda a: F.cross_entropy(a, ember.tensor(p), label_smoothing=smoothing,
                                  reduction=reduction),
        lambda a: torch.nn.functional.cross_entropy(a, torch.tensor(p), label_smoothing=smoothing,
                                                    reduction=reduction), x)
    assert out_e.grad_fn.name() == out_t.grad_fn.name()


@pytest.mark.parametrize("reduction", ["mean", "sum", "batchmean", "none", "bogus"])
def test_kl_div_refuses_integer_bool_and_complex_operands_as_torch(reduction):
    # torch's order: the reduction's own check, then complex operands, then integral ones
    import warnings

    f = [[0.1, 0.2], [0.3, 0.4]]
    pairs = [("int64", "int64"), ("float32", "int64"), ("int64", "float32"), ("bool", "bool"),
             ("complex64", "float32"), ("float32", "complex64"), ("int64", "complex64"),
             ("float64", "float32")]
    for da, db in pairs:
        got = []
        for lib in (ember, torch):
            a = lib.tensor(f).to(getattr(lib, da)) if da != "bool" else lib.tensor(f) > 0.15
            b = lib.tensor(f).to(getattr(lib, db)) if db != "bool" else lib.tensor(f) > 0.25
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    r = lib.nn.functional.kl_div(a, b, reduction=reduction)
                    got.append((str(r.dtype).split(".")[1], np.round(r.numpy(), 5).tolist()))
                except (RuntimeError, ValueError) as e:
                    got.append((type(e).__name__, str(e)))
        assert got[0] == got[1], (da, db)


# 'elementwise_mean' is 'mean' under its old name for the losses PyTorch reads into its
# reduction enum (with the deprecation warning); poisson_nll_loss checks the name itself
ELEMENTWISE_MEAN = {
    "mse_loss": lambda L, F, x, y: F.mse_loss(x, y, reduction="elementwise_mean"),
    "huber_loss": lambda L, F, x, y: F.huber_loss(x, y, reduction="elementwise_mean"),
    "kl_div": lambda L, F, x, y: F.kl_div(x.log(), y, reduction="elementwise_mean"),
    "nll_loss": lambda L, F, x, y: F.nll_loss(x, L.tensor([0, 2]), reduction="elementwise_mean"),
    "bce": lambda L, F, x, y: F.binary_cross_entropy(x, y, reduction="elementwise_mean"),
    "margin": lambda L, F, x, y: F.multi_margin_loss(x, L.tensor([1, 0]),
                                                     reduction="elementwise_mean"),
    "ctc": lambda L, F, x, y: F.ctc_loss(x.log().reshape(2, 1, 3), L.tensor([[1]]),
                                         L.tensor([2]), L.tensor([1]),
                                         reduction="elementwise_mean"),
    "module": lambda L, F, x, y: L.nn.L1Loss(reduction="elementwise_mean")(x, y),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_MEAN))
def test_elementwise_mean_is_the_deprecated_name_of_mean(name):
    import warnings

    x, y = rand_array((2, 3), low=0.1, high=0.9), rand_array((2, 3), seed=1, low=0.1, high=0.9)
    got = []
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got.append(ELEMENTWISE_MEAN[name](L, L.nn.functional, L.tensor(x), L.tensor(y)))
        assert [str(m.message) for m in w] == [
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."]
    assert_same(*got)


def test_poisson_nll_loss_refuses_elementwise_mean():
    for L in (ember, torch):
        with pytest.raises(ValueError, match="^elementwise_mean is not a valid value for red"):
            L.nn.functional.poisson_nll_loss(L.ones(2), L.ones(2), reduction="elementwise_mean")
