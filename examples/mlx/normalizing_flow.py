"""Normalizing flows and density estimation in MLX's own API, on 2-d data drawn here.

Two moons, two rings and a Gaussian mixture are drawn with `mx.random` under explicit keys.
A flow is built as mlx-examples would write RealNVP / Glow / MAF pieces: ActNorm with a
data-dependent initialisation, affine coupling layers with alternating binary masks
(`mx.arange % 2`) and `mx.tanh`-bounded log-scales, an invertible linear layer
parameterised by its LU factors (`mx.linalg.qr` / `mx.linalg.lu` on the CPU stream, the
log-determinant read off `mx.diag` instead of `mx.linalg.det`), and a MADE-based
autoregressive layer (masks by `mx.tril` and degrees, applied by `mx.where` on the weights).
Training maximises the log-likelihood under a standard-normal base written by hand, with
`nn.value_and_grad` and `optim.Adam` under `step_decay` and `exponential_decay`. Around it:
per-sample log-likelihoods by `mx.vmap`, a coupling's Jacobian by `mx.jvp` / `mx.vjp`
against finite differences, sampling by the inverse pass from `mx.random.normal(key=)`,
histograms by `mx.floor` / `mx.clip` and one-hot sums (MLX has no bincount), `mx.logsumexp`
of the true mixture density, `mx.isnan` / `mx.isinf` checks, parameters saved and loaded
(.safetensors, .npz), and the mistakes users make. The same file runs on MLX and, via
`python -m ember.run normalizing_flow.py`, on ember.
"""

import math
import os
import tempfile

from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

cpu = mx.cpu
LOG_2PI = math.log(2 * math.pi)


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


# ---------------------------------------------------------------- data


def two_moons(n, key):
    """Two interleaved half circles with Gaussian noise; also which moon each point is on."""
    k_t, k_b, k_n = mx.random.split(key, 3)
    t = mx.random.uniform(0, math.pi, (n,), key=k_t)
    upper = mx.random.bernoulli(0.5, (n,), key=k_b)
    a = mx.stack([mx.cos(t), mx.sin(t)], axis=1)
    b = mx.stack([1 - mx.cos(t), 0.5 - mx.sin(t)], axis=1)
    return mx.where(upper[:, None], a, b) + 0.05 * mx.random.normal((n, 2), key=k_n), upper


def rings(n, key):
    """Two concentric noisy rings of radius 1 and 2."""
    k_r, k_a, k_n = mx.random.split(key, 3)
    radius = 1.0 + mx.random.randint(0, 2, (n,), key=k_r).astype(mx.float32)
    angle = mx.random.uniform(-math.pi, math.pi, (n,), key=k_a)
    x = radius[:, None] * mx.stack([mx.cos(angle), mx.sin(angle)], axis=1)
    return x + 0.08 * mx.random.normal((n, 2), key=k_n)


MIX_MEANS = mx.array([[-1.5, 0.0], [1.5, 0.5], [0.0, -1.5]])
MIX_LOGITS = mx.log(mx.array([0.5, 0.3, 0.2]))
MIX_STD = 0.4


def mixture(n, key):
    """A 3-component isotropic Gaussian mixture in 2-d."""
    k_c, k_n = mx.random.split(key)
    comp = mx.random.categorical(MIX_LOGITS, shape=(n,), key=k_c)
    return MIX_MEANS[comp] + MIX_STD * mx.random.normal((n, 2), key=k_n), comp


def mixture_log_density(x):
    """The exact log-density of `mixture`, by logsumexp over its components."""
    d = (x[:, None, :] - MIX_MEANS[None]) / MIX_STD
    comp = -0.5 * mx.sum(d * d, axis=-1) - LOG_2PI - 2 * math.log(MIX_STD)
    return mx.logsumexp(comp + mx.log(mx.softmax(MIX_LOGITS)), axis=1)


def std_normal_log_prob(z):
    """log N(z; 0, I) summed over the last axis."""
    return -0.5 * mx.sum(z * z, axis=-1) - 0.5 * z.shape[-1] * LOG_2PI


