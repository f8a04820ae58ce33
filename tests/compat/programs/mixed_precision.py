"""CPU automatic mixed precision as practitioners write it.

torch.autocast on the CPU (bfloat16 and float16), the older spellings and their deprecation
warnings, which dtype each op family returns inside a region, nesting and the state queries,
the weight cast cache, custom_fwd/custom_bwd on an autograd.Function, GradScaler's whole
life cycle, a small classifier trained under bfloat16 autocast next to one trained fully in
bfloat16, and the usual mistakes.
"""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show_warnings(caught):
    for w in caught:
        print(f"  warning {w.category.__name__}: {str(w.message).splitlines()[0]}")


# -- the three spellings -------------------------------------------------------------------
x = torch.randn(4, 8)
w = torch.randn(8, 3)
print("outside:", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
with torch.autocast("cpu", dtype=torch.bfloat16):
    print("torch.autocast bf16:", torch.is_autocast_enabled("cpu"),
          torch.get_autocast_dtype("cpu"), (x @ w).dtype)
with torch.autocast(device_type="cpu"):
    print("default dtype:", torch.get_autocast_dtype("cpu"), torch.mm(x, w).dtype)
with torch.amp.autocast("cpu", dtype=torch.float16):
    print("torch.amp.autocast fp16:", torch.get_autocast_dtype("cpu"), (x @ w).dtype)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.cpu.amp.autocast():
        print("torch.cpu.amp.autocast:", torch.is_autocast_enabled("cpu"), (x @ w).dtype)
show_warnings(caught)
print("after:", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))


@torch.autocast("cpu")
def forward_fn(a, b):
    return a @ b


print("decorator:", forward_fn(x, w).dtype, torch.is_autocast_enabled("cpu"))

# -- op families inside a region -----------------------------------------------------------
torch.manual_seed(1)
a = torch.randn(3, 4)
b = torch.randn(4, 5)
batch1 = torch.randn(2, 3, 4)
batch2 = torch.randn(2, 4, 5)
sig = torch.randn(1, 2, 16)
img = torch.randn(1, 2, 8, 8)
lin = nn.Linear(4, 5)
conv1 = nn.Conv1d(2, 3, 3)
conv2 = nn.Conv2d(2, 3, 3)
prelu = nn.PReLU()
target = torch.tensor([0, 2, 1])
for dtype in (torch.bfloat16, torch.float16):
    print(f"== region dtype {dtype}")
    with torch.autocast("cpu", dtype=dtype):
        lower = {
            "linear": lin(a), "matmul": torch.matmul(a, b), "bmm": torch.bmm(batch1, batch2),
            "conv1d": conv1(sig), "conv2d": conv2(img),
            "baddbmm": torch.baddbmm(torch.zeros(2, 3, 5), batch1, batch2),
            "addmm": torch.addmm(torch.zeros(3, 5), a, b), "prelu": prelu(a),
        }
        print("  lower:", {k: str(v.dtype) for k, v in lower.items()})
        h = lin(a)  # a low-precision activation feeding the float32-list ops
        fp32 = {
            "softmax": torch.softmax(h, dim=-1), "log_softmax": F.log_softmax(h, dim=-1),
            "layer_norm": F.layer_norm(h, (5,)), "group_norm": F.group_norm(h, 1),
            "cross_entropy": F.cross_entropy(h, target), "mse_loss": F.mse_loss(h, h * 0),
            "cumsum": torch.cumsum(h, 0), "norm": torch.norm(h), "exp": torch.exp(h),
            "pow": torch.pow(h, 2), "sum": h.sum(), "relu": F.relu(h),
        }
        print("  fp32-list?:", {k: str(v.dtype) for k, v in fp32.items()})
        promote = {
            "cat": torch.cat([h, a @ b * 0 + 1.0, torch.ones(3, 5)]),
            "cat_low": torch.cat([h, h]),
            "stack": torch.stack([h, torch.ones(3, 5)]),
            "add": h + torch.ones(3, 5),
            "addcmul": torch.addcmul(torch.ones(3, 5), h, h),
            "index_put": torch.zeros(3, 5).index_put((torch.tensor([0]),), h[:1].float()),
        }
        print("  promote:", {k: str(v.dtype) for k, v in promote.items()})
        try:  # index_put is not on the CPU promote list: mixed dtypes are the user's problem
            torch.zeros(3, 5).index_put_((torch.tensor([0]),), h[:1])
        except RuntimeError as e:
            print("  index_put_ low into float32:", type(e).__name__, e)
        ints = torch.arange(12).reshape(3, 4)
        print("  int matmul:", (ints @ ints.T).dtype, "int sum:", ints.sum().dtype,
              "int softmax-as-float:", torch.softmax(ints.float(), -1).dtype)
        d = torch.randn(3, 4, dtype=torch.float64)
        print("  float64 matmul:", (d @ d.T).dtype, "float64 linear:",
              F.linear(d, torch.randn(5, 4, dtype=torch.float64)).dtype,
              "f64 cast down by hand:", torch.mm(d.float(), b).dtype)
        try:  # float64 is left alone while b is lowered: the dtypes no longer agree
            torch.mm(d, b)
        except RuntimeError as e:
            print("  float64 @ float32 in a region:", type(e).__name__, e)
    print("  values:", lower["matmul"][0, :3].tolist(), f"{fp32['cross_entropy'].item():.4f}")

