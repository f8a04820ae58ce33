"""Pure mode (`ember.compile(fn, options={"pure": True})`, ember's own option): on a call
that matches a recorded one, run the recorded program without running `fn`'s Python.

This is JAX's contract, offered beside PyTorch's: the caller promises that `fn`'s work
depends only on its arguments (tensors by shape, dtype, strides and requires_grad; other
arguments by value) and on tensors it reads that stay the same objects (parameters,
buffers, optimizer state). Python side effects and Python state `fn` reads are then not
redone on a replayed call. A call is replayed only when it is safe to by what ember can
see: the call ran as one graph (no break) and drew no random numbers (a replay would
repeat them), two traces in a row of the same signature recorded the same graph with the
same Python numbers, everything the graph left behind is either returned or a parameter's
`.grad`, and nothing returned requires grad. Otherwise the call runs as in default mode
(every call traced). Two kinds of Python state are watched even so, since ordinary training
loops change them between calls: the settings of each optimizer the trace stepped (a
scheduler's learning rate) and modules' train/eval mode; a replay made before either
changed is dropped, and the call is traced again.
"""

from __future__ import annotations

from .._tensor import Tensor, _wrap, layout_strides
from ..nn.modules.module import mode_changes


def flatten(tree, out: list) -> object:
    """The structure of `tree` with leaves replaced by their index in `out` (appended)."""
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        return (type(tree), tuple(flatten(x, out) for x in tree))
    if isinstance(tree, dict):
        return (dict, tuple((k, flatten(v, out)) for k, v in tree.items()))
    out.append(tree)
    return len(out) - 1


def unflatten(spec, leaves: list):
    if isinstance(spec, int):
        return leaves[spec]
    kind, items = spec
    if kind is dict:
        return {k: unflatten(v, leaves) for k, v in items}
    return kind(unflatten(x, leaves) for x in items)


def signature(args: tuple, kwargs: dict, grad_enabled: bool):
    """What a call must match to be replayed: the arguments' structure, each tensor's
    shape, dtype, strides and requires_grad, other leaves' values, and grad mode."""
    leaves: list = []
    spec = flatten((args, kwargs), leaves)
    key = []
    for x in leaves:
        if isinstance(x, Tensor):
            if x._is_lazy:
                return None
            stride = layout_strides(x)
            key.append(("T", x._shape, x._dtype, stride, x._requires_grad))
        else:
            try:
                hash(x)
            except TypeError:
                return None
            key.append((type(x), x))
    return (spec, tuple(key), grad_enabled), leaves


class Replay:
    """A recorded call: where each program input comes from (an argument's position or a
    captured tensor), its Python numbers, what each output becomes, and what it writes."""

    def __init__(self, run, arg_leaves: list, result, optimizers: list = ()) -> None:
        self.program = run.program
        # the optimizers that stepped in the trace, with their settings then: a scheduler
        # that changes one (a learning rate) makes the replay stale (see `current`)
        self.optimizers = [(opt, settings(opt)) for opt in optimizers]
        self.modes = mode_changes[0]  # and any train() / eval() since
        self.scalars = list(run.scalars)
        pos = {id(x): i for i, x in enumerate(arg_leaves) if isinstance(x, Tensor)}
        self.sources = [("arg", pos[id(t)]) if id(t) in pos else ("tensor", t)
                        for t in run.inputs]
        out_leaves: list = []
        self.spec = flatten(result, out_leaves)
        where = {id(t): i for t, i in run.live}
        self.returns = [("out", where[id(x)]) if isinstance(x, Tensor) and id(x) in where
                        else ("const", x) for x in out_leaves]
        self.grads = [(t, where[id(t._grad)]) for t in run.inputs
                      if t._grad is not None and id(t._grad) in where]
        self.dtypes = {i: t._dtype for t, i in run.live}
        self.written = [t for t in run.written if t._vc is not None]

    def current(self) -> bool:
        """Whether every optimizer the trace stepped still has the settings it had then,
        and no module's train/eval mode has changed since."""
        return mode_changes[0] == self.modes and all(
            settings(opt) == then for opt, then in self.optimizers)

    def __call__(self, leaves: list):
        arrays = [leaves[i]._array() if kind == "arg" else i._array()
                  for kind, i in self.sources]
        outs = self.program.run(arrays + self.scalars)
        for t in self.written:
            t._vc[0] += 1
        dtypes = self.dtypes
        for t, i in self.grads:
            # (the grad a traced call assigned: its dtype, device and shape were checked then)
            t._grad = _wrap(outs[i], dtypes[i])
        if not self.returns:
            return unflatten(self.spec, [])
        vals = [_wrap(outs[v], dtypes[v]) if kind == "out" else v
                for kind, v in self.returns]
        return unflatten(self.spec, vals)


def settings(optimizer) -> tuple:
    """An optimizer's settings that its update reads as Python numbers (per group: every
    entry but the parameters, e.g. lr, momentum, betas, weight_decay)."""
    return tuple(tuple((k, v) for k, v in group.items() if k != "params")
                 for group in optimizer.param_groups)


def replayable(session, arg_leaves: list, result) -> str | None:
    """Why the call just traced cannot be replayed, or None when it can."""
    if len(session.runs) != 1:
        return "it ran as several graphs (a graph break)" if session.runs else \
            "it recorded no graph"
    if session.drew:
        return "it draws random numbers (a replay would repeat the same numbers)"
    (run,) = session.runs
    out_leaves: list = []
    flatten(result, out_leaves)
    returned = {id(x) for x in out_leaves if isinstance(x, Tensor)}
    grads = {id(t._grad) for t in run.inputs if t._grad is not None}
    for t, _ in run.live:
        if t._requires_grad:
            return "a tensor it leaves behind requires grad (autograd needs the Python)"
        if id(t) not in returned and id(t) not in grads:
            return "it leaves a tensor behind that is neither returned nor a .grad"
    for x in out_leaves:
        if isinstance(x, Tensor) and id(x) not in {id(t) for t, _ in run.live}:
            return "it returns a tensor the graph did not compute"
    if any(isinstance(x, Tensor) and x._is_lazy for x in arg_leaves):
        return "an argument is a pending value"
    if any(id(t) in grads for t in run.inputs):
        return "it reads a .grad that a call replaces (accumulated gradients)"
    return None
