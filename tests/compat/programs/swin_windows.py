"""A small Swin Transformer written the way the paper's reference code and timm write it:
Conv2d patch embedding; window partition / reverse with view + permute + contiguous; shifted
windows by torch.roll with the attention mask built by slicing an img_mask and
masked_fill(-100.0); a relative position bias table indexed by a buffer built from
torch.meshgrid(indexing="ij") / flatten / permute / sum(-1) and registered with
persistent=False; DropPath through x.new_empty(...).bernoulli_; patch merging with strided
slices and torch.cat; trunc_normal_ init via model.apply; AdamW with parameter groups chosen by
name; linear warmup then cosine decay (LambdaLR, and LinearLR + CosineAnnealingLR through
SequentialLR); label-smoothing cross-entropy; a few training steps on random 32x32 images,
eval with top-k accuracy, a state_dict round trip and parameter counts."""

import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
IMG, PATCH, WINDOW, CLASSES = 32, 4, 4, 5


# ------------------------------------------------------------------- window helpers
def window_partition(x, ws):
    """(B, H, W, C) -> (B * nW, ws, ws, C)"""
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows, ws, h, w):
    """(B * nW, ws, ws, C) -> (B, H, W, C)"""
    b = int(windows.shape[0] / (h * w / ws / ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


x = torch.arange(2 * 8 * 8 * 3, dtype=torch.float32).view(2, 8, 8, 3)
wins = window_partition(x, 4)
print("partition", wins.shape, wins.is_contiguous(), wins[1, 0, :, 0].tolist())
back = window_reverse(wins, 4, 8, 8)
print("reverse", back.shape, torch.equal(back, x))
perm = x.view(2, 2, 4, 2, 4, 3).permute(0, 1, 3, 2, 4, 5)
print("permuted", perm.is_contiguous(), perm.stride())
try:
    perm.view(-1, 4, 4, 3)
except RuntimeError as e:
    print("view error:", str(e).split(".")[0])

# ------------------------------------------------------------------- torch.roll
r = torch.arange(16).view(4, 4)
print("roll", torch.roll(r, shifts=(-1, -1), dims=(0, 1))[0].tolist(),
      torch.roll(r, 2)[0].tolist(), r.roll(-3, 1)[:, 0].tolist(),
      torch.roll(r, shifts=(1, -2), dims=(1, 0))[:, 0].tolist())
print("roll back", torch.equal(torch.roll(torch.roll(x, (-2, -2), (1, 2)), (2, 2), (1, 2)), x))


# ------------------------------------------------------------------- shifted-window mask
def shift_mask(h, w, ws, shift):
    img_mask = torch.zeros((1, h, w, 1))
    slices = (slice(0, -ws), slice(-ws, -shift), slice(-shift, None))
    cnt = 0
    for hs in slices:
        for wsl in slices:
            img_mask[:, hs, wsl, :] = cnt
            cnt += 1
    mask_windows = window_partition(img_mask, ws).view(-1, ws * ws)
    attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
    attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0)
    return attn_mask.masked_fill(attn_mask == 0, 0.0), img_mask


mask, img_mask = shift_mask(8, 8, 4, 2)
print("img_mask", img_mask[0, :, :, 0][::2].tolist())
print("mask", mask.shape, mask.dtype, (mask == -100).sum().item(),
      [(m == 0).sum().item() for m in mask], mask[3, 0, :6].tolist())


# ------------------------------------------------------------------- relative position index
def relative_position_index(ws):
    coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij"))
    coords_flat = torch.flatten(coords, 1)
    rel = coords_flat[:, :, None] - coords_flat[:, None, :]
    rel = rel.permute(1, 2, 0).contiguous()
    rel[:, :, 0] += ws - 1
    rel[:, :, 1] += ws - 1
    rel[:, :, 0] *= 2 * ws - 1
    return rel.sum(-1)


idx = relative_position_index(3)
print("rel index", idx.shape, idx.dtype, idx[0].tolist(), idx.max().item(),
      torch.unique(idx).numel())
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
print("meshgrid xy", gx.shape, gx.tolist(), gy.tolist())


# ------------------------------------------------------------------- modules
class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = x.new_empty(shape).bernoulli_(keep)
        if keep > 0.0 and self.scale_by_keep:
            random_tensor.div_(keep)
        return x * random_tensor

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"


class Mlp(nn.Module):
    def __init__(self, dim, hidden, drop=0.0):
        super().__init__()
        self.fc1, self.act = nn.Linear(dim, hidden), nn.GELU()
        self.fc2, self.drop = nn.Linear(hidden, dim), nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class WindowAttention(nn.Module):
    fused_attn: torch.jit.Final[bool]

    def __init__(self, dim, ws, heads, attn_drop=0.0):
        super().__init__()
        self.ws, self.heads, self.fused_attn = ws, heads, False
        self.scale = (dim // heads) ** -0.5
        self.relative_position_bias_table = nn.Parameter(torch.zeros((2 * ws - 1) ** 2, heads))
        self.register_buffer("relative_position_index", relative_position_index(ws),
                             persistent=False)
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x, mask=None):
        b_, n, c = x.shape
        qkv = self.qkv(x).reshape(b_, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        bias = bias.view(n, n, -1).permute(2, 0, 1).contiguous().unsqueeze(0)
        if self.fused_attn:
            if mask is not None:
                nw = mask.shape[0]
                mask = mask.view(1, nw, 1, n, n).expand(b_ // nw, -1, self.heads, -1, -1)
                bias = bias + mask.reshape(-1, self.heads, n, n)
            x = F.scaled_dot_product_attention(
                q, k, v, attn_mask=bias, dropout_p=self.attn_drop.p if self.training else 0.0)
            return self.proj(x.transpose(1, 2).reshape(b_, n, c))
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn + bias
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(b_ // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        attn = self.attn_drop(self.softmax(attn))
        return self.proj((attn @ v).transpose(1, 2).reshape(b_, n, c))


class SwinBlock(nn.Module):
    def __init__(self, dim, res, heads, ws, shift, drop_path):
        super().__init__()
        self.res, self.ws, self.shift = res, ws, shift
        if min(res) <= ws:
            self.shift, self.ws = 0, min(res)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, self.ws, heads, attn_drop=0.1)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 2 * dim, drop=0.1)
        attn_mask = shift_mask(*res, self.ws, self.shift)[0] if self.shift > 0 else None
        self.register_buffer("attn_mask", attn_mask, persistent=False)

    def forward(self, x):
        h, w = self.res
        b, l, c = x.shape
        shortcut = x
        x = self.norm1(x).view(b, h, w, c)
        if self.shift > 0:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        x_windows = window_partition(x, self.ws).view(-1, self.ws * self.ws, c)
        attn_windows = self.attn(x_windows, mask=self.attn_mask).view(-1, self.ws, self.ws, c)
        x = window_reverse(attn_windows, self.ws, h, w)
        if self.shift > 0:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + self.drop_path(x.view(b, h * w, c))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchMerging(nn.Module):
    def __init__(self, res, dim):
        super().__init__()
        self.res = res
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x):
        h, w = self.res
        b, l, c = x.shape
        assert l == h * w, "input feature has wrong size"
        x = x.view(b, h, w, c)
        x0, x1 = x[:, 0::2, 0::2, :], x[:, 1::2, 0::2, :]
        x2, x3 = x[:, 0::2, 1::2, :], x[:, 1::2, 1::2, :]
        x = torch.cat([x0, x1, x2, x3], -1).view(b, -1, 4 * c)
        return self.reduction(self.norm(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch, in_chans, dim):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(self.proj(x).flatten(2).transpose(1, 2))


class Swin(nn.Module):
    def __init__(self, dim=16, depths=(2, 2), heads=(2, 4), drop_path_rate=0.2):
        super().__init__()
        self.patch_embed = PatchEmbed(PATCH, 3, dim)
        res = IMG // PATCH
        dpr = [v.item() for v in torch.linspace(0, drop_path_rate, sum(depths))]
        self.layers = nn.ModuleList()
        for i, (depth, nh) in enumerate(zip(depths, heads)):
            blocks = [SwinBlock(dim, (res, res), nh, WINDOW, 0 if j % 2 == 0 else WINDOW // 2,
                                dpr[sum(depths[:i]) + j]) for j in range(depth)]
            if i < len(depths) - 1:
                blocks.append(PatchMerging((res, res), dim))
                dim, res = dim * 2, res // 2
            self.layers.append(nn.Sequential(*blocks))
        self.norm = nn.LayerNorm(dim)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(dim, CLASSES)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, x):
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        x = torch.flatten(self.avgpool(x.transpose(1, 2)), 1)
        return self.head(x)


model = Swin()
n_params = sum(p.numel() for p in model.parameters())
n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("params", n_params, n_train, len(list(model.parameters())), len(list(model.buffers())))
print(model.layers[0][1])
print(model.layers[0][1].drop_path, model.layers[1][1].drop_path, model.layers[0][0].drop_path)
print("shift", [(b.shift, b.ws) for layer in model.layers for b in layer
                 if isinstance(b, SwinBlock)])
blk = model.layers[0][1]
print("block mask", blk.attn_mask.shape, int((blk.attn_mask == -100.0).sum()),
      blk.attn.relative_position_index.shape)
print("bias table", model.layers[0][0].attn.relative_position_bias_table.shape,
      f"{model.layers[0][0].attn.relative_position_bias_table.std():.4f}")
w = model.head.weight
print("trunc_normal", f"{w.abs().max():.5f}", bool((w.abs() <= 2.0).all()), f"{w.std():.5f}")


# ------------------------------------------------------------------- optimizer and schedule
def param_groups(model, weight_decay=0.05, skip=("relative_position_bias_table",)):
    decay, no_decay, names = [], [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim == 1 or name.endswith(".bias") or any(s in name for s in skip):
            no_decay.append(p)
            names.append(name)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}], names


