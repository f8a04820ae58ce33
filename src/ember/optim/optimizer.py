"""The Optimizer shell: param_groups, state, zero_grad, step hooks, state_dict.

Its layout is PyTorch's, so `state_dict()` round-trips between the two: `state`
maps an integer parameter id (order of appearance across groups) to that
parameter's state, and `param_groups` holds each group's hyper-parameters with
`params` replaced by those ids. An algorithm subclass supplies two per-parameter
pieces: `_init_state(p, state, group)` and `_update(p, grad, state, group)`.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from .. import _dtype as dt
from .._core.memo_seam import memos
from .._core.ranges import ranges
from .._grad_mode import state as _grad_state
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import RemovableHandle
from ..ops._fma import fma
from ..ops.dtype_views import view_as_complex, view_as_real

_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A hook run before every optimizer's step: `hook(optimizer, args, kwargs)`."""
    h = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[h.id] = hook
    return h


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    h = RemovableHandle(_global_post_hooks)
    _global_post_hooks[h.id] = hook
    return h


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _type_name(t: Tensor) -> str:
    from ..ops._common import type_name

    return f"torch.{type_name(t.dtype)}Tensor"


class Optimizer:
    """Base class: holds param_groups and per-parameter state, runs `step`."""

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_type_name(params)}"
            )
        groups = list(params)  # (a non-iterable raises Python's TypeError, as in torch)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        if self._scalar_state:
            self._tensor_scalars()

    # The per-parameter state entries PyTorch keeps as 0-d tensors ("step", NAdam's
    # "mu_product"...): its algorithms' __setstate__ (which load_state_dict runs) makes
    # them tensors again when a saved state holds numbers, as an old checkpoint does.
    _scalar_state: tuple[str, ...] = ()

    def _tensor_scalars(self) -> None:
        """Numbers among `_scalar_state` entries become 0-d tensors, as PyTorch makes them:
        `step` a float in the scalar dtype (float32 in a fused group), the others in the
        scalar dtype as they are."""
        from ..ops.creation import tensor

        scalar = dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state.get(p)
                if not s:
                    continue
                for key in self._scalar_state:
                    v = s.get(key)
                    if v is None or isinstance(v, Tensor):
                        continue
                    if key == "step":
                        d = dt.float32 if group.get("fused") else scalar
                        s[key] = tensor(float(v), dtype=d, device=p.device)
                    else:
                        s[key] = tensor(v, dtype=scalar, device=p.device)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # -- groups -------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p
                                 for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                from .._runtime import typename

                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {typename(p)}"
                )
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=user_stacklevel())
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients -------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's `.grad` (to None by default, else zero it in place)."""
        recorder = ranges.recorder  # a profiler names the call as PyTorch's does
        token = None if recorder is None else recorder.enter(
            f"Optimizer.zero_grad#{type(self).__name__}.zero_grad", user=True)
        try:
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    if set_to_none:
                        p._grad = None
                    else:
                        g = p._grad
                        if g._grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()
        finally:
            if token is not None:
                recorder.exit(token)

    # -- step --------------------------------------------------------------------

    def _step_groups(self) -> None:
        """Apply the algorithm's update to every parameter that has a gradient."""
        for group in self.param_groups:
            # (only foreach or capturable can be refused: the usual group asks no more)
            refusal = self._refusal(group) if group.get("foreach") or group.get("capturable") \
                else None
            seen = False
            sparse_refusal = self._sparse_refusal
            if group.get("fused"):
                _check_fused_dtypes(self, group)
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if sparse_refusal is not None and grad.__class__ is not Tensor \
                        and grad.is_sparse:
                    raise RuntimeError(sparse_refusal)
                seen = True
                state = self.state.get(p)
                if not state:
                    # (an algorithm that keeps nothing, SGD without momentum, leaves no
                    # entry behind, as in PyTorch's state_dict)
                    state = {}
                    self._init_state(p, state, group)
                    if state:
                        self.state[p] = state
                if refusal is None:
                    if p._dtype.is_complex:
                        _update_as_real(self, p, grad, state, group)
                    else:
                        self._update(p, grad, state, group)
            if refusal is not None and seen:  # (after the group's state is made, as torch)
                raise refusal

    # PyTorch's refusals of flags at step time, per algorithm: whether its foreach update
    # refuses `differentiable`, and for capturable=True what its message names and whether
    # its device list names XLA (single-tensor update, foreach update).
    _foreach_refuses_autograd = True
    # PyTorch's refusal of a sparse gradient, for the algorithms with no sparse update
    _sparse_refusal: str | None = None
    _capturable_names = ("params and state_steps", "params and state_steps")
    _capturable_xla = (True, False)
    # whether a fused update checks its parameters' dtype once, on the first it steps
    _fused_check_once = False

    def _refusal(self, group: dict) -> AssertionError | None:
        """The AssertionError PyTorch's update raises for this group's flags on the CPU (a
        foreach update is not differentiable; capturable=True wants a device that captures
        graphs), or None. A fused update checks neither."""
        if group.get("fused"):
            return None
        foreach = bool(group.get("foreach"))
        if foreach and group.get("differentiable") and self._foreach_refuses_autograd:
            return AssertionError("_foreach ops don't support autograd")
        if group.get("capturable"):
            devices = ["cuda", "xpu", "hpu", "privateuseone"]
            if self._capturable_xla[foreach]:
                devices.append("xla")
            return AssertionError(f"If capturable=True, {self._capturable_names[foreach]} must "
                                  f"be on supported devices: {devices}.")
        return None

    def step(self, closure: Callable | None = None):
        """One optimisation step; `closure` re-evaluates the model and returns the loss. The
        update runs without recording a graph unless the optimizer is `differentiable`
        (then, as in PyTorch, with grad mode on: in-place updates of a leaf that requires
        grad refuse, and those of other tensors are recorded)."""
        cls = type(self)
        if cls._update is Optimizer._update and cls._step_groups is Optimizer._step_groups:
            raise NotImplementedError  # a bare Optimizer has no algorithm, as in PyTorch
        # (set_grad_enabled's save and restore, inline: this runs every training step)
        prev = _grad_state.enabled
        _grad_state.enabled = bool(self.defaults.get("differentiable", False))
        try:
            loss = None
            if closure is not None:
                with enable_grad():
                    loss = closure()
            if memos.active and memos.optimizer_step is not None:
                memos.optimizer_step(self)  # (inside a compiled call: graph/memo.py)
            else:
                self._step_groups()
        finally:
            _grad_state.enabled = prev
        return loss

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        raise NotImplementedError

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        raise NotImplementedError

    # -- hooks -------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        h = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[h.id] = hook
        return h

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        h = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[h.id] = hook
        return h

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state_dict ----------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """`{'state': {id: {...}}, 'param_groups': [{..., 'params': [ids]}]}` as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {index[id(k)] if isinstance(k, Tensor) else k: v for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            out = hook(self, sd)
            if out is not None:
                sd = out
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore state saved by `state_dict()` (tensors cast to each parameter's dtype)."""
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            out = hook(self, state_dict)
            if out is not None:
                state_dict = out
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                group = next((g for g in state_dict["param_groups"] if k in g["params"]), {})
                float_step = bool(group.get("fused") or group.get("capturable"))
                state[p] = {key: _cast_state(p, key, val, float_step) for key, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


def _cast_state(p: Tensor, key, value, float_step: bool):
    """A saved state value for parameter `p`, as PyTorch's load_state_dict makes it: a
    tensor on p's device and, but for `step`, of p's dtype when p is floating point; the
    same tensor when that changes nothing (the loaded state then shares it with the
    state_dict, as in PyTorch). `step` keeps its dtype unless the group is fused or
    capturable (float32). Containers are rebuilt around their items; other values are
    taken as they are."""
    if isinstance(value, Tensor):
        if key == "step":
            return value.to(dtype=dt.float32, device=p.device) if float_step else value
        if p.is_floating_point():
            return value.to(dtype=p.dtype, device=p.device)
        return value.to(device=p.device)
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v, float_step) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(p, None, v, float_step) for v in value)
    return value


