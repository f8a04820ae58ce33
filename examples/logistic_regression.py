"""Logistic regression on two Gaussian blobs, with binary_cross_entropy_with_logits.

The model is one weight vector and a bias; the loss works on logits, so it never
takes the log of a sigmoid that has rounded to 0 or 1.
"""

import numpy as np

import ember
import ember.nn.functional as F


def main() -> None:
    rng = np.random.default_rng(0)
    n = 400
    x = np.concatenate([rng.normal(-1.0, 1.0, (n // 2, 2)), rng.normal(1.5, 1.0, (n // 2, 2))])
    y = np.concatenate([np.zeros(n // 2), np.ones(n // 2)])
    X = ember.tensor(x, dtype=ember.float32)
    Y = ember.tensor(y, dtype=ember.float32)

    w = ember.zeros(2, requires_grad=True)
    b = ember.zeros(1, requires_grad=True)
    opt = ember.optim.SGD([w, b], lr=0.5)
    for step in range(201):
        logits = X @ w + b
        loss = F.binary_cross_entropy_with_logits(logits, Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            acc = ((logits > 0).float() == Y).float().mean().item()
            print(f"step {step:3d}  loss {loss.item():.4f}  accuracy {acc:.3f}")
    print(f"decision boundary: {w[0].item():.3f} x0 + {w[1].item():.3f} x1 + "
          f"{b.item():.3f} = 0")


if __name__ == "__main__":
    main()
