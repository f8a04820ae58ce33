"""The base every learning-rate scheduler builds on: `LRScheduler` (its step, its state
and the warning PyTorch gives for `get_lr()` outside `step()`), and the per-group helpers
the schedulers share. The schedulers themselves are in lr_scheduler.py."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from .optimizer import Optimizer


def _copy(value):
    """A tensor's clone (a scheduler's list never aliases a group's tensor), else the value."""
    return value.clone() if isinstance(value, Tensor) else value


def _lrs(optimizer: Optimizer, key: str = "lr") -> list:
    """Each group's `key` (a tensor learning rate cloned), PyTorch's
    `_param_groups_val_list`."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    """group[key] = value, but a tensor there is filled in place (PyTorch's
    `_update_param_group_val`): an optimizer made with `lr=tensor` keeps its tensor."""
    if isinstance(group[key], Tensor):
        if isinstance(value, Tensor) and value.dim() != 0:
            value = value.squeeze()
        group[key].fill_(value)
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return [_copy(v) for v in value]
    return [_copy(value) for _ in optimizer.param_groups]


def _warned_outside_step(get_lr: Callable) -> Callable:
    @functools.wraps(get_lr)
    def checked(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=user_stacklevel())
        return get_lr(self)

    return checked


def _track_step_calls(opt: Optimizer) -> None:
    """Wrap `opt.step` (once) so that it records a call: the scheduler's first `step()`
    warns, as PyTorch's, when the optimizer has not stepped yet, or when its `step` was
    replaced after the scheduler was made."""
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    import weakref

    opt_ref = weakref.ref(opt)
    func = opt.step.__func__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        o = opt_ref()
        o._opt_called = True
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    opt.step = wrapper


class LRScheduler:
    """Base: `step()` advances `last_epoch` and writes `get_lr()` into the param groups.

    `get_lr()` computes the next step's rates from the last ones; called outside `step()`
    it warns (as PyTorch's) that `get_last_lr()` is what reads them."""

    _is_initial = False
    _get_lr_called_within_step = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # NOTE: only the library's own `get_lr`s warn (PyTorch checks inside each built-in
        # one); a user's subclass that writes its own `get_lr` is called freely, silently.
        if "get_lr" in cls.__dict__ and cls.__module__.startswith(__package__ + "."):
            cls.get_lr = _warned_outside_step(cls.__dict__["get_lr"])

    def _rates(self) -> list:
        """`get_lr()` as `step()` calls it."""
        self._get_lr_called_within_step = True
        try:
            return self.get_lr()
        finally:
            self._get_lr_called_within_step = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        _track_step_calls(optimizer)
        self.base_lrs = _lrs(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        return self._last_lr

    def get_lr(self) -> list:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1:  # (the first step() after the one the constructor makes)
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=user_stacklevel())
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=user_stacklevel())
        self._step_count += 1
        if epoch is not None:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is being "
                "deprecated where possible. Please use `scheduler.step()` to step the scheduler. "
                "During the deprecation, if epoch is different from None, the closed form is "
                "used instead of the new chainable form, where available. Please open an issue "
                "if you are unable to replicate your use case: "
                "https://github.com/pytorch/pytorch/issues/new/choose.", UserWarning,
                stacklevel=user_stacklevel())
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self._rates()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self._rates()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _lrs(self.optimizer)
