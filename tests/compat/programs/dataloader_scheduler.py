"""A custom Dataset and DataLoader, train/test loops as in the quickstart, an LR scheduler,
and evaluation under torch.no_grad()."""

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
training_data = BlobDataset(600, g, transform=lambda p: p / 2)
test_data = BlobDataset(200, g, transform=lambda p: p / 2)
print(len(training_data), training_data[0], training_data[599][1].item())

batch_size = 32
train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=batch_size)
for X, y in test_dataloader:
    print(f"Shape of X [N, C]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break
print(len(train_dataloader), len(test_dataloader))


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(2, 32),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, 4),
        )

    def forward(self, x):
        return self.linear_relu_stack(x)


model = NeuralNetwork()
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 6 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100 * correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


epochs = 4
for t in range(epochs):
    print(f"Epoch {t + 1} (lr {scheduler.get_last_lr()[0]})\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
    scheduler.step()
print("Done!", scheduler.state_dict()["last_epoch"], optimizer.param_groups[0]["lr"])

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
