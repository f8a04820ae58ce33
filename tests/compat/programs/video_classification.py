"""A tiny video classifier on synthetic clips (a square moving left/right/up/down), built the
way video tutorials build them: 3-d convolutions, (2+1)-d factorised blocks, temporal shift,
channels_last_3d, 3-d pooling/unpooling, trilinear resizing, a 3-d affine jitter, SGD with
Nesterov under OneCycleLR, label smoothing and top-k accuracy."""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

T, H, W = 6, 12, 12
DIRECTIONS = ["right", "left", "down", "up"]


def make_clips(n: int):
    """Clips (n, 1, T, H, W) of a 3x3 square moving one pixel a frame; label = direction."""
    clips = torch.randn(n, 1, T, H, W) * 0.2
    labels = torch.randint(0, 4, (n,))
    starts = torch.randint(3, 7, (n, 2))
    steps = torch.tensor([[0, 1], [0, -1], [1, 0], [-1, 0]])
    for i in range(n):
        r, c = starts[i].tolist()
        dr, dc = steps[labels[i]].tolist()
        for t in range(T):
            rr, cc = r + dr * t // 2, c + dc * t // 2
            clips[i, 0, t, rr:rr + 3, cc:cc + 3] += 1.0
    return clips, labels


clips, labels = make_clips(96)
test_clips, test_labels = make_clips(16)
print(clips.shape, clips.dtype, labels[:12].tolist())
print(f"mean {clips.mean().item():.5f} std {clips.std().item():.5f}")
print([DIRECTIONS[k] for k in labels[:4]])

# --- Conv3d options -----------------------------------------------------------------------
x = clips[:2]
for kwargs in [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=(1, 3, 3), padding=(0, 1, 1)),
               dict(kernel_size=3, dilation=2, padding=2), dict(kernel_size=3, padding="same"),
               dict(kernel_size=(2, 3, 3), padding="valid"),
               dict(kernel_size=3, padding=1, padding_mode="replicate"),
               dict(kernel_size=3, padding=1, padding_mode="circular"),
               dict(kernel_size=(3, 2, 2), stride=(1, 2, 2), bias=False)]:
    torch.manual_seed(1)
    conv = nn.Conv3d(1, 4, **kwargs)
    y = conv(x)
    print(kwargs, tuple(y.shape), f"{y.sum().item():.4f}", f"{y.abs().max().item():.4f}")
grouped = nn.Conv3d(4, 8, 3, padding=1, groups=2, bias=False)
print(grouped, grouped.weight.shape, f"{grouped(torch.randn(1, 4, 3, 5, 5)).std().item():.4f}")
depthwise = nn.Conv3d(4, 4, (3, 1, 1), padding=(1, 0, 0), groups=4)
print(depthwise.weight.shape, depthwise(torch.randn(1, 4, 3, 5, 5)).shape)
dilated_same = nn.Conv3d(2, 3, 3, padding="same", dilation=(1, 2, 2))
print(dilated_same(torch.randn(1, 2, 4, 7, 7)).shape)
z = F.conv3d(torch.ones(1, 1, 3, 4, 4), torch.ones(1, 1, 2, 2, 2), stride=1)
print(z[0, 0, 0])

# --- BatchNorm3d, GroupNorm, InstanceNorm3d -----------------------------------------------
feats = torch.randn(4, 3, 2, 3, 3) * 2 + 1
bn = nn.BatchNorm3d(3)
bn(feats)
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn_cma = nn.BatchNorm3d(3, momentum=None)
for k in range(3):
    bn_cma(feats + k)
print(bn_cma.running_mean, bn_cma.num_batches_tracked)
bn_cma.eval()
print(f"{bn_cma(feats).mean().item():.5f}")
bn_free = nn.BatchNorm3d(3, track_running_stats=False, affine=False)
bn_free.eval()
out = bn_free(feats)
print(bn_free.running_mean, out.mean(dim=(0, 2, 3, 4)).abs().max() < 1e-5,
      f"{out.var(dim=(0, 2, 3, 4), unbiased=False).mean().item():.4f}")
