"""The graph node each loss ends in (PyTorch's fused kernels record one node whatever the
reduction), PyTorch's refusal of learnable class weights / pos_weight, and the argument
checks of the embedding and ranking losses, all against torch in-process."""

import pytest
import torch

import ember

from helpers import assert_same

TAGS = [[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [0, 1, 2, 3, 4], [4, 2, -1, 3, 3]]
_g = torch.Generator().manual_seed(0)
X, X1, Y = (torch.randn(4, 5, generator=_g).tolist() for _ in range(3))
MH = (torch.rand(4, 5, generator=_g) > 0.5).float().tolist()
W5 = torch.rand(5, generator=_g).tolist()


def _data(lib):
    x = lib.tensor(X, requires_grad=True)
    return x, lib.tensor(X1), lib.tensor(Y), lib.tensor(MH), lib.tensor(W5)


CASES = {
    "bce_weight": lambda F, lib, x, x1, y, mh, w, r: F.binary_cross_entropy(
        x.sigmoid(), mh, weight=w, reduction=r),
    "bce_logits_weight": lambda F, lib, x, x1, y, mh, w, r: F.binary_cross_entropy_with_logits(
        x, mh, weight=w, reduction=r),
    "bce_logits_pos_weight": lambda F, lib, x, x1, y, mh, w, r:
        F.binary_cross_entropy_with_logits(x, mh, pos_weight=w + 0.5, reduction=r),
    "bce_logits_both": lambda F, lib, x, x1, y, mh, w, r: F.binary_cross_entropy_with_logits(
        x, mh, weight=w[:1], pos_weight=w, reduction=r),
    "multi_margin": lambda F, lib, x, x1, y, mh, w, r: F.multi_margin_loss(
        x, lib.tensor([1, 0, 4, 2]), weight=w, reduction=r),
    "multilabel_margin": lambda F, lib, x, x1, y, mh, w, r: F.multilabel_margin_loss(
        x, lib.tensor(TAGS), reduction=r),
    "margin_ranking": lambda F, lib, x, x1, y, mh, w, r: F.margin_ranking_loss(
        x, x1, mh * 2 - 1, margin=0.3, reduction=r),
    "triplet": lambda F, lib, x, x1, y, mh, w, r: F.triplet_margin_loss(x, x1, y, reduction=r),
    "triplet_distance": lambda F, lib, x, x1, y, mh, w, r: F.triplet_margin_with_distance_loss(
        x, x1, y, swap=True, reduction=r),
    "cosine_embedding": lambda F, lib, x, x1, y, mh, w, r: F.cosine_embedding_loss(
        x, x1, lib.tensor([1, -1, 1, -1]), margin=-0.5, reduction=r),
    "hinge_embedding": lambda F, lib, x, x1, y, mh, w, r: F.hinge_embedding_loss(
        x, mh * 2 - 1, reduction=r),
    "multilabel_soft_margin": lambda F, lib, x, x1, y, mh, w, r: F.multilabel_soft_margin_loss(
        x, mh, weight=w, reduction=r),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", CASES)
def test_loss_value_gradient_and_node(case, reduction):
    res = []
    for lib in (torch, ember):
        x, *rest = _data(lib)
        out = CASES[case](lib.nn.functional, lib, x, *rest, reduction)
        (g,) = lib.autograd.grad(out.sum(), x)
        res.append((out, g, type(out.grad_fn).__name__))
    (t, tg, tname), (e, eg, ename) = res
    assert ename == tname
    # float32 compositions of the kernels' formulas: a few ulps from their rounding
    assert_same(e, t, rtol=1e-5, atol=1e-6)
    assert_same(eg, tg, rtol=1e-5, atol=1e-6)


def _raises_alike(fn):
    caught = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib.nn.functional, lib, *_data(lib))
        caught.append(info.value)
    t, e = caught
    # (ember.Size prints as torch.Size when a program runs under `import ember as torch`)
    assert (type(e).__name__, str(e).replace("ember.", "torch.")) == (type(t).__name__, str(t))


LEARNABLE = {
    "nll": lambda F, lib, x, w: F.nll_loss(x.log_softmax(1), lib.tensor([1, 0, 4, 2]), weight=w),
    "nll_4d": lambda F, lib, x, w: F.nll_loss(x.log_softmax(1).view(4, 5, 1, 1),
                                              lib.zeros(4, 1, 1, dtype=lib.long), weight=w),
    "nll_3d": lambda F, lib, x, w: F.nll_loss(x.log_softmax(1).view(4, 5, 1),
                                              lib.zeros(4, 1, dtype=lib.long), weight=w),
    "cross_entropy": lambda F, lib, x, w: F.cross_entropy(x, lib.tensor([1, 0, 4, 2]), weight=w),
    "cross_entropy_smooth": lambda F, lib, x, w: F.cross_entropy(
        x, lib.tensor([1, 0, 4, 2]), weight=w, label_smoothing=0.2),
    "bce": lambda F, lib, x, w: F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(),
                                                       weight=w),
    "bce_no_input_grad": lambda F, lib, x, w: F.binary_cross_entropy(
        x.detach().sigmoid(), x.detach().sigmoid(), weight=w),
    "bce_logits_weight": lambda F, lib, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), weight=w),
    "bce_logits_pos_weight": lambda F, lib, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), pos_weight=w),
    "multi_margin": lambda F, lib, x, w: F.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]),
                                                             weight=w),
    "soft_margin target": lambda F, lib, x, w: F.soft_margin_loss(x, w.expand(4, 5)),
}


