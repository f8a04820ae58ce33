"""First-order gradients of the core ops against torch (float32) and finite differences
(float64, through ember.autograd.gradcheck): elementwise, reductions, matmul, views,
broadcasting, and advanced indexing with repeated indices."""

import numpy as np
import pytest
import torch

import ember

from helpers import check_grads, check_op, rand_array

# name: (fn taking a module-agnostic tensor API, input shapes, (low, high))
OPS = {
    "add_broadcast": (lambda a, b: a + b, [(3, 4), (4,)], (-2, 2)),
    "sub_broadcast_both": (lambda a, b: a - b, [(3, 1), (1, 4)], (-2, 2)),
    "mul_broadcast_leading": (lambda a, b: a * b, [(2, 3, 4), (3, 1)], (-2, 2)),
    "div": (lambda a, b: a / b, [(3, 4), (4,)], (0.5, 2)),
    "rdiv_scalar": (lambda a: 2.0 / a, [(5,)], (0.5, 2)),
    "pow_scalar": (lambda a: a ** 2.5, [(5,)], (0.5, 2)),
    "pow_tensor_broadcast": (lambda a, b: a ** b, [(3, 4), (4,)], (0.5, 2)),
    "exp": (lambda a: a.exp(), [(3, 4)], (-2, 2)),
    "log": (lambda a: a.log(), [(3, 4)], (0.5, 3)),
    "sin": (lambda a: a.sin(), [(3, 4)], (-3, 3)),
    "cos": (lambda a: a.cos(), [(3, 4)], (-3, 3)),
    "tanh": (lambda a: a.tanh(), [(3, 4)], (-2, 2)),
    "sigmoid": (lambda a: a.sigmoid(), [(3, 4)], (-3, 3)),
    "relu": (lambda a: a.relu(), [(3, 4)], (-2, 2)),
    "neg_abs": (lambda a: -a.abs(), [(3, 4)], (0.1, 2)),
    "sum_all": (lambda a: a.sum(), [(3, 4)], (-2, 2)),
    "sum_dims_keepdim": (lambda a: a.sum((0, 2), keepdim=True), [(2, 3, 4)], (-2, 2)),
    "mean_dim": (lambda a: a.mean(-1), [(3, 4)], (-2, 2)),
    "amax_dim": (lambda a: a.amax(1), [(3, 4)], (-2, 2)),
    "max_all": (lambda a: a.max(), [(3, 4)], (-2, 2)),
    "max_dim_values": (lambda a: a.max(0)[0], [(3, 4)], (-2, 2)),
    "matmul_mm": (lambda a, b: a @ b, [(3, 4), (4, 2)], (-1, 1)),
    "matmul_batched_broadcast": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)], (-1, 1)),
    "matmul_vec": (lambda a, b: a @ b, [(4,), (4, 3)], (-1, 1)),
    "where": (lambda a, b: (a > 0).float().mul(0) + a.where(a > 0, b), [(3, 4), (3, 4)],
              (-2, 2)),
}

VIEWS = {
    "view_reshape": lambda a: a.view(4, 3).reshape(2, 6) * 2,
    "transpose_contiguous": lambda a: a.t().contiguous() * a.t(),
    "permute": lambda a: a.reshape(3, 2, 2).permute(2, 0, 1) ** 2,
    "expand": lambda a: a[:, :1].expand(3, 5) * 3,
    "unsqueeze_squeeze": lambda a: a.unsqueeze(1).squeeze(1).exp(),
    "slice_step": lambda a: a[::2, 1::2] * a[1:, :2].sum(),
    "select": lambda a: a[1] * a[:, 2].sum(),
    "narrow_diagonal": lambda a: a.narrow(1, 1, 3).diagonal() * 2,
    "unbind": lambda a: a.unbind(1)[2] * a.unbind(0)[0].sum(),
    "split_chunk": lambda a: a.split(2, dim=1)[1] * a.chunk(2, dim=1)[0],
    "as_strided_overlapping": lambda a: a.as_strided((3, 3), (1, 1)) * 2,
    "unfold": lambda a: a.unfold(1, 2, 1).sum(-1),
    "flatten_t": lambda a: a.flatten().view(2, 6).t() ** 2,
    "overlapping_views_summed": lambda a: a[:2] * a[1:],
}

INDEXING = {
    "repeated_rows": lambda a: a[[0, 2, 2, 0, 2]],
    "repeated_pairs": lambda a: a[[1, 1, 0], [2, 2, 3]],
    "tensor_index_repeated": lambda a: a[torch_or_ember(a).tensor([[0, 0], [2, 0]])],
    "slice_then_repeated": lambda a: a[:, [3, 3, 1]] * 2,
    "bool_mask": lambda a: a[a > 0] * 3,
    "ellipsis_none": lambda a: a[..., None, [0, 0]],
    "negative_indices": lambda a: a[[-1, -1, 0], -2],
    "gather_repeated": lambda a: a.gather(1, torch_or_ember(a).tensor([[0, 0], [3, 3], [1, 1]])),
}


def torch_or_ember(t):
    return torch if isinstance(t, torch.Tensor) else ember


def _arrays(shapes, low, high, dtype=np.float32):
    return [rand_array(s, dtype, low=low, high=high, seed=i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("name", OPS)
def test_op_gradients_match_torch(name):
    fn, shapes, (low, high) = OPS[name]
    check_op(fn, fn, *_arrays(shapes, low, high), grad_rtol=1e-5, grad_atol=1e-6)


@pytest.mark.parametrize("name", OPS)
def test_op_passes_gradcheck(name):
    fn, shapes, (low, high) = OPS[name]
    inputs = [ember.tensor(a, requires_grad=True) for a in _arrays(shapes, low, high, np.float64)]
    assert ember.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("name", VIEWS)
def test_view_gradients_match_torch(name):
    check_op(VIEWS[name], VIEWS[name], rand_array((3, 4)))


@pytest.mark.parametrize("name", ["expand", "slice_step", "as_strided_overlapping", "unfold"])
def test_view_gradients_against_finite_differences(name):
    check_grads(VIEWS[name], rand_array((3, 4), np.float64))


@pytest.mark.parametrize("name", INDEXING)
def test_indexing_gradients_match_torch(name):
    check_op(INDEXING[name], INDEXING[name], rand_array((3, 4)))


def test_repeated_indices_accumulate():
    x = ember.zeros(3, requires_grad=True)
    x[[0, 0, 0, 2]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_broadcast_gradient_is_summed_to_each_input_shape():
    a = ember.ones(3, 1, requires_grad=True)
    b = ember.ones(4, requires_grad=True)
    c = ember.tensor(2.0, requires_grad=True)
    (a * b * c).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[8.0]] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [6.0] * 4
    assert c.grad.shape == () and c.grad.item() == 12.0


def test_mixed_dtypes_give_each_input_its_own_dtype():
    a = ember.ones(3, dtype=ember.float32, requires_grad=True)
    b = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is ember.float32 and b.grad.dtype is ember.float64


def test_non_contiguous_leaf_gets_its_gradient():
    base = ember.tensor(rand_array((4, 3)))
    x = base.t().detach().requires_grad_()
    xt = torch.tensor(rand_array((4, 3))).t().detach().requires_grad_()
    for t in (x, xt):
        (t * t.sum(0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5)
