"""State-space sequence models (S4D and Mamba) in MLX's own API, on synthetic sequences.

The data are drawn here with `mx.random` and explicit keys: noisy sinusoids (a one-step
denoising regression) and the selective-copy task of the Mamba paper (a few data tokens
scattered among blanks must be recalled, in order, after a run of markers). First an
S4D-style diagonal SSM: a complex diagonal A kept as separate real arrays (`-exp(log_re)` and
`im`), discretised by zero-order hold with `mx.exp` and an `expm1`-style formula, its
convolution kernel computed by powers (a Vandermonde product, repeated multiplication and
MLX's complex64 arrays, checked equal) and applied by FFT (`mx.fft.rfft` / `irfft` of padded
sequences) against the recurrence and a causal `mx.conv1d`. Then the selective scan of Mamba
written three ways and checked equal: a Python loop over time, a parallel scan from `mx.cumsum`
of log-space terms (and from `mx.cumprod`), and a chunked scan carrying the state across
chunks; `mx.vmap` over independent scans and `mx.grad` through the scan against finite
differences. Then the Mamba block (`nn.Linear` projections, a causal depthwise `nn.Conv1d`,
`nn.silu`, `nn.softplus` for the step sizes, `mx.einsum` for the B / C projections, RMSNorm,
residual stacks) trained on selective copying with `nn.value_and_grad`, `optim.AdamW` under
`optim.cosine_decay` and `optim.clip_grad_norm`, eagerly and as a compiled step with state;
its recurrent inference mode (one token at a time) checked against the parallel forward;
parameter counts with `tree_flatten`; typical mistakes.
Run on ember with `python -m ember.run state_space_models.py`.
"""

import math
from functools import partial

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


def close(a, b, rtol=1e-4, atol=1e-5):
    return mx.allclose(a, b, rtol=rtol, atol=atol).item()


# ---------------------------------------------------------------- data

def noisy_sines(key, batch, length):
    """Sinusoids of random frequency and phase, with Gaussian noise added: (B, L, 1)."""
    k1, k2, k3 = mx.random.split(key, 3)
    freq = mx.random.uniform(0.05, 0.3, (batch, 1), key=k1)
    phase = mx.random.uniform(0, 2 * math.pi, (batch, 1), key=k2)
    t = mx.arange(length, dtype=mx.float32)
    clean = mx.sin(2 * math.pi * freq * t + phase)
    noisy = clean + 0.3 * mx.random.normal(clean.shape, key=k3)
    return noisy[..., None], clean[..., None]


VOCAB, BLANK, MARK, N_DATA, N_SPREAD = 8, 0, 7, 3, 12


def selective_copy(key, batch):
    """Tokens 1..6 at N_DATA sorted random places among N_SPREAD blanks, then N_DATA markers;
    the targets are the data tokens in order, read at the marker positions."""
    k1, k2 = mx.random.split(key)
    places = mx.sort(mx.argsort(mx.random.uniform(shape=(batch, N_SPREAD), key=k1))[:, :N_DATA],
                     axis=1)
    tokens = mx.random.randint(1, MARK, (batch, N_DATA), key=k2)
    seq = mx.put_along_axis(mx.zeros((batch, N_SPREAD), mx.int32), places, tokens, axis=1)
    inputs = mx.concatenate([seq, mx.full((batch, N_DATA), MARK, mx.int32)], axis=1)
    return inputs, tokens


def data():
    print("== data")
    noisy, clean = noisy_sines(mx.random.key(0), 3, 8)
    show("clean[0]", clean[0, :, 0])
    show("noisy[0]", noisy[0, :, 0])
    print("noise std:", f"{mx.std(noisy - clean).item():.4f}")
    inputs, targets = selective_copy(mx.random.key(1), 4)
    show("copy inputs", inputs)
    show("copy targets", targets)
    print("data tokens kept in order:",
          mx.array_equal(mx.sort(inputs[:, :N_SPREAD], axis=1)[:, -N_DATA:],
                         mx.sort(targets, axis=1)).item())


