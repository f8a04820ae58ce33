"""Tensors: creation, attributes, indexing, joining, broadcasting, views and printing."""

import numpy as np
import torch

torch.manual_seed(0)

# -- creating tensors ---------------------------------------------------------
grid = [[5, -1, 0], [2, 7, 3]]
from_list = torch.tensor(grid)
print(from_list, from_list.dtype, torch.tensor([[0.5], [1.5]]).dtype)

shared = torch.from_numpy(np.array(grid))
print(f"shared with NumPy -> {shared}")

like = torch.zeros_like(from_list), torch.full_like(from_list, 9), torch.rand_like(
    from_list, dtype=torch.float64)
for t in like:
    print(f"  {t.dtype}: {t.tolist()}")

size = (3, 2)
print("uniform:", torch.rand(size))
print("normal:", torch.randn(size))
print("ones/zeros:", torch.ones(size).sum().item(), torch.zeros(size, dtype=torch.long))
print(torch.arange(10), torch.arange(1, 4, 0.5))
print(torch.linspace(0, 1, steps=5), torch.logspace(0, 2, steps=3))
print(torch.eye(3), torch.full((2, 2), 7.5), torch.empty(0, 3).shape)
print(torch.zeros(2, 3, dtype=torch.int32), torch.ones(2, dtype=torch.bool))

# -- attributes ---------------------------------------------------------------
block = torch.rand(3, 4)
print(f"block is {tuple(block.shape)} {block.dtype} on {block.device} ({block.layout})")
print(block.ndim, block.dim(), block.numel(), block.size(1), block.element_size(), block.nbytes)

# -- indexing and slicing -----------------------------------------------------
tensor = torch.arange(16.0).reshape(4, 4)
print("row 0 =", tensor[0], "col 0 =", tensor[:, 0], "last col =", tensor[..., -1])
tensor[:, 1] = 0
print(tensor)
print(tensor[tensor > 5])
print(tensor[[0, 2], [1, 3]])
print(tensor[1:3, ::2])
print(tensor[None, -1].shape, tensor[1, 2], tensor[1, 2].item())
idx = torch.tensor([3, 0])
print(tensor.index_select(0, idx), tensor.gather(1, torch.tensor([[0], [1], [2], [3]])))
masked = tensor.clone()
masked[masked < 8] = -1.0
print(masked)

# -- joining ------------------------------------------------------------------
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape, torch.stack([from_list, from_list]).shape, torch.hstack([from_list, from_list]))
print(torch.chunk(torch.arange(7), 3), torch.split(torch.arange(5), [2, 3]))

# -- arithmetic ---------------------------------------------------------------
gram = tensor @ tensor.mT
out = torch.empty(4, 4)
torch.mm(tensor, tensor.mT, out=out)
print(gram, torch.equal(gram, tensor.matmul(tensor.mT)), torch.equal(gram, out))
squares = tensor.pow(2)
print(squares[2], torch.allclose(squares, tensor * tensor), (tensor / 4)[3])
total = tensor.sum()
print(total, total.item(), type(total.item()), tensor.mean(dim=0))
tensor.mul_(0.5).sub_(1)
print(tensor)
print(torch.tensor([7, -7]) // 2, torch.tensor([7, -7]) % 3, torch.tensor([1, 2]) / 2)

# -- broadcasting and type promotion -------------------------------------------
a = torch.arange(3).reshape(3, 1)
b = torch.arange(4)
print(a + b, (a * b).shape)
print(torch.randn(2, 1, 3) * torch.randn(4, 1))
print((torch.tensor([1, 2]) + 0.5).dtype, (torch.tensor([1, 2], dtype=torch.int8) + 1000).dtype)
print(torch.tensor([1.0], dtype=torch.float16) + torch.tensor(2.0, dtype=torch.float64))
print((torch.ones(2, dtype=torch.bool) + torch.ones(2, dtype=torch.uint8)).dtype)

# -- views ----------------------------------------------------------------------
v = torch.arange(12).view(3, 4)
print(v.stride(), v.t().is_contiguous(), v.t().contiguous().stride())
print(v.unsqueeze(0).shape, v.flatten(), v.permute(1, 0).shape, v[:, 1].stride())
w = v.view(2, 6)
w[0, 0] = 100
print(v[0, 0].item(), v.data_ptr() == w.data_ptr(), v.expand(2, 3, 4).stride())

# -- NumPy bridge -----------------------------------------------------------------
ones = torch.ones(4)
view = ones.numpy()
ones[1:3] += 2
print(ones, view, view.dtype)
arr = np.linspace(0.0, 1.0, 3)
back = torch.from_numpy(arr)
arr *= 10
print(back, torch.as_tensor(arr, dtype=torch.float32))

# -- printing ---------------------------------------------------------------------
print(torch.tensor([1e-8, 1.0, 1e8]))
print(torch.tensor([0.1, 2.0, 300.25]), torch.tensor([1e-5, 1.0]))
print(torch.randn(3, 3, dtype=torch.float64))
print(torch.tensor([True, False]), torch.tensor(3.5), torch.zeros(2, dtype=torch.bfloat16))
print(torch.tensor([float("nan"), float("inf"), -1.5]), torch.tensor([], dtype=torch.int64))
print(torch.arange(2000.0))
print(torch.randn(2, 3, 4))
torch.set_printoptions(precision=2)
print(torch.randn(4))
torch.set_printoptions(profile="default")
print(torch.tensor([[1 + 2j, 3.5 - 1j]]))

# -- reductions and selection -----------------------------------------------------
r = torch.randn(3, 5)
print(r.max(dim=1))
print(r.argmax(), r.mean(0), r.std(), r.sum(dim=1, keepdim=True))
print(torch.topk(r, 2))
print(torch.sort(r[0], descending=True))
print(torch.where(r > 0, r, torch.zeros_like(r)))
print(r.clamp(-0.5, 0.5), r.abs().sqrt().exp().log())
print(torch.cumsum(torch.arange(5), 0), torch.unique(torch.tensor([3, 1, 3, 2, 1])))

# -- legacy constructors and helpers ----------------------------------------------
print(torch.Tensor([1, 2]), torch.Tensor(2, 3).shape, torch.FloatTensor(2, 3).dtype)
print(torch.LongTensor([1, 2]), torch.is_tensor(r), torch.is_tensor([1]), torch.numel(r))
print(torch.typename(r), isinstance(r, torch.Tensor), isinstance(r, torch.FloatTensor))
print(type(r), torch.Tensor, torch.float32, torch.Size([2, 3]), r.type())
