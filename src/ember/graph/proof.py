"""Proving a default-mode call free of Python effects, so that a matching call may skip
its Python as pure mode's replays do (`compiled.Compiled`, `replay.Replay`).

PyTorch's `torch.compile` skips a function's Python on a cache hit because Dynamo has read
its bytecode and guards what that reading assumed. ember's default mode runs the Python on
every call instead, which keeps Python's side effects but costs the Python. Many training
steps are straight-line calls of ember's own pieces (`opt.zero_grad()`, a built-in model,
a loss, `loss.backward()`, `opt.step()`), whose only effects are the ones a replay redoes:
the program's writes (parameters, optimizer state) and the new `.grad`s. For such a
function ember proves it, in three parts, and then replays:

- `scan` reads the function's bytecode once: straight-line code only (no branch, loop,
  `with`, `try`, closure made, import), no store but to its own local variables (no
  attribute, global, cell or item written), no `*args` call and no subscript (a read of a
  container the guards could not follow). It lists the names the code loads from its
  arguments, globals and closure cells, each with the attribute chain read from it.
- `Audit` watches the second traced call (a profile function, the call's own frame
  only) and accepts it only where every call the function makes is one of: a call of a
  built-in module whose whole tree is memoisable (`memo.MEMO_TYPES`, no hooks), a built-in
  optimizer's `zero_grad` or hook-free `step`, `Tensor.backward`, or an op (a method or
  property of the tensor that does not write in place, or a function of `ember.ops`,
  `ember.nn.functional` and ember's namespace that makes no state change), or a call of
  the user's own module whose `forward` `scan` passes and whose arguments are tensors:
  that forward's own calls are then watched by these same rules (a user module inside
  it too), and what it loads from `self`, its globals and cells joins the checks. A call
  of anything else (a builtin such as `print` or `list.append`, the user's own function,
  `torch.save`, a forward with a branch) and the function runs its Python on every call
  as usual.
- `Proof.holds` is checked before each replay: every loaded name and chain is the same
  object (numbers and strings: the same value), each module tree is as it was (the call
  memos' check; a user module's class, forward, hooks, parameters, buffers and children),
  each optimizer's groups and state are (the step memo's check) and it has no step hooks,
  each captured tensor keeps its layout and requires_grad and has no hooks, and grad
  mode, the default dtype, autocast, anomaly mode and profilers are as they were. A failed
  check traces the call again (and after a few, stops trying).

What pure mode checks besides (one graph, no random draw, nothing left behind that
requires grad, two traces alike) is checked here too: `replay.replayable`.
"""

from __future__ import annotations

import builtins
import dis
import sys
import types
from operator import is_

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.ranges import ranges
from .._tensor import Tensor, layout_strides
from ..autograd import graph as _ag
from ..nn.modules.module import Module, attr_changes
from ..optim import optimizer as _optim
from . import memo as _memo

# Instructions a proven function may use: loads, stores to its own locals, calls,
# arithmetic and building results (3.11-3.13 names; anything else is refused).
_ALLOWED_OPS = frozenset({
    "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "LOAD_FAST",
    "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "STORE_FAST", "STORE_FAST_LOAD_FAST",
    "STORE_FAST_STORE_FAST", "LOAD_CONST", "RETURN_CONST", "LOAD_GLOBAL", "LOAD_DEREF",
    "LOAD_ATTR", "LOAD_METHOD", "PUSH_NULL", "PRECALL", "CALL", "CALL_KW", "KW_NAMES",
    "BINARY_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "COMPARE_OP",
    "POP_TOP", "RETURN_VALUE", "BUILD_TUPLE", "UNPACK_SEQUENCE", "COPY", "SWAP",
})
_LOADS = {"LOAD_GLOBAL": "global", "LOAD_DEREF": "cell"}
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")
MAX_MISSES = 8  # calls in a row not replayed before a function stops trying
_ARG = object()  # what a chain to an argument's tensor reads as
_UNREADABLE = (AttributeError, KeyError, IndexError, ValueError)  # (a name gone)