# ---------------------------------------------------------------- S4D

def s4d_params(key, h, n):
    """S4D-Lin: A_n = -1/2 + i pi n, a log step size per channel, complex C (real pairs)."""
    k1, k2, k3 = mx.random.split(key, 3)
    log_re = mx.log(0.5 * mx.ones((h, n)))
    im = math.pi * mx.broadcast_to(mx.arange(n, dtype=mx.float32), (h, n))
    log_dt = mx.random.uniform(math.log(1e-2), math.log(1e-1), (h,), key=k1)
    c_re = mx.random.normal((h, n), key=k2) * 0.5**0.5
    c_im = mx.random.normal((h, n), key=k3) * 0.5**0.5
    return {"log_re": log_re, "im": im, "log_dt": log_dt, "c_re": c_re, "c_im": c_im}


def zoh(p):
    """Zero-order hold with B = 1: A_bar = exp(dt A), B_bar = (exp(dt A) - 1) / A.
    exp(x + iy) - 1 = expm1(x) cos y - 2 sin(y/2)^2 + i e^x sin y keeps precision at small dt."""
    a_re, a_im = -mx.exp(p["log_re"]), p["im"]
    dt = mx.exp(p["log_dt"])[:, None]
    x, y = a_re * dt, a_im * dt
    ab_re, ab_im = mx.exp(x) * mx.cos(y), mx.exp(x) * mx.sin(y)
    num_re = mx.expm1(x) * mx.cos(y) - 2 * mx.sin(y / 2) ** 2
    num_im = ab_im
    den = a_re**2 + a_im**2
    bb_re = (num_re * a_re + num_im * a_im) / den
    bb_im = (num_im * a_re - num_re * a_im) / den
    return (ab_re, ab_im), (bb_re, bb_im), (x, y)


def kernel_vandermonde(p, length):
    """K[h, l] = 2 Re(sum_n C_n B_bar_n A_bar_n^l), the powers as exp(l dt A)."""
    _, (bb_re, bb_im), (x, y) = zoh(p)
    cb_re = p["c_re"] * bb_re - p["c_im"] * bb_im
    cb_im = p["c_re"] * bb_im + p["c_im"] * bb_re
    ell = mx.arange(length, dtype=mx.float32)
    mag = mx.exp(x[..., None] * ell)
    pw_re, pw_im = mag * mx.cos(y[..., None] * ell), mag * mx.sin(y[..., None] * ell)
    return 2 * (mx.einsum("hn,hnl->hl", cb_re, pw_re) - mx.einsum("hn,hnl->hl", cb_im, pw_im))


def kernel_powers(p, length):
    """The same kernel with A_bar^l built by repeated complex multiplication."""
    (ab_re, ab_im), (bb_re, bb_im), _ = zoh(p)
    cb_re = p["c_re"] * bb_re - p["c_im"] * bb_im
    cb_im = p["c_re"] * bb_im + p["c_im"] * bb_re
    pw_re, pw_im, cols = mx.ones_like(ab_re), mx.zeros_like(ab_im), []
    for _ in range(length):
        cols.append(2 * (cb_re * pw_re - cb_im * pw_im).sum(-1))
        pw_re, pw_im = pw_re * ab_re - pw_im * ab_im, pw_re * ab_im + pw_im * ab_re
    return mx.stack(cols, axis=-1)


def kernel_complex(p, length):
    """The same kernel on complex64 arrays."""
    a = -mx.exp(p["log_re"]) + 1j * p["im"]
    dta = a * mx.exp(p["log_dt"])[:, None]
    cb = (p["c_re"] + 1j * p["c_im"]) * (mx.exp(dta) - 1) / a
    ell = mx.arange(length, dtype=mx.float32)
    return 2 * mx.real(mx.sum(cb[..., None] * mx.exp(dta[..., None] * ell), axis=1))