# more of the lists: einsum/tensordot decompose into bmm, mv/dot/outer are on no list
w_leaf = torch.randn(4, 4, requires_grad=True)
with torch.autocast("cpu"):
    y = a @ w_leaf
    print("grad_fn:", type(y.grad_fn).__name__,
          [type(n[0]).__name__ for n in y.grad_fn.next_functions])
    print("einsum", torch.einsum("ij,jk->ik", a, b).dtype, "tensordot",
          torch.tensordot(a, b, 1).dtype, "mv", torch.mv(b.T, a[0]).dtype, "dot",
          torch.dot(a[0], a[1]).dtype, "outer", torch.outer(a[0], a[1]).dtype)
    print("embedding", F.embedding(torch.tensor([0, 1]), w_leaf).dtype, "bce_logits",
          F.binary_cross_entropy_with_logits(y, torch.ones(3, 4)).dtype, "nll",
          F.nll_loss(F.log_softmax(y, -1), torch.tensor([0, 1, 2])).dtype,
          "softmax(dtype=float32)", F.softmax(y, -1, dtype=torch.float32).dtype)
    # (the LSTM's input bfloat16: for a float32 one, autocast runs torch's oneDNN bfloat16
    # LSTM, which CPUs without AVX-512 lack, an AMD EPYC Zen 3 among them)
    print("sdpa", F.scaled_dot_product_attention(a[None], a[None], a[None]).dtype, "lstm",
          nn.LSTM(4, 2, batch_first=True)(a[None].bfloat16())[0].dtype, "cdist",
          torch.cdist(y, y).dtype, "prod", torch.prod(y).dtype, "var", y.var().dtype)

# -- nesting, enabled=False, state queries ----------------------------------------------------
with torch.autocast("cpu", dtype=torch.bfloat16):
    outer = torch.mm(a, b)
    with torch.autocast("cpu", enabled=False):
        print("nested disabled:", torch.is_autocast_enabled("cpu"), torch.mm(a, b).dtype)
        print("  low input in disabled region:", torch.mm(outer, b.T.to(torch.bfloat16)).dtype)
        print("  mixed input needs a cast:", torch.mm(outer.float(), b.T).dtype)
    with torch.autocast("cpu", dtype=torch.float16):
        print("nested fp16:", torch.get_autocast_dtype("cpu"), torch.mm(a, b).dtype)
    print("back to outer:", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"),
          torch.mm(a, b).dtype)
print("outer result:", outer.dtype, torch.is_autocast_enabled("cpu"))
print("cache enabled by default:", torch.is_autocast_cache_enabled())
with torch.autocast("cpu", cache_enabled=False):
    print("cache_enabled=False inside:", torch.is_autocast_cache_enabled())
print("cache after:", torch.is_autocast_cache_enabled())

# -- the weight cast cache --------------------------------------------------------------------
layer = nn.Linear(4, 4)
inp = torch.randn(2, 4)
with torch.autocast("cpu", dtype=torch.bfloat16):
    y1 = layer(inp)
    y2 = layer(inp)
    out = (y1.float() + y2.float()).sum()
out.backward()
print("two uses, one cast: grad dtype", layer.weight.grad.dtype,
      f"grad sum {layer.weight.grad.sum().item():.4f}")
print("y1 == y2:", torch.equal(y1, y2), "grad_fn:", type(y1.grad_fn).__name__)
layer.zero_grad()
with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
    y3 = layer(inp)
y3.float().sum().backward()
print("no cache: same output", torch.equal(y1, y3), "grad dtype", layer.weight.grad.dtype)

# -- custom_fwd / custom_bwd ------------------------------------------------------------------


class Fp32Matmul(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, p, q):
        ctx.save_for_backward(p, q)
        print("  forward sees", p.dtype, q.dtype, "autocast on:", torch.is_autocast_enabled("cpu"))
        return p @ q

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        p, q = ctx.saved_tensors
        print("  backward sees", grad.dtype, "autocast on:", torch.is_autocast_enabled("cpu"))
        return grad @ q.T, p.T @ grad


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu")
    def forward(ctx, v):
        out = torch.tanh(v @ torch.eye(v.shape[-1], dtype=v.dtype))
        ctx.save_for_backward(out)
        print("  forward (no cast_inputs) autocast on:", torch.is_autocast_enabled("cpu"),
              "mm dtype:", (v @ v.T).dtype)
        return out

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        print("  backward autocast on:", torch.is_autocast_enabled("cpu"))
        return grad * (1 - out * out)


