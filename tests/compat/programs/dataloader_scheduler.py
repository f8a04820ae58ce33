"""A custom Dataset and DataLoader, a training loop with an LR scheduler, evaluation under
torch.no_grad(), the other schedulers, and other loaders (splits, drop_last, dict batches)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split

torch.manual_seed(0)


class BlobDataset(Dataset):
    """Points around four centres; the label is the centre's index."""

    centres = torch.tensor([[2.0, 2.0], [-2.0, 2.0], [-2.0, -2.0], [2.0, -2.0]])

    def __init__(self, n: int, generator: torch.Generator, transform=None):
        self.labels = torch.randint(0, 4, (n,), generator=generator)
        noise = torch.randn(n, 2, generator=generator) * 1.2
        self.points = self.centres[self.labels] + noise
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        x = self.points[idx]
        if self.transform:
            x = self.transform(x)
        return x, self.labels[idx]


g = torch.Generator().manual_seed(123)
train_set = BlobDataset(600, g, transform=lambda p: p / 2)
eval_set = BlobDataset(200, g, transform=lambda p: p / 2)
point, label = train_set[0]
print(len(train_set), point, label, train_set[599][1].item())

train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
eval_loader = DataLoader(eval_set, batch_size=50)
xb, yb = next(iter(eval_loader))
print(f"a batch: points {tuple(xb.shape)} {xb.dtype}, labels {tuple(yb.shape)} {yb.dtype}")
print(len(train_loader), len(eval_loader))


class Classifier(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, width), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, 4),
        )

    def forward(self, x):
        return self.net(x)


model = Classifier()
print(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def run_epoch(loader):
    model.train()
    seen = 0
    for i, (points, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(points), labels)
        loss.backward()
        optimizer.step()
        seen += len(points)
        if i % 6 == 5:
            print(f"    {seen:4d}/{len(loader.dataset)} seen, batch loss {loss.item():.6f}")


@torch.no_grad()
def evaluate(loader):
    model.eval()
    hits, loss_sum = 0, 0.0
    for points, labels in loader:
        logits = model(points)
        loss_sum += criterion(logits, labels).item() * len(labels)
        hits += (logits.argmax(dim=1) == labels).sum().item()
    n = len(loader.dataset)
    return hits / n, loss_sum / n


for epoch in range(1, 5):
    print(f"epoch {epoch}: lr {scheduler.get_last_lr()[0]:.4f}")
    run_epoch(train_loader)
    accuracy, avg_loss = evaluate(eval_loader)
    print(f"  eval accuracy {accuracy:.1%}, mean loss {avg_loss:.5f}")
    scheduler.step()
print("finished:", scheduler.state_dict()["last_epoch"], optimizer.param_groups[0]["lr"])

# -- other schedulers, stepped without training -----------------------------------------
params = [nn.Parameter(torch.zeros(1))]
for make in [
    lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5),
    lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 4], gamma=0.1),
    lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda epoch: 1 / (epoch + 1)),
    lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=6),
    lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4),
]:
    opt = torch.optim.SGD(params, lr=0.5)
    sched = make(opt)
    lrs = []
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(round(sched.get_last_lr()[0], 6))
    print(type(sched).__name__, lrs)

opt = torch.optim.SGD(params, lr=1.0)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
for val_loss in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7]:
    plateau.step(val_loss)
print("ReduceLROnPlateau", opt.param_groups[0]["lr"])

# -- other loaders: TensorDataset, random_split, drop_last, collate of dicts --------------
ds = TensorDataset(torch.arange(10.0).view(10, 1), torch.arange(10))
train_part, val_part = random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(42))
print(len(train_part), len(val_part), val_part.indices)
for xb, yb in DataLoader(train_part, batch_size=3, shuffle=True, drop_last=True,
                         generator=torch.Generator().manual_seed(1)):
    print(xb.view(-1), yb)


class DictDataset(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": torch.full((2,), float(i)), "id": i, "name": f"item{i}"}


for batch in DataLoader(DictDataset(), batch_size=2, collate_fn=None):
    print(batch)
print(next(iter(DataLoader(DictDataset(), batch_size=None))))
print(list(DataLoader(range(7), batch_size=4)))
