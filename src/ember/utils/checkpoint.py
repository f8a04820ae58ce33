"""Activation checkpointing: run a block without keeping its intermediates, and run it
again during backward to get them back.

`use_reentrant=False` runs the block under saved-tensor hooks of its own: its ops keep
numbered slots instead of the tensors they save, and when the backward first needs one the
block runs again (RNG and autocast state restored) and its ops' saves fill the slots, as in
PyTorch (see `_Frame`). The reentrant form is a custom Function whose backward replays the
block with the RNG state and autocast state it first ran with, so dropout masks and dtypes
agree.

Selective checkpointing (`create_selective_checkpoint_contexts` with a policy saying which
ops' outputs to save and which to recompute): the policy sees each op the block runs as
its `torch.ops.aten` overload, once, in the forward, as in PyTorch; ember then recomputes
every saved tensor, which gives the numbers of every policy, and refuses a second backward
through a region whose policy kept an output, as PyTorch does.
"""

from __future__ import annotations

import contextlib
import enum
import warnings

from .._core import dispatch
from .._tensor import Tensor, _alias
from .._user_warnings import user_stacklevel
from ..amp import autocast_mode as _amp
from ..autograd import saved_hooks as _saved_hooks
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import _seq as _node_seq
from ..autograd.graph import ag_meta

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]

_DEFAULT_DETERMINISM_MODE = "default"
_DETERMINISM_CHECKS = ("default", "none")
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Override `checkpoint`'s `debug` flag for the block (None defers to the call's)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoint stops recomputing once it has what backward needs
    (overrides the `early_stop` argument of the checkpoints made in the block)."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class CheckpointError(RuntimeError):
    pass


class CheckpointPolicy(enum.Enum):
    """Whether selective checkpointing saves an op's output or recomputes it."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives as its first argument."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


_SAVED, _RECOMPUTE, _CONSUMED = "saved", "recompute", "consumed"
# ops a policy never sees (PyTorch's SAC_IGNORED_OPS: detach and the metadata queries,
# which in ember are not ops)
_IGNORED = {"detach.default"}
_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are "
                 "nondeterministic or depend on global state that changed between forward and "
                 "backward.")


class _PolicyWatcher(dispatch.Interpreter):
    """The level of the `bind` stack under a selective checkpoint. In the forward it shows
    the policy each op the block runs, as the ATen overload PyTorch would run for it, after
    it ran (the context carries the output), and notes per op and call whether its output
    is kept; in a replay it finds each op's note again, as PyTorch's caching and cached
    dispatch modes do. (ember recomputes every output, which gives the same numbers; a kept
    output, as in PyTorch, serves one backward only.)"""

    observer = True

    def __init__(self, policy_fn, storage: dict) -> None:
        self.policy_fn, self.storage = policy_fn, storage
        self.calls: dict = {}  # op -> how many times this pass ran it

    def process(self, prim, args: tuple, params: dict):
        from .._aten import for_primitive

        op = for_primitive(prim, args, params)
        if op is not None and op.__name__ in _IGNORED:
            op = None
        if op is not None and self.policy_fn is None:
            self._replayed(op)
        out = prim.impl(prim, args, params) if self.parent is None else \
            self.lower(prim, args, params)
        if op is not None and self.policy_fn is not None:
            shown = list(out) if isinstance(out, tuple) and len(op._schema.returns) == 1 \
                else out  # (a list-returning op such as split)
            policy = self.policy_fn(
                SelectiveCheckpointContext(is_recompute=False, op_output=shown), op, *args)
            if isinstance(policy, bool):
                policy = CheckpointPolicy.MUST_SAVE if policy else \
                    CheckpointPolicy.PREFER_RECOMPUTE
            kept = policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
            self.storage.setdefault(op, []).append(_SAVED if kept else _RECOMPUTE)
        return out

    def _replayed(self, op) -> None:
        idx = self.calls[op] = self.calls.get(op, -1) + 1
        notes = self.storage.get(op)
        if notes is None:
            raise RuntimeError(f"{op} encountered during backward but not found in storage. "
                               + _SAC_MISMATCH)
        if idx >= len(notes):
            raise RuntimeError(f"{op} invocation index {idx} encountered during backward but "
                               "not found in storage. " + _SAC_MISMATCH)
        if notes[idx] == _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if notes[idx] == _SAVED:
            notes[idx] = _CONSUMED


class _SelectiveContext:
    """One of the two contexts `create_selective_checkpoint_contexts` returns: the forward
    one (with the policy) or the replay one (without), sharing their notes."""

    def __init__(self, policy_fn, storage: dict) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self._watcher: _PolicyWatcher | None = None

    def __enter__(self):
        self._watcher = _PolicyWatcher(self.policy_fn, self.storage)
        dispatch.push(self._watcher)
        return self

    def __exit__(self, *exc) -> bool:
        dispatch.pop(self._watcher)
        self._watcher = None
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) context pair for `checkpoint(..., context_fn=...)` that saves
    the outputs of the ops a policy (a function, or a list of ops to save) picks."""
    if isinstance(policy_fn_or_list, list):
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = {}
    return _SelectiveContext(policy_fn, storage), _SelectiveContext(None, storage)


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=user_stacklevel())


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from ..random import get_rng_state

        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.autocast_kwargs = {"enabled": _amp.is_autocast_enabled("cpu"),
                               "dtype": _amp.get_autocast_dtype("cpu"),
                               "cache_enabled": _amp.is_autocast_cache_enabled()}
        ctx.constants = [None if isinstance(a, Tensor) else a for a in args]
        ctx.needs_grad = [isinstance(a, Tensor) and a.requires_grad for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd.engine import backward
        from ..random import fork_rng, set_rng_state

        saved = iter(ctx.saved_tensors)
        inputs = [c if c is not None else next(saved).detach().requires_grad_(need)
                  for c, need in zip(ctx.constants, ctx.needs_grad)]
        with fork_rng(enabled=ctx.rng_state is not None), enable_grad(), \
                _amp.autocast("cpu", **ctx.autocast_kwargs):
            if ctx.rng_state is not None:
                set_rng_state(ctx.rng_state)
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(i.grad if isinstance(i, Tensor) else None for i in inputs)


class _StopReplay(Exception):
    """Raised inside a replay once it has given back every tensor the forward saved."""


_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to\n"
        "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
        "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
        "enable checkpoint\u2011debug mode globally.\n")


