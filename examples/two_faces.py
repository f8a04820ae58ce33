"""One model trained through ember's two faces: PyTorch's API and MLX's.

A 2-layer MLP on scikit-learn's 8x8 digits is built twice, once with `import ember as
torch` (nn.Linear, F.cross_entropy, optim.SGD, `loss.backward()`) and once with
`ember.mlx.core as mx` (nn.Linear, nn.losses.cross_entropy, optimizers.SGD,
`nn.value_and_grad`, lazy arrays), from the same initial weights, on the same data in the
same batch order. Both faces run on ember's one engine, so the two loss sequences must agree
(within 1e-5).

The faces differ where the frameworks differ: both Linear layers compute `x @ W.T + b` with
W of shape (out, in), but MLX's cross_entropy returns one loss per example (reduction
'none') so the mean is taken by hand; MLX's SGD keeps `v = mu v + g` as PyTorch does.

    .venv/bin/python examples/two_faces.py
"""

import numpy as np
from sklearn.datasets import load_digits

import ember as torch
import ember.mlx.core as mx
import ember.mlx.nn as mnn
import ember.mlx.optimizers as moptim
import ember.nn.functional as F
from ember import nn, optim
from ember.mlx.utils import tree_flatten

LR, MOMENTUM, BATCH, EPOCHS = 0.1, 0.9, 100, 3

digits = load_digits()
X = (digits.data / 16.0).astype(np.float32)
Y = digits.target.astype(np.int64)
rng = np.random.default_rng(0)
order = [rng.permutation(len(Y)) for _ in range(EPOCHS)]
batches = [idx[s : s + BATCH] for idx in order for s in range(0, len(Y), BATCH)]

# the PyTorch face
torch.manual_seed(0)
tmodel = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
topt = optim.SGD(tmodel.parameters(), lr=LR, momentum=MOMENTUM)


# the MLX face, from the same weights (the Sequential's layers 0 and 2 are MLX's 0 and 2 too)
class MLP(mnn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [mnn.Linear(64, 32), mnn.ReLU(), mnn.Linear(32, 10)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


mmodel = MLP()
mmodel.load_weights([(f"layers.{name}", mx.array(p.detach().numpy()))
                     for name, p in tmodel.named_parameters()])
mopt = moptim.SGD(learning_rate=LR, momentum=MOMENTUM)


def mlx_loss(model, x, y):
    return mnn.losses.cross_entropy(model(x), y).mean()  # MLX's default reduction is 'none'


mlx_loss_and_grad = mnn.value_and_grad(mmodel, mlx_loss)

torch_losses, mlx_losses = [], []
for idx in batches:
    x, y = X[idx], Y[idx]

    topt.zero_grad()
    loss = F.cross_entropy(tmodel(torch.from_numpy(x)), torch.from_numpy(y))
    loss.backward()
    topt.step()
    torch_losses.append(loss.item())

    loss, grads = mlx_loss_and_grad(mmodel, mx.array(x), mx.array(y))
    mopt.update(mmodel, grads)
    mx.eval(mmodel.parameters(), mopt.state)
    mlx_losses.append(loss.item())

print(f"{'step':>4}  {'torch face':>11}  {'mlx face':>11}")
for i, (a, b) in enumerate(zip(torch_losses, mlx_losses)):
    if i % 5 == 0 or i == len(batches) - 1:
        print(f"{i:>4}  {a:11.8f}  {b:11.8f}")
diff = max(abs(a - b) for a, b in zip(torch_losses, mlx_losses))
print(f"largest loss difference over {len(batches)} steps: {diff:.3e}")
mlx_weights = dict(tree_flatten(mmodel.parameters()))
weights_diff = max(float(np.abs(p.detach().numpy() - np.array(mlx_weights[f"layers.{name}"])).max())
                   for name, p in tmodel.named_parameters())
print(f"largest weight difference after training: {weights_diff:.3e}")
assert diff < 1e-5, diff
