"""`Library`: a namespace of operators defined from schema strings, and the module-level
`define` / `impl` / `register_*` functions that reach an op by its `ns::name`.

Dispatch keys map onto what ember's registry keeps: a device key (`CPU`, `Meta`, `CUDA`...)
is that device's kernel; `CompositeImplicitAutograd` (the default, and `Autograd`, whose
kernel handles autograd itself) is a composite of ember ops that autograd and vmap see
through; `CompositeExplicitAutograd` is the kernel for every device.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from .._user_warnings import user_stacklevel
from ._custom_op import _set_autograd, as_overload, check_device_types
from ._registry import OpOverload, lookup, namespaces, register_overload
from ._schema import parse_schema

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_defined_namespaces: set[str] = set()  # namespaces a live "DEF" Library owns
_COMPOSITE = ("CompositeImplicitAutograd", "Autograd", "AutogradCPU")
# kernels given for an op not defined yet (PyTorch accepts them), by `ns::name[.overload]`
_pending: dict[str, list] = {}


def _register_kernel(op: OpOverload, dispatch_key: str, fn: Callable) -> None:
    if dispatch_key in _COMPOSITE:
        op.composite = fn
    elif dispatch_key == "CompositeExplicitAutograd":
        op.kernels["default"] = fn
    else:
        op.kernels[dispatch_key.lower()] = fn


class Library:
    """Operators under namespace `ns`. `kind`: "DEF" (the one library defining `ns`),
    "FRAGMENT" (more definitions for it) or "IMPL" (implementations only)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF":
            if ns in _defined_namespaces:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can "
                    "use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _defined_namespaces.add(ns)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs: set[str] = set()

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Declare an op from `schema` (`name[.overload](args) -> returns`); returns its
        name. Its implementations come from `impl` (or `register_*`)."""
        if self.kind == "IMPL":
            raise ValueError("define(): Library of kind IMPL cannot define operators; use "
                             "kind DEF or FRAGMENT")
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = parse_schema(schema, self.ns)
        op = register_overload(parsed)
        self._op_defs.add(parsed.name)
        for key, fn in _pending.pop(op.name(), ()):
            _register_kernel(op, key, fn)
        return parsed.name.split("::", 1)[1]

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Use `fn` as `op_name`'s kernel for `dispatch_key` (`CPU`, `Meta`,
        `CompositeImplicitAutograd` ...; default: the library's key, else composite)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if with_keyset:
            raise NotImplementedError("impl(..., with_keyset=True): ember passes no "
                                      "dispatch key set to kernels")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if isinstance(op_name, OpOverload):
            _register_kernel(op_name, key, fn)
            return
        name = op_name if "::" in op_name else f"{self.ns}::{op_name}"
        try:
            op = lookup(name)
        except AttributeError:  # defined later: the kernel waits for its op
            _pending.setdefault(name.removesuffix(".default"), []).append((key, fn))
            return
        _register_kernel(op, key, fn)

    def fallback(self, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False):
        raise NotImplementedError("Library.fallback: ember has no dispatcher fallbacks")

    def __del__(self) -> None:
        # NOTE: as in PyTorch, a library's definitions last as long as the Library object
        self._destroy()

    def _destroy(self) -> None:
        if namespaces is None:  # (at interpreter exit, after this module's globals went)
            return
        for qualname in getattr(self, "_op_defs", ()):
            ns, name = qualname.split("::", 1)
            if ns in namespaces:
                namespaces[ns]._ops.pop(name, None)
        self._op_defs = set()
        if getattr(self, "kind", None) == "DEF":
            _defined_namespaces.discard(self.ns)


_libraries: list[Library] = []  # the libraries the module-level functions open


def _fragment(ns: str) -> Library:
    lib = Library(ns, "FRAGMENT")
    _libraries.append(lib)
    return lib


def define(qualname: str, schema: str, *, lib: Library | None = None, tags=()) -> None:
    """Declare the op `ns::name` with `schema` (its argument and return list)."""
    if "::" not in qualname:
        raise ValueError(f'define(qualname, schema): expected qualname to be of the form '
                         f'"namespace::name", but got {qualname}')
    ns, name = qualname.split("::", 1)
    (lib or _fragment(ns)).define(name + schema, tags=tags)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *,
         lib: Library | None = None):
    """Register `func` as `ns::name`'s kernel for device types (`"cpu"`) or a dispatch key
    (`"CompositeImplicitAutograd"`); a decorator when `func` is omitted."""
    keys = (types,) if isinstance(types, str) else tuple(types)

    def inner(func: Callable) -> Callable:
        op = lookup(qualname)
        for key in keys:
            if key[:1].islower() or key == "default":
                for d in check_device_types(key):
                    op.kernels[d] = func
            else:
                _register_kernel(op, key, func)
        return func

    return inner if func is None else inner(func)


def register_kernel(op, device_types, func: Callable | None = None, /, *,
                    lib: Library | None = None):
    """`func` as the op's kernel for `device_types` (a decorator when `func` is omitted)."""
    overload = as_overload(op)
    types = check_device_types(device_types)

    def inner(func: Callable) -> Callable:
        for d in types:
            overload.kernels["default" if d is None else d] = func
        return func

    return inner if func is None else inner(func)


def register_fake(op, func: Callable | None = None, /, *, lib: Library | None = None,
                  _stacklevel: int = 1, allow_override: bool = True):
    """What the op returns for `meta` inputs (a decorator when `func` is omitted)."""
    overload = as_overload(op)

    def inner(func: Callable) -> Callable:
        overload.fake = func
        return func

    return inner if func is None else inner(func)


def impl_abstract(qualname, func: Callable | None = None, *, lib: Library | None = None,
                  _stacklevel: int = 1):
    """The old name of `register_fake` (deprecated in PyTorch 2.4)."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=user_stacklevel())
    return register_fake(qualname, func, lib=lib)


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib: Library | None = None) -> None:
    """The op's backward formula (see `CustomOpDef.register_autograd`)."""
    _set_autograd(as_overload(op), backward, setup_context)


def register_vmap(op, func: Callable | None = None, /, *, lib: Library | None = None):
    """The op's batching rule `func(info, in_dims, *args) -> (output, out_dims)`."""
    overload = as_overload(op)

    def inner(func: Callable) -> Callable:
        overload.vmap_rule = func
        return func

    return inner if func is None else inner(func)


def fallthrough_kernel():
    """A placeholder kernel PyTorch uses to skip a dispatch key; calling it is an error."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")
