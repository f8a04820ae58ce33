"""Weight averaging: `AveragedModel` (SWA and EMA), its `SWALR` schedule, and `update_bn`.

`AveragedModel` keeps a deep copy of a model whose parameters (and, with
`use_buffers=True`, buffers) are a running average of the model's. The default
average is the equal-weight SWA mean; `get_ema_*` build exponential moving averages.
As PyTorch's on the CPU, the default takes the per-tensor route `avg + (p - avg)/(n+1)`,
and the `multi_avg_fn` builders update a list of tensors with `lerp_`, so the averages
agree with PyTorch's bit for bit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .. import _grad_mode as grad_mode
from .._dtype import int64
from .._tensor import Tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..ops import creation as _creation
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _is_float(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An EMA update of lists of tensors in place: `ema.lerp_(p, 1 - decay)`."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_params, current_params, _num_averaged) -> None:
        if _is_float(ema_params[0]):
            for e, p in zip(ema_params, current_params):
                e.lerp_(p, 1 - decay)
        else:
            for e, p in zip(ema_params, current_params, strict=True):
                e.copy_(e * decay + p * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """An equal-weight running mean of lists of tensors, updated in place."""

    @grad_mode.no_grad()
    def swa_update(averaged_params, current_params, num_averaged) -> None:
        if _is_float(averaged_params[0]):
            weight = 1 / (num_averaged + 1)  # (a 0-d float tensor when n is a tensor)
            w = weight.item() if isinstance(weight, Tensor) else weight
            for a, p in zip(averaged_params, current_params):
                a.lerp_(p, w)
        else:
            diffs = [p - a for a, p in zip(averaged_params, current_params)]
            for a, d in zip(averaged_params, diffs):
                if isinstance(num_averaged, Tensor):
                    a.addcdiv_(d, num_averaged + 1)
                else:
                    a.add_(d, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """An EMA of one tensor: returns `decay * ema + (1 - decay) * p`."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The equal-weight running mean of one tensor: returns `avg + (p - avg) / (n + 1)`."""

    @grad_mode.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_dtype(avg: list, cur: list) -> list:
    """(avg, cur) lists grouped by the averaged tensors' dtype, in order of appearance."""
    groups: dict = {}
    for a, p in zip(avg, cur):
        ga, gp = groups.setdefault(a.dtype, ([], []))
        ga.append(a)
        gp.append(p)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of `model` (as `self.module`) holding a running average of its parameters.

    `update_parameters(model)` first copies the model, then averages with `avg_fn(avg, p, n)`
    (one tensor, returns the new average), or `multi_avg_fn(avgs, ps, n)` (lists, in place),
    or by default the SWA mean. `n_averaged` counts the updates. Buffers are copied from the
    model unless `use_buffers=True`, which averages them too."""

    n_averaged: Tensor

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current parameters (and buffers) into the average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        avg, cur = [], []
        first = bool(self.n_averaged == 0)
        for a, p in zip(mine, theirs):
            p = p.detach().to(a.device)
            avg.append(a.detach())
            cur.append(p)
            if first:
                a.detach().copy_(p)
        if self.n_averaged > 0:
            with grad_mode.no_grad():
                self._average(avg, cur)
        if not self.use_buffers:
            for b, mb in zip(self.module.buffers(), model.buffers(), strict=True):
                b.detach().copy_(mb.detach().to(b.device))
        self.n_averaged += 1

    def _average(self, avg: list, cur: list) -> None:
        if self.avg_fn is not None and self.multi_avg_fn is None:
            for a, p in zip(avg, cur):
                a.copy_(self.avg_fn(a, p, self.n_averaged.to(a.device)))
            return
        for group_avg, group_cur in _by_dtype(avg, cur):
            n = self.n_averaged.to(group_avg[0].device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(group_avg, group_cur, n)
            else:  # NOTE: the CPU route of PyTorch (its foreach route is for accelerators)
                swa = get_swa_avg_fn()
                for a, p in zip(group_avg, group_cur, strict=True):
                    a.copy_(swa(a, p, n))


@grad_mode.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute every batch norm's running statistics by one pass over `loader`.

    The statistics are reset and averaged over all batches (momentum None, a cumulative
    mean); a batch that is a list or tuple contributes its first element."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to its `swa_lr` over `anneal_epochs` steps, along a
    cosine (`"cos"`) or a straight line (`"linear"`), then holds it there."""

    def __init__(self, optimizer: Optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        # the rate the schedule started from, recovered from the last one
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, strategy: str) -> None:
        self._anneal_strategy = strategy
        self.anneal_func = self._cosine_anneal if strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
