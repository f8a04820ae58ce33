"""Classical graph algorithms written with torch tensors on random graphs: adjacency as dense,
sparse COO and CSR tensors, degrees, PageRank with dangling nodes, BFS levels, shortest paths
(min-plus products, Bellman-Ford, Floyd-Warshall), connected components by label
propagation, triangle counting, spectral clustering with k-means, Kruskal's minimum spanning
tree, Kahn's topological sort, Edmonds-Karp max-flow, node2vec-style random walks, CSR row
lookups with searchsorted, and the mistakes people make with these APIs."""

import warnings

import torch

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
warnings.filterwarnings("ignore", message="Sparse invariant checks")
torch.manual_seed(0)


def fmt(t, digits=4):
    """A float tensor as a short list of values with `digits` significant digits."""
    return "[" + ", ".join(f"{v:.{digits}g}" for v in t.tolist()) + "]"


# ---------------------------------------------------------------- random graphs
n = 30
edges = torch.randint(0, n, (90, 2))
edges = edges[edges[:, 0] != edges[:, 1]]
print("drawn", edges.shape, edges.dtype)
und = torch.cat([edges, edges.flip(1)])
und, counts = torch.unique(und, dim=0, return_counts=True)
print("undirected arcs", und.shape[0], "max multiplicity", counts.max().item())
src, dst = und[:, 0], und[:, 1]

A = torch.zeros(n, n)
A[src, dst] = 1.0
print("dense nnz", int(A.count_nonzero()), "symmetric", torch.equal(A, A.T))

As = torch.sparse_coo_tensor(und.T, torch.ones(und.shape[0]), (n, n))
print("coalesced before", As.is_coalesced(), As.layout, As.sparse_dim(), As.dense_dim())
As = As.coalesce()
print("coalesced after", As.is_coalesced(), As._nnz(), As.indices().shape, As.values().dtype)
print("indices", As.indices()[:, :8].tolist())
print("same as dense", torch.equal(As.to_dense(), A))

# duplicate entries are summed by coalesce
dup = torch.sparse_coo_tensor(torch.tensor([[0, 0, 1], [1, 1, 2]]), torch.tensor([1.0, 2.5, 4.0]),
                              (3, 3)).coalesce()
print("duplicates summed", dup.indices().tolist(), dup.values().tolist())

Acsr = A.to_sparse_csr()
crow, col = Acsr.crow_indices(), Acsr.col_indices()
print("csr", Acsr.layout, crow.shape, col.shape, crow.dtype, Acsr.values().shape)
print("crow", crow[:10].tolist())
print("csr equals coo", torch.equal(Acsr.to_dense(), As.to_dense()))
print("coo -> csr", torch.equal(As.to_sparse_csr().col_indices(), col))

# ---------------------------------------------------------------- degrees
deg_bc = torch.bincount(src, minlength=n)
deg_sa = torch.zeros(n, dtype=torch.long).scatter_add(0, src, torch.ones_like(src))
deg_sp = torch.sparse.sum(As, dim=1).to_dense()
deg_csr = crow.diff()
print("degrees", deg_bc[:12].tolist())
print("agree", torch.equal(deg_bc, deg_sa), torch.equal(deg_sp, A.sum(1)),
      torch.equal(deg_csr, deg_bc))
print("total", torch.sparse.sum(As).item(), deg_sp.dtype, "isolated", (deg_bc == 0).sum().item())
hist = torch.bincount(deg_bc)
print("degree histogram", hist.tolist())

# ---------------------------------------------------------------- PageRank
torch.manual_seed(1)
m = 20
darcs = torch.randint(0, m, (45, 2))
darcs = torch.unique(darcs[darcs[:, 0] != darcs[:, 1]], dim=0)
out_deg = torch.bincount(darcs[:, 0], minlength=m).float()
dangling = out_deg == 0
print("directed arcs", darcs.shape[0], "dangling", dangling.nonzero().flatten().tolist())
w = 1.0 / out_deg[darcs[:, 0]]
P = torch.sparse_coo_tensor(darcs.flip(1).T, w, (m, m)).coalesce()  # column-stochastic
alpha = 0.85
r = torch.full((m,), 1.0 / m)
n_iter = 0
while n_iter < 100:
    n_iter += 1
    leak = r[dangling].sum()
    r_new = alpha * (torch.sparse.mm(P, r[:, None]).squeeze(1) + leak / m) + (1 - alpha) / m
    delta = torch.linalg.vector_norm(r_new - r, ord=1)
    r = r_new
    if delta < 1e-6:
        break