def scan(fn) -> tuple | None:
    """(code, chains, number of positional arguments) of a function the bytecode check
    passes, or None. A chain is (root kind, root name or argument index, attribute
    names); a local variable stored straight from a chain (`m = self.fc`) reads as that
    chain where it is loaded, and an argument stored over is no longer one."""
    if isinstance(fn, types.MethodType):
        func, bound = fn.__func__, 1
    else:
        func, bound = fn, 0
    if not isinstance(func, types.FunctionType):
        return None
    code = func.__code__
    if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200 | 0x04 | 0x08):  # generators, *a, **k
        return None
    if code.co_cellvars or code.co_kwonlyargcount:
        return None
    n_args = code.co_argcount
    roots = {name: ("arg", i - bound, ()) for i, name in enumerate(code.co_varnames[:n_args])}
    chains: list = []
    chain = None
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op not in _ALLOWED_OPS:
            return None
        if chain is not None and op in _ATTRS:
            chain[2].append(ins.argval)
            continue
        done, chain = chain, None
        if done is not None:
            chains.append((done[0], done[1], tuple(done[2])))
        if op.startswith("STORE_FAST"):
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            stored = names[:1] if op == "STORE_FAST_LOAD_FAST" else names
            for name in stored:
                roots.pop(name, None)
            if op == "STORE_FAST" and done is not None:  # an alias of that chain
                roots[ins.argval] = chains[-1]
            if op == "STORE_FAST_LOAD_FAST" and names[1] in roots:  # (3.13: then a load)
                kind, name, attrs = roots[names[1]]
                chain = (kind, name, list(attrs))
        if op in _LOADS:
            chain = (_LOADS[op], ins.argval, [])
        elif op in ("LOAD_FAST", "LOAD_FAST_CHECK") and ins.argval in roots:
            kind, name, attrs = roots[ins.argval]
            chain = (kind, name, list(attrs))
        elif op == "LOAD_FAST_LOAD_FAST":  # (two loads: the second may start a chain)
            first, second = ins.argval
            if first in roots:
                chains.append(roots[first])
            if second in roots:
                kind, name, attrs = roots[second]
                chain = (kind, name, list(attrs))
    if chain is not None:
        chains.append((chain[0], chain[1], tuple(chain[2])))
    return code, list(dict.fromkeys(chains)), n_args - bound


def _getter(fn, chain):
    """`get(args)`: the object a chain names now (an attribute of a tensor is not
    followed: it is an op the graph records)."""
    kind, name, attrs = chain
    func = getattr(fn, "__func__", fn)
    if kind == "cell":
        cell = func.__closure__[func.__code__.co_freevars.index(name)]

        def root(args):
            return cell.cell_contents
    elif kind == "global":
        g = func.__globals__
        b = g.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)

        def root(args):
            return g[name] if name in g else b[name]
    elif name < 0:
        bound = fn.__self__

        def root(args):
            return bound
    else:
        def root(args):
            return args[name]
    arg = kind == "arg" and name >= 0

    def get(args):
        obj = root(args)
        for a in attrs:
            if isinstance(obj, Tensor):
                break
            obj = getattr(obj, a)
        # (an argument's tensor is the call's own: its signature decides, not its identity)
        return _ARG if arg and isinstance(obj, Tensor) else obj

    return get


def _same(now, then) -> bool:
    if now is then:
        return True
    if isinstance(then, types.MethodType):
        return isinstance(now, types.MethodType) and now.__func__ is then.__func__ and \
            now.__self__ is then.__self__
    return _memo._same_value(now, then)


# -- what the function calls ------------------------------------------------------------

_op_codes: set = set()
_DENIED_NAMES = ("seed", "set_", "save", "load", "print", "compile", "use_", "register",
                 "rng_state", "retain_grad", "tensor", "as_tensor", "from_", "asarray",
                 "frombuffer", "backward")


