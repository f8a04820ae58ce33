"""Tensor subclasses, tensor-like types and TorchFunctionMode, as people extend PyTorch:
a tagged subclass that survives ops, a logging subclass, a units-aware tensor, a
ScalarTensor-like type that is no Tensor at all, a mode that counts every call, and the
switches that turn the protocol off."""

import math

import torch
import torch.nn.functional as F
from torch.overrides import (
    TorchFunctionMode,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    is_tensor_like,
)

torch.manual_seed(0)


# 1. A subclass with no override: every op's result stays the subclass.
class Tagged(torch.Tensor):
    pass


t = torch.arange(6.0).reshape(2, 3).as_subclass(Tagged)
results = {
    "t + 1": t + 1, "1 - t": 1 - t, "t.sum()": t.sum(), "torch.exp(t)": torch.exp(t),
    "t[0]": t[0], "t.T": t.T, "F.relu(t)": F.relu(t), "torch.cat([t, t])": torch.cat([t, t]),
    "t.max(dim=1).values": t.max(dim=1).values, "t.split(1)[1]": t.split(1)[1],
    "t.float()": t.float(), "torch.zeros_like(t)": torch.zeros_like(t),
    "t.clone()": t.clone(), "t.view(-1)": t.view(-1), "t @ t.T": t @ t.T,
}
for name, r in results.items():
    print(f"{name:22s} {type(r).__name__:8s} {r.shape}")
print("max ->", type(t.max(dim=1)).__name__, [type(v).__name__ for v in t.max(dim=1)])
print("tolist ->", type(t.tolist()).__name__, "item ->", type(t.sum().item()).__name__)
print("shape ->", type(t.shape).__name__, "dtype ->", t.dtype, "numel ->", t.numel())
print(repr(t))
print(t * 0.5)
print("isinstance Tensor:", isinstance(t + 1, torch.Tensor), torch.is_tensor(t))

# Parameter opts out: ops on parameters give plain tensors.
p = torch.nn.Parameter(torch.ones(2))
print("Parameter + 1 ->", type(p + 1).__name__, type(p * p).__name__, type(p.detach()).__name__)


# 2. A logging subclass: which public functions a computation calls.
class Logged(torch.Tensor):
    log = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.log.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})


x = torch.randn(4, 3).as_subclass(Logged)
w = torch.randn(5, 3)
Logged.log.clear()
y = F.linear(x, w).relu()
z = (y * 2 + 1).mean(dim=0)
print("calls:", Logged.log)
Logged.log.clear()
s = torch.softmax(x, dim=-1)
idx = torch.argmax(s, dim=1)
picked = x[torch.arange(4), idx]
print("calls:", Logged.log, type(picked).__name__, type(idx).__name__)
Logged.log.clear()
n = len(x)
b = bool(x[0, 0] > 0)
f = float(x.sum())
print("python protocol calls:", Logged.log, n, type(f).__name__)
Logged.log.clear()
with torch._C.DisableTorchFunctionSubclass():
    inner = x + 1
print("inside DisableTorchFunctionSubclass:", Logged.log, type(inner).__name__)

# Autograd flows through the subclass.
leaf = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
u = leaf.as_subclass(Logged)
loss = (u * u).sum()
loss.backward()
print("grad:", leaf.grad, type(loss).__name__, type(loss.grad_fn).__name__)


# 3. A units-aware tensor: the override checks and propagates an attribute.
class Quantity(torch.Tensor):
    @staticmethod
    def __new__(cls, data, unit):
        q = torch.as_tensor(data, dtype=torch.float32).as_subclass(cls)
        q.unit = unit
        return q

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        units = {a.unit for a in args if isinstance(a, Quantity)}
        if func.__name__ in ("add", "sub", "__rsub__") and len(units) > 1:
            raise ValueError(f"cannot {func.__name__} quantities in {sorted(units)}")
        out = super().__torch_function__(func, types, args, kwargs)
        if isinstance(out, Quantity):
            if func.__name__ == "mul" and all(isinstance(a, Quantity) for a in args[:2]):
                out.unit = "*".join(a.unit for a in args[:2])
            else:
                out.unit = next(iter(units)) if units else "?"
        return out

    def __repr__(self):
        with torch._C.DisableTorchFunctionSubclass():
            return f"{self.tolist()} {self.unit}"


