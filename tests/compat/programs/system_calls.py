"""The device, precision and tooling calls a CPU program makes even when it never needs them:
cuda/mps/accelerator queries, AMP (GradScaler, bfloat16 autocast), backend flags, threads,
compile, TorchScript, distributed and ONNX."""

import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.onnx  # noqa: F401

torch.manual_seed(0)

device = (
    "cuda" if torch.cuda.is_available()
    else "mps" if torch.backends.mps.is_available()
    else "cpu"
)
print(f"running on: {device}", torch.device(device), torch.cuda.device_count())
acc = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(acc, torch.accelerator.is_available(), torch.backends.mps.is_built() in (True, False))
print(torch.cuda.is_bf16_supported() in (True, False), dist.is_available() in (True, False))
if dist.is_available() and dist.is_initialized():
    print("rank", dist.get_rank())

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
print(torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32)
torch.set_float32_matmul_precision("high")
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("highest")
torch.set_num_threads(1)
print(torch.get_num_threads())
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled())
torch.use_deterministic_algorithms(False)
torch.cuda.manual_seed_all(0)
torch.cuda.empty_cache()
print(torch.__version__ is not None, isinstance(torch.__version__, str))

# -- mixed precision on the CPU ------------------------------------------------------------
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
x = torch.randn(5, 8, device=device)
target = torch.randint(0, 4, (5,), device=device)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = model(x)
    loss = F.cross_entropy(out, target)
    mm = torch.mm(x, x.t())
    summed = x + x
print(out.dtype, loss.dtype, mm.dtype, summed.dtype, torch.is_autocast_enabled("cpu"))
print(out)
print(loss)
with torch.autocast("cpu"):
    with torch.autocast("cpu", enabled=False):
        print(model(x).dtype)
    print(torch.get_autocast_dtype("cpu"), F.linear(x, torch.ones(2, 8)).dtype)
    print(F.mse_loss(torch.mm(x, x.t()), torch.zeros(5, 5)).dtype)
print(torch.is_autocast_enabled("cpu"))

scaler = torch.amp.GradScaler(enabled=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=False):
        loss = F.cross_entropy(model(x), target)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    print(step, f"{loss.item():.5f}", scaler.get_scale(), scaler.is_enabled())
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    old_scaler = torch.cuda.amp.GradScaler()
print(old_scaler.is_enabled(), scaler.state_dict())

# -- compile, TorchScript ------------------------------------------------------------------
compiled = torch.compile(model, backend="eager")
print(torch.equal(compiled(x), model(x)))


@torch.compile(backend="eager")
def gelu_sum(t):
    return F.gelu(t).sum()


print(gelu_sum(torch.linspace(-2, 2, 5)))
opt_fn = torch.compile(lambda a, b: a * b + 1, backend="eager", fullgraph=True)
print(opt_fn(torch.tensor([2.0]), torch.tensor([3.0])))
scripted = torch.jit.script(model)
traced = torch.jit.trace(model, x)
print(torch.equal(scripted(x), model(x)), torch.equal(traced(x), model(x)))
print(torch.jit.is_scripting(), torch.compiler.is_compiling())

# -- tensor placement calls that are no-ops on the CPU --------------------------------------
y = x.to(device, non_blocking=True).cpu().pin_memory() if torch.cuda.is_available() else x.cpu()
print(y.device, y.is_cuda, x.to("cpu") is x, x.to(torch.device("cpu"), torch.float64).dtype)
print(next(model.parameters()).device, model.to("cpu") is model)
with torch.inference_mode():
    print(model(x).requires_grad, torch.is_inference_mode_enabled())
print(torch.get_default_dtype(), torch.initial_seed())
