"""`mlx.core.fast` as MLX users call it, each kernel checked against plain mx ops.

`mx.fast.rms_norm` / `layer_norm` (with and without weight and bias), `mx.fast.rope`
(traditional or not, base, scale, integer and array offsets, `freqs=`, fewer rotated dims
than the last axis) and `mx.fast.scaled_dot_product_attention` (no mask, `"causal"`,
boolean and additive masks that broadcast, grouped-query heads, attention sinks, queries
shorter than keys, float16 / bfloat16 inputs) against references written with `mx` ops;
gradients through each (`mx.grad`, `mx.vjp`) against the references' gradients; the
kernels inside `mx.compile` and under `nn.RMSNorm` / `nn.LayerNorm` / `nn.RoPE` /
`nn.MultiHeadAttention`; `mx.fast.metal_kernel` / `cuda_kernel` on a CPU build; typical
mistakes caught. Differences are printed as booleans against a stated tolerance so the
output does not depend on rounding in the last bits.
Run on ember with `python -m ember.run fast_kernels.py`.
"""

import math

import mlx.core as mx
import mlx.nn as nn


def maxdiff(a, b):
    return mx.max(mx.abs(a.astype(mx.float32) - b.astype(mx.float32))).item()


def close(label, a, b, tol):
    d = maxdiff(a, b)
    print(f"{label}: shape {a.shape} {a.dtype} max|diff| < {tol:g}: {d < tol}")


def try_(label, fn):
    try:
        out = fn()
        mx.eval(out)
        print(f"{label}: no error")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: {type(e).__name__}: {e}")


def r4(a, n=4):
    return [round(v, 4) for v in a.astype(mx.float32).reshape(-1)[:n].tolist()]


# ---------------------------------------------------------------- references with mx ops
def ref_rms_norm(x, w, eps):
    x32 = x.astype(mx.float32)
    y = x32 * mx.rsqrt(mx.mean(x32 * x32, axis=-1, keepdims=True) + eps)
    y = y.astype(x.dtype)
    return y if w is None else y * w


def ref_layer_norm(x, w, b, eps):
    x32 = x.astype(mx.float32)
    mu = mx.mean(x32, axis=-1, keepdims=True)
    var = mx.var(x32, axis=-1, keepdims=True)
    y = ((x32 - mu) * mx.rsqrt(var + eps)).astype(x.dtype)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def ref_rope(x, dims, traditional, base, scale, offset, freqs=None):
    """Rotary embedding of the first `dims` features of x (..., T, D)."""
    T = x.shape[-2]
    half = dims // 2
    if freqs is None:
        inv = base ** (-mx.arange(0, dims, 2, dtype=mx.float32) / dims)
    else:
        inv = 1.0 / freqs
    off = mx.array(offset).astype(mx.float32)
    if off.ndim == 1:  # one offset per batch element: (B, 1, 1, 1)
        off = off.reshape(-1, *([1] * (x.ndim - 1)))
    pos = (mx.arange(T, dtype=mx.float32)[:, None] + off) * scale
    theta = pos * inv
    cos, sin = mx.cos(theta), mx.sin(theta)
    xr, rest = x[..., :dims], x[..., dims:]
    if traditional:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        y = mx.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(xr.shape)
    else:
        x1, x2 = xr[..., :half], xr[..., half:]
        y = mx.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return mx.concatenate([y.astype(x.dtype), rest], axis=-1)


def ref_sdpa(q, k, v, scale, mask=None, sinks=None):
    """Attention with k / v heads repeated for grouped queries, softmax in float32."""
    n_rep = q.shape[1] // k.shape[1]
    if n_rep > 1:
        k = mx.repeat(k, n_rep, axis=1)
        v = mx.repeat(v, n_rep, axis=1)
    s = (q.astype(mx.float32) * scale) @ k.astype(mx.float32).swapaxes(-1, -2)
    Tq, Tk = s.shape[-2:]
    if isinstance(mask, str):
        qi = mx.arange(Tq)[:, None] + (Tk - Tq)
        mask = qi >= mx.arange(Tk)[None]
    if mask is not None:
        if mask.dtype == mx.bool_:
            s = mx.where(mask, s, -mx.inf)
        else:
            s = s + mask.astype(mx.float32)
    if sinks is not None:
        sk = mx.broadcast_to(sinks.astype(mx.float32)[None, :, None, None],
                             (*s.shape[:-1], 1))
        p = mx.softmax(mx.concatenate([sk, s], axis=-1), axis=-1)[..., 1:]
    else:
        p = mx.softmax(s, axis=-1)
    return (p @ v.astype(mx.float32)).astype(q.dtype)


keys = mx.random.split(mx.random.key(7), 12)