groups, no_decay_names = param_groups(model)
print("no decay", len(no_decay_names), no_decay_names[:4])
opt = torch.optim.AdamW(groups, lr=2e-3, betas=(0.9, 0.999), eps=1e-8)
print(opt)
STEPS, WARM = 8, 3


def warmup_cosine(step):
    if step < WARM:
        return (step + 1) / WARM
    progress = (step - WARM) / max(1, STEPS - WARM)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=warmup_cosine)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
images = torch.randn(16, 3, IMG, IMG)
labels = torch.randint(0, CLASSES, (16,))
out = model(images[:2])
print("logits", out.shape, out.dtype, out.grad_fn.name(), [f"{v:.5f}" for v in out[0].tolist()])

for step in range(STEPS):
    model.train()
    idx = torch.randperm(16)[:8]
    logits = model(images[idx])
    loss = criterion(logits, labels[idx])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
    opt.step()
    lr = sched.get_last_lr()
    sched.step()
    print(f"step {step} loss {loss.item():.4f} norm {norm.item():.4f} lr {lr[0]:.6f} "
          f"{lr[1]:.6f}")

table = model.layers[0][0].attn.relative_position_bias_table
print("table grad", table.grad.shape, f"{table.grad.abs().sum():.5f}",
      opt.state[table]["step"].item(), sorted(opt.state[table].keys()))


