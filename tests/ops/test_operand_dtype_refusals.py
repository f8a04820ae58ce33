"""Refusals found by the image and time-series programs, against torch: histogram of a type
other than float and double, grid_sample of integers (its kernel refuses before the grid's
dtype is compared), diff with prepend/append of another rank."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import same_error, same_message

CALLS = {
    "histogram_uint8": lambda m: m.histogram(m.tensor([1, 2, 3], dtype=m.uint8)),
    "histogram_long_bins": lambda m: m.histogram(m.tensor([1, 2, 3]), bins=3),
    "histogram_half": lambda m: m.histogram(m.tensor([1.0, 2.0], dtype=m.float16)),
    "grid_sample_uint8": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, dtype=m.uint8), m.zeros(1, 2, 2, 2), align_corners=False),
    "grid_sample_long_long": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, dtype=m.int64), m.zeros(1, 2, 2, 2, dtype=m.int64),
        align_corners=False),
    "grid_sample_3d_uint8": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, 2, dtype=m.uint8), m.zeros(1, 2, 2, 2, 3), align_corners=False),
    "grid_sample_float_double": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), m.zeros(1, 2, 2, 2, dtype=m.float64), align_corners=False),
    "diff_prepend_rank": lambda m: m.diff(m.ones(2, 3), prepend=m.zeros(3)),
    "diff_append_rank": lambda m: m.diff(m.ones(3), append=m.tensor(0.0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_refusal_as_torch(name):
    same_message(CALLS[name], same_error(CALLS[name]))


def test_histogram_of_floats_still_counts():
    got = ember.histogram(ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64), 3)
    want = torch.histogram(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), 3)
    assert got.hist.tolist() == want.hist.tolist()
    # (the edges come from torch's linspace, whose last bit depends on its vector kernels)
    assert got.bin_edges.tolist() == pytest.approx(want.bin_edges.tolist(), rel=1e-15)