# ------------------------------------------------------------------------- rms_norm
print("== rms_norm")
x = mx.random.normal((2, 5, 16), key=keys[0])
w = 1.0 + 0.1 * mx.random.normal((16,), key=keys[1])
for weight in (w, None):
    y = mx.fast.rms_norm(x, weight, 1e-5)
    close(f"rms_norm weight={'None' if weight is None else 'w'}", y, ref_rms_norm(x, weight, 1e-5),
          1e-5)
print("rms_norm values:", r4(mx.fast.rms_norm(x, w, 1e-5)))
for dt in (mx.float16, mx.bfloat16):
    y = mx.fast.rms_norm(x.astype(dt), w.astype(dt), 1e-5)
    close(f"rms_norm {dt}", y, ref_rms_norm(x.astype(dt), w.astype(dt), 1e-5), 5e-2)
y = mx.fast.rms_norm(x.astype(mx.float16), w, 1e-5)
print("rms_norm float16 x, float32 w ->", y.dtype)
y = mx.fast.rms_norm(x[0, 0], w, 1e-5)
print("rms_norm 1-d ->", y.shape, r4(y))
big = 1e3 * x
close("rms_norm eps=1 large inputs", mx.fast.rms_norm(big, w, 1.0),
      ref_rms_norm(big, w, 1.0), 1e-4)

# ----------------------------------------------------------------------- layer_norm
print("== layer_norm")
b = 0.1 * mx.random.normal((16,), key=keys[2])
for weight, bias, name in ((w, b, "w, b"), (w, None, "w, None"), (None, b, "None, b"),
                           (None, None, "None, None")):
    y = mx.fast.layer_norm(x, weight, bias, 1e-5)
    close(f"layer_norm {name}", y, ref_layer_norm(x, weight, bias, 1e-5), 1e-5)
print("layer_norm values:", r4(mx.fast.layer_norm(x, w, b, 1e-5)))
for dt in (mx.float16, mx.bfloat16):
    y = mx.fast.layer_norm(x.astype(dt), w.astype(dt), b.astype(dt), 1e-5)
    close(f"layer_norm {dt}", y, ref_layer_norm(x.astype(dt), w.astype(dt), b.astype(dt),
                                                1e-5), 5e-2)
const = mx.ones((3, 8)) * 2.5
print("layer_norm of a constant row:", r4(mx.fast.layer_norm(const, None, None, 1e-5)))

# ----------------------------------------------------------------------------- rope
print("== rope")
xq = mx.random.normal((2, 3, 6, 16), key=keys[3])
for trad in (False, True):
    for dims in (16, 8):
        for base, scale, offset in ((10000.0, 1.0, 0), (500.0, 0.5, 3)):
            y = mx.fast.rope(xq, dims, traditional=trad, base=base, scale=scale, offset=offset)
            close(f"rope trad={trad} dims={dims} base={base:g} scale={scale} offset={offset}",
                  y, ref_rope(xq, dims, trad, base, scale, offset), 2e-5)
y = mx.fast.rope(xq, 16, traditional=False, base=10000.0, scale=1.0, offset=mx.array(4))
close("rope offset=array(4)", y, ref_rope(xq, 16, False, 10000.0, 1.0, 4), 2e-5)
offs = mx.array([0, 5])
y = mx.fast.rope(xq, 16, traditional=False, base=10000.0, scale=1.0, offset=offs)
close("rope offset=array([0, 5]) per batch", y, ref_rope(xq, 16, False, 10000.0, 1.0, offs),
      2e-5)
print("rope per-batch rows equal single offsets:",
      maxdiff(y[1], mx.fast.rope(xq[1:], 16, traditional=False, base=10000.0, scale=1.0,
                                 offset=5)[0]) < 1e-6)
wide = mx.fast.rope(xq, 16, traditional=False, base=10000.0, scale=1.0,
                    offset=mx.array([2**32 + 5, 2**31], mx.int64))
narrow = mx.fast.rope(xq, 16, traditional=False, base=10000.0, scale=1.0,
                      offset=mx.array([5, -2**31]))
print("rope int64 offsets past int32 rotate as their int32 wrap:", maxdiff(wide, narrow) < 1e-6)
freqs = mx.exp(mx.linspace(0.0, 4.0, 8))
for trad in (False, True):
    y = mx.fast.rope(xq, 16, traditional=trad, base=None, scale=1.0, offset=2, freqs=freqs)
    close(f"rope freqs= trad={trad}", y,
          ref_rope(xq, 16, trad, None, 1.0, 2, freqs=freqs), 2e-5)
y = mx.fast.rope(xq, 8, traditional=False, base=None, scale=1.0, offset=0, freqs=freqs[:4])
close("rope freqs= dims=8", y, ref_rope(xq, 8, False, None, 1.0, 0, freqs=freqs[:4]), 2e-5)
print("rope keeps the unrotated tail:", mx.array_equal(y[..., 8:], xq[..., 8:]).item())
for dt in (mx.float16, mx.bfloat16):
    xd = xq.astype(dt)
    y = mx.fast.rope(xd, 16, traditional=False, base=10000.0, scale=1.0, offset=1)
    close(f"rope {dt}", y, ref_rope(xd, 16, False, 10000.0, 1.0, 1), 2e-2)