print(f"pagerank converged after {n_iter} iterations, sum {r.sum().item():.5f}")
top = torch.topk(r, 5)
print("top nodes", top.indices.tolist(), fmt(top.values))
Pd = P.to_dense()
Pd[:, dangling] = 1.0 / m
G = alpha * Pd + (1 - alpha) / m
r2 = torch.full((m,), 1.0 / m)
for _ in range(200):
    r2 = G @ r2
print("dense power method agrees", torch.allclose(r, r2, atol=1e-5))
print("column sums", fmt(G.sum(0)[:4]))

# ---------------------------------------------------------------- BFS levels
level = torch.full((n,), -1, dtype=torch.long)
frontier = torch.zeros(n, dtype=torch.bool)
frontier[0] = True
visited = frontier.clone()
depth = 0
while frontier.any():
    level[frontier] = depth
    reach = (A[frontier].sum(0) > 0) & ~visited
    visited |= reach
    frontier = reach
    depth += 1
print("bfs levels", level.tolist())
print("reached", visited.sum().item(), "eccentricity of 0", level.max().item())
# the same with a sparse matrix-vector product
lv = torch.full((n,), -1, dtype=torch.long)
f = torch.zeros(n)
f[0] = 1
seen = f.bool()
d = 0
while f.sum() > 0:
    lv[f.bool()] = d
    nxt = (torch.sparse.mm(As, f[:, None]).squeeze(1) > 0) & ~seen
    seen |= nxt
    f = nxt.float()
    d += 1
print("sparse bfs agrees", torch.equal(lv, level))

# ---------------------------------------------------------------- shortest paths
torch.manual_seed(2)
k = 12
warcs = torch.randint(0, k, (40, 2))
warcs = torch.unique(warcs[warcs[:, 0] != warcs[:, 1]], dim=0)
wts = torch.rand(warcs.shape[0]) * 9 + 1
print("weighted arcs", warcs.shape[0], fmt(wts[:5]))
D = torch.full((k, k), float("inf"))
D.fill_diagonal_(0)
D[warcs[:, 0], warcs[:, 1]] = wts
print("finite entries", torch.isfinite(D).sum().item())

# min-plus products: doubling the path length each time
M = D.clone()
for _ in range(4):
    M = (M[:, :, None] + M[None]).amin(1)
print("min-plus row 0", fmt(M[0]))

# Floyd-Warshall
F = D.clone()
for v in range(k):
    F = torch.minimum(F, F[:, v:v + 1] + F[v:v + 1, :])
print("floyd-warshall equals min-plus", torch.equal(F, M))
print("unreachable pairs", torch.isinf(F).sum().item(), "diameter",
      f"{F[torch.isfinite(F)].max().item():.4f}")

# Bellman-Ford from source 0, relaxing every arc at once
dist = torch.full((k,), float("inf"))
dist[0] = 0.0
rounds = 0
while rounds < k:
    cand = dist[warcs[:, 0]] + wts
    new = dist.scatter_reduce(0, warcs[:, 1], cand, reduce="amin", include_self=True)
    if torch.equal(new, dist):
        break
    dist = new
    rounds += 1
print(f"bellman-ford rounds {rounds}", fmt(dist))
print("matches floyd row", torch.allclose(dist, F[0]), torch.equal(dist.isinf(), F[0].isinf()))
# without include_self, unreached targets keep the base value; untouched ones too
best_in = torch.full((k,), float("inf")).scatter_reduce(0, warcs[:, 1], dist[warcs[:, 0]] + wts,
                                                        reduce="amin", include_self=False)
