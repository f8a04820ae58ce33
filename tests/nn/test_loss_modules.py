"""Loss modules print and hold their options as PyTorch's do (the repr, the attributes, the
buffers and submodules), checked against torch in-process."""

import pytest
import torch

import ember

BUILD = {
    "CrossEntropyLoss": lambda nn, lib: nn.CrossEntropyLoss(weight=lib.ones(3), ignore_index=2,
                                                            label_smoothing=0.1),
    "BCEWithLogitsLoss": lambda nn, lib: nn.BCEWithLogitsLoss(pos_weight=lib.ones(3)),
    "MultiMarginLoss": lambda nn, lib: nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.ones(3)),
    "MultiLabelSoftMarginLoss": lambda nn, lib: nn.MultiLabelSoftMarginLoss(weight=lib.ones(3)),
    "KLDivLoss": lambda nn, lib: nn.KLDivLoss(reduction="batchmean", log_target=True),
    "GaussianNLLLoss": lambda nn, lib: nn.GaussianNLLLoss(full=True, eps=1e-3),
    "TripletMarginLoss": lambda nn, lib: nn.TripletMarginLoss(margin=0.3, p=1, swap=True),
    "TripletMarginWithDistanceLoss": lambda nn, lib: nn.TripletMarginWithDistanceLoss(
        margin=0.5, swap=True),
    "TripletMarginWithDistanceLoss custom": lambda nn, lib: nn.TripletMarginWithDistanceLoss(
        distance_function=nn.CosineSimilarity()),
}


def _describe(m):
    attrs = sorted(k for k in vars(m) if not k.startswith("_") and k != "training")
    return (repr(m), attrs, [n for n, _ in m.named_buffers()],
            [n for n, _ in m.named_modules()])


@pytest.mark.parametrize("name", BUILD)
def test_module_repr_and_state(name):
    t = _describe(BUILD[name](torch.nn, torch))
    e = _describe(BUILD[name](ember.nn, ember))
    assert e == t


def test_default_distance_is_a_pairwise_distance_module():
    m = ember.nn.TripletMarginWithDistanceLoss()
    assert isinstance(m.distance_function, ember.nn.PairwiseDistance)
    a, p, n = (ember.tensor([[0.0, 1.0], [2.0, -1.0]]) * s for s in (1.0, 0.5, -1.0))
    t_a, t_p, t_n = (torch.tensor([[0.0, 1.0], [2.0, -1.0]]) * s for s in (1.0, 0.5, -1.0))
    want = torch.nn.TripletMarginWithDistanceLoss()(t_a, t_p, t_n)
    # (pairwise distances of a few small float32 numbers: a rounding apart at most)
    assert abs(m(a, p, n).item() - want.item()) <= 1e-6 * abs(want.item())
