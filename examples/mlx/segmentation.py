"""Semantic segmentation with a small U-Net, in the shape of MLX's examples.

The data are 16x16 three-channel images of discs and squares on a noisy background, drawn with
`mx` ops from seeded keys (NHWC). A U-Net with dilated and grouped `nn.Conv2d`, `nn.MaxPool2d` /
`nn.AvgPool2d` on the way down, `nn.ConvTranspose2d` and `nn.Upsample` on the way up, skip
connections by `mx.concatenate(axis=-1)` and GroupNorm / InstanceNorm / BatchNorm learns a
per-pixel mask of three classes (background, disc, square) with a dice + focal + binary
cross-entropy loss. It trains with AdamW eagerly, then as a compiled step; per-class IoU and
the predicted masks (as characters) follow, then the layers' shapes on odd sizes and typical
mistakes. Run on ember with `python -m ember.run segmentation.py`.
"""

from functools import partial

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SIZE, CLASSES = 16, 3


def make_images(key, n):
    """`n` images (n, 16, 16, 3) with one disc and one square each, and their class maps."""
    kc, kr, ks, kn = mx.random.split(key, 4)
    centers = mx.random.randint(3, SIZE - 3, (n, 2, 2), key=kc)
    radius = mx.random.uniform(2.0, 3.5, (n,), key=kr)
    side = mx.random.randint(2, 4, (n,), key=ks)
    ys = mx.arange(SIZE)[None, :, None]
    xs = mx.arange(SIZE)[None, None, :]
    cy, cx = centers[:, 0, 0, None, None], centers[:, 0, 1, None, None]
    disc = ((ys - cy) ** 2 + (xs - cx) ** 2) <= (radius[:, None, None] ** 2)
    sy, sx = centers[:, 1, 0, None, None], centers[:, 1, 1, None, None]
    half = side[:, None, None]
    square = (mx.abs(ys - sy) <= half) & (mx.abs(xs - sx) <= half)
    labels = mx.where(square, 2, mx.where(disc, 1, 0))
    colour = mx.array([[0.0, 0.0, 0.0], [1.0, 0.2, 0.5], [0.1, 0.9, 0.6]])
    images = colour[labels] + 0.3 * mx.random.normal((n, SIZE, SIZE, 3), key=kn)
    return images, labels


class Down(nn.Module):
    def __init__(self, cin, cout, pool):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=2, dilation=2)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, groups=4, bias=False)
        self.norm = nn.GroupNorm(4, cout, pytorch_compatible=True)
        self.pool = pool

    def __call__(self, x):
        skip = nn.relu(self.norm(self.conv2(nn.relu(self.conv1(x)))))
        return skip, self.pool(skip)


class UNet(nn.Module):
    def __init__(self, base=8):
        super().__init__()
        self.down1 = Down(3, base, nn.MaxPool2d(2, stride=2))
        self.down2 = Down(base, 2 * base, nn.AvgPool2d(3, stride=2, padding=1))
        self.mid = nn.Conv2d(2 * base, 2 * base, 3, padding=1)
        self.mid_norm = nn.InstanceNorm(2 * base, affine=True)
        self.up2 = nn.ConvTranspose2d(2 * base, 2 * base, 3, stride=2, padding=1,
                                      output_padding=1)
        self.dec2 = nn.Conv2d(4 * base, base, 3, padding=1)
        self.dec2_norm = nn.BatchNorm(base)
        self.up1 = nn.Upsample(scale_factor=2, mode="linear", align_corners=True)
        self.dec1 = nn.Conv2d(2 * base, base, 3, padding=1)
        self.dec1_norm = nn.GroupNorm(2, base, pytorch_compatible=False)
        self.head = nn.Conv2d(base, CLASSES, 1)

    def __call__(self, x):
        s1, x = self.down1(x)
        s2, x = self.down2(x)
        x = nn.relu(self.mid_norm(self.mid(x)))
        x = mx.concatenate([self.up2(x), s2], axis=-1)
        x = nn.relu(self.dec2_norm(self.dec2(x)))
        x = mx.concatenate([self.up1(x), s1], axis=-1)
        return self.head(nn.relu(self.dec1_norm(self.dec1(x))))


def dice_loss(logits, onehot, eps=1.0):
    p = mx.sigmoid(logits)
    inter = mx.sum(p * onehot, axis=(1, 2))
    total = mx.sum(p, axis=(1, 2)) + mx.sum(onehot, axis=(1, 2))
    return mx.mean(1 - (2 * inter + eps) / (total + eps))


def focal_loss(logits, onehot, gamma=2.0, alpha=0.25):
    p = mx.clip(mx.sigmoid(logits), 1e-6, 1 - 1e-6)
    pt = mx.where(onehot > 0, p, 1 - p)
    weight = mx.where(onehot > 0, alpha, 1 - alpha)
    return mx.mean(-weight * (1 - pt) ** gamma * mx.log(pt))


