"""`opcheck`: PyTorch's registration checks for a custom op, the ones that run eagerly.

- test_schema: the op writes only the arguments its schema marks mutable, and no output
  is (or shares memory with) an input;
- test_autograd_registration: an op with inputs that require grad either has an autograd
  formula (or is a composite) or returns outputs that do not require grad, so autograd is
  never silently wrong;
- test_faketensor: the fake implementation, run on `meta` copies of the inputs, returns
  outputs with the real outputs' shapes and dtypes.

PyTorch's `test_aot_dispatch_*` checks run the op through its compiler stack, which ember
does not have; asking for one raises NotImplementedError.
"""

from __future__ import annotations

import warnings

from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from ._custom_op import CustomOpDef
from ._registry import OpOverload, OpOverloadPacket, _tensors, bind_arguments

ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                  "test_aot_dispatch_static", "test_aot_dispatch_dynamic")
DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                      "test_aot_dispatch_dynamic")
_EAGER = ("test_schema", "test_autograd_registration", "test_faketensor")


class OpCheckError(Exception):
    """An `opcheck` test failed (its cause is the original error)."""


class MetadataMismatchError(RuntimeError):
    """The fake implementation's outputs differ from the real ones in shape or dtype."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _clone(value):
    if isinstance(value, Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    return value


def _to_meta(value):
    if isinstance(value, Tensor):
        return value.detach().to("meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    return value


def _flat_outputs(out) -> list:
    return _tensors(list(out) if isinstance(out, (list, tuple)) else [out])


def _equal(a: Tensor, b: Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(((a == b) | ((a != a) & (b != b))).all())  # NaN where NaN was: unchanged


def _test_schema(op: OpOverload, args: tuple, kwargs: dict) -> None:
    args, kwargs = _clone(args), _clone(kwargs)
    pos, kw = bind_arguments(op._schema, args, kwargs)
    before = [_clone(v) for v in pos] + [_clone(v) for v in kw.values()]
    values = list(pos) + list(kw.values())
    with grad_mode.no_grad():
        op(*args, **kwargs)
    for arg, old, new in zip(op._schema.arguments, before, values):
        olds, news = _tensors([old]), _tensors([new])
        if not arg.mutable and any(not _equal(o, n) for o, n in zip(olds, news)):
            raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was "
                               "mutated")


def _test_autograd_registration(op: OpOverload, args: tuple, kwargs: dict) -> None:
    inputs = _tensors(list(args) + list(kwargs.values()))
    if not any(t.requires_grad for t in inputs):
        warnings.warn("autograd_registration_check: no inputs have requires_grad=True so we "
                      "are unable to actually perform this test. Please pass inputs that do "
                      "require grad.", stacklevel=user_stacklevel())
        return
    if op.backward is not None or op.composite is not None or op.opdef is not None:
        return
    ids = {id(t) for t in inputs}
    if any(o.requires_grad and id(o) not in ids for o in _flat_outputs(op(*args, **kwargs))):
        raise AssertionError(
            f"{op.name()}: at least one output of this operator has requires_grad=True but "
            "the operator does not have an autograd kernel defined at an autograd key (e.g. "
            "DispatchKey::Autograd). This could mean that you have incorrectly registered an "
            "autograd kernel to a non-Autograd DispatchKey, which may lead to silently "
            "incorrect results. If your operator consists of regular PyTorch operations, "
            "consider not using an operator at all or registering your operator as "
            "CompositeImplicitAutograd. If you have an autograd.Function registered to a "
            "backend (CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


def _test_faketensor(op: OpOverload, args: tuple, kwargs: dict) -> None:
    with grad_mode.no_grad():
        real = _flat_outputs(op(*_clone(args), **_clone(kwargs)))
        fake = _flat_outputs(op(*_to_meta(args), **_to_meta(kwargs)))
    head = (f"When comparing the output of {op} on FakeTensor and concrete Tensors, found "
            "mismatched tensor metadata: ")
    if len(real) != len(fake):
        raise MetadataMismatchError(f"{head}{len(fake)} outputs and {len(real)} outputs")
    for r, f in zip(real, fake):
        if r.shape != f.shape:
            raise MetadataMismatchError(f"{head}Shapes {r.shape} and {f.shape} are not equal!")
        if r.dtype != f.dtype:
            raise MetadataMismatchError(f"{head}Dtypes {r.dtype} and {f.dtype} are not equal!")


_TESTS = {"test_schema": _test_schema,
          "test_autograd_registration": _test_autograd_registration,
          "test_faketensor": _test_faketensor}


def opcheck(op, args: tuple, kwargs: dict | None = None, *,
            test_utils: str | tuple = DEFAULT_TEST_UTILS, raise_exception: bool = True,
            atol=None, rtol=None) -> dict:
    """Run the checks in `test_utils` on `op(*args, **kwargs)`: a dict of test name ->
    "SUCCESS" (or the exception, with `raise_exception=False`)."""
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    test_utils = tuple(test_utils)
    if not set(test_utils).issubset(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to "
                         f"be subset of {ALL_TEST_UTILS} but it was not")
    kwargs = {} if kwargs is None else kwargs
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    elif isinstance(op, OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, "
                         f"e.g. torch.ops.aten.sin.default, got {type(op)}")
    results = {}
    for name in test_utils:
        if name not in _EAGER:
            if name == "test_aot_dispatch_dynamic" and test_utils == DEFAULT_TEST_UTILS:
                continue  # (the default list: run what can run eagerly)
            raise NotImplementedError(f"opcheck: {name} needs PyTorch's compiler (AOT "
                                      "dispatch), which ember does not have")
        try:
            _TESTS[name](op, args, kwargs)
        except Exception as e:  # noqa: BLE001 - reported per test, as PyTorch does
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up "
                                   "for stack trace)") from e
            results[name] = e
            continue
        results[name] = "SUCCESS"
    return results
