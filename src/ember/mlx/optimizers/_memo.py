"""A built-in optimizer's per-parameter update, recorded lazily, taken from the memo of
the step it repeats.

MLX's optimizers run `apply_single(gradient, parameter, state)` per parameter, a dozen
array ops each (AdamW's: the decay, both moments, the square root, the division), every
step. Recorded lazily each op costs Python (the MLX face's promotion, ember's op, the
check that it repeats the graph the step follows), so a model of 30 parameters spends
milliseconds recording the same update again. The update of a built-in optimizer has no
side effect but its state dict, and what it records depends on its tensors' graph values,
its state keys, the arrays' dtypes and its hyperparameters only: from the second step on
`graph.memo.pure_call` appends the recorded nodes at once (checked every call), and the
new parameter and state arrays are made from them.
"""

from __future__ import annotations

import weakref

from ...graph.memo import pure_call
from .. import core as mx
from ..core import _lazy
from ..core._array import _wrap

_PURE: set = set()  # the apply_single functions of the built-in optimizers (`register`)
# optimizer -> {guard: (the new parameter's dtype, the state entries' dtypes)}
_OUT_DTYPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# optimizer -> the state keys of updates that record too few nodes to be worth a memo
_SMALL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PLAIN = (int, float, bool, str, type(None))
_MIN_NODES = 4  # (plain SGD's two ops are recorded faster than its memo is checked)


def _guard(opt, keys: tuple, dtypes: tuple) -> tuple | None:
    """What else the update reads: the class, its apply_single, the hyperparameters (by
    value; None where one is not a plain value), the state keys and the arrays' dtypes."""
    hyper = []
    for k, v in vars(opt).items():
        if k in ("_state", "_initialized"):
            continue
        if v.__class__ in (list, tuple):
            if any(x.__class__ not in _PLAIN for x in v):
                return None
            v = tuple(v)
        elif v.__class__ is dict:
            if v:  # (a schedule: its value is a state array, read as a tensor)
                v = tuple((name, f) for name, f in v.items())
            else:
                v = ()
        elif v.__class__ not in _PLAIN:
            return None
        hyper.append((k, v))
    cls = opt.__class__
    return (cls, cls.apply_single, tuple(hyper), keys, dtypes)


def apply_one(opt, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
    """`opt.apply_single(gradient, parameter, state)`, from the memo where it recurs."""
    w = _lazy.recording()
    if w is None or opt.__class__.apply_single not in _PURE:
        return opt.apply_single(gradient, parameter, state)
    keys = tuple(state)
    small = _SMALL.get(opt)
    if small is not None and keys in small:
        return opt.apply_single(gradient, parameter, state)
    for v in state.values():
        if v.__class__ is not mx.array:
            return opt.apply_single(gradient, parameter, state)
    arrays = (gradient, parameter, *state.values())
    dtypes = tuple(a._dtype for a in arrays)
    # (the step count, the learning rate and what else the optimizer's state holds at its
    # top: read by the update, each step's own arrays when a schedule sets them)
    shared = [v for v in opt.state.values() if v.__class__ is mx.array]
    guard = _guard(opt, keys, dtypes + tuple(a._dtype for a in shared))
    if guard is None:
        return opt.apply_single(gradient, parameter, state)
    outs = _OUT_DTYPES.setdefault(opt, {})

    def update(*leaves):
        g, p, *entries = (_wrap(t, d) for t, d in zip(leaves, dtypes))  # (not `shared`)
        st = dict(zip(keys, entries))
        new = opt.apply_single(g, p, st)
        if tuple(st) != keys or any(v.__class__ is not mx.array for v in st.values()):
            raise _Unmemoisable(new, st)
        outs[guard] = (new._dtype, tuple(v._dtype for v in st.values()))
        return (new._t, *(v._t for v in st.values()))

    with _lazy.inside(w):
        n0 = len(w.graph.nodes)
        try:
            got = pure_call(update, id(opt), [a._t for a in arrays + tuple(shared)] + [guard],
                            _MIN_NODES)
        except _Unmemoisable as u:
            state.update(u.state)
            return u.new
    if len(w.graph.nodes) - n0 < _MIN_NODES:  # (from now on run as it is: plain SGD)
        _SMALL.setdefault(opt, set()).add(keys)
    new_dtype, state_dtypes = outs[guard]
    for k, t, d in zip(keys, got[1:], state_dtypes):
        state[k] = _wrap(t, d)
    return _wrap(got[0], new_dtype)


class _Unmemoisable(Exception):
    """An update that changed its state's keys or stored something else than arrays:
    it ran, and its results are carried out as they are."""

    def __init__(self, new, state) -> None:
        super().__init__()
        self.new, self.state = new, state


def register(*classes) -> None:
    """Mark the apply_single of `classes` (built-in optimizers) as pure."""
    _PURE.update(c.apply_single for c in classes)
