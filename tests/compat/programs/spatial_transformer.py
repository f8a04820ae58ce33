"""A spatial transformer network (the PyTorch tutorial's recipe on a toy task): a
localisation net predicts an affine map, affine_grid + grid_sample warp the input with
it, and a small classifier reads the warped image. The task is telling a bright cross
from a bright square, each drawn at a random offset in a 16x16 image."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_images(n: int):
    images = torch.randn(n, 1, 16, 16) * 0.2
    labels = torch.randint(0, 2, (n,))
    offsets = torch.randint(-3, 4, (n, 2))
    for i in range(n):
        r, c = 8 + int(offsets[i, 0]), 8 + int(offsets[i, 1])
        if labels[i] == 0:
            images[i, 0, r - 3:r + 4, c] += 1.0
            images[i, 0, r, c - 3:c + 4] += 1.0
        else:
            images[i, 0, r - 2:r + 3, c - 2:c + 3] += 1.0
    return images, labels


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(4, 6, kernel_size=3), nn.MaxPool2d(2), nn.ReLU())
        self.fc_loc = nn.Sequential(nn.Linear(6 * 2 * 2, 16), nn.ReLU(), nn.Linear(16, 6))
        self.fc_loc[2].weight.data.zero_()
        # Near the identity, not at it: the identity samples exactly at pixel centres, where
        # bilinear sampling has a kink, so the grid's gradient would hang on the last bit of
        # theta and a one-ulp difference upstream would change the whole run.
        self.fc_loc[2].bias.data.copy_(torch.tensor([0.95, 0.02, 0.013, -0.03, 0.97, 0.011]))
        self.conv = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 2)

    def stn(self, x):
        xs = self.localization(x).view(-1, 6 * 2 * 2)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False), theta

    def forward(self, x):
        x, theta = self.stn(x)
        x = F.max_pool2d(F.relu(self.conv(x)), 4)
        return F.log_softmax(self.fc(x.flatten(1)), dim=1), theta


images, labels = make_images(96)
print(images.shape, labels[:12], f"{images.mean().item():.5f}")

# the pieces on their own: an identity map reproduces the image, a shift moves it
identity = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
grid = F.affine_grid(identity, (1, 1, 4, 4), align_corners=True)
print(grid[0, :, :, 0])
patch = torch.arange(16.0).view(1, 1, 4, 4)
print(F.grid_sample(patch, grid, align_corners=True))
shift = torch.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]])
for mode in ("bilinear", "nearest", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        out = F.grid_sample(patch, F.affine_grid(shift, (1, 1, 4, 4), align_corners=False),
                            mode=mode, padding_mode=padding, align_corners=False)
        print(mode, padding, out.flatten()[:6])

model = STN()
print(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(1, 31):
    batch = torch.randint(0, len(images), (32,))
    optimizer.zero_grad()
    output, theta = model(images[batch])
    loss = F.nll_loss(output, labels[batch])
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        grad = model.fc_loc[2].bias.grad
        first = " ".join(f"{v:.4f}" for v in theta[0].flatten().tolist())
        print(f"step {step:2d} nll {loss.item():.5f} theta[0] {first}")
        print("  fc_loc bias grad", grad)

model.eval()
with torch.no_grad():
    output, theta = model(images)
    right = output.argmax(1).eq(labels).sum().item()
    warped, _ = model.stn(images[:2])
mean = " ".join(f"{v:.4f}" for v in theta.mean(0).flatten().tolist())
print(f"{right} of {len(labels)} right; mean theta {mean}")
print(warped[0, 0, 6:10, 6:10])

# gradients reach both the image and the sampling grid
x = images[:2].clone().requires_grad_()
g = F.affine_grid(theta[:2].clone(), (2, 1, 8, 8), align_corners=False).requires_grad_()
y = F.grid_sample(x, g, mode="bilinear", padding_mode="border", align_corners=False)
y.square().sum().backward()
print(y.grad_fn.name(), x.grad.abs().sum(), g.grad[0, 0])
