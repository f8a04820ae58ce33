"""An MLP classifier for handwritten digits, in the shape of MLX's mnist example.

scikit-learn's bundled 8x8 digits stand in for MNIST (nothing is downloaded). The same
file runs on MLX (`python mnist_mlp.py`) and on ember (`python -m ember.run mnist_mlp.py`).
"""

from sklearn.datasets import load_digits

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class MLP(nn.Module):
    """A simple MLP."""

    def __init__(self, num_layers: int, input_dim: int, hidden_dim: int, output_dim: int):
        super().__init__()
        layer_sizes = [input_dim] + [hidden_dim] * num_layers + [output_dim]
        self.layers = [
            nn.Linear(idim, odim) for idim, odim in zip(layer_sizes[:-1], layer_sizes[1:])
        ]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nn.relu(layer(x))
        return self.layers[-1](x)


def loss_fn(model, X, y):
    return nn.losses.cross_entropy(model(X), y, reduction="mean")


def eval_fn(model, X, y):
    return mx.mean(mx.argmax(model(X), axis=1) == y)


def batch_iterate(batch_size, X, y):
    perm = mx.random.permutation(y.size)
    for s in range(0, y.size, batch_size):
        ids = perm[s : s + batch_size]
        yield X[ids], y[ids]


def load_data(n_train: int = 1500):
    digits = load_digits()
    X = mx.array(digits.data, dtype=mx.float32) / 16.0
    y = mx.array(digits.target, dtype=mx.uint32)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def main():
    mx.random.seed(0)
    num_layers, hidden_dim, num_classes = 2, 32, 10
    batch_size, num_epochs, learning_rate = 64, 5, 0.1

    train_images, train_labels, test_images, test_labels = load_data()
    model = MLP(num_layers, train_images.shape[-1], hidden_dim, num_classes)
    mx.eval(model.parameters())

    loss_and_grad_fn = nn.value_and_grad(model, loss_fn)
    optimizer = optim.SGD(learning_rate=learning_rate, momentum=0.9)

    for e in range(num_epochs):
        losses = []
        for X, y in batch_iterate(batch_size, train_images, train_labels):
            loss, grads = loss_and_grad_fn(model, X, y)
            optimizer.update(model, grads)
            mx.eval(model.parameters(), optimizer.state)
            losses.append(loss.item())
        accuracy = eval_fn(model, test_images, test_labels)
        mean_loss = sum(losses) / len(losses)
        print(f"Epoch {e}: train loss {mean_loss:.6f}, test accuracy {accuracy.item():.4f}")


if __name__ == "__main__":
    main()
