"""Tensor repr (placeholder: replaced by the PyTorch-exact printer)."""

from __future__ import annotations


def tensor_repr(t) -> str:
    from . import _names

    if t.device.type == "meta":
        body = f"...,  size={tuple(t._shape)}, device='meta'"
    else:
        body = str(t.detach()._array().tolist())
    suffix = ""
    if t._grad_fn is not None:
        suffix = f", grad_fn=<{t._grad_fn.name()}>"
    elif t._requires_grad:
        suffix = ", requires_grad=True"
    _ = _names
    return f"tensor({body}{suffix})"
