"""What a program prints about dtypes, sizes, types and errors reads `torch.` under ember.run.

Each error line is the exception's type and message, as a program that logs them shows it.
"""

import torch
import torch.nn as nn

x = torch.ones(2, 3)
print(x.dtype, x.shape, x.size(), torch.float16, torch.Size([2]), torch.get_default_dtype())
print(repr(x.dtype), repr(x.shape), x.type(), x.long().type(), torch.strided, x.layout)
print(type(x), type(x.shape), type(x.dtype), type(x.device))
print(type(nn.Parameter(torch.ones(1))), torch.Tensor.__module__, nn.Module.__module__)
print(torch.max(x, 0))
print(torch.sort(torch.tensor([3, 1])))
print(torch.finfo(torch.float32))
print(torch.iinfo(torch.int8))
print(nn.Parameter(torch.ones(1)))
print(nn.Linear(2, 2))
print(torch.device("cpu"), repr(torch.device("cpu")))
for dtype in (torch.int8, torch.float64, torch.bfloat16, torch.complex64, torch.bool):
    print(torch.zeros(2, dtype=dtype), torch.tensor([], dtype=dtype))
print(torch.tensor([1.5], dtype=torch.float64, requires_grad=True))

ERRORS = [
    lambda: x.view(4),
    lambda: x + torch.ones(4),
    lambda: x.to(torch.int8).requires_grad_(),
    lambda: torch.ones(2, dtype=torch.long, requires_grad=True),
    lambda: x.__setitem__(0, "a"),
    lambda: torch.zeros(2).long().sin_(),
    lambda: torch.iinfo(torch.float32),
    lambda: torch.iinfo(torch.bool),
    lambda: torch.finfo(torch.int32),
    lambda: torch.ones(2).cuda(),
    lambda: torch.ones(2).to("mps"),
    lambda: torch.ones(2).to("xpu"),
    lambda: torch.device("tpu"),
    lambda: torch.cuda.synchronize(),
    lambda: torch.ones(3, requires_grad=True)[0].add_(1),
    lambda: (torch.ones(3, 2, requires_grad=True) * 1).unbind(0)[1].add_(1),
]
for make in ERRORS:
    try:
        make()
        print("no error")
    except Exception as e:  # noqa: BLE001 - printed as a program would log it
        print(f"{type(e).__name__}: {e}")
