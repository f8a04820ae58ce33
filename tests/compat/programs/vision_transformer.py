"""A small Vision Transformer on generated 16x16 images of four shapes (square, disc, cross,
diagonal). Patch embedding three ways (Conv2d with stride=patch, F.unfold + Linear,
Tensor.unfold + Linear) checked against each other; a learnable CLS token and positional
embedding; hand-written pre-norm blocks over F.scaled_dot_product_attention with stochastic
depth (torch.rand + floor, and bernoulli_), and a second model on nn.TransformerEncoder
(norm_first, gelu string and callable activation); nn.MultiheadAttention called directly with
bool/float attn_mask and key_padding_mask; mixup (Beta, randperm) with label smoothing; AdamW
param groups without decay on norms/biases; LinearLR + CosineAnnealingLR through SequentialLR;
clip_grad_norm_; a bfloat16 autocast forward; top-k accuracy; inference_mode; a state_dict
round trip through io.BytesIO; and typical mistakes."""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta

torch.manual_seed(0)
SIDE, PATCH, DIM, HEADS, CLASSES = 16, 4, 32, 4, 4
NAMES = ["square", "disc", "cross", "diagonal"]


def make_shapes(n, gen):
    """Noisy images holding one bright shape at a random place and size."""
    ys, xs = torch.meshgrid(torch.arange(float(SIDE)), torch.arange(float(SIDE)),
                            indexing="ij")
    labels = torch.randint(0, CLASSES, (n,), generator=gen)
    cy, cx = torch.randint(5, 11, (2, n, 1, 1), generator=gen).float()
    r = torch.randint(2, 5, (n, 1, 1), generator=gen).float()
    dy, dx = ys - cy, xs - cx
    square = (dy.abs() <= r) & (dx.abs() <= r)
    disc = dy**2 + dx**2 <= r**2
    cross = ((dy.abs() < 1) & (dx.abs() <= r)) | ((dx.abs() < 1) & (dy.abs() <= r))
    diag = ((dy - dx).abs() < 1) & (dy.abs() <= r)
    masks = torch.stack([square, disc, cross, diag], dim=1)
    noise = 0.2 * torch.randn(n, SIDE, SIDE, generator=gen)
    images = masks[torch.arange(n), labels].float() + noise
    return images.unsqueeze(1), labels


gen = torch.Generator().manual_seed(7)
images, labels = make_shapes(96, gen)
test_images, test_labels = make_shapes(32, gen)
print("images", images.shape, images.dtype, f"{images.mean():.4f} {images.std():.4f}")
print("labels", torch.bincount(labels, minlength=CLASSES).tolist())

# ---------------------------------------------------------------- patch embedding, three ways
conv = nn.Conv2d(1, DIM, kernel_size=PATCH, stride=PATCH)
by_conv = conv(images[:3]).flatten(2).transpose(1, 2)
lin = nn.Linear(PATCH * PATCH, DIM)
with torch.no_grad():
    lin.weight.copy_(conv.weight.reshape(DIM, -1))
    lin.bias.copy_(conv.bias)
cols = F.unfold(images[:3], kernel_size=PATCH, stride=PATCH)
by_unfold = lin(cols.transpose(1, 2))
tiles = images[:3].unfold(2, PATCH, PATCH).unfold(3, PATCH, PATCH)
print("tiles", tiles.shape, tiles.stride(), tiles.is_contiguous())
by_tiles = lin(tiles.reshape(3, -1, PATCH * PATCH))
print("patches", cols.shape, by_conv.shape, torch.allclose(by_conv, by_unfold, atol=1e-5),
      torch.allclose(by_unfold, by_tiles, atol=1e-5), f"{by_conv[1, 5, :3].tolist()[0]:.4f}")


