"""Inference tensors against torch: what may be read, written and flagged outside the mode."""

import pytest
import torch

import ember


def _outcome(call, L):
    """(exception type, message) of `call(L)`, or ("ok", its value)."""
    try:
        value = call(L)
    except Exception as exc:  # noqa: BLE001 - compared with torch's below
        return type(exc), str(exc)
    return "ok", value


def _inference(L):
    with L.inference_mode():
        return L.ones(3)


def _set_requires_grad(t):
    t.requires_grad = True


def _in_mode(L, fn):
    with L.inference_mode():
        return fn(L.ones(3))


CASES = {
    "version_outside": lambda L: _inference(L)._version,
    "version_inside": lambda L: _in_mode(L, lambda t: t._version),
    "version_of_view": lambda L: _inference(L).view(3)._version,
    "is_inference": lambda L: _inference(L).is_inference(),
    "add_outside": lambda L: _inference(L).add_(1),
    "mul_outside": lambda L: _inference(L).mul_(2),
    "setitem_outside": lambda L: _inference(L).__setitem__(0, 5.0),
    "zero_outside": lambda L: _inference(L).zero_(),
    "copy_outside": lambda L: _inference(L).copy_(L.zeros(3)),
    "resize_outside": lambda L: _inference(L).resize_(4),
    "view_add_outside": lambda L: _inference(L).view(3).add_(1),
    "add_under_no_grad": lambda L: _under_no_grad(L),
    "add_inside": lambda L: _in_mode(L, lambda t: t.add_(1).is_inference()),
    "requires_grad_inside": lambda L: _in_mode(L, lambda t: t.requires_grad_().requires_grad),
    "requires_grad_outside": lambda L: _inference(L).requires_grad_(),
    "requires_grad_setter_outside": lambda L: _set_requires_grad(_inference(L)),
    "requires_grad_false_outside": lambda L: _inference(L).requires_grad_(False).requires_grad,
    "clone_is_normal": lambda L: _inference(L).clone().add_(1).is_inference(),
    "normal_version_inside": lambda L: _normal_written_inside(L),
}


def _under_no_grad(L):
    t = _inference(L)
    with L.no_grad():
        return t.add_(1)


def _normal_written_inside(L):
    t = L.ones(2)
    with L.inference_mode():
        t.add_(1)
    return t._version, t.is_inference()


@pytest.mark.parametrize("name", list(CASES))
def test_inference_tensor_rules_like_torch(name):
    e, t = _outcome(CASES[name], ember), _outcome(CASES[name], torch)
    if t[0] == "ok":
        assert e[0] == "ok", e
        if not isinstance(t[1], torch.Tensor):
            assert e[1] == t[1]
    else:
        assert e == t


def test_inference_tensor_version_raises_runtime_error():
    with ember.inference_mode():
        t = ember.ones(2)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        _ = t._version
