"""`torch.overrides`: the `__torch_function__` protocol's public helpers, TorchFunctionMode,
and the installer that puts ember's public API behind the protocol once something could
override (`ember._torch_function` says how and why lazily)."""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Iterable

from . import _torch_function as _tf
from ._tensor import Tensor

__all__ = ["TorchFunctionMode", "get_ignored_functions", "get_overridable_functions",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "resolve_name", "wrap_torch_function"]

# Factories and other functions whose arguments are data, not tensors to dispatch on: only
# modes see them (PyTorch's "ignored" functions that are ops).
_MODES_ONLY = frozenset((
    "arange", "as_tensor", "asarray", "bartlett_window", "blackman_window", "empty",
    "empty_permuted", "empty_strided", "eye", "from_numpy", "frombuffer", "full",
    "hamming_window", "hann_window", "kaiser_window", "linspace", "logspace", "normal", "ones",
    "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "range",
    "scalar_tensor", "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor",
    "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor", "tensor", "tril_indices",
    "triu_indices", "vander", "zeros"))
# Functions of the public namespaces that never dispatch (they inspect, not compute).
_NEVER = frozenset(("is_tensor", "is_storage", "typename", "result_type", "can_cast",
                    "promote_types", "broadcast_shapes", "vmap", "cond", "while_loop",
                    "from_dlpack"))

# Tensor attributes left as they are: object protocol, pickling and copying (which keep
# the subclass by their own means), and iteration (it unbinds, which dispatches).
_TENSOR_KEEP = frozenset((
    "__new__", "__init__", "__init_subclass__", "__torch_function__", "__getattribute__",
    "__getattr__", "__setattr__", "__delattr__", "__dir__", "__reduce__", "__reduce_ex__",
    "__getstate__", "__setstate__", "__deepcopy__", "__copy__", "__sizeof__", "__subclasshook__",
    "__class_getitem__", "__iter__", "__hash__", "__array_wrap__", "__array_priority__"))
# The method an operator is handed over as (`x + 1` as `Tensor.add`, as PyTorch does).
_OPERATOR_AS = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
    "__truediv__": "div", "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul",
    "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__rand__": "bitwise_and",
    "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ipow__": "pow_"}


# PyTorch's C functions in these namespaces carry the namespace in their names
# (`torch.linalg.norm.__name__ == "linalg_norm"`), which overrides see.
_C_NAME = {"ember.linalg": "linalg_", "ember.special": "special_", "ember.fft": "fft_"}


def _namespaces() -> dict[str, list[str]]:
    """Each public namespace and the names in it that are ops."""
    import ember
    from ember import fft, linalg, special
    from ember.nn import _aten_forms, _sync_kernels
    from ember.nn import functional as F
    from ember.ops import MODULES, function_forms

    top = [n for m in MODULES for n in m.__all__]
    top += list(function_forms._FORMS) + list(_aten_forms.__all__) + list(_sync_kernels.__all__)
    top += ["stft", "istft", "numel", "pca_lowrank", "svd_lowrank"]
    names = {"ember": top, "ember.nn.functional": list(F.__all__)}
    for mod in (linalg, special, fft):
        names[mod.__name__] = list(getattr(mod, "__all__", None) or
                                   [n for n in vars(mod) if not n.startswith("_")])
    assert ember  # (imported so that sys.modules holds every namespace)
    return names


_public: dict[Callable, Callable] = {}  # each wrapper's op, for is_tensor_method_or_property


_replaced: list[tuple[object, str, object]] = []  # (owner, name, what it held) per wrapper


def _put(owner, name: str, wrapper) -> None:
    _replaced.append((owner, name, vars(owner).get(name, _replaced)))
    setattr(owner, name, wrapper)


def _uninstall() -> None:
    while _replaced:
        owner, name, old = _replaced.pop()
        if old is _replaced:  # (a method Tensor inherits: the wrapper shadowed it)
            delattr(owner, name)
        else:
            setattr(owner, name, old)
    _watch_class_statements()


