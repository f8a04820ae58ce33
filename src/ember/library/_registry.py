"""The user-op registry behind `torch.ops.<ns>.<name>.<overload>` and how a call runs.

An `OpOverload` is one schema plus what was registered for it: kernels per device type,
a composite (an implementation in ember ops, which autograd and vmap see through), a fake
implementation for `meta` tensors, an autograd formula and a vmap rule. A call checks its
arguments against the schema, then:

1. under vmap (the innermost level batches an input), the op's vmap rule runs, or else the
   op runs once per example and the results are stacked, as PyTorch's batched fallback;
2. when an input requires grad and the op has an autograd formula (or was made by
   `custom_op`, whose backward without one fails as PyTorch's does), the kernel runs inside
   a generated `autograd.Function`; inside `ember.func.grad` that is refused in PyTorch's
   words, since PyTorch's generated Function has no `setup_context`;
3. otherwise the kernel for the inputs' device runs.
"""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._core import current_interpreter
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ..autograd.function import NEEDS_SETUP_CONTEXT, Function, reverse_transforms_open
from ..ops import _user_namespaces
from ..ops.registry import bump_version
from ._schema import Schema, bind_arguments

_NOT_FOR_BACKEND = (
    "Could not run '{op}' with arguments from the '{backend}' backend. This could be because "
    "the operator doesn't exist for this backend, or was omitted during the selective/custom "
    "build process (if using custom build). '{op}' is only available for these backends: "
    "[{have}].")
_NO_META = (
    "{op}: attempted to run this operator with Meta tensors, but there was no fake impl or "
    "Meta kernel registered. You may have run into this message while using an operator with "
    "PT2 compilation APIs (torch.compile/torch.export); in order to use this operator with "
    "those APIs you'll need to add a fake impl. Please see the following for next steps:  "
    "https://pytorch.org/tutorials/advanced/custom_ops")
_ALIASED_OUTPUT = (
    "{op} (with implementation in {where}): The output of this custom operator (1) must not "
    "also be an input to this custom operator and (2) may not alias any inputs to this custom "
    "operator or other returns. The most common way to trigger this error is if we have y = "
    "custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
    "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to "
    "not return y.")
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "mps": "MPS", "xpu": "XPU"}


class OpOverload:
    """One overload of a registered op (`torch.ops.ns.name.default`): call it like the op."""

    def __init__(self, schema: Schema) -> None:
        self._schema = schema
        self._namespace, self._opname = schema.name.split("::", 1)
        self._overloadname = schema.overload_name or "default"
        self.reset()

    def reset(self) -> None:
        """Forget every registration (a `custom_op` defined again under the same name)."""
        self.kernels: dict = {}  # device type ("cpu", "meta", ... or "default") -> fn
        self.composite = None  # CompositeImplicitAutograd: autograd and vmap see through it
        self.fake = None
        self.backward = None
        self.setup_context = None
        self.vmap_rule = None
        self.opdef = None  # the CustomOpDef when `custom_op` made this op
        self._generated = None

    def name(self) -> str:
        """`ns::name` (`ns::name.overload` for a named overload), PyTorch's `name()`."""
        tail = "" if self._overloadname == "default" else "." + self._overloadname
        return f"{self._namespace}::{self._opname}{tail}"

    def __str__(self) -> str:
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._namespace}.{self._opname}', " \
               f"overload='{self._overloadname}')>"

    def __call__(self, *args, **kwargs):
        return dispatch(self, args, kwargs)


class OpOverloadPacket:
    """Every overload of one op name (`torch.ops.ns.name`): calling it picks the first
    overload whose schema the arguments fit."""

    def __init__(self, namespace: str, name: str) -> None:
        self._qualified_op_name = f"{namespace}::{name}"
        self._op_name = name
        self._overloads: dict[str, OpOverload] = {}

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, name: str) -> OpOverload:
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._overloads[name]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{name}'") from None

    def __str__(self) -> str:
        return self._qualified_op_name.replace("::", ".")

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __call__(self, *args, **kwargs):
        first_error = None
        for op in self._overloads.values():
            try:
                bind_arguments(op._schema, args, kwargs)
            except RuntimeError as e:
                first_error = first_error or e
                continue
            return op(*args, **kwargs)
        raise first_error


