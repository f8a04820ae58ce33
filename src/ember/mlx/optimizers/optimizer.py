"""The optimizer shell MLX's optimizers share, and `MultiOptimizer`.

An optimizer is two per-parameter functions, `init_single(parameter, state)` (fill an
empty state dict) and `apply_single(gradient, parameter, state)` (update the state dict
in place, return the new parameter). `Optimizer` walks them over parameter trees (dicts,
lists and tuples of arrays) and keeps the state as one dict tree: `step` (a uint64
count of the updates taken), `learning_rate` (an array, or a schedule's value at `step`)
and, under each parameter's path, that parameter's own dict.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import core as mx
from ..utils import tree_flatten, tree_map, tree_merge, tree_unflatten
from ._memo import apply_one
from .schedules import Schedule


def _empty_states(params):
    """`params`' structure with an empty dict at each leaf."""
    return tree_map(lambda _: {}, params)


def _grow(params, state):
    """`state` with an (empty) entry for every leaf of `params` it lacks; dicts are
    filled in place, lists and tuples rebuilt (MLX's layout: lists stay lists)."""
    if isinstance(params, list | tuple):
        entries = list(state)
        for i, p in enumerate(params):
            if i < len(entries):
                entries[i] = _grow(p, entries[i])
            else:
                entries.append(_empty_states(p))
        return type(params)(entries)
    if isinstance(params, dict):
        for k, p in params.items():
            state[k] = _grow(p, state[k]) if k in state else _empty_states(p)
    return state


class Optimizer:
    """The base of every optimizer: the state tree, schedules, and the walk of
    `init_single` / `apply_single` over parameter trees."""

    def __init__(self, schedulers: dict[str, Schedule] | None = None) -> None:
        self._initialized = False
        self._state: dict = {"step": mx.zeros((), dtype=mx.uint64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model, gradients: dict) -> None:
        """One step on `model` (anything with MLX's `Module.update(params)`): its
        parameters become `apply_gradients(gradients, model)`."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: dict) -> None:
        """Make the state entries of `parameters` that do not exist yet.

        Optional (the first update does it), but it lets a program read or save the
        state before the first step. Entries that already exist are kept, so a loaded
        state survives."""
        _grow(parameters, self._state)

        def init_leaf(parameter, state):
            if not state:
                self.init_single(parameter, state)

        tree_map(init_leaf, parameters, self._state)
        self._initialized = True

    def init_single(self, parameter: mx.array, state: dict) -> None:
        """Fill the empty dict `state` for `parameter` (each optimizer defines it)."""
        raise NotImplementedError()

    def apply_gradients(self, gradients: dict, parameters: dict) -> Any:
        """The parameters after one step, shaped like `gradients`.

        `parameters` may hold more than `gradients` (a whole model); only the entries
        with a gradient are updated and returned."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(functools.partial(apply_one, self), gradients, parameters, self.state)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        """One parameter's step: updates `state` in place and returns the new
        parameter (each optimizer defines it)."""
        raise NotImplementedError()

    @property
    def state(self) -> dict:
        """The state tree: `step`, `learning_rate`, and one dict per parameter."""
        return self._state

    @state.setter
    def state(self, state: dict) -> None:
        # a new state may lack entries: the next update grows it
        self._initialized = False
        self._state = state

    @property
    def step(self) -> mx.array:
        return self.state["step"]

    @property
    def learning_rate(self) -> mx.array:
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: float | mx.array) -> None:
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, value: float | mx.array | Schedule) -> None:
        """Put hyperparameter `name` in the state: a number as an array, a schedule as
        its value now (and again before every step)."""
        if callable(value):
            self._schedulers[name] = value
            self.state[name] = value(self.step)
        else:
            self.state[name] = mx.array(value)


class MultiOptimizer(Optimizer):
    """Several optimizers, each over the parameters its filter accepts.

    `filters[i](path, array)` picks the parameters of `optimizers[i]` (paths such as
    "layers.0.weight"); the first filter that accepts a parameter wins, and the last
    optimizer, which has no filter, takes the rest."""

    def __init__(self, optimizers: list[Optimizer],
                 filters: list[Callable[[str, mx.array], bool]] | None = None) -> None:
        super().__init__()
        self._state = {}
        filters = list(filters or [])
        if len(filters) != len(optimizers) - 1:
            raise ValueError(
                f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = [*filters, lambda *args, **kwargs: True]

    def _split(self, tree: dict) -> list:
        """`tree` cut into one tree per optimizer (an empty dict where none fits)."""
        if len(self.optimizers) == 1:
            return [tree]
        parts: list[list] = [[] for _ in self.optimizers]
        for path, leaf in tree_flatten(tree):
            i = next(i for i, accepts in enumerate(self.filters) if accepts(path, leaf))
            parts[i].append((path, leaf))
        return [tree_unflatten(p) if p else {} for p in parts]

    def init(self, parameters: dict) -> None:
        for optimizer, part in zip(self.optimizers, self._split(parameters)):
            optimizer.init(part)

    def apply_gradients(self, gradients: dict, parameters: dict) -> Any:
        out: Any = {}
        for optimizer, part in zip(self.optimizers, self._split(gradients)):
            out = tree_merge(out, optimizer.apply_gradients(part, parameters))
        return out

    @property
    def state(self) -> dict:
        """`{"states": [each optimizer's state]}`."""
        return {"states": [o.state for o in self.optimizers]}

    @state.setter
    def state(self, state: dict) -> None:
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for optimizer, s in zip(self.optimizers, state["states"]):
            optimizer.state = s

    @property
    def learning_rate(self) -> mx.array:
        """The first optimizer's; setting it sets every optimizer's."""
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate: float | mx.array) -> None:
        for optimizer in self.optimizers:
            optimizer.learning_rate = learning_rate