# ------------------------------------------------------------------- eval and top-k
def topk_accuracy(output, target, topk=(1, 3)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


model.eval()
with torch.no_grad():
    logits = model(images)
    eval_loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    plain = F.cross_entropy(logits, labels)
top1, top3 = topk_accuracy(logits, labels)
print(f"eval loss {eval_loss:.4f} plain {plain:.4f} top1 {top1.item():.2f} top3 {top3.item():.2f}")
print("pred", logits.argmax(-1).tolist())
with torch.no_grad():
    again = model(images[:4])
print("eval deterministic", torch.allclose(again, logits[:4], atol=1e-6))
for m in model.modules():
    if isinstance(m, WindowAttention):
        m.fused_attn = True
with torch.no_grad():
    fused = model(images[:4])
for m in model.modules():
    if isinstance(m, WindowAttention):
        m.fused_attn = False
print("fused sdpa", torch.allclose(fused, again, atol=1e-5))

# ------------------------------------------------------------------- SequentialLR variant
model.zero_grad(set_to_none=True)
opt2 = torch.optim.AdamW(param_groups(model)[0], lr=1e-3)
warm = torch.optim.lr_scheduler.LinearLR(opt2, start_factor=0.01, end_factor=1.0, total_iters=2)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4, eta_min=1e-5)
seq = torch.optim.lr_scheduler.SequentialLR(opt2, schedulers=[warm, cos], milestones=[2])
lrs = []
for _ in range(6):
    opt2.step()
    seq.step()
    lrs.append(f"{opt2.param_groups[0]['lr']:.6f}")
