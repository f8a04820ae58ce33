"""Activation checkpointing: run a block without keeping its intermediates, and run it
again during backward to get them back.

`use_reentrant=False` records the block's graph as usual (ember keeps no cheaper
recomputation graph, so it saves no memory, but gradients, outputs and RNG draws are
exactly those of a plain call), and replays the block when the backward reaches it, as
PyTorch's recomputation does, so its side effects (forward hooks) happen as often as there.
The reentrant form is a custom Function whose backward
replays the block with the RNG state and autocast state it first ran with, so dropout
masks and dtypes agree.

Selective checkpointing (`create_selective_checkpoint_contexts` with a policy saying which
ops' outputs to save and which to recompute) is accepted; since the non-reentrant form
saves every output already, every policy gives the same numbers and the policy function is
not consulted (PyTorch calls it once per aten op, which ember does not have).
"""

from __future__ import annotations

import contextlib
import enum
import warnings

from .._tensor import Tensor
from ..amp import autocast_mode as _amp
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import _seq as _node_seq

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
    (ember always replays the whole block, so this only records the setting)."""
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


class _SelectiveContext(contextlib.nullcontext):
    """One of the two contexts `create_selective_checkpoint_contexts` returns; it carries the
    policy (ember's non-reentrant checkpoint saves every output, so it changes nothing)."""

    def __init__(self, policy_fn, storage: dict) -> None:
        super().__init__()
        self.policy_fn = policy_fn
        self.storage = storage


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
                      stacklevel=2)


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


def _replay_state(preserve_rng_state: bool) -> dict:
    """What a replay of the block restores: the RNG state (unless told not to) and autocast."""
    from ..random import get_rng_state

    return {"rng": get_rng_state() if preserve_rng_state else None,
            "autocast": {"enabled": _amp.is_autocast_enabled("cpu"),
                         "dtype": _amp.get_autocast_dtype("cpu"),
                         "cache_enabled": _amp.is_autocast_cache_enabled()}}


def _replay(function, args, kwargs, state: dict, recompute_context) -> None:
    """Run the block again as PyTorch's backward does (with grad on, its RNG and autocast
    state restored, on inputs detached from the graph) and drop what it returns."""
    from ..random import fork_rng, set_rng_state

    inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
              for a in args]
    with fork_rng(enabled=state["rng"] is not None), enable_grad(), \
            _amp.autocast("cpu", **state["autocast"]), recompute_context:
        if state["rng"] is not None:
            set_rng_state(state["rng"])
        function(*inputs, **kwargs)


def _saves(node) -> bool:
    """Whether `node` keeps a tensor for its backward (what PyTorch would unpack, and so
    recompute, when the backward reaches it)."""
    saved = getattr(node, "_saved", None) or ()
    return any(isinstance(s, Tensor) for s in saved) or \
        getattr(node, "_out", None) is not None or getattr(node, "_kept", None) is not None


def _replay_in_backward(outputs, start: int, replay) -> None:
    """Have the backward run `replay` once per pass, when it first reaches a node the block
    recorded (numbered `start` or above) that saved a tensor.

    NOTE: PyTorch's non-reentrant checkpoint keeps no intermediates and recomputes the block
    when the backward first unpacks one of them, so the block's side effects (module hooks,
    counters) happen again then. ember keeps the intermediates (the gradients come from the
    graph recorded in forward) but replays the block at that same moment, so those side
    effects match. PyTorch may stop the replay early, once every saved tensor is back: a
    side effect after the block's last saving op is not repeated there, but is here.
    """
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
        if seq != float("inf") and _saves(node):
            region.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    last = [None]  # the number of the block's node the backward ran last

    def hook(node):
        def prehook(grads):
            # a pass runs nodes in decreasing number order: one that does not decrease
            # starts a new pass (a second backward with retain_graph=True replays again)
            if last[0] is None or node._seq >= last[0]:
                replay()
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
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
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
    start = next(_node_seq)  # every node the block records numbers above this
    state = _replay_state(preserve_rng_state)
    with forward_context:
        outputs = function(*args, **kwargs)
    _replay_in_backward(outputs, start, lambda: _replay(function, args, kwargs, state,
                                                         recompute_context))
    return outputs


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
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
