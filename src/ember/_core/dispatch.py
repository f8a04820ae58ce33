"""`bind`, the one call every op ends in, and the stack of interpreters it consults.

`bind(prim, *args, **params)` gives the call to the innermost active interpreter.
With none pushed, that is eager evaluation: `prim.impl` runs the kernel on the
inputs' backend and, when grad mode is on and an input requires grad, autograd's
recorder attaches a graph node. A transform pushes an `Interpreter` with
`interpret(...)`; its `process` sees every op bound inside, and hands an op on
to the interpreter below it with `self.lower(...)`, during which the interpreter
below is the innermost one (so ops that run inside are not seen twice).

Positional arguments are tensors and constants (Python scalars); keyword params are
static values (dims, flags) that rules may read but never tensor data.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from .. import _grad_mode as grad_mode
from .._tensor import Tensor, _meta, _wrap
from .primitive import MISSING, kernels, meta_rules, vjp_rule, vjp_rules

_grad_state = grad_mode.state
_cpu = kernels["cpu"]
# primitive -> relayout(args, result, params): the primitives whose result PyTorch lays out
# otherwise than their NumPy kernel (pointwise ops by TensorIterator's rule, flip, cat,
# stack); it returns the array, or the result tensor with its strides (ops/_common.iter_relayout)
iter_layout: dict = {}
_ndarray = np.ndarray
# The relayout is not called for every op's common case, the kernel's result then being
# PyTorch's layout already: fresh operands (kernel results, no strides set), the first of
# them row-major, and a non-empty result. (The first operand that tells two dims apart
# orders them, as NumPy's kernels do; where it abstains, a broadcast or size-1 dim, a later
# operand decides for both.)


def _row_major_second(arrays: list) -> bool:
    """The first operand is a number: whether the next one is a row-major array (or none)."""
    a = arrays[1] if len(arrays) > 1 else None
    return a.__class__ is not _ndarray or a.flags.c_contiguous


class _Stack(threading.local):
    top = None  # the innermost interpreter, or None for plain eager evaluation


_stack = _Stack()
_pushed = [0]  # interpreters pushed in any thread: while 0, no thread has a stack to read


def bind(prim, *args, **params):
    """Run primitive `prim` on `args` under the innermost interpreter."""
    if _pushed[0]:
        top = _stack.top
        if top is not None:
            return top.process(prim, args, params)
    return prim.impl(prim, args, params)


class Interpreter:
    """A level of the stack. Subclasses override `process`; the default passes the op down."""

    parent: Interpreter | None = None
    carries_tangents = False  # a forward-mode level (see forward_mode_active)
    observer = False  # watches ops without changing them (the profiler): not a transform
    runs_factories = False  # factories bound under it run as with no interpreter (capture)

    def process(self, prim, args: tuple, params: dict):
        return self.lower(prim, args, params)

    def lower(self, prim, args: tuple, params: dict):
        """Evaluate the op with the interpreter below this one."""
        below = self.parent
        saved = _stack.top
        _stack.top = below
        try:
            return prim.impl(prim, args, params) if below is None else \
                below.process(prim, args, params)
        finally:
            _stack.top = saved

    def below(self, fn, /, *args, **kwargs):
        """`fn(*args, **kwargs)` with the interpreter below this one innermost: the ops a
        rule binds (a tangent's arithmetic) are seen by the levels under this one only."""
        saved = _stack.top
        _stack.top = self.parent
        try:
            return fn(*args, **kwargs)
        finally:
            _stack.top = saved


@contextmanager
def interpret(interpreter: Interpreter):
    """Push `interpreter` for the duration of a `with` block."""
    push(interpreter)
    try:
        yield interpreter
    finally:
        unwind(interpreter)


def unwind(interpreter: Interpreter) -> None:
    """End `interpreter`'s level pushed by `push` (what leaving `interpret` does)."""
    _pushed[0] -= 1
    _stack.top = interpreter.parent


def push(interpreter: Interpreter) -> None:
    """Make `interpreter` the innermost level of this thread's stack until `pop` (for a level
    whose life is not one block: a profiler started and stopped by calls)."""
    interpreter.parent = _stack.top
    _stack.top = interpreter
    _pushed[0] += 1


def pop(interpreter: Interpreter) -> None:
    """Remove `interpreter`, which must be the innermost level."""
    if _stack.top is not interpreter:
        raise RuntimeError("an interpreter can only be popped while it is the innermost level "
                           "(was it stopped inside a transform it was started outside?)")
    _pushed[0] -= 1
    _stack.top = interpreter.parent


def current_interpreter() -> Interpreter | None:
    return _stack.top


def transform_active() -> bool:
    """Whether a transform's level (not only an observer's) is on this thread's stack."""
    it = _stack.top
    while it is not None:
        if not it.observer:
            return True
        it = it.parent
    return False


def forward_mode_active() -> bool:
    """Whether a forward-mode level (an interpreter that carries tangents) is on the stack:
    a VJP that would bind a fused derivative kernel with no forward rule of its own binds
    its differentiable composite instead, so the tangent of the gradient is right."""
    it = _stack.top
    while it is not None:
        if it.carries_tangents:
            return True
        it = it.parent
    return False


# --- autograd's hook -----------------------------------------------------------------------

class _Autograd:
    """Autograd's entry points, plugged in from above when `ember.autograd` is imported."""

    record = None  # record(prim, rule, args, params, out): attach a graph node to `out`
    inplace = None  # inplace(prim, self, args, params): an in-place op that needs a node
    keep = None  # keep(out, tensors): `out`'s node also checks these tensors' versions
    # link(out, name, zero, tensors): under create_graph, `out`'s gradients are PyTorch's
    # double-backward node `name`, which also takes `tensors` (autograd/double_nodes.py)
    link = None


autograd = _Autograd()


def set_autograd(record, inplace, keep=None) -> None:
    autograd.record = record
    autograd.inplace = inplace
    autograd.keep = keep


# --- eager evaluation ----------------------------------------------------------------------

try:  # NumPy 2: the floating-point error state is a context variable; switch it per kernel
    from numpy._core._ufunc_config import _extobj_contextvar as _fp_state

    with np.errstate(all="ignore"):
        _FP_QUIET = _fp_state.get()
    _fp_set, _fp_reset = _fp_state.set, _fp_state.reset
except ImportError:  # pragma: no cover - NumPy 1.26: a context manager per call instead
    _fp_state = None

    def _fp_set(_):
        quiet = np.errstate(all="ignore")
        quiet.__enter__()
        return quiet

    def _fp_reset(quiet):
        quiet.__exit__(None, None, None)

    _FP_QUIET = None


def run_quiet(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` with NumPy's floating-point warnings off for this call only:
    PyTorch never warns about 1/0, log(-1) or overflow. The caller's error state is left
    as it was (scoped, not process-wide)."""
    if _fp_state is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = _fp_state.set(_FP_QUIET)
    try:
        return fn(*args, **kwargs)
    finally:
        _fp_state.reset(token)


def eval_kernel(prim, args: tuple, params: dict):
    """Eager evaluation of a standard primitive: its backend's kernel on the inputs' arrays,
    the result wrapped as new tensors, and a graph node recorded when one is needed."""
    # NOTE: the hot path: one pass over the arguments for the CPU case.
    arrays = []
    grad = False
    fresh = True  # every tensor operand a kernel's result (no Storage, no strides set)
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            if s is not None:
                if s.device.type != "cpu":
                    return _eval_off_cpu(prim, args, params)
                fresh = False
            arr = a._np
            arrays.append(arr if arr is not None else a._array())
            if a._requires_grad:
                grad = True
        else:
            arrays.append(a)
    token = _fp_set(_FP_QUIET)  # run_quiet, inline: this is every op's path
    try:
        res = _cpu[prim](*arrays, **params)
    finally:
        _fp_reset(token)
    if prim in iter_layout and not (
            fresh and res.__class__ is _ndarray and res.size
            and (arrays[0].flags.c_contiguous if arrays and arrays[0].__class__ is _ndarray
                 else _row_major_second(arrays))):
        res = iter_layout[prim](args, res, params)
        out = res if res.__class__ is Tensor else _wrap(res) if prim.n_outputs == 1 \
            else tuple(_wrap(r) for r in res)
    else:
        out = _wrap(res) if prim.n_outputs == 1 else tuple(_wrap(r) for r in res)
    if grad and _grad_state.enabled:
        autograd.record(prim, vjp_rules.get(prim, MISSING), args, params, out)
    return out


def eval_member(fam, args: tuple, params: dict):
    """Eager evaluation of a family: `eval_kernel` with the member (`params["fn"]`) found
    once, its kernel called directly with the params less `fn` and its VJP read off the
    family's table (the delegating kernel and rule lookup cost a call each otherwise, and
    `a + b` is a family member)."""
    # NOTE: eval_kernel's argument pass, repeated: this is the other half of every op's path.
    arrays = []
    grad = False
    fresh = True  # every tensor operand a kernel's result (no Storage, no strides set)
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            if s is not None:
                if s.device.type != "cpu":
                    return _eval_off_cpu(fam, args, params)
                fresh = False
            arr = a._np
            arrays.append(arr if arr is not None else a._array())
            if a._requires_grad:
                grad = True
        else:
            arrays.append(a)
    fn = params["fn"]
    token = _fp_set(_FP_QUIET)
    try:
        # (with other params: the family's delegating kernel, where the call itself drops fn)
        res = fn.kernel(*arrays) if len(params) == 1 else _cpu[fam](*arrays, **params)
    finally:
        _fp_reset(token)
    if fam in iter_layout and not (
            fresh and res.__class__ is _ndarray and res.size
            and (arrays[0].flags.c_contiguous if arrays and arrays[0].__class__ is _ndarray
                 else _row_major_second(arrays))):
        res = iter_layout[fam](args, res, params)
        out = res if res.__class__ is Tensor else _wrap(res) if fam.n_outputs == 1 \
            else tuple(_wrap(r) for r in res)
    else:
        out = _wrap(res) if fam.n_outputs == 1 else tuple(_wrap(r) for r in res)
    if grad and _grad_state.enabled:
        autograd.record(fam, vjp_rules[fam].table.get(fn, MISSING), args, params, out)
    return out


def device_of(args) -> str | None:
    """The one device type of the tensors in `args` (RuntimeError naming both when mixed)."""
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            d = "cpu" if s is None else s.device.type
            if dev is None:
                dev = d
                first = a
            elif d != dev:
                if {d, dev} == {"cpu", "meta"}:
                    return _meta_beside_cpu(args)
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {first.device} and {a.device}!"
                )
    return dev


def _meta_beside_cpu(args) -> str:
    """NOTE: PyTorch's TensorIterator lets a CPU 0-d tensor join a meta computation (as it
    joins a CUDA one); any other CPU tensor beside a meta one is refused in its words,
    naming the first tensor's device as the expected one."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    kept = [t for t in tensors if t._shape or t.device.type != "cpu"]
    if all(t.device.type == "meta" for t in kept):
        return "meta"
    expected = kept[0].device
    other = next(t.device for t in kept if t.device != expected)
    raise RuntimeError(f"Tensor on device {other} is not on the expected device {expected}!")


def _eval_off_cpu(prim, args, params):
    """Eager evaluation when a tensor is on the meta device or another backend."""
    dev = device_of(args)
    if dev == "meta":
        meta = meta_rules.get(prim)
        if meta is None:
            raise NotImplementedError(f"{prim.name} has no meta rule: it cannot run on 'meta'")
        res = meta(*args, **params)
        out = _meta(*res) if prim.n_outputs == 1 else tuple(_meta(*r) for r in res)
    else:
        from ..backends import get_backend

        out = get_backend(dev).run(prim, args, params)
    if _grad_state.enabled:
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                autograd.record(prim, vjp_rule(prim, params), args, params, out)
                break
    return out