print("best incoming", fmt(best_in))
low = torch.zeros(k).scatter_reduce(0, warcs[:, 1], wts, reduce="amin", include_self=False)
print("lightest in-arc", fmt(low))
mean_in = torch.zeros(k).scatter_reduce(0, warcs[:, 1], wts, reduce="mean", include_self=False)
print("mean in-arc", fmt(mean_in))
pred = torch.full((k,), -1, dtype=torch.long)
tight = (dist[warcs[:, 0]] + wts - dist[warcs[:, 1]]).abs() < 1e-4
pred[warcs[tight, 1]] = warcs[tight, 0]
print("predecessors", pred.tolist())

# ---------------------------------------------------------------- connected components
torch.manual_seed(3)
c_n = 40
ce = torch.randint(0, c_n, (28, 2))
ce = torch.unique(torch.cat([ce, ce.flip(1)]), dim=0)
labels = torch.arange(c_n)
steps = 0
while True:
    new = labels.scatter_reduce(0, ce[:, 0], labels[ce[:, 1]], reduce="amin")
    steps += 1
    if torch.equal(new, labels):
        break
    labels = new
comp, sizes = torch.unique(labels, return_counts=True)
print(f"components {comp.numel()} after {steps} sweeps")
print("largest sizes", torch.sort(sizes, descending=True).values[:6].tolist())
print("labels", labels[:20].tolist())

# ---------------------------------------------------------------- triangles
tri_dense = torch.trace(A @ A @ A) / 6
A2 = torch.sparse.mm(As, As)
print("A@A sparse", A2.layout, A2.is_sparse)
tri_sparse = torch.sparse.sum(A2.coalesce() * As) / 6
per_node = torch.diagonal(torch.matrix_power(A, 3)) / 2
print(f"triangles {tri_dense.item():.1f} sparse {tri_sparse.item():.1f}",
      "per node", per_node[:10].long().tolist())
wedges = deg_bc * (deg_bc - 1) / 2
cc = torch.where(wedges > 0, per_node / wedges, torch.zeros(()))
print(f"mean clustering {cc.mean().item():.5f} transitivity "
      f"{(3 * tri_dense / wedges.sum()).item():.5f}")

# ---------------------------------------------------------------- spectral clustering
torch.manual_seed(4)
blocks = torch.arange(24) // 8
same = blocks[:, None] == blocks[None, :]
prob = torch.where(same, torch.tensor(0.7), torch.tensor(0.03))
upper = torch.triu(torch.rand(24, 24) < prob, diagonal=1)
S = (upper | upper.T).float()
dS = S.sum(1)
dinv = dS.clamp(min=1).rsqrt()
L = torch.eye(24) - dinv[:, None] * S * dinv[None, :]
evals, evecs = torch.linalg.eigh(L)
print("smallest eigenvalue ~ 0", evals[0].abs().item() < 1e-5, "next", fmt(evals[1:5]))
print(f"eigengap {(evals[3] - evals[2]).item():.4f}", evecs.shape, evecs.dtype)
emb = evecs[:, :3]
emb = emb / torch.linalg.vector_norm(emb, dim=1, keepdim=True)
cent = emb[torch.tensor([0, 8, 16])].clone()
for _ in range(10):
    assign = torch.cdist(emb, cent).argmin(1)
    sums = torch.zeros(3, 3).index_add_(0, assign, emb)
    cnt = torch.zeros(3).index_add_(0, assign, torch.ones(24))
    cent = sums / cnt[:, None]
print("cluster sizes", torch.bincount(assign, minlength=3).tolist())
agree = max((assign == blocks).float().mean().item(), 0.0)
print(f"recovered planted blocks {agree:.3f}", assign.tolist())

# ---------------------------------------------------------------- Kruskal MST
torch.manual_seed(5)
kn = 15
ke = torch.randint(0, kn, (45, 2))
ke = ke[ke[:, 0] < ke[:, 1]]
ke = torch.unique(ke, dim=0)
kw = torch.randint(1, 20, (ke.shape[0],)).float()
order = torch.argsort(kw, stable=True)
parent = torch.arange(kn)


def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = int(parent[x])
    return x


