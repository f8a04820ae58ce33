"""A small variational autoencoder on handwritten digits, in the spirit of MLX's vae example.

An MLP encoder maps an 8x8 digit to the mean and log-variance of a 4-dimensional Gaussian;
a sample from it (the reparameterisation trick: mu + sigma * eps, eps from `mx.random.normal`)
goes through an MLP decoder that gives the pixels' logits. The loss is the reconstruction's
binary cross-entropy plus the KL divergence to the standard normal. After training, the
weights go to a file with `save_weights` and come back into a fresh model with
`load_weights`, which must give the same loss. The same file runs on MLX and, via
`python -m ember.run vae.py`, on ember.
"""

import os
import tempfile

from sklearn.datasets import load_digits

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class VAE(nn.Module):
    def __init__(self, num_features: int = 64, hidden_dim: int = 64, latent_dim: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(num_features, hidden_dim), nn.ReLU())
        self.to_mu = nn.Linear(hidden_dim, latent_dim)
        self.to_logvar = nn.Linear(hidden_dim, latent_dim)
        self.decoder = nn.Sequential(
            nn.Linear(latent_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, num_features)
        )

    def encode(self, x):
        h = self.encoder(x)
        return self.to_mu(h), self.to_logvar(h)

    def __call__(self, x, key=None):
        mu, logvar = self.encode(x)
        eps = mx.random.normal(mu.shape, key=key)
        z = mu + mx.exp(0.5 * logvar) * eps
        return self.decoder(z), mu, logvar


def loss_fn(model, x, key=None):
    logits, mu, logvar = model(x, key)
    recon = nn.losses.binary_cross_entropy(logits, x, with_logits=True, reduction="sum")
    kl = -0.5 * mx.sum(1 + logvar - mu.square() - mx.exp(logvar))
    return (recon + kl) / x.shape[0]


def batch_iterate(batch_size, X):
    perm = mx.random.permutation(X.shape[0])
    for s in range(0, X.shape[0], batch_size):
        yield X[perm[s : s + batch_size]]


def main():
    mx.random.seed(2)
    digits = mx.array(load_digits().data, dtype=mx.float32) / 16.0
    train, test = digits[:1500], digits[1500:]
    model = VAE()
    mx.eval(model.parameters())
    optimizer = optim.AdamW(learning_rate=2e-3, weight_decay=1e-4)
    loss_and_grad_fn = nn.value_and_grad(model, loss_fn)
    eval_key = mx.random.key(7)  # the same noise for every evaluation

    for epoch in range(4):
        losses = []
        for x in batch_iterate(64, train):
            loss, grads = loss_and_grad_fn(model, x)
            optimizer.update(model, grads)
            mx.eval(model.parameters(), optimizer.state)
            losses.append(loss.item())
        test_loss = loss_fn(model, test, eval_key)
        print(f"Epoch {epoch}: train loss {sum(losses) / len(losses):.5f}, "
              f"test loss {test_loss.item():.5f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vae.safetensors")
        model.save_weights(path)
        reloaded = VAE()
        reloaded.load_weights(path)
    before = loss_fn(model, test, eval_key).item()
    after = loss_fn(reloaded, test, eval_key).item()
    print(f"test loss after reloading {after:.5f}, same as before: {after == before}")

    mu, _ = reloaded.encode(test[:3])
    print("latent means of three test digits:")
    for row in mu.tolist():
        print("  " + " ".join(f"{v:+.4f}" for v in row))


if __name__ == "__main__":
    main()