def histogram(x, lo, hi, bins):
    """Counts of 2-d points on a bins x bins grid over [lo, hi)^2 (clipped into it), by
    a one-hot sum since MLX has no bincount."""
    width = (hi - lo) / bins
    cell = mx.clip(mx.floor((x - lo) / width), 0, bins - 1).astype(mx.int32)
    flat = cell[:, 0] * bins + cell[:, 1]
    counts = mx.sum(flat[:, None] == mx.arange(bins * bins), axis=0)
    return counts.reshape(bins, bins)


# ---------------------------------------------------------------- layers


class ActNorm(nn.Module):
    """y = (x + bias) * exp(log_scale), per feature; the first batch seen sets bias and
    log_scale so that the outputs have zero mean and unit variance (Glow)."""

    def __init__(self, dim):
        super().__init__()
        self.bias = mx.zeros((dim,))
        self.log_scale = mx.zeros((dim,))
        self.initialized = False

    def __call__(self, x):
        if not self.initialized:
            self.bias = -mx.mean(x, axis=0)
            self.log_scale = -mx.log(mx.std(x, axis=0) + 1e-6)
            self.initialized = True
        y = (x + self.bias) * mx.exp(self.log_scale)
        return y, mx.broadcast_to(mx.sum(self.log_scale), (x.shape[0],))

    def inverse(self, y):
        return y * mx.exp(-self.log_scale) - self.bias


class Coupling(nn.Module):
    """RealNVP affine coupling: the features where the mask is 1 pass through and set a
    tanh-bounded log-scale and a shift for the others."""

    def __init__(self, dim, hidden, parity):
        super().__init__()
        self._mask = (mx.arange(dim) % 2 == parity).astype(mx.float32)
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2 * dim))
        self.scale = mx.ones((dim,))

    def _shift_scale(self, x_kept):
        s, t = mx.split(self.net(x_kept), 2, axis=-1)
        free = 1 - self._mask
        return self.scale * mx.tanh(s) * free, t * free

    def __call__(self, x):
        kept = x * self._mask
        s, t = self._shift_scale(kept)
        y = kept + (1 - self._mask) * (x * mx.exp(s) + t)
        return y, mx.sum(s, axis=-1)

    def inverse(self, y):
        kept = y * self._mask
        s, t = self._shift_scale(kept)
        return kept + (1 - self._mask) * ((y - t) * mx.exp(-s))


class LULinear(nn.Module):
    """An invertible linear map W = P L (U + diag(sign * exp(log_s))), started at a random
    rotation; log|det W| = sum(log_s) needs no determinant."""

    def __init__(self, dim, key):
        super().__init__()
        q, _ = mx.linalg.qr(mx.random.normal((dim, dim), key=key), stream=cpu)
        perm, lower, upper = mx.linalg.lu(q, stream=cpu)
        diag = mx.diag(upper)
        self._perm = perm
        self._sign = mx.sign(diag)
        self.lower = mx.tril(lower, k=-1)
        self.upper = mx.triu(upper, k=1)
        self.log_s = mx.log(mx.abs(diag))

    def weight(self):
        dim = self.log_s.shape[0]
        lower = mx.tril(self.lower, k=-1) + mx.eye(dim)
        upper = mx.triu(self.upper, k=1) + mx.diag(self._sign * mx.exp(self.log_s))
        return mx.take(lower @ upper, self._perm, axis=0)

    def __call__(self, x):
        return x @ self.weight().T, mx.broadcast_to(mx.sum(self.log_s), (x.shape[0],))

    def inverse(self, y):
        return y @ mx.linalg.inv(self.weight(), stream=cpu).T


class MaskedLinear(nn.Linear):
    """A Linear layer whose weight is zeroed where `mask` is False."""

    def __init__(self, in_dims, out_dims, mask):
        super().__init__(in_dims, out_dims)
        self._mask = mask

    def __call__(self, x):
        return x @ mx.where(self._mask, self.weight, 0.0).T + self.bias


