"""The masked ops and scatter refuse as PyTorch does: which operand a broadcast clash names
first, and what an in-place op says when the mask cannot take self's shape."""

import warnings

import pytest
import torch

import ember

from helpers import raised, same_message, same_result

ROW = [True, False, True]


@pytest.mark.parametrize("call", [
    lambda L: L.arange(6).reshape(2, 3).masked_select(L.tensor([True, False])),
    lambda L: L.arange(2).masked_select(L.ones(2, 3, dtype=L.bool)),
    lambda L: L.zeros(2, 3).masked_fill(L.tensor([True, False]), 1.0),
    lambda L: L.zeros(2).masked_fill(L.ones(2, 3, dtype=L.bool), 1.0),
    lambda L: L.zeros(2, 3).masked_scatter(L.tensor([True, False]), L.ones(6)),
    lambda L: L.zeros(2).masked_scatter(L.ones(2, 3, dtype=L.bool), L.ones(6)),
    lambda L: L.zeros(2, 3).masked_scatter_(L.tensor([True, False]), L.ones(6)),
    lambda L: L.zeros(3).masked_scatter_(L.ones(2, 3, dtype=L.bool), L.ones(6)),
    lambda L: L.zeros(2).masked_fill_(L.ones(3, 2, dtype=L.bool), 1.0),
])
def test_masked_ops_name_the_mask_first_in_a_clash(call):
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(2, 3).masked_scatter_(L.tensor(ROW), L.arange(6.0)),
    lambda L: L.zeros(2, 3).masked_fill(L.tensor(ROW), 2.0),
    lambda L: L.zeros(3).masked_scatter(L.ones(2, 3, dtype=L.bool), L.arange(6.0)),
    lambda L: L.arange(3).masked_select(L.ones(2, 3, dtype=L.bool)),
])
def test_masks_that_broadcast_still_work(call):
    same_result(call)


def test_scatter_warns_of_the_tensor_reduce_before_refusing_its_name():
    # torch (2.13) warns, once per process, before it reads `reduce`: that warning may
    # already be spent in this worker, so only ember's order is checked, with its slate wiped
    from ember import _user_warnings

    _user_warnings._warned_once.discard(DEPRECATED)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="reduce argument must be either add or"):
            ember.zeros(2, 3).scatter(1, ember.tensor([[2]]), ember.ones(1, 1), reduce="max")
    assert [str(w.message) for w in seen] == [DEPRECATED]


DEPRECATED = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
              "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
              "reduction options.")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "float16"])
@pytest.mark.parametrize("call", [
    lambda L, d: L.zeros(2, 3).masked_scatter(L.ones(2, 3, dtype=d), L.ones(6)),
    lambda L, d: L.zeros(2, 3).masked_scatter_(L.ones(2, 3, dtype=d), L.ones(6)),
    lambda L, d: L.masked_scatter(L.zeros(2, 3), L.ones(2, 3, dtype=d), L.ones(6)),
    lambda L, d: L.zeros(2, 3).masked_fill(L.ones(2, 3, dtype=d), 1.0),
    lambda L, d: L.zeros(2, 3).masked_fill_(L.ones(2, 3, dtype=d), 1.0),
])
def test_a_non_bool_mask_is_named_as_pytorch_names_it(call, dtype):
    # masked_scatter spells the dtype as its ScalarType ("Float"), masked_fill as C ("float")
    same_message(lambda L: call(L, getattr(L, dtype)))


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("call", [
    # index_reduce's kernels: a dispatch over real dtypes named per include_self ...
    lambda L, s: L.ones(3, dtype=L.bool).index_reduce(0, L.tensor([0, 2]),
                                                     L.ones(2, dtype=L.bool), "amax",
                                                     include_self=s),
    lambda L, s: L.ones(3, dtype=L.complex64).index_reduce_(0, L.tensor([0, 2]),
                                                           L.ones(2, dtype=L.complex64),
                                                           "prod", include_self=s),
    # ... then bounds: without self, a first pass that wraps negatives, in its own words
    lambda L, s: L.ones(2, 3).index_reduce(1, L.tensor([0, 3]), L.ones(2, 2), "mean",
                                           include_self=s),
    lambda L, s: L.ones(2, 3).index_reduce(1, L.tensor([-1, 0]), L.ones(2, 2), "amin",
                                           include_self=s),
    lambda L, s: L.ones(2, 3).index_reduce_(1, L.tensor([1, -4]), L.ones(2, 2), "prod",
                                            include_self=s),
])
def test_index_reduce_kernel_refusals(call, include_self):
    got = raised(call, ember, include_self, quiet=True)
    assert got is not None and got == raised(call, torch, include_self, quiet=True)
