"""The global switches a real program flips and then puts back: default dtype and device,
threads, RNG state, deterministic mode, print options, grad / inference modes, anomaly
detection, matmul precision, backend flags, denormals and warning behaviour."""

import functools
import math
import threading
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.utils.deterministic

torch.manual_seed(0)


def section(title):
    print(f"\n== {title} ==")


# -- default dtype ---------------------------------------------------------------------------
section("default dtype")
before = torch.get_default_dtype()
print("before:", before)
torch.set_default_dtype(torch.float64)
try:
    print(torch.get_default_dtype(), torch.zeros(2).dtype, torch.ones(2, 3).dtype)
    print(torch.tensor([1.5, 2.0]).dtype, torch.tensor(3.0).dtype, torch.tensor([1, 2]).dtype)
    print(torch.tensor([1 + 2j]).dtype, torch.tensor(1j).dtype,
          torch.complex(torch.zeros(1), torch.ones(1)).dtype)
    print(torch.arange(3).dtype, torch.arange(0.0, 1.0, 0.25).dtype, torch.linspace(0, 1, 5).dtype)
    print(torch.empty(2).dtype, torch.full((2,), 7).dtype, torch.full((2,), 0.5).dtype)
    print(torch.scalar_tensor(1).dtype, torch.scalar_tensor(True), torch.scalar_tensor(2.5))
    print(torch.rand(2).dtype, torch.randn(2).dtype, torch.eye(2).dtype,
          torch.randint(0, 5, (2,)).dtype)
    i = torch.tensor([1, 2, 3])
    print((i * 0.5).dtype, (i / 2).dtype, (i + 1).dtype, (i * 2.5).tolist())
    print(torch.tensor([1, 2], dtype=torch.float32).mul(2.0).dtype, torch.sqrt(i).dtype)
    lin = nn.Linear(3, 2)
    conv = nn.Conv1d(1, 2, 3)
    print(lin.weight.dtype, lin.bias.dtype, conv.weight.dtype, nn.BatchNorm1d(2).running_mean.dtype)
    print(lin(torch.ones(1, 3)).dtype, torch.randn(2, 2).mean().dtype)
    print(torch.tensor(1 / 3).item(), torch.tensor([0.1]).sum().item())
    print(torch.as_tensor([1.0]).dtype, torch.as_tensor(np.ones(2, np.float32)).dtype,
          torch.logspace(0, 1, 3).dtype, torch.randn_like(torch.ones(2, dtype=torch.float32)).dtype)
    print(torch.finfo().eps, torch.finfo().dtype, torch.tensor(3) * math.pi, torch.tensor(2) ** 0.5)
    print(torch.distributions.Normal(0.0, 1.0).sample().dtype, nn.LSTM(2, 3).weight_ih_l0.dtype,
          nn.Embedding(3, 2).weight.dtype, torch.tensor([True, False]).sum().dtype)
    print(torch.tensor(1 / 3))
    for bad in (torch.int64, torch.int32, torch.bool):
        try:
            torch.set_default_dtype(bad)
        except TypeError as e:
            print(type(e).__name__, e)
    torch.set_default_dtype(torch.float16)
    print(torch.get_default_dtype(), torch.zeros(1).dtype, torch.tensor([1.0]).dtype,
          torch.arange(2.0).dtype)
    torch.set_default_dtype(torch.bfloat16)
    print(torch.get_default_dtype(), torch.ones(1).dtype)
finally:
    torch.set_default_dtype(before)
print("after:", torch.get_default_dtype(), torch.zeros(1).dtype, torch.tensor([1j]).dtype)

# -- default device --------------------------------------------------------------------------
section("default device")
before = torch.get_default_device()
print("before:", before)
torch.set_default_device("cpu")
try:
    print(torch.get_default_device(), torch.zeros(2).device, nn.Linear(2, 2).weight.device)
finally:
    torch.set_default_device(None)
print("after reset:", torch.get_default_device())
with torch.device("cpu"):
    print("inside:", torch.get_default_device(), torch.ones(3).device, torch.arange(2).device)
    print(torch.device("cpu") == torch.get_default_device())
print("after:", torch.get_default_device(), torch.device("cpu", 0), torch.device("cpu").type)
print(repr(torch.device("cpu")), torch.device("cpu").index)
with torch.device("meta"):  # build a big model without allocating its weights
    big = nn.Sequential(nn.Linear(1000, 1000), nn.LayerNorm(1000))
    print("meta:", torch.get_default_device(), big[0].weight.device, torch.arange(3).device)
print(sum(p.numel() for p in big.parameters()), big[0].weight.is_meta, torch.get_default_device())
try:  # a GPU-first program on a CPU-only machine
    torch.set_default_device("cuda:0")
    torch.zeros(1)
