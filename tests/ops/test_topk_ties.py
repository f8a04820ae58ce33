"""topk picks the indices PyTorch's CPU kernel picks where the values do not decide them:
ties among the top k or at the k-th, NaNs, and `sorted=False` (PyTorch runs libstdc++'s
nth_element / partial_sort / sort on (value, index) pairs; ember replays those steps for such
rows, ops/_stl_sort.py). Sorting ops on bfloat16 order NaN last, as PyTorch does."""

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int8"]


def _case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 150))
    k = int(rng.integers(0, n + 1))
    if rng.random() < 0.4:
        k = min(k, max(1, n // 64))  # partial_sort's range (k * 64 <= n)
    vals = rng.integers(-3, int(rng.integers(-2, 6)), (int(rng.integers(1, 4)), n)).astype(float)
    dtype = DTYPES[seed % len(DTYPES)]
    if not dtype.startswith("int") and rng.random() < 0.3:
        vals[rng.random(vals.shape) < 0.2] = np.nan
    if rng.random() < 0.2:
        vals = vals + rng.random(vals.shape)  # distinct values: the fast path
    return vals, dtype, k, bool(rng.random() < 0.5), bool(rng.random() < 0.7), seed % 2


@pytest.mark.parametrize("seed", range(120))
def test_topk_indices_match_torch(seed):
    vals, dtype, k, largest, srt, dim = _case(seed)
    got = []
    for m in (ember, torch):
        x = m.tensor(vals).to(getattr(m, dtype))
        x = x.T if dim == 0 else x
        r = m.topk(x, k, dim=dim, largest=largest, sorted=srt)
        # (exact: integers, and values copied from the input)
        got.append((r.indices.tolist(), r.values.double().numpy().tolist()))
    np.testing.assert_array_equal(np.array(got[0][0]), np.array(got[1][0]))
    np.testing.assert_array_equal(np.array(got[0][1]), np.array(got[1][1]))


def test_topk_of_a_long_row_with_ties_matches_torch():
    vals = np.repeat(np.arange(40.0), 50)  # 2000 values, each 50 times: partial_sort and
    np.random.default_rng(0).shuffle(vals)  # nth_element paths both see ties
    for k in (5, 40, 100):
        got = [m.topk(m.tensor(vals), k).indices.tolist() for m in (ember, torch)]
        assert got[0] == got[1]


def _ordered(m, op, x):
    if op in ("sort", "sort_desc"):
        return x.sort(descending=op == "sort_desc")
    if op == "kthvalue":
        return x.kthvalue(2)
    if op == "topk":
        return x.topk(3)
    return ({"argsort": lambda: x.argsort(stable=True), "unique": x.unique,
             "msort": lambda: m.msort(x), "searchsorted": lambda: m.searchsorted(
                 m.tensor([1.0, 2.0, 3.0]).to(m.bfloat16), x)}[op](),)


@pytest.mark.parametrize("op", ["sort", "sort_desc", "argsort", "kthvalue", "unique",
                                "msort", "topk", "searchsorted"])
def test_bfloat16_orders_nan_last_as_torch(op):
    v = [1.0, float("nan"), 3.0, 2.0, float("nan"), 1.0]
    got = []
    for m in (ember, torch):
        x = m.tensor(v).to(m.bfloat16)
        got.append([t.double().numpy().tolist() for t in _ordered(m, op, x)])
    assert repr(got[0]) == repr(got[1])  # (NaN in the same places)


@pytest.mark.parametrize("seed", range(60))
def test_kthvalue_index_among_ties_follows_atens_quickselect(seed):
    # kthvalue runs ATen's own quickselect (not nth_element): among equal values (and among
    # NaNs) the index it returns is where that partition leaves it, not the first one.
    rng = np.random.default_rng(1000 + seed)
    shape = [int(rng.integers(1, 5)), int(rng.integers(1, 40)), int(rng.integers(1, 4))]
    dim = int(rng.integers(-3, 3))
    vals = rng.integers(0, int(rng.integers(1, 6)), shape).astype(float)
    dtype = DTYPES[seed % len(DTYPES)]
    if not dtype.startswith("int") and rng.random() < 0.4:
        vals[rng.random(shape) < 0.2] = np.nan
    k = int(rng.integers(1, shape[dim] + 1))
    keepdim = bool(seed % 2)
    e = ember.kthvalue(ember.tensor(vals).to(getattr(ember, dtype)), k, dim, keepdim)
    t = torch.kthvalue(torch.tensor(vals).to(getattr(torch, dtype)), k, dim, keepdim)
    assert e.indices.tolist() == t.indices.tolist()
    np.testing.assert_array_equal(e.values.float().numpy(), t.values.float().numpy())


def test_k_and_dim_must_be_ints():
    from helpers import same_message

    x = lambda L: L.arange(10.0)  # noqa: E731
    for call in (lambda L: L.topk(x(L), 2.0), lambda L: L.topk(x(L), True),
                 lambda L: L.kthvalue(x(L), 1.5), lambda L: L.kthvalue(x(L), 1, 0.5),
                 lambda L: L.kthvalue(x(L), 1, True), lambda L: L.topk(x(L), 2, 0.0)):
        same_message(call, TypeError)
    assert ember.topk(ember.arange(5.0), np.int64(2)).indices.tolist() == [4, 3]