x3 = mx.random.normal((2, 6, 16), key=keys[4])
y = mx.fast.rope(x3, 16, traditional=True, base=10000.0, scale=1.0, offset=0)
close("rope 3-d input", y, ref_rope(x3, 16, True, 10000.0, 1.0, 0), 2e-5)
print("rope offset=0 row 0 unchanged:", maxdiff(y[:, 0], x3[:, 0]) < 1e-7)

# ------------------------------------------------------------------------------ sdpa
print("== scaled_dot_product_attention")
B, Hq, T, D = 2, 4, 6, 8
q = mx.random.normal((B, Hq, T, D), key=keys[5])
k = mx.random.normal((B, Hq, T, D), key=keys[6])
v = mx.random.normal((B, Hq, T, D), key=keys[7])
scale = 1.0 / math.sqrt(D)
sdpa = mx.fast.scaled_dot_product_attention
close("sdpa mask=None", sdpa(q, k, v, scale=scale), ref_sdpa(q, k, v, scale), 1e-5)
close("sdpa mask='causal'", sdpa(q, k, v, scale=scale, mask="causal"),
      ref_sdpa(q, k, v, scale, "causal"), 1e-5)
bool_mask = mx.random.uniform(shape=(T, T), key=keys[8]) > 0.3
bool_mask = bool_mask | mx.eye(T, dtype=mx.bool_)
close("sdpa boolean (T, T) mask", sdpa(q, k, v, scale=scale, mask=bool_mask),
      ref_sdpa(q, k, v, scale, bool_mask), 1e-5)
add_mask = mx.random.normal((B, 1, T, T), key=keys[9])
close("sdpa additive (B, 1, T, T) mask", sdpa(q, k, v, scale=scale, mask=add_mask),
      ref_sdpa(q, k, v, scale, add_mask), 1e-5)
head_mask = mx.random.normal((Hq, 1, T), key=keys[10])
close("sdpa additive (H, 1, Tk) mask", sdpa(q, k, v, scale=scale, mask=head_mask),
      ref_sdpa(q, k, v, scale, head_mask), 1e-5)
causal_add = nn.MultiHeadAttention.create_additive_causal_mask(T)
close("sdpa create_additive_causal_mask == 'causal'",
      sdpa(q, k, v, scale=scale, mask=causal_add), sdpa(q, k, v, scale=scale, mask="causal"),
      1e-6)
print("sdpa values:", r4(sdpa(q, k, v, scale=scale, mask="causal")))

# grouped-query and multi-query attention
kv2 = mx.random.normal((B, 2, T, D), key=keys[11])
close("sdpa GQA 4 q heads / 2 kv heads", sdpa(q, kv2, kv2 * 0.5, scale=scale, mask="causal"),
      ref_sdpa(q, kv2, kv2 * 0.5, scale, "causal"), 1e-5)
kv1 = kv2[:, :1]
close("sdpa MQA 1 kv head", sdpa(q, kv1, kv1, scale=scale), ref_sdpa(q, kv1, kv1, scale), 1e-5)

# queries shorter than keys (a decode step against a cache), and longer
q1 = q[:, :, -2:]
close("sdpa Tq=2 Tk=6 causal (lower-right)", sdpa(q1, k, v, scale=scale, mask="causal"),
      ref_sdpa(q1, k, v, scale, "causal"), 1e-5)
print("sdpa Tq=2 causal rows equal full rows:",
      maxdiff(sdpa(q1, k, v, scale=scale, mask="causal"),
              sdpa(q, k, v, scale=scale, mask="causal")[:, :, -2:]) < 1e-5)
kshort, vshort = k[:, :, :3], v[:, :, :3]
close("sdpa Tq=6 Tk=3 no mask", sdpa(q, kshort, vshort, scale=scale),
      ref_sdpa(q, kshort, vshort, scale), 1e-5)
close("sdpa one query", sdpa(q[:, :, :1], k, v, scale=scale),
      ref_sdpa(q[:, :, :1], k, v, scale), 1e-5)

# attention sinks
sinks = mx.array([0.5, -1.0, 2.0, 0.0])
close("sdpa sinks=", sdpa(q, k, v, scale=scale, sinks=sinks), ref_sdpa(q, k, v, scale,
                                                                      sinks=sinks), 1e-5)
close("sdpa sinks= + causal", sdpa(q, k, v, scale=scale, mask="causal", sinks=sinks),
      ref_sdpa(q, k, v, scale, "causal", sinks), 1e-5)
