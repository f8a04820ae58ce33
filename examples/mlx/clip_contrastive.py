"""A tiny CLIP: contrastive image-text training on drawn shapes, in the shape of MLX's examples.

Each example pairs a 16x16 RGB image (channels last) of a small or large red, green, blue or
yellow square, disc or cross, rendered with mx ops from shapes drawn by `mx.random` with
explicit keys, with a "caption": a token sequence from one of three templates filled in by
`mx.where`, ending in an end-of-text token whose id is the largest in the vocabulary. The
image tower embeds 4x4 patches by a strided `nn.Conv2d`, prepends a class token, adds learned
positional embeddings and runs `nn.TransformerEncoder` (pre-norm, GELU); the text tower is
`nn.Embedding` plus hand-written blocks around `nn.MultiHeadAttention` under
`create_additive_causal_mask`, pooled at the end-of-text token (`mx.argmax` of the ids,
`take_along_axis`). Both are projected, L2-normalised (`mx.linalg.norm` with keepdims) and
compared under a learned temperature (`mx.clip`, `mx.exp`) by the symmetric label-smoothed
cross-entropy. Training: `nn.value_and_grad`, AdamW (weight decay only on matrices, chosen by
`tree_map_with_path`) under a warmup joined to cosine decay, `clip_grad_norm`, batches by
`mx.random.permutation`, eagerly then as a compiled step with `inputs` / `outputs` state.
Then zero-shot classification from prompt embeddings, retrieval recall@k by `argsort` /
`argpartition` / `topk`, `save_weights` / `load_weights`, and typical mistakes.
Run on ember with `python -m ember.run clip_contrastive.py`.
"""

import math
import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map_with_path

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SIZE, PATCH, DIM, EMBED, HEADS = 16, 4, 32, 24, 4
COLOURS = ["red", "green", "blue", "yellow"]
SHAPES = ["square", "disc", "cross"]
WORDS = ["<pad>", "<s>", "a", "photo", "of", "small", "large"] + COLOURS + SHAPES + ["<eot>"]
EOT = len(WORDS) - 1
LENGTH = 8
RGB = mx.array([[1.0, 0.1, 0.1], [0.1, 0.9, 0.2], [0.2, 0.3, 1.0], [1.0, 0.9, 0.1]])
# templates: -1 stands for the size word, -2 the colour, -3 the shape
TEMPLATES = mx.array([[1, 2, -1, -2, -3, EOT, 0, 0],
                      [1, 2, 3, 4, 2, -2, -3, EOT],
                      [1, -2, -3, EOT, 0, 0, 0, 0]])


def draw_pairs(key, n):
    """n images and captions, with their colour, shape and size labels."""
    keys = mx.random.split(key, 7)
    colour = mx.random.randint(0, len(COLOURS), (n,), key=keys[0])
    shape = mx.random.randint(0, len(SHAPES), (n,), key=keys[1])
    large = mx.random.bernoulli(0.5, (n,), key=keys[2])
    centre = mx.random.uniform(5.5, 10.5, (n, 2), key=keys[3])
    half = mx.where(large, 4.5, 2.5)[:, None, None]
    grid = mx.arange(SIZE, dtype=mx.float32) + 0.5
    dy = grid[None, :, None] - centre[:, 0, None, None]
    dx = grid[None, None, :] - centre[:, 1, None, None]
    square = (mx.abs(dy) <= half) & (mx.abs(dx) <= half)
    disc = dy * dy + dx * dx <= half * half
    bar_y, bar_x = mx.abs(dy) <= 1.0, mx.abs(dx) <= 1.0
    cross = (bar_y & (mx.abs(dx) <= half)) | (bar_x & (mx.abs(dy) <= half))
    kind = shape[:, None, None]
    inside = mx.where(kind == 0, square, mx.where(kind == 1, disc, cross))
    noise = 0.05 * mx.random.normal((n, SIZE, SIZE, 3), key=keys[4])
    images = mx.where(inside[..., None], RGB[colour][:, None, None, :], 0.0) + noise
    template = TEMPLATES[mx.random.randint(0, TEMPLATES.shape[0], (n,), key=keys[5])]
    size_tok = (5 + large.astype(mx.int32))[:, None]
    tokens = mx.where(template == -1, size_tok,
                      mx.where(template == -2, (7 + colour)[:, None],
                               mx.where(template == -3, (11 + shape)[:, None], template)))
    return images, tokens.astype(mx.int32), colour * len(SHAPES) + shape, large


