"""The autograd.Function API as implicit-layer code leans on it: autograd.grad's options
(allow_unused, materialize_grads, is_grads_batched), ctx features (mark_non_differentiable,
set_materialize_grads, once_differentiable), setup_context with vmap rules under torch.func,
autograd.functional's options, and the typical mistakes with their error texts."""

import warnings

import torch
import torch.autograd.functional as AF
from torch import autograd
from torch.autograd.function import once_differentiable

torch.manual_seed(0)
torch.set_printoptions(precision=4)
dt = torch.float64


def fmt(t):
    return "[" + ", ".join(f"{v:.4g}" for v in t.reshape(-1).tolist()) + "]"


# -- 1. autograd.grad options ----------------------------------------------------------------
a = torch.randn(3, requires_grad=True)
c = torch.randn(3, requires_grad=True)
y = (a * 2).sum()
ga, gc = autograd.grad(y, (a, c), allow_unused=True, retain_graph=True)
print("allow_unused", ga, gc)
ga, gc = autograd.grad(y, (a, c), allow_unused=True, materialize_grads=True, retain_graph=True)
print("materialize_grads", ga, gc)
try:
    autograd.grad(y, (a, c))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    autograd.grad(y, c, materialize_grads=True, allow_unused=False)
except ValueError as e:
    print("ValueError:", e)
# is_grads_batched: the whole Jacobian of a map in one call, one row per basis vector
m_in = torch.randn(4, dtype=dt, requires_grad=True)
m_out = torch.tanh(m_in @ torch.ones(4, 3, dtype=dt) + torch.arange(3.0, dtype=dt))
basis = torch.eye(3, dtype=dt)
(jac_rows,) = autograd.grad(m_out, m_in, basis, is_grads_batched=True, retain_graph=True)
jac_loop = torch.stack([autograd.grad(m_out, m_in, e, retain_graph=True)[0] for e in basis])
print("is_grads_batched", jac_rows.shape, torch.allclose(jac_rows, jac_loop))
print(fmt(jac_rows[0]))


# -- 2. ctx features --------------------------------------------------------------------------
class ArgSortedTanh(autograd.Function):
    """tanh of x plus the sort order, which is an integer output and never differentiable."""

    @staticmethod
    def forward(ctx, x):
        out = torch.tanh(x)
        order = torch.argsort(x)
        ctx.mark_non_differentiable(order)
        ctx.save_for_backward(out)
        ctx.set_materialize_grads(False)
        return out, order

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_order):
        (out,) = ctx.saved_tensors
        if grad_out is None:
            return None
        return grad_out * (1 - out * out)


xs = torch.tensor([0.3, -1.2, 2.0, 0.0], requires_grad=True)
t_out, t_order = ArgSortedTanh.apply(xs)
print("order", t_order, t_order.requires_grad, t_order.dtype, t_out.requires_grad)
(t_out * torch.arange(4.0)).sum().backward(create_graph=True)
print("grad", xs.grad, xs.grad.requires_grad)
try:
    xs.grad.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
xs.grad = None
gs = autograd.grad(t_out.sum(), xs)
print("grad via autograd.grad", fmt(gs[0]))