gn = nn.GroupNorm(3, 6)
g = gn(torch.randn(2, 6, 2, 3, 3))
print(gn, g.shape, g[0, :2].mean().abs().item() < 1e-6,
      f"{g[0, :2].std(unbiased=False).item():.5f}")
inorm = nn.InstanceNorm3d(3, affine=True, track_running_stats=True)
i_out = inorm(feats)
print(inorm, f"{i_out[1, 2].mean().item():.5f}", inorm.running_mean, inorm.running_var)
inorm.eval()
print(f"{inorm(feats).mean().item():.5f}")

# --- pooling and unpooling ----------------------------------------------------------------
vol = torch.arange(2 * 4 * 5 * 5, dtype=torch.float32).reshape(1, 2, 4, 5, 5)
pool = nn.MaxPool3d(2, stride=2, return_indices=True)
pooled, idx = pool(vol)
print(pooled.shape, idx[0, 0].flatten().tolist())
pool_ceil = nn.MaxPool3d(2, stride=2, ceil_mode=True, return_indices=True)
pooled_c, idx_c = pool_ceil(vol)
print(pooled_c.shape, idx_c[0, 1, -1].tolist())
unpool = nn.MaxUnpool3d(2, stride=2)
restored = unpool(pooled, idx, output_size=vol.shape)
print(restored.shape, int((restored != 0).sum()), restored[0, 0, 1, 1].tolist())
print(nn.AvgPool3d((1, 2, 2))(vol)[0, 0, 0])
print(nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False)(vol)[0, 1, 1])
print(F.avg_pool3d(vol, 2, ceil_mode=True, divisor_override=3).shape)
print(nn.AdaptiveAvgPool3d((1, 2, 2))(vol)[0, 0, 0])
amax, aidx = nn.AdaptiveMaxPool3d((2, None, 1), return_indices=True)(vol)
print(amax.shape, amax[0, 0].flatten().tolist(), aidx[0, 0].flatten().tolist())
print(F.adaptive_avg_pool3d(vol, 1).flatten())

# --- ConvTranspose3d ----------------------------------------------------------------------
torch.manual_seed(2)
up = nn.ConvTranspose3d(2, 1, 3, stride=2, padding=1, output_padding=1)
print(up(vol).shape, f"{up(vol).mean().item():.4f}")
up2 = nn.ConvTranspose3d(2, 2, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2)
print(up2(vol, output_size=[4, 10, 10]).shape, up2(vol, output_size=[1, 2, 4, 9, 9]).shape)
print(F.conv_transpose3d(torch.ones(1, 1, 1, 2, 2), torch.ones(1, 1, 2, 2, 2), stride=2)[0, 0, 1])

# --- interpolate on 5-d input -------------------------------------------------------------
small = torch.arange(8, dtype=torch.float32).reshape(1, 1, 2, 2, 2)
print(F.interpolate(small, scale_factor=2, mode="trilinear", align_corners=True)[0, 0, 1])
print(F.interpolate(small, scale_factor=2, mode="trilinear", align_corners=False)[0, 0, 1])
print(F.interpolate(small, size=(3, 3, 3), mode="nearest")[0, 0, 2])
print(F.interpolate(small, scale_factor=(1, 1.5, 2), mode="nearest").shape)
r = F.interpolate(small, scale_factor=(1.0, 1.7, 1.7), mode="trilinear",
                  recompute_scale_factor=True)
print(r.shape, f"{r.sum().item():.4f}")
r2 = F.interpolate(small, scale_factor=(1.0, 1.7, 1.7), mode="trilinear")
print(r2.shape, [f"{v:.5f}" for v in r2[0, 0, 0, 1].tolist()])
print(nn.Upsample(scale_factor=(1, 2, 2), mode="nearest")(small).shape)

# --- clip windows, temporal shift, channels_last_3d ---------------------------------------
long_clip = torch.arange(20, dtype=torch.float32).reshape(1, 1, 20, 1, 1).expand(1, 1, 20, 2, 2)
windows = long_clip.unfold(2, 8, 4)
print(windows.shape, windows[0, 0, :, 0, 0].tolist())
feat = torch.arange(2 * 4 * 3, dtype=torch.float32).reshape(1, 4, 3, 1, 2)


