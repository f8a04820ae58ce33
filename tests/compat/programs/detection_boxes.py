"""Object detection by hand, without torchvision: anchors from meshgrid (both indexings) and
float-step arange, box format conversions, box encoding/decoding with a clamped log scale,
pairwise IoU and GIoU by broadcasting, anchor matching with low-quality matches, NMS as a
loop and batched by class offsets, a tiny FPN head (Conv2d + GroupNorm + nearest upsampling)
trained with a sigmoid focal loss and smooth-L1 / Huber box losses under SGD + MultiStepLR,
post-processing (topk, unique, masked_select, clamping to the image), an ROI crop with
affine_grid + grid_sample, and mean average precision with cumsum / flip / cummax / trapz."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
IMAGE = 64
SCALE_CLAMP = math.log(1000.0 / 16)


def make_anchors(size, stride, scales):
    shifts = torch.arange(0.5, size, 1.0) * stride
    ys, xs = torch.meshgrid(shifts, shifts, indexing="ij")
    centres = torch.stack([xs.flatten(), ys.flatten()], dim=1)
    wh = torch.tensor(scales, dtype=torch.float32)
    centres = centres[:, None, :].expand(-1, len(scales), 2)
    wh = torch.stack([wh, wh], dim=1)[None].expand(centres.shape[0], -1, -1)
    return torch.cat([centres, wh], dim=2).reshape(-1, 4)


def cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def xyxy_to_cxcywh(b):
    x0, y0, x1, y1 = b.unbind(-1)
    return torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)


def box_iou(a, b):
    if a.shape[-1] != 4 or b.shape[-1] != 4:
        raise ValueError(f"boxes must be (N, 4), got {tuple(a.shape)} and {tuple(b.shape)}")
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=2)
    area_a, area_b = (a[:, 2:] - a[:, :2]).prod(1), (b[:, 2:] - b[:, :2]).prod(1)
    union = area_a[:, None] + area_b[None, :] - inter
    return inter / union, union


def generalized_iou(a, b):
    iou, union = box_iou(a, b)
    lt = torch.minimum(a[:, None, :2], b[None, :, :2])
    rb = torch.maximum(a[:, None, 2:], b[None, :, 2:])
    hull = (rb - lt).clamp(min=0).prod(dim=2)
    return iou - (hull - union) / hull


def encode(gt, anchors):
    g, a = xyxy_to_cxcywh(gt), xyxy_to_cxcywh(anchors)
    dxy = (g[:, :2] - a[:, :2]) / a[:, 2:]
    dwh = torch.log(g[:, 2:] / a[:, 2:])
    return torch.cat([dxy, dwh], dim=1)


def decode(deltas, anchors):
    a = xyxy_to_cxcywh(anchors)
    dwh = deltas[:, 2:].clamp(max=SCALE_CLAMP)
    cxcy = deltas[:, :2] * a[:, 2:] + a[:, :2]
    return cxcywh_to_xyxy(torch.cat([cxcy, torch.exp(dwh) * a[:, 2:]], dim=1))


def match(iou, high=0.5, low=0.4):
    best, idx = iou.max(dim=0)
    matches = torch.where(best < low, torch.full_like(idx, -1), idx)
    matches[(best >= low) & (best < high)] = -2
    gt_best, _ = iou.max(dim=1)
    gt_rows, anchor_cols = torch.nonzero(iou == gt_best[:, None], as_tuple=True)
    matches[anchor_cols] = idx[anchor_cols]
    return matches, gt_rows


def nms(boxes, scores, threshold):
    order = scores.argsort(descending=True)
    keep = []
    suppressed = torch.zeros(len(boxes), dtype=torch.bool)
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        overlap, _ = box_iou(boxes[i:i + 1], boxes)
        suppressed |= overlap[0] > threshold
    return torch.tensor(keep, dtype=torch.long)


def batched_nms(boxes, scores, labels, threshold):
    offsets = labels.to(boxes.dtype) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, threshold)


anchors = torch.cat([cxcywh_to_xyxy(make_anchors(8, 8.0, [8.0, 16.0])),
                     cxcywh_to_xyxy(make_anchors(4, 16.0, [16.0, 32.0]))])
print("anchors", anchors.shape, anchors.dtype, anchors[:3], anchors[-1])
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
print("xy meshgrid", gx.shape, gx.tolist(), gy.tolist())

gt = torch.tensor([[4.0, 6.0, 30.0, 28.0], [34.0, 30.0, 60.0, 62.0], [20.0, 40.0, 36.0, 52.0]])
gt_labels = torch.tensor([0, 1, 2])
print("cxcywh", xyxy_to_cxcywh(gt))
iou, _ = box_iou(gt, anchors)
giou = generalized_iou(gt, anchors[:6])
print("iou", iou.shape, f"{iou.max().item():.4f}", iou.argmax(dim=1))
print("giou", giou.round(decimals=4))
matches, gt_rows = match(iou)
print("positives", (matches >= 0).sum().item(), "ignored", (matches == -2).sum().item(),
      "gt rows", gt_rows.tolist())
pos = torch.nonzero(matches >= 0).squeeze(1)
print("padded", torch.nonzero_static(matches >= 0, size=6, fill_value=-1).flatten().tolist())
targets = encode(gt[matches[pos]], anchors[pos])
print("targets", targets.shape, targets[:2])
print("decoded back", torch.allclose(decode(targets, anchors[pos]), gt[matches[pos]], atol=1e-4))
print("clamped decode", decode(torch.tensor([[0.0, 0.0, 10.0, 10.0]]), anchors[:1]))


class Head(nn.Module):
    def __init__(self, num_classes=3, anchors_per_cell=2, ch=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, stride=8, padding=1), nn.ReLU())
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.lateral = nn.Conv2d(ch, ch, 1)
        self.tower = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.GroupNorm(4, ch),
                                   nn.ReLU(inplace=True))
        self.cls = nn.Conv2d(ch, anchors_per_cell * num_classes, 3, padding=1)
        self.box = nn.Conv2d(ch, anchors_per_cell * 4, 3, padding=1)
        nn.init.constant_(self.cls.bias, -math.log((1 - 0.01) / 0.01))
        self.num_classes = num_classes

    def forward(self, x):
        c8 = self.stem(x)
        c16 = self.down(c8)
        p8 = self.lateral(c8) + F.interpolate(c16, scale_factor=2, mode="nearest")
        logits, deltas = [], []
        for p in (p8, c16):
            t = self.tower(p)
            n = t.shape[0]
            logits.append(self.cls(t).permute(0, 2, 3, 1).reshape(n, -1, self.num_classes))
            deltas.append(self.box(t).permute(0, 2, 3, 1).reshape(n, -1, 4))
        return torch.cat(logits, 1), torch.cat(deltas, 1)


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    loss = ce * (1 - (p * targets + (1 - p) * (1 - targets))) ** gamma
    return (alpha * targets + (1 - alpha) * (1 - targets)) * loss


model = Head()
print(model.tower)
image = torch.rand(1, 3, IMAGE, IMAGE)
cls_target = torch.zeros(len(anchors), 3)
cls_target[pos, gt_labels[matches[pos]]] = 1.0
valid = matches != -2
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[4, 7], gamma=0.1)
for step in range(1, 10):
    logits, deltas = model(image)
    cls_loss = focal_loss(logits[0][valid], cls_target[valid]).sum() / max(1, len(pos))
    box_l1 = F.smooth_l1_loss(deltas[0, pos], targets, beta=1.0 / 9)
    box_hub = F.huber_loss(deltas[0, pos], targets, delta=0.5, reduction="sum") / len(pos)
    loss = cls_loss + box_l1 + 0.5 * box_hub
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"step {step} focal {cls_loss.item():.4f} sl1 {box_l1.item():.4f} "
          f"huber {box_hub.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")

with torch.no_grad():
    logits, deltas = model(image)
scores_all = logits[0].sigmoid()
scores, labels = scores_all.max(dim=1)
print("scores", scores.shape, scores.dtype, labels.dtype, f"{scores.mean().item():.4f}")
candidates = scores_all > 0.05
per_class, per_idx = scores_all.topk(6, dim=0)
order = per_class.flatten().argsort(descending=True)
top_scores, top_idx = per_class.flatten()[order], per_idx.flatten()[order]
top_labels = torch.arange(3).repeat(6)[order]
print("topk", top_scores[:6].round(decimals=4), top_idx[:8], candidates.sum(0).tolist())
boxes = decode(deltas[0, top_idx], anchors[top_idx])
boxes = boxes.clamp(min=torch.zeros(4), max=torch.full((4,), float(IMAGE)))
print("boxes in image", boxes.min().item() >= 0, boxes.max().item() <= IMAGE)
keep = batched_nms(boxes, top_scores, top_labels, 0.5)
print("kept", keep.tolist(), top_labels[keep].bincount(minlength=3).tolist())
print("plain nms", nms(boxes, top_scores, 0.3).tolist())
values, inverse, counts = torch.unique(top_labels, return_inverse=True, return_counts=True)
print("unique", values, inverse[:10], counts, torch.unique(top_idx, sorted=True).shape)
runs, run_counts = torch.unique_consecutive(top_labels.sort(stable=True).values,
                                            return_counts=True)
print("consecutive", runs, run_counts)
above = torch.masked_select(scores, scores > scores.median())
print("masked_select", above.shape, f"{above.sum().item():.4f}")
print("stable order", torch.tensor([0.9, 0.5, 0.9, 0.1, 0.5]).argsort(descending=True, stable=True))

# an ROI crop of the first ground-truth box with affine_grid / grid_sample
x0, y0, x1, y1 = (gt[0] / IMAGE * 2 - 1).tolist()
theta = torch.tensor([[[(x1 - x0) / 2, 0.0, (x1 + x0) / 2], [0.0, (y1 - y0) / 2, (y1 + y0) / 2]]])
for align in (True, False):
    grid = F.affine_grid(theta, (1, 3, 7, 7), align_corners=align)
    crop = F.grid_sample(image, grid, mode="bilinear", align_corners=align)
    print("roi", align, crop.shape, f"{crop.mean().item():.4f}", crop[0, 0, 0, :3])

# mean average precision over the three classes
det_scores = torch.tensor([0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4])
det_labels = torch.tensor([0, 0, 1, 2, 1, 0, 2, 2])
is_tp = torch.tensor([1, 0, 1, 1, 0, 1, 0, 1])
aps = []
for c in range(3):
    m = det_labels == c
    order = det_scores[m].argsort(descending=True)
    tp = is_tp[m][order].float()
    tp_cum, fp_cum = tp.cumsum(0), (1 - tp).cumsum(0)
    recall = tp_cum / max(1, int(tp.sum().item()))
    precision = tp_cum / (tp_cum + fp_cum)
    envelope = torch.flip(torch.cummax(torch.flip(precision, [0]), dim=0).values, [0])
    recall = torch.cat([torch.zeros(1), recall])
    envelope = torch.cat([envelope[:1], envelope])
    aps.append(torch.trapezoid(envelope, recall))
    print(f"class {c} precision {precision.tolist()} ap {aps[-1].item():.4f}")
print("mAP", torch.stack(aps).mean().round(decimals=4), torch.trapz(torch.tensor([1.0, 2.0])))

# mistakes a user makes
mistakes = [
    ("mismatched boxes", lambda: box_iou(gt, gt[:, :3])),
    ("grid shape", lambda: F.grid_sample(image, torch.zeros(1, 7, 7, 3))),
    ("meshgrid 2-D", lambda: torch.meshgrid(gt, gt, indexing="ij")),
    ("topk too large", lambda: scores.topk(len(scores) + 1)),
    ("meshgrid indexing", lambda: torch.meshgrid(gt[0], gt[1], indexing="yx")),
    ("interpolate args", lambda: F.interpolate(image, size=8, scale_factor=2)),
    ("cummax dim", lambda: torch.cummax(gt, dim=2)),
    ("recall length", lambda: torch.trapezoid(torch.ones(3), torch.ones(4))),
    ("grid dtype", lambda: F.grid_sample(image, grid.double(), align_corners=False)),
    ("theta shape", lambda: F.affine_grid(theta[:, :1], (1, 3, 7, 7), align_corners=False)),
]
for name, fn in mistakes:
    try:
        fn()
        print(name, "no error")
    except Exception as e:
        print(name, type(e).__name__, str(e).splitlines()[0])