except (AssertionError, RuntimeError) as e:
    print("no GPU:", type(e).__name__, e)
finally:
    torch.set_default_device(None)
print("after fallback:", torch.get_default_device(), torch.zeros(1).device)

# -- threads ---------------------------------------------------------------------------------
section("threads")
threads = torch.get_num_threads()
print("before > 0:", threads > 0, torch.get_num_interop_threads() > 0)
torch.set_num_threads(1)
print(torch.get_num_threads())
torch.set_num_threads(2)
print(torch.get_num_threads())
for bad in (0, -1):
    try:
        torch.set_num_threads(bad)
    except RuntimeError as e:
        print(type(e).__name__, str(e).splitlines()[0])
_ = torch.randn(64, 64) @ torch.randn(64, 64)
for n in (2, 4):  # (the inter-op pool is sized once a process)
    try:
        torch.set_num_interop_threads(n)
        print("interop set:", torch.get_num_interop_threads())
    except RuntimeError as e:
        print(type(e).__name__, str(e).splitlines()[0])
torch.set_num_threads(threads)
print("after restored:", torch.get_num_threads() == threads)

# -- RNG state -------------------------------------------------------------------------------
section("rng")
g = torch.manual_seed(1234)
print(type(g).__name__, torch.initial_seed(), g.initial_seed())
a = torch.rand(3)
state = torch.get_rng_state()
print(state.dtype, state.shape, state[:8].tolist())
b = torch.rand(3)
torch.set_rng_state(state)
c = torch.rand(3)
print(a, torch.equal(b, c))
with torch.random.fork_rng():
    torch.manual_seed(7)
    inner = torch.randn(2)
    print("inside fork:", inner, torch.initial_seed())
print("after fork:", torch.initial_seed(), torch.equal(torch.rand(3), torch.rand(3)))
torch.set_rng_state(state)
print(torch.equal(torch.rand(3), c))
with torch.random.fork_rng(enabled=False):
    torch.manual_seed(99)
print("fork disabled leaks:", torch.initial_seed())
s = torch.seed()
print(isinstance(s, int), s == torch.initial_seed(), s >= 0)
try:
    torch.set_rng_state(torch.zeros(5))
except (RuntimeError, TypeError) as e:
    print(type(e).__name__, e)
try:
    torch.manual_seed(-1)
    print("negative seed ok:", torch.initial_seed())
except RuntimeError as e:
    print(type(e).__name__, e)
torch.manual_seed(0)
print(torch.initial_seed(), torch.random.initial_seed(), torch.randint(0, 100, (5,)).tolist())

