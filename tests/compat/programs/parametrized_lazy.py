"""Constrained layers with torch.nn.utils.parametrize and shape inference with lazy modules:
a regression net whose first layer is LazyLinear, whose hidden layer is weight-normed and
whose square layer is kept symmetric by a custom parametrization with a right_inverse."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

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