class DropPath(nn.Module):
    """Stochastic depth: drop a whole residual branch per sample while training."""

    def __init__(self, p, use_floor=True):
        super().__init__()
        self.p, self.use_floor = p, use_floor

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1.0 - self.p
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        if self.use_floor:
            mask = (keep + torch.rand(shape, dtype=x.dtype, device=x.device)).floor_()
        else:
            mask = x.new_empty(shape).bernoulli_(keep)
        return x.div(keep) * mask

    def extra_repr(self):
        return f"p={self.p:.3f}"


class Attention(nn.Module):
    def __init__(self, dim, heads, drop=0.0):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} should be divisible by heads {heads}")
        self.heads, self.drop, self.scale = heads, drop, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.drop if self.training else 0.0,
                                             scale=self.scale)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim, heads, drop_path):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads, drop=0.1)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"),
                                 nn.Dropout(0.1), nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        x = x + self.drop_path(self.attn(self.norm1(x)))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class ViT(nn.Module):
    def __init__(self, depth=2, drop_path=0.2, encoder=False, activation="gelu"):
        super().__init__()
        self.patch_embed = nn.Conv2d(1, DIM, kernel_size=PATCH, stride=PATCH)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, DIM))
        self.pos_embed = nn.Parameter(torch.zeros(1, 1 + (SIDE // PATCH) ** 2, DIM))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.normal_(self.cls_token, std=1e-6)
        if encoder:
            layer = nn.TransformerEncoderLayer(DIM, HEADS, dim_feedforward=2 * DIM, dropout=0.1,
                                               activation=activation, batch_first=True,
                                               norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, depth, norm=nn.LayerNorm(DIM),
                                                enable_nested_tensor=False)
        else:
            rates = [r.item() for r in torch.linspace(0, drop_path, depth)]
            blocks = [Block(DIM, HEADS, r) for r in rates]
            self.blocks = nn.Sequential(*blocks, nn.LayerNorm(DIM, eps=1e-6))
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        return self.head(self.blocks(x)[:, 0])


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or name in ("cls_token", "pos_embed") else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def topk_accuracy(logits, target, ks=(1, 2)):
    top = logits.topk(max(ks), dim=1).indices
    hit = top.eq(target.unsqueeze(1))
    return [hit[:, :k].any(1).float().mean().item() for k in ks]


def train(model, epochs, tag):
    opt = torch.optim.AdamW(param_groups(model, 0.05), lr=3e-3, betas=(0.9, 0.98))
    steps = epochs * 3
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps - 2, eta_min=1e-4)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[2])
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    beta = Beta(torch.tensor(0.4), torch.tensor(0.4))
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(images))
        for i in range(0, len(images), 32):
            idx = order[i : i + 32]
            x, y = images[idx], labels[idx]
            lam = beta.sample()
            perm = torch.randperm(x.shape[0])
            logits = model(lam * x + (1 - lam) * x[perm])
            loss = lam * criterion(logits, y) + (1 - lam) * criterion(logits, y[perm])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            acc1, acc2 = topk_accuracy(model(test_images), test_labels)
        lrs = [f"{g['lr']:.6f}" for g in opt.param_groups]
        print(f"{tag} epoch {epoch} lam {lam:.4f} loss {loss.item():.4f} norm {norm:.4f} "
              f"lr {lrs} top1 {acc1:.4f} top2 {acc2:.4f}")
    print(tag, "groups", [len(g["params"]) for g in opt.param_groups],
          [g["weight_decay"] for g in opt.param_groups], sched.last_epoch)
    return model


vit = train(ViT(), 3, "blocks")
print(vit.blocks[1].drop_path, vit.blocks[0].drop_path)
enc = train(ViT(encoder=True), 2, "encoder")
gelu_fn = ViT(encoder=True, activation=F.gelu).eval()
gelu_str = ViT(encoder=True).eval()
gelu_fn.load_state_dict(gelu_str.state_dict())
with torch.no_grad():
    same = torch.allclose(gelu_fn(test_images[:4]), gelu_str(test_images[:4]), atol=1e-6)
print("callable gelu", same)