mst = []
for e in order.tolist():
    u, v = ke[e].tolist()
    ru, rv = find(u), find(v)
    if ru != rv:
        parent[max(ru, rv)] = min(ru, rv)
        mst.append(e)
mst = torch.tensor(mst)
print("mst edges", mst.numel(), f"weight {kw[mst].sum().item():.1f}")
print("mst", ke[mst][:6].tolist())
roots = torch.tensor([find(i) for i in range(kn)])
print("forest roots", torch.unique(roots).tolist())

# ---------------------------------------------------------------- Kahn's topological sort
torch.manual_seed(6)
tn = 10
ta = torch.randint(0, tn, (25, 2))
ta = torch.unique(torch.sort(ta, dim=1).values, dim=0)
ta = ta[ta[:, 0] != ta[:, 1]]
perm = torch.randperm(tn)
ta = perm[ta]  # relabel so the order is not just 0..n-1
T = torch.zeros(tn, tn, dtype=torch.long)
T[ta[:, 0], ta[:, 1]] = 1
indeg = T.sum(0)
done = torch.zeros(tn, dtype=torch.bool)
topo = []
while not done.all():
    ready = ((indeg == 0) & ~done).nonzero().flatten()
    if ready.numel() == 0:
        print("cycle!")
        break
    v = int(ready[0])
    topo.append(v)
    done[v] = True
    indeg = indeg - T[v]
    indeg = indeg.masked_fill(done, -1)
print("topological order", topo)
pos = torch.empty(tn, dtype=torch.long)
pos[torch.tensor(topo)] = torch.arange(tn)
print("valid", bool((pos[ta[:, 0]] < pos[ta[:, 1]]).all()))

# ---------------------------------------------------------------- Edmonds-Karp
cap = torch.tensor([[0, 16, 13, 0, 0, 0],
                    [0, 0, 10, 12, 0, 0],
                    [0, 4, 0, 0, 14, 0],
                    [0, 0, 9, 0, 0, 20],
                    [0, 0, 0, 7, 0, 4],
                    [0, 0, 0, 0, 0, 0]], dtype=torch.float32)
flow = torch.zeros_like(cap)
s, t = 0, 5
total = 0.0
augmentations = 0
while True:
    resid = cap - flow
    prev = torch.full((6,), -1, dtype=torch.long)
    prev[s] = s
    queue = [s]
    while queue and prev[t] < 0:
        u = queue.pop(0)
        nbrs = ((resid[u] > 0) & (prev < 0)).nonzero().flatten()
        prev[nbrs] = u
        queue.extend(nbrs.tolist())
    if prev[t] < 0:
        break
    path = [t]
    while path[-1] != s:
        path.append(int(prev[path[-1]]))
    path = path[::-1]
    pu, pv = torch.tensor(path[:-1]), torch.tensor(path[1:])
    b = resid[pu, pv].min()
    flow.index_put_((pu, pv), b, accumulate=True)
    flow.index_put_((pv, pu), -b, accumulate=True)
    total += b.item()
    augmentations += 1
print(f"max flow {total:.1f} in {augmentations} augmentations")
cut_side = prev >= 0
print("min cut source side", cut_side.nonzero().flatten().tolist(),
      f"capacity {cap[cut_side][:, ~cut_side].sum().item():.1f}")
print("flow out of s", flow[s].clamp(min=0).tolist())

# ---------------------------------------------------------------- random walks
torch.manual_seed(7)
trans = A / A.sum(1, keepdim=True).clamp(min=1)
start = torch.arange(6)
walk = [start]
for _ in range(6):
    rows = trans[walk[-1]]
    rows = torch.where(rows.sum(1, keepdim=True) > 0, rows, torch.nn.functional.one_hot(
        walk[-1], n).float())
    walk.append(torch.multinomial(rows, 1).squeeze(1))
