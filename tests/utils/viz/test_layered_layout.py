"""The fallback's layered layout: layers follow the edges, boxes never overlap."""

import itertools

import pytest

from ember.utils.viz.layered_layout import layout


def overlaps(b1, b2):
    (x1, y1, w1, h1), (x2, y2, w2, h2) = b1, b2
    return abs(x1 - x2) < (w1 + w2) / 2 and abs(y1 - y2) < (h1 + h2) / 2


def check(sizes, edges, gap=18.0):
    lay = layout(sizes, edges, gap=gap)
    for (a, ba), (b, bb) in itertools.combinations(lay.boxes.items(), 2):
        assert not overlaps(ba, bb), (a, b)
    for i, (t, h) in enumerate(edges):
        path = lay.paths[i]
        assert path[0] == lay.boxes[t][:2] and path[-1] == lay.boxes[h][:2]
        if t != h and i not in lay.reversed_edges:
            assert lay.boxes[t][1] < lay.boxes[h][1]  # tail above head
    for x, y, w, h in lay.boxes.values():
        assert x - w / 2 >= -1e-9 and x + w / 2 <= lay.width + 1e-9
        assert y - h / 2 >= -1e-9 and y + h / 2 <= lay.height + 1e-9
    return lay


def test_chain_is_one_column():
    sizes = {n: (40.0, 20.0) for n in "abcd"}
    lay = check(sizes, [("a", "b"), ("b", "c"), ("c", "d")])
    assert len({b[0] for b in lay.boxes.values()}) == 1
    ys = [lay.boxes[n][1] for n in "abcd"]
    assert ys == sorted(ys) and len(set(ys)) == 4


def test_diamond_and_a_long_edge_through_dummy_points():
    sizes = {n: (30.0 + 10 * i, 20.0) for i, n in enumerate("abcde")}
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("a", "e")]
    lay = check(sizes, edges)
    assert lay.boxes["b"][1] == lay.boxes["c"][1]
    assert len(lay.paths[5]) == 4  # a -> e crosses two layers: two bends


def test_cycles_are_broken_and_drawn_the_right_way_round():
    sizes = {n: (20.0, 20.0) for n in "abc"}
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("b", "b")]
    lay = check(sizes, edges)
    assert len(lay.reversed_edges & {0, 1, 2}) == 1
    i = next(iter(lay.reversed_edges & {0, 1, 2}))
    t, h = edges[i]
    assert lay.paths[i][0] == lay.boxes[t][:2]  # still drawn from its tail


@pytest.mark.parametrize("seed", range(5))
def test_random_graphs_lay_out_without_overlap(seed):
    import random

    rng = random.Random(seed)
    names = [f"n{i}" for i in range(25)]
    sizes = {n: (rng.uniform(10, 120), rng.uniform(10, 60)) for n in names}
    edges = [(rng.choice(names), rng.choice(names)) for _ in range(40)]
    check(sizes, edges)


def test_empty_graph():
    lay = layout({}, [])
    assert lay.boxes == {} and lay.width == 0 and lay.height == 0