# ---------------------------------------------------------------- stochastic depth on its own
dp = DropPath(0.5, use_floor=False).train()
torch.manual_seed(3)
print("bernoulli drop", dp(torch.ones(6, 2, 2))[:, 0, 0])
dp.use_floor = True
print("floor drop", dp(torch.ones(6, 2, 2))[:, 0, 0], dp.eval()(torch.ones(2)).tolist())

# ---------------------------------------------------------------- attention, directly
sdpa = F.scaled_dot_product_attention
q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)
ref = torch.softmax(q @ k.transpose(-2, -1) / 8**0.5, dim=-1) @ v
plain = sdpa(q, k, v, dropout_p=0.0)
print("sdpa", plain.shape, torch.allclose(plain, ref, atol=1e-6))
qq = torch.randn(2, 4, 5, 8)
causal = sdpa(qq, qq, qq, is_causal=True)
tril = torch.ones(5, 5, dtype=torch.bool).tril()
print("causal", torch.allclose(causal, sdpa(qq, qq, qq, attn_mask=tril), atol=1e-6),
      f"{causal[0, 0, 0, :3].tolist()[1]:.4f}")
bias = torch.zeros(5, 5).masked_fill(~tril, float("-inf"))
print("float mask + scale", sdpa(q, k, v, attn_mask=bias, scale=0.5)[1, 2, 3, :4])
keep = torch.tensor([[True, False, True, True, True]])
both = sdpa(q, k, v, attn_mask=keep, is_causal=True)
print("causal and mask", torch.allclose(both, sdpa(q, k, v, attn_mask=tril & keep)),
      both[0, 1, 2, :3])
print("3-D math path", sdpa(q[0], k[0], v[0], attn_mask=bias.expand(4, 5, 5))[1, 4, :3])
qb, kb, vb = q.bfloat16(), k.bfloat16(), v.bfloat16()
print("bf16", sdpa(qb, kb, vb, is_causal=True)[1, 0, 4, :4], sdpa(qb[0], kb[0], vb[0])[2, 1, :4])
gqa = sdpa(q, k[:, :2], v[:, :1], enable_gqa=True)
print("grouped heads", gqa.shape, gqa[1, 3, 0, :3])

mha = nn.MultiheadAttention(DIM, HEADS, dropout=0.1, batch_first=True).eval()
tokens = vit.patch_embed(test_images[:2]).flatten(2).transpose(1, 2)[:, :6]
pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
out, w = mha(tokens, tokens, tokens, key_padding_mask=pad)
print("mha", out.shape, w.shape, w[1, :, 4:].abs().max().item(), f"{w[0, 0, 0]:.4f}")
out_h, w_h = mha(tokens, tokens, tokens, key_padding_mask=pad, average_attn_weights=False)
print("per head", w_h.shape, torch.allclose(w_h.mean(1), w, atol=1e-6))
bool_mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
float_mask = torch.zeros(6, 6).masked_fill(bool_mask, float("-inf"))
o_bool, _ = mha(tokens, tokens, tokens, attn_mask=bool_mask, need_weights=False)
o_float, none = mha(tokens, tokens, tokens, attn_mask=float_mask, need_weights=False)
print("bool vs float mask", torch.allclose(o_bool, o_float, atol=1e-6), none, o_bool[0, 2, :3])
per_head_mask = bool_mask.expand(2 * HEADS, 6, 6)
o_heads = mha(tokens, tokens, tokens, attn_mask=per_head_mask)[0]
print("3-D mask", torch.allclose(o_heads, o_bool, atol=1e-6))
cross = nn.MultiheadAttention(DIM, HEADS, kdim=16, vdim=8, add_bias_kv=True, add_zero_attn=True)
memory = torch.randn(7, 2, 16)
no_pad = torch.zeros(2, 7, dtype=torch.bool)
out_c, w_c = cross(tokens.transpose(0, 1), memory, memory[..., :8], key_padding_mask=no_pad)
out_c.sum().backward()
print("cross", out_c.shape, w_c.shape, w_c[1, 0, -3:], f"{cross.bias_k.grad.norm():.4f}")
single, w_s = cross(tokens[0], memory[:, 0], memory[:, 0, :8], attn_mask=torch.zeros(HEADS, 6, 7))
print("unbatched", single.shape, w_s.shape)

