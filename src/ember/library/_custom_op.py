"""`custom_op` and `CustomOpDef`: a Python function made an operator, as PyTorch's
`torch.library.custom_op` makes one.

The decorated function becomes the op's kernel (for every device, or the `device_types`
given); its schema is read from its type hints (or given as `schema=`). The returned
`CustomOpDef` is callable like the function and is where the rest is registered:
`register_kernel` (a kernel for a device type), `register_fake` (what the op returns for
`meta` tensors), `register_autograd` (its backward) and `register_vmap`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from ._registry import OpOverload, lookup, namespaces, register_overload
from ._schema import infer_schema, parse_schema

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def check_device_types(device_types) -> tuple:
    """`device_types` as a tuple of known device type names (None: all devices)."""
    if device_types is None:
        return (None,)
    if isinstance(device_types, str):
        device_types = (device_types,)
    out = []
    for d in device_types:
        dtype = d.split(":")[0] if isinstance(d, str) else d
        if dtype not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {d}")
        out.append(dtype)
    return tuple(out)


class CustomOpDef:
    """An operator made by `custom_op`: call it as the function; register its fake
    implementation, autograd formula, other kernels and vmap rule on it."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable) -> None:
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._init_fn = fn
        self.__name__ = name
        self.__doc__ = fn.__doc__
        self._opoverload = _define(f"{namespace}::{name}", schema, self)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn: Callable | None = None, /):
        """Use `fn` as the kernel for `device_types` (a decorator when `fn` is omitted)."""
        types = check_device_types(device_types)

        def inner(fn: Callable) -> Callable:
            for d in types:
                self._opoverload.kernels["default" if d is None else d] = fn
            return fn

        return inner if fn is None else inner(fn)

    def register_fake(self, fn: Callable, /) -> Callable:
        """What the op returns for `meta` inputs: tensors of the right shape and dtype."""
        self._opoverload.fake = fn
        return fn

    def register_autograd(self, backward: Callable, /, *,
                          setup_context: Callable | None = None) -> None:
        """The op's backward: `backward(ctx, *grads)` returns one gradient per input;
        `setup_context(ctx, inputs, output)` saves what it needs on `ctx`."""
        _set_autograd(self._opoverload, backward, setup_context)

    def register_vmap(self, func: Callable | None = None, /):
        """The op's batching rule: `func(info, in_dims, *args) -> (output, out_dims)`."""
        def inner(func: Callable) -> Callable:
            self._opoverload.vmap_rule = func
            return func

        return inner if func is None else inner(func)


def _set_autograd(op: OpOverload, backward, setup_context) -> None:
    if not callable(backward):
        raise TypeError(f"Expected backward to be a function, got {type(backward)}")
    if setup_context is not None and not callable(setup_context):
        raise TypeError(f"Expected setup_context to be a function, got {type(setup_context)}")
    op.backward = backward
    op.setup_context = setup_context


def _define(qualname: str, schema: str, opdef: CustomOpDef) -> OpOverload:
    """Register (or, for a name `custom_op` already made, replace) the op's one overload."""
    namespace, name = qualname.split("::")
    parsed = parse_schema(name + schema, namespace)
    packet = namespaces[namespace]._ops.get(name) if namespace in namespaces else None
    if packet is not None and "default" in packet._overloads \
            and packet._overloads["default"].opdef is not None:
        # NOTE: PyTorch lets `custom_op` redefine a name; the earlier CustomOpDef then runs
        # the new definition too (one registration per name), so the overload is reset.
        op = packet._overloads["default"]
        op.reset()
        op._schema = parsed
    else:
        op = register_overload(parsed)
    op.opdef = opdef
    return op


def _split_qualname(qualname: str) -> tuple[str, str]:
    ns, name = qualname.split("::")  # (PyTorch's own unpacking: its error when not 2 parts)
    for part, text in ((ns, qualname), (name, name)):
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)?", part):
            raise RuntimeError(f"expected ident here:\n{text}\n")
    return ns, name


def custom_op(name: str, fn: Callable | None = None, /, *,
              mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None,
              schema: str | None = None, tags=None):
    """Make `fn` (or the decorated function) an operator named `ns::name`: returns a
    `CustomOpDef`. `mutates_args` names the Tensor arguments the function writes
    ("unknown" when not known); `schema` overrides the schema read from type hints."""
    if not (isinstance(mutates_args, str) and mutates_args == "unknown") and (
            isinstance(mutates_args, str) or not isinstance(mutates_args, Iterable)):
        raise ValueError("mutates_args must either be a sequence of the names of the "
                         "arguments that are mutated or the string 'unknown'. ")
    if not isinstance(mutates_args, str):
        mutates_args = tuple(mutates_args)

    def inner(fn: Callable) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        ns, opname = _split_qualname(name)
        opdef = CustomOpDef(ns, opname, text, fn)
        for d in check_device_types(device_types):
            opdef._opoverload.kernels["default" if d is None else d] = fn
        return opdef

    return inner if fn is None else inner(fn)


def as_overload(op) -> OpOverload:
    """The OpOverload a library API was handed: a name, an OpOverload or a CustomOpDef."""
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, OpOverload):
        return op
    if not isinstance(op, str):
        raise ValueError(f"register_fake(op): got unexpected type for op: {type(op)}")
    return lookup(op)
