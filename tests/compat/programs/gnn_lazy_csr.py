"""A graph convolutional network on a CSR adjacency, with lazy layers sized on first call.

The graph is built from an edge list, made symmetric with self loops and normalised as
D^-1/2 (A + I) D^-1/2 (Kipf & Welling), stored as a CSR matrix. The layers are
LazyLinear / LazyBatchNorm1d, so no input size is written anywhere; the model is trained a
few steps on a node-classification task, then the CSR / CSC / COO forms, reprs and a few
typical mistakes are printed.
"""

import io
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.simplefilter("ignore")  # (torch's "Sparse CSR tensor support is in beta" notice)
torch.manual_seed(0)

# --- the graph ------------------------------------------------------------------------------
num_nodes, num_classes = 12, 3
edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (6, 7), (7, 8), (8, 6),
         (2, 3), (5, 6), (9, 10), (10, 11), (11, 9), (8, 9)]
src = torch.tensor([a for a, b in edges] + [b for a, b in edges] + list(range(num_nodes)))
dst = torch.tensor([b for a, b in edges] + [a for a, b in edges] + list(range(num_nodes)))
dense_adj = torch.zeros(num_nodes, num_nodes)
dense_adj[src, dst] = 1.0
deg = dense_adj.sum(1)
d_inv_sqrt = deg.pow(-0.5)
norm_dense = d_inv_sqrt[:, None] * dense_adj * d_inv_sqrt[None, :]
adj = norm_dense.to_sparse_csr()
print("degrees:", deg.long().tolist())
print("layout:", adj.layout, "is_sparse_csr:", adj.is_sparse_csr, "is_sparse:", adj.is_sparse)
print("shape:", tuple(adj.shape), "nnz:", adj._nnz(), "dtype:", adj.dtype)
print("crow_indices:", adj.crow_indices().tolist())
print("col_indices[:10]:", adj.col_indices()[:10].tolist())
print("values[:4]:", [f"{v:.4f}" for v in adj.values()[:4].tolist()])
print("row sums:", [f"{v:.4f}" for v in adj.to_dense().sum(1).tolist()])

# the same matrix built directly from its CSR arrays
crow = torch.zeros(num_nodes + 1, dtype=torch.long)
crow[1:] = torch.cumsum(torch.bincount(src, minlength=num_nodes), 0)
order = torch.argsort(src * num_nodes + dst)
cols = dst[order]
vals = (d_inv_sqrt[src] * d_inv_sqrt[dst])[order]
adj2 = torch.sparse_csr_tensor(crow, cols, vals, size=(num_nodes, num_nodes))
print("built == converted:", torch.equal(adj2.to_dense(), adj.to_dense()))
print("crow equal:", torch.equal(adj2.crow_indices(), adj.crow_indices()))

small = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]).to_sparse_csr()
print(small)
print(small.to_sparse_csc())
print(small.t())
print(small.to_sparse_coo())
print((small * 0.5).values())
print(small.to(torch.float64).dtype)

# --- the model -----------------------------------------------------------------------------------


class GCNLayer(nn.Module):
    def __init__(self, out_features):
        super().__init__()
        self.lin = nn.LazyLinear(out_features)

    def forward(self, x, a):
        return a @ self.lin(x)


class GCN(nn.Module):
    def __init__(self, hidden, classes):
        super().__init__()
        self.conv1 = GCNLayer(hidden)
        self.norm = nn.LazyBatchNorm1d()
        self.conv2 = GCNLayer(classes)

    def forward(self, x, a):
        h = F.relu(self.norm(self.conv1(x, a)))
        return self.conv2(h, a)


features = torch.randn(num_nodes, 5)
labels = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0])
model = GCN(8, num_classes)
print(model)
print("uninitialized:", model.conv1.lin.has_uninitialized_params())
print("state_dict before:", [(k, type(v).__name__) for k, v in model.state_dict().items()])

out = model(features, adj)  # the first call sizes every lazy layer
print(model)
print("out:", tuple(out.shape), out.grad_fn.__class__.__name__)
print("weights:", [tuple(p.shape) for p in model.parameters()])
print("param count:", sum(p.numel() for p in model.parameters()))