class OpNamespace:
    """`torch.ops.<ns>`: the ops registered under one namespace."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._ops: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        try:
            return self._ops[op_name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'") from None

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


namespaces: dict[str, OpNamespace] = _user_namespaces  # (the dict `ember.ops` reads)


def register_overload(schema: Schema) -> OpOverload:
    """A new OpOverload for `schema` under its namespace (raises when already there)."""
    ns, name = schema.name.split("::", 1)
    space = namespaces.setdefault(ns, OpNamespace(ns))
    packet = space._ops.setdefault(name, OpOverloadPacket(ns, name))
    overload = schema.overload_name or "default"
    if overload in packet._overloads:
        raise RuntimeError(
            f"Tried to register an operator ({schema}) with the same name and overload name "
            "multiple times. Each overload's schema should only be registered with a single "
            "call to def().")
    op = packet._overloads[overload] = OpOverload(schema)
    return op


def lookup(qualname: str) -> OpOverload:
    """The OpOverload `ns::name[.overload]` names, as PyTorch's lookup raises when absent."""
    if "::" not in qualname or qualname.count("::") != 1:
        raise ValueError(
            f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. '
            "The qualname passed to the torch.library APIs must consist of a namespace and a "
            "name, e.g. aten::sin")
    ns, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    if ns not in namespaces:
        raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
    return getattr(getattr(namespaces[ns], name), overload or "default")


# -- calling an op -----------------------------------------------------------------------

def _tensors(values) -> list:
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(t for t in v if isinstance(t, Tensor))
    return out


def dispatch(op: OpOverload, args: tuple, kwargs: dict):
    """One call of `op` (see the module docstring for the order of the steps)."""
    pos, kw = bind_arguments(op._schema, args, kwargs)
    tensors = _tensors(list(pos) + list(kw.values()))
    if op.composite is not None and op.backward is None and not op.kernels:
        return op.composite(*pos, **kw)
    batching = _batching_level(tensors)
    if batching is not None:
        return _vmap_call(op, batching, pos, kw)
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors) and (
            op.backward is not None or op.opdef is not None):
        if reverse_transforms_open[0]:
            raise RuntimeError(NEEDS_SETUP_CONTEXT)
        names = [a.name for a in op._schema.arguments if not a.kwarg_only]
        given = max([len(args)] + [names.index(k) + 1 for k in kwargs if k in names])
        return _autograd_call(op, pos, kw, given)
    if op.opdef is not None:
        with grad_mode.no_grad():
            return _kernel_call(op, pos, kw, tensors)
    return _kernel_call(op, pos, kw, tensors)


def _kernel_for(op: OpOverload, device_type: str):
    if device_type == "meta":
        return op.kernels.get("meta") or op.fake or op.composite
    return op.kernels.get(device_type) or op.composite or op.kernels.get("default")


def _kernel_call(op: OpOverload, pos: list, kw: dict, tensors: list):
    device_type = tensors[0].device.type if tensors else "cpu"
    fn = _kernel_for(op, device_type)
    if fn is None:
        if device_type == "meta":
            if op.opdef is not None:
                raise RuntimeError(
                    f"There was no fake impl registered for {op.opdef!r}. This is necessary "
                    "for torch.compile/export/fx tracing to work. Please use "
                    f"`{op.opdef._init_fn.__name__}.register_fake` to add an fake impl.")
            raise NotImplementedError(_NO_META.format(op=op.name()))
        have = sorted(_DEVICE_KEYS.get(k, k) for k in op.kernels)
        raise NotImplementedError(_NOT_FOR_BACKEND.format(
            op=op.name(), backend=_DEVICE_KEYS.get(device_type, device_type),
            have=", ".join(have)))
    out = fn(*pos, **kw)
    if op.opdef is not None and device_type != "meta":
        _check_no_alias(op, fn, tensors, out)
        for arg, value in zip(op._schema.arguments, list(pos) + list(kw.values())):
            if arg.mutable:  # (PyTorch counts the op's own write, past the kernel's)
                for t in _tensors([value]):
                    bump_version(t)
    return out


def _storage_key(t: Tensor):
    return t.untyped_storage().data_ptr()


def _check_no_alias(op: OpOverload, fn, inputs: list, out) -> None:
    """PyTorch refuses a custom op whose output is, or shares memory with, an input or
    another output."""
    outs = _tensors(out if isinstance(out, (list, tuple)) else [out])
    seen = {_storage_key(t) for t in inputs if t.numel()}
    for o in outs:
        if not o.numel():
            continue
        key = _storage_key(o)
        if key in seen:
            where = getattr(fn, "__module__", None)
            raise RuntimeError(_ALIASED_OUTPUT.format(op=op._opname, where=f"<module "
                                                      f"'{where}'>"))
        seen.add(key)


# -- vmap --------------------------------------------------------------------------------

def _batching_level(tensors: list):
    """The innermost vmap level when it batches one of `tensors`, else None."""
    # NOTE: an upward import (the library sits beside autograd.Function, under func):
    # a vmap level is visible only as the interpreter on the stack.
    from ..func._vmap import BatchedTensor, BatchInterpreter

    interp = current_interpreter()
    if not isinstance(interp, BatchInterpreter):
        return None
    if any(isinstance(t, BatchedTensor) and t._level == interp.level for t in tensors):
        return interp
    return None