def fft_conv(u, k):
    """Causal convolution of u (B, L, H) with k (H, L) by FFT of sequences padded to 2L."""
    length = u.shape[1]
    uf = mx.fft.rfft(u, n=2 * length, axis=1)
    kf = mx.fft.rfft(k.T, n=2 * length, axis=0)
    return mx.fft.irfft(uf * kf, n=2 * length, axis=1)[:, :length]


def s4d_recurrent(p, u):
    """The S4D layer as its recurrence x_t = A_bar x_{t-1} + B_bar u_t, y_t = 2 Re(C x_t)."""
    (ab_re, ab_im), (bb_re, bb_im), _ = zoh(p)
    s_re = mx.zeros((u.shape[0],) + ab_re.shape)
    s_im = mx.zeros_like(s_re)
    ys = []
    for t in range(u.shape[1]):
        ut = u[:, t, :, None]
        s_re, s_im = (ab_re * s_re - ab_im * s_im + bb_re * ut,
                      ab_re * s_im + ab_im * s_re + bb_im * ut)
        ys.append(2 * (p["c_re"] * s_re - p["c_im"] * s_im).sum(-1))
    return mx.stack(ys, axis=1)


class S4DRegressor(nn.Module):
    """Linear lift -> S4D convolution (+ D skip) -> GELU -> linear readout."""

    def __init__(self, h=8, n=4):
        super().__init__()
        self.lift = nn.Linear(1, h)
        self.ssm = s4d_params(mx.random.key(5), h, n)
        self.d = mx.ones((h,))
        self.out = nn.Linear(h, 1)

    def __call__(self, u):
        z = self.lift(u)
        y = fft_conv(z, kernel_vandermonde(self.ssm, u.shape[1])) + self.d * z
        return self.out(nn.gelu(y))


def s4d():
    print("== S4D")
    p = s4d_params(mx.random.key(2), 4, 6)
    (ab_re, ab_im), (bb_re, bb_im), _ = zoh(p)
    print("|A_bar| < 1:", mx.all(ab_re**2 + ab_im**2 < 1).item())
    show("B_bar[0] re", bb_re[0])
    naive = (mx.exp(-0.5 * 1e-4) * mx.cos(math.pi * 1e-4) - 1)
    smart = mx.expm1(mx.array(-0.5e-4)) * math.cos(math.pi * 1e-4) - 2 * math.sin(math.pi * 5e-5)**2
    print("exp(dtA)-1 at dt=1e-4, naive vs expm1:", f"{naive.item():.6e}", f"{smart.item():.6e}")
    k1, k2, k3 = kernel_vandermonde(p, 16), kernel_powers(p, 16), kernel_complex(p, 16)
    show("kernel[0, :6]", k1[0, :6])
    print("vandermonde == powers:", close(k1, k2), " == complex64:", close(k1, k3))
    print("complex dtype:", (p["c_re"] + 1j * p["c_im"]).dtype)
    u = mx.random.normal((2, 16, 4), key=mx.random.key(3))
    y_fft = fft_conv(u, k1)
    y_rec = s4d_recurrent(p, u)
    kw = k1[:, ::-1][..., None]                      # (H, L, 1): depthwise, flipped
    y_conv = mx.conv1d(mx.pad(u, [(0, 0), (15, 0), (0, 0)]), kw, groups=4)
    show("y_fft[0, :4, 0]", y_fft[0, :4, 0])
    print("fft == recurrence:", close(y_fft, y_rec, atol=1e-4),
          " fft == conv1d:", close(y_fft, y_conv, atol=1e-4))
    circular = mx.fft.irfft(mx.fft.rfft(u, axis=1) * mx.fft.rfft(k1.T, axis=0), n=16, axis=1)
    print("without padding (circular) == causal:", close(circular, y_fft, atol=1e-4))

    noisy, clean = noisy_sines(mx.random.key(4), 32, 32)
    mx.random.seed(5)
    model = S4DRegressor()
    opt = optim.AdamW(learning_rate=1e-2, weight_decay=0.01)
    loss_and_grad = nn.value_and_grad(model, lambda m, x, y: nn.losses.mse_loss(m(x), y))
    for step in range(25):
        loss, grads = loss_and_grad(model, noisy, clean)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        if step % 6 == 0 or step == 24:
            print(f"s4d step {step:2d} mse {loss.item():.4f}")
    dt = mx.exp(model.ssm["log_dt"])
    print("learned dt range:", f"{dt.min().item():.4f}", f"{dt.max().item():.4f}")


