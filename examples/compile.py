"""`torch.compile` in ember: a training step captured into graphs, fused and replayed.

The step below runs eagerly, then compiled. Compiling changes nothing about the numbers
(the compiled programs run eager's kernels in eager's order, and fused pointwise loops
round as the kernels do): both runs print the same losses. Then the captured graph is
printed as a table, the Python program that runs it, and one fused kernel's C source;
finally eager and compiled are timed side by side.

    .venv/bin/python examples/compile.py
"""

import argparse
import time

import ember as torch
from ember import nn
from ember.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


x = torch.randn(64, 64)
y = torch.randint(0, 10, (64,))


def training_step(model, opt):
    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


eager = training_step(*make())
compiled = torch.compile(training_step(*make()))
for i in range(args.steps):
    le, lc = eager().item(), compiled().item()
    if i % 10 == 0 or i == args.steps - 1:
        print(f"step {i:3d}  eager loss {le:.6f}  compiled loss {lc:.6f}  same: {le == lc}")

print(f"\ngraphs compiled: {len(compiled.graphs)}, graph breaks: {len(compiled.breaks)}")
graph = compiled.graphs[-1]
print("\nthe step's graph (first 12 lines):")
print("\n".join(graph.table().splitlines()[:12]))
program = compiled.programs[graph.key()]
print("\nthe program that runs it (first 12 lines):")
print("\n".join(program.code.splitlines()[:12]))


@torch.compile
def gelu_ish(a, b):
    return (a * b + 1).relu() * 0.5


gelu_ish(torch.randn(256, 256), torch.randn(256, 256))
(fused,) = gelu_ish.programs.values()
if hasattr(fused, "c_source"):
    print("\none fused kernel, as C:")
    print(fused.c_source.split("typedef", 1)[0].strip().splitlines()[-1])
    print("typedef" + fused.c_source.split("typedef", 1)[1])
else:
    print("\n(no C compiler here: graphs run as generated Python over the NumPy kernels)")


def timed(fn, n=200):
    fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


a, b = torch.randn(1 << 20), torch.randn(1 << 20)
plain = lambda: (a * b + 1).relu() * 0.5  # noqa: E731
print(f"\n(a * b + 1).relu() * 0.5 on 1M floats: eager {timed(plain, 50) * 1e3:.2f} ms, "
      f"compiled {timed(lambda: gelu_ish(a, b), 50) * 1e3:.2f} ms")
print(f"training step: eager {timed(eager) * 1e6:.0f} us, compiled "
      f"{timed(compiled) * 1e6:.0f} us")