def loss_fn(model, x, labels):
    logits = model(x)
    onehot = (labels[..., None] == mx.arange(CLASSES)).astype(mx.float32)
    bce = nn.losses.binary_cross_entropy(logits, onehot, with_logits=True, reduction="mean")
    return dice_loss(logits, onehot) + focal_loss(logits, onehot) + bce


def iou(pred, labels):
    """Per-class intersection over union, summed over each image's pixels then the batch."""
    out = []
    for c in range(CLASSES):
        p, t = pred == c, labels == c
        inter = mx.sum(p & t, axis=(1, 2)).sum()
        union = mx.sum(p | t, axis=(1, 2)).sum()
        out.append((inter / mx.maximum(union, 1)).item())
    return out


def show_masks(pred, labels, rows):
    chars = ".o#"
    print("target".ljust(SIZE + 2) + "predicted")
    for r in rows:
        t = "".join(chars[v] for v in labels[r].tolist())
        p = "".join(chars[v] for v in pred[r].tolist())
        print(t + "  " + p)


def train(model, images, labels):
    optimizer = optim.AdamW(learning_rate=1e-2, weight_decay=1e-2)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    for it in range(12):
        batch = slice((it % 2) * 8, (it % 2) * 8 + 8)
        loss, grads = loss_and_grad(model, images[batch], labels[batch])
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        var = [round(v, 4) for v in model.dec2_norm.running_var[:3].tolist()]
        print(f"step {it}: loss {loss.item():.4f}, running var {var}")

    state = [model.state, optimizer.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def step(x, y):
        loss, grads = loss_and_grad(model, x, y)
        optimizer.update(model, grads)
        return loss

    for it in range(12, 24):
        batch = slice((it % 2) * 8, (it % 2) * 8 + 8)
        loss = step(images[batch], labels[batch])
        mx.eval(state)
        print(f"compiled {it}: loss {loss.item():.4f}, step {optimizer.state['step'].item()}")


def shapes():
    print("== shapes")
    x = mx.random.normal((1, 7, 9, 4), key=mx.random.key(3))
    layers = [
        nn.Conv2d(4, 6, 3, padding=1, dilation=1, groups=2),
        nn.Conv2d(4, 4, (3, 2), stride=(2, 1), padding=(2, 0), dilation=(2, 1), groups=4),
        nn.ConvTranspose2d(4, 3, 3, stride=2),
        nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
        nn.ConvTranspose2d(4, 3, (2, 3), stride=(3, 2), padding=(0, 1), output_padding=(2, 1)),
        nn.ConvTranspose2d(4, 3, 3, stride=1, padding=2, dilation=2),
        nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, dilation=2, output_padding=1),
        nn.MaxPool2d(2), nn.MaxPool2d(3, stride=2, padding=1), nn.AvgPool2d((2, 3), stride=1),
        nn.AvgPool2d(3, stride=2, padding=1),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Upsample(scale_factor=(1.5, 2), mode="nearest"),
        nn.Upsample(scale_factor=2, mode="linear"),
        nn.Upsample(scale_factor=2, mode="linear", align_corners=True),
        nn.Upsample(scale_factor=(2, 1.5), mode="cubic"),
        nn.Upsample(scale_factor=2, mode="cubic", align_corners=True),
    ]
    for layer in layers:
        mx.random.seed(11)
        if hasattr(layer, "weight"):
            layer.update({"weight": mx.random.normal(layer.weight.shape) * 0.3})
        y = layer(x)
        print(f"{layer}: {y.shape} sum {y.sum().item():.4f} corner {y[0, 0, 0, 0].item():.4f}")

    profile = mx.array([[0.0, 3.0, 1.0, 5.0, 2.0, 2.0, 7.0, 1.0, 0.0]])[..., None]
    for layer in [nn.MaxPool1d(2), nn.MaxPool1d(3, stride=2, padding=1),
                  nn.MaxPool1d(4, stride=3, padding=2)]:
        print(layer, layer(profile).flatten().tolist())

    img = mx.arange(12, dtype=mx.float32).reshape(1, 3, 4, 1)
    print("pad constant", mx.pad(img, [(0, 0), (1, 0), (0, 2), (0, 0)], constant_values=-1)
          [0, ..., 0])
    print("pad edge", mx.pad(img, [(0, 0), (1, 2), (2, 1), (0, 0)], mode="edge")[0, ..., 0])
    print("pad int width", mx.pad(img[0, ..., 0], 1).shape, "pad pair", mx.pad(img, (1, 0)).shape)
    odd = mx.random.normal((1, 15, 15, 4), key=mx.random.key(5))
    fixed = mx.pad(odd, [(0, 0), (0, 1), (0, 1), (0, 0)], mode="edge")
    up = nn.Upsample(scale_factor=2, mode="nearest")(nn.MaxPool2d(2)(fixed))
    print("padded skip", mx.concatenate([up, fixed], axis=-1).shape,
          "edge rows equal", mx.array_equal(fixed[:, 15], fixed[:, 14]).item())

    values = mx.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 2, 2, 1)
    for mode, ac in [("nearest", False), ("linear", False), ("linear", True), ("cubic", False),
                     ("cubic", True)]:
        y = nn.Upsample(scale_factor=2, mode=mode, align_corners=ac)(values)
        print(f"{mode} align={ac}: {[round(v, 4) for v in y[0, 1, :, 0].tolist()]}")


