"""A vision transformer (ViT) on drawn shapes, in the shape of MLX's examples.

The data are 16x16 one-channel images, channels last (NHWC), of a rectangle, a disc or a
cross, rendered with mx ops from shapes drawn by `mx.random` with explicit keys. Batches are
augmented with keys split per step: a padded (`mx.pad` constant / edge / reflect) random crop
taken by slicing at `mx.random.randint` offsets, flips by negative-step slicing, and mixup
with a uniform mixing weight (MLX has no `random.beta`). The model embeds 4x4 patches either
by a strided `nn.Conv2d` or by reshape / transpose and `nn.Linear`, prepends a class token
(`mx.broadcast_to`, `mx.concatenate`), adds learned positional embeddings, and runs pre-norm
blocks (`nn.LayerNorm` or `nn.RMSNorm`) whose attention is `nn.MultiHeadAttention` or written
by hand around `mx.fast.scaled_dot_product_attention`, with GELU in its three
approximations, `nn.Dropout` and stochastic depth by `mx.random.bernoulli`. Training uses
label-smoothed `cross_entropy`, AdamW under a warmup joined to cosine decay and
`clip_grad_norm`, eagerly and as a compiled step holding the random state. Then: linear
probing by `freeze` / `unfreeze(keys=...)`, `nn.quantize` of the head, attention maps
printed as tables, and typical mistakes.
Run on ember with `python -m ember.run vision_transformer.py`.
"""

import math
from functools import partial

from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SIZE = 16
PATCH = 4
DIM = 32
HEADS = 4
CLASSES = 3
BATCH = 24
NAMES = ["rectangle", "disc", "cross"]


def draw_shapes(key, n):
    """n images in [0, 1] of one rectangle, disc or cross each, and their labels."""
    k_centre, k_half, k_kind, k_level = mx.random.split(key, 4)
    centre = mx.random.uniform(5.0, 11.0, (n, 2), key=k_centre)
    half = mx.random.uniform(2.5, 4.5, (n, 2), key=k_half)
    label = mx.random.randint(0, CLASSES, (n,), key=k_kind)
    level = mx.random.uniform(0.5, 1.0, (n,), key=k_level)
    grid = mx.arange(SIZE, dtype=mx.float32) + 0.5
    dy = grid[None, :, None] - centre[:, 0, None, None]
    dx = grid[None, None, :] - centre[:, 1, None, None]
    hy, hx = half[:, 0, None, None], half[:, 1, None, None]
    rect = (mx.abs(dy) <= hy) & (mx.abs(dx) <= hx)
    radius = half.mean(axis=1)[:, None, None]
    disc = dy * dy + dx * dx <= radius * radius
    cross = ((mx.abs(dy) <= 1.0) & (mx.abs(dx) <= hx)) | ((mx.abs(dx) <= 1.0) & (mx.abs(dy) <= hy))
    kind = label[:, None, None]
    inside = mx.where(kind == 0, rect, mx.where(kind == 1, disc, cross))
    images = mx.where(inside, level[:, None, None], 0.0)
    return images[..., None], label


def augment(key, images, mode):
    """A random crop of the padded batch (one offset pair per batch) and random flips."""
    k_off, k_flip, k_vflip = mx.random.split(key, 3)
    padded = mx.pad(images, [(0, 0), (2, 2), (2, 2), (0, 0)], mode=mode)
    oy, ox = mx.random.randint(0, 5, (2,), key=k_off).tolist()
    crop = padded[:, oy:oy + SIZE, ox:ox + SIZE, :]
    flip = mx.random.bernoulli(0.5, (images.shape[0], 1, 1, 1), key=k_flip)
    crop = mx.where(flip, crop[:, :, ::-1], crop)
    vflip = mx.random.bernoulli(0.25, (images.shape[0], 1, 1, 1), key=k_vflip)
    return mx.where(vflip, crop[:, ::-1], crop), (oy, ox)


