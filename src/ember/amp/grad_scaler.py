"""GradScaler: scale the loss so small float16 gradients don't flush to zero.

`scale(loss)` multiplies by the current scale; `step(opt)` unscales the gradients
and skips the step if any is inf/NaN; `update()` multiplies the scale by `backoff_factor`
after an overflow and by `growth_factor` after `growth_interval` clean steps. Disabled (the
default for device "cuda" where no GPU is present), every method is a pass-through.

As in PyTorch, the scale is a 0-d float32 tensor made on the first `scale()` call (so a
scaled bfloat16 loss comes back float32, and the scale grows and backs off in float32), and
each optimizer moves through the stages ready -> unscaled -> stepped between `update()`s,
which is what makes a second `unscale_` or `step` an error.
"""

from __future__ import annotations

import collections.abc
import warnings
from typing import Any

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import user_stacklevel

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"
_NO_SCALE_FIX = ("This may indicate your script did not use scaler.scale(loss or outputs) "
                 "earlier in the iteration.")


class GradScaler:
    """Dynamic loss scaling for mixed-precision training (torch.amp.GradScaler)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            from ..backends.cuda import is_available

            if not is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", stacklevel=user_stacklevel())
                self._enabled = False
        if not self._enabled:
            return
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: Tensor | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: dict[int, dict[str, Any]] = {}

    def _opt_state(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": _READY, "found_inf": None})

    def _check_scale(self, funcname: str) -> Tensor:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  {_NO_SCALE_FIX}")
        return self._scale

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """`outputs` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._lazy_scale(outputs).to(device=outputs.device)
        if isinstance(outputs, collections.abc.Iterable):
            items = (self.scale(v) if isinstance(v, collections.abc.Iterable) or
                     isinstance(v, Tensor) else _not_tensors() for v in outputs)
            return type(outputs)(items) if isinstance(outputs, (list, tuple)) else items
        _not_tensors()

    def _lazy_scale(self, like: Tensor) -> Tensor:
        if self._scale is None:
            from ..ops.creation import full

            self._scale = full((), self._init_scale, dtype=dt.float32, device=like.device)
            self._growth_tracker = full((), self._init_growth_tracker, dtype=dt.int32,
                                        device=like.device)
        return self._scale

    def _unscale_grads(self, optimizer, inv_scale: float, allow_fp16: bool) -> Tensor:
        """Multiply every gradient by `inv_scale` in place; a 0-d float32 flag, 1 if any
        gradient held an inf or NaN."""
        from .._grad_mode import no_grad
        from ..ops.creation import full

        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(g.isfinite().all()):
                        found = True
                    if inv_scale != 1.0:
                        g.mul_(inv_scale)
        return full((), 1.0 if found else 0.0, dtype=dt.float32)

    def unscale_(self, optimizer) -> None:
        """Divide `optimizer`'s gradients by the scale (once per step), noting infs/NaNs."""
        if not self._enabled:
            return
        scale = self._check_scale("unscale_")
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted unscale_ but _growth_tracker is None.  "
                                 f"{_NO_SCALE_FIX}")
        state = self._opt_state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded to float32, as PyTorch takes it
        inv = float(dt.float32.np.type(1.0 / scale.item()))
        state["found_inf"] = self._unscale_grads(optimizer, inv, allow_fp16=False)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done), then `optimizer.step()` unless a gradient was inf/NaN;
        returns what the optimizer's step returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._opt_state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        ret = None
        if not state["found_inf"].item():
            ret = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return ret

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off after a skipped step, grow it after `growth_interval` clean
        ones (the scale a float32 tensor), or set it to `new_scale`."""
        if not self._enabled:
            return
        scale = self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            # PyTorch's update kernel multiplies in float64 and rounds the product once
            tracker = self._growth_tracker
            if any(f.item() for f in found):
                scale.fill_(scale.item() * self._backoff_factor)
                tracker.fill_(0)
            else:
                grown = tracker.item() + 1
                if grown == self._growth_interval:
                    scale.fill_(scale.item() * self._growth_factor)
                    grown = 0
                tracker.fill_(grown)
        self._per_optimizer_states = {}

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        tracker = self._growth_tracker
        return self._init_growth_tracker if tracker is None else tracker.item()

    def state_dict(self) -> dict:
        """scale, factors, interval and the count of recent clean steps; {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if self._per_optimizer_states:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _not_tensors():
    raise ValueError("outputs must be a Tensor or an iterable of Tensors")
