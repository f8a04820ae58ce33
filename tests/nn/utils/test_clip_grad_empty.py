"""Clipping before any backward (no parameter has a .grad): clip_grad_norm_ returns a zero
norm, while clip_grad_value_ fails as torch's device grouping does on an empty list."""

import pytest
import torch

import ember

from helpers import assert_same, same_message


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value_without_grads_raises_torchs_error(foreach):
    msg = same_message(lambda L: L.nn.utils.clip_grad_value_(
        L.nn.Linear(2, 2).parameters(), 1.0, foreach=foreach))
    assert msg.startswith("Expected !nested_tensorlist[0].empty() to be true")
    same_message(lambda L: L.nn.utils.clip_grad_value_([], 0.5))
    same_message(lambda L: L.nn.utils.clip_grad_value_(L.zeros(3, requires_grad=True), 0.5))


def test_clip_grad_norm_without_grads_is_zero_and_value_clips_those_present():
    def run(L):
        a, b = L.nn.Parameter(L.ones(3)), L.nn.Parameter(L.ones(2))
        norm = L.nn.utils.clip_grad_norm_([a, b], 1.0)
        b.grad = L.tensor([3.0, -0.25])
        L.nn.utils.clip_grad_value_([a, b], 0.5)  # a has no grad: skipped
        return norm, b.grad, a.grad is None

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)
