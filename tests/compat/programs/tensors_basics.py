"""Tensors: creation, attributes, indexing, joining, broadcasting, views and printing."""

import numpy as np
import torch

torch.manual_seed(0)

# -- creating tensors ---------------------------------------------------------
data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data, x_data.dtype)

np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(f"From NumPy:\n{x_np}\n")

x_ones = torch.ones_like(x_data)
print(f"Ones Tensor:\n {x_ones}\n")
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(f"Random Tensor:\n {x_rand}\n")

shape = (2, 3)
print(f"Random: {torch.rand(shape)}")
print(f"Ones: {torch.ones(shape)}")
print(f"Zeros: {torch.zeros(shape)}")
print(torch.arange(10), torch.arange(1, 4, 0.5))
print(torch.linspace(0, 1, steps=5), torch.logspace(0, 2, steps=3))
print(torch.eye(3), torch.full((2, 2), 7.5), torch.empty(0, 3).shape)
print(torch.zeros(2, 3, dtype=torch.int32), torch.ones(2, dtype=torch.bool))

# -- attributes ---------------------------------------------------------------
tensor = torch.rand(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
print(tensor.ndim, tensor.dim(), tensor.numel(), tensor.size(1), tensor.element_size())

# -- indexing and slicing -----------------------------------------------------
tensor = torch.arange(16.0).reshape(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
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
print(t1.shape, torch.stack([x_data, x_data]).shape, torch.hstack([x_data, x_data]))
print(torch.chunk(torch.arange(7), 3), torch.split(torch.arange(5), [2, 3]))

# -- arithmetic ---------------------------------------------------------------
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1, torch.equal(y1, y2), torch.equal(y1, y3))
z1 = tensor * tensor
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z1[2], torch.allclose(z1, z3))
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))
print(f"{tensor}\n")
tensor.add_(5)
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
t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t}\nn: {n}")
n2 = np.ones(3)
t2 = torch.from_numpy(n2)
np.add(n2, 1, out=n2)
print(t2)

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
