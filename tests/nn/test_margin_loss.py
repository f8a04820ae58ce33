"""multi_margin_loss and multilabel_margin_loss against torch: values, output shapes and
dtypes for every reduction and input rank, input gradients (a hinge at exactly 0 passes
none, as in PyTorch's kernel), the kernel's node name, and its checks' exceptions."""

import pytest
import torch

import ember

from helpers import assert_same

TAGS = [[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [0, 1, 2, 3, 4], [4, 2, -1, 3, 3]]


def _run(lib, fn, x, dtype):
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, xt)
    (g,) = lib.autograd.grad(out.sum(), xt)
    return out, g, type(out.grad_fn).__name__


def _compare(fn, x, dtype="float32"):
    (t, tg, tname), (e, eg, ename) = (_run(lib, fn, x, dtype) for lib in (torch, ember))
    # float32 sums of up to C*C hinge terms, added in another order than the kernel's loop
    assert_same(e, t, rtol=1e-6, atol=1e-7)
    assert_same(eg, tg, rtol=1e-6, atol=1e-7)
    assert ename == tname


X = torch.randn(4, 5, generator=torch.Generator().manual_seed(0)).tolist()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multi_margin_matches_torch(reduction, p, weighted, dtype):
    def fn(lib, x):
        w = lib.tensor([1.0, 2.0, 0.5, 1.0, 1.5], dtype=x.dtype) if weighted else None
        return lib.nn.functional.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]), p=p, margin=0.8,
                                                   weight=w, reduction=reduction)
    _compare(fn, X, dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("target", [lambda lib: lib.tensor(2), lambda lib: lib.tensor([2])])
def test_multi_margin_vector_input_shape_follows_target(reduction, target):
    _compare(lambda lib, x: lib.nn.functional.multi_margin_loss(x, target(lib),
                                                                reduction=reduction), X[0])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_margin_matches_torch(reduction, dtype):
    _compare(lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x, lib.tensor(TAGS), reduction=reduction), X, dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_vector_and_scalar_input(reduction):
    _compare(lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x, lib.tensor(TAGS[0]), reduction=reduction), X[0])
    _compare(lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x, lib.tensor(0), reduction=reduction), 0.3)


def test_hinge_at_zero_passes_no_gradient():
    x = [[0.5, 0.5, -0.5, 1.5, 0.0]]  # z = 1 - 0.5 + (-0.5) = 0 exactly for class 2
    _compare(lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0])), x)
    _compare(lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x, lib.tensor([[0, -1, 0, 0, 0]])), x)


def test_module_forms():
    for mod in ("MultiMarginLoss", "MultiLabelMarginLoss"):
        def fn(lib, x, mod=mod):
            t = lib.tensor([1, 0, 4, 2]) if mod == "MultiMarginLoss" else lib.tensor(TAGS)
            return getattr(lib.nn, mod)(reduction="none")(x, t)
        _compare(fn, X)


BAD = {
    "mm target 2-d": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor(TAGS)),
    "mm target short": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 2])),
    "mm target float": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1.0, 0, 4, 2])),
    "mm target int32": lambda F, lib, x: F.multi_margin_loss(
        x, lib.tensor([1, 0, 4, 2], dtype=lib.int32)),
    "mm target range": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 5, 2])),
    "mm target neg": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, -1, 2])),
    "mm 3-d input": lambda F, lib, x: F.multi_margin_loss(x.view(4, 5, 1),
                                                          lib.tensor([1, 0, 4, 2])),
    "mm p=3": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]), p=3),
    "mm weight size": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]),
                                                            weight=lib.ones(3)),
    "mm weight 2-d": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]),
                                                           weight=lib.ones(5, 1)),
    "mm weight grad": lambda F, lib, x: F.multi_margin_loss(
        x, lib.tensor([1, 0, 4, 2]), weight=lib.ones(5, requires_grad=True)),
    "mm int input": lambda F, lib, x: F.multi_margin_loss(x.long(), lib.tensor([1, 0, 4, 2])),
    "mm reduction": lambda F, lib, x: F.multi_margin_loss(x, lib.tensor([1, 0, 4, 2]),
                                                          reduction="avg"),
    "mlm target cols": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS)[:, :3]),
    "mlm target rows": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS)[:3]),
    "mlm target 1-d": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS[0])),
    "mlm vector 2-d target": lambda F, lib, x: F.multilabel_margin_loss(x[0],
                                                                       lib.tensor(TAGS)[:1]),
    "mlm target float": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS).float()),
    "mlm target int32": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS).int()),
    "mlm target range": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS) + 1),
    "mlm target below -1": lambda F, lib, x: F.multilabel_margin_loss(x, lib.tensor(TAGS) - 1),
    "mlm 3-d input": lambda F, lib, x: F.multilabel_margin_loss(
        x.view(4, 5, 1), lib.tensor(TAGS).view(4, 5, 1)),
    "mm half input": lambda F, lib, x: F.multi_margin_loss(x.half(), lib.tensor([1, 0, 4, 2])),
    "mlm bfloat16 input": lambda F, lib, x: F.multilabel_margin_loss(x.bfloat16(),
                                                                    lib.tensor(TAGS)),
    "mlm int input": lambda F, lib, x: F.multilabel_margin_loss(x.long(), lib.tensor(TAGS)),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_raises_like_torch(case):
    caught = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            BAD[case](lib.nn.functional, lib, lib.tensor(X))
        caught.append(info.value)
    t, e = caught
    assert type(e).__name__ == type(t).__name__
    assert str(e) == str(t)