close("sdpa sinks= + GQA", sdpa(q, kv2, kv2, scale=scale, sinks=sinks),
      ref_sdpa(q, kv2, kv2, scale, sinks=sinks), 1e-5)

# half precision
for dt in (mx.float16, mx.bfloat16):
    qd, kd, vd = q.astype(dt), k.astype(dt), v.astype(dt)
    y = sdpa(qd, kd, vd, scale=scale, mask="causal")
    close(f"sdpa {dt} causal", y, ref_sdpa(qd, kd, vd, scale, "causal"), 2e-2)
    y = sdpa(qd, kd, vd, scale=scale, mask=add_mask.astype(dt))
    close(f"sdpa {dt} additive mask", y, ref_sdpa(qd, kd, vd, scale, add_mask), 3e-2)
    y = sdpa(qd, kd, vd, scale=scale, mask=bool_mask)
    close(f"sdpa {dt} boolean mask", y, ref_sdpa(qd, kd, vd, scale, bool_mask), 2e-2)
print("sdpa float16 q, float32 k / v ->", sdpa(q.astype(mx.float16), k, v, scale=scale).dtype)
print("sdpa float32 with float16 additive mask ->",
      sdpa(q, k, v, scale=scale, mask=add_mask.astype(mx.float16)).dtype)

# a fully masked row
none_row = mx.ones((T, T), dtype=mx.bool_)
none_row[0] = False
y = sdpa(q, k, v, scale=scale, mask=none_row)
print("sdpa fully masked row is the mean of v:",
      maxdiff(y[:, :, 0], v.mean(axis=2)) < 1e-5, "nan:", mx.isnan(y).any().item())
int_mask = mx.random.randint(-2, 3, (T, T), key=keys[9])
y = sdpa(q, k, v, scale=scale, mask=int_mask)
close("sdpa integer mask is additive", y, ref_sdpa(q, k, v, scale, int_mask.astype(mx.float32)),
      1e-5)

# -------------------------------------------------------------------- cross_entropy
print("== cross_entropy")
logits = 3.0 * mx.random.normal((4, 5, 11), key=keys[6])
targets = mx.random.randint(0, 11, (4, 5), key=keys[7])


def ref_cross_entropy(lg, t):
    lg = lg.astype(mx.float32)
    picked = mx.take_along_axis(lg, t[..., None], axis=-1)[..., 0]
    return mx.logsumexp(lg, axis=-1) - picked


ce = mx.fast.cross_entropy(logits, targets)
close("cross_entropy", ce, ref_cross_entropy(logits, targets), 1e-5)
close("cross_entropy == nn.losses.cross_entropy", ce,
      nn.losses.cross_entropy(logits, targets), 1e-5)
print("cross_entropy mean:", round(ce.mean().item(), 4))
for dt in (mx.float16, mx.bfloat16):
    ce_d = mx.fast.cross_entropy(logits.astype(dt), targets)
    close(f"cross_entropy {dt} logits", ce_d, ref_cross_entropy(logits.astype(dt), targets), 0.1)
for tdt in (mx.uint8, mx.int64, mx.uint32):
    print(f"cross_entropy {tdt} targets:", mx.fast.cross_entropy(logits, targets.astype(tdt)).dtype)
print("cross_entropy 1-d:", round(mx.fast.cross_entropy(logits[0, 0], targets[0, 0]).item(), 4))
print("cross_entropy at extremes:", mx.fast.cross_entropy(
    mx.array([[1e30, -1e30, 0.0], [0.0, 0.0, 0.0]]), mx.array([1, 2])))
ce_grad = mx.grad(lambda lg: mx.fast.cross_entropy(lg, targets).mean())(logits)
ce_ref = mx.grad(lambda lg: ref_cross_entropy(lg, targets).mean())(logits)
close("grad cross_entropy", ce_grad, ce_ref, 1e-6)
print("grad cross_entropy rows sum to 0:", mx.abs(ce_grad.sum(axis=-1)).max().item() < 1e-6)

# ---------------------------------------------------------------------------- grads
print("== gradients")
cot = mx.random.normal(x.shape, key=keys[1])


def g_close(label, f, f_ref, args, tol, argnums=0):
    g = mx.grad(f, argnums=argnums)(*args)
    gr = mx.grad(f_ref, argnums=argnums)(*args)
    if isinstance(g, tuple):
        for i, (a, b_) in enumerate(zip(g, gr)):
            close(f"{label} d/darg{i}", a, b_, tol)
    else:
        close(label, g, gr, tol)


g_close("grad rms_norm (x, w)", lambda x, w: (mx.fast.rms_norm(x, w, 1e-5) * cot).sum(),
        lambda x, w: (ref_rms_norm(x, w, 1e-5) * cot).sum(), (x, w), 1e-4, argnums=(0, 1))
