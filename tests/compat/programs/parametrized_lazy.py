"""Constrained layers with torch.nn.utils.parametrize and shape inference with lazy modules:
a regression net whose first layer is LazyLinear, whose hidden layer is weight-normed and
whose square layer is kept symmetric by a custom parametrization with a right_inverse; then
an orthogonal layer learning a rotation, and spectral norm."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.LazyLinear(8)
        self.hidden = weight_norm(nn.Linear(8, 8))
        self.square = nn.Linear(8, 8, bias=False)
        P.register_parametrization(self.square, "weight", Symmetric())
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        x = torch.tanh(self.inp(x))
        x = torch.tanh(self.hidden(x))
        x = torch.tanh(self.square(x))
        return self.out(x).squeeze(-1)


x = torch.randn(64, 5)
y = (x[:, 0] * x[:, 1] - x[:, 2].sin() + 0.1 * torch.randn(64))

model = Net()
print(model)
print(type(model.inp).__name__, model.inp.weight, model.inp.has_uninitialized_params())
print(list(model.state_dict().keys()))
with torch.no_grad():
    model(x[:2])  # the first forward gives the lazy layer its input size
print(model.inp, type(model.inp).__name__, tuple(model.inp.weight.shape))
print({k: tuple(v.shape) for k, v in model.state_dict().items()})
print(P.is_parametrized(model.square), P.is_parametrized(model.inp),
      P.type_before_parametrizations(model.square).__name__, type(model.square).__name__)
w = model.square.weight
print("symmetric:", torch.equal(w, w.t()), w[0, :3])

optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(1, 61):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        g = model.hidden.parametrizations.weight.original0
        print(f"step {step:2d} mse {loss.item():.5f} |g| {g.norm().item():.4f}")

w = model.square.weight
print("still symmetric:", torch.equal(w, w.t()))
print("original is upper triangular:",
      torch.equal(model.square.parametrizations.weight.original,
                  model.square.parametrizations.weight.original.triu()))
with P.cached():
    print("cached:", model.square.weight is model.square.weight)
print("uncached:", model.square.weight is model.square.weight)

# assigning goes through right_inverse; removing leaves a plain parameter behind
model.square.weight = torch.eye(8) * 0.5
print(model.square.parametrizations.weight.original.diagonal()[:3], model.square.weight[1, 1])
P.remove_parametrizations(model.square, "weight")
print(type(model.square).__name__, list(model.square.state_dict().keys()))
print(model.hidden.weight.norm(dim=1)[:3],
      model.hidden.parametrizations.weight.original0.flatten()[:3])

# spectral norm keeps the largest singular value near 1
torch.manual_seed(3)
layer = spectral_norm(nn.Linear(6, 4))
for _ in range(10):
    layer(torch.randn(2, 6))
print(f"{torch.linalg.matrix_norm(layer.weight, ord=2).item():.4f}", sorted(layer.state_dict()))

# an orthogonal layer (matrix exponential of a skew-symmetric matrix) learns a rotation
torch.manual_seed(4)
angle = torch.tensor(0.6)
rotation = torch.eye(4)
rotation[:2, :2] = torch.stack([torch.stack([angle.cos(), -angle.sin()]),
                                torch.stack([angle.sin(), angle.cos()])])
points = torch.randn(32, 4)
rotate = orthogonal(nn.Linear(4, 4, bias=False))
opt = torch.optim.SGD(rotate.parameters(), lr=0.1)
for step in range(1, 31):
    opt.zero_grad()
    loss = (rotate(points) - points @ rotation.T).pow(2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        w = rotate.weight
        still = (w.T @ w - torch.eye(4)).abs().max().item() < 1e-5
        print(f"step {step} mse {loss.item():.5f} orthogonal {still}")
tall = orthogonal(nn.Linear(3, 5))  # Householder map for a non-square weight
print(f"{(tall.weight.T @ tall.weight - torch.eye(3)).abs().max().item() < 1e-5}",
      sorted(tall.state_dict()))