p = torch.randn(3, 4, requires_grad=True)
q = torch.randn(4, 2, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    low_p = p.to(torch.bfloat16)
    r = Fp32Matmul.apply(low_p, q)
    print("custom_fwd cast_inputs result:", r.dtype)
    s = ScaledTanh.apply(p)
    print("custom_fwd plain result:", s.dtype)
(r.sum() + s.float().sum()).backward()
print("p.grad", p.grad.dtype, f"{p.grad.sum().item():.3f}", "q.grad",
      f"{q.grad.sum().item():.4f}")
r2 = Fp32Matmul.apply(p, q)
print("outside a region:", r2.dtype)
try:
    torch.amp.custom_fwd(lambda ctx, v: v)
except Exception as e:
    print("custom_fwd without device_type:", type(e).__name__)

# -- GradScaler ---------------------------------------------------------------------------------
torch.manual_seed(2)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
print("scaler enabled:", scaler.is_enabled(), "scale:", scaler.get_scale(),
      "growth", scaler.get_growth_factor(), "backoff", scaler.get_backoff_factor(),
      "interval", scaler.get_growth_interval())
data = torch.randn(8, 3)
labels = torch.randn(8, 1)
for step in range(5):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pred = model(data)
        loss = F.mse_loss(pred, labels)
    scaled = scaler.scale(loss)
    if step == 0:
        print("scaled grad_fn:", type(scaled.grad_fn).__name__)
    print(f"step {step} pred {pred.dtype} loss {loss.dtype} {loss.item():.4f} scaled "
          f"{scaled.dtype} {scaled.item():.1f}")
    scaled.backward()
    if step == 2:
        model.weight.grad[0, 0] = float("inf")
    before = model.weight.detach().clone()
    ret = scaler.step(opt)
    skipped = torch.equal(before, model.weight.detach())
    scaler.update()
    print(f"  step returned {ret}, skipped {skipped}, scale now {scaler.get_scale()}, "
          f"tracker {scaler.state_dict()['_growth_tracker']}")
print("weight", [round(v, 4) for v in model.weight.detach().flatten().tolist()])

# unscale_ then clip
opt.zero_grad()
loss = F.mse_loss(model(data), labels)
scaler.scale(loss).backward()
print(f"scaled grad norm {model.weight.grad.norm().item():.4g}")
scaler.unscale_(opt)
total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.05)
print(f"unscaled grad norm before clip {total.item():.4f}, after "
      f"{torch.cat([g.grad.flatten() for g in model.parameters()]).norm().item():.4f}")
try:
    scaler.unscale_(opt)
except RuntimeError as e:
    print("unscale_ twice:", type(e).__name__, e)
scaler.step(opt)
try:
    scaler.step(opt)
except RuntimeError as e:
    print("step twice:", type(e).__name__, e)
try:
    scaler.unscale_(opt)
except RuntimeError as e:
    print("unscale_ after step:", type(e).__name__, e)
scaler.update()

sd = scaler.state_dict()
print("state_dict:", sd)
fresh = torch.amp.GradScaler("cpu")
print("fresh scale:", fresh.get_scale())
fresh.load_state_dict(sd)
print("loaded scale:", fresh.get_scale(), fresh.state_dict()["_growth_tracker"])
scaler.update(new_scale=64.0)
print("manual update:", scaler.get_scale())
scaler.update(torch.tensor(8.0))
print("tensor update:", scaler.get_scale())
odd = torch.amp.GradScaler("cpu", init_scale=3.0, growth_factor=1.1, backoff_factor=0.3,
                           growth_interval=1)
for found_inf in (False, False, True):
    opt.zero_grad()
    odd.scale(F.mse_loss(model(data), labels)).backward()
    if found_inf:
        model.bias.grad.fill_(float("nan"))
    odd.step(opt)
    odd.update()
    print("odd factors, scale:", odd.get_scale(), odd.state_dict()["scale"])
try:
    odd.step(opt, closure=lambda: 0.0)
except RuntimeError as e:
    print("closure:", e)

off = torch.amp.GradScaler("cpu", enabled=False)
t = torch.tensor(3.0)
print("disabled:", off.is_enabled(), off.get_scale(), off.scale(t) is t, off.state_dict())
opt.zero_grad()
F.mse_loss(model(data), labels).backward()
print("disabled step returns:", off.step(opt))
off.update()
try:
    fresh.load_state_dict({})
