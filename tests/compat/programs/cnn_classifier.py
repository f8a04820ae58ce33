"""A small convolutional network (Conv2d, BatchNorm2d, MaxPool2d, Dropout) learning to tell
horizontal from vertical bars in generated 12x12 images, trained with Adam."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def make_images(n: int):
    """Noisy images with one bright bar: label 0 for a row, 1 for a column."""
    images = torch.randn(n, 1, 12, 12) * 0.3
    labels = torch.randint(0, 2, (n,))
    where = torch.randint(2, 10, (n,))
    for i in range(n):
        if labels[i] == 0:
            images[i, 0, where[i], :] += 1.5
        else:
            images[i, 0, :, where[i]] += 1.5
    return images, labels


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3)
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


images, labels = make_images(256)
test_images, test_labels = make_images(64)
print(images.shape, labels[:10], images.mean(), images.std())
train_loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)

model = Net()
print(model)
x = images[:2]
for name, layer in [("conv1", model.conv1), ("pool", model.pool)]:
    x = layer(x)
    print(name, tuple(x.shape))
print(F.conv2d(images[:1], torch.ones(1, 1, 3, 3) / 9, stride=2).shape)
print(F.avg_pool2d(images[:1], 4).flatten())
print(F.adaptive_avg_pool2d(images[:2], (2, 3)).shape, F.max_pool2d(images[:1], 3, 2, 1).shape)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(1, 4):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 4 == 0:
            print(f"epoch {epoch} batch {batch_idx}/{len(train_loader)}  nll {loss.item():.6f}")
    model.eval()
    with torch.no_grad():
        output = model(test_images)
        held_out = F.nll_loss(output, test_labels, reduction="sum").item() / len(test_labels)
        right = output.argmax(dim=1).eq(test_labels).sum().item()
    print(f"held-out nll {held_out:.4f}, {right} of {len(test_labels)} right")

print(model.bn1.running_mean, model.bn1.running_var, model.bn1.num_batches_tracked)
print(model.conv1.weight.grad.shape, model.conv1.weight.grad.abs().sum() > 0)
