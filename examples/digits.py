"""Train a classifier on scikit-learn's handwritten digits (8x8 images, no download).

    .venv/bin/python examples/digits.py         # an MLP (what `make demo` runs)
    .venv/bin/python examples/digits.py --cnn   # a small CNN instead

The MLP's 20 epochs train in well under a second on two idle cores and in a few seconds
on busy ones (1-4 s measured while other jobs loaded the machine); loading scikit-learn and
matplotlib, the checkpoint and the plot add a few seconds. The CNN trains for tens of
seconds. The script prints its own training time.

It shows the whole loop a PyTorch user knows: Dataset + DataLoader, an nn.Module,
cross-entropy, an optimizer, a progress bar, test accuracy, a checkpoint saved
with `ember.save` and reloaded with `ember.load`, and a plot of the curves.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 16 x 4 x 4
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # 32 x 2 x 2
        return self.fc(x.flatten(1))


def load_data(seed: int):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # N x 1 x 8 x 8
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


@ember.no_grad()
def accuracy(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    model.train()
    return correct / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cnn", action="store_true", help="train a small CNN, not an MLP")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    args = parser.parse_args()

    ember.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    train = DataLoader(TensorDataset(ember.from_numpy(x_train), ember.from_numpy(y_train)),
                       batch_size=args.batch_size, shuffle=True)
    test = DataLoader(TensorDataset(ember.from_numpy(x_test), ember.from_numpy(y_test)),
                      batch_size=256)
    model = CNN() if args.cnn else MLP()
    opt = ember.optim.Adam(model.parameters(), lr=args.lr)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{type(model).__name__} with {n_params:,} parameters; "
          f"{len(x_train)} training and {len(x_test)} test images")

    losses, accs = [], []
    start = time.perf_counter()
    bar = tqdm(range(args.epochs), desc="training", unit="epoch")
    for _ in bar:
        epoch_loss, seen, t0 = 0.0, 0, time.perf_counter()
        for x, y in train:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss.item() * y.numel()
            seen += y.numel()
        sched.step()
        losses.append(epoch_loss / seen)
        accs.append(accuracy(model, test))
        rate = seen / (time.perf_counter() - t0)
        bar.set_postfix(loss=f"{losses[-1]:.4f}", acc=f"{accs[-1]:.3f}", img_s=f"{rate:,.0f}")
    elapsed = time.perf_counter() - start
    print(f"test accuracy {accs[-1]:.2%} after {args.epochs} epochs ({elapsed:.1f} s)")

    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "digits.pt")
    ember.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, ckpt)
    reloaded = CNN() if args.cnn else MLP()
    reloaded.load_state_dict(ember.load(ckpt)["model"])
    reloaded.eval()
    model.eval()
    with ember.no_grad():
        xs = ember.from_numpy(x_test)
        same = ember.equal(model(xs).argmax(1), reloaded(xs).argmax(1))
    print(f"checkpoint written to {ckpt}; reloaded model gives the same predictions: {same}")

    plot = os.path.join(args.out, "digits.png")
    save_plot(losses, accs, plot)
    print(f"loss and accuracy curves written to {plot}")


def save_plot(losses, accs, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, len(losses) + 1)
    ax1.plot(epochs, losses, marker="o")
    ax1.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
    ax2.plot(epochs, accs, marker="o", color="tab:green")
    ax2.set(xlabel="epoch", ylabel="test accuracy", title="accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
