"""Saving and loading: whole models, state_dicts, checkpoints with optimizer state."""

import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(4 * 3 * 3, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.bn(self.fc1(x)))
        return self.fc2(x)


model = SmallConvNet()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
print(optimizer.state_dict())  # no state before the first step
x = torch.randn(8, 1, 8, 8)
target = torch.randint(0, 3, (8,))
for _ in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    reference = model(x)

for key, value in model.state_dict().items():
    print(f"{key:<24} {str(value.dtype):<14} {tuple(value.shape)}")
opt_state = optimizer.state_dict()
print(sorted(opt_state), list(opt_state["state"]), opt_state["param_groups"][0]["params"])

with tempfile.TemporaryDirectory() as tmp:
    # 1. weights only: a state_dict, loaded with weights_only=True
    path = os.path.join(tmp, "weights.pt")
    torch.save(model.state_dict(), path)
    fresh = SmallConvNet()
    result = fresh.load_state_dict(torch.load(path, weights_only=True))
    print(result)
    fresh.eval()
    with torch.no_grad():
        print(torch.equal(fresh(x), reference), fresh.bn.num_batches_tracked)

    # 2. the whole model, pickled with its class
    path = os.path.join(tmp, "whole.pt")
    torch.save(model, path)
    whole = torch.load(path, weights_only=False)
    print(type(whole).__name__, whole.fc2, whole.training)
    with torch.no_grad():
        print(torch.equal(whole(x), reference))

    # 3. the same file under weights_only=True: refused, then allowed class by class
    try:
        torch.load(path, weights_only=True)
    except Exception as e:
        print(type(e).__name__)
    allowed = [SmallConvNet, nn.Conv2d, nn.MaxPool2d, nn.Linear, nn.BatchNorm1d, set]
    with torch.serialization.safe_globals(allowed):
        safe = torch.load(path, weights_only=True)
    with torch.no_grad():
        print(type(safe).__name__, torch.equal(safe(x), reference))
    torch.serialization.add_safe_globals(allowed)
    print(type(torch.load(path, weights_only=True)).__name__)

    # 4. everything needed to resume training, in one dict
    path = os.path.join(tmp, "resume.ckpt")
    torch.save({
        "steps": 3,
        "model": model.state_dict(),
        "optim": optimizer.state_dict(),
        "loss": loss,
        "note": "three steps",
        "sizes": (1, 2.5, None, [True]),
    }, path)
    checkpoint = torch.load(path, weights_only=True)
    model2 = SmallConvNet()
    optimizer2 = optim.SGD(model2.parameters(), lr=0.5)
    model2.load_state_dict(checkpoint["model"])
    optimizer2.load_state_dict(checkpoint["optim"])
    print(checkpoint["steps"], checkpoint["loss"], checkpoint["note"], checkpoint["sizes"])
    print(optimizer2.param_groups[0]["lr"], optimizer2.param_groups[0]["momentum"])
    buf = optimizer2.state[model2.fc2.bias]["momentum_buffer"]
    print(torch.equal(buf, optimizer.state[model.fc2.bias]["momentum_buffer"]))

# 5. in memory, with shared storage, views and several dtypes
buffer = io.BytesIO()
base = torch.arange(10.0)
tensors = {"base": base, "view": base[2:5], "long": torch.tensor([1, 2, 3]),
           "half": torch.tensor([0.5, 1.5], dtype=torch.float16),
           "bool": torch.tensor([True, False]), "scalar": torch.tensor(7)}
torch.save(tensors, buffer)
buffer.seek(0)
loaded = torch.load(buffer)
print(loaded)
loaded["view"][0] = -1.0
print(loaded["base"], loaded["view"].storage_offset(), loaded["base"].is_contiguous())
param = nn.Parameter(torch.ones(2))
buffer = io.BytesIO()
torch.save(param, buffer)
buffer.seek(0)
print(torch.load(buffer))
print(list(model.state_dict().keys()) == list(model2.state_dict().keys()))
missing = SmallConvNet().load_state_dict({"fc2.weight": torch.zeros(3, 16)}, strict=False)
print(missing.missing_keys[:3], missing.unexpected_keys)