# ---------------------------------------------------------------- selective scan

def scan_inputs(key, b=2, length=12, d=3, n=4):
    ks = mx.random.split(key, 5)
    x = mx.random.normal((b, length, d), key=ks[0])
    delta = nn.softplus(mx.random.normal((b, length, d), key=ks[1]) - 1.0)
    a = -mx.exp(mx.random.normal((d, n), key=ks[2]) * 0.5)
    bm = mx.random.normal((b, length, n), key=ks[3])
    cm = mx.random.normal((b, length, n), key=ks[4])
    return x, delta, a, bm, cm


def discretise(x, delta, a, bm):
    """dA = exp(delta A) (B, L, D, N); dBx = delta B x, the B projection by einsum."""
    return mx.exp(delta[..., None] * a), mx.einsum("bld,bln,bld->bldn", delta, bm, x)


def scan_loop(x, delta, a, bm, cm):
    da, dbx = discretise(x, delta, a, bm)
    h = mx.zeros(da.shape[:1] + da.shape[2:])
    ys = []
    for t in range(x.shape[1]):
        h = da[:, t] * h + dbx[:, t]
        ys.append(mx.einsum("bdn,bn->bd", h, cm[:, t]))
    return mx.stack(ys, axis=1), h


def segsum_weights(log_a):
    """exp(S_t - S_s) for s <= t (else 0), S the cumulative sum of log(dA) over time:
    (B, T, S, D, N). -inf above the diagonal keeps exp from overflowing there."""
    s = mx.cumsum(log_a, axis=1)
    diff = s[:, :, None] - s[:, None, :]
    length = log_a.shape[1]
    causal = mx.tril(mx.ones((length, length), mx.bool_))[None, :, :, None, None]
    return mx.exp(mx.where(causal, diff, -mx.inf))


def scan_parallel(x, delta, a, bm, cm):
    """All states at once: h_t = sum_{s<=t} exp(S_t - S_s) dBx_s."""
    _, dbx = discretise(x, delta, a, bm)
    w = segsum_weights(delta[..., None] * a)
    h = mx.einsum("btsdn,bsdn->btdn", w, dbx)
    return mx.einsum("btdn,btn->btd", h, cm), h[:, -1]


def scan_cumprod(x, delta, a, bm, cm):
    """h_t = P_t cumsum(dBx / P)_t with P the running product of dA (fine for short L)."""
    da, dbx = discretise(x, delta, a, bm)
    prod = mx.cumprod(da, axis=1)
    h = prod * mx.cumsum(dbx / prod, axis=1)
    return mx.einsum("btdn,btn->btd", h, cm), h[:, -1]


def scan_chunked(x, delta, a, bm, cm, chunk=4):
    """Parallel inside chunks, the state carried from chunk to chunk."""
    _, dbx = discretise(x, delta, a, bm)
    log_a = delta[..., None] * a
    h = mx.zeros(dbx.shape[:1] + dbx.shape[2:])
    ys = []
    for start in range(0, x.shape[1], chunk):
        la, bx = log_a[:, start:start + chunk], dbx[:, start:start + chunk]
        intra = mx.einsum("btsdn,bsdn->btdn", segsum_weights(la), bx)
        states = intra + mx.exp(mx.cumsum(la, axis=1)) * h[:, None]
        ys.append(mx.einsum("btdn,btn->btd", states, cm[:, start:start + chunk]))
        h = states[:, -1]
    return mx.concatenate(ys, axis=1), h