g_close("grad rms_norm weight=None", lambda x: (mx.fast.rms_norm(x, None, 1e-5) * cot).sum(),
        lambda x: (ref_rms_norm(x, None, 1e-5) * cot).sum(), (x,), 1e-4)
g_close("grad layer_norm (x, w, b)",
        lambda x, w, b: (mx.fast.layer_norm(x, w, b, 1e-5) * cot).sum(),
        lambda x, w, b: (ref_layer_norm(x, w, b, 1e-5) * cot).sum(), (x, w, b), 1e-4,
        argnums=(0, 1, 2))
g_close("grad layer_norm (None, None)",
        lambda x: (mx.fast.layer_norm(x, None, None, 1e-5) * cot).sum(),
        lambda x: (ref_layer_norm(x, None, None, 1e-5) * cot).sum(), (x,), 1e-4)
rcot = mx.random.normal(xq.shape, key=keys[2])
for trad in (False, True):
    g_close(f"grad rope trad={trad} dims=8",
            lambda x, t=trad: (mx.fast.rope(x, 8, traditional=t, base=10000.0, scale=1.0,
                                            offset=3) * rcot).sum(),
            lambda x, t=trad: (ref_rope(x, 8, t, 10000.0, 1.0, 3) * rcot).sum(), (xq,), 1e-5)
g_close("grad rope freqs=",
        lambda x: (mx.fast.rope(x, 16, traditional=False, base=None, scale=1.0, offset=0,
                                freqs=freqs) * rcot).sum(),
        lambda x: (ref_rope(x, 16, False, None, 1.0, 0, freqs=freqs) * rcot).sum(), (xq,), 1e-5)
scot = mx.random.normal(q.shape, key=keys[3])
for mask in (None, "causal", bool_mask, add_mask):
    name = mask if isinstance(mask, str) or mask is None else f"{mask.dtype} mask"
    g_close(f"grad sdpa (q, k, v) mask={name}",
            lambda q, k, v, m=mask: (sdpa(q, k, v, scale=scale, mask=m) * scot).sum(),
            lambda q, k, v, m=mask: (ref_sdpa(q, k, v, scale, m) * scot).sum(), (q, k, v), 1e-4,
            argnums=(0, 1, 2))
g_close("grad sdpa GQA (q, k, v)",
        lambda q, k, v: (sdpa(q, k, v, scale=scale, mask="causal") * scot).sum(),
        lambda q, k, v: (ref_sdpa(q, k, v, scale, "causal") * scot).sum(), (q, kv2, kv2 * 0.5),
        1e-4, argnums=(0, 1, 2))
g_close("grad sdpa additive mask",
        lambda m: (sdpa(q, k, v, scale=scale, mask=m) * scot).sum(),
        lambda m: (ref_sdpa(q, k, v, scale, m) * scot).sum(), (add_mask,), 1e-4)
outs, vjps = mx.vjp(lambda a, w: mx.fast.rms_norm(a, w, 1e-5), [x, w], [cot])
outs_r, vjps_r = mx.vjp(lambda a, w: ref_rms_norm(a, w, 1e-5), [x, w], [cot])
close("vjp rms_norm output", outs[0], outs_r[0], 1e-5)
close("vjp rms_norm d/dx", vjps[0], vjps_r[0], 1e-4)
close("vjp rms_norm d/dw", vjps[1], vjps_r[1], 1e-4)
outs, vjps = mx.vjp(lambda q, k, v: sdpa(q, k, v, scale=scale, mask="causal"), [q, k, v], [scot])
outs_r, vjps_r = mx.vjp(lambda q, k, v: ref_sdpa(q, k, v, scale, "causal"), [q, k, v], [scot])
for i, name in enumerate("qkv"):
    close(f"vjp sdpa d/d{name}", vjps[i], vjps_r[i], 1e-4)
_, jv = mx.jvp(lambda a: mx.fast.rms_norm(a, w, 1e-5), [x], [cot])
_, jv_r = mx.jvp(lambda a: ref_rms_norm(a, w, 1e-5), [x], [cot])
close("jvp rms_norm", jv[0], jv_r[0], 1e-4)
lv, lg = mx.value_and_grad(lambda x: mx.fast.layer_norm(x, w, b, 1e-5).square().mean())(x)
print("value_and_grad layer_norm loss:", round(lv.item(), 4), "grad sum^2:",
      round((lg * lg).sum().item() * 1e6, 3), "e-6")

# sinks and masks are differentiable too; second order through each kernel
g_close("grad sdpa sinks", lambda s: (sdpa(q, k, v, scale=scale, sinks=s) * scot).sum(),
        lambda s: (ref_sdpa(q, k, v, scale, sinks=s) * scot).sum(), (sinks,), 1e-4)