class TwoOutputs(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("  backward sees", g1 is None, g2 is None)
        total = torch.zeros(())
        if g1 is not None:
            total = total + 2 * g1
        if g2 is not None:
            total = total + 3 * g2
        return total


s = torch.tensor(1.5, requires_grad=True)
o1, o2 = TwoOutputs.apply(s)
o1.backward()
print("only first output used:", s.grad)


# -- 3. setup_context and vmap staticmethod: torch.func over a custom Function -----------
class Cube(autograd.Function):
    @staticmethod
    def forward(x):
        return x**3, 3 * x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        _, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_out, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_out * dx + grad_dx * 6 * x

    @staticmethod
    def vmap(info, in_dims, x):
        print("  vmap rule: batch", info.batch_size, "in_dims", in_dims)
        x_bdim = in_dims[0]
        out = Cube.apply(x.movedim(x_bdim, 0) if x_bdim is not None else x)
        return out, (0, 0)


def cube_sum(x):
    return Cube.apply(x)[0].sum()


xc = torch.tensor([1.0, -2.0, 0.5])
print("func.grad", torch.func.grad(cube_sum)(xc))
print("func.grad of grad", torch.func.grad(lambda t: torch.func.grad(cube_sum)(t).sum())(xc))
print("vmap", torch.func.vmap(lambda t: Cube.apply(t)[0])(torch.arange(6.0).reshape(3, 2)))
print("jacrev", torch.func.jacrev(lambda t: Cube.apply(t)[0])(xc))


class ScaledExp(autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, scale):
        return torch.exp(x) * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (o,) = ctx.saved_tensors
        return g * o, None

    @staticmethod
    def jvp(ctx, x_t, scale_t):
        raise NotImplementedError


xe = torch.tensor([[0.0, 1.0], [-1.0, 0.5]])
print("generate_vmap_rule", torch.func.vmap(lambda t: ScaledExp.apply(t, 2.0))(xe))
print("vmap(grad)", torch.func.vmap(torch.func.grad(lambda t: ScaledExp.apply(t, 2.0).sum()))(xe))


# -- 4. the typical mistakes ----------------------------------------------------------------
class TooManyGrads(autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k


class WrongShape(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum(0)

    @staticmethod
    def backward(ctx, g):
        return g  # should be expanded to x's shape


class SavesInput(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class ReturnsNumber(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return 1.0  # should be a tensor: torch.ones_like(x) * g


class DirtyOutput(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.mark_dirty(out)  # only inputs modified in place belong here
        return out

    @staticmethod
    def backward(ctx, g):
        return 2 * g


xm = torch.randn(3, 2, requires_grad=True)
for label, fn in [
    ("wrong number of grads", lambda: TooManyGrads.apply(xm, 2.0).sum().backward()),
    ("wrong shape", lambda: WrongShape.apply(xm).sum().backward()),
    ("a number as gradient", lambda: ReturnsNumber.apply(xm).backward()),
]:
    try:
        fn()
    except RuntimeError as e:
        print(f"{label}: RuntimeError: {e}")

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dirty_out = DirtyOutput.apply(xm)
print("mark_dirty of an output:", [str(w.message).split(" (Triggered")[0] for w in caught],
      dirty_out.grad_fn.name())

leaf = torch.randn(3, requires_grad=True)
h = leaf * 1.0
sq = SavesInput.apply(h)
h.add_(1)
try:
    sq.sum().backward()
except RuntimeError as e:
    print("in-place on saved:", str(e).split(". Hint")[0])
h2 = leaf.exp()
th = torch.tanh(h2)
h2.mul_(2)
try:
    th.sum().backward()
except RuntimeError as e:
    print("in-place builtin:", str(e).split(". Hint")[0])
try:
    z_bad = torch.zeros(2, 3, requires_grad=True)
    z_bad[0] = 1.0
except RuntimeError as e:
    print("leaf in-place:", e)


# -- 5. autograd.functional options and more mistakes ---------------------------------------
def pair(a, bb):
    return torch.tanh(a) * bb.sum(), bb * 2


inp = (torch.tensor([0.2, -0.4], dtype=dt), torch.tensor([1.0, 2.0, 3.0], dtype=dt))
outs, vjps = AF.vjp(pair, inp, (torch.ones(2, dtype=dt), torch.ones(3, dtype=dt)))
print("vjp tuple", [fmt(t) for t in vjps])
_, hv = AF.hvp(lambda t: (t**3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
_, vh = AF.vhp(lambda t: (t**3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
print("hvp", hv, "vhp", vh)
jc = AF.jacobian(lambda t: t.exp().sum(), torch.zeros(2, requires_grad=True), create_graph=True)
print("create_graph jacobian", jc.requires_grad, jc.grad_fn is not None)
try:
    AF.jacobian(lambda t: torch.ones(2), torch.zeros(2), strict=True)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    AF.jacobian(lambda t: t, torch.zeros(2), strict=True, vectorize=True)
except RuntimeError as e:
    print("RuntimeError:", e)
print("strict=False zeros", AF.jacobian(lambda t: torch.ones(2), torch.zeros(2)))
hess = torch.func.hessian(lambda t: (t.tanh() ** 2).sum())(torch.tensor([0.5, -1.0]))
print("func.hessian", hess)
out_lin, jvp_fn = torch.func.linearize(lambda t: t.sin() * 2, torch.tensor([0.0, 1.0]))
print("linearize", jvp_fn(torch.tensor([1.0, 1.0])))

gy = torch.ones(3, requires_grad=True) * 2
for label, fn in [
    ("non-scalar backward", lambda: gy.backward(retain_graph=True)),
    ("grad_outputs shape", lambda: autograd.grad(gy, gy, torch.ones(2))),
    ("no grad needed", lambda: autograd.grad(torch.ones(2).sum(), gy)),
]:
    try:
        fn()
    except RuntimeError as e:
        print(f"{label}: RuntimeError: {e}")

sq2 = SavesInput.apply(torch.randn(2, requires_grad=True))
sq2.sum().backward()
try:
    sq2.sum().backward()
except RuntimeError as e:
    print("second backward:", str(e).split(". Specify")[0])


class OldStyle(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class NoVmapRule(autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


for label, fn in [
    ("vmap over old-style", lambda: torch.func.vmap(OldStyle.apply)(torch.ones(2, 2))),
    ("vmap without rule", lambda: torch.func.vmap(NoVmapRule.apply)(torch.ones(2, 2))),
    ("jvp without rule", lambda: torch.func.jvp(NoVmapRule.apply, (torch.ones(2),),
                                                 (torch.ones(2),))),
]:
    try:
        fn()
    except RuntimeError as e:
        print(f"{label}: RuntimeError: {e}")

x64 = torch.randn(3, dtype=dt, requires_grad=True)
print("gradcheck with undefined grads", autograd.gradcheck(lambda t: ArgSortedTanh.apply(t)[0],
                                                           (x64,)))