def temporal_shift(x, fold_div=4):
    """TSM: move a quarter of the channels one frame back, a quarter one frame forward."""
    fold = x.shape[1] // fold_div
    out = torch.zeros_like(x)
    out[:, :fold, :-1] = x[:, :fold, 1:]
    out[:, fold:2 * fold, 1:] = x[:, fold:2 * fold, :-1]
    out[:, 2 * fold:] = x[:, 2 * fold:]
    return out


print(temporal_shift(feat)[0, :, :, 0, 0].tolist())
print(torch.roll(feat, shifts=1, dims=2)[0, 0, :, 0].tolist())
print(torch.roll(feat, shifts=(1, -1), dims=(1, 2))[0, :, 0, 0, 0].tolist())
cl = clips[:2].contiguous(memory_format=torch.channels_last_3d)
print(cl.stride(), cl.is_contiguous(), cl.is_contiguous(memory_format=torch.channels_last_3d))
net_in = torch.randn(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d)
print(net_in.stride(), net_in.is_contiguous(memory_format=torch.channels_last_3d))
print(torch.empty(1, 2, 1, 3, 3, memory_format=torch.channels_last_3d).stride())
print(F.interpolate(net_in, scale_factor=(1, 2, 2), mode="trilinear").stride(),
      F.interpolate(net_in, scale_factor=2, mode="nearest").is_contiguous())
print(torch.roll(net_in, 1, dims=2).stride(), torch.roll(net_in, 0, dims=2).stride())
print(F.pad(net_in, (1, 1, 1, 1, 0, 0), mode="replicate").stride(), F.pad(net_in, (1, 1)).stride())
noise = torch.randn_like(clips[:1], memory_format=torch.channels_last_3d)
print(noise.stride(), f"{noise.std().item():.5f}")
cl_out = nn.Conv3d(3, 2, 1)(net_in)
print(cl_out.shape, torch.allclose(cl_out, nn.Conv3d(3, 2, 1)(net_in.contiguous()), atol=10))

# --- 3-d affine jitter with affine_grid / grid_sample -------------------------------------
theta = torch.tensor([[[1.0, 0.0, 0.0, 0.1], [0.0, 1.0, 0.0, -0.2], [0.0, 0.0, 1.0, 0.0]]])
grid = F.affine_grid(theta, [1, 1, 2, 3, 3], align_corners=False)
print(grid.shape, grid[0, 0, 0].tolist())
jit = F.grid_sample(vol[:, :1, :2, :3, :3], grid, align_corners=False)
print(jit.shape, f"{jit.sum().item():.4f}")
grid_t = F.affine_grid(theta, [1, 1, 2, 3, 3], align_corners=True)
jit2 = F.grid_sample(vol[:, :1, :2, :3, :3], grid_t, mode="nearest", padding_mode="border",
                     align_corners=True)
print(jit2[0, 0].flatten().tolist())


def jitter(batch, gen_scale=0.05):
    """Random small 3-d affine jitter of a clip batch (time, height, width)."""
    n = batch.shape[0]
    eye = torch.eye(3, 4).unsqueeze(0).repeat(n, 1, 1)
    noise = torch.randn(n, 3, 4) * gen_scale
    noise[:, 0, :] = 0  # keep time steps in place
    grid = F.affine_grid(eye + noise, list(batch.shape), align_corners=False)
    return F.grid_sample(batch, grid, padding_mode="zeros", align_corners=False)


print(f"{(jitter(clips[:4]) - clips[:4]).abs().mean().item():.4f}")


# --- the model ----------------------------------------------------------------------------
class R2Plus1D(nn.Module):
    """A (2+1)-d block: a spatial (1, k, k) conv, then a temporal (k, 1, 1) conv."""

    def __init__(self, cin, cout, mid):
        super().__init__()
        self.spatial = nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1), bias=False)
        self.bn = nn.BatchNorm3d(mid)
        self.temporal = nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0), bias=False)

    def forward(self, x):
        return self.temporal(F.relu(self.bn(self.spatial(x))))


class VideoNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.stem = nn.Conv3d(1, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm3d(4)
        self.block = R2Plus1D(4, 8, 6)
        self.norm = nn.GroupNorm(2, 8)
        self.pool = nn.MaxPool3d((1, 2, 2))
        self.drop = nn.Dropout3d(0.1)
        self.head_pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.stem(x))))
        x = self.drop(F.relu(self.norm(self.block(x))))
        return self.fc(torch.flatten(self.head_pool(x), 1))


torch.manual_seed(3)
model = VideoNet()
print(model)
for name, module in model.named_children():
    print(f"{name:10s} {sum(p.numel() for p in module.parameters()):5d}")
print("total", sum(p.numel() for p in model.parameters() if p.requires_grad))
d3 = nn.Dropout3d(0.5)
mask = d3(torch.ones(2, 4, 1, 2, 2))
print(mask[:, :, 0, 0, 0].tolist())

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                            weight_decay=1e-4)
epochs, batch = 5, 16
steps = epochs * (len(clips) // batch)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, total_steps=steps)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
step = 0
for epoch in range(epochs):
    model.train()
    order = torch.randperm(len(clips))
    for b in range(0, len(clips), batch):
        sel = order[b:b + batch]
        data = jitter(clips[sel], 0.02)
        loss = criterion(model(data), labels[sel])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        if step % 6 == 1:
            lr = scheduler.get_last_lr()[0]
            print(f"epoch {epoch} step {step:2d} loss {loss.item():.4f} lr {lr:.5f}")
    model.eval()
    with torch.no_grad():
        logits = model(test_clips)
        top2 = logits.topk(2, dim=1).indices
        top1_acc = logits.argmax(1).eq(test_labels).float().mean().item()
        top2_acc = top2.eq(test_labels[:, None]).any(dim=1).float().mean().item()
    print(f"epoch {epoch} top1 {top1_acc:.4f} top2 {top2_acc:.4f} "
          f"val {F.cross_entropy(logits, test_labels).item():.4f}")
print(logits.requires_grad, loss.grad_fn.__class__.__name__)
print(model.bn1.running_mean, model.bn1.num_batches_tracked)

buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
state = torch.load(buffer)
print(list(state.keys())[:6], len(state))
clone = VideoNet()
print(clone.load_state_dict(state))
clone.eval()
with torch.no_grad():
    print(torch.equal(clone(test_clips), logits))

# --- typical mistakes ---------------------------------------------------------------------
mistakes = [
    ("4-d input to Conv3d (unbatched)", lambda: nn.Conv3d(1, 2, 3)(torch.randn(1, 6, 12, 12))),
    ("3-d input to Conv3d", lambda: nn.Conv3d(1, 2, 3)(torch.randn(6, 12, 12))),
    ("wrong channels", lambda: nn.Conv3d(3, 2, 3)(clips[:1])),
    ("groups", lambda: nn.Conv3d(6, 4, 3, groups=4)),
    ("output_size", lambda: up(vol, output_size=[20, 20, 20])),
    ("unpool indices", lambda: unpool(pooled, idx[:, :, :1])),
    ("channels_last_3d on 4-d", lambda: torch.randn(2, 3, 4, 4).contiguous(
        memory_format=torch.channels_last_3d)),
    ("kernel larger than input", lambda: F.conv3d(torch.randn(1, 1, 2, 2, 2),
                                                   torch.randn(1, 1, 3, 3, 3))),
    ("pool kernel too big", lambda: F.max_pool3d(torch.randn(1, 1, 2, 2, 2), 3)),
    ("padding same with stride", lambda: nn.Conv3d(1, 1, 3, stride=2, padding="same")),
    ("trilinear on 4-d", lambda: F.interpolate(torch.randn(1, 1, 4, 4), scale_factor=2,
                                               mode="trilinear")),
]
for what, fn in mistakes:
    try:
        fn()
        print(what, "-> no error")
    except Exception as e:  # noqa: BLE001
        print(f"{what}: {type(e).__name__}: {e}")
