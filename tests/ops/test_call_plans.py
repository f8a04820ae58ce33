"""ops/_call_plans.py: a cache of checked calls' plans that forgets everything when full,
and calls past the limit still right (their checks taken again)."""

import numpy as np

import ember
from ember.ops import avg_pool
from ember.ops._call_plans import Plans


def test_plans_empty_themselves_when_full():
    plans = Plans(limit=3)
    for k in range(3):
        plans[k] = k
    assert len(plans) == 3
    plans[3] = 3
    assert dict(plans) == {3: 3}
    plans[3] = 4  # (a key again counts as a new plan: the cache is small, not exact)
    assert plans[3] == 4


def test_pooling_past_the_limit_is_unchanged():
    before = avg_pool._plans.limit
    avg_pool._plans.limit = 2
    try:
        for n in range(1, 6):  # (five shapes through a cache of two)
            x = ember.arange(n * 16, dtype=ember.float32).reshape(n, 1, 4, 4)
            want = x.numpy().reshape(n, 1, 2, 2, 2, 2).mean(axis=(3, 5))
            for _ in range(2):
                np.testing.assert_array_equal(ember.nn.functional.avg_pool2d(x, 2).numpy(),
                                              want)
            assert len(avg_pool._plans) <= 2
    finally:
        avg_pool._plans.limit = before
