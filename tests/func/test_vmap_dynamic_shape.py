"""vmap over ops whose output shape depends on the values: PyTorch refuses them (a batched
input to nonzero, unique, unique_consecutive, one-argument where; a batched boolean mask in
indexing or masked_select) in its own words, and runs argwhere once per example; ember does
the same, where it stacked each example's result (or failed inside stack) before."""

from __future__ import annotations

import warnings

import pytest
import torch

import ember

CASES = {
    "nonzero": (lambda m, x, mk, v: x.nonzero(), "x"),
    "nonzero_as_tuple": (lambda m, x, mk, v: x.nonzero(as_tuple=True), "x"),
    "where_one_argument": (lambda m, x, mk, v: m.where(x > 0), "x"),
    "unique": (lambda m, x, mk, v: x.unique(), "x"),
    "unique_dim": (lambda m, x, mk, v: m.unique(x, dim=0), "x"),
    "unique_consecutive": (lambda m, x, mk, v: m.unique_consecutive(x), "x"),
    "batched_mask_index": (lambda m, x, mk, v: x[x > 0], "x"),
    "batched_mask_only": (lambda m, b, mk, v: v[b], "mask"),
    "batched_mask_select": (lambda m, x, mk, v: m.masked_select(x, x > 0), "x"),
    "batched_mask_only_select": (lambda m, b, mk, v: m.masked_select(v, b), "mask"),
    # allowed: the mask is the same for every example, or the op runs per example
    "unbatched_mask_index": (lambda m, x, mk, v: x[mk], "x"),
    "unbatched_mask_select": (lambda m, x, mk, v: m.masked_select(x, mk), "x"),
    "argwhere_equal_sizes": (lambda m, x, mk, v: m.argwhere(x * 0 + 1), "x"),
}


def _outcome(m, name):
    fn, over = CASES[name]
    x = m.tensor([[1.0, 0, 2, 0], [0, 0, 3, 4], [5, 6, 7, 8]])
    mk, v = m.tensor([True, False, True, True]), m.tensor([1.0, 2, 3, 4])
    arg = x if over == "x" else x > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (per-example fallbacks warn in both)
        try:
            r = m.vmap(lambda a: fn(m, a, mk, v))(arg)
        except RuntimeError as e:
            return "raises", str(e)
    return "returns", r.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_a_dynamic_shape_op_as_torch(name):
    assert _outcome(ember, name) == _outcome(torch, name)


def test_bincount_runs_once_per_example_as_torch():
    """PyTorch's fallback runs bincount per example and stacks (refusing unequal lengths);
    ember read the batched input's values up front and failed."""
    for m in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = m.vmap(m.bincount)(m.tensor([[1, 2, 1], [0, 2, 1]])).tolist()
            wide = m.vmap(lambda a, m=m: m.bincount(a, minlength=5))(
                m.tensor([[1, 2, 2], [0, 0, 3]]))
            errors = []
            for bad in ([[1, 2, 2], [0, 0, 3]], [[1, -2, 1], [0, 0, 1]]):
                with pytest.raises(RuntimeError) as e:
                    m.vmap(m.bincount)(m.tensor(bad))
                errors.append(str(e.value))
        got = (same, wide.tolist(), errors)
        if m is torch:
            want = got
    assert got == want