def mixup(key, images, labels):
    k_lam, k_perm = mx.random.split(key)
    lam = mx.random.uniform(0.6, 1.0, key=k_lam)  # uniform: MLX has no random.beta
    perm = mx.random.permutation(images.shape[0], key=k_perm)
    return lam * images + (1.0 - lam) * images[perm], labels, labels[perm], lam


class PatchEmbedConv(nn.Module):
    def __init__(self, patch=PATCH, dims=DIM):
        super().__init__()
        self.proj = nn.Conv2d(1, dims, kernel_size=patch, stride=patch)

    def __call__(self, x):
        x = self.proj(x)  # (B, H/p, W/p, dims)
        return x.reshape(x.shape[0], -1, x.shape[-1])


class PatchEmbedLinear(nn.Module):
    def __init__(self, patch=PATCH, dims=DIM):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(patch * patch, dims)

    def __call__(self, x):
        b, h, w, c = x.shape
        p = self.patch
        x = x.reshape(b, h // p, p, w // p, p, c).transpose(0, 1, 3, 2, 4, 5)
        return self.proj(x.reshape(b, (h // p) * (w // p), p * p * c))


class HandAttention(nn.Module):
    """Multi-head self-attention written out, computed by the fused kernel."""

    def __init__(self, dims=DIM, heads=HEADS):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dims, 3 * dims)
        self.out = nn.Linear(dims, dims)

    def __call__(self, x, mask=None, return_weights=False):
        b, n, d = x.shape
        q, k, v = mx.split(self.qkv(x), 3, axis=-1)
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(0, 2, 1, 3) for t in (q, k, v))
        scale = 1.0 / math.sqrt(q.shape[-1])
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        o = self.out(o.transpose(0, 2, 1, 3).reshape(b, n, d))
        if not return_weights:
            return o
        return o, mx.softmax((q * scale) @ k.swapaxes(-1, -2), axis=-1)


class Block(nn.Module):
    def __init__(self, norm, attention, approx, drop_path=0.0, dropout=0.0):
        super().__init__()
        make_norm = nn.LayerNorm if norm == "layer" else nn.RMSNorm
        self.norm1 = make_norm(DIM)
        self.norm2 = make_norm(DIM)
        self.hand = attention == "hand"
        self.attn = HandAttention() if self.hand else nn.MultiHeadAttention(DIM, HEADS, bias=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(approx=approx),
                                 nn.Dropout(dropout), nn.Linear(2 * DIM, DIM))
        self.drop_path = drop_path

    def stochastic_depth(self, x):
        if not self.training or self.drop_path == 0.0:
            return x
        keep = 1.0 - self.drop_path
        mask = mx.random.bernoulli(keep, (x.shape[0], 1, 1))
        return x * mask / keep

    def __call__(self, x):
        h = self.norm1(x)
        h = self.attn(h) if self.hand else self.attn(h, h, h)
        x = x + self.stochastic_depth(h)
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class ViT(nn.Module):
    def __init__(self, embed="conv", norm="layer", attention="mha", approx="precise",
                 depth=2, drop_path=0.1, dropout=0.1):
        super().__init__()
        self.embed = PatchEmbedConv() if embed == "conv" else PatchEmbedLinear()
        n = (SIZE // PATCH) ** 2
        self.cls_token = mx.zeros((1, 1, DIM))
        self.pos_embed = 0.02 * mx.random.truncated_normal(-2.0, 2.0, (1, n + 1, DIM))
        self.blocks = [Block(norm, attention, approx, drop_path * i / max(depth - 1, 1), dropout)
                       for i in range(depth)]
        self.norm = nn.LayerNorm(DIM) if norm == "layer" else nn.RMSNorm(DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def features(self, x):
        x = self.embed(x)
        cls = mx.broadcast_to(self.cls_token, (x.shape[0], 1, DIM))
        x = mx.concatenate([cls, x], axis=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.norm(x)

    def __call__(self, x):
        return self.head(self.features(x)[:, 0])


def loss_fn(model, x, ya, yb, lam):
    logits = model(x)
    la = nn.losses.cross_entropy(logits, ya, label_smoothing=0.1, reduction="mean")
    lb = nn.losses.cross_entropy(logits, yb, label_smoothing=0.1, reduction="mean")
    return lam * la + (1.0 - lam) * lb


def accuracy(model, x, y):
    return (mx.argmax(model(x), axis=1) == y).mean().item()


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


mx.random.seed(0)
data_key, aug_key, test_key = mx.random.split(mx.random.key(11), 3)
train_x, train_y = draw_shapes(data_key, 8 * BATCH)
test_x, test_y = draw_shapes(test_key, 96)
print("data", train_x.shape, train_x.dtype, "class counts",
      [(train_y == c).sum().item() for c in range(CLASSES)])
for c in range(CLASSES):
    i = mx.argmax(train_y == c).item()
    rows = (train_x[i, ::2, ::2, 0] > 0).astype(mx.int32).tolist()
    print(NAMES[c], " ".join("".join("#" if v else "." for v in r) for r in rows))

# ---- augmentation -----------------------------------------------------------------------
small = train_x[:4]
for mode in ["constant", "edge", "reflect"]:
    padded = mx.pad(small, [(0, 0), (2, 2), (2, 2), (0, 0)], mode=mode)
    print(f"pad {mode}: shape {padded.shape} sum {padded.sum().item():.4f} "
          f"corner {padded[0, 0, 0, 0].item():.4f}")
crop, offsets = augment(mx.random.key(5), small, "reflect")
print("crop offsets", offsets, "mean", f"{crop.mean().item():.5f}")
print("flip twice is identity", mx.array_equal(small[:, :, ::-1][:, :, ::-1], small).item())
mixed, ya, yb, lam = mixup(mx.random.key(6), small, train_y[:4])
print("mixup lam", f"{lam.item():.5f}", "labels", ya.tolist(), yb.tolist(),
      "mean", f"{mixed.mean().item():.5f}")

# ---- two patch embeddings ---------------------------------------------------------------
conv_embed = PatchEmbedConv()
lin_embed = PatchEmbedLinear()
w = conv_embed.proj.weight  # (dims, p, p, 1)
lin_embed.update({"proj": {"weight": w.reshape(DIM, -1), "bias": conv_embed.proj.bias}})
a, b = conv_embed(small), lin_embed(small)
print("patch tokens", a.shape, "conv vs reshape max diff below 1e-5",
      (mx.abs(a - b).max() < 1e-5).item())

# ---- attention: fused kernel against the written-out formula -----------------------------
q, k, v = (mx.random.normal((2, HEADS, 5, 8), key=mx.random.key(i)) for i in range(3))
ref = mx.softmax(q @ k.swapaxes(-1, -2) * 0.5, axis=-1) @ v
fused = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5)
print("sdpa scale", (mx.abs(fused - ref).max() < 1e-5).item())
causal = mx.tril(mx.ones((5, 5), dtype=mx.bool_))
masked = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask=causal)
string = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask="causal")
additive = mx.where(causal, 0.0, -1e9)
add_out = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask=additive)
print("causal bool == 'causal'", mx.allclose(masked, string, atol=1e-6).item(),
      "additive", mx.allclose(masked, add_out, atol=1e-6).item())
print("first row attends to itself", mx.allclose(string[:, :, 0], v[:, :, 0], atol=1e-6).item())
print("sdpa out", string.shape, f"{string.sum().item():.4f}")

# ---- parameter counts -------------------------------------------------------------------
model = ViT()
flat = tree_flatten(model.parameters())
print("vit params", count(model.parameters()), "arrays", len(flat))
print("first keys", [k for k, _ in flat[:4]])
per_part = {}
for key, value in flat:
    per_part[key.split(".")[0]] = per_part.get(key.split(".")[0], 0) + value.size
print("per part", per_part)
shapes = tree_map(lambda p: p.shape, model.blocks[0].attn.parameters())
print("mha shapes", shapes["query_proj"], shapes["out_proj"]["weight"])
rebuilt = tree_unflatten(flat)
print("unflatten round trip", sorted(rebuilt) == sorted(model.parameters()))
print(model.blocks[0].mlp)

# ---- training: eager then compiled ------------------------------------------------------
warmup, total = 6, 30
schedule = optim.join_schedules(
    [optim.linear_schedule(1e-5, 3e-3, warmup), optim.cosine_decay(3e-3, total - warmup, 1e-4)],
    [warmup])
print("lr", " ".join(f"{schedule(s).item():.3e}" for s in [0, 3, 6, 15, 29]))
opt = optim.AdamW(learning_rate=schedule, weight_decay=0.05)
value_grad = nn.value_and_grad(model, loss_fn)
modes = ["constant", "edge", "reflect"]


def batch_for(step, key):
    k_aug, k_mix = mx.random.split(key)
    x = train_x[(step % 8) * BATCH:(step % 8 + 1) * BATCH]
    y = train_y[(step % 8) * BATCH:(step % 8 + 1) * BATCH]
    x, _ = augment(k_aug, x, modes[step % 3])
    return mixup(k_mix, x, y)


model.train()
step_keys = mx.random.split(aug_key, total)
for step in range(18):
    x, ya, yb, lam = batch_for(step, step_keys[step])
    loss, grads = value_grad(model, x, ya, yb, lam)
    grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
    opt.update(model, grads)
    mx.eval(model.parameters(), opt.state)
    if step % 3 == 2:
        print(f"step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f} "
              f"lr {opt.learning_rate.item():.3e}")

state = [model.state, opt.state, mx.random.state]


@partial(mx.compile, inputs=state, outputs=state)
def train_step(x, ya, yb, lam):
    loss, grads = value_grad(model, x, ya, yb, lam)
    grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
    opt.update(model, grads)
    return loss, norm


for step in range(18, total):
    x, ya, yb, lam = batch_for(step, step_keys[step])
    loss, norm = train_step(x, ya, yb, lam)
    mx.eval(state)
    if step % 3 == 2:
        print(f"compiled step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f}")
print("optimizer step", opt.step.item(), "lr", f"{opt.learning_rate.item():.3e}")

model.eval()
print("test accuracy", f"{accuracy(model, test_x, test_y):.4f}",
      "train accuracy", f"{accuracy(model, train_x, train_y):.4f}")
print("eval is deterministic", mx.array_equal(model(test_x[:8]), model(test_x[:8])).item())
model.train()
print("train mode differs", not mx.allclose(model(test_x[:8]), model(test_x[:8])).item())
model.eval()

# ---- variants: reshape embedding, RMSNorm, hand attention, GELU approximations -----------
for embed, norm, attention, approx in [("linear", "rms", "hand", "tanh"),
                                       ("conv", "rms", "hand", "fast")]:
    mx.random.seed(1)
    other = ViT(embed, norm, attention, approx, drop_path=0.2)
    other_opt = optim.AdamW(learning_rate=2e-3)
    other_vg = nn.value_and_grad(other, loss_fn)
    other.train()
    for step in range(8):
        x, ya, yb, lam = batch_for(step, step_keys[step])
        loss, grads = other_vg(other, x, ya, yb, lam)
        other_opt.update(other, grads)
        mx.eval(other.parameters(), other_opt.state)
    other.eval()
    print(f"{embed}/{norm}/{attention}/{approx}: params {count(other.parameters())} "
          f"loss {loss.item():.4f} test acc {accuracy(other, test_x, test_y):.4f}")

# ---- attention maps ---------------------------------------------------------------------
probe = ViT("conv", "layer", "hand", "precise", depth=1)
probe.update(tree_map(lambda p: p, {k: v for k, v in model.parameters().items()
                                    if k in ("embed", "cls_token", "pos_embed")}))
probe.eval()
tokens = mx.concatenate([mx.broadcast_to(probe.cls_token, (2, 1, DIM)),
                         probe.embed(test_x[:2])], axis=1) + probe.pos_embed
_, weights = probe.blocks[0].attn(probe.blocks[0].norm1(tokens), return_weights=True)
print("attention weights", weights.shape, "rows sum to 1",
      mx.allclose(weights.sum(axis=-1), mx.ones((2, HEADS, 17)), atol=1e-5).item())
for head in range(2):
    cls_map = weights[0, head, 0, 1:].reshape(4, 4)
    print(f"image 0 ({NAMES[test_y[0].item()]}), head {head}: class-token attention x 100")
    for row in (cls_map * 100).tolist():
        print("  " + " ".join(f"{v:6.2f}" for v in row))

# ---- linear probing ---------------------------------------------------------------------
model.freeze()
print("frozen trainable", count(model.trainable_parameters()))
model.unfreeze(keys=["weight", "bias"], recurse=False)
print("unfreeze top-level keys only", count(model.trainable_parameters()))
model.head.unfreeze()
model.unfreeze(keys="cls_token", recurse=False)
print("probe trainable", count(model.trainable_parameters()),
      sorted(k for k, _ in tree_flatten(model.trainable_parameters())))
probe_opt = optim.AdamW(learning_rate=1e-2)
probe_vg = nn.value_and_grad(model, loss_fn)
frozen_before = model.blocks[0].mlp.layers[0].weight
for step in range(6):
    x, ya, yb, lam = batch_for(step, step_keys[step])
    loss, grads = probe_vg(model, x, ya, yb, lam)
    probe_opt.update(model, grads)
    mx.eval(model.parameters(), probe_opt.state)
unchanged = mx.array_equal(frozen_before, model.blocks[0].mlp.layers[0].weight).item()
print("probe loss", f"{loss.item():.4f}", "grad keys", sorted(k for k, _ in tree_flatten(grads)),
      "backbone unchanged", unchanged)
model.unfreeze()
print("unfrozen trainable", count(model.trainable_parameters()))

# ---- quantized head ---------------------------------------------------------------------
before = model(test_x)
nn.quantize(model, group_size=32, bits=8, class_predicate=lambda path, m: path == "head")
print("head", type(model.head).__name__, "bits", model.head.bits, "group", model.head.group_size,
      "weight", model.head.weight.shape, model.head.weight.dtype)
after = model(test_x)
print("quantized head: max logit change below 0.05", (mx.abs(after - before).max() < 0.05).item(),
      "same predictions", mx.array_equal(after.argmax(axis=1), before.argmax(axis=1)).item(),
      "accuracy", f"{accuracy(model, test_x, test_y):.4f}")

# ---- typical mistakes -------------------------------------------------------------------
fresh = ViT()
fresh.eval()
mistakes = [
    lambda: fresh(mx.zeros((2, 1, SIZE, SIZE))),  # NCHW into the patch conv
    lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5,
                                                 mask=mx.ones((3, 5), dtype=mx.bool_)),
    lambda: PatchEmbedLinear(patch=5)(mx.zeros((2, SIZE, SIZE, 1))),  # 16 is not a multiple of 5
    lambda: ViT(embed="linear")(mx.zeros((2, 12, 12, 1))),  # 9 patches against 17 positions
    lambda: nn.losses.cross_entropy(mx.zeros((4, 3)), mx.zeros((4, 2)), label_smoothing=0.1),
    lambda: nn.losses.cross_entropy(mx.zeros((4, 3)), mx.zeros(4, mx.int32), label_smoothing=1.0),
    lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask="upper"),
    lambda: mx.fast.scaled_dot_product_attention(q, k, v),  # scale is keyword-only, required
    lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=None),
    lambda: mx.random.randint(0, 5, 2, key=mx.random.key(0)),  # shape as an int
    lambda: mx.random.bernoulli(None, (2,)),
    lambda: mx.pad(small, 2, mode="wrap"),
    lambda: nn.GELU(approx="exact"),
    lambda: mx.random.randint(0, 5, (2,), key=mx.random.key(0))[:, ::-1],
]
for mistake in mistakes:
    try:
        print("no error", mistake())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
