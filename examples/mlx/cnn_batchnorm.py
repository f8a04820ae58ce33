"""A small convolutional classifier with batch normalisation, on handwritten digits.

MLX's convolutions take channels last, so the 8x8 digits become (N, 8, 8, 1) images.
`model.train()` makes `nn.BatchNorm` normalise with the batch's statistics (and update its
running ones); `model.eval()` makes it use the running statistics. The same file runs on
MLX and, via `python -m ember.run cnn_batchnorm.py`, on ember.

The convolutions have no bias: BatchNorm subtracts the channel mean, so a bias's gradient is
rounding noise, which Adam would scale up to full-size steps. The pooling averages: max
pooling picks one of two values that differ in their last bits, and two frameworks that sum
in different orders then send a gradient down different paths, so their runs part after a
few steps (each step's gradients still agree; the training is discontinuous, not wrong).
"""

from sklearn.datasets import load_digits

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class CNN(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm(16)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)
        self.fc = nn.Linear(16 * 2 * 2, num_classes)

    def __call__(self, x):
        x = self.pool(nn.relu(self.bn1(self.conv1(x))))  # (N, 4, 4, 8)
        x = self.pool(nn.relu(self.bn2(self.conv2(x))))  # (N, 2, 2, 16)
        return self.fc(x.reshape(x.shape[0], -1))


def loss_fn(model, X, y):
    return nn.losses.cross_entropy(model(X), y, reduction="mean")


def batch_iterate(batch_size, X, y):
    perm = mx.random.permutation(y.size)
    for s in range(0, y.size, batch_size):
        ids = perm[s : s + batch_size]
        yield X[ids], y[ids]


def load_data(n_train: int = 1500):
    digits = load_digits()
    X = (mx.array(digits.images, dtype=mx.float32) / 16.0)[..., None]  # NHWC
    y = mx.array(digits.target, dtype=mx.uint32)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def main():
    mx.random.seed(1)
    train_x, train_y, test_x, test_y = load_data()
    model = CNN()
    mx.eval(model.parameters())
    optimizer = optim.Adam(learning_rate=3e-3)
    loss_and_grad_fn = nn.value_and_grad(model, loss_fn)

    for epoch in range(3):
        model.train()
        losses = []
        for X, y in batch_iterate(100, train_x, train_y):
            loss, grads = loss_and_grad_fn(model, X, y)
            optimizer.update(model, grads)
            # the running statistics are state too: model.state holds them and the weights
            mx.eval(model.state, optimizer.state)
            losses.append(loss.item())
        model.eval()
        logits = model(test_x)
        test_loss = loss_fn(model, test_x, test_y)
        accuracy = mx.mean(mx.argmax(logits, axis=1) == test_y)
        print(f"Epoch {epoch}: train loss {sum(losses) / len(losses):.6f}, "
              f"test loss {test_loss.item():.6f}, test accuracy {accuracy.item():.4f}")
    print("bn1 running mean[:4]", " ".join(f"{v:.6f}" for v in model.bn1.running_mean[:4].tolist()))


if __name__ == "__main__":
    main()