g_close("grad rope freqs", lambda f: (mx.fast.rope(xq, 16, traditional=True, base=None,
                                                   scale=1.0, offset=1, freqs=f) * rcot).sum(),
        lambda f: (ref_rope(xq, 16, True, None, 1.0, 1, freqs=f) * rcot).sum(), (freqs,), 1e-3)
g_close("grad of grad rms_norm",
        lambda a: mx.grad(lambda c: (mx.fast.rms_norm(c, w, 1e-5) * cot).square().sum())(a).sum(),
        lambda a: mx.grad(lambda c: (ref_rms_norm(c, w, 1e-5) * cot).square().sum())(a).sum(),
        (x,), 1e-3)
g_close("grad of grad layer_norm",
        lambda a: mx.grad(lambda c: mx.fast.layer_norm(c, w, b, 1e-5).square().sum())(a).sum(),
        lambda a: mx.grad(lambda c: ref_layer_norm(c, w, b, 1e-5).square().sum())(a).sum(),
        (x,), 1e-3)
g_close("grad of grad sdpa",
        lambda a: mx.grad(lambda c: sdpa(c, k, v, scale=scale).square().sum())(a).sum(),
        lambda a: mx.grad(lambda c: ref_sdpa(c, k, v, scale).square().sum())(a).sum(),
        (q,), 1e-3)
close("vmap rms_norm over axis 1", mx.vmap(lambda a: mx.fast.rms_norm(a, w, 1e-5), in_axes=1,
                                           out_axes=1)(x), ref_rms_norm(x, w, 1e-5), 1e-5)
close("vmap rope over heads", mx.vmap(lambda a: mx.fast.rope(
    a, 8, traditional=False, base=10000.0, scale=1.0, offset=3), in_axes=1, out_axes=1)(xq),
    ref_rope(xq, 8, False, 10000.0, 1.0, 3), 2e-5)
close("vmap sdpa over a stack of batches", mx.vmap(
    lambda a, kk, vv: sdpa(a, kk, vv, scale=scale, mask="causal"))(q[None], k[None], v[None])[0],
    ref_sdpa(q, k, v, scale, "causal"), 1e-5)
_, jv = mx.jvp(lambda a: sdpa(a, k, v, scale=scale, mask=add_mask), [q], [scot])
_, jv_r = mx.jvp(lambda a: ref_sdpa(a, k, v, scale, add_mask), [q], [scot])
close("jvp sdpa", jv[0], jv_r[0], 1e-4)
_, jv = mx.jvp(lambda a: mx.fast.rope(a, 16, traditional=True, base=10000.0, scale=1.0,
                                      offset=offs), [xq], [rcot])
close("jvp rope (linear in x)", jv[0], mx.fast.rope(rcot, 16, traditional=True, base=10000.0,
                                                    scale=1.0, offset=offs), 1e-5)

# ---------------------------------------------------------------------------- compile
print("== compile")


@mx.compile
def block(x, w, q, k, v):
    h = mx.fast.rms_norm(x, w, 1e-5)
    qr = mx.fast.rope(q, 8, traditional=False, base=10000.0, scale=1.0, offset=2)
    kr = mx.fast.rope(k, 8, traditional=False, base=10000.0, scale=1.0, offset=2)
    return h, sdpa(qr, kr, v, scale=scale, mask="causal")


def block_ref(x, w, q, k, v):
    qr = ref_rope(q, 8, False, 10000.0, 1.0, 2)
    kr = ref_rope(k, 8, False, 10000.0, 1.0, 2)
    return ref_rms_norm(x, w, 1e-5), ref_sdpa(qr, kr, v, scale, "causal")


h, o = block(x, w, q, k, v)
hr, orr = block_ref(x, w, q, k, v)
close("compiled rms_norm", h, hr, 1e-5)
close("compiled rope + sdpa", o, orr, 1e-5)
h2, o2 = block(x[:1], w, q[:1], k[:1], v[:1])
close("compiled, new batch size", o2, orr[:1], 1e-5)
cg = mx.compile(mx.grad(lambda q: (sdpa(q, k, v, scale=scale, mask=add_mask) * scot).sum()))
close("compiled grad sdpa", cg(q), mx.grad(lambda q: (ref_sdpa(q, k, v, scale, add_mask)
                                                       * scot).sum())(q), 1e-4)
sl = mx.compile(lambda x: mx.fast.layer_norm(x, None, None, 1e-5), shapeless=True)
close("shapeless compiled layer_norm (2, 5, 16)", sl(x), ref_layer_norm(x, None, None, 1e-5),
      1e-5)
close("shapeless compiled layer_norm (3, 16)", sl(x[0, :3]),
      ref_layer_norm(x[0, :3], None, None, 1e-5), 1e-5)