# -- deterministic algorithms ----------------------------------------------------------------
section("deterministic")
print("before:", torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
src = torch.arange(6.0)
idx = torch.tensor([0, 1, 0, 1, 2, 2])
print(torch.zeros(3).index_add_(0, idx, src), torch.zeros(3).scatter_add_(0, idx, src))
print(torch.bincount(torch.tensor([0, 1, 1, 3])), torch.randn(4).sort().indices.dtype)
# uninitialised memory is filled, so reading it by mistake reads the same values every run
print(torch.empty(3), torch.empty(2, dtype=torch.int32), torch.empty_like(torch.ones(2, 2)))
print(torch.ones(2).new_empty(2), torch.empty(2, dtype=torch.uint8),
      torch.empty(1, dtype=torch.complex64))
grown = torch.ones(2)
grown.resize_(4)
print(grown)
print("fill:", torch.utils.deterministic.fill_uninitialized_memory)
torch.utils.deterministic.fill_uninitialized_memory = False
print("fill off:", torch.utils.deterministic.fill_uninitialized_memory, torch.empty(0))
torch.utils.deterministic.fill_uninitialized_memory = True
torch.use_deterministic_algorithms(True, warn_only=True)
print(torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False)
print("after:", torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
for bad in ("yes", 1):
    try:
        torch.use_deterministic_algorithms(bad)
    except TypeError as e:
        print(type(e).__name__, e)
try:
    torch.use_deterministic_algorithms(True, warn_only=None)
except TypeError as e:
    print(type(e).__name__, e)
print("still:", torch.are_deterministic_algorithms_enabled())

# -- print options ---------------------------------------------------------------------------
section("printoptions")
torch.manual_seed(0)
small = torch.tensor([1.123456789, 22.5, 333.0, 1e-5])
big = torch.arange(2000.0).reshape(40, 50) / 7
wide = torch.linspace(0, 1, 30)
ints = torch.arange(1200)


def show(tag):
    print(f"-- {tag}")
    print(small)
    print(big)
    print(wide)
    print(ints)


show("default")
try:
    torch.set_printoptions(precision=2)
    show("precision=2")
    torch.set_printoptions(sci_mode=True)
    print(small, torch.tensor([0.5, 1.5]))
    torch.set_printoptions(sci_mode=False)
    print(small, torch.tensor([1e-8, 1e8]))
    torch.set_printoptions(sci_mode=None, precision=4, threshold=10, edgeitems=2)
    show("threshold=10 edgeitems=2")
    torch.set_printoptions(threshold=1000, edgeitems=3, linewidth=40)
    print(wide)
    print(torch.randn(3, 12))
    torch.set_printoptions(profile="short")
    show("short")
    torch.set_printoptions(profile="full")
    print(torch.arange(30.0).reshape(3, 10) / 3)
    print(torch.arange(1500)[-20:])
    torch.set_printoptions(profile="default")
    show("default profile")
finally:
    torch.set_printoptions(profile="default")
    torch.set_printoptions(sci_mode=None)
print("restored:", torch.tensor([1 / 3, 1e-6]), torch.tensor(2.5, dtype=torch.float64))
saved = torch._tensor_str.get_printoptions()
print(torch._tensor_str.PRINT_OPTS)
torch.set_printoptions(threshold=float("inf"), precision=0)
print(len(str(torch.arange(1200))), torch.tensor([1.4, 2.6, 100.5]), torch._tensor_str.PRINT_OPTS)
torch.set_printoptions(**saved)
with torch._tensor_str.printoptions(precision=1, sci_mode=False):
    print("ctx:", torch.tensor([1 / 3, 1e-6, 1e6]))
print("after:", torch._tensor_str.get_printoptions())

# -- grad mode -------------------------------------------------------------------------------
section("grad mode")
x = torch.tensor([1.0, 2.0], requires_grad=True)
print("before:", torch.is_grad_enabled())
torch.set_grad_enabled(False)
y = x * 2
print(torch.is_grad_enabled(), y.requires_grad, y.grad_fn)
torch.set_grad_enabled(True)
y = x * 2
print(torch.is_grad_enabled(), y.requires_grad, type(y.grad_fn).__name__)
with torch.set_grad_enabled(False):
    print("ctx:", torch.is_grad_enabled(), (x + 1).requires_grad)
    with torch.enable_grad():
        print("nested enable:", (x + 1).requires_grad)
print("after ctx:", torch.is_grad_enabled())


@torch.set_grad_enabled(False)
def frozen(t):
    return t * 3, torch.is_grad_enabled()


@torch.no_grad()
def frozen2(t):
    return t * 3


out, mode = frozen(x)
print("decorated:", out.requires_grad, mode, frozen2(x).requires_grad, torch.is_grad_enabled())
is_train = False
with torch.set_grad_enabled(is_train):
    print("eval phase:", (x ** 2).requires_grad)
print(torch.set_grad_enabled(False), torch.is_grad_enabled())
torch.set_grad_enabled(True)
try:
    torch.set_grad_enabled(1)
except TypeError as e:
    print(type(e).__name__, e)
seen = []
with torch.no_grad():  # grad mode is per thread: a new thread starts with it on
    worker = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
    worker.start()
    worker.join()
print("thread:", seen, torch.is_grad_enabled())

# -- inference mode --------------------------------------------------------------------------
section("inference mode")
print("before:", torch.is_inference_mode_enabled())
w = torch.tensor([1.0, -1.0], requires_grad=True)
with torch.inference_mode():
    inf = torch.ones(2) * 3
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled(), inf.is_inference(),
          inf.requires_grad)
    print((w * 2).requires_grad, (w * 2).is_inference())
    with torch.inference_mode(False):
        print("inner off:", torch.is_inference_mode_enabled(), (w * 2).requires_grad)
print("after:", torch.is_inference_mode_enabled(), torch.is_grad_enabled(),
      torch.ones(1).is_inference())
try:
    (inf * w).sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
normal = inf.clone()
try:
    inf.requires_grad_(True)
except RuntimeError as e:
    print(type(e).__name__, e)
print(normal.is_inference(), normal.add_(1), normal._version)
try:
    inf.add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    print(inf._version)
except RuntimeError as e:
    print(type(e).__name__, e)


@torch.inference_mode()
def predict(t):
    return t.sum() * 2


p = predict(w)
print(p, p.is_inference(), p.requires_grad)

# -- anomaly detection -----------------------------------------------------------------------
section("anomaly")
print("before:", torch.is_anomaly_enabled())
z = torch.tensor([0.0, 1.0], requires_grad=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.detect_anomaly():
        print("inside:", torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        try:
            (torch.sqrt(z) * 0).sum().backward()
            print("grad:", z.grad)
        except RuntimeError as e:
            print(type(e).__name__, e)
    print("after ctx:", torch.is_anomaly_enabled())
    torch.autograd.set_detect_anomaly(True)
    print("set:", torch.is_anomaly_enabled())
    try:
        q = torch.tensor([-1.0, 4.0], requires_grad=True)
        torch.log(q).sum().backward()
        print("log grad:", q.grad)
        r = torch.tensor([0.0], requires_grad=True)
        (r / r).sum().backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
    finally:
        torch.autograd.set_detect_anomaly(False)
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        print("check_nan off:", torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        r = torch.tensor([0.0], requires_grad=True)
        (r / r).sum().backward()
        print(r.grad)
print("after:", torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())

# -- matmul precision and backend flags ------------------------------------------------------
section("precision and backends")
prec = torch.get_float32_matmul_precision()
print("before:", prec)
for p in ("high", "medium", "highest"):
    torch.set_float32_matmul_precision(p)
    print(p, torch.get_float32_matmul_precision())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.set_float32_matmul_precision("fastest")
for w in caught:
    print(w.category.__name__, str(w.message).split(";")[0])
print("unchanged:", torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision(prec)
print("after:", torch.get_float32_matmul_precision())
flags = (torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
print("cudnn before:", flags, torch.backends.cudnn.enabled)
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
print("cudnn set:", torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
with torch.backends.cudnn.flags(enabled=False, benchmark=False, deterministic=False):
    print("cudnn flags ctx:", torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark)
torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = flags
print("cudnn after:", torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
print("mkldnn:", isinstance(torch.backends.mkldnn.is_available(), bool),
      torch.backends.mkldnn.enabled)
print("opt_einsum:", torch.backends.opt_einsum.is_available() in (True, False),
      torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy)
old_strategy = torch.backends.opt_einsum.strategy
if torch.backends.opt_einsum.is_available():
    torch.backends.opt_einsum.strategy = "greedy"
    print(torch.backends.opt_einsum.strategy)
torch.backends.opt_einsum.enabled = False
e = torch.einsum("ij,jk,kl->il", torch.ones(2, 3), torch.ones(3, 4), torch.ones(4, 2))
print(torch.backends.opt_einsum.enabled, e)
torch.backends.opt_einsum.enabled = True
if torch.backends.opt_einsum.is_available():
    torch.backends.opt_einsum.strategy = old_strategy
print("opt_einsum after:", torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy)
print(isinstance(torch.backends.cpu.get_cpu_capability(), str))
print("tf32:", torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
torch.backends.cuda.matmul.allow_tf32 = True  # the legacy switch for the precision
print("tf32 on:", torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
torch.backends.cuda.matmul.allow_tf32 = False
torch.set_float32_matmul_precision("high")
print("high:", torch.backends.cuda.matmul.allow_tf32)
torch.set_float32_matmul_precision(prec)
print("restored:", torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
for flag in ("benchmark", "deterministic"):
    try:
        setattr(torch.backends.cudnn, flag, 1)
    except RuntimeError as e:
        print(type(e).__name__, e)
print("cudnn unchanged:", torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
if torch.backends.opt_einsum.is_available():
    try:
        with torch.backends.opt_einsum.flags(strategy="fastest"):
            pass
    except ValueError as e:
        print(type(e).__name__, e)
    print("opt_einsum after:", torch.backends.opt_einsum.enabled,
          torch.backends.opt_einsum.strategy)

# -- denormals ------------------------------------------------------------------------------
section("denormals")
tiny = torch.tensor([1e-323], dtype=torch.float64)
print("before:", tiny, tiny.item() > 0)
ok = torch.set_flush_denormal(True)
print(type(ok).__name__)
if ok:
    print("flushed:", torch.tensor([1e-323], dtype=torch.float64))
torch.set_flush_denormal(False)
print("after:", torch.tensor([1e-323], dtype=torch.float64), torch.tensor([1e-40]))

# -- warnings and tracing queries -----------------------------------------------------------
section("warnings and tracing")
print("before:", torch.is_warn_always_enabled())
torch.set_warn_always(True)
print(torch.is_warn_always_enabled())
torch.set_warn_always(False)
print("after:", torch.is_warn_always_enabled())
print(torch.compiler.is_compiling(), torch.jit.is_scripting(), torch.jit.is_tracing(),
      torch.compiler.is_dynamo_compiling())


@functools.cache
def report():
    return (torch.get_default_dtype(), torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
            torch.are_deterministic_algorithms_enabled(), torch.get_float32_matmul_precision(),
            torch.is_anomaly_enabled(), torch.get_default_device())


section("final state")
print(report())
