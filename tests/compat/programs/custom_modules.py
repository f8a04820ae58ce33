"""Building blocks by their full module paths: a custom optimizer subclassing
torch.optim.optimizer.Optimizer, Parameters, buffers, containers, hooks, weight tying,
freezing layers for fine-tuning, and state_dict round trips."""

import collections

import torch
from torch.nn import init
from torch.nn.modules.container import ModuleDict, ParameterList, Sequential
from torch.nn.modules.linear import Linear
from torch.nn.modules.module import Module
from torch.nn.modules.rnn import LSTM
from torch.nn.parameter import Parameter
from torch.optim.optimizer import Optimizer
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.dataset import Dataset, TensorDataset

torch.manual_seed(0)
print(Linear is torch.nn.Linear, LSTM is torch.nn.LSTM, Parameter is torch.nn.Parameter)
print(DataLoader is torch.utils.data.DataLoader, Dataset is torch.utils.data.Dataset)
print(Optimizer is torch.optim.Optimizer, Module is torch.nn.Module)


class SignSGD(Optimizer):
    """Steps by the sign of the (momentum-averaged) gradient."""

    def __init__(self, params, lr=1e-2, momentum=0.0):
        if lr <= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["buf"] = torch.zeros_like(p)
                state["step"] += 1
                buf = state["buf"]
                buf.mul_(group["momentum"]).add_(p.grad)
                p.add_(buf.sign(), alpha=-group["lr"])
        return loss


class Scale(Module):
    def __init__(self, n):
        super().__init__()
        self.gain = Parameter(torch.ones(n))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.zeros(n), persistent=False)

    def forward(self, x):
        self.calls += 1
        return x * self.gain

    def extra_repr(self):
        return f"n={self.gain.numel()}"


class Net(Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 6)
        self.body = Sequential(collections.OrderedDict([
            ("fc", Linear(6, 6)),
            ("act", torch.nn.SiLU()),
            ("scale", Scale(6)),
        ]))
        self.heads = ModuleDict({"a": Linear(6, 3), "b": Linear(6, 2)})
        self.extra = ParameterList([Parameter(torch.randn(2)) for _ in range(2)])
        self.out = Linear(6, 10, bias=False)
        self.out.weight = self.embed.weight  # tied

    def forward(self, idx, head="a"):
        h = self.body(self.embed(idx))
        return self.heads[head](h), self.out(h)


net = Net()
print(net)
print([n for n, _ in net.named_parameters()])
print([n for n, _ in net.named_buffers()], list(net.state_dict().keys()))
print(sum(p.numel() for p in net.parameters()), net.out.weight is net.embed.weight)
print([n for n, _ in net.named_modules()][:6], len(list(net.children())))


def init_weights(m):
    if isinstance(m, Linear):
        init.xavier_uniform_(m.weight)
        if m.bias is not None:
            init.constant_(m.bias, 0.01)


net.apply(init_weights)
print(net.heads.a.bias, net.body.fc.weight[0])

seen = []
h1 = net.body.fc.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
h2 = net.body.register_forward_pre_hook(lambda m, i: seen.append("pre"))
grads = []
h3 = net.heads.a.weight.register_hook(lambda g: grads.append(g.norm().item() > 0))
idx = torch.tensor([[1, 2, 3], [4, 5, 6]])
logits_a, logits_lm = net(idx)
print(logits_a.shape, logits_lm.shape, seen)
(logits_a.sum() + logits_lm.logsumexp(-1).sum()).backward()
print(grads, net.body.scale.calls, net.embed.weight.grad.shape)
for h in (h1, h2, h3):
    h.remove()

# fine-tuning: freeze everything but head "b"
for p in net.parameters():
    p.requires_grad = False
for p in net.heads.b.parameters():
    p.requires_grad_(True)
trainable = [n for n, p in net.named_parameters() if p.requires_grad]
print(trainable)
net.zero_grad()
opt = SignSGD([p for p in net.parameters() if p.requires_grad], lr=0.05, momentum=0.5)
data = TensorDataset(torch.randint(0, 10, (40, 3)), torch.randint(0, 2, (40, 3)))
loader = DataLoader(data, batch_size=8, shuffle=True)
before = net.body.fc.weight.clone()
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        def closure(xb=xb, yb=yb):
            opt.zero_grad()
            logits, _ = net(xb, head="b")
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 2), yb.reshape(-1))
            loss.backward()
            return loss

        total += opt.step(closure).item()
    print(f"epoch {epoch}: {total / len(loader):.4f}")
print(torch.equal(before, net.body.fc.weight), net.body.fc.weight.grad)
state = opt.state_dict()
print(state["param_groups"], {k: v["step"] for k, v in state["state"].items()})
opt2 = SignSGD([p for p in net.parameters() if p.requires_grad])
opt2.load_state_dict(state)
print(opt2.param_groups[0]["lr"], opt2.state[net.heads.b.weight]["step"])
opt2.add_param_group({"params": [net.heads.a.bias], "lr": 0.5})
print(len(opt2.param_groups), opt2.param_groups[1]["momentum"])

sd = net.state_dict()
fresh = Net()
print(fresh.load_state_dict(sd))
print(torch.equal(fresh.heads.b.weight, net.heads.b.weight), fresh.out.weight is fresh.embed.weight)
print(torch.nn.utils.parameters_to_vector(net.heads.b.parameters()).shape)
print(net.training, net.eval().training, net.body.scale.training, net.train().training)
net.requires_grad_(False)
print(any(p.requires_grad for p in net.parameters()))
print(net.heads.a.weight.dtype, net.double().heads.a.weight.dtype, net.float().extra[0].dtype)
print(isinstance(net.extra[0], Parameter), isinstance(net.extra[0], torch.Tensor))