def _denied(name: str) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return name[2:3] == "i" and name not in ("__index__", "__int__", "__invert__",
                                                 "__iter__") or name in (
            "__setitem__", "__delitem__", "__setattr__", "__delattr__", "__init__",
            "__new__", "__del__", "__setstate__", "__reduce__", "__reduce_ex__")
    return name.endswith("_") or any(d in name for d in _DENIED_NAMES)


def _ops() -> set:
    """The code objects of the calls that are ops (see the module docstring)."""
    if _op_codes:
        return _op_codes
    import ember
    from ember.nn import functional as F

    from .lazy import LazyTensor

    def add(f) -> None:
        code = getattr(f, "__code__", None)
        if code is not None:
            _op_codes.add(code)

    for cls in (Tensor, LazyTensor):
        for name, attr in vars(cls).items():
            if _denied(name):
                continue
            if isinstance(attr, property):
                add(attr.fget)
            elif isinstance(attr, (types.FunctionType, staticmethod, classmethod)):
                add(getattr(attr, "__func__", attr))
    for space in (ember, F):
        for name, f in vars(space).items():
            mod = getattr(f, "__module__", None) or ""
            if isinstance(f, types.FunctionType) and not _denied(name) and (
                    mod == "ember" or mod.startswith(("ember.ops", "ember.nn.functional",
                                                      "ember.nn._functional"))):
                add(f)
    add(Module.__getattr__)
    return _op_codes


class Audit:
    """A profile function that watches the calls one traced call of `code` makes itself,
    and those the `forward`s of the user's modules it accepts make (see the module
    docstring); `why` says what it met that no replay could redo."""

    def __init__(self, code) -> None:
        self.code = code
        self.frame = None  # the call's frame while it runs, then False
        self.why: str | None = None
        self.modules: list = []  # built-in module trees called
        self.users: list = []  # the user's modules whose forwards were read
        self.user_chains: list = []  # (getter, object then) of what those forwards load
        self.zeroed: list = []
        self.stepped: list = []
        self.ops = _ops()
        self.watched: set = set()  # frames whose own calls are checked
        self.expected = None  # (module, forward's code): a forward frame to watch next

    def __call__(self, frame, event, arg) -> None:
        if self.frame is None:
            if event == "call" and frame.f_code is self.code:
                self.frame = frame
                self.watched.add(frame)
            return
        if event == "return" and frame is self.frame:
            self.frame = False  # (done: its locals must not outlive the call)
            self.watched.clear()
        elif self.why is not None or self.frame is False:
            return
        elif event == "call":
            if frame.f_back in self.watched:
                self._check(frame)
            elif self.expected is not None and frame.f_code is self.expected[1] and \
                    frame.f_locals.get("self") is self.expected[0]:
                self.watched.add(frame)
                self.expected = None
        elif event == "return":
            self.watched.discard(frame)
        elif event == "c_call" and frame in self.watched:
            self.why = f"it calls {getattr(arg, '__qualname__', arg)}"

    def _check(self, frame) -> None:
        code = frame.f_code
        if code in self.ops:
            return
        self_ = frame.f_locals.get("self")
        if code is Module.__call__.__code__:
            if _tree(self_) is None:
                self.why = self._user_module(self_, frame.f_locals)
            elif self_ not in self.modules:
                self.modules.append(self_)
        elif code is _optim.Optimizer.zero_grad.__code__:
            self.zeroed.append(self_)
        elif code is _STEP_CODE and _builtin_optimizer(self_) and \
                not frame.f_locals.get("args") and not frame.f_locals.get("kwargs"):
            self.stepped.append(self_)
        elif code is Tensor.backward.__code__:
            return
        else:
            self.why = f"it calls {getattr(code, 'co_qualname', code.co_name)}"

    def _user_module(self, m: Module, call: dict) -> str | None:
        """Accept a call of the user's module `m` whose `forward` the proof can read, with
        tensors for arguments: its forward's own calls are then watched as the function's
        are, and what it loads from `self` and its globals is checked before replays.
        Else why not."""
        name = type(m).__name__
        forward = type(m).forward
        scanned = _forward_scan(forward) if not m._hooked and "forward" not in m.__dict__ \
            else None
        if scanned is None:
            return f"it calls {name}, whose forward the proof cannot follow"
        if not all(isinstance(a, Tensor) for a in (*call.get("args", ()),
                                                   *call.get("kwargs", {}).values())):
            return f"it calls {name} with arguments other than tensors"
        if m not in self.users:
            self.users.append(m)
            for chain in scanned:
                kind, index, attrs = chain
                if kind == "arg":  # (only `self`'s: the others are the call's tensors)
                    if index != 0 or not attrs:
                        continue
                    get = _attributes(m, attrs)
                else:
                    get = _getter(forward, chain)
                try:
                    self.user_chains.append((get, get(())))
                except _UNREADABLE:
                    return f"{name}.forward reads a name that cannot be read"
        self.expected = (m, forward.__code__)
        return None