def _add_hook(store: OrderedDict, hook, prepend: bool) -> RemovableHandle:
    h = RemovableHandle(store)
    store[h.id] = hook
    if prepend:
        store.move_to_end(h.id, last=False)
    return h


# Callables told of each optimizer that steps (`watcher(optimizer)`): a pure-mode compile
# (ember.graph.replay) watches its trace, so that a replay can see a scheduler change a
# setting.
step_watchers: list[Callable] = []


def _wrap_step(step):
    """Run the per-optimizer and global step hooks around `step`."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        # NOTE: PyTorch hooks the steps of optimizers that ran `Optimizer.__init__`; a
        # wrapper that skips it (a hand-written Lookahead) steps unhooked there, as here.
        if "_optimizer_step_pre_hooks" not in self.__dict__:
            return step(self, *args, **kwargs)
        for watch in step_watchers:
            watch(self)
        recorder = ranges.recorder  # a profiler names the step as PyTorch's does
        token = None if recorder is None else recorder.enter(
            f"Optimizer.step#{type(self).__name__}.step", user=True)
        try:
            args = (self, *args)  # the hooks see the whole call, `self` first (as torch's)
            for hook in chain(_global_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
                out = hook(self, args, kwargs)
                if out is None:
                    continue
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {out}.")
                args, kwargs = out
            result = step(*args, **kwargs)
            for hook in chain(self._optimizer_step_post_hooks.values(),
                              _global_post_hooks.values()):
                hook(self, args, kwargs)
            return result
        finally:
            if token is not None:
                recorder.exit(token)

    wrapper._hooked = True
    return wrapper


def _own_step(cls: type):
    """A built-in algorithm's `step` under its own name (`SGD.step`, as PyTorch's, which
    messages and reprs show), running the shared loop of `Optimizer.step`."""
    shared = Optimizer.__dict__["step"].__wrapped__

    def step(self, closure: Callable | None = None):
        return shared(self, closure)

    step.__qualname__ = f"{cls.__name__}.step"
    step.__module__ = cls.__module__
    step.__doc__ = shared.__doc__
    return step


def _init_subclass(cls, **kwargs):
    step = cls.__dict__.get("step")
    if step is None and cls.step is Optimizer.__dict__["step"] \
            and cls.__module__.startswith(__package__ + "."):
        step = _own_step(cls)
    if step is not None and not getattr(step, "_hooked", False):
        cls.step = _wrap_step(step)


Optimizer.__init_subclass__ = classmethod(_init_subclass)
Optimizer.step = _wrap_step(Optimizer.step)


_FUSED_DEVICES = ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone']


def _check_fused_dtypes(opt: Optimizer, group: dict) -> None:
    """PyTorch's refusal of a parameter that is not floating point (a complex one has no
    fused kernel) in a fused update: checked where its state is first made, or, for the
    algorithms that say `_fused_check_once` (SGD, Adagrad), on the first parameter with a
    gradient this optimizer ever steps."""
    once = opt._fused_check_once
    if once and opt.__dict__.get("_fused_checked"):
        return
    for p in group["params"]:
        if p._grad is None or (not once and opt.state.get(p)):
            continue
        if not p._dtype.is_floating_point:
            raise RuntimeError("`fused=True` requires all the params to be floating point "
                               f"Tensors of supported devices: {_FUSED_DEVICES} but {p.dtype} "
                               f"and {p.device.type}")
        if once:
            opt._fused_checked = True
            return


def _update_as_real(opt: Optimizer, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
    """Update a complex parameter as PyTorch does: as the real tensor of its (re, im) pairs,
    with its gradient and complex state viewed the same way, so every algorithm treats the
    real and imaginary parts as two independent real parameters (Adam's second moment holds
    re(g)^2 and im(g)^2, not |g|^2; amsgrad's maximum is taken per part). The state keeps
    its complex tensors; one an update replaces is stored back as complex."""
    def as_real(t):
        return view_as_real(t) if isinstance(t, Tensor) and t._dtype.is_complex else t

    real_state = {k: as_real(v) for k, v in state.items()}
    before = dict(real_state)
    opt._update(view_as_real(p), as_real(grad), real_state, group)
    for k, v in real_state.items():
        if before.get(k, None) is not v:
            complex_again = isinstance(v, Tensor) and v.shape == p.shape + (2,) \
                and v._dtype.is_floating_point
            state[k] = view_as_complex(v) if complex_again else v


# Parameters under this many elements update with the NumPy twin, not the C kernel (the
# size gate of SGD's, which tests lower). None is under it: since the updates round as
# PyTorch's fused multiply-adds, the twins emulate those in about ten passes each (SGD
# with momentum at 128 elements: about 25 us against 4 in C), and the C kernels win at
# every size. Both give the same bits.
native_update = {"min_size": 0}


def fusable(*tensors: Tensor) -> bool:
    """Whether `tensors` are all C-contiguous float32 or float64 of one dtype on the CPU. An
    algorithm then runs its update as one fused update primitive over their arrays (one
    pass per arithmetic step, in place through `out=`, no graph or dispatch per op),
    computing what its tensor-op form computes, rounding for rounding; the op form serves
    every other case. Contiguity is required because `out=` aliasing an input is trusted
    only there (see ember.ops._inplace_kernel); strided tensors take the op form, and so
    does every update in grad mode (a differentiable optimizer's, recorded op by op)."""
    d = tensors[0]._dtype
    if (d is not dt.float32 and d is not dt.float64) or _grad_state.enabled:
        return False  # (grad mode on: a differentiable optimizer, whose ops record)
    for t in tensors:
        s = t._storage
        if t._dtype is not d or t._vc is None or (s is not None and s.device.type != "cpu"):
            return False
        if not t.is_contiguous():
            return False
    return True


def one_element_lr(lr) -> None:
    """Every PyTorch optimizer's first check: a tensor learning rate holds one number (before
    `0 <= lr`, which a longer tensor could not answer)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_fused(fused, foreach, differentiable) -> None:
    """PyTorch's refusals of `fused` beside the flags it excludes, at construction."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def axpy(y, x, alpha) -> None:
    """y += alpha * x in place, rounding as `y.add_(x, alpha=alpha)` does (once: a fused
    multiply-add, ops/_fma.py)."""
    if alpha == 1:
        np.add(y, x, out=y)
    else:
        np.copyto(y, fma(x, alpha, y))


def add_scaled(y, x, alpha):
    """y + alpha * x as a new array, rounding as `y.add(x, alpha=alpha)` does."""
    return fma(x, alpha, y)


def addcmul_into(y, x1, x2, value) -> None:
    """y += value * x1 * x2 in place, rounding as `y.addcmul_(x1, x2, value=value)` does:
    value * x1 rounded, then one fused multiply-add."""
    np.copyto(y, fma(x1 if value == 1 else np.multiply(x1, y.dtype.type(value)), x2, y))


def scalar_step(fused=False) -> Tensor:
    """A fresh `step` counter: a 0-d tensor of the default float dtype, as PyTorch keeps it
    (float32 whatever the default for a fused algorithm's)."""
    from ..ops.creation import zeros

    return zeros((), dtype=dt.float32 if fused else dt.get_default_dtype())