def words(tokens):
    return " ".join(WORDS[t] for t in tokens if t != 0)


class ImageTower(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.patch = nn.Conv2d(3, DIM, kernel_size=PATCH, stride=PATCH)
        self.cls_token = 0.02 * mx.random.normal((1, 1, DIM))
        self.pos_embed = 0.02 * mx.random.normal((1, (SIZE // PATCH) ** 2 + 1, DIM))
        self.encoder = nn.TransformerEncoder(depth, DIM, HEADS, mlp_dims=2 * DIM,
                                             activation=nn.gelu, norm_first=True)
        self.proj = nn.Linear(DIM, EMBED, bias=False)

    def __call__(self, images):
        x = self.patch(images)  # (B, 4, 4, DIM): NHWC in, NHWC out
        x = x.reshape(x.shape[0], -1, DIM)
        cls = mx.broadcast_to(self.cls_token, (x.shape[0], 1, DIM))
        x = mx.concatenate([cls, x], axis=1) + self.pos_embed
        x = self.encoder(x, None)  # its last LayerNorm is built in
        return self.proj(x[:, 0])


class TextBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.attn = nn.MultiHeadAttention(DIM, HEADS, bias=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))

    def __call__(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, mask=mask)
        return x + self.mlp(self.norm2(x))


class TextTower(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.embed = nn.Embedding(len(WORDS), DIM)
        self.pos_embed = 0.02 * mx.random.normal((1, LENGTH, DIM))
        self.blocks = [TextBlock() for _ in range(depth)]
        self.norm = nn.LayerNorm(DIM)
        self.proj = nn.Linear(DIM, EMBED, bias=False)

    def __call__(self, tokens):
        x = self.embed(tokens) + self.pos_embed[:, :tokens.shape[1]]
        mask = nn.MultiHeadAttention.create_additive_causal_mask(tokens.shape[1], x.dtype)
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        eot = mx.argmax(tokens, axis=-1)  # the end-of-text token has the largest id
        pooled = mx.take_along_axis(x, eot[:, None, None], axis=1).squeeze(1)
        return self.proj(pooled)


class CLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = ImageTower()
        self.text = TextTower()
        self.logit_scale = mx.array(math.log(1 / 0.07))

    def encode(self, images=None, tokens=None):
        out = []
        for tower, x in ((self.image, images), (self.text, tokens)):
            if x is not None:
                z = tower(x)
                out.append(z / mx.linalg.norm(z, axis=-1, keepdims=True))
        return out

    def scale(self):
        return mx.exp(mx.clip(self.logit_scale, 0.0, math.log(100.0)))

    def __call__(self, images, tokens):
        img, txt = self.encode(images, tokens)
        return self.scale() * img @ txt.T


def clip_loss(model, images, tokens):
    logits = model(images, tokens)
    labels = mx.arange(logits.shape[0])
    li = nn.losses.cross_entropy(logits, labels, label_smoothing=0.1, reduction="mean")
    lt = nn.losses.cross_entropy(logits.T, labels, label_smoothing=0.1, reduction="mean")
    return (li + lt) / 2


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


mx.random.seed(0)
data_key, test_key, perm_key = mx.random.split(mx.random.key(3), 3)
train_img, train_tok, train_cls, train_large = draw_pairs(data_key, 192)
test_img, test_tok, test_cls, test_large = draw_pairs(test_key, 48)
print("images", train_img.shape, train_img.dtype, "tokens", train_tok.shape, train_tok.dtype)
print("class counts", [(train_cls == c).sum().item() for c in range(12)])
for i in range(3):
    rows = (train_img[i, ::2, ::2].max(axis=-1) > 0.5).astype(mx.int32).tolist()
    print(f"'{words(train_tok[i].tolist())}'", " ".join("".join(".#"[v] for v in r) for r in rows))
print("eot positions", mx.argmax(train_tok[:8], axis=-1).tolist(),
      "mean pixel", f"{train_img.mean().item():.5f}")

# ---- the pieces ---------------------------------------------------------------------------
mask = nn.MultiHeadAttention.create_additive_causal_mask(4)
print("causal mask", mask.dtype, mask.shape, (mask < -1e30).astype(mx.int32).tolist())
q, k, v = (mx.random.normal((2, HEADS, 6, 8), key=mx.random.key(i)) for i in range(3))
additive = nn.MultiHeadAttention.create_additive_causal_mask(6)
fused = mx.fast.scaled_dot_product_attention(q, k, v, scale=8 ** -0.5, mask=additive)
ref = mx.softmax(q @ k.swapaxes(-1, -2) * 8 ** -0.5 + additive, axis=-1) @ v
print("sdpa with additive mask", fused.shape, (mx.abs(fused - ref).max() < 1e-5).item(),
      "== 'causal'", mx.allclose(fused, mx.fast.scaled_dot_product_attention(
          q, k, v, scale=8 ** -0.5, mask="causal"), atol=1e-6).item())
tokens = train_tok[:4]
eot = mx.argmax(tokens, axis=-1)
hidden = mx.broadcast_to(mx.arange(LENGTH, dtype=mx.float32)[None, :, None], (4, LENGTH, 2))
print("eot", eot.tolist(), "pooled position",
      mx.take_along_axis(hidden, eot[:, None, None], axis=1).squeeze(1)[:, 0].tolist())
mean, std = train_img.mean(axis=(0, 1, 2)), train_img.std(axis=(0, 1, 2))
normalised = (train_img - mean) / std
print("channel mean", [f"{v:.4f}" for v in mean.tolist()],
      "std", [f"{v:.4f}" for v in std.tolist()], "normalised mean below 1e-5",
      (mx.abs(normalised.mean(axis=(0, 1, 2))) < 1e-5).all().item())
fancy = hidden[mx.arange(4), eot]
print("pooling by fancy indexing == take_along_axis", mx.array_equal(
    fancy, mx.take_along_axis(hidden, eot[:, None, None], axis=1).squeeze(1)).item(), fancy.shape)
g = mx.array([-3.0, -0.5, 0.0, 0.7, 2.5])
quick = g * mx.sigmoid(1.702 * g)
print("quick gelu == gelu_fast_approx",
      mx.allclose(quick, nn.gelu_fast_approx(g), atol=1e-6).item(),
      [f"{v:.5f}" for v in quick.tolist()])
z = mx.array([[3.0, 4.0], [1.0, 0.0], [0.0, -2.0]])
print("norm keepdims", mx.linalg.norm(z, axis=-1, keepdims=True).shape,
      (z / mx.linalg.norm(z, axis=-1, keepdims=True)).tolist())
print("clipped scale", [f"{mx.exp(mx.clip(mx.array(s), 0.0, math.log(100.0))).item():.4f}"
                        for s in (-1.0, 2.6593, 6.0)])

# ---- model, parameters, weight decay mask ------------------------------------------------
mx.random.seed(1)
model = CLIP()
flat = tree_flatten(model.parameters())
print("params", count(model.parameters()), "image", count(model.image.parameters()),
      "text", count(model.text.parameters()), "arrays", len(flat))
print("first keys", [k for k, _ in flat[:5]])
decay = tree_map_with_path(lambda path, p: p.ndim >= 2 and "embed" not in path
                           and "cls_token" not in path, model.parameters())
decayed = dict(tree_flatten(decay))
print("decayed", sum(decayed.values()), "of", len(decayed), "arrays;",
      sum(p.size for k, p in flat if decayed[k]), "values")
print("not decayed", [k for k, on in decayed.items() if not on][:6])
print(model.text.blocks[0])

# ---- training -----------------------------------------------------------------------------
EPOCHS = 6
warmup, total, batch = 6, EPOCHS * 6, 32
schedule = optim.join_schedules(
    [optim.linear_schedule(1e-5, 1e-3, warmup), optim.cosine_decay(1e-3, total - warmup, 2e-4)],
    [warmup])
print("lr", " ".join(f"{schedule(s).item():.3e}" for s in [0, 3, 6, 20, total - 1]))
opt = optim.MultiOptimizer(
    [optim.AdamW(learning_rate=schedule, weight_decay=0.1),
     optim.AdamW(learning_rate=schedule, weight_decay=0.0)],
    [lambda path, p: decayed[path]])
value_grad = nn.value_and_grad(model, clip_loss)


def batches(key, n):
    perm = mx.random.permutation(n, key=key)
    for s in range(0, n - batch + 1, batch):
        ids = perm[s:s + batch]
        yield train_img[ids], train_tok[ids]


step = 0
epoch_keys = mx.random.split(perm_key, EPOCHS)
for epoch in range(EPOCHS // 2):
    for images, tokens in batches(epoch_keys[epoch], train_img.shape[0]):
        loss, grads = value_grad(model, images, tokens)
        grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        step += 1
    print(f"epoch {epoch} step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f} "
          f"scale {model.scale().item():.4f}")

state = [model.state, opt.state]


@partial(mx.compile, inputs=state, outputs=state)
def train_step(images, tokens):
    loss, grads = value_grad(model, images, tokens)
    grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
    opt.update(model, grads)
    return loss, norm


for epoch in range(EPOCHS // 2, EPOCHS):
    for images, tokens in batches(epoch_keys[epoch], train_img.shape[0]):
        loss, norm = train_step(images, tokens)
        mx.eval(state)
        step += 1
    print(f"compiled epoch {epoch} step {step}: loss {loss.item():.4f} "
          f"grad norm {norm.item():.4f}")
print("steps", opt.optimizers[0].step.item(), "lr", f"{schedule(step - 1).item():.3e}",
      "embedding decay-free", "embed.weight" in str(sorted(k for k, on in decayed.items()
                                                            if not on)))

# ---- zero-shot classification --------------------------------------------------------------
prompts = mx.array([[1, 2, 3, 4, 2, 7 + c, 11 + s, EOT] for c in range(4) for s in range(3)])
img_emb, txt_emb = model.encode(test_img, prompts)
print("prompts", prompts.shape, f"'{words(prompts[5].tolist())}'",
      "unit norms", mx.allclose(mx.linalg.norm(txt_emb, axis=-1), mx.ones(12), atol=1e-5).item())
pred = mx.argmax(img_emb @ txt_emb.T, axis=-1)
print("zero-shot accuracy", f"{(pred == test_cls).mean().item():.4f}",
      "colour", f"{(pred // 3 == test_cls // 3).mean().item():.4f}",
      "shape", f"{(pred % 3 == test_cls % 3).mean().item():.4f}")
confusion = mx.zeros((12, 12), dtype=mx.int32).at[test_cls, pred].add(1)
print("confusion diagonal", mx.diag(confusion).tolist(), "total", confusion.sum().item())

# ---- the temperature's gradient, half precision, a compiled encoder ----------------------
grad_scale = mx.grad(lambda s: mx.exp(mx.clip(s, 0.0, math.log(100.0))))
print("d scale / d logit_scale",
      [f"{grad_scale(mx.array(s)).item():.4f}" for s in (-1.0, 2.0, 5.0)])
half = CLIP()
half.update(model.parameters())
half.set_dtype(mx.float16)
h_img, h_txt = half.encode(test_img.astype(mx.float16), prompts)
h_pred = mx.argmax(h_img @ h_txt.T, axis=-1)
print("float16", h_img.dtype, half.logit_scale.dtype, "same zero-shot predictions",
      f"{(h_pred == pred).mean().item():.4f}", "max |sim - float32| below 0.02",
      (mx.abs((h_img @ h_txt.T).astype(mx.float32) - img_emb @ txt_emb.T).max() < 0.02).item())
encode_images = mx.compile(lambda x: model.encode(images=x)[0])
print("compiled encoder equal", mx.allclose(encode_images(test_img), img_emb, atol=1e-5).item(),
      "at another batch", encode_images(test_img[:5]).shape)

# ---- retrieval --------------------------------------------------------------------------------
img_emb, txt_emb = model.encode(test_img, test_tok)
sim = img_emb @ txt_emb.T
print("similarity", sim.shape, f"diag mean {mx.diag(sim).mean().item():.4f}",
      f"off-diag mean {((sim.sum() - mx.diag(sim).sum()) / (48 * 47)).item():.4f}")
for top in (1, 5):
    ranked = mx.argsort(-sim, axis=1)[:, :top]
    hit = (test_cls[ranked] == test_cls[:, None]).any(axis=1)
    ranked_t = mx.argsort(-sim.T, axis=1)[:, :top]
    hit_t = (test_cls[ranked_t] == test_cls[:, None]).any(axis=1)
    print(f"recall@{top} image->text {hit.mean().item():.4f} text->image {hit_t.mean().item():.4f}")
part = mx.argpartition(-sim, kth=4, axis=1)[:, :5]
top_vals = mx.topk(sim, 5, axis=1)
same = mx.allclose(mx.sort(mx.take_along_axis(sim, part, axis=1), axis=1),
                   mx.sort(top_vals, axis=1), atol=1e-6)
print("argpartition top-5 == topk", same.item(), "topk shape", top_vals.shape,
      "largest first", (mx.sort(top_vals, axis=1)[:, -1] == sim.max(axis=1)).all().item())

# ---- a sigmoid loss (SigLIP) from the same model, and weights in PyTorch's conv layout --------
def sigmoid_loss(model, images, tokens, bias):
    img, txt = model.encode(images, tokens)
    logits = model.scale() * img @ txt.T + bias
    labels = 2 * mx.eye(logits.shape[0]) - 1
    return -nn.log_sigmoid(labels * logits).sum() / logits.shape[0]


images, tokens = train_img[:32], train_tok[:32]
for b in (-10.0, 0.0):
    print(f"sigmoid loss bias {b}", f"{sigmoid_loss(model, images, tokens, b).item():.4f}")
bias_grad = mx.grad(lambda b: sigmoid_loss(model, images, tokens, b))(mx.array(-10.0))
print("d loss / d bias", f"{bias_grad.item():.4f}")
torch_layout = model.image.patch.weight.transpose(0, 3, 1, 2)  # (out, in, kh, kw): PyTorch's
mlx_layout = torch_layout.transpose(0, 2, 3, 1)
print("PyTorch conv layout", torch_layout.shape, "-> MLX", mlx_layout.shape,
      "round trip", mx.array_equal(mlx_layout, model.image.patch.weight).item())
by_hand = mx.conv2d(test_img[:2], mlx_layout, stride=PATCH)
print("conv2d by hand == the layer", mx.allclose(by_hand + model.image.patch.bias,
                                                 model.image.patch(test_img[:2]), atol=1e-5).item())

# ---- locked-image tuning: the image tower frozen, the text tower trained ------------------
model.image.freeze()
print("trainable", count(model.trainable_parameters()), "of", count(model.parameters()),
      "frozen image tower keys", len(tree_flatten(model.image.trainable_parameters())))
lit_opt = optim.AdamW(learning_rate=5e-4, weight_decay=0.0)
before = model.image.patch.weight
for images, tokens in batches(epoch_keys[0], 96):
    loss, grads = value_grad(model, images, tokens)
    lit_opt.update(model, grads)
    mx.eval(model.parameters(), lit_opt.state)
print("lit loss", f"{loss.item():.4f}", "grad towers", sorted(grads),
      "image unchanged", mx.array_equal(before, model.image.patch.weight).item())
model.unfreeze()

# ---- save / load ----------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "clip.safetensors")
    model.save_weights(path)
    loaded = mx.load(path)
    print("saved", len(loaded), "arrays, e.g.", sorted(loaded)[:3])
    mx.random.seed(7)
    fresh = CLIP()
    print("fresh differs", not mx.allclose(fresh(test_img[:4], test_tok[:4]),
                                           model(test_img[:4], test_tok[:4])).item())
    fresh.load_weights(path)
    print("reloaded equal", mx.array_equal(fresh(test_img[:4], test_tok[:4]),
                                           model(test_img[:4], test_tok[:4])).item())

# ---- typical mistakes ---------------------------------------------------------------------
mistakes = [
    lambda: img_emb @ mx.zeros((48, 20)).T,  # text embedded in 20 dims, images in 24
    lambda: model.image(mx.zeros((2, 3, SIZE, SIZE))),  # NCHW into the patch conv
    lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0, mask=mx.zeros((5, 6))),
    lambda: model.text.blocks[0].attn(mx.zeros((2, 6, DIM)), mx.zeros((2, 6, DIM)),
                                      mx.zeros((2, 6, DIM)), mask=mx.zeros((3, 6, 6))),
    lambda: mx.take_along_axis(mx.zeros((4, 8, DIM)), mx.zeros((4,), mx.int32), axis=1),
    lambda: nn.losses.cross_entropy(sim, mx.arange(47)),
    lambda: nn.losses.cross_entropy(sim, mx.arange(48), label_smoothing=1.5),
    lambda: mx.topk(sim, 50, axis=1),
    lambda: model.text(mx.zeros((2, 12), mx.int32)),  # longer than the positional table
    lambda: half.text.blocks[0](mx.zeros((2, 6, DIM), mx.float16),  # a float32 mask, float16 x
                                nn.MultiHeadAttention.create_additive_causal_mask(6)),
]
for mistake in mistakes:
    try:
        print("no error", mistake())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