opt = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(6):
    opt.zero_grad()
    logits = model(features, adj)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == labels).float().mean().item()
    print(f"step {step}: loss {loss.item():.4f} acc {acc:.3f}")

# a fresh lazy model takes the trained weights: its shapes come from the checkpoint
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
fresh = GCN(8, num_classes)
result = fresh.load_state_dict(torch.load(buf))
print("load:", result, type(fresh.conv1.lin).__name__, tuple(fresh.conv1.lin.weight.shape))
model.eval()
fresh.eval()
with torch.no_grad():
    same = torch.allclose(fresh(features, adj), model(features, adj))
print("restored predictions equal:", same, type(fresh.norm).__name__)

print("running_mean:", [f"{v:.4f}" for v in model.norm.running_mean[:4].tolist()])
print("grad norm conv1:", f"{model.conv1.lin.weight.grad.norm().item():.4f}")

# --- gradients through the sparse products ---------------------------------------------------
x = torch.randn(num_nodes, 2, requires_grad=True)
y = torch.sparse.mm(adj, x)
y.pow(2).sum().backward()
print("sparse.mm:", y.grad_fn.__class__.__name__, f"{x.grad.abs().sum().item():.4f}")
w = adj.values().clone().requires_grad_()
adj_w = torch.sparse_csr_tensor(adj.crow_indices(), adj.col_indices(), w, adj.shape)
print("adj_w grad_fn:", adj_w.grad_fn.__class__.__name__)
z = torch.mv(adj_w, torch.ones(num_nodes))
z.sum().backward()
print("mv:", z.grad_fn.__class__.__name__, "edge grad[:5]:",
      [f"{v:.4f}" for v in w.grad[:5].tolist()])
h = torch.addmm(torch.zeros(num_nodes, 2), adj, x.detach(), beta=0.0, alpha=2.0)
print("addmm:", [f"{v:.4f}" for v in h[0].tolist()])
print("matmul == dense:", torch.allclose(adj @ x, norm_dense @ x, atol=1e-6))
print("trace check:", f"{(adj.to_dense().diagonal().sum()).item():.4f}",
      f"{sum(1.0 / d for d in deg.tolist()):.4f}")
print("eigen bound:", math.isclose(torch.linalg.eigvalsh(norm_dense).max().item(), 1.0,
                                    rel_tol=1e-4))

# --- typical mistakes ---------------------------------------------------------------------------
mistakes = {
    "view a CSR matrix": lambda: adj.view(-1),
    "strides of CSR": lambda: adj.stride(),
    "numpy of CSR": lambda: adj.numpy(),
    "crow_indices of CSC": lambda: adj.to_sparse_csc().crow_indices(),
    "indices() of CSR": lambda: adj.indices(),
    "divide a CSR matrix": lambda: adj / 2,
    "wrong inner size": lambda: adj @ torch.ones(5, 2),
    "dtype mismatch": lambda: adj @ torch.ones(num_nodes, 2, dtype=torch.float64),
    "bad crow_indices": lambda: torch.sparse_csr_tensor(
        torch.tensor([0, 2, 1]), torch.tensor([0, 1]), torch.ones(2), (2, 2),
        check_invariants=True),
    "lazy norm on 4-D": lambda: nn.LazyBatchNorm1d()(torch.ones(2, 3, 4, 5)),
    "lazy conv groups": lambda: nn.LazyConvTranspose1d(4, 3, groups=2)(torch.ones(1, 3, 8)),
}
for name, fn in mistakes.items():
    try:
        fn()
        print(f"{name}: no error")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:110]}")

# lazy layers of other kinds, sized on first call
up = nn.LazyConvTranspose1d(2, kernel_size=3, stride=2)
inorm = nn.LazyInstanceNorm1d()
print(up, inorm, sep="\n")
seq = torch.randn(2, 4, 6)
r = inorm(up(seq))
print(up, inorm, sep="\n")
print("upsampled:", tuple(r.shape), f"{r.std().item():.4f}")