except RuntimeError as e:
    print("empty state:", e)
print("scale a list:", [v.item() for v in torch.amp.GradScaler("cpu", init_scale=4.0).scale(
    [torch.tensor(1.0), torch.tensor(2.5)])])
try:
    torch.amp.GradScaler("cpu", growth_factor=0.5)
except AssertionError as e:
    print("bad growth factor:", type(e).__name__, e)
try:
    torch.amp.GradScaler("cpu").update()
except AssertionError as e:
    print("update before scale:", type(e).__name__, e)
half_grads = nn.Linear(2, 1).to(torch.float16)
half_opt = torch.optim.SGD(half_grads.parameters(), lr=0.1)
hs = torch.amp.GradScaler("cpu")
hs.scale(half_grads(torch.ones(1, 2, dtype=torch.float16)).sum()).backward()
try:
    hs.unscale_(half_opt)
except ValueError as e:
    print("fp16 grads:", type(e).__name__, e)

# -- a small classifier under bfloat16 autocast vs. a bfloat16 model ---------------------------
torch.manual_seed(3)
X = torch.randn(64, 10)
Y = (X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long()


def make_model():
    torch.manual_seed(4)
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 3))


amp_model = make_model()
amp_opt = torch.optim.Adam(amp_model.parameters(), lr=1e-2)
for it in range(4):
    amp_opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = amp_model(X)
        loss = F.cross_entropy(logits, Y)
    loss.backward()
    amp_opt.step()
    print(f"amp it {it} logits {logits.dtype} loss {loss.dtype} {loss.item():.3f} "
          f"grad {amp_model[0].weight.grad.dtype} param {amp_model[0].weight.dtype}")
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    acc = (amp_model(X).argmax(1) == Y).float().mean()
print(f"amp accuracy {acc.item():.3f} {acc.dtype}")

bf_model = make_model().to(torch.bfloat16)
bf_opt = torch.optim.SGD(bf_model.parameters(), lr=0.1)
for it in range(4):
    bf_opt.zero_grad()
    logits = bf_model(X.to(torch.bfloat16))
    loss = F.cross_entropy(logits, Y)
    loss.backward()
    bf_opt.step()
    print(f"bf16 it {it} logits {logits.dtype} loss {loss.dtype} {loss.item():.3f} "
          f"grad {bf_model[0].weight.grad.dtype}")
print("bf16 first weights", bf_model[0].weight[0, :4])
bf_scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
bf_opt.zero_grad()
bf_scaler.scale(F.cross_entropy(bf_model(X.to(torch.bfloat16)), Y)).backward()
print("bf16 scaled grad", bf_model[0].weight.grad.dtype,
      f"{bf_model[0].weight.grad.float().abs().sum().item():.3g}")
bf_scaler.unscale_(bf_opt)
print(f"bf16 unscaled grad {bf_model[0].weight.grad.float().abs().sum().item():.3g}")
bf_scaler.step(bf_opt)
bf_scaler.update()
print("bf16 scaler scale after a clean step:", bf_scaler.get_scale())

# -- typical mistakes ---------------------------------------------------------------------------
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast("cpu", dtype=torch.float64):
        print("float64 region enabled:", torch.is_autocast_enabled("cpu"), (a @ b).dtype)
show_warnings(caught)
try:
    with torch.autocast("cpux"):
        pass
except RuntimeError as e:
    print("bad device type:", type(e).__name__, str(e).splitlines()[0][:60])
try:
    torch.autocast(torch.device("cpu"))
except ValueError as e:
    print("device object:", type(e).__name__, e)
try:
    scaler_bad = torch.amp.GradScaler("cpux")
    scaler_bad.scale(torch.tensor(1.0, requires_grad=True))
    print("bad scaler device accepted until used:", scaler_bad.get_scale())
except RuntimeError as e:
    print("bad scaler device:", type(e).__name__, str(e).splitlines()[0][:60])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast("cpu", dtype=torch.float32):
        print("float32 region enabled:", torch.is_autocast_enabled("cpu"))
    with torch.cuda.amp.autocast():
        print("cuda.amp.autocast without CUDA:", torch.is_autocast_enabled("cuda"))
    with torch.autocast("cuda"):
        print("autocast('cuda') dtype:", torch.get_autocast_dtype("cuda"))
    print("available:", torch.amp.is_autocast_available("cpu"))
show_warnings(caught)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gs = torch.cpu.amp.GradScaler()
    print("torch.cpu.amp.GradScaler scale:", gs.get_scale())
show_warnings(caught)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cuda_scaler = torch.cuda.amp.GradScaler()
    print("torch.cuda.amp.GradScaler without CUDA enabled:", cuda_scaler.is_enabled())
show_warnings(caught)