def norms():
    print("== norms")
    x = mx.random.normal((2, 4, 4, 8), key=mx.random.key(8)) * 2 + 1
    for layer in [nn.GroupNorm(4, 8), nn.GroupNorm(4, 8, pytorch_compatible=True),
                  nn.GroupNorm(2, 8, affine=False), nn.InstanceNorm(8),
                  nn.InstanceNorm(8, affine=True, eps=1e-3)]:
        y = layer(x)
        print(f"{layer}: |mean| < 1e-5 {abs(y.mean().item()) < 1e-5} std {mx.std(y).item():.4f} "
              f"y[0,0,0,:3] {[round(v, 4) for v in y[0, 0, 0, :3].tolist()]}")
    bn = nn.BatchNorm(8, momentum=0.3)
    for _ in range(2):
        y = bn(x)
    print("batchnorm train", round(y.mean().item(), 5), [round(v, 4) for v in
                                                         bn.running_mean[:3].tolist()])
    bn.eval()
    y = bn(x)
    print("batchnorm eval", round(y.mean().item(), 4), round(mx.std(y).item(), 4),
          "training", bn.training)
    bn.train()
    print("batchnorm keys", sorted(k for k, _ in tree_flatten(bn.parameters())),
          "trainable", sorted(k for k, _ in tree_flatten(bn.trainable_parameters())))


def main():
    images, labels = make_images(mx.random.key(0), 16)
    test_x, test_y = make_images(mx.random.key(1), 4)
    counts = [(labels == c).sum().item() for c in range(CLASSES)]
    print("images", images.shape, images.dtype, "labels", labels.shape, labels.dtype,
          "pixels per class", counts)
    mx.random.seed(0)
    model = UNet()
    mx.eval(model.parameters())
    n = sum(v.size for _, v in tree_flatten(model.parameters()))
    print("unet parameters", n, "up2", model.up2.weight.shape, "down2 conv2",
          model.down2.conv2.weight.shape)
    print("output", model(images[:2]).shape)
    onehot = (labels[:4, ..., None] == mx.arange(CLASSES)).astype(mx.float32)
    zero = mx.zeros(onehot.shape)
    print(f"losses at zero logits: dice {dice_loss(zero, onehot).item():.5f} focal "
          f"{focal_loss(zero, onehot).item():.5f} bce "
          f"{nn.losses.binary_cross_entropy(zero, onehot, with_logits=True).item():.5f}")

    train(model, images, labels)
    model.eval()
    logits = model(test_x)
    pred = mx.argmax(logits, axis=-1)
    print("test loss", round(loss_fn(model, test_x, test_y).item(), 4))
    print("iou per class", [round(v, 4) for v in iou(pred, test_y)])
    print("pixel accuracy", round((pred == test_y).mean().item(), 4))
    for i in range(2):
        show_masks(pred[i], test_y[i], range(1, SIZE - 1))
    model.train()

    shapes()
    norms()

    odd = mx.zeros((1, 15, 15, 3))
    mistakes = [
        lambda: UNet()(mx.zeros((1, 3, 16, 16))),
        lambda: UNet()(odd),
        lambda: mx.concatenate([nn.Upsample(scale_factor=2)(nn.MaxPool2d(2)(odd)), odd], axis=-1),
        lambda: nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=2)(mx.zeros((1, 4, 4, 4)))
        .shape,
        lambda: nn.ConvTranspose2d(4, 4, 3, stride=1, output_padding=1)(mx.zeros((1, 4, 4, 4)))
        .shape,
        lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=5)(mx.zeros((1, 5, 6, 4))),
        lambda: nn.Conv2d(4, 6, 3, groups=4)(mx.zeros((1, 4, 4, 4))),
        lambda: nn.Conv2d(6, 4, 3, groups=4),
        lambda: nn.MaxPool2d(2)(mx.zeros((15, 15, 3))),
        lambda: nn.MaxPool2d(2, padding=2)(odd).shape,
        lambda: nn.Upsample(scale_factor=2, mode="bicubic"),
        lambda: mx.pad(odd, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect").shape,
        lambda: mx.pad(odd, [(0, 0), (1, 1), (1, 1)]).shape,
        lambda: mx.pad(odd, [(0, 0), (-1, 0), (0, 0), (0, 0)]).shape,
        lambda: nn.GroupNorm(3, 8)(mx.zeros((1, 4, 4, 8))),
        lambda: nn.losses.binary_cross_entropy(mx.zeros((2, 4)), mx.zeros((2, 3))),
    ]
    for mistake in mistakes:
        try:
            print("no error", mistake())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