def _metadata(t) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One non-reentrant checkpoint call: what the block saved, and how to get it back.

    In the forward the block runs under the frame's own saved-tensor hooks: each tensor an op
    saves becomes a numbered slot (the tensor is not kept; only its metadata is, for the
    determinism check), and the user's saved_tensors_hooks see only the block's inputs, as
    in PyTorch. When the backward first needs a slot, the block runs again (grad on, RNG and
    autocast state restored) and the tensors its ops save, in the same order, fill the slots.
    So gradients come from the recomputed values, a block that differs on replay raises
    CheckpointError, and the block's side effects (forward hooks, counters) happen again.
    """

    def __init__(self, function, args, kwargs, preserve_rng_state: bool, recompute_context,
                 early_stop: bool, check: bool) -> None:
        from ..random import get_rng_state

        self.function, self.kwargs = function, kwargs
        self.recompute_context = recompute_context
        self.early_stop, self.check = early_stop, check
        self.rng = get_rng_state() if preserve_rng_state else None
        self.autocast = {"enabled": _amp.is_autocast_enabled("cpu"),
                         "dtype": _amp.get_autocast_dtype("cpu"),
                         "cache_enabled": _amp.is_autocast_cache_enabled()}
        # the inputs, packed by the hooks active outside the block (the user's, or an
        # enclosing checkpoint's), with their versions and whether they required grad: what
        # an unpack hook gives back may be detached, and the replay must still see an input
        # that requires grad as one (as PyTorch's saved variables keep requires_grad)
        hooked = _saved_hooks.active()
        self.inputs = [(_saved_hooks.pack((a,))[0] if hooked else a, a._version)
                       if isinstance(a, Tensor) else (a, None) for a in args]
        self.input_grads = [isinstance(a, Tensor) and a.requires_grad for a in args]
        self.metas: list = []  # one per slot: the saved tensor's metadata (None: not checked)
        # one per slot: where the saved tensor sits in the forward graph (its grad_fn and
        # output number, or the leaf itself), so a double backward can flow through it
        self.origins: list = []
        self.recomputed: list | None = None  # the current backward pass's values, by slot

    def pack(self, t) -> int:
        self.metas.append(_metadata(t) if self.check else None)
        fn = t.grad_fn
        self.origins.append(None if not t.requires_grad else (fn, t.output_nr) if fn is not None
                            else t)
        return len(self.metas) - 1

    def unpack(self, slot: int):
        if self.recomputed is None:
            self.replay()
        value, origin = self.recomputed[slot], self.origins[slot]
        if origin is None or not is_grad_enabled():
            return value
        # (a backward with create_graph=True: the value takes the saved tensor's place in
        # the forward graph, as PyTorch's unpacked saved tensors do)
        if isinstance(origin, Tensor):  # a leaf: the tensor itself
            return origin
        t = _alias(value)
        t._grad_fn = origin[0]
        t._requires_grad = True
        if origin[1]:
            ag_meta(t).output_nr = origin[1]
        return t

    def get_inputs(self) -> list:
        """The saved inputs back (unpacked), each checked to be at the version it was saved
        at: a block input changed in place, by the block or after it, cannot be replayed."""
        from ..autograd.engine import version_error

        out = []
        for a, version in self.inputs:
            if version is not None:
                a = _saved_hooks.unpack(a)
                if a._version != version:
                    fn = a.grad_fn
                    raise version_error(a, version, fn, a.output_nr if fn is not None else 0)
            out.append(a)
        return out

    def replay(self) -> None:
        """Run the block again and keep what its ops save, slot by slot."""
        from ..random import fork_rng, set_rng_state

        inputs = [a.detach().requires_grad_(need) if isinstance(a, Tensor) else a
                  for a, need in zip(self.get_inputs(), self.input_grads)]
        values: list = []
        n = len(self.metas)

        def pack(t):
            if len(values) >= n:
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass.\n" + _TIP)
            values.append(t.detach() if t.requires_grad else t)
            if self.early_stop and len(values) == n:
                raise _StopReplay
            return t

        try:
            with fork_rng(enabled=self.rng is not None), enable_grad(), \
                    _amp.autocast("cpu", **self.autocast), self.recompute_context, \
                    _saved_hooks.saved_tensors_hooks(pack, lambda t: t):
                if self.rng is not None:
                    set_rng_state(self.rng)
                self.function(*inputs, **self.kwargs)
        except _StopReplay:
            pass
        self._check(values)
        self.recomputed = values

    def _check(self, values: list) -> None:
        if len(values) != len(self.metas):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metas)}\n"
                f"Number of tensors saved during recomputation: {len(values)}.\n" + _TIP)
        if not self.check:
            return
        bad = "".join(f"tensor at position {i}:\nsaved metadata: {m}\n"
                      f"recomputed metadata: {_metadata(v)}\n"
                      for i, (m, v) in enumerate(zip(self.metas, values)) if m != _metadata(v))
        if bad:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{bad}.\n" + _TIP)


def _new_pass_resets(frame: _Frame, outputs, start: int) -> None:
    """Have each backward pass through the block's nodes replay it once: a pre-hook on the
    block's nodes (numbered `start` or above) drops the previous pass's values when a new
    pass begins (a pass runs nodes in decreasing number order; a second backward with
    retain_graph=True starts over)."""
    seen, todo, region = set(), [], []
    for o in _tensors_in(outputs):
        if o.grad_fn is not None:
            todo.append(o.grad_fn)
    while todo:
        node = todo.pop()
        seq = getattr(node, "_seq", -1)
        if node is None or id(node) in seen or not seq >= start:
            continue
        seen.add(id(node))
        if seq != float("inf"):
            region.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    last = [None]  # the number of the block's node the backward ran last

    def hook(node):
        def prehook(grads):
            if last[0] is not None and node._seq >= last[0]:
                frame.recomputed = None
            last[0] = node._seq
        return prehook

    for node in region:
        node.register_prehook(hook(node))


def _tensors_in(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check: str = _DEFAULT_DETERMINISM_MODE,
               debug: bool = False, early_stop: bool = True, **kwargs):
    """`function(*args, **kwargs)`, with its intermediates recomputed during backward."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=user_stacklevel())
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if (_checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug) and \
            context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():  # (as PyTorch: no replay, and not under the contexts either)
        return function(*args, **kwargs)
    early = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None \
        else early_stop
    frame = _Frame(function, args, kwargs, preserve_rng_state, recompute_context, early,
                   determinism_check == "default")
    start = next(_node_seq)  # every node the block records numbers above this
    with _saved_hooks.saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        outputs = function(*args, **kwargs)
    _new_pass_resets(frame, outputs, start)
    return outputs


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=user_stacklevel())
        use_reentrant = True
    if hasattr(functions, "children") and not isinstance(functions, list):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        chunk = functions[start:end + 1]
        input = checkpoint(lambda x, chunk=chunk: _run_all(chunk, x), input,
                           use_reentrant=use_reentrant, **kwargs)
    return _run_all(functions[end + 1:], input)


def _run_all(functions, x):
    for f in functions:
        x = f(x)
    return x