@pytest.mark.parametrize("case", LEARNABLE)
def test_learnable_weights_are_refused(case):
    _raises_alike(lambda F, lib, x, *rest: LEARNABLE[case](
        F, lib, x, lib.tensor(W5, requires_grad=True)))


@pytest.mark.parametrize("case", ["bce_logits_weight", "multi_margin", "nll"])
def test_learnable_weights_pass_under_no_grad(case):
    outs = []
    for lib in (torch, ember):
        x, *_ = _data(lib)
        with lib.no_grad():
            outs.append(LEARNABLE[case](lib.nn.functional, lib, x,
                                        lib.tensor(W5, requires_grad=True)))
    assert_same(outs[1], outs[0], rtol=1e-6)


BAD = {
    "bce weight shape": lambda F, lib, x, x1, y, mh, w: F.binary_cross_entropy(
        x.sigmoid(), mh, weight=lib.ones(3)),
    "cosine 2-d target": lambda F, lib, x, x1, y, mh, w: F.cosine_embedding_loss(
        x, x1, lib.ones(4, 1)),
    "cosine 3-d input": lambda F, lib, x, x1, y, mh, w: F.cosine_embedding_loss(
        x.view(4, 5, 1), x1.view(4, 5, 1), lib.ones(4)),
    "cosine 1-d target, 1-d input": lambda F, lib, x, x1, y, mh, w: F.cosine_embedding_loss(
        x[0], x1[0], lib.ones(1)),
    "cosine 0-d target, 2-d input": lambda F, lib, x, x1, y, mh, w: F.cosine_embedding_loss(
        x, x1, lib.tensor(1.0)),
    "triplet margin": lambda F, lib, x, x1, y, mh, w: F.triplet_margin_loss(x, x1, y, margin=0),
    "triplet distance margin": lambda F, lib, x, x1, y, mh, w:
        F.triplet_margin_with_distance_loss(x, x1, y, margin=-1.0),
    "triplet distance reduction": lambda F, lib, x, x1, y, mh, w:
        F.triplet_margin_with_distance_loss(x, x1, y, reduction="avg"),
    "triplet distance dims": lambda F, lib, x, x1, y, mh, w:
        F.triplet_margin_with_distance_loss(x, x1[0], y),
    "soft margin target widens": lambda F, lib, x, x1, y, mh, w: F.soft_margin_loss(
        x[:, :1], mh[0]),
    "soft margin input narrower": lambda F, lib, x, x1, y, mh, w: F.soft_margin_loss(
        x[0], mh[:, :1]),
    "soft margin no broadcast": lambda F, lib, x, x1, y, mh, w: F.soft_margin_loss(
        x, mh[:, :3]),
    "multilabel soft margin reduction": lambda F, lib, x, x1, y, mh, w:
        F.multilabel_soft_margin_loss(x, mh, reduction="avg"),
    "multilabel soft margin shape first": lambda F, lib, x, x1, y, mh, w:
        F.multilabel_soft_margin_loss(x, mh[:, :3], reduction="avg"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_arguments_raise_like_torch(case):
    _raises_alike(BAD[case])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("target", [[1, -1, -1], [1.0, -1.0, -1.0]])
def test_hinge_embedding_integer_input_keeps_its_dtype(reduction, target):
    """PyTorch fills an input-like tensor with the margin (truncated for integers), so the
    loss stays integer and 'mean' refuses it."""
    res = []
    for lib in (torch, ember):
        try:
            res.append(lib.nn.functional.hinge_embedding_loss(
                lib.tensor([0, 2, 3]), lib.tensor(target), margin=2.5, reduction=reduction))
        except RuntimeError as e:
            res.append(str(e))
    if isinstance(res[0], str):
        assert res[1] == res[0]
    else:
        assert_same(res[1], res[0])


def test_hinge_embedding_bool_input_is_refused():
    _raises_alike(lambda F, lib, *rest: F.hinge_embedding_loss(lib.tensor([True, False]),
                                                               lib.tensor([1, -1])))


def _names(node, depth: int) -> list:
    """The node's name and, to `depth` levels, its inputs' (None for an input without one)."""
    if node is None:
        return [None]
    if depth == 0:
        return [node.name()]
    return [node.name()] + [_names(n, depth - 1) for n, _ in node.next_functions]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_label_smoothing_ends_in_torchs_scalar_products(reduction, weighted):
    # PyTorch's C++ mixes the two parts as `(1 - s) * nll + smooth * (s / n)`: each product
    # by a double is the Scalar overload's node, MulBackward1
    got = []
    for lib in (torch, ember):
        x, *_, w = _data(lib)
        out = lib.nn.functional.cross_entropy(x, lib.tensor([1, 0, 4, 2]), reduction=reduction,
                                              weight=w if weighted else None,
                                              label_smoothing=0.2)
        got.append(_names(out.grad_fn, 2))
    assert got[0] == got[1]
