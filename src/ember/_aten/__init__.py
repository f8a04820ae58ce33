"""`torch.ops.aten`: PyTorch's ATen operators as op packets and overloads.

Programs name ATen ops directly: as keys (`FlopCounterMode(custom_mapping={aten.mm: f})`,
a selective-checkpoint policy's `op in [aten.mm.default]`) and as functions with ATen's
argument conventions (`aten.add.Tensor(x, y, alpha=2)`, `aten.native_layer_norm(...)`
returning three tensors). Each op here is a packet (`aten.mm`) holding its overloads
(`aten.mm.default`, `aten.add.Scalar`), each with PyTorch's schema text; a call is checked
against the schema, then runs the overload's implementation in ember ops (`_impls`).
Packets and overloads are made once, so `is` and `in` compare them as PyTorch's do.

The ATen op PyTorch would run for an ember primitive (what the profiler names it) is
`for_primitive`, which checkpoint policies and the flop counter use.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..library import _registry
from ..library._schema import bind_arguments, parse_schema
from ._impls import implementation
from ._schemas import SCHEMAS

__all__ = ["aten", "OpOverload", "OpOverloadPacket", "for_primitive"]


class OpOverload(_registry.OpOverload):
    """One overload of an ATen op (`aten.add.Tensor`), called with ATen's arguments. (Named
    as PyTorch's class, since programs print `type(op).__name__`.)"""

    def __init__(self, schema, packet: OpOverloadPacket) -> None:
        super().__init__(schema)
        self._overloadpacket = packet
        self.composite = implementation(self._opname, self._overloadname)
        self.__name__ = f"{self._opname}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        pos, kw = _bind(self, args, kwargs)
        return self.composite(*pos, **kw)

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return self._overloadpacket

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def is_view(self) -> bool:
        """Whether the output aliases an input (`Tensor(a)` without `!` in the schema)."""
        returns = self._schema.text.rsplit("->", 1)[1]
        return "(a)" in returns or "(a)[]" in returns


class OpOverloadPacket(_registry.OpOverloadPacket):
    """Every overload of one ATen op name (`aten.add`); a call picks the first overload
    whose schema the arguments fit, as PyTorch's packet does."""

    def __init__(self, name: str) -> None:
        super().__init__("aten", name)
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        errors = []
        for op in self._overloads.values():
            try:
                _bind(op, args, kwargs)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            return op(*args, **kwargs)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                           "schema:\n" + "".join(e + "\n\n" for e in errors))


# the ops PyTorch lets a Python number stand for a Tensor argument (arithmetic and copies);
# the number reaches ember's function as it is, so it promotes as a wrapped number
_NUMBERS_AS_TENSORS = {"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "copy_",
                       "_to_copy"}
_NUMBER = (bool, int, float, complex)


def _bind(op: OpOverload, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """The call's values in schema order (`bind_arguments`), a number standing for a Tensor
    where PyTorch allows it."""
    if op._opname not in _NUMBERS_AS_TENSORS:
        return bind_arguments(op._schema, args, kwargs)
    from .. import zeros

    numbers = {}

    def hide(arg, value):
        if arg.type == "Tensor" and isinstance(value, _NUMBER):
            stand_in = zeros(())
            numbers[id(stand_in)] = value
            return stand_in
        return value

    named = {a.name: a for a in op._schema.arguments}
    args = tuple(hide(a, v) for a, v in zip(op._schema.arguments, args)) + \
        args[len(op._schema.arguments):]
    kwargs = {k: hide(named[k], v) if k in named else v for k, v in kwargs.items()}
    pos, kw = bind_arguments(op._schema, args, kwargs)
    pos = [numbers.get(id(v), v) for v in pos]
    kw = {k: numbers.get(id(v), v) for k, v in kw.items()}
    return pos, kw


def _parse(text: str):
    """`text` parsed; its alias sets such as `(a -> *)` (which ember's parser does not
    read) are read as `(a)`, while `_schema` keeps PyTorch's text."""
    schema = parse_schema(text.replace("(a -> *)", "(a)"))
    schema.text = text
    return schema


def _build() -> _registry.OpNamespace:
    space = _registry.OpNamespace("aten")
    for text in SCHEMAS:
        schema = _parse(text)
        name = schema.name.split("::", 1)[1]
        packet = space._ops.get(name)
        if packet is None:
            packet = space._ops[name] = OpOverloadPacket(name)
        op = OpOverload(schema, packet)
        packet._overloads[op._overloadname] = op
    return space


aten = _build()
_registry.namespaces.setdefault("aten", aten)  # (`torch.ops.aten`, library lookups)


# ops a Python dispatch mode sees as another: a tensor seen by Python is "subclass-like",
# and PyTorch's reshape then takes the view route instead of `_reshape_alias`
# (the attention primitive is PyTorch's CPU flash kernel; nll_loss decomposes to its
# forward, a dtype conversion to a copy)
_UNDER_MODES = {"_reshape_alias": "view", "nll_loss": "nll_loss_forward", "to": "_to_copy",
                "scaled_dot_product_attention": "_scaled_dot_product_flash_attention_for_cpu"}

# comparisons: the overload is the second operand's kind
_BY_OPERAND = {"eq", "ne", "gt", "lt", "ge", "le"}

# family members that are one overload of their op (every other call: its packet's first)
_MEMBER_OVERLOADS = {
    "sum_dims": "dim_IntList", "mean_dims": "dim", "max_dim": "dim", "min_dim": "dim",
    "pow_tensor_scalar": "Tensor_Scalar", "pow_tensor_tensor": "Tensor_Tensor",
    "pow_scalar": "Scalar", "squeeze_dim": "dim", "div_trunc": "Tensor_mode",
    "div_floor": "Tensor_mode", "scatter_value": "value", "view_dtype": "dtype",
}


def for_primitive(prim, args: tuple, params: dict) -> OpOverload | None:
    """The ATen overload PyTorch would run for `bind(prim, *args, **params)` (the op the
    profiler names), or None when `torch.ops.aten` here has no packet of that name.
    The overload is the one a family member stands for, else the packet's `default`, else
    its first."""
    from ..profiler.aten_names import op_name

    ns, _, name = op_name(prim, args, params).partition("::")
    packet = aten._ops.get(_UNDER_MODES.get(name, name)) if ns == "aten" else None
    if packet is None:
        return None
    overloads = packet._overloads
    if name in _BY_OPERAND and len(args) > 1:  # (x == 0 runs eq.Scalar; x + 2 add.Tensor)
        return overloads["Tensor" if isinstance(args[1], Tensor) else "Scalar"]
    member = getattr(params.get("fn"), "name", None)
    return overloads.get(_MEMBER_OVERLOADS.get(member, "default")) or \
        next(iter(overloads.values()))
