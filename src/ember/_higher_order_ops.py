"""`cond` and `while_loop`, PyTorch's control-flow operators, in eager mode (`torch.cond`,
`torch.while_loop`; PyTorch keeps them in `torch._higher_order_ops`).

PyTorch runs them eagerly by compiling them (dynamo); ember runs the Python directly: `cond`
calls the branch the predicate picks, `while_loop` calls `body_fn` while `cond_fn` holds.
Autograd records the ops the branch (or the loop) ran, so gradients are the eager ones; the
results pass through one identity node named as PyTorch's (`CondAutogradOpBackward`,
`WhileLoopAutogradOpBackward`), which also makes them fresh tensors, never an input.
"""

from __future__ import annotations

from collections.abc import Callable

from . import _names
from ._tensor import Tensor
from .autograd import Function


def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves(t)]
    return [tree]


def _rebuild(tree, it):
    """`tree` with its leaves taken in order from iterator `it`."""
    if isinstance(tree, (tuple, list)):
        items = [_rebuild(t, it) for t in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return {k: _rebuild(v, it) for k, v in tree.items()}
    return next(it)


class _Passthrough(Function):
    """Copies of its tensors, gradients passed straight back: one node over an operator's
    results, as PyTorch's autograd op for a control-flow operator."""

    @staticmethod
    def forward(ctx, *xs):
        return tuple(x.clone() for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        return grads


class CondAutogradOp(_Passthrough):
    pass


class WhileLoopAutogradOp(_Passthrough):
    pass


def _through(op: type[Function], tree):
    """`tree` with every tensor leaf replaced by its copy from one `op` node."""
    leaves = _leaves(tree)
    tensors = [x for x in leaves if isinstance(x, Tensor)]
    if not tensors:
        return tree
    out = op.apply(*tensors)
    copies = iter(out if isinstance(out, tuple) else (out,))
    return _rebuild(tree, iter([next(copies) if isinstance(x, Tensor) else x for x in leaves]))


def cond(pred, true_fn: Callable, false_fn: Callable, operands=()):
    """`true_fn(*operands)` if `pred` else `false_fn(*operands)`. `pred` is a Python bool
    (or number) or a one-element tensor; `operands` a tuple or list of tensors (possibly
    nested in dicts, lists and tuples)."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not all(
            isinstance(t, Tensor) for t in _leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    out = (true_fn if bool(pred) else false_fn)(*operands)
    return _through(CondAutogradOp, out)


def _check_pred(pred) -> bool:
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.dim() == 0
                                  and pred.dtype.name == "bool"):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs):
    """Run `carried = body_fn(*carried)` while `cond_fn(*carried)` is true; returns the last
    `carried` (a tuple of tensors and ints, each tensor a fresh copy)."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got "
                           f"{type(carried_inputs)}")
    bad = [x for x in _leaves(carried_inputs) if not isinstance(x, (Tensor, int))]
    if bad:
        kinds = ", ".join(f"{type(b)}" for b in bad)
        raise AssertionError(f"{bad} can only be of (<class '{_names.prefix}.Tensor'>, "
                             f"<class 'int'>) but got ({kinds},)")
    carried = tuple(carried_inputs)
    while _check_pred(cond_fn(*carried)):
        out = body_fn(*carried)
        if not isinstance(out, tuple):
            raise AssertionError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried):
            raise AssertionError("body_fn should return the same number of elements as "
                                 f"carried_inputs, got {len(out)} vs {len(carried)}")
        carried = out
    return _through(WhileLoopAutogradOp, carried)


__all__ = ["cond", "while_loop"]