_PROVABLE: set = set()  # built-in modules whose calls the proof takes whole (see `_tree`)


def _tree(module: Module) -> list | None:
    """The modules under `module` (itself first) where each is a built-in module whose
    call makes no change the program does not (the memo's modules, and the convolutions,
    batch norms and poolings: their Python decides by their `__dict__`, which the checks
    compare, and the input's signature; a batch norm's running statistics and count are
    written by ops the program redoes), with no hooks; else None."""
    if not _PROVABLE:
        from .. import nn

        _PROVABLE.update(_memo.MEMO_TYPES, {
            nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
            nn.ConvTranspose3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
            nn.GroupNorm, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d,
            nn.AvgPool2d, nn.AvgPool3d, nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d,
            nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.Dropout1d, nn.Dropout2d,
            nn.Unflatten})
    return _memo._tree(module, _PROVABLE)


_forward_scans: dict = {}


def _forward_scan(forward) -> list | None:
    """The chains of a module class's `forward` that `scan` passes, or None (by code)."""
    code = getattr(forward, "__code__", None)
    if code is None:
        return None
    if code not in _forward_scans:
        got = scan(forward) if isinstance(forward, types.FunctionType) else None
        _forward_scans[code] = None if got is None or got[2] < 1 else got[1]
    return _forward_scans[code]


def _attributes(obj, attrs: tuple):
    """`get(args)`: what `obj.a.b...` names now (a tensor's attributes not followed)."""
    def get(_args):
        out = obj
        for a in attrs:
            if isinstance(out, Tensor):
                break
            out = getattr(out, a)
        return out

    return get


def _builtin_optimizer(opt) -> bool:
    return type(opt).__module__.startswith("ember.optim.") and not _optimizer_hooks(opt)


def _optimizer_hooks(opt) -> bool:
    return bool(_optim._global_pre_hooks or _optim._global_post_hooks or
                opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks)


_STEP_CODE = _optim._wrap_step(lambda self: None).__code__  # (every step's wrapper)


def audited(audit: Audit, run):
    """`run()` with `audit` watching; None for the audit where another profiler is set
    (ember does not displace it)."""
    if sys.getprofile() is not None:
        audit.why = "a profiler is running"
        return run()
    sys.setprofile(audit)
    try:
        return run()
    finally:
        sys.setprofile(None)


# -- the checks before a replay ----------------------------------------------------------

def _globals() -> tuple:
    return (dt.get_default_dtype(), _memo._autocast_on(), _ag._anomaly.enabled,
            grad_mode.state.inference)


def _tensor_state(t) -> tuple:
    return (t._shape, t._dtype, tuple(layout_strides(t)), t._requires_grad)


def _hooked(t) -> bool:
    ag = t._ag
    return ag is not None and bool(ag.hooks or ag.post_acc_hooks)


