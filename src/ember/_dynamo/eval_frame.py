"""What `torch.compile` returns for a module, and the functions around compiled calls."""

from __future__ import annotations

from collections.abc import Callable

from ..graph import compiled as _compiled
from ..nn import Module


class OptimizedModule(Module):
    """A compiled module, as PyTorch wraps one: the original is `_orig_mod` (a submodule,
    so state_dict keys are prefixed `_orig_mod.`), and calling this module runs the
    original's call (hooks included) compiled, inside the wrapper's own hooks (which run
    eagerly around it, as PyTorch's do). The wrapper is a window onto the original:
    attributes are read from it, set and deleted on it (`cm.fc = nn.Linear(...)` replaces
    the original's layer), `training` is the original's, and `len` is its length."""

    _own_attributes = frozenset({"_orig_mod", "_compiled_fn", "forward", "__dict__"})

    def __init__(self, mod: Module, compiled: _compiled.Compiled) -> None:
        super().__init__()
        self.__dict__.pop("training", None)  # (the property below reads the original's)
        self._orig_mod = mod
        self.__dict__["_compiled_fn"] = compiled

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled_fn"](*args, **kwargs)

    @property
    def training(self) -> bool:
        return self._modules["_orig_mod"].training

    @training.setter
    def training(self, value: bool) -> None:
        self._modules["_orig_mod"].training = value

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def __setattr__(self, name: str, value) -> None:
        if hasattr(type(self), name) or name in self._own_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._modules["_orig_mod"], name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in self._own_attributes:
            super().__delattr__(name)
        else:
            delattr(self._modules["_orig_mod"], name)

    def __getstate__(self) -> dict:
        """Pickled (torch.save of the whole model, deepcopy) without its compiled
        programs: only the settings, from which a copy compiles afresh."""
        state = self.__dict__.copy()
        c = state.pop("_compiled_fn")
        state["_compile_settings"] = {"fullgraph": c.fullgraph, "dynamic": c.dynamic,
                                      "backend": c.backend, "mode": c.mode,
                                      "options": c.options or None}
        return state

    def __setstate__(self, state: dict) -> None:
        settings = state.pop("_compile_settings")
        super().__setstate__(state)
        self.__dict__["_compiled_fn"] = _compiled.Compiled(
            self._modules["_orig_mod"]._call_uncompiled, **settings)

    def __len__(self) -> int:
        mod = self._modules["_orig_mod"]
        if not hasattr(type(mod), "__len__"):
            raise TypeError(f"{type(mod).__name__} does not support len()")
        return len(mod)

    def __dir__(self):
        mine = dir(self._modules["_orig_mod"])
        return mine + [a for a in super().__dir__() if a not in mine]


reset = _compiled.reset


def disable(fn: Callable | None = None, recursive: bool = True):
    """`fn` runs eagerly even when called from compiled code (the graph so far runs
    first). Usable as `@disable` or `disable(fn)`."""
    if fn is None:
        return lambda f: disable(f, recursive)

    def run(*args, **kwargs):
        return _compiled.run_eagerly(fn, *args, **kwargs)

    run.__wrapped__ = fn
    run.__name__ = getattr(fn, "__name__", "disabled")
    return run


def mark_dynamic(t, index, **_kw) -> None:
    """Accepted: ember keys its programs by the recorded graph, so a dim that changes simply
    records another graph (each compiled once)."""


def mark_static(t, index=None) -> None:
    """Accepted (see `mark_dynamic`)."""


class ExplainOutput:
    """What `explain` found: graphs, breaks with their reasons and places, ops per graph."""

    def __init__(self, c: _compiled.Compiled) -> None:
        self.graphs = list(c.graphs)
        self.graph_count = len(c.graphs)
        self.graph_break_count = len(c.breaks)
        self.break_reasons = list(c.breaks)
        self.ops_per_graph = [[n.op for n in g.nodes] for g in c.graphs]
        self.recompiles = list(c.recompiles)
        self.compile_times = ""
        # whether a repeat call may skip the Python (graph/proof.py: the bytecode is
        # read now; the calls it makes are watched on a second trace)
        self.python_on_repeat = (
            "may be skipped: the bytecode is straight-line, with no store but to locals; "
            "the second trace's calls decide" if c.proven else
            "runs on every call: " + (c.not_replayed[0] if c.not_replayed else
                                      "the bytecode has a branch, loop, store, subscript "
                                      "or another construct the proof does not read"
                                      if not c.pure else "pure mode replays instead"))

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(o) for o in self.ops_per_graph)}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:\n    Reason: {b.reason}\n    At: {b.op}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {op}" for op in ops]
        if self.recompiles:
            lines.append("Recompiles:")
            lines += [f"  {r}" for r in self.recompiles]
        lines.append("What decides reuse: each graph's structure (ops, params, Python scalars)"
                     " and its inputs' shapes, dtypes and strides")
        lines.append(f"Python on a repeat call: {self.python_on_repeat}")
        return "\n".join(lines)


def explain(fn: Callable, *extra_args, **extra_kwargs):
    """`torch._dynamo.explain(fn)(*args)`: compile `fn`, run it once, and report."""
    inner = fn.fn if isinstance(fn, _compiled.Compiled) else fn

    def run(*args, **kwargs):
        c = _compiled.Compiled(inner)
        c(*args, **kwargs)
        return ExplainOutput(c)

    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run