def _install() -> None:
    """Put every public op, Tensor method and Tensor property behind the protocol."""
    made: dict[int, Callable] = {}  # (one wrapper for a function two namespaces share)
    for module_name, names in _namespaces().items():
        module = sys.modules[module_name]
        for name in dict.fromkeys(names):
            fn = module.__dict__.get(name)
            if name in _NEVER or not callable(fn) or isinstance(fn, type) \
                    or hasattr(fn, "_torch_function_wrapped"):
                continue
            call = made.get(id(fn))
            if call is None:
                call = made[id(fn)] = _tf.PublicFunction(
                    fn, module_name, _C_NAME.get(module_name, "") + name, name in _MODES_ONLY)
                call._public = name
            _put(module, name, call)
    seen: set[str] = set()
    later: list[tuple[str, object]] = []
    for klass in Tensor.__mro__[:-1]:
        for name, value in list(vars(klass).items()):
            if name in seen or name in _TENSOR_KEEP or (name.startswith("_") and not (
                    name.startswith("__") and name.endswith("__"))):
                continue
            seen.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                continue
            if isinstance(value, property):
                _put(Tensor, name, _tf.attribute(value))
            elif isinstance(value, types.FunctionType) or hasattr(value, "__wrapped__"):
                if name in _OPERATOR_AS:
                    later.append((name, value))
                else:
                    _put(Tensor, name, _method(value, name))
    for name, value in later:
        _put(Tensor, name, _method(value, name, report=getattr(Tensor, _OPERATOR_AS[name])))
    _tf.nowrap[:] = [Tensor.__dict__["grad"]]


def _method(fn: Callable, name: str, report: Callable | None = None) -> Callable:
    call = _tf.method(fn, report)
    call.__qualname__, call.__name__, call.__module__ = f"Tensor.{name}", name, "ember._tensor"
    _public[call] = fn
    return call


_tf._installer.append(_install)
_tf._uninstaller.append(_uninstall)


def _watch_class_statements() -> None:
    """Until the protocol is on, a class statement that defines `__torch_function__`
    (a tensor-like that is no Tensor subclass: those announce themselves) turns it on. The
    watch is one call around each class statement, removed once the protocol is on."""
    import builtins

    build = builtins.__build_class__

    def build_class(func, name, *bases, **kwargs):
        cls = build(func, name, *bases, **kwargs)
        if isinstance(cls, type) and "__torch_function__" in vars(cls) and _tf._overrides(cls) \
                and not cls.__module__.startswith("ember."):
            _tf.activate()
        return cls

    def unwatch() -> None:
        if builtins.__build_class__ is build_class:
            builtins.__build_class__ = build

    builtins.__build_class__ = build_class
    _unwatch[:] = [unwatch]


_unwatch: list[Callable[[], None]] = []


def _stop_watching() -> None:
    while _unwatch:
        _unwatch.pop()()


_tf._installer.append(_stop_watching)


_watch_class_statements()


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether any of these arguments overrides (a mode does not count here)."""
    return bool(_tf.overloaded_args(tuple(relevant_args))) and _tf.is_torch_function_enabled()


def has_torch_function_unary(arg) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args, **kwargs):
    """Hand a call of `public_api` (a function written in Python that takes tensor-likes)
    to the overriding arguments among `relevant_args`, or to the mode on top of the stack."""
    over = _tf.overloaded_args(tuple(relevant_args))
    if not _tf.is_torch_function_enabled():
        over = []
    _tf.activate()
    return _tf.dispatch(public_api, over, args, kwargs, python=True)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorate a Python function so that the arguments `dispatcher(*args, **kwargs)`
    returns can override it."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant) or (_tf._modes and not _tf._off[1]):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether `func` is a Tensor method or property getter (its first argument is the
    tensor itself)."""
    _tf.activate()
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):
        return any(owner is v for v in vars(Tensor).values())
    return func in _public or any(func is v for v in vars(Tensor).values())


def resolve_name(f: Callable) -> str:
    """The dotted name a function is reached by (`torch.add`, `torch.Tensor.add`)."""
    return _tf.public_name(f)


def get_ignored_functions() -> set[Callable]:
    """The public functions no argument can override (factories and inspectors)."""
    import ember

    return {getattr(ember, n) for n in _MODES_ONLY | _NEVER if hasattr(ember, n)}


def get_overridable_functions() -> dict:
    """Namespace -> the public functions in it that arguments can override."""
    _tf.activate()
    out: dict = {}
    for module_name, names in _namespaces().items():
        module = sys.modules[module_name]
        out[module] = [module.__dict__[n] for n in dict.fromkeys(names)
                       if hasattr(module.__dict__.get(n), "_torch_function_wrapped")
                       and n not in _MODES_ONLY]
    out[Tensor] = [v for v in vars(Tensor).values() if hasattr(v, "_torch_function_wrapped")]
    return out


class TorchFunctionMode:
    """A context that sees every call of the public API first: its `__torch_function__`
    (func, types, args, kwargs) runs with the mode itself taken off the stack, so calling
    `func` inside goes on to the next mode or the tensors' own overrides."""

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _tf.push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _tf.pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        mode = cls(*args, **kwargs)
        _tf.push_mode(mode)
        return mode