# ------------------------------------------------------------------------- nn layers
print("== nn layers")
norm = nn.RMSNorm(16, eps=1e-5)
norm.weight = w
close("nn.RMSNorm == fast.rms_norm", norm(x), mx.fast.rms_norm(x, w, 1e-5), 0.0 + 1e-7)
ln = nn.LayerNorm(16, eps=1e-5)
close("nn.LayerNorm == fast.layer_norm", ln(x), mx.fast.layer_norm(x, None, None, 1e-5), 1e-6)
ln_nb = nn.LayerNorm(16, affine=False)
print("nn.LayerNorm(affine=False) params:", list(ln_nb.parameters().keys()))
for trad in (False, True):
    rope = nn.RoPE(8, traditional=trad, base=10000.0)
    close(f"nn.RoPE(8, traditional={trad}) offset=3", rope(xq, offset=3),
          ref_rope(xq, 8, trad, 10000.0, 1.0, 3), 2e-5)
rope_s = nn.RoPE(16, scale=0.25)
close("nn.RoPE(16, scale=0.25)", rope_s(xq), ref_rope(xq, 16, False, 10000.0, 0.25, 0), 2e-5)
print("nn.RoPE repr:", nn.RoPE(8, traditional=True, base=500.0), nn.RoPE(16, scale=0.25))
print("nn.RMSNorm repr:", nn.RMSNorm(16, eps=1e-6), "nn.LayerNorm repr:",
      nn.LayerNorm(16, affine=False), nn.LayerNorm(16, bias=False))
print("nn.MultiHeadAttention repr:",
      nn.MultiHeadAttention(16, 4, query_input_dims=8, value_dims=12, value_output_dims=6))
mha = nn.MultiHeadAttention(16, 4, bias=True)
mha.update({n: {p: 0.2 * mx.random.normal(a.shape, key=mx.random.key(i * 2 + j))
                for j, (p, a) in enumerate(sorted(d.items()))}
            for i, (n, d) in enumerate(sorted(mha.parameters().items()))})
xs = mx.random.normal((2, 5, 16), key=keys[4])
mem = mx.random.normal((2, 7, 16), key=keys[5])


def mha_ref(m, qs, ks, vs, mask):
    qh = m.query_proj(qs).reshape(qs.shape[0], qs.shape[1], 4, -1).transpose(0, 2, 1, 3)
    kh = m.key_proj(ks).reshape(ks.shape[0], ks.shape[1], 4, -1).transpose(0, 2, 1, 3)
    vh = m.value_proj(vs).reshape(vs.shape[0], vs.shape[1], 4, -1).transpose(0, 2, 1, 3)
    o = ref_sdpa(qh, kh, vh, 1.0 / math.sqrt(4), mask)
    return m.out_proj(o.transpose(0, 2, 1, 3).reshape(qs.shape[0], qs.shape[1], -1))


cmask = nn.MultiHeadAttention.create_additive_causal_mask(5)
close("nn.MultiHeadAttention self, causal mask", mha(xs, xs, xs, mask=cmask),
      mha_ref(mha, xs, xs, xs, cmask), 1e-5)
close("nn.MultiHeadAttention cross, no mask", mha(xs, mem, mem), mha_ref(mha, xs, mem, mem, None),
      1e-5)
print("nn.MultiHeadAttention output:", r4(mha(xs, mem, mem)))
print("causal mask dtype / corner:", cmask.dtype, cmask[0, 1].item() < -1e8, cmask[1, 0].item())
print("causal mask float16:", nn.MultiHeadAttention.create_additive_causal_mask(3, mx.float16))
loss_fn = nn.value_and_grad(mha, lambda m, a: m(a, a, a, mask=cmask).square().mean())
lv, grads = loss_fn(mha, xs)
print("nn.MultiHeadAttention loss:", round(lv.item(), 5), "grad keys:", sorted(grads))
print("nn.MultiHeadAttention query_proj grad norm:",
      round(mx.linalg.norm(grads["query_proj"]["weight"]).item(), 4))

# ----------------------------------------------------------------- custom kernels on CPU
print("== custom kernels")
src = "uint elem = thread_position_in_grid.x; out[elem] = metal::exp(inp[elem]);"
try_("metal_kernel build", lambda: mx.fast.metal_kernel(
    name="myexp", input_names=["inp"], output_names=["out"], source=src))
try_("cuda_kernel build", lambda: mx.fast.cuda_kernel(
    name="myexp", input_names=["inp"], output_names=["out"],
    source="auto elem = threadIdx.x; out[elem] = exp(inp[elem]);"))
kern = mx.fast.metal_kernel(name="myexp", input_names=["inp"], output_names=["out"], source=src)
print("metal_kernel returns:", type(kern).__name__, callable(kern))
try_("metal_kernel call", lambda: kern(inputs=[mx.ones(4)], output_shapes=[(4,)],
                                       output_dtypes=[mx.float32], grid=(4, 1, 1),
                                       threadgroup=(4, 1, 1)))
