"""The digits MLP with its whole training step under `mx.compile`, MLX's pattern.

The compiled step reads and writes the model's parameters and the optimizer's state (its
moments, step count and scheduled learning rate), so both are declared as the compiled
function's implicit inputs and outputs: `state = [model.state, optimizer.state]` and
`partial(mx.compile, inputs=state, outputs=state)`. The same training then runs without
compiling, from the same seed, and must give the same losses. The same file runs on MLX and,
via `python -m ember.run compile_step.py`, on ember.
"""

from functools import partial

from sklearn.datasets import load_digits

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class MLP(nn.Module):
    def __init__(self, input_dim: int = 64, hidden_dim: int = 64, output_dim: int = 10):
        super().__init__()
        self.layers = [nn.Linear(input_dim, hidden_dim), nn.Linear(hidden_dim, hidden_dim),
                       nn.Linear(hidden_dim, output_dim)]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nn.relu(layer(x))
        return self.layers[-1](x)


def loss_fn(model, X, y):
    return nn.losses.cross_entropy(model(X), y, reduction="mean")


def batch_iterate(batch_size, X, y):
    perm = mx.random.permutation(y.size)
    for s in range(0, y.size, batch_size):
        ids = perm[s : s + batch_size]
        yield X[ids], y[ids]


def train(compiled: bool, num_epochs: int = 4):
    digits = load_digits()
    X = mx.array(digits.data, dtype=mx.float32) / 16.0
    Y = mx.array(digits.target, dtype=mx.uint32)
    train_x, train_y, test_x, test_y = X[:1500], Y[:1500], X[1500:], Y[1500:]

    mx.random.seed(4)
    model = MLP()
    mx.eval(model.parameters())
    steps = num_epochs * ((train_y.size + 99) // 100)
    optimizer = optim.Adam(learning_rate=optim.cosine_decay(1e-2, steps))
    loss_and_grad_fn = nn.value_and_grad(model, loss_fn)

    def step(X, y):
        loss, grads = loss_and_grad_fn(model, X, y)
        optimizer.update(model, grads)
        return loss

    def eval_fn(X, y):
        return mx.mean(mx.argmax(model(X), axis=1) == y)

    state = [model.state, optimizer.state]
    if compiled:
        step = partial(mx.compile, inputs=state, outputs=state)(step)
        eval_fn = partial(mx.compile, inputs=model.state)(eval_fn)

    print("compiled" if compiled else "not compiled")
    for epoch in range(num_epochs):
        losses = []
        for x, y in batch_iterate(100, train_x, train_y):
            loss = step(x, y)
            mx.eval(state)
            losses.append(loss.item())
        accuracy = eval_fn(test_x, test_y)
        print(f"  epoch {epoch}: train loss {sum(losses) / len(losses):.6f}, "
              f"test accuracy {accuracy.item():.4f}, "
              f"learning rate {optimizer.learning_rate.item():.4e}")
    return losses


def main():
    compiled = train(compiled=True)
    eager = train(compiled=False)
    diff = max(abs(a - b) / abs(b) for a, b in zip(compiled, eager))
    print(f"compiled and eager losses of the last epoch agree within 1e-5: {diff < 1e-5}")


if __name__ == "__main__":
    main()
