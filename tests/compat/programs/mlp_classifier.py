"""An MLP (nn.Module + optimizer) classifying points of three interleaved spirals."""

import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(42)


def make_spirals(n_per_class: int, n_classes: int = 3, noise: float = 0.2):
    """Points on `n_classes` spiral arms with Gaussian jitter, and their arm index."""
    xs, ys = [], []
    for k in range(n_classes):
        r = torch.linspace(0.05, 1.0, n_per_class)
        theta = torch.linspace(k * 4.0, (k + 1) * 4.0, n_per_class)
        theta = theta + torch.randn(n_per_class) * noise
        xs.append(torch.stack([r * torch.sin(theta), r * torch.cos(theta)], dim=1))
        ys.append(torch.full((n_per_class,), k, dtype=torch.long))
    return torch.cat(xs), torch.cat(ys)


class MLP(nn.Module):
    def __init__(self, in_features: int, hidden: int, n_classes: int) -> None:
        super().__init__()
        self.flatten = nn.Flatten()
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.layers(self.flatten(x))


X, y = make_spirals(100)
perm = torch.randperm(len(X))
X, y = X[perm], y[perm]
X_train, y_train, X_test, y_test = X[:240], y[:240], X[240:], y[240:]
print(X.shape, y.shape, y.bincount(), X_train.mean(0), X_train.std(0))

model = MLP(2, 64, 3)
print(model)
n_params = sum(p.numel() for p in model.parameters())
print(f"parameters: {n_params}", [name for name, _ in model.named_parameters()])
for name, param in model.named_parameters():
    head = param.flatten()[:3]
    print(f"{name}: {list(param.shape)}, mean {param.mean().item():+.4f}, first {head}")

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, weight_decay=1e-4)

for step in range(301):
    model.train()
    logits = model(X_train)
    loss = loss_fn(logits, y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        acc = (logits.argmax(1) == y_train).float().mean()
        print(f"step {step:3d}  loss {loss.item():.4f}  train acc {acc.item():.3f}")

model.eval()
with torch.no_grad():
    logits = model(X_test)
    test_loss = F.cross_entropy(logits, y_test)
    pred = logits.argmax(dim=1)
    correct = (pred == y_test).sum().item()
print(f"test loss {test_loss:.4f}  accuracy {100 * correct / len(y_test):.1f}%")
probs = F.softmax(logits[:5], dim=1)
confidence, classes = probs.max(dim=1)
print(confidence, classes, y_test[:5], probs.sum(1))

# the same model trained with Adam from the same start, and a functional-style regression
torch.manual_seed(0)
model2 = MLP(2, 32, 3)
opt2 = torch.optim.Adam(model2.parameters(), lr=1e-2)
for _ in range(100):
    opt2.zero_grad()
    loss = F.cross_entropy(model2(X_train), y_train, label_smoothing=0.1)
    loss.backward()
    opt2.step()
print(f"adam loss {loss.item():.4f}", opt2.state_dict()["param_groups"][0]["lr"])
print(sorted(opt2.state_dict()["state"][0].keys()), opt2.state_dict()["state"][0]["step"])

w_true = torch.tensor([[-1.5], [0.75]])
features = torch.randn(500, 2)
labels = features @ w_true + 2.5 + 0.01 * torch.randn(500, 1)
net = nn.Linear(2, 1)
nn.init.normal_(net.weight, 0, 0.01)
nn.init.zeros_(net.bias)
trainer = torch.optim.SGD(net.parameters(), lr=0.03)
for epoch in range(3):
    for i in range(0, 500, 10):
        l = F.mse_loss(net(features[i:i + 10]), labels[i:i + 10])
        trainer.zero_grad()
        l.backward()
        trainer.step()
    print(f"epoch {epoch + 1}, loss {F.mse_loss(net(features), labels).item():f}")
print(net.weight.data, net.bias.data, math.isclose(net.bias.item(), 2.5, abs_tol=0.05))