try_("metal is_available", lambda: print("  mx.metal.is_available():", mx.metal.is_available()))
try_("cuda is_available", lambda: print("  mx.cuda.is_available():", mx.cuda.is_available()))

# ------------------------------------------------------------------- typical mistakes
print("== mistakes")
try_("rms_norm weight of the wrong length",
     lambda: mx.fast.rms_norm(x, mx.ones((8,)), 1e-5))
try_("rms_norm 2-d weight", lambda: mx.fast.rms_norm(x, mx.ones((5, 16)), 1e-5))
try_("rms_norm integer input", lambda: mx.fast.rms_norm(mx.ones((2, 4), mx.int32), None, 1e-5))
try_("layer_norm bias of the wrong length",
     lambda: mx.fast.layer_norm(x, w, mx.zeros((4,)), 1e-5))
try_("layer_norm 2-d weight", lambda: mx.fast.layer_norm(x, mx.ones((1, 16)), None, 1e-5))
try_("rope on a 1-d input", lambda: mx.fast.rope(mx.ones((16,)), 16, traditional=False,
                                                  base=10000.0, scale=1.0, offset=0))
try_("rope dims larger than the last axis", lambda: mx.fast.rope(
    xq, 32, traditional=False, base=10000.0, scale=1.0, offset=0))
try_("rope odd dims", lambda: mx.fast.rope(xq, 7, traditional=False, base=10000.0, scale=1.0,
                                           offset=0))
try_("rope base and freqs both given", lambda: mx.fast.rope(
    xq, 16, traditional=False, base=10000.0, scale=1.0, offset=0, freqs=freqs))
try_("rope freqs of the wrong length", lambda: mx.fast.rope(
    xq, 16, traditional=False, base=None, scale=1.0, offset=0, freqs=freqs[:3]))
try_("rope offset of the wrong length", lambda: mx.fast.rope(
    xq, 16, traditional=False, base=10000.0, scale=1.0, offset=mx.array([1, 2, 3])))
try_("rope float offset array", lambda: mx.fast.rope(
    xq, 16, traditional=False, base=10000.0, scale=1.0, offset=mx.array(1.5)))
try_("rope integer input", lambda: mx.fast.rope(
    mx.ones((1, 2, 4), mx.int32), 4, traditional=False, base=10000.0, scale=1.0, offset=0))
try_("sdpa 3-d queries", lambda: sdpa(q[0], k[0], v[0], scale=scale))
try_("sdpa kv heads not dividing q heads",
     lambda: sdpa(q, mx.ones((B, 3, T, D)), mx.ones((B, 3, T, D)), scale=scale))
try_("sdpa k / v lengths differ", lambda: sdpa(q, k, v[:, :, :4], scale=scale))
try_("sdpa head dims differ", lambda: sdpa(q, k[..., :4], v, scale=scale))
try_("sdpa mask of a bad shape", lambda: sdpa(q, k, v, scale=scale, mask=mx.ones((T, 4))))
try_("sdpa 5-d mask", lambda: sdpa(q, k, v, scale=scale, mask=mx.zeros((1, 1, 1, T, T))))
try_("sdpa float32 mask with float16 inputs", lambda: sdpa(
    q.astype(mx.float16), k.astype(mx.float16), v.astype(mx.float16), scale=scale,
    mask=add_mask))
try_("sdpa unknown mask string", lambda: sdpa(q, k, v, scale=scale, mask="upper"))
try_("sdpa sinks of the wrong length", lambda: sdpa(q, k, v, scale=scale, sinks=mx.ones((3,))))
try_("sdpa without scale", lambda: sdpa(q, k, v))
try_("sdpa integer inputs", lambda: sdpa(mx.ones((1, 1, 2, 4), mx.int32),
                                         mx.ones((1, 1, 2, 4), mx.int32),
                                         mx.ones((1, 1, 2, 4), mx.int32), scale=1.0))
try_("cross_entropy float targets", lambda: mx.fast.cross_entropy(logits, targets * 1.0))
try_("cross_entropy bool targets", lambda: mx.fast.cross_entropy(logits, targets > 3))
try_("cross_entropy targets of the wrong shape",
     lambda: mx.fast.cross_entropy(logits, targets[:, :3]))
try_("cross_entropy targets with the class axis kept",
     lambda: mx.fast.cross_entropy(logits, targets[..., None]))
try_("cross_entropy integer logits", lambda: mx.fast.cross_entropy(
    mx.ones((2, 4), mx.int32), mx.array([1, 2])))
try_("cross_entropy list targets", lambda: mx.fast.cross_entropy(logits[0], [1, 2, 3, 4, 5]))
try_("nn.RoPE on a 1-d input", lambda: nn.RoPE(8)(mx.ones((8,))))
try_("nn.MultiHeadAttention dims not divisible by heads",
     lambda: nn.MultiHeadAttention(10, 4))