def made_masks(dim, hidden):
    """MADE's masks from unit degrees: hidden unit k sees inputs of degree <= its own,
    output d sees hidden units of degree < d; the direct connection is strictly lower."""
    d_in = mx.arange(1, dim + 1)
    d_hid = mx.arange(hidden) % max(dim - 1, 1) + 1
    first = d_hid[:, None] >= d_in[None, :]
    last = d_in[:, None] > d_hid[None, :]
    direct = mx.tril(mx.ones((dim, dim)), k=-1) > 0
    return first, last, direct


class MADE(nn.Module):
    """An autoregressive network: output d depends on inputs 1 .. d-1 only."""

    def __init__(self, dim, hidden, n_out=2):
        super().__init__()
        first, last, direct = made_masks(dim, hidden)
        self.n_out = n_out
        self.inp = MaskedLinear(dim, hidden, first)
        self.out = MaskedLinear(hidden, n_out * dim, mx.concatenate([last] * n_out, axis=0))
        self.skip = MaskedLinear(dim, n_out * dim, mx.concatenate([direct] * n_out, axis=0))

    def __call__(self, x):
        return self.out(nn.relu(self.inp(x))) + self.skip(x)


class MAF(nn.Module):
    """A masked autoregressive flow layer: u = (x - mu(x<)) * exp(-alpha(x<))."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.made = MADE(dim, hidden)

    def _params(self, x):
        mu, alpha = mx.split(self.made(x), 2, axis=-1)
        return mu, 2.0 * mx.tanh(alpha / 2.0)

    def __call__(self, x):
        mu, alpha = self._params(x)
        return (x - mu) * mx.exp(-alpha), -mx.sum(alpha, axis=-1)

    def inverse(self, u):
        x = mx.zeros_like(u)
        column = mx.arange(u.shape[-1])
        for d in range(u.shape[-1]):
            mu, alpha = self._params(x)
            x = mx.where(column == d, u * mx.exp(alpha) + mu, x)
        return x


class Flow(nn.Module):
    """A stack of invertible layers over a standard-normal base."""

    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def __call__(self, x):
        log_det = mx.zeros((x.shape[0],))
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        return std_normal_log_prob(z) + log_det

    def inverse(self, z):
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z

    def sample(self, n, key):
        return self.inverse(mx.random.normal((n, 2), key=key))


def make_flow(key, hidden=16, maf=True):
    k1, k2 = mx.random.split(key)
    mx.random.seed(int(mx.random.randint(0, 1000, (), key=k1).item()))
    layers = [ActNorm(2), Coupling(2, hidden, 0), LULinear(2, k2), Coupling(2, hidden, 1)]
    if maf:
        layers.append(MAF(2, hidden))
    return Flow(layers)


# ---------------------------------------------------------------- sections


def data():
    print("== data")
    moons, upper = two_moons(512, mx.random.key(0))
    show("moons mean", mx.mean(moons, axis=0))
    show("moons std", mx.std(moons, axis=0))
    print("upper moon count:", mx.sum(upper).item())
    ring = rings(512, mx.random.key(1))
    radius = mx.sqrt(mx.sum(ring * ring, axis=1))
    show("ring radius quantiles", mx.sort(radius)[mx.array([25, 256, 486])])
    mix, comp = mixture(512, mx.random.key(2))
    print("mixture components:", mx.sum(comp[:, None] == mx.arange(3), axis=0).tolist())
    print("moons histogram (4x4 over [-1.5, 2.5)):")
    print(histogram(moons, -1.5, 2.5, 4))
    lp = mixture_log_density(mix)
    print(f"mixture true mean log-density: {mx.mean(lp).item():.4f}")
    grid = mx.stack(mx.meshgrid(mx.linspace(-5, 5, 101), mx.linspace(-5, 5, 101)), axis=-1)
    mass = mx.exp(mx.logsumexp(mixture_log_density(grid.reshape(-1, 2)))) * 0.1 * 0.1
    print(f"mixture density integrates to {mass.item():.4f}")
    return moons, ring, mix


def layers_check():
    print("== layers")
    key = mx.random.key(3)
    x = mx.random.normal((6, 2), key=key) * mx.array([2.0, 0.5]) + 1.0
    act = ActNorm(2)
    y, ld = act(x)
    show("actnorm out mean", mx.mean(y, axis=0))
    show("actnorm out std", mx.std(y, axis=0))
    print("actnorm log-det == -sum(log std):",
          mx.allclose(ld[0], -mx.sum(mx.log(mx.std(x, axis=0) + 1e-6))).item())
    print("actnorm inverse round trip:", mx.allclose(act.inverse(y), x, atol=1e-5).item())
    print("coupling masks:", Coupling(2, 4, 0)._mask, Coupling(2, 4, 1)._mask)

    lu = LULinear(2, mx.random.key(4))
    w = lu.weight()
    print("LU permutation:", lu._perm)
    print("W orthogonal:", mx.allclose(w @ w.T, mx.eye(2), atol=1e-5).item())
    w_inv = mx.linalg.inv(w, stream=cpu)
    print("W^-1 W == I:", mx.allclose(w_inv @ w, mx.eye(2), atol=1e-5).item())
    lu.log_s = lu.log_s + mx.array([0.3, -0.1])
    p, l_f, u_f = mx.linalg.lu(lu.weight(), stream=cpu)
    print(f"log|det W| by sum(log_s) {mx.sum(lu.log_s).item():.4f}, "
          f"by the LU of W {mx.sum(mx.log(mx.abs(mx.diag(u_f)))).item():.4f}")
    z, _ = lu(x)
    print("LU linear inverse round trip:", mx.allclose(lu.inverse(z), x, atol=1e-5).item())

    first, last, direct = made_masks(3, 5)
    print("MADE input mask:")
    print(first.astype(mx.int32))
    print("MADE output mask:")
    print(last.astype(mx.int32))
    print("MADE direct mask:", direct.astype(mx.int32).tolist())
    mx.random.seed(11)
    made = MADE(3, 8, n_out=1)
    x3 = mx.random.normal((3,), key=mx.random.key(5))
    rows = []
    for d in range(3):
        _, (g,) = mx.vjp(lambda v: made(v[None])[0], [x3], [mx.arange(3) == d])
        rows.append(g)
    jac = mx.stack(rows)
    print("MADE Jacobian is strictly lower triangular:",
          mx.array_equal(mx.triu(jac) == 0, mx.ones((3, 3), dtype=mx.bool_)).item())
    print("MADE Jacobian nonzero pattern:", (jac != 0).astype(mx.int32).tolist())


def train(flow, data_x, schedule, steps, batch, key, name):
    """Maximum likelihood by Adam on random minibatches; returns the final gradients."""
    flow(data_x[:256])  # ActNorm's data-dependent initialisation
    optimizer = optim.Adam(learning_rate=schedule)

    def loss_fn(model, xb):
        return -mx.mean(model.log_prob(xb))

    loss_and_grad = nn.value_and_grad(flow, loss_fn)
    keys = mx.random.split(key, steps)
    for step in range(steps):
        idx = mx.random.randint(0, data_x.shape[0], (batch,), key=keys[step])
        loss, grads = loss_and_grad(flow, data_x[idx])
        optimizer.update(flow, grads)
        mx.eval(flow.parameters(), optimizer.state)
        if step % 15 == 0 or step == steps - 1:
            lr = optimizer.learning_rate.item()
            print(f"{name} step {step:3d} nll {loss.item():.4f} lr {lr:.5f}")
    return grads


def training(moons, mix):
    print("== training")
    flow = make_flow(mx.random.key(10))
    n_params = sum(v.size for _, v in tree_flatten(flow.trainable_parameters()))
    print("trainable parameters:", n_params)
    print("parameter groups:", sorted(k.split(".")[1] for k, _ in
                                      tree_flatten(flow.trainable_parameters()))[:6])
    grads = train(flow, moons, optim.step_decay(1e-2, 0.5, 30), 61, 128,
                  mx.random.key(11), "moons")
    bad = [k for k, g in tree_flatten(grads) if mx.any(mx.isnan(g) | mx.isinf(g)).item()]
    print("non-finite gradients:", bad)
    test, _ = two_moons(400, mx.random.key(12))
    print(f"moons test nll {-mx.mean(flow.log_prob(test)).item():.4f}")

    flow_mix = make_flow(mx.random.key(20), maf=False)
    train(flow_mix, mix, optim.exponential_decay(1e-2, 0.97), 46, 128,
          mx.random.key(21), "mixture")
    test_mix, _ = mixture(400, mx.random.key(22))
    model_lp, true_lp = flow_mix.log_prob(test_mix), mixture_log_density(test_mix)
    print(f"mixture test nll {-mx.mean(model_lp).item():.4f}, "
          f"true {-mx.mean(true_lp).item():.4f}, "
          f"KL estimate {mx.mean(true_lp - model_lp).item():.4f}")
    return flow


def transforms(flow):
    print("== vmap, jvp, vjp")
    x, _ = two_moons(64, mx.random.key(30))
    batched = flow.log_prob(x)
    per_sample = mx.vmap(lambda v: flow.log_prob(v[None])[0])(x)
    print("vmap per-sample log-likelihoods match the batch:",
          mx.allclose(per_sample, batched, atol=1e-4).item())
    print(f"mean log-likelihood {mx.mean(per_sample).item():.4f}")

    coupling = flow.layers[1]
    f = lambda v: coupling(v[None])[0][0]
    x0 = mx.array([0.3, -0.4])
    jvp_cols = [mx.jvp(f, [x0], [mx.eye(2)[i]])[1][0] for i in range(2)]
    j_fwd = mx.stack(jvp_cols, axis=1)
    vjp_rows = [mx.vjp(f, [x0], [mx.eye(2)[i]])[1][0] for i in range(2)]
    j_rev = mx.stack(vjp_rows, axis=0)
    eps = 1e-2
    fd_cols = [(f(x0 + eps * mx.eye(2)[i]) - f(x0 - eps * mx.eye(2)[i])) / (2 * eps)
               for i in range(2)]
    j_fd = mx.stack(fd_cols, axis=1)
    show("coupling Jacobian (jvp)", j_fwd)
    print("jvp == vjp:", mx.allclose(j_fwd, j_rev, atol=1e-6).item())
    print("jvp ~ finite differences:", mx.allclose(j_fwd, j_fd, atol=1e-2).item())
    print("Jacobian upper-right is zero (mask 1 0):", j_fwd[0, 1].item() == 0.0)
    det = j_fwd[0, 0] * j_fwd[1, 1] - j_fwd[0, 1] * j_fwd[1, 0]
    _, ld = coupling(x0[None])
    print(f"log|det J| {mx.log(mx.abs(det)).item():.4f}, layer log-det {ld[0].item():.4f}")
    g = mx.grad(lambda v: flow.log_prob(v[None])[0])(x0)
    show("score at x0", g)


def sampling(flow, moons):
    print("== sampling")
    key = mx.random.key(40)
    k_a, k_b = mx.random.split(key)
    z = mx.random.normal((2000, 2), key=k_a)
    samples = flow.inverse(z)
    z_back, _ = flow(samples)
    print("inverse then forward recovers z:", mx.allclose(z_back, z, atol=1e-3).item())
    print("finite samples:", mx.all(mx.isfinite(samples)).item(),
          "nan:", mx.any(mx.isnan(samples)).item())
    h_s = histogram(samples, -1.5, 2.5, 4)
    h_d = histogram(moons, -1.5, 2.5, 4)
    print("sample histogram:")
    print(h_s)
    tv = 0.5 * mx.sum(mx.abs(h_s / 2000 - h_d / 512))
    print(f"total variation to the data histogram {tv.item():.3f}")
    again = flow.sample(2000, k_a)
    print("same key, same samples:", mx.array_equal(again, samples).item())
    other = flow.sample(5, k_b)
    print("other key shape:", other.shape, other.dtype)
    x_hi = mx.array([[1e20, 0.0], [0.5, 0.25], [float("nan"), 0.0]])
    lp = flow.log_prob(x_hi)
    print("log_prob isinf:", mx.isinf(lp).tolist(), "isnan:", mx.isnan(lp).tolist())
    lme = mx.logsumexp(flow.log_prob(moons)) - math.log(moons.shape[0])
    print(f"log-mean-exp likelihood on the data {lme.item():.4f}")


def save_load(flow):
    print("== save and load")
    params = dict(tree_flatten(flow.parameters()))
    x, _ = two_moons(8, mx.random.key(50))
    before = flow.log_prob(x)
    with tempfile.TemporaryDirectory() as tmp:
        st = os.path.join(tmp, "flow.safetensors")
        npz = os.path.join(tmp, "flow.npz")
        mx.save_safetensors(st, params)
        mx.savez(npz, **params)
        mx.save(os.path.join(tmp, "log_s.npy"), flow.layers[2].log_s)
        print("files:", sorted(os.listdir(tmp)))
        loaded_st = mx.load(st)
        loaded_npz = mx.load(npz)
        one = mx.load(os.path.join(tmp, "log_s.npy"))
    print("keys:", len(loaded_st), sorted(loaded_st)[:3])
    print("same keys in both:", sorted(loaded_st) == sorted(loaded_npz))
    print("safetensors exact:", all(mx.array_equal(loaded_st[k], v) for k, v in params.items()))
    print("npz exact:", all(mx.array_equal(loaded_npz[k], v) for k, v in params.items()))
    print("npy exact:", mx.array_equal(one, flow.layers[2].log_s).item(), one.dtype)

    fresh = make_flow(mx.random.key(99))
    fresh.update(tree_unflatten(list(loaded_st.items())))
    for layer in fresh.layers:
        if isinstance(layer, ActNorm):
            layer.initialized = True
    for a, b in zip(fresh.layers, flow.layers):
        if isinstance(a, LULinear):
            a._perm, a._sign = b._perm, b._sign
    print("reloaded flow, same log-likelihoods:",
          mx.array_equal(fresh.log_prob(x), before).item())
    half = tree_map(lambda v: v.astype(mx.float16), flow.parameters())
    print("float16 copy dtypes:", sorted({str(v.dtype) for _, v in tree_flatten(half)}))


def mistakes():
    print("== mistakes")
    mx.random.seed(0)
    coupling3 = Coupling(3, 4, 0)
    flow = make_flow(mx.random.key(60), maf=False)
    flow(mx.ones((4, 2)))

    def loss_with_aux(model, xb):
        lp = model.log_prob(xb)
        return -mx.mean(lp), lp

    cases = [
        lambda: mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]), stream=cpu),
        lambda: coupling3(mx.ones((4, 2))),
        lambda: Coupling(2, 4, 0).net(mx.ones((4, 3))),
        lambda: mx.grad(lambda v: (mx.sum(v * v), v))(mx.ones(2)),
        lambda: mx.grad(lambda v: v * v)(mx.ones(2)),
        lambda: mx.linalg.lu(mx.ones((2, 3)), stream=cpu),
        lambda: mx.linalg.qr(mx.ones((3,)), stream=cpu),
        lambda: mx.tril(mx.ones(3)),
        lambda: mx.jvp(lambda v: v * 2, [mx.ones(2)], [mx.ones(3)]),
        lambda: mx.random.normal((2, 2), key=mx.random.key(0), dtype=mx.int32),
        lambda: mx.load("/nonexistent/flow.safetensors"),
        lambda: mx.linalg.inv(mx.ones((2, 3)), stream=cpu),
    ]
    for case in cases:
        try:
            result = case()
            mx.eval(result)
            print("no error", result)
        except Exception as e:
            print(f"{type(e).__name__}: {e}")
    (loss, lp), grads = nn.value_and_grad(flow, loss_with_aux)(flow, mx.ones((4, 2)))
    print(f"value_and_grad with an aux output: loss {loss.item():.4f}, aux {lp.shape}, "
          f"{len(tree_flatten(grads))} gradients")


if __name__ == "__main__":
    moons, ring, mix = data()
    layers_check()
    flow = training(moons, mix)
    transforms(flow)
    sampling(flow, moons)
    save_load(flow)
    mistakes()