def selective_scan():
    print("== selective scan")
    args = scan_inputs(mx.random.key(6))
    y_loop, h_loop = scan_loop(*args)
    y_par, h_par = scan_parallel(*args)
    y_cp, h_cp = scan_cumprod(*args)
    show("y_loop[0, :3]", y_loop[0, :3])
    print("parallel == loop:", close(y_par, y_loop), close(h_par, h_loop))
    print("cumprod == loop:", close(y_cp, y_loop, rtol=1e-3, atol=1e-4))
    for chunk in (3, 4, 5):
        y_ch, h_ch = scan_chunked(*args, chunk=chunk)
        print(f"chunked({chunk}) == loop:", close(y_ch, y_loop), close(h_ch, h_loop))
    show("final state[0, 0]", h_loop[0, 0])

    def one(x, delta, bm, cm):
        y, _ = scan_loop(x[None], delta[None], args[2], bm[None], cm[None])
        return y[0]
    x, delta, a, bm, cm = args
    y_vmap = mx.vmap(one)(x, delta, bm, cm)
    print("vmap over sequences == batched:", close(y_vmap, y_loop), y_vmap.shape)
    y_vmap2 = mx.vmap(one, in_axes=(1, 1, 1, 1), out_axes=1)(
        x.swapaxes(0, 1), delta.swapaxes(0, 1), bm.swapaxes(0, 1), cm.swapaxes(0, 1))
    print("vmap with in_axes=1, out_axes=1:", close(y_vmap2.swapaxes(0, 1), y_loop))

    def loss(a_log):
        y, _ = scan_parallel(x, delta, -mx.exp(a_log), bm, cm)
        return (y**2).mean()
    a_log = mx.log(-a)
    g = mx.grad(loss)(a_log)
    show("grad wrt log(-A)", g)
    eps, worst = 1e-2, 0.0
    for i, j in [(0, 0), (1, 2), (2, 3)]:
        bump = mx.zeros_like(a_log).at[i, j].add(eps)
        fd = (loss(a_log + bump) - loss(a_log - bump)) / (2 * eps)
        worst = max(worst, abs(fd.item() - g[i, j].item()) / (abs(g[i, j].item()) + 1e-3))
    print("grad == finite differences (3 entries, rel 2e-2):", worst < 2e-2)
    g_loop = mx.grad(lambda al: (scan_loop(x, delta, -mx.exp(al), bm, cm)[0]**2).mean())(a_log)
    print("grad through loop == through parallel scan:", close(g_loop, g, atol=1e-5))


# ---------------------------------------------------------------- Mamba