print("sequential", lrs, seq.last_epoch, [g["initial_lr"] for g in opt2.param_groups])
print("sched state", sorted(seq.state_dict().keys()), sched.state_dict()["last_epoch"],
      sched.state_dict()["_last_lr"][0] == opt.param_groups[0]["lr"])

# ------------------------------------------------------------------- state_dict round trip
sd = model.state_dict()
print("state keys", len(sd), list(sd)[:5])
print("index absent", any("relative_position_index" in k for k in sd),
      any("attn_mask" in k for k in sd), len(list(model.named_buffers())))
print("shapes", [(k, tuple(v.shape)) for k, v in sd.items() if "layers.1.0" in k][:6])
buf = io.BytesIO()
torch.save(sd, buf)
buf.seek(0)
fresh = Swin()
result = fresh.load_state_dict(torch.load(buf, weights_only=True))
print("load", result.missing_keys, result.unexpected_keys)
fresh.eval()
with torch.no_grad():
    print("round trip", torch.equal(fresh(images[:4]), again))
bad = dict(sd)
bad["head.weight"] = bad["head.weight"][:, :4]
try:
    fresh.load_state_dict(bad)
except RuntimeError as e:
    print("mismatch:", str(e).splitlines()[1].strip()[:90])
try:
    PatchMerging((8, 8), 16)(torch.randn(1, 60, 16))
except AssertionError as e:
    print("assert:", e)
try:  # pooling the (B, H, W, C) map instead of the (B, C, L) tokens
    model.avgpool(torch.randn(2, 4, 4, 32))
except RuntimeError as e:
    print("pool:", e)
print("pooled", model.avgpool(torch.ones(2, 32, 0)).isnan().all().item(),
      F.adaptive_avg_pool2d(torch.ones(3, 0, 2), 1).shape)
tokens = torch.arange(2 * 16 * 32, dtype=torch.float32).view(2, 16, 32).requires_grad_()
pooled = model.avgpool(tokens.transpose(1, 2))
print("pooled tokens", pooled.shape, pooled.stride(), pooled.grad_fn.name(),
      F.avg_pool1d(tokens.transpose(1, 2), 4).stride(),
      F.adaptive_max_pool1d(tokens.transpose(1, 2), 2).stride())

# ------------------------------------------------------------------- named parameter groups
named = [(n, p) for n, p in model.named_parameters() if "relative_position" in n]
rest = [(n, p) for n, p in model.named_parameters() if "relative_position" not in n]
opt3 = torch.optim.AdamW([{"params": rest}, {"params": named, "weight_decay": 0.0}], lr=1e-3)
print("named groups", [len(g["param_names"]) for g in opt3.param_groups],
      opt3.param_groups[1]["param_names"], opt3.state_dict()["param_groups"][1]["params"])
