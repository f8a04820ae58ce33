"""histogram and histogramdd (ops/histogram.py) against torch: counted and given bins,
ranges, weights, density, the edge cases of binning (values on edges, NaN, equal min and max),
16-bit floats with given edges, and the errors."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, same_message


def both(call):
    """call(L) in ember and torch: the same histogram (exact counts; a density in float32
    may differ by an ulp, its total being summed in another order) and the same edges."""
    e, t = call(ember), call(torch)
    assert type(e).__name__ == type(t).__name__
    assert_same(e.hist, t.hist, rtol=2e-7, atol=0)
    if type(t).__name__ == "histogram":
        assert_same(e.bin_edges, t.bin_edges, rtol=0, atol=0)
        return
    assert isinstance(e.bin_edges, tuple) and len(e.bin_edges) == len(t.bin_edges)
    for a, b in zip(e.bin_edges, t.bin_edges):
        assert_same(a, b, rtol=0, atol=0)  # (linspace: single correctly-rounded ops)


rng = np.random.default_rng(0)
POINTS = rng.normal(size=(200, 3)).astype(np.float32)
POINTS[::17, 1] = np.nan


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins", [1, 4, 7, (2, 3, 5), [1, 9, 2]], ids=str)
def test_counted_bins(dtype, bins):
    pts = POINTS.astype(dtype)
    rng_ = [-1.0, 1.0, -2.5, 0.5, 0.0, 3.0]
    both(lambda L: L.histogramdd(L.tensor(pts), bins=bins, range=rng_))
    both(lambda L: L.histogramdd(L.tensor(pts), bins=bins, range=rng_, density=True))
    w = rng.uniform(0, 2, 200).astype(dtype)
    both(lambda L: L.histogramdd(L.tensor(pts), bins=bins, range=rng_, weight=L.tensor(w)))
    clean = np.nan_to_num(pts)  # (without a range, the data's own range must be finite)
    both(lambda L: L.histogramdd(L.tensor(clean), bins))
    both(lambda L: L.histogramdd(L.tensor(clean).view(10, 20, 3), bins, density=True))


def test_values_on_the_edges_and_outside():
    # values exactly on interior edges, on the closing right edge, and outside the range
    x = np.array([[0.0, 0.1], [0.2, 0.3], [0.3, 0.7], [1.0, 1.0], [-0.1, 0.5], [0.6, 1.1],
                  [0.7, 0.9], [0.9, 0.0]], dtype=np.float32)
    for bins in (3, 5, 10, 30):
        both(lambda L, b=bins: L.histogramdd(L.tensor(x), bins=b, range=[0.0, 1.0, 0.0, 1.0]))
        both(lambda L, b=bins: L.histogramdd(L.tensor(x), bins=b))
    ints = np.arange(40, dtype=np.float64).reshape(20, 2) % 7
    both(lambda L: L.histogramdd(L.tensor(ints), bins=7))


def test_edges_given_as_tensors():
    e0, e1 = [-1.0, -0.2, 0.0, 0.3, 2.0], [-2.0, 2.0]
    e2 = [0.0, 0.0, 1.0]  # (a repeated edge: an empty bin before it)
    for dtype in ("float32", "float64"):
        pts = POINTS.astype(dtype)
        w = np.linspace(0, 1, 200).astype(dtype)
        for kw in ({}, {"density": True}, {"weight": True}):
            def call(L, kw=kw, w=w, dtype=dtype, pts=pts):
                args = {k: v for k, v in kw.items() if k != "weight"}
                if "weight" in kw:
                    args["weight"] = L.tensor(w)
                bins = [L.tensor(np.array(e, dtype)) for e in (e0, e1, e2)]
                return L.histogramdd(L.tensor(pts), bins=bins, **args)
            both(call)


def test_degenerate_inputs():
    both(lambda L: L.histogramdd(L.ones(5, 2), bins=3))  # (min == max: widened by 0.5)
    both(lambda L: L.histogramdd(L.zeros(0, 2), bins=2))  # (no points: range [0, 1])
    both(lambda L: L.histogramdd(L.tensor([[1.0, 2.0]]), bins=[2, 1]))
    both(lambda L: L.histogramdd(L.tensor([[0.0, 1.0]]), bins=[L.tensor([2.0, 0.0]),
                                                               L.tensor([0.0, 9.0])]))
    both(lambda L: L.histogramdd(L.tensor(POINTS[:, :1]), bins=4, range=[-1.0, 1.0]))


def test_grad_flags_follow_torch():
    for L in (ember, torch):
        x = L.tensor(np.nan_to_num(POINTS)).requires_grad_()
        r = L.histogramdd(x, bins=2)
        assert r.hist.requires_grad and all(e.requires_grad for e in r.bin_edges)
    msg = same_message(lambda L: L.histogramdd(
        L.tensor(np.nan_to_num(POINTS)).requires_grad_(), bins=2).hist.sum().backward())
    assert msg == "derivative for aten::_histogramdd_from_bin_cts is not implemented"


def test_errors_in_torch_words():
    x = lambda L: L.tensor(np.nan_to_num(POINTS[:10]))  # noqa: E731
    cases = [
        lambda L: L.histogramdd(x(L), bins=[3, 2]),
        lambda L: L.histogramdd(x(L), bins=2, range=[0.0, 1.0]),
        lambda L: L.histogramdd(x(L), bins=2, weight=L.ones(3)),
        lambda L: L.histogramdd(x(L), bins=2, weight=L.ones(10, dtype=L.float64)),
        lambda L: L.histogramdd(x(L), bins=2, range=[1.0, 0.0, 0.0, 1.0, 0.0, 1.0]),
        lambda L: L.histogramdd(x(L), bins=2, range=[0.0, float("inf"), 0.0, 1.0, 0.0, 1.0]),
        lambda L: L.histogramdd(L.tensor([[float("nan"), 1.0]]), bins=2),
        lambda L: L.histogramdd(x(L), bins=0),
        lambda L: L.histogramdd(x(L), bins=[2, -1, 2]),
        lambda L: L.histogramdd(L.ones(3), bins=2),
        lambda L: L.histogramdd(x(L), bins=[L.tensor([0.0, 1.0])]),
        lambda L: L.histogramdd(x(L), bins=[L.tensor([0.0, 1.0])] * 2 + [L.tensor([[0.0]])]),
        lambda L: L.histogramdd(x(L), bins=[L.tensor([0.0, 1.0])] * 2 + [L.tensor([0.0])]),
        lambda L: L.histogramdd(x(L), bins=[L.tensor([0.0, 1.0])] * 2 + [L.tensor([0.0]).double()]),
        lambda L: L.histogramdd(L.ones(3, 2, dtype=L.long), bins=[L.tensor([0, 2])] * 2),
    ]
    for call in cases:
        same_message(call)
    for dtype in ("long", "half", "bfloat16"):
        same_message(lambda L, d=dtype: L.histogramdd(L.ones(3, 2, dtype=getattr(L, d)), bins=2),
                     NotImplementedError)
    same_message(lambda L: L.histogramdd(L.tensor(3.0), bins=2), IndexError)
    same_message(lambda L: L.histogramdd(x(L), bins=[L.tensor([0.0, 1.0]), 2]), TypeError)
    for bad in (2.5, lambda L: L.tensor([0.0, 1.0])):
        same_message(lambda L, bad=bad: L.histogramdd(x(L), bins=bad(L) if callable(bad) else bad),
                     TypeError)


def test_exported_like_torch():
    assert ember.return_types.histogramdd.__name__ == "histogramdd"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = ember.histogramdd(ember.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=1)
    assert r.hist.tolist() == [[2.0]] and ".return_types.histogramdd(\nhist=" in repr(r)


# --- histogram: histogramdd of the flattened input, D = 1 ------------------------------------

def test_histogram_bins_as_histogramdd_does():
    x = rng.normal(size=300).astype(np.float32)
    for bins in (3, 7, 10, 13, 50):
        both(lambda L, b=bins: L.histogram(L.tensor(x), b))  # (edges: torch's linspace)
        both(lambda L, b=bins: L.histogram(L.tensor(x).double(), b, density=True))
        both(lambda L, b=bins: L.histogram(L.tensor(x).view(30, 10), b, range=(-1.0, 1.0),
                                           weight=L.tensor(x).abs().view(10, 30)))
    # values exactly on the edges: the bin estimate plus a local search, as in ATen
    grid = np.arange(21, dtype=np.float32) / np.float32(20)
    for bins in (3, 7, 10, 20, 40):
        both(lambda L, b=bins: L.histogram(L.tensor(grid), b))
        both(lambda L, b=bins: L.histogram(L.tensor(grid), b, range=(0.0, 1.0)))
    both(lambda L: L.histogram(L.arange(0, 1.0001, 0.05), 20))


def test_histogram_edge_tensors_and_16_bit_floats():
    x = rng.uniform(0, 1, size=(50,)).astype(np.float32)
    for name in ("float16", "bfloat16", "float32"):
        def call(L, name=name, density=False):
            d = getattr(L, name)
            return L.histogram(L.tensor(x).to(d), L.tensor([0.0, 0.25, 0.3, 1.0]).to(d),
                               weight=L.tensor(x).to(d), density=density)
        both(call)
        both(lambda L, c=call: c(L, density=True))
    both(lambda L: L.histogram(L.tensor(x), L.tensor([1.0, 0.0, 2.0])))  # (unsorted edges)
    # Each thread's chunk (200 points or more) counts in the dtype, where a bfloat16 count
    # stops at 256 and a float16 one at 2048; the chunks' counts are then added.
    for n in (255, 257, 259, 300, 1000, 5000):
        for name in ("bfloat16", "float16"):
            both(lambda L, n=n, d=name: L.histogram(L.zeros(n).to(getattr(L, d)),
                                                    L.tensor([0.0, 1.0]).to(getattr(L, d))))


def test_histogram_errors_in_torch_words():
    x = lambda L: L.tensor(rng.normal(size=30).astype(np.float32))  # noqa: E731
    for call in (
        lambda L: L.histogram(L.tensor([1.0, float("nan")]), 2),
        lambda L: L.histogram(L.tensor([1.0, float("inf")]), 2),
        lambda L: L.histogram(x(L), 3, weight=L.ones(30, dtype=L.float64)),
        lambda L: L.histogram(x(L), 3, weight=L.ones(3)),
        lambda L: L.histogram(x(L), 0),
        lambda L: L.histogram(x(L), -2),
        lambda L: L.histogram(x(L), 3, range=(1.0, 0.0)),
        lambda L: L.histogram(x(L), 3, range=(0.0, 1.0, 2.0)),
        lambda L: L.histogram(x(L), L.tensor([1.0])),
        lambda L: L.histogram(x(L), L.tensor([[0.0, 1.0]])),
        lambda L: L.histogram(x(L), L.tensor([0.0, 1.0]).double()),
    ):
        same_message(call)
    for call in (lambda L: L.histogram(x(L).long(), L.tensor([0, 1])),
                 lambda L: L.histogram(x(L).half(), 3),
                 lambda L: L.histogram(x(L).bool(), L.tensor([False, True]))):
        same_message(call, NotImplementedError)
    same_message(lambda L: L.histogram(x(L), 2.5), TypeError)
    same_message(lambda L: L.histogram(x(L), L.tensor([0.0, 1.0]), range=(0.0, 1.0)), TypeError)
    msg = same_message(lambda L: L.histogram(x(L).requires_grad_(), 3).hist.sum().backward())
    assert msg == "derivative for aten::histogram is not implemented"


def test_a_nan_range_prints_its_sign_as_cpp_does():
    # 0 / 0 makes a NaN with its sign bit set on x86 ("-nan" in PyTorch's messages); a NaN
    # typed in has it clear ("nan")
    for make in (lambda L: L.tensor([0.0]) / 0, lambda L: L.tensor([float("nan")])):
        same_message(lambda L, m=make: L.histogram(m(L), 3))
        same_message(lambda L, m=make: L.histogramdd(L.stack([m(L), m(L)], 1), 3))
        same_message(lambda L, m=make: L.histc(m(L), 3))
    same_message(lambda L: L.histc(L.ones(2), 3, min=float("nan"), max=float("nan")))


def test_histogram_writes_into_an_out_pair():
    # a (hist, bin_edges) pair: the result is torch.return_types.histogram_out over it
    x = np.array([0.5, 1.0, 1.0, 2.5, 3.0], np.float32)
    got = []
    for lib in (ember, torch):
        out = (lib.empty(0), lib.empty(0))
        r = lib.histogram(lib.tensor(x), 3, density=True, out=out)
        assert r.hist is out[0] and r.bin_edges is out[1]
        assert type(r).__name__ == "histogram_out"
        got.append(tuple(r))
    assert_same(*got)


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.histogram(L.ones(3), 2, out=(L.empty(0, dtype=L.float64), L.empty(0))),
     RuntimeError),
    (lambda L: L.histogram(L.ones(3), 2, out=(L.empty(0), L.empty(0, dtype=L.float64))),
     RuntimeError),
    (lambda L: L.histogram(L.ones(3), 2, out=(L.empty(0),)), TypeError),
    (lambda L: L.histogram(L.ones(3), 2, out=L.empty(0)), TypeError),
])
def test_histogram_out_of_the_wrong_kind_is_refused(call, kind):
    same_message(call, kind)
