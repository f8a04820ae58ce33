"""`partition`, `argpartition` and `topk` leave each line in the order MLX 0.32.4's CPU
kernel (`std::nth_element`) does: compared element for element (bit-exact: a permutation
of the input) on lines drawn with ties, NaNs and signed zeros, of lengths either side of
the insertion-sort cut-off and long enough to reach the heap-select fallback."""

import numpy as np
import pytest

import ember.mlx.core as mx
from ember.mlx.core import _nth_element as nth_module
from ember.mlx.core._nth_element import nth_element
from ember.ops import _stl_sort

mlx = pytest.importorskip("mlx.core")


def _lines(seed: int):
    """Arrays (as NumPy) of several dtypes and shapes, with repeated values."""
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 4, 5, 7, 8, 16, 33, 100):
        yield rng.integers(-4, 5, (3, n)).astype(np.int32)
        f = rng.standard_normal((2, n)).astype(np.float32)
        f[rng.random((2, n)) < 0.2] = np.nan
        f[rng.random((2, n)) < 0.2] = 0.0
        f[rng.random((2, n)) < 0.1] = -0.0
        yield f
        yield rng.integers(0, 3, (n, 2)).astype(np.float16)


def _same(x: np.ndarray, op: str, *args, **kwargs) -> None:
    """`op(x, *args, **kwargs)` element for element as MLX's."""
    ours = getattr(mx, op)(mx.array(x), *args, **kwargs)
    theirs = getattr(mlx, op)(mlx.array(x), *args, **kwargs)
    assert ours.dtype.size == theirs.dtype.size and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.array(ours), np.array(theirs), strict=True)
    # signed zeros are part of the order: compare the bits as well
    assert np.array(ours).tobytes() == np.array(theirs).tobytes()


@pytest.mark.parametrize("seed", [0, 1])
def test_partition_orders_as_mlx(seed):
    for x in _lines(seed):
        n = x.shape[-1]
        for kth in sorted({0, n // 2, n - 1, -1}):
            _same(x, "partition", kth)
            _same(x, "argpartition", kth)
        _same(x, "argpartition", 0, axis=0)
        _same(x, "argpartition", x.size // 3, axis=None)


@pytest.mark.parametrize("seed", [2, 3])
def test_topk_orders_as_mlx(seed):
    for x in _lines(seed):
        n = x.shape[-1]
        for k in sorted({0, 1, (n + 1) // 2, n}):
            _same(x, "topk", k)
        _same(x, "topk", x.shape[0], axis=0)  # the whole axis: untouched
        _same(x, "topk", 1, axis=None)


def _killer(n: int, kth: int) -> np.ndarray:
    """A line that drives nth_element's pivots to the worst case (McIlroy's adversary:
    values are fixed lazily, a not-yet-fixed one is larger than every fixed one, and the
    one last compared is fixed first), so the depth limit runs out."""
    val: list = [None] * n
    state = {"next": 0, "candidate": 0}

    def less(a: int, b: int) -> bool:
        if val[a] is None and val[b] is None:
            fix = a if a == state["candidate"] else b
            val[fix], state["next"] = state["next"], state["next"] + 1
        if val[a] is None:
            state["candidate"] = a
        elif val[b] is None:
            state["candidate"] = b
        return val[b] is None if val[a] is not None and val[b] is None else (
            val[a] is not None and val[a] < val[b])

    saved = nth_module._less
    nth_module._less = lambda v, by_index: less
    try:
        nth_element(list(range(n)), kth, by_index=False)
    finally:
        nth_module._less = saved
    for i in range(n):
        if val[i] is None:
            val[i], state["next"] = state["next"], state["next"] + 1
    return np.array(val, dtype=np.int32)


def test_heap_select_fallback_as_mlx(monkeypatch):
    monkeypatch.setitem(nth_module.NATIVE_MIN, "elements", 10**9)  # (the Python twin)
    heap_calls = []
    real = _stl_sort._heap_select
    monkeypatch.setattr(_stl_sort, "_heap_select", lambda *a: heap_calls.append(1) or real(*a))
    for n, kth in ((64, 32), (100, 50), (129, 70)):
        line = _killer(n, kth)
        before = len(heap_calls)
        _same(line, "partition", kth)
        _same(line, "argpartition", kth)
        assert len(heap_calls) > before, (n, kth)  # the fallback really ran


def test_nth_element_places_kth_and_splits():
    """The contract itself on a worked line: the kth in sorted place, smaller before it."""
    v = [5.0, 1.0, float("nan"), 4.0, 2.0, 3.0, 0.0]
    order = nth_element(v, 3, by_index=False)
    assert sorted(order) == list(range(7)) and v[order[3]] == 3.0
    assert all(v[i] < 3.0 for i in order[:3])
    assert all(v[i] >= 3.0 or v[i] != v[i] for i in order[4:])  # NaN counts as largest


def test_partition_values_differentiate_through_the_order():
    g = mx.grad(lambda a: (mx.topk(a, 2) * mx.array([1.0, 10.0])).sum())(
        mx.array([0.5, 3.0, -1.0, 2.0]))
    h = mlx.grad(lambda a: (mlx.topk(a, 2) * mlx.array([1.0, 10.0])).sum())(
        mlx.array([0.5, 3.0, -1.0, 2.0]))
    assert g.tolist() == h.tolist()


def test_topk_of_the_whole_axis_is_a_separate_array():
    """MLX hands back the input itself for k == length; writing into the result must
    still leave the input as it was."""
    a = mx.array([3, 1, 2])
    b = mx.topk(a, 3)
    b[0] = 9
    assert a.tolist() == [3, 1, 2] and b.tolist() == [9, 1, 2]


@pytest.mark.parametrize("seed", [0, 1])
def test_native_twin_orders_as_mlx(monkeypatch, seed):
    # csrc/mlx_select.c on every line the Python replay is checked on, and on the
    # adversarial lines that reach its heap-select fallback
    from ember import native

    if native.library("mlx_select") is None:
        pytest.skip("no native kernels here")
    monkeypatch.setitem(nth_module.NATIVE_MIN, "elements", 0)
    lines = list(_lines(seed)) + [_killer(n, kth) for n, kth in ((64, 32), (129, 70))]
    for x in lines:
        for kth in sorted({0, x.shape[-1] // 2, x.shape[-1] - 1}):
            _same(x, "partition", kth)
            _same(x, "argpartition", kth)
    _same(np.random.default_rng(seed).standard_normal((3, 5000)).astype(np.float32), "topk", 40)
