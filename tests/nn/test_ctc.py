"""ctc_loss / nn.CTCLoss against torch: argument checks (order, type, words), unbatched
input, zero_infinity's node."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same

LP = np.log(np.random.default_rng(0).dirichlet(np.ones(3), (4, 2)))  # (T=4, N=2, C=3)
PADDED = [[1, 2], [1, 1]]


def _same_error(fn):
    got = []
    for m in (ember, torch):
        with pytest.raises(Exception) as err:
            fn(m, m.nn.functional)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, 5], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, -1], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, 4], [2, 3]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, 4], [2, -1]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor([1, 2, 1]), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor([PADDED]), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED * 2), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, 4], [2]),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), [4, 4], [2, 2], blank=3),
    lambda m, F: F.ctc_loss(m.tensor(LP), m.tensor(PADDED), m.tensor([4, 4]),
                            m.tensor([2.0, 2.0])),
    lambda m, F: F.ctc_loss(m.tensor(LP).half(), m.tensor(PADDED), [4, 5], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP).bfloat16(), m.tensor(PADDED), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP).half(), m.tensor(PADDED), [4, 5], [2, 2],
                            reduction="avg"),
    lambda m, F: m.nn.CTCLoss(reduction="avg")(m.tensor(LP), m.tensor(PADDED), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.tensor(LP)[:, 0], m.tensor([1, 2, 1]), [4], [2]),
    lambda m, F: F.ctc_loss(m.tensor(LP)[0], m.tensor(PADDED), [4, 4], [2, 2]),
    # empty log-probabilities (no time step, no sample, no class; unbatched): refused before
    # the shape checks, after the dtype's
    lambda m, F: F.ctc_loss(m.zeros(0, 2, 3), m.tensor(PADDED), [0, 0], [2, 2]),
    lambda m, F: F.ctc_loss(m.zeros(4, 0, 3), m.zeros(0, dtype=m.long), [], []),
    lambda m, F: F.ctc_loss(m.zeros(4, 2, 0), m.tensor(PADDED), [4, 4], [2, 2]),
    lambda m, F: F.ctc_loss(m.zeros(0, 3), m.tensor([1, 2]), [0], [2]),
    lambda m, F: F.ctc_loss(m.zeros(0, 2, 3, dtype=m.int32), m.tensor(PADDED), [0, 0], [2, 2]),
])
def test_ctc_loss_checks_match_torch(call):
    _same_error(call)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_unbatched_concatenated_and_zero_infinity(reduction):
    def run(m):
        F = m.nn.functional
        x = m.tensor(LP, requires_grad=True)
        # the second sample needs 5 steps for 3 labels with a repeat: infinite loss
        r = F.ctc_loss(x, m.tensor([1, 2, 1, 1, 1]), [4, 4], [2, 3], reduction=reduction,
                       zero_infinity=True)
        r.sum().backward()
        u = F.ctc_loss(m.tensor(LP)[:, 0], m.tensor([1, 2]), [4], [2], reduction=reduction)
        return r, x.grad, u, type(r.grad_fn).__name__
    e, t = run(ember), run(torch)
    assert_same(e[:3], t[:3])
    assert e[3] == t[3]