class MambaBlock(nn.Module):
    """in_proj -> (x, z); x: causal depthwise conv, silu, selective scan; y * silu(z) -> out."""

    def __init__(self, dims, expand=2, state=4, conv=4):
        super().__init__()
        inner = expand * dims
        self.dt_rank, self.n_state, self.conv_k = max(1, dims // 4), state, conv
        self.in_proj = nn.Linear(dims, 2 * inner, bias=False)
        self.conv1d = nn.Conv1d(inner, inner, conv, padding=conv - 1, groups=inner)
        self.x_proj = nn.Linear(inner, self.dt_rank + 2 * state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, inner)
        self.A_log = mx.log(mx.broadcast_to(mx.arange(1, state + 1, dtype=mx.float32),
                                            (inner, state)))
        self.D = mx.ones((inner,))
        self.out_proj = nn.Linear(inner, dims, bias=False)

    def ssm_inputs(self, x):
        dt, bm, cm = mx.split(self.x_proj(x), [self.dt_rank, self.dt_rank + self.n_state],
                              axis=-1)
        return nn.softplus(self.dt_proj(dt)), bm, cm

    def __call__(self, u):
        x, z = mx.split(self.in_proj(u), 2, axis=-1)
        x = nn.silu(self.conv1d(x)[:, : u.shape[1]])          # causal: drop the tail
        delta, bm, cm = self.ssm_inputs(x)
        y, _ = scan_parallel(x, delta, -mx.exp(self.A_log), bm, cm)
        return self.out_proj((y + self.D * x) * nn.silu(z))

    def step(self, u, cache):
        """One token u (B, dims); cache = (last conv_k - 1 inputs, ssm state)."""
        conv_state, h = cache
        x, z = mx.split(self.in_proj(u), 2, axis=-1)
        window = mx.concatenate([conv_state, x[:, None]], axis=1)   # (B, K, inner)
        w = self.conv1d.weight[:, :, 0]                              # (inner, K)
        x = nn.silu(mx.einsum("bkc,ck->bc", window, w) + self.conv1d.bias)
        delta, bm, cm = self.ssm_inputs(x)
        h = mx.exp(delta[..., None] * -mx.exp(self.A_log)) * h + mx.einsum(
            "bd,bn,bd->bdn", delta, bm, x)
        y = mx.einsum("bdn,bn->bd", h, cm) + self.D * x
        return self.out_proj(y * nn.silu(z)), (window[:, 1:], h)


class Mamba(nn.Module):
    def __init__(self, vocab, dims, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, dims)
        self.norms = [nn.RMSNorm(dims) for _ in range(layers)]
        self.blocks = [MambaBlock(dims) for _ in range(layers)]
        self.norm_f = nn.RMSNorm(dims)
        self.head = nn.Linear(dims, vocab)

    def __call__(self, tokens):
        h = self.embed(tokens)
        for norm, block in zip(self.norms, self.blocks):
            h = h + block(norm(h))
        return self.head(self.norm_f(h))

    def init_cache(self, batch):
        caches = []
        for b in self.blocks:
            inner = b.D.shape[0]
            caches.append((mx.zeros((batch, b.conv_k - 1, inner)),
                           mx.zeros((batch, inner, b.n_state))))
        return caches

    def step(self, token, caches):
        h = self.embed(token)
        new = []
        for norm, block, cache in zip(self.norms, self.blocks, caches):
            out, cache = block.step(norm(h), cache)
            h = h + out
            new.append(cache)
        return self.head(self.norm_f(h)), new


def copy_loss(model, inputs, targets):
    logits = model(inputs)[:, -N_DATA:]
    return nn.losses.cross_entropy(logits, targets, reduction="mean")


def copy_accuracy(model, inputs, targets):
    return mx.mean(mx.argmax(model(inputs)[:, -N_DATA:], axis=-1) == targets).item()


def mamba():
    print("== Mamba")
    mx.random.seed(7)
    model = Mamba(VOCAB, 16, 2)
    counts = {k: v.size for k, v in tree_flatten(model.parameters())}
    print("parameters:", sum(counts.values()))
    for k in ["embed.weight", "blocks.0.in_proj.weight", "blocks.0.conv1d.weight",
              "blocks.0.A_log", "blocks.0.x_proj.weight", "norms.0.weight"]:
        print(f"  {k}: {counts[k]}")
    print("conv weight shape (out, k, in/groups):", model.blocks[0].conv1d.weight.shape)

    test_in, test_tg = selective_copy(mx.random.key(100), 64)
    steps = 40
    lr = optim.cosine_decay(5e-3, steps, 1e-4)
    opt = optim.AdamW(learning_rate=lr, weight_decay=0.01)
    loss_and_grad = nn.value_and_grad(model, copy_loss)
    print("accuracy before:", f"{copy_accuracy(model, test_in, test_tg):.4f}")
    for step in range(steps // 2):
        inputs, targets = selective_copy(mx.random.key(200 + step), 32)
        loss, grads = loss_and_grad(model, inputs, targets)
        grads, norm = optim.clip_grad_norm(grads, 1.0)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        if step % 5 == 0:
            print(f"eager step {step:2d} loss {loss.item():.4f} grad norm {norm.item():.4f} "
                  f"lr {opt.learning_rate.item():.3e}")

    state = [model.state, opt.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def train_step(inputs, targets):
        loss, grads = loss_and_grad(model, inputs, targets)
        grads, norm = optim.clip_grad_norm(grads, 1.0)
        opt.update(model, grads)
        return loss, norm

    for step in range(steps // 2, steps):
        inputs, targets = selective_copy(mx.random.key(200 + step), 32)
        loss, norm = train_step(inputs, targets)
        mx.eval(state)
        if step % 5 == 0 or step == steps - 1:
            print(f"compiled step {step:2d} loss {loss.item():.4f} grad norm {norm.item():.4f} "
                  f"lr {opt.learning_rate.item():.3e}")
    print("optimizer step:", opt.step.item())
    print("test loss:", f"{copy_loss(model, test_in, test_tg).item():.4f}",
          "accuracy:", f"{copy_accuracy(model, test_in, test_tg):.4f}")

    # recurrent inference: one token at a time against the parallel forward
    inputs, _ = selective_copy(mx.random.key(300), 3)
    logits = model(inputs)
    caches, outs = model.init_cache(3), []
    for t in range(inputs.shape[1]):
        out, caches = model.step(inputs[:, t], caches)
        outs.append(out)
    stepped = mx.stack(outs, axis=1)
    print("recurrent == parallel:", close(stepped, logits, rtol=1e-3, atol=1e-4),
          stepped.shape)
    print("cache shapes:", [tuple(c.shape) for c in caches[0]])
    print("predicted:", mx.argmax(logits[:, -N_DATA:], axis=-1).tolist())
    show("last logits[0]", logits[0, -1])


def mistakes():
    print("== mistakes")
    conv = nn.Conv1d(8, 8, 4, padding=3, groups=8)
    cases = [
        lambda: conv(mx.ones((2, 8, 16))),                      # NCL input, NLC expected
        lambda: mx.conv1d(mx.ones((2, 16, 8)), mx.ones((8, 4, 2)), groups=8),
        lambda: nn.Conv1d(8, 6, 3, groups=4)(mx.ones((1, 5, 8))),
        lambda: mx.einsum("bld,bn->bldn", mx.ones((2, 5, 3)), mx.ones((2, 5, 4))),
        lambda: mx.einsum("bld,bln->bldn", mx.ones((2, 5, 3)), mx.ones((2, 6, 4))),
        lambda: mx.einsum("ij,jk->il", mx.ones((2, 3)), mx.ones((3, 4))),
        lambda: mx.einsum("ij,jk", mx.ones((2, 3))),
        lambda: mx.fft.rfft(mx.ones(8), n=4),                   # no error: truncates
        lambda: mx.fft.irfft(mx.ones(5)),                       # n = 2 (5 - 1) = 8
        lambda: mx.fft.rfft(mx.ones(8), n=0),
        lambda: mx.fft.rfft(mx.ones(8), n=4.0),
        lambda: mx.fft.rfft([0.0, 1.0, 0.0, -1.0]),
        lambda: mx.expm1(mx.array([0.5j])),                     # no complex expm1 kernel
        lambda: mx.einsum("bd,bd->b", mx.ones((2, 3), mx.int32), mx.ones((2, 3), mx.int32)),
        lambda: mx.einsum("bl->b", mx.ones((2, 3)) > 0),        # no error: counts as int32
        lambda: mx.fft.irfft(mx.ones(5), n=-2),
        lambda: mx.cumsum(mx.ones((2, 3)), axis=2),
        lambda: mx.cumprod(mx.ones((2, 3)), axis=-3),
        lambda: nn.RMSNorm(16)(mx.ones((2, 8))),
        lambda: mx.split(mx.ones((2, 7)), 2, axis=-1),
        lambda: mx.vmap(lambda x: x * 2, in_axes=(0, 0))(mx.ones((2, 3))),
        lambda: mx.vmap(lambda x, y: x + y)(mx.ones((2, 3)), mx.ones((3, 3))),
        lambda: mx.grad(lambda a: scan_loop(*scan_inputs(mx.random.key(0))[:2], a,
                                            *scan_inputs(mx.random.key(0))[3:])[0])(
            -mx.ones((3, 4))),
    ]
    for case in cases:
        try:
            out = case()
            print("no error", out.shape, out.dtype)
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    data()
    s4d()
    selective_scan()
    mamba()
    mistakes()
