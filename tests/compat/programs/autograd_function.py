"""Autograd: gradients of a small graph, a custom torch.autograd.Function, a polynomial fit
with hand-written updates, gradcheck, and higher-order gradients."""

import math

import torch

torch.manual_seed(0)

# -- a small graph ------------------------------------------------------------
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {type(z.grad_fn).__name__}")
print(z.grad_fn.name(), [type(f).__name__ for f, _ in z.grad_fn.next_functions][1:])
loss.backward()
print(w.grad)
print(b.grad)
print(z.requires_grad, z.is_leaf, w.is_leaf)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad, z.detach().requires_grad)

a = torch.tensor(2.0, requires_grad=True)
c = torch.tensor(3.0, requires_grad=True)
f = (a * c) ** 2 * (a + c) ** 3
f.backward()
print(f, a.grad, c.grad)


# -- a custom Function: the cubic Legendre-like polynomial P(x) = (5x^3 - 3x) / 2 ----------
class Cubic(torch.autograd.Function):
    """P(x) = (5x^3 - 3x)/2 with its derivative written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


class ScaledSoftplus(torch.autograd.Function):
    """softplus(beta * x) / beta, new-style: forward without ctx, then setup_context."""

    @staticmethod
    def forward(x, beta):
        return torch.log1p(torch.exp(beta * x)) / beta

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, beta = inputs
        ctx.save_for_backward(x)
        ctx.beta = beta

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(ctx.beta * x), None


class ClampGrad(torch.autograd.Function):
    """Identity forward; clips the incoming gradient (and marks the mask non-differentiable)."""

    @staticmethod
    def forward(ctx, x, limit):
        mask = x.abs() > limit
        ctx.mark_non_differentiable(mask)
        ctx.limit = limit
        return x.clone(), mask

    @staticmethod
    def backward(ctx, grad, grad_mask):
        return grad.clamp(-ctx.limit, ctx.limit), None


dtype = torch.float
xs = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
ys = torch.sin(xs)

a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(2000):
    P3 = Cubic.apply
    y_pred = a + b * P3(c + d * xs)
    loss = (y_pred - ys).pow(2).sum()
    if t % 400 == 99:
        print(t, f"{loss.item():.4f}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f"Result: y = {a.item():.4f} + {b.item():.4f} * P3({c.item():.4f} + {d.item():.4f} x)")

s = torch.randn(4, requires_grad=True)
out = ScaledSoftplus.apply(s, 2.0)
out.sum().backward()
print(out, s.grad, type(out.grad_fn).__name__)

v = torch.tensor([-3.0, 0.5, 4.0], requires_grad=True)
clipped, mask = ClampGrad.apply(v, 1.0)
(clipped * torch.tensor([5.0, 0.5, -5.0])).sum().backward()
print(clipped, mask, mask.requires_grad, v.grad)

x64 = torch.randn(3, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Cubic.apply, (x64,)))
print(torch.autograd.gradcheck(lambda t: ScaledSoftplus.apply(t, 1.5), (x64,)))

# -- .data, .grad assignment, accumulation, retain_graph -----------------------------------
p = torch.tensor([1.0, 2.0], requires_grad=True)
p.data.mul_(10)
p.data = torch.tensor([0.5, -0.5])
q = (p * p).sum()
q.backward(retain_graph=True)
q.backward()
print(p, p.grad)
p.grad = torch.zeros_like(p)
(3 * p).sum().backward()
print(p.grad)
p.grad.zero_()
print(p.grad, p.data, p.data.requires_grad)

# -- higher-order gradients --------------------------------------------------------------
t = torch.tensor(1.5, requires_grad=True)
(g1,) = torch.autograd.grad(t**4, t, create_graph=True)
(g2,) = torch.autograd.grad(g1, t, create_graph=True)
(g3,) = torch.autograd.grad(g2, t)
print(g1, g2, g3)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

# -- hooks and detach ----------------------------------------------------------------------
h = torch.randn(3, requires_grad=True)
h.register_hook(lambda g: g * 2)
(h.detach() * 0 + h * h).sum().backward()
print(torch.allclose(h.grad, 4 * h), h.grad.shape)
try:
    torch.randn(2).backward()
except RuntimeError as e:
    print("RuntimeError:", e)
