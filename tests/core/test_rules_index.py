"""The forward-mode (jvp) and vmap (batch) rules of the indexing primitives: index (and
index_select), index_put, setitem, gather, scatter, nonzero, index_copy, scatter_reduce and
the masked ops, each checked on the public calls that bind it (tests/rule_checks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
from ember._core import BY_LOOP, MISSING, Family, batch_rules, jvp_rule, primitives
from ember.ops import index, index_ops, masked_ops, nonzero, setitem
from ember.ops.index_key import TENSOR_SLOT

RNG = np.random.default_rng(7)
# (the scatter reduce= cases call PyTorch's deprecated overload on purpose)
pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")


def f64(*shape):
    """Float64 values away from zero and from each other (no ties, no kinks)."""
    n = int(np.prod(shape))
    vals = (RNG.permutation(n) + 1) * 0.37 * RNG.choice([-1, 1], n)
    return ember.tensor(vals.reshape(shape), dtype=ember.float64)


def i64(values):
    return ember.tensor(values, dtype=ember.int64)


X = f64(4, 5)
X3 = f64(3, 4, 5)
V = f64(3, 5)
MASK = ember.tensor(RNG.random((4, 5)) > 0.5)
ROW_MASK = ember.tensor([True, False, True, True])
COL_MASK = ember.tensor([[True], [False], [True], [True]])
SET_TARGET = f64(4, 5)  # (written in place by the setitem case)
IDX = i64([2, 0, 3])
IDX2 = i64([[1, 0, 3, 2, 3], [3, 3, 0, 1, 2], [0, 2, 1, 3, 3]])  # (3, 5) for gather/scatter
PERM = i64([[1, 0, 2, 3, 0], [3, 2, 0, 1, 3], [0, 1, 3, 2, 1]])  # unique per column

# (name, call, args, primitives whose jvp rule is checked, whose batch rule is checked)
CASES = [
    ("x[idx]", lambda x: x[IDX], (X,), 1, 1),
    ("x[:, idx]", lambda x: x[:, i64([4, 4, 1])], (X,), 1, 1),
    ("x[2-d idx]", lambda x: x[i64([[0, 1], [3, 3]])], (X,), 1, 1),
    ("x[i, j] adjacent", lambda x: x[:, i64([0, 2]), i64([[1], [4]])], (X3,), 1, 1),
    ("x[i, :, j] apart", lambda x: x[i64([0, 2]), :, i64([[1], [4]])], (X3,), 1, 1),
    ("x[mask]", lambda x: x[MASK], (X,), 1, 1),
    ("x[row mask, idx]", lambda x: x[ROW_MASK, i64([0, 1, 4])], (X,), 1, 1),
    ("x[list]", lambda x: x[[1, 3]], (X,), 1, 1),
    ("take", lambda x: x.take(i64([[0, 7], [19, 3]])), (f64(20),), 1, 1),
    ("index_select", lambda x: x.index_select(1, i64([4, 0, 0])), (X,), 1, 1),
    ("index_select 0-d index", lambda x: x.index_select(0, i64(2)), (X,), 1, 1),
    ("index_select of 0-d", lambda x: x.index_select(0, i64([0])), (f64(),), 1, 1),
    ("index_put", lambda x, v: x.index_put((IDX,), v), (X, V), 1, 1),
    ("index_put accumulate", lambda x, v: x.index_put((i64([1, 1, 0]),), v, accumulate=True),
     (X, V), 1, 1),
    ("index_put 2 indices", lambda x, v: x.index_put((i64([0, 2]), i64([4, 1])), v),
     (X, f64(2)), 1, 1),
    ("index_put mask", lambda x, v: x.index_put((MASK,), v), (X, f64()), 1, 1),
    ("index_put basic key", lambda x, v: ember._core.bind(
        index.index_put_p, x, v, None, key=(slice(None), 1), accumulate=False), (X, f64(4)),
     1, 1),
    ("index_put apart", lambda x, v: ember._core.bind(
        index.index_put_p, x, v, i64([[0, 2], [1, 4]]),
        key=(TENSOR_SLOT, slice(None), TENSOR_SLOT), accumulate=False), (X3, f64(2, 4)), 1, 1),
    ("index_put apart into zeros", lambda v: index.put_into_zeros(
        (3, 4, 5), (slice(None), TENSOR_SLOT, TENSOR_SLOT), v, i64([[0, 2], [1, 1]])),
     (f64(3, 2),), 1, 1),
    ("gather", lambda x: x.gather(0, IDX2), (X,), 1, 1),
    ("gather dim 1", lambda x: x.gather(1, i64([[4, 0], [1, 1], [2, 3], [0, 0]])), (X,), 1, 1),
    ("gather of 0-d", lambda x: x.gather(0, i64([0, 0])), (f64(),), 1, 1),
    ("scatter", lambda x, s: x.scatter(0, PERM, s), (X, f64(3, 5)), 1, 1),
    ("scatter a bigger src", lambda x, s: x.scatter(1, i64([[4], [0]]), s), (X, V), 1, 1),
    ("scatter value", lambda x: x.scatter(0, PERM, 1.5), (X,), 1, 1),
    ("scatter_add", lambda x, s: x.scatter_add(0, IDX2, s), (X, f64(3, 5)), 1, 1),
    # (the deprecated reduce= overloads: no derivative in PyTorch, so the jvp rule refuses)
    ("scatter reduce=add", lambda x, s: x.scatter(0, IDX2, s, reduce="add"),
     (X, f64(3, 5)), 1, 1),
    ("scatter value reduce=multiply", lambda x: x.scatter(0, IDX2, 1.5, reduce="multiply"),
     (X,), 1, 1),
    ("scatter into zeros", lambda s: index.scatter_into_zeros((4, 5), 0, PERM, s),
     (f64(3, 5),), 1, 1),
    ("scatter of 0-d", lambda x, s: x.scatter_add(0, i64(0), s), (f64(), f64()), 1, 1),
    ("index_copy", lambda x, s: x.index_copy(0, IDX, s), (X, V), 1, 1),
    ("index_add", lambda x, s: x.index_add(1, i64([4, 4]), s, alpha=2), (X, f64(4, 2)), 1, 1),
    ("index_fill", lambda x: x.index_fill(1, i64([0, 3]), -1.25), (X,), 1, 1),
    ("index_fill tensor", lambda x, v: x.index_fill(0, i64([1]), v), (X, f64()), 1, 1),
    ("index_add of 0-d", lambda x, s: x.index_add(0, i64([0]), s), (f64(), f64()), 1, 1),
    ("masked_fill", lambda x: x.masked_fill(MASK, 2.5), (X,), 1, 1),
    ("masked_fill tensor", lambda x, v: x.masked_fill(COL_MASK, v), (X, f64()),
     1, 1),
    ("masked_fill broadcast", lambda x: x.masked_fill(MASK, 0.0), (f64(5),), 1, 1),
    ("masked_select", lambda x: x.masked_select(MASK), (X,), 1, 0),
    ("masked_scatter", lambda x, s: x.masked_scatter(MASK, s), (X, f64(20)), 1, 1),
    ("masked_scatter broadcast", lambda x, s: x.masked_scatter(COL_MASK, s),
     (f64(5), f64(4, 5)), 1, 1),
    ("nonzero", lambda x: x.nonzero(), (X,), 0, 0),
    ("setitem", lambda x, v: x.__setitem__(IDX, v), (SET_TARGET, V), 0, 0),
]
REDUCE_CASES = [
    (f"scatter_reduce {r} {'with' if s else 'without'} self",
     lambda x, src, r=r, s=s: x.scatter_reduce(0, IDX2, src, r, include_self=s),
     (X, f64(3, 5)), 1, 1)
    for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)
]
ALL = CASES + REDUCE_CASES


@pytest.mark.parametrize("name, fn, args, n_jvp, n_batch", ALL, ids=[c[0] for c in ALL])
def test_jvp_rules_match_finite_differences(name, fn, args, n_jvp, n_batch):
    assert check_jvp(fn, *args) == n_jvp


@pytest.mark.parametrize("name, fn, args, n_jvp, n_batch", ALL, ids=[c[0] for c in ALL])
def test_batch_rules_match_a_loop(name, fn, args, n_jvp, n_batch):
    for seed in range(3):  # (other batch axes, other inputs left unbatched)
        assert check_batch(fn, *args, seed=seed) == n_batch


AREA = (index, index_ops, masked_ops, nonzero, setitem)
AREA_PRIMITIVES = [
    index.index_p, index.index_put_p, setitem.setitem_p, index.gather_p, index.scatter_p,
    nonzero.nonzero_p, index_ops.index_copy_p, masked_ops.masked_fill_p,
    masked_ops.masked_select_p, masked_ops.masked_scatter_p,
]


def _defined_in_area(p) -> bool:
    fns = [m.kernel for m in p.members.values()] if isinstance(p, Family) else [p.kernel, p.impl]
    return any(getattr(f, "__module__", None) in {m.__name__ for m in AREA} for f in fns)


def test_the_area_has_ten_primitives_each_with_a_jvp_and_a_batch_entry():
    assert {p for p in primitives if _defined_in_area(p)} == set(AREA_PRIMITIVES)
    assert len(AREA_PRIMITIVES) == 10
    for p in AREA_PRIMITIVES:
        fns = list(p.members.values()) if isinstance(p, Family) else [None]
        for fn in fns:
            params = {} if fn is None else {"fn": fn}
            assert jvp_rule(p, params) is not MISSING, f"{p.name} {params} has no jvp entry"
        assert batch_rules.get(p, MISSING) is not MISSING, f"{p.name} has no batch entry"
    assert sorted(index.scatter_p.members) == ["scatter", "scatter_add", "scatter_legacy",
                                               "scatter_reduce", "scatter_value"]
    loops = sorted(p.name for p in AREA_PRIMITIVES if batch_rules[p] is BY_LOOP)
    assert loops == ["masked_select", "nonzero", "setitem"]


def area_primitives() -> list:
    return AREA_PRIMITIVES


def test_every_area_primitive_is_bound_by_some_case():
    seen = set()
    for _, fn, args, _, _ in ALL:
        for p, _, params in primitive_calls(fn, *args):
            seen.add(p.name)
            if "fn" in params:
                seen.add(params["fn"].name)
    assert {p.name for p in area_primitives()} | set(index.scatter_p.members) <= seen


def test_index_tensors_are_inputs_and_the_key_param_is_static():
    x = f64(4, 5)
    calls = primitive_calls(lambda t: t[IDX, 1:], x)
    calls += primitive_calls(lambda t: t[:, [0, 4]], x)
    calls += primitive_calls(lambda t: t[IDX[:2], i64([[1], [2]])], x)
    indexed = [(args, params) for p, args, params in calls if p is index.index_p]
    assert len(indexed) == 3
    for args, params in indexed:
        assert isinstance(args[1], ember.Tensor) and args[1].dtype == ember.int64
        assert not any(isinstance(k, (ember.Tensor, np.ndarray)) for k in params["key"])
    assert indexed[2][0][1].shape == (2, 2, 2)  # two indices, broadcast and stacked
