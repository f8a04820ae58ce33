"""Tensor.share_memory_ / is_shared and Module.share_memory: storage moved into memory that
forked processes share (Hogwild training), compared with torch. Values are copies and small
integers, so every comparison is exact."""

import multiprocessing

import pytest
import torch

import ember

FORK = multiprocessing.get_context("fork")


def in_child(fn, *args):
    """Run fn(*args) in a forked process and wait for it."""
    p = FORK.Process(target=fn, args=args)
    p.start()
    p.join()
    assert p.exitcode == 0


def _fill(t, value):
    t.detach().fill_(value)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_a_write_in_a_forked_child_reaches_the_parent_only_once_shared(lib):
    private, shared = lib.zeros(3), lib.zeros(3)
    assert (private.is_shared(), shared.is_shared()) == (False, False)
    assert shared.share_memory_() is shared
    assert shared.is_shared() and shared.untyped_storage().is_shared()
    in_child(_fill, private, 5.0)
    in_child(_fill, shared, 5.0)
    assert private.tolist() == [0.0] * 3
    assert shared.tolist() == [5.0] * 3


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_views_made_before_sharing_stay_views_of_the_shared_storage(lib):
    base = lib.arange(6.0)
    base.tolist()  # (ember caches the NumPy view of the old buffer here)
    view, cols = base[1:4], base.view(2, 3).t()
    cols.tolist()
    view.share_memory_()  # sharing through a view moves the whole storage
    assert base.is_shared() and cols.is_shared()
    assert view._base is base and view.storage_offset() == 1
    assert view.data_ptr() == base.data_ptr() + 4
    in_child(_fill, view, -1.0)
    assert base.tolist() == [0.0, -1.0, -1.0, -1.0, 4.0, 5.0]
    assert cols.tolist() == [[0.0, -1.0], [-1.0, 4.0], [-1.0, 5.0]]
    view.add_(1.0)  # and the parent's own writes go to the shared memory too
    assert base.tolist() == [0.0, 0.0, 0.0, 0.0, 4.0, 5.0]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_a_tensor_that_requires_grad_keeps_its_grad_and_graph(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.zeros(3)
    y = x * 3  # y's node saved nothing of y; exp's saves its own output
    z = y.exp()
    assert z.share_memory_() is z
    assert x.requires_grad and not x.is_shared() and not x.grad.is_shared()
    in_child(_fill, z, 2.0)
    z.sum().backward()  # the saved output is the shared one (the child's write shows)
    assert x.grad.tolist() == [6.0] * 3
    x.share_memory_()
    assert x.is_shared() and not x.grad.is_shared() and x.requires_grad


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_module_share_memory_moves_parameters_buffers_and_grads(lib):
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    model[0].weight.grad = lib.ones(2, 2)
    assert model.share_memory() is model
    shared = {name: t.is_shared() for name, t in model.state_dict().items()}
    assert all(shared.values()), shared
    assert model[0].weight.grad.is_shared() and model[0].bias.grad is None
    in_child(_fill, model[0].bias, 0.5)
    assert model[0].bias.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_empty_bfloat16_and_meta_tensors(lib):
    empty = lib.empty(0).share_memory_()
    assert empty.is_shared() and empty.shape == (0,)
    half = lib.tensor([1.5, -2.0], dtype=lib.bfloat16).share_memory_()
    assert half.is_shared() and half.tolist() == [1.5, -2.0] and half.dtype == lib.bfloat16
    with pytest.raises(RuntimeError, match="_share_fd_: only available on CPU"):
        lib.empty(2, device="meta").share_memory_()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_module_share_memory_refuses_meta_and_uninitialized_parameters(lib):
    with pytest.raises(RuntimeError, match="_share_fd_: only available on CPU"):
        lib.nn.Linear(2, 2, device="meta").share_memory()
    with pytest.raises(RuntimeError, match="^Can't share memory on an uninitialized parameter"):
        lib.nn.LazyLinear(2).share_memory()