# ---------------------------------------------------------------- bfloat16 autocast, inference
with torch.autocast("cpu", dtype=torch.bfloat16):
    low = vit(test_images[:4])
    emb = vit.patch_embed(test_images[:4])
with torch.no_grad():
    full = vit(test_images[:4])
print("autocast", low.dtype, emb.dtype, low.requires_grad, (low.float() - full).abs().max() < 0.25)
# (1 decimal: float32 layer norms differ from torch's in their last bit, and the bfloat16
# rounding of the next products can turn that into a bfloat16 unit or two)
print("bf16 logits", [[round(v, 1) for v in row] for row in low[:2].tolist()])
with torch.inference_mode():
    logits = vit(test_images)
print("inference", logits.is_inference(), logits.requires_grad, logits.argmax(1)[:8].tolist())
print("predicted", [NAMES[i] for i in logits.argmax(1)[:3]])

# ---------------------------------------------------------------- state_dict through BytesIO
buf = io.BytesIO()
torch.save(vit.state_dict(), buf)
print("saved", len(list(vit.state_dict())), list(vit.state_dict())[:4])
buf.seek(0)
state = torch.load(buf, weights_only=True)
clone = ViT().eval()
print(clone.load_state_dict(state))
with torch.no_grad():
    same = torch.equal(clone(test_images), vit.eval()(test_images))
print("round trip", same, state["pos_embed"].shape)
state.pop("head.bias")
print(clone.load_state_dict(state, strict=False))

# ---------------------------------------------------------------- typical mistakes
attempts = {
    "heads": lambda: nn.MultiheadAttention(30, 4),
    "own heads": lambda: Attention(30, 4),
    "activation": lambda: nn.TransformerEncoderLayer(DIM, HEADS, activation="tanh"),
    "mask shape": lambda: mha(tokens, tokens, tokens, attn_mask=torch.zeros(5, 5)),
    "3-D mask shape": lambda: mha(tokens, tokens, tokens, attn_mask=torch.zeros(2, 6, 6)),
    "padding mask": lambda: mha(tokens, tokens, tokens, key_padding_mask=pad[:, :5]),
    "sdpa mask shape": lambda: sdpa(q, k, v, attn_mask=torch.ones(5, 4).bool()),
    "sdpa mask batch": lambda: sdpa(q, k, v, attn_mask=torch.zeros(3, 4, 5, 5)),
    "sdpa causal+mask": lambda: sdpa(q[0], k[0], v[0], attn_mask=tril, is_causal=True),
    "sdpa dtypes": lambda: sdpa(q, k.double(), v),
    "sdpa mask dtype": lambda: sdpa(q, k, v, attn_mask=torch.ones(5, 5).long()),
    "sdpa heads": lambda: sdpa(q[:, :3], k[:, :2], v[:, :2], enable_gqa=True),
    "4-D query": lambda: mha(tokens[None], tokens[None], tokens[None]),
    "unbatched mask": lambda: cross(tokens[0], memory[:, 0], memory[:, 0, :8],
                                    attn_mask=torch.zeros(2, 6, 7)),
    "int padding": lambda: mha(tokens, tokens, tokens, key_padding_mask=pad.long()),
    "channels": lambda: vit(torch.randn(2, 3, SIDE, SIDE)),
    "size mismatch": lambda: ViT(depth=1).load_state_dict(
        {**vit.state_dict(), "head.weight": torch.zeros(3, DIM)}),
    "smoothing": lambda: nn.CrossEntropyLoss(label_smoothing=1.5)(logits, test_labels),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "no error")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: {type(e).__name__}: " + str(e).replace("\n", " | "))