walks = torch.stack(walk, 1)
print("uniform walks", walks.tolist()[:3])
# node2vec second-order bias: 1/p back to the previous node, 1 to its neighbours, 1/q farther
p, q = 0.5, 2.0
prev_n, cur = 0, int(torch.multinomial(trans[0], 1))
path = [prev_n, cur]
for _ in range(8):
    nbr_mask = A[cur] > 0
    bias = torch.where(A[prev_n] > 0, torch.tensor(1.0), torch.tensor(1.0 / q))
    bias[prev_n] = 1.0 / p
    probs = bias * nbr_mask
    nxt = int(torch.multinomial(probs, 1, replacement=True))
    prev_n, cur = cur, nxt
    path.append(cur)
print("node2vec walk", path)
many = torch.multinomial(trans[1:4], 5, replacement=True)
print("samples", many.tolist())
nz = torch.multinomial(trans[5], int((trans[5] > 0).sum()), replacement=False)
print("without replacement", torch.sort(nz).values.tolist())

# ---------------------------------------------------------------- CSR row operations
torch.manual_seed(8)
ew = torch.rand(col.numel())
row_of = torch.repeat_interleave(torch.arange(n), deg_csr)
print("row ids", row_of[:12].tolist())
# sort each row's neighbours by weight: stable sort by weight, then stable sort by row
o1 = torch.sort(ew, stable=True).indices
o2 = torch.sort(row_of[o1], stable=True).indices
by_w = o1[o2]
print("heaviest-last neighbours of 1", col[by_w][crow[1]:crow[2]].tolist(),
      fmt(ew[by_w][crow[1]:crow[2]]))


def has_edge(u, v):
    seg = col[crow[u]:crow[u + 1]]
    i = torch.searchsorted(seg, v)
    return bool(i < seg.numel() and seg[i] == v)


queries = torch.cat([torch.randint(0, n, (4, 2)), und[torch.randint(0, und.shape[0], (4,))]])
answers = [has_edge(u, v) for u, v in queries.tolist()]
print("edge queries", answers, "dense", [bool(A[u, v]) for u, v in queries.tolist()])
pos_l = torch.searchsorted(crow, torch.tensor([0, 5, 17, 60]), right=True) - 1
print("row of nnz position", pos_l.tolist())
sorted_rows = torch.searchsorted(col[crow[2]:crow[3]], torch.tensor([[0, 10, 29]]),
                                 side="left")
print("insert points", sorted_rows.tolist())

# edge weights as a mask product: sparse * dense keeps the sparse pattern
W = torch.rand(n, n)
Aw = As * W
print("weighted", Aw.layout, Aw.is_coalesced(), Aw._nnz(), f"{torch.sparse.sum(Aw).item():.4f}")
Aw2 = torch.mul(W, As).coalesce()
print("same either way", torch.equal(Aw.coalesce().values(), Aw2.values()),
      fmt(Aw2.values()[:5]))
sym = (Aw2 + Aw2.t()).coalesce() / 2
print("symmetrised", sym._nnz(), fmt(torch.sparse.sum(sym, 1).to_dense()[:5]))
common = (A2.coalesce() * As).coalesce()
print("closing wedges", common._nnz(), common.values().long().tolist()[:10])

# ---------------------------------------------------------------- typical mistakes
attempts = {
    "coo index out of size": lambda: torch.sparse_coo_tensor(
        torch.tensor([[0, 7], [1, 2]]), torch.ones(2), (5, 5), check_invariants=True),
    "unknown reduce": lambda: torch.zeros(3).scatter_reduce(
        0, torch.tensor([0, 1]), torch.ones(2), reduce="minimum"),
    "sparse.mm shapes": lambda: torch.sparse.mm(As, torch.ones(n + 1, 2)),
    "bincount negative": lambda: torch.bincount(torch.tensor([1, -1, 2])),
    "bincount 2-d": lambda: torch.bincount(torch.ones(2, 2, dtype=torch.long)),
    "sparse.sum of csr": lambda: torch.sparse.sum(Acsr),
    "sparse / dense": lambda: As / torch.ones(n, n),
    "scatter index dtype": lambda: torch.zeros(3).scatter_add(0, torch.tensor([0.0]),
                                                              torch.ones(1)),
}
for name, fn in attempts.items():
    try:
        fn()
        print(name, "no error")
    except Exception as exc:
        print(f"{name}: {type(exc).__name__}: {exc}")