class _Parts:
    """What `memo._same_parts` compares of some module trees, laid out to compare quickly:
    each module's class, `forward`, hook flag and `__dict__` size, and each of their
    parameter, buffer and child dicts (the same dict objects: replacing one is a module
    attribute set, which the full check sees)."""

    def __init__(self, modules: list) -> None:
        self.modules = [(m, m.__class__, m.__class__.forward, len(m.__dict__))
                        for m in modules]
        dicts = [d for m in modules for d in (m._parameters, m._buffers, m._modules)]
        self.empty = [d for d in dicts if not d]
        self.full = [(d, frozenset(d), tuple(d.values())) for d in dicts if d]

    def same(self) -> bool:
        for m, cls, forward, n in self.modules:
            if m.__class__ is not cls or cls.forward is not forward or m._hooked or \
                    len(m.__dict__) != n:
                return False
        if any(self.empty):
            return False
        for d, keys, values in self.full:
            if len(d) != len(values) or d.keys() != keys or \
                    not all(map(is_, d.values(), values)):
                return False
        return True


class Proof:
    """What a proven call assumed, checked before each replay (see the module docstring)."""

    def __init__(self, getters: list, then: list, audit: Audit, captured: list) -> None:
        self.chains = list(zip(getters, then)) + audit.user_chains
        trees = []
        for m in audit.modules:
            memo = _memo.Memo()
            memo.snaps = [_memo._snapshot(x) for x in _tree(m)]
            memo.changes = attr_changes[0]
            trees.append(memo)
        self.trees = trees
        self.changes = attr_changes[0]
        self.roots = [type(m).__name__ for m in audit.users + audit.modules]
        self.parts = _Parts([x for m in audit.modules for x in _tree(m)] + audit.users)
        self.user_parts = _Parts(audit.users)  # (the memo's full check covers built-ins)
        opts = list({id(o): o for o in audit.zeroed + audit.stepped}.values())
        self.optimizers = [(o, _memo._optimizer_snapshot(o)) for o in opts]
        # (a parameter zero_grad cleared that the program gives no gradient stays None)
        self.cleared = [p for o in audit.zeroed for g in o.param_groups for p in g["params"]
                        if p._grad is None]
        self.captured = [(t, _tensor_state(t)) for t in captured]
        self.globals = _globals()

    def holds(self, args: tuple) -> bool:
        if ranges.recorder is not None or _globals() != self.globals:
            return False
        for get, then in self.chains:
            try:
                if not _same(get(args), then):
                    return False
            except _UNREADABLE:
                return False
        if attr_changes[0] != self.changes:  # (a module attribute set: the full check)
            if not all(m.guards_hold() for m in self.trees) or not self.user_parts.same():
                return False
            self.changes = attr_changes[0]
        elif not self.parts.same():
            return False
        for opt, snap in self.optimizers:
            if _optimizer_hooks(opt) or not _memo._same_optimizer(snap):
                return False
        for t, state in self.captured:
            if t._is_lazy or _tensor_state(t) != state or _hooked(t):
                return False
        return True

    def describe(self) -> str:
        """What a replay checks, one line each (TORCH_LOGS=guards prints it)."""
        lines = [f"{len(self.chains)} names the code loads are the same objects",
                 f"modules {', '.join(self.roots)} and their trees as they were "
                 f"({len(self.parts.modules)} modules: classes, parameters, buffers, "
                 "children, no hooks)",
                 *(f"optimizer {type(o).__name__}: groups, settings and state, no hooks"
                   for o, _ in self.optimizers),
                 f"{len(self.captured)} tensors it reads: layout, requires_grad, no hooks",
                 "grad mode, default dtype, autocast, anomaly mode, no profiler"]
        return "\n".join("  " + line for line in lines)

    def after(self) -> None:
        for p in self.cleared:
            p._grad = None


def resolve_all(getters: list, args: tuple) -> list | None:
    """The objects the chains name now, or None where one cannot be read."""
    try:
        return [get(args) for get in getters]
    except _UNREADABLE:
        return None
