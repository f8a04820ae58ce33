"""What the forward rules of the normalisations' fused backward kernels (batch norm, layer
norm) share: both kernels compute dx = s (h - mean(h) - xhat mean(h xhat)) over their
reduced dims, for an incoming gradient h (g, or g times the weight) and a scale s."""

from __future__ import annotations


def plus(a, b):
    """a + b, where None is a zero tangent."""
    return b if a is None else a if b is None else a + b


def times(a, b):
    """a * b, where None is a zero tangent."""
    return None if a is None or b is None else a * b


def centred(h, th, xhat, txhat, dims) -> tuple:
    """(h - mean(h) - xhat m, the tangent of that, None for zero), with m = mean(h xhat)
    over `dims`, for tangents th of h and txhat of xhat."""
    m = (h * xhat).mean(dims, keepdim=True)
    value = h - h.mean(dims, keepdim=True) - xhat * m
    tangent = None if th is None else th - th.mean(dims, keepdim=True)
    tangent = plus(tangent, times(txhat, -m))
    tm = plus(times(th, xhat), times(h, txhat))
    if tm is not None:
        tangent = plus(tangent, -(xhat * tm.mean(dims, keepdim=True)))
    return value, tangent