def _vmap_call(op: OpOverload, interp, pos: list, kw: dict):
    from ..func._function_vmap import VmapInfo
    from ..ops.join import stack

    flat, dims = [], []
    for v in pos:
        if isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
            vals, ds = interp._unwrap(v)
            flat.append(list(vals))
            dims.append(list(ds))
        else:
            vals, ds = interp._unwrap([v])
            flat.append(vals[0])
            dims.append(ds[0])
    if op.vmap_rule is not None:
        info = VmapInfo(interp.size, interp.randomness)
        out, out_dims = interp.below(op.vmap_rule, info, tuple(dims), *flat, **kw)
        out_dims = tuple(out_dims) if isinstance(out_dims, list) else out_dims
        if isinstance(out, list):
            return list(interp._wrap(tuple(out), out_dims))
        return interp._wrap(out, out_dims)
    if any(a.mutable for a in op._schema.arguments):
        raise RuntimeError(f"Batching rule not implemented for {op.name()}; the fallback path "
                           "doesn't work on out= or view ops.")
    warn_at_user(f"There is a performance drop because we have not yet implemented the "
                 f"batching rule for {op.name()}. Please file us an issue on GitHub so that "
                 "we can prioritize its implementation.")

    def pick(v, d, b):
        if isinstance(v, list):
            return [pick(x, dd, b) for x, dd in zip(v, d)]
        return v if d is None else v.select(d, b)

    def run():
        outs = [op(*[pick(v, d, b) for v, d in zip(flat, dims)], **kw)
                for b in range(interp.size)]
        if outs[0] is None:
            return None
        if isinstance(outs[0], (tuple, list)):
            joined = tuple(stack([o[k] for o in outs]) for k in range(len(outs[0])))
            return joined if isinstance(outs[0], tuple) else list(joined)
        return stack(outs)

    out = interp.below(run)
    if isinstance(out, list):
        return list(interp._wrap(tuple(out), 0))
    return interp._wrap(out, 0)


# -- autograd ----------------------------------------------------------------------------

class _Meta:
    """What a generated Function's forward needs besides the flat tensors."""

    def __init__(self, spec: list, kw: dict, tail: list) -> None:
        self.spec = spec  # per positional argument: None (one value) or a list's length
        self.kw = kw
        self.tail = tail  # the defaults of trailing arguments the call left out
        self.list_out = False


def _flatten(pos: list) -> tuple[list, list]:
    flat, spec = [], []
    for v in pos:
        if isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
            flat.extend(v)
            spec.append(len(v))
        else:
            flat.append(v)
            spec.append(None)
    return flat, spec


def _unflatten(flat, spec: list) -> list:
    out, i = [], 0
    for n in spec:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return out


def _generated(op: OpOverload) -> type:
    """The autograd.Function running `op` with its registered formula (made once per op)."""
    if op._generated is not None:
        return op._generated
    has_kwonly = any(a.kwarg_only for a in op._schema.arguments)

    def forward(ctx, *args):
        meta = args[-1]
        pos = _unflatten(args[:-1], meta.spec) + meta.tail
        tensors = _tensors(list(pos) + list(meta.kw.values()))
        result = _kernel_call(op, pos, meta.kw, tensors)
        if op.setup_context is not None:
            if has_kwonly:
                op.setup_context(ctx=ctx, inputs=tuple(pos), keyword_only_inputs=meta.kw,
                                 output=result)
            else:
                op.setup_context(ctx=ctx, inputs=tuple(pos), output=result)
        ctx._ember_spec = meta.spec
        ctx._ember_list_out = meta.list_out = isinstance(result, list)
        if meta.list_out:  # (a Function returns a tuple; the list comes back after apply)
            return tuple(result)
        return result

    def backward(ctx, *grads):
        if op.backward is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula "
                               "was registered. Please use register_autograd to add one.")
        spec = ctx._ember_spec
        saved = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = tuple(_unflatten(saved[:-1], spec))
            result = op.backward(ctx, *((list(grads),) if ctx._ember_list_out else grads))
        finally:
            ctx.needs_input_grad = saved
        result = result if isinstance(result, tuple) else (result,)
        flat = []
        for g, n in zip(result, spec + [None] * (len(result) - len(spec))):
            if n is not None and isinstance(g, (list, tuple)):
                flat.extend(g)
            else:
                flat.append(g)
        return (*flat, None)

    name = f"GeneratedBackwardFor_{op._namespace}_{op._opname}_{op._overloadname}"
    op._generated = type(name, (Function,), {"forward": staticmethod(forward),
                                             "backward": staticmethod(backward),
                                             "__module__": "ember.autograd.function"})
    return op._generated


def _autograd_call(op: OpOverload, pos: list, kw: dict, given: int):
    # (the Function's inputs are the arguments up to the last one the call gave, as in
    # PyTorch: `needs_input_grad` has no entry for a trailing default)
    flat, spec = _flatten(pos[:given])
    meta = _Meta(spec, kw, pos[given:])
    out = _generated(op).apply(*flat, meta)
    return list(out) if meta.list_out else out
