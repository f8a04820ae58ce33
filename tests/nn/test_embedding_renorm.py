"""`embedding_renorm_` and `max_norm` in `embedding` / `embedding_bag` against torch 2.13:
PyTorch's kernel checks the weight's rank and the indices' dtype, then walks the distinct
indices in sorted order, picking each row with `select` (a negative index wraps; one past the
end raises select's IndexError after the rows before it were rescaled) and multiplying it by
max_norm / (norm + 1e-7) when its norm is larger."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, same_message

NORM = ("the row norm is a vectorised reduction (a square root for p=2, a power for other "
        "p): its last bit, and so the scale's, depends on the summation order")


def _renorm_both(weight: np.ndarray, ids, max_norm: float, p: float, *, how: str):
    outs = []
    for lib in (ember, torch):
        w = lib.tensor(weight)
        idx = lib.tensor(ids)
        if how == "op":
            assert lib.embedding_renorm_(w, idx, max_norm, p) is w
        elif how == "embedding":
            lib.nn.functional.embedding(idx, w, max_norm=max_norm, norm_type=p)
        else:
            offsets = lib.tensor([0, 1])
            lib.nn.functional.embedding_bag(idx.reshape(-1), w, offsets, max_norm=max_norm,
                                            norm_type=p)
        outs.append(w)
    return outs


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf"), -1.0])
@pytest.mark.parametrize("how", ["op", "embedding", "bag"])
def test_rows_over_max_norm_are_rescaled(p, how):
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((7, 5)) * 2).astype(np.float32)
    weight[3] = 0.01  # a row under the bound stays as it is
    got, want = _renorm_both(weight, [[4, 1, 3], [1, 6, 0]], 1.5, p, how=how)
    assert_ulp(got, want, 2, NORM)
    np.testing.assert_array_equal(got.numpy()[[2, 5]], weight[[2, 5]])  # rows not named


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_scale_in_their_opmath_type(dtype):
    weight = np.array([[3.0, 4.0, 0.0], [0.25, 0.5, 0.125], [1.0, 1.0, 1.0]], dtype=dtype)
    got, want = _renorm_both(weight, [0, 2], 1.0, 2.0, how="op")
    assert got.dtype == ember.float64 if dtype == np.float64 else ember.float16
    assert_ulp(got, want, 1, NORM)


def test_negative_indices_wrap_and_past_the_end_raises_after_earlier_rows():
    weight = np.array([[3.0, 4.0], [1.0, 1.0], [6.0, 8.0], [0.0, 2.0]], dtype=np.float32)
    for ids in ([-1, 0], [0, 2, 4], [-5, 1], [-4, 0, 9]):
        msgs, rows = [], []
        for lib in (ember, torch):
            w = lib.tensor(weight)
            try:
                lib.embedding_renorm_(w, lib.tensor(ids), 1.0, 2.0)
                msgs.append(None)
            except IndexError as e:
                msgs.append(str(e))
            rows.append(w.numpy())
        assert msgs[0] == msgs[1]
        np.testing.assert_allclose(rows[0], rows[1], rtol=1e-6)  # (see NORM)


def test_embedding_with_max_norm_renorms_before_its_range_check():
    """A negative index is renormalised (it wraps in select), then embedding refuses it."""
    weight = np.array([[3.0, 4.0], [1.0, 1.0], [6.0, 8.0]], dtype=np.float32)
    ws = []
    for lib in (ember, torch):
        w = lib.tensor(weight)
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.nn.functional.embedding(lib.tensor([-1, 1]), w, max_norm=1.0)
        ws.append(w.numpy())
    np.testing.assert_allclose(ws[0], ws[1], rtol=1e-6)
    assert ws[0][2, 0] != 6.0


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.embedding(L.tensor([5]), L.ones(5, 3), max_norm=1.0),
    lambda L: L.nn.functional.embedding_bag(L.tensor([7]), L.ones(5, 3), L.tensor([0]),
                                            max_norm=1.0),
    lambda L: L.nn.Embedding(4, 2, max_norm=1.0)(L.tensor([[0, 4]])),
])
def test_past_the_end_raises_selects_index_error(call):
    assert "select(): index" in same_message(call, IndexError)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.embedding(L.tensor([1.0]), L.ones(5, 3), max_norm=1.0),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1.0]), L.ones(5, 3), L.tensor([0]),
                                            max_norm=1.0),
    lambda L: L.nn.functional.embedding(L.tensor([1]), L.ones(2, 2, 2), max_norm=1.0),
    lambda L: L.embedding_renorm_(L.ones(4), L.tensor([1]), 1.0, 2.0),
    lambda L: L.embedding_renorm_(L.ones(4, 2), L.tensor([True]), 1.0, 2.0),
    lambda L: L.embedding_renorm_(L.ones(4, 2, requires_grad=True), L.tensor([1]), 1.0, 2.0),
])
def test_argument_checks_name_embedding_renorm(call):
    same_message(call)


def test_embedding_bag_checks_in_torch_order():
    w = lambda L: L.ones(5, 3)  # noqa: E731
    same_message(lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), w(L), mode="max", sparse=True), ValueError)
    same_message(lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), w(L), mode="max", scale_grad_by_freq=True), ValueError)
    same_message(lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(5, 3, 1)), ValueError)
    # the shape of per_sample_weights is checked before the mode
    for lib in (ember, torch):  # (the message prints Size, whose repr names the library)
        with pytest.raises(ValueError, match="If per_sample_weights"):
            lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), w(lib), mode="bad",
                                            per_sample_weights=lib.ones(3))
    # ... and its use with a mode other than sum after the renorm
    ws = []
    for lib in (ember, torch):
        weight = lib.full((5, 3), 2.0)
        with pytest.raises(NotImplementedError):
            lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), weight, mode="mean",
                                            max_norm=1.0, per_sample_weights=lib.ones(1, 2))
        ws.append(weight.numpy())
    np.testing.assert_allclose(ws[0], ws[1], rtol=1e-6)
    assert ws[0][1, 0] < 1.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("p", [2.0, 1.0, float("inf")])
def test_low_precision_scale_is_rounded_to_the_weights_dtype(dtype, p):
    """PyTorch rounds the double scale max_norm / (norm + 1e-7) to float16 / bfloat16 before
    the product (a float32 scale moves about 3 rows in 4 by one unit here). The row norm is
    a float32-accumulated reduction rounded to the 16-bit dtype, and the product one rounded
    multiplication: bit for bit."""
    rng = np.random.default_rng(1)
    base = (rng.standard_normal((300, 7)) * 3).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        w = lib.tensor(base).to(getattr(lib, dtype))
        lib.embedding_renorm_(w, lib.arange(300), 1.3, p)
        outs.append(w.float().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
