"""A two-level U-Net (conv blocks, max-pool down, ConvTranspose2d up, skip connections
joined with torch.cat) segmenting bright discs from noisy 16x16 images, trained with
BCEWithLogitsLoss; prints losses, soft Dice scores and intermediate shapes."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_data(n: int):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    centres = torch.rand(n, 2) * 10 + 3
    radii = torch.rand(n) * 2 + 2
    dist = (yy - centres[:, 0, None, None]) ** 2 + (xx - centres[:, 1, None, None]) ** 2
    masks = (dist < radii[:, None, None] ** 2).float().unsqueeze(1)
    images = masks * 0.8 + torch.randn(n, 1, 16, 16) * 0.4
    return images, masks


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.enc1, self.enc2 = block(1, c), block(c, 2 * c)
        self.bottom = block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = block(4 * c, 2 * c)
        self.up1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, x, shapes=None):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottom(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        if shapes is not None:
            shapes += [tuple(t.shape) for t in (e1, e2, b, d2, d1)]
        return self.head(d1)


def dice(logits, masks):
    pred = torch.sigmoid(logits)  # soft Dice: no pixel sits on a threshold
    inter = (pred * masks).sum((1, 2, 3))
    return (2 * inter / (pred.sum((1, 2, 3)) + masks.sum((1, 2, 3)) + 1e-6)).mean().item()


images, masks = make_data(64)
test_images, test_masks = make_data(16)
print(images.shape, f"{masks.mean().item():.4f}")
model = UNet()
shapes = []
model(images[:2], shapes)
print(shapes)
print(sum(p.numel() for p in model.parameters()), model.up2)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.BCEWithLogitsLoss()
for epoch in range(1, 11):
    model.train()
    perm = torch.randperm(64)
    for i in range(0, 64, 16):
        idx = perm[i:i + 16]
        optimizer.zero_grad()
        loss = loss_fn(model(images[idx]), masks[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        test_logits = model(test_images)
        test_loss = loss_fn(test_logits, test_masks).item()
    print(f"epoch {epoch} train {loss.item():.4f} test {test_loss:.4f} "
          f"dice {dice(test_logits, test_masks):.4f}")
print(model.head.bias, model.up1.weight.grad.abs().sum() > 0)
