"""Autograd: gradients of a small graph, custom torch.autograd.Functions (old and new style),
a curve fit with hand-written updates, gradcheck, .data / .grad assignment, hooks and
higher-order gradients."""

import torch

torch.manual_seed(0)

# -- a small graph ------------------------------------------------------------
features = torch.linspace(-1, 1, 6).reshape(3, 2)
target = torch.tensor([0.5, -0.25, 1.0])
weights = torch.randn(2, requires_grad=True)
offset = torch.zeros(1, requires_grad=True)
pred = features @ weights + offset
err = torch.nn.functional.mse_loss(pred, target)
print(pred.grad_fn.name(), f"{err.item():.6f}")
err.backward()
print(weights.grad, offset.grad)
print(pred.requires_grad, pred.is_leaf, weights.is_leaf, offset.grad_fn)
with torch.no_grad():
    frozen = features @ weights
print(frozen.requires_grad, pred.detach().requires_grad, pred.detach().grad_fn)

a = torch.tensor(2.0, requires_grad=True)
c = torch.tensor(3.0, requires_grad=True)
f = (a * c) ** 2 * (a + c) ** 3
f.backward()
print(f, a.grad, c.grad)


# -- custom Functions -------------------------------------------------------------------
class SoftSign(torch.autograd.Function):
    """x / (1 + |x|), with its derivative 1 / (1 + |x|)^2 written by hand."""

    @staticmethod
    def forward(ctx, x):
        denom = 1 + x.abs()
        ctx.save_for_backward(denom)
        return x / denom

    @staticmethod
    def backward(ctx, grad_output):
        (denom,) = ctx.saved_tensors
        return grad_output / (denom * denom)


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


# fit y = tanh(2x) - 0.5 on [-2, 2] with y = a * softsign(b * x + c) + d, by hand
xs = torch.linspace(-2, 2, 400)
ys = torch.tanh(2 * xs) - 0.5
params = [torch.tensor(v, requires_grad=True) for v in (0.5, 1.0, 0.2, 0.0)]
lr = 0.05
for step in range(1, 601):
    a, b, c, d = params
    loss = ((a * SoftSign.apply(b * xs + c) + d - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    if step % 150 == 0:
        print(f"step {step}: loss {loss.item():.5f}")
print("fit:", ", ".join(f"{p.item():.4f}" for p in params))

s = torch.randn(4, requires_grad=True)
out = ScaledSoftplus.apply(s, 2.0)
out.sum().backward()
print(out, s.grad, type(out.grad_fn).__name__)

v = torch.tensor([-3.0, 0.5, 4.0], requires_grad=True)
clipped, mask = ClampGrad.apply(v, 1.0)
(clipped * torch.tensor([5.0, 0.5, -5.0])).sum().backward()
print(clipped, mask, mask.requires_grad, v.grad)

x64 = torch.randn(3, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(SoftSign.apply, (x64,)))
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

m = torch.arange(6.0).reshape(2, 3).requires_grad_()
out = (m * m).t()
v = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
out.backward(v, retain_graph=True)
print(m.grad)
out.backward(v)
print(m.grad)
m.grad = None
print(torch.autograd.functional.jacobian(lambda t: t.sin() * t, torch.tensor([0.0, 1.0])))

# -- hooks and detach ----------------------------------------------------------------------
h = torch.randn(3, requires_grad=True)
h.register_hook(lambda g: g * 2)
(h.detach() * 0 + h * h).sum().backward()
print(torch.allclose(h.grad, 4 * h), h.grad.shape)
try:
    torch.randn(2).backward()
except RuntimeError as e:
    print("RuntimeError:", e)
