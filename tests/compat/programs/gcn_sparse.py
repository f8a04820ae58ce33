"""A two-layer graph convolutional network on a small random graph: the symmetric normalized
adjacency D^-1/2 (A + I) D^-1/2 as a sparse COO tensor, node features propagated with
torch.sparse.mm and sparse @ dense, learnable edge weights through sparse_coo_tensor's
values, and 20 Adam steps of node classification."""

import warnings

import torch
import torch.nn.functional as F
from torch import nn

warnings.filterwarnings("ignore", message="Sparse invariant checks")
torch.manual_seed(0)

n_nodes, n_features, n_hidden, n_classes = 24, 6, 32, 3

# A random undirected graph: edges both ways, no self loops yet, duplicates merged.
src = torch.randint(0, n_nodes, (50,))
dst = torch.randint(0, n_nodes, (50,))
keep = src != dst
src, dst = src[keep], dst[keep]
loops = torch.arange(n_nodes)
rows = torch.cat([src, dst, loops])
cols = torch.cat([dst, src, loops])
A = torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.ones(rows.numel()),
                            (n_nodes, n_nodes))
print(A.is_coalesced(), A._nnz(), A.layout, A.sparse_dim(), A.dense_dim())
A = A.coalesce()
A = torch.sparse_coo_tensor(A.indices(), torch.ones(A._nnz()), A.shape).coalesce()
print(A.is_coalesced(), A._nnz(), A.shape)

deg = torch.sparse.sum(A, 1).to_dense()
d_inv_sqrt = deg.pow(-0.5)
i = A.indices()
A_hat = torch.sparse_coo_tensor(i, d_inv_sqrt[i[0]] * A.values() * d_inv_sqrt[i[1]],
                                A.shape).coalesce()
print("degrees", deg[:8])
print(torch.sparse_coo_tensor(i[:, :5], A_hat.values()[:5], A.shape))
print("row sums", torch.sparse.sum(A_hat, 1).to_dense()[:6])
print("symmetric", torch.equal(A_hat.to_dense(), A_hat.t().to_dense()))

X = torch.randn(n_nodes, n_features)
y = torch.randint(0, n_classes, (n_nodes,))
train = torch.arange(n_nodes) < 16


class GraphConv(nn.Module):
    """H' = A_hat @ (H W): one propagation over the normalized adjacency."""

    def __init__(self, in_features: int, out_features: int, use_sparse_mm: bool) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.use_sparse_mm = use_sparse_mm

    def forward(self, x, adj):
        h = self.linear(x)
        return torch.sparse.mm(adj, h) if self.use_sparse_mm else adj @ h


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = GraphConv(n_features, n_hidden, use_sparse_mm=True)
        self.conv2 = GraphConv(n_hidden, n_classes, use_sparse_mm=False)
        # one learnable weight per edge, entering the graph as the values of the adjacency
        self.edge_logit = nn.Parameter(torch.zeros(A_hat._nnz()))

    def forward(self, x, adj):
        w = adj.values() * 2 * torch.sigmoid(self.edge_logit)
        weighted = torch.sparse_coo_tensor(adj.indices(), w, adj.shape)
        h = F.relu(self.conv1(x, weighted))
        return self.conv2(h, weighted)


model = GCN()
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
for step in range(20):
    opt.zero_grad()
    out = model(X, A_hat)
    loss = F.cross_entropy(out[train], y[train])
    loss.backward()
    opt.step()
    print(f"step {step:2d}  loss {loss.item():.4f}  |grad edges| "
          f"{model.edge_logit.grad.norm().item():.4f}")

with torch.no_grad():
    pred = model(X, A_hat).argmax(1)
print("train accuracy", (pred[train] == y[train]).float().mean().item())
print("test accuracy", (pred[~train] == y[~train]).float().mean().item())
print("edge weights", model.edge_logit[:5])
