"""Tensor hooks that return a replacement gradient, register_multi_grad_hook, and the
random stream gradgradcheck draws its cotangents from, against torch."""

from __future__ import annotations

import functools

import pytest
import torch

import ember


def _named_hook(g):
    return g.sum()


BAD_HOOKS = {
    "size": lambda lib: (lambda g: lib.ones(4)),
    "size_named": lambda lib: _named_hook,
    "size_partial": lambda lib: functools.partial(lambda k, g: lib.ones(k), 2),
    "dtype": lambda lib: (lambda g: g.double()),
    "int_dtype": lambda lib: (lambda g: g.long()),
    "not_a_tensor": lambda lib: (lambda g: 3),
}


def _error(lib, hook_name, leaf):
    x = lib.ones(3, requires_grad=True)
    t = x if leaf else x * 1
    t.register_hook(BAD_HOOKS[hook_name](lib))
    try:
        (t * 2).sum().backward()
    except Exception as e:  # noqa: BLE001  (the type is what we compare)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "nonleaf"])
@pytest.mark.parametrize("hook_name", sorted(BAD_HOOKS))
def test_hook_changing_the_gradient_type_or_size(hook_name, leaf):
    assert _error(ember, hook_name, leaf) == _error(torch, hook_name, leaf)


def _multi(lib, mode):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    q = lib.tensor([3.0, -1.0], requires_grad=True)
    r = p * 1  # a non-leaf among the tensors
    seen = []
    if mode == "all":
        fn = lambda grads: seen.append([None if g is None else g.tolist() for g in grads])  # noqa: E731
    else:
        fn = lambda g: seen.append(g.tolist())  # noqa: E731
    handle = lib.autograd.graph.register_multi_grad_hook((p, q, r), fn, mode=mode)
    (r * 2).sum().backward(retain_graph=True)  # reaches r and p, not q
    (p * q).sum().backward()  # reaches p and q, not r
    (r * q).sum().backward(retain_graph=True)  # all three
    if mode == "any":  # (torch's mode "all" refuses leaves under autograd.grad)
        lib.autograd.grad((r * q).sum(), [q])  # only q is computed
    handle.remove()
    (p * q).sum().backward()  # removed: nothing more
    return seen


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook(mode):
    assert _multi(ember, mode) == _multi(torch, mode)


def test_multi_grad_hook_bad_mode():
    def err(lib):
        x = lib.ones(1, requires_grad=True)
        with pytest.raises(ValueError) as info:
            lib.autograd.graph.register_multi_grad_hook((x,), print, mode="some")
        return str(info.value)

    assert err(ember) == err(torch)


def test_gradgradcheck_draws_from_the_global_generator():
    # torch's default grad_outputs come from make_tensor: uniform_(-1, 1) on the global
    # generator, so the stream after the check moves on by exactly that much (exact: RNG)
    def after(lib):
        lib.manual_seed(3)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: (t ** 3, t.sum() * 2), (x,))
        return lib.randn(4).tolist()

    assert after(ember) == after(torch)
