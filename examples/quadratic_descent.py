"""Gradient descent on a d-dimensional quadratic f(x) = 1/2 x^T A x - b^T x.

With A symmetric positive definite the minimiser solves A x = b, and plain gradient
descent with step 1/L (L the largest eigenvalue) converges at a rate set by the
condition number. The script tracks the objective gap and the gradient norm per
step and plots both on a log scale.
"""

import argparse
import os

import numpy as np

import ember


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=50)
    p.add_argument("--cond", type=float, default=100.0, help="condition number of A")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    args = p.parse_args()

    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((args.dim, args.dim)))
    eig = np.geomspace(1.0, args.cond, args.dim)
    A = ember.tensor((q * eig) @ q.T)
    b = ember.tensor(rng.standard_normal(args.dim))
    x_star = ember.linalg.solve(A, b)

    def f(x):
        return 0.5 * x @ A @ x - b @ x

    f_star = f(x_star).item()
    x = ember.zeros(args.dim, dtype=ember.float64, requires_grad=True)
    lr = 1.0 / eig.max()
    gaps, norms = [], []
    for _ in range(args.steps):
        loss = f(x)
        (grad,) = ember.autograd.grad(loss, x)
        gaps.append(loss.item() - f_star)
        norms.append(grad.norm().item())
        with ember.no_grad():
            x -= lr * grad
    rate = (1 - 1 / args.cond) ** 2
    print(f"d={args.dim}, condition number {args.cond:g}: gap {gaps[0]:.3e} -> {gaps[-1]:.3e} "
          f"after {args.steps} steps (theory: gap shrinks by at most {rate:.4f} per step)")
    print(f"distance to the minimiser: {(x.detach() - x_star).norm().item():.3e}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(args.out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.semilogy(gaps, label="f(x_k) - f*")
    ax.semilogy(norms, label="||grad f(x_k)||")
    ax.set(xlabel="step k", title=f"gradient descent, d={args.dim}, kappa={args.cond:g}")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(args.out, "quadratic_descent.png")
    fig.savefig(path, dpi=100)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