d = Quantity([1.0, 2.5], "m")
e = Quantity([3.0, 4.0], "m")
tm = Quantity([2.0, 0.5], "s")
print("d + e =", d + e)
print("d * tm =", d * tm)
print("d.sum() =", d.sum())
try:
    d + tm
except ValueError as err:
    print("ValueError:", err)


# 4. A tensor-like that is no Tensor: ScalarTensor, a diagonal matrix stored as one number.
HANDLED = {}


def implements(torch_function):
    def decorator(func):
        HANDLED[torch_function] = func
        return func
    return decorator


class ScalarTensor:
    def __init__(self, N, value):
        self._N, self._value = N, value

    def __repr__(self):
        return f"ScalarTensor(N={self._N}, value={self._value})"

    def tensor(self):
        return self._value * torch.eye(self._N)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in HANDLED or not all(issubclass(t, (torch.Tensor, ScalarTensor))
                                          for t in types):
            return NotImplemented
        return HANDLED[func](*args, **kwargs)


@implements(torch.mean)
def mean(inp):
    return float(inp._value) / inp._N


@implements(torch.add)
def add(inp, other):
    if isinstance(other, ScalarTensor):
        return ScalarTensor(inp._N, inp._value + other._value)
    return inp.tensor() + other


st = ScalarTensor(5, 2)
print(st, "mean:", torch.mean(st))
print("add:", torch.add(st, ScalarTensor(5, 3)))
print("add tensor:", torch.add(st, torch.ones(5, 5))[0])
try:
    torch.exp(st)
except TypeError as err:
    print("TypeError:", str(err).split(":")[0])
print("is_tensor_like:", is_tensor_like(st), is_tensor_like(torch.ones(1)), is_tensor_like(3))
print("has_torch_function:", has_torch_function((st,)), has_torch_function((torch.ones(1),)),
      has_torch_function_unary(x), has_torch_function_unary(p))


# A Python function that takes part in the protocol, as torch's own Python functions do.
def scaled_norm(inp, scale=1.0):
    if has_torch_function_unary(inp):
        return handle_torch_function(scaled_norm, (inp,), inp, scale=scale)
    return scale * inp.norm()


@implements(scaled_norm)
def scalar_scaled_norm(inp, scale=1.0):
    return scale * abs(inp._value) * math.sqrt(inp._N)


print("scaled_norm:", round(float(scaled_norm(torch.ones(4), 2.0)), 4),
      round(scaled_norm(st, 2.0), 4))


# 5. A mode sees every call, factories included, and may change the result.
class CountingMode(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = func.__name__
        self.counts[name] = self.counts.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


with CountingMode() as mode:
    a = torch.ones(3)
    b = torch.randn(3)
    c = (a + b).clamp(min=0)
    torch.nn.functional.gelu(c).sum()
print("mode counts:", sorted(mode.counts.items()))


class DoubleAdds(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out * 2 if func.__name__ == "add" else out


with DoubleAdds():
    print("doubled:", torch.add(torch.ones(2), 1), torch.ones(2).sub(1))
print("outside:", torch.add(torch.ones(2), 1))

with CountingMode() as outer:
    with DoubleAdds():
        r = torch.add(torch.tensor([1.0]), 1)
print("nested:", r, sorted(outer.counts.items()))

with CountingMode() as m2:
    with torch._C.DisableTorchFunction():
        torch.ones(2) + 1
print("under DisableTorchFunction:", m2.counts)


# 6. A subclass that unwraps itself: the pattern of wrapper tensors.
class Clamped(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if isinstance(out, Clamped) and out.is_floating_point():
            with torch._C.DisableTorchFunctionSubclass():
                out = out.clamp(-1, 1).as_subclass(Clamped)
        return out


cl = torch.tensor([0.5, -3.0, 2.0]).as_subclass(Clamped)
print("clamped:", (cl * 4).tolist(), (cl + cl).tolist(), type(cl.argmax()).__name__)
