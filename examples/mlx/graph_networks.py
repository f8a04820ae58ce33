"""Graph neural networks in MLX's own API, on graphs drawn with `mx.random`.

Edge lists as int32 arrays taken from a dense stochastic-block adjacency (`mx.tril`,
`argsort`), message passing by gather (`x[src]`, `mx.take`, `mx.take_along_axis`) and
scatter (`.at[dst].add / maximum / minimum / multiply`, `mx.put_along_axis`), degree
normalisation checked against the dense `D^-1/2 (A + I) D^-1/2` product, then three layers
written by hand: a GCN, a GraphSAGE (mean and max aggregation) and a GAT (per-edge softmax by
segment max and sum through `.at[]`, beside a masked dense `mx.softmax`). Each classifies
the nodes of one graph (`nn.value_and_grad`, AdamW; the GCN's step also under `mx.compile`).
Then a graph-level readout over a batch of small graphs (segment sums by graph id,
`mx.unique`, `mx.argsort`) and the mistakes users make. The same file runs on MLX and, via
`python -m ember.run graph_networks.py`, on ember.
"""

from functools import partial

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


def block_graph(key, sizes, p_in, p_out):
    """A stochastic block model: a symmetric 0/1 adjacency without self loops, its edge
    list in both directions (int32, sorted by source then target) and the node labels."""
    labels = mx.concatenate([mx.full((s,), c, dtype=mx.int32) for c, s in enumerate(sizes)])
    n = labels.size
    same = labels[:, None] == labels[None, :]
    p = mx.where(same, p_in, p_out)
    upper = mx.random.bernoulli(p, key=key).astype(mx.float32)
    lower = mx.tril(upper, k=-1)
    adj = lower + lower.T
    count = int(adj.sum().item())
    flat = mx.sort(mx.argsort(-adj.flatten())[:count]).astype(mx.int32)
    return adj, mx.stack([flat // n, flat % n]), labels


def graphs():
    print("== graphs")
    key = mx.random.key(7)
    k_graph, k_feat, k_perm = mx.random.split(key, 3)
    show("keys", mx.random.split(key, 3))
    adj, edges, labels = block_graph(k_graph, [5, 4, 3], 0.7, 0.1)
    show("adjacency row sums", adj.sum(axis=1).astype(mx.int32))
    show("edges", edges)
    print("symmetric:", mx.array_equal(adj, adj.T).item(), "edges:", edges.shape[1])
    src, dst = edges[0], edges[1]
    rebuilt = mx.zeros_like(adj).at[src, dst].add(1.0)
    print("rebuilt from edge list:", mx.array_equal(rebuilt, adj).item())
    ids = src * labels.size + dst
    values, counts = mx.unique(mx.concatenate([ids, ids[:3]]), ids.size, return_counts=True)
    print("unique ids equal:", mx.array_equal(values, ids).item())
    show("duplicated counts", counts[:6])
    show("permutation", mx.random.permutation(labels.size, key=k_perm))
    show("labels", labels)
    x = mx.random.normal((labels.size, 3), key=k_feat)
    show("features", x[:3])
    return adj, edges, labels


def message_passing(adj, edges):
    print("== message passing")
    n = adj.shape[0]
    src, dst = edges[0], edges[1]
    x = mx.arange(n * 2, dtype=mx.float32).reshape(n, 2) / 4 - 1
    deg = mx.zeros((n,), dtype=mx.int32).at[dst].add(1)
    show("in-degree", deg)
    show("degree by sum", adj.sum(axis=0).astype(mx.int32))
    gathered = x[src]
    print("x[src] == take:", mx.array_equal(gathered, mx.take(x, src, axis=0)).item())
    along = mx.take_along_axis(x, mx.broadcast_to(src[:, None], (src.size, 2)), axis=0)
    print("take_along_axis equal:", mx.array_equal(along, gathered).item())
    summed = mx.zeros_like(x).at[dst].add(gathered)
    show("sum aggregate", summed[:4])
    print("dense A @ x close:", mx.allclose(adj @ x, summed, atol=1e-6).item())
    big = mx.full((n, 2), -mx.inf).at[dst].maximum(gathered)
    show("max aggregate", big[:4])
    small = mx.full((n, 2), mx.inf).at[dst].minimum(gathered)
    show("min aggregate", small[:4])
    prod = mx.ones((n, 2)).at[dst].multiply(gathered + 2)
    show("product aggregate", prod[:3])
    counts = mx.zeros((n,)).at[dst].add(mx.ones(dst.shape))
    show("mean aggregate", (summed / mx.maximum(counts, 1)[:, None])[:4])
    # a padded neighbour table by put_along_axis: edge e of node src[e] goes to slot
    # e - start[src[e]] (the edge list is sorted by source, so each slot is written once)
    out_deg = mx.zeros((n,), dtype=mx.int32).at[src].add(1)
    start = mx.cumsum(out_deg) - out_deg
    width = int(out_deg.max().item())
    slot = mx.arange(src.size, dtype=mx.int32) - start[src]
    table = mx.put_along_axis(mx.full((n * width,), -1, dtype=mx.int32), src * width + slot,
                              dst, axis=0).reshape(n, width)
    show("neighbour table", table[:4])
    padded = mx.where((table >= 0)[:, :, None], x[mx.maximum(table, 0)], 0.0)
    print("table sum == scatter sum:", mx.allclose(padded.sum(axis=1), summed).item())
    show("shuffled rows", mx.random.permutation(x[:4], key=mx.random.key(2)))
    # symmetric normalisation with self loops, sparse and dense
    loops = mx.arange(n, dtype=mx.int32)
    s2 = mx.concatenate([src, loops])
    d2 = mx.concatenate([dst, loops])
    deg2 = mx.zeros((n,)).at[d2].add(1.0)
    norm = mx.rsqrt(deg2)[s2] * mx.rsqrt(deg2)[d2]
    sparse = mx.zeros_like(x).at[d2].add(norm[:, None] * x[s2])
    a_hat = adj + mx.eye(n)
    d_inv = mx.diag(mx.rsqrt(a_hat.sum(axis=1)))
    dense = d_inv @ a_hat @ d_inv
    show("normalised rows", dense[:2, :5])
    print("sparse == dense:", mx.allclose(dense @ x, sparse, atol=1e-5).item())
    print("spectral norm <= 1:", (mx.linalg.norm(dense, ord=2) <= 1.0 + 1e-5).item())
    print("fro norm:", f"{mx.linalg.norm(dense).item():.4f}")
    print("tril edges:", int(mx.tril(adj).sum().item()), "two-hop paths:",
          int((adj @ adj).sum().item()))
    return dense


class GCN(nn.Module):
    """Two graph convolutions over the normalised edge weights."""

    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.l1 = nn.Linear(d_in, d_hidden)
        self.l2 = nn.Linear(d_hidden, d_out)

    def propagate(self, h, src, dst, w):
        return mx.zeros_like(h).at[dst].add(w[:, None] * h[src])

    def __call__(self, x, src, dst, w):
        h = nn.relu(self.propagate(self.l1(x), src, dst, w))
        return self.propagate(self.l2(h), src, dst, w)


class SAGE(nn.Module):
    """GraphSAGE: the node's own transform plus a transform of its neighbours' mean or max."""

    def __init__(self, d_in, d_hidden, d_out, aggregate):
        super().__init__()
        self.aggregate = aggregate
        self.self1 = nn.Linear(d_in, d_hidden)
        self.nbr1 = nn.Linear(d_in, d_hidden, bias=False)
        self.out = nn.Linear(d_hidden, d_out)

    def neighbours(self, h, src, dst):
        n = h.shape[0]
        if self.aggregate == "mean":
            total = mx.zeros_like(h).at[dst].add(h[src])
            count = mx.zeros((n, 1)).at[dst].add(mx.ones((dst.size, 1)))
            return total / mx.maximum(count, 1)
        top = mx.full(h.shape, -1e9).at[dst].maximum(h[src])
        return mx.where(top > -1e8, top, 0.0)

    def __call__(self, x, src, dst):
        h = nn.relu(self.self1(x) + self.nbr1(self.neighbours(x, src, dst)))
        return self.out(h)


def edge_softmax(scores, dst, n):
    """Softmax of per-edge scores over the edges entering each node (segment max / sum)."""
    top = mx.full((n,) + scores.shape[1:], -mx.inf).at[dst].maximum(scores)
    e = mx.exp(scores - top[dst])
    total = mx.zeros((n,) + scores.shape[1:]).at[dst].add(e)
    return e / total[dst]


class GAT(nn.Module):
    """One multi-head graph attention layer and a linear classifier."""

    def __init__(self, d_in, d_head, heads, d_out):
        super().__init__()
        self.heads, self.d_head = heads, d_head
        self.proj = nn.Linear(d_in, heads * d_head, bias=False)
        self.a_src = mx.random.normal((heads, d_head)) * 0.3
        self.a_dst = mx.random.normal((heads, d_head)) * 0.3
        self.out = nn.Linear(heads * d_head, d_out)

    def attention(self, x, src, dst):
        n = x.shape[0]
        h = self.proj(x).reshape(n, self.heads, self.d_head)
        scores = nn.leaky_relu((h * self.a_src).sum(-1)[src] + (h * self.a_dst).sum(-1)[dst],
                               negative_slope=0.2)
        return h, edge_softmax(scores, dst, n)

    def __call__(self, x, src, dst):
        h, alpha = self.attention(x, src, dst)
        mixed = mx.zeros_like(h).at[dst].add(alpha[:, :, None] * h[src])
        return self.out(nn.elu(mixed.reshape(x.shape[0], -1)))


def train(name, model, inputs, labels, train_mask, steps, lr):
    """Full-batch node classification on the masked nodes; prints loss and accuracies."""
    def loss_fn(m):
        logits = m(*inputs)
        losses = nn.losses.cross_entropy(logits, labels)
        return (losses * train_mask).sum() / train_mask.sum()

    opt = optim.AdamW(learning_rate=lr, weight_decay=0.01)
    step_grad = nn.value_and_grad(model, loss_fn)
    for step in range(steps):
        loss, grads = step_grad(model)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        if step % 10 == 0 or step == steps - 1:
            pred = mx.argmax(model(*inputs), axis=1)
            hit = (pred == labels).astype(mx.float32)
            tr = (hit * train_mask).sum() / train_mask.sum()
            te = (hit * (1 - train_mask)).sum() / (1 - train_mask).sum()
            print(f"{name} step {step:2d} loss {loss.item():.4f} "
                  f"train {tr.item():.3f} test {te.item():.3f}")
    return model


def node_classification():
    print("== node classification")
    mx.random.seed(3)
    k_graph, k_feat, k_split = mx.random.split(mx.random.key(11), 3)
    adj, edges, labels = block_graph(k_graph, [8, 8, 8], 0.5, 0.05)
    n = labels.size
    src, dst = edges[0], edges[1]
    x = mx.random.normal((n, 4), key=k_feat) + 0.5 * mx.take(mx.eye(3, 4), labels, axis=0)
    order = mx.random.permutation(n, key=k_split)
    train_mask = mx.zeros((n,)).at[order[:12]].add(1.0)
    show("train nodes", mx.sort(order[:12]))
    loops = mx.arange(n, dtype=mx.int32)
    s2, d2 = mx.concatenate([src, loops]), mx.concatenate([dst, loops])
    deg = mx.zeros((n,)).at[d2].add(1.0)
    w = mx.rsqrt(deg[s2] * deg[d2])

    gcn = GCN(4, 8, 3)
    train("gcn", gcn, (x, s2, d2, w), labels, train_mask, 31, 0.05)
    for agg in ("mean", "max"):
        sage = SAGE(4, 8, 3, agg)
        train(f"sage-{agg}", sage, (x, src, dst), labels, train_mask, 31, 0.05)
    gat = GAT(4, 4, 2, 3)
    train("gat", gat, (x, src, dst), labels, train_mask, 31, 0.05)

    # the per-edge softmax against a masked dense softmax over each row of the adjacency
    h, alpha = gat.attention(x, src, dst)
    dense_scores = mx.zeros((n, n, 2)).at[dst, src].add(
        nn.leaky_relu((h * gat.a_src).sum(-1)[src] + (h * gat.a_dst).sum(-1)[dst], 0.2))
    masked = mx.where((adj.T > 0)[:, :, None], dense_scores, -mx.inf)
    has_nbr = (adj.sum(axis=0) > 0)[:, None, None]
    dense_alpha = mx.where(has_nbr, mx.softmax(masked, axis=1), 0.0)
    print("edge softmax == masked softmax:",
          mx.allclose(dense_alpha[dst, src], alpha, atol=1e-6).item())
    show("attention sums", mx.zeros((n, 2)).at[dst].add(alpha)[:4])

    # the GCN's step compiled, with model and optimizer state as implicit inputs/outputs
    gcn2 = GCN(4, 8, 3)
    opt = optim.AdamW(learning_rate=0.05, weight_decay=0.01)
    state = [gcn2.state, opt.state]

    def loss_fn(m, xs, ys, mask):
        return (nn.losses.cross_entropy(m(xs, s2, d2, w), ys) * mask).sum() / mask.sum()

    @partial(mx.compile, inputs=state, outputs=state)
    def step(xs, ys, mask):
        loss, grads = nn.value_and_grad(gcn2, loss_fn)(gcn2, xs, ys, mask)
        opt.update(gcn2, grads)
        return loss

    for i in range(21):
        loss = step(x, labels, train_mask)
        mx.eval(state)
        if i % 10 == 0:
            print(f"compiled gcn step {i:2d} loss {loss.item():.4f}")
    return gcn


def readout():
    print("== graph readout")
    key = mx.random.key(5)
    k_sizes, k_feat, k_edges = mx.random.split(key, 3)
    sizes = mx.random.randint(2, 6, (5,), key=k_sizes)
    show("graph sizes", sizes)
    gid = mx.concatenate([mx.full((s,), g, dtype=mx.int32)
                          for g, s in enumerate(sizes.tolist())])
    n = gid.size
    show("graph ids", gid)
    x = mx.random.uniform(-1, 1, (n, 3), key=k_feat)
    sums = mx.zeros((5, 3)).at[gid].add(x)
    values, counts = mx.unique(gid, 5, return_counts=True)
    show("unique graph ids", values)
    show("counts", counts)
    means = sums / counts[:, None].astype(mx.float32)
    show("mean readout", means)
    tops = mx.full((5, 3), -mx.inf).at[gid].maximum(x)
    show("max readout", tops)
    starts = mx.concatenate([mx.array([0]), mx.cumsum(counts)[:-1]])
    show("segment starts", starts)
    show("first node of each", mx.take_along_axis(x[:, 0], starts.astype(mx.int32), axis=0))
    score = means.sum(axis=1)
    ranking = mx.argsort(-score)
    show("ranking", ranking)
    show("scores sorted", score[ranking])
    # edges inside each graph: a random local pair per node, offset by the segment start
    local = mx.random.randint(0, 100, (n,), key=k_edges) % counts[gid]
    nbr = starts[gid] + local
    print("neighbours stay in graph:", mx.array_equal(gid[nbr], gid).item())
    pooled = mx.zeros((5, 3)).at[gid].add(x + x[nbr])
    show("pooled after one hop", pooled)
    norms = mx.linalg.norm(pooled, axis=1)
    show("pooled norms", norms)


def mistakes():
    print("== mistakes")
    x = mx.arange(12, dtype=mx.float32).reshape(4, 3)
    idx = mx.array([0, 1])
    cases = [
        lambda: mx.take(x, 10, axis=0),
        lambda: mx.take(x, idx, axis=2),
        lambda: x.at[mx.array([0.0, 1.0])].add(1.0),
        lambda: x[mx.array([0.5])],
        lambda: x.at[idx].add(mx.ones((3, 3))),
        lambda: mx.take_along_axis(x, idx, axis=0),
        lambda: mx.take_along_axis(x, idx[None], axis=2),
        lambda: x @ mx.ones((4, 2)),
        lambda: mx.softmax(x, axis=3),
        lambda: mx.linalg.norm(x, ord=3),
        lambda: mx.unique(mx.array([1, 2, 2])),
        lambda: mx.zeros(3, dtype=mx.int32).at[idx].add(mx.array([0.5, 1.5])),
        lambda: x.at[idx].add(mx.array([1, 2, 3], dtype=mx.int32)),
        lambda: mx.unique(mx.array([3, 1, 3]), 0),
    ]
    for case in cases:
        try:
            print("no error", case())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    adj, edges, labels = graphs()
    message_passing(adj, edges)
    node_classification()
    readout()
    mistakes()
