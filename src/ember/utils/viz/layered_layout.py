"""A layered (Sugiyama-style) layout of a directed graph, in plain Python.

What Graphviz's `dot` does, in its simplest form, so that a graph can be drawn where
Graphviz is not installed:

1. break cycles by reversing the edges that close them (found by a depth-first walk);
2. put each node in a layer: one past the deepest layer of its predecessors;
3. split every edge that spans several layers with invisible points, one per layer;
4. order each layer by the mean position of its neighbours, sweeping down and up;
5. give x positions: packed left to right, then pulled toward the neighbours' mean,
   never closer than `gap` to the next box.

Sizes are in points; y grows downwards (layer 0 on top). No drawing happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Layout:
    """Where everything goes: box centres and sizes, and each edge's polyline."""

    boxes: dict[str, tuple[float, float, float, float]]  # id -> (x, y, width, height)
    paths: list[list[tuple[float, float]]]  # per input edge, tail centre ... head centre
    reversed_edges: set[int] = field(default_factory=set)  # indices drawn head-to-tail
    width: float = 0.0
    height: float = 0.0


def _break_cycles(nodes: list[str], edges: list[tuple[str, str]]) -> set[int]:
    """Indices of edges to reverse so that the graph has no cycle (back edges of a DFS)."""
    out: dict[str, list[tuple[int, str]]] = {n: [] for n in nodes}
    for i, (t, h) in enumerate(edges):
        out[t].append((i, h))
    state: dict[str, int] = {}  # 1: on the walk's stack, 2: finished
    back: set[int] = set()
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(out[root]))]
        while stack:
            node, it = stack[-1]
            step = next(it, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            i, nxt = step
            s = state.get(nxt)
            if s == 1 or nxt == node:
                back.add(i)
            elif s is None:
                state[nxt] = 1
                stack.append((nxt, iter(out[nxt])))
    return back


def _layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering of an acyclic graph (Kahn's order)."""
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    for t, h in edges:
        preds[h].append(t)
        succs[t].append(h)
    indeg = {n: len(preds[n]) for n in nodes}
    ready = [n for n in nodes if indeg[n] == 0]
    layer = {n: 0 for n in nodes}
    while ready:
        n = ready.pop(0)
        for h in succs[n]:
            layer[h] = max(layer[h], layer[n] + 1)
            indeg[h] -= 1
            if indeg[h] == 0:
                ready.append(h)
    return layer


def layout(sizes: dict[str, tuple[float, float]], edges: list[tuple[str, str]], *,
           gap: float = 18.0, layer_gap: float = 36.0, sweeps: int = 4) -> Layout:
    """Lay out nodes of the given (width, height) joined by `edges` (tail, head)."""
    nodes = list(sizes)
    back = _break_cycles(nodes, edges)
    directed = [(h, t) if i in back else (t, h) for i, (t, h) in enumerate(edges)]
    directed_unique = list(dict.fromkeys(e for e in directed if e[0] != e[1]))
    layer = _layers(nodes, directed_unique)

    # Split long edges with dummy points, one per layer crossed.
    size = dict(sizes)
    chains: dict[tuple[str, str], list[str]] = {}
    links: list[tuple[str, str]] = []
    for t, h in directed_unique:
        chain = [t]
        for k in range(layer[t] + 1, layer[h]):
            dummy = f"\0{t}\0{h}\0{k}"
            layer[dummy] = k
            size[dummy] = (0.0, 0.0)
            chain.append(dummy)
        chain.append(h)
        chains[(t, h)] = chain
        links.extend(zip(chain, chain[1:]))

    n_layers = max(layer.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(n_layers)]
    for n in size:
        rows[layer[n]].append(n)
    up: dict[str, list[str]] = {n: [] for n in size}
    down: dict[str, list[str]] = {n: [] for n in size}
    for t, h in links:
        down[t].append(h)
        up[h].append(t)

    # Order each layer by the barycentre of its neighbours in the layer just fixed.
    for sweep in range(sweeps):
        order = range(1, n_layers) if sweep % 2 == 0 else range(n_layers - 2, -1, -1)
        for k in order:
            ref = rows[k - 1] if sweep % 2 == 0 else rows[k + 1]
            pos = {n: i for i, n in enumerate(ref)}
            near = up if sweep % 2 == 0 else down

            def key(item, near=near, pos=pos):
                i, n = item
                ps = [pos[m] for m in near[n] if m in pos]
                return (sum(ps) / len(ps)) if ps else float(i)

            rows[k] = [n for _, n in sorted(enumerate(rows[k]), key=key)]

    # x: pack each row, then pull nodes toward their neighbours' mean, keeping the gaps.
    x: dict[str, float] = {}
    for row in rows:
        left = 0.0
        for n in row:
            w = size[n][0]
            x[n] = left + w / 2
            left += w + gap
    for sweep in range(2 * sweeps):
        near = up if sweep % 2 == 0 else down
        for row in rows:
            want = []
            for n in row:
                xs = [x[m] for m in near[n]]
                want.append(sum(xs) / len(xs) if xs else x[n])
            _place(row, want, size, gap, x)
    lo = min((x[n] - size[n][0] / 2 for n in x), default=0.0)
    for n in x:
        x[n] -= lo

    # y: layers top to bottom, each as tall as its tallest box.
    y: dict[str, float] = {}
    top = 0.0
    for row in rows:
        h = max((size[n][1] for n in row), default=0.0)
        for n in row:
            y[n] = top + h / 2
        top += h + layer_gap
    boxes = {n: (x[n], y[n], *sizes[n]) for n in nodes}
    paths = []
    for t, h in directed:
        chain = chains.get((t, h), [t, h])
        paths.append([(x[n], y[n]) for n in chain])
    for i in back:  # drawn from the real tail to the real head
        paths[i].reverse()
    width = max((x[n] + size[n][0] / 2 for n in x), default=0.0)
    return Layout(boxes, paths, back, width, max(top - layer_gap, 0.0))


def _place(row: list[str], want: list[float], size: dict, gap: float, x: dict) -> None:
    """Set x for a row's nodes as near `want` as the order and the gaps allow."""
    # Left to right, no closer than `gap` to the left neighbour; then the whole row moves
    # back by the mean push, so that it stays centred where its nodes wanted to be.
    pos = list(want)
    for i in range(1, len(row)):
        least = pos[i - 1] + (size[row[i - 1]][0] + size[row[i]][0]) / 2 + gap
        pos[i] = max(pos[i], least)
    shift = (sum(pos) - sum(want)) / len(row) if row else 0.0
    for n, p in zip(row, pos):
        x[n] = p - shift
