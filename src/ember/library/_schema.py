"""Operator schemas: `infer_schema` (a schema string from a function's type hints), a parser
for schema strings as `Library.define` takes them, and the argument check an op call runs.

A schema reads `name.overload(Tensor x, SymInt n, *, float alpha=1.) -> (Tensor, Tensor)`.
ember keeps it as PyTorch writes it and parses it into `Schema`: the arguments (type,
name, default, keyword-only, mutated) and the return types, so a call can be checked
against it with PyTorch's messages and `opcheck` can read which inputs an op may write.
"""

# ruff: noqa: UP006, UP007, UP045 - the typing forms users annotate with are the table's keys

from __future__ import annotations

import inspect
import re
import types as _pytypes
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .._device import device as _device
from .._dtype import dtype as _dtype
from .._tensor import Tensor

_NO_DEFAULT = object()

# -- infer_schema: Python annotations -> schema types ---------------------------------------

_Number = typing.Union[int, float, bool]
_SCALARS = {int: "SymInt", float: "float", bool: "bool"}
_ARG_TYPES: dict = {Tensor: "Tensor", typing.Optional[Tensor]: "Tensor?", str: "str",
                    typing.Optional[str]: "str?", _Number: "Scalar",
                    typing.Optional[_Number]: "Scalar?", _dtype: "ScalarType",
                    typing.Optional[_dtype]: "ScalarType?", _device: "Device",
                    typing.Optional[_device]: "Device?"}
for _seq in (typing.Sequence, typing.List, Sequence, list):
    _ARG_TYPES[_seq[Tensor]] = "Tensor[]"
    _ARG_TYPES[_seq[typing.Optional[Tensor]]] = "Tensor?[]"
    _ARG_TYPES[_seq[_Number]] = "Scalar[]"
for _py, _name in _SCALARS.items():
    _ARG_TYPES[_py] = _name
    _ARG_TYPES[typing.Optional[_py]] = _name + "?"
    for _seq in (typing.Sequence, typing.List, Sequence, list):
        _ARG_TYPES[_seq[_py]] = _name + "[]"
        _ARG_TYPES[typing.Optional[_seq[_py]]] = _name + "[]?"
_RETURN_TYPES: dict = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]",
                       list[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
                       _Number: "Scalar"}


def _normalize(annotation):
    """`int | None` and `Optional[int]` as one key (PEP 604 unions compare unequal)."""
    if isinstance(annotation, _pytypes.UnionType):
        return typing.Union[typing.get_args(annotation)]
    return annotation


def _default_text(name: str, value, fail) -> str:
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, _dtype):
        return str(value).rsplit(".", 1)[-1]
    if isinstance(value, _device):
        return f'"{value}"'
    fail(f"Parameter {name} has an unsupported default value type {type(value)}. "
         "Please file an issue on GitHub so we can prioritize this.")
    return ""


def infer_schema(prototype_function: Callable, /, *, mutates_args,
                 op_name: str | None = None) -> str:
    """The schema string of `prototype_function` read from its type hints (PyTorch's
    `torch.library.infer_schema`); `mutates_args` names the Tensor arguments it writes
    ("unknown": all of them)."""
    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    sig = inspect.signature(prototype_function)

    def fail(why: str):
        raise ValueError(f"infer_schema(func): {why} Got func with signature {sig})")

    def resolve(annotation):
        if not isinstance(annotation, str):
            return annotation
        try:  # (a string annotation, as `from __future__ import annotations` leaves them)
            return eval(annotation, getattr(prototype_function, "__globals__", {}))
        except NameError as e:
            fail(f"Unsupported type annotation {annotation}. It is not a type. ({e}). If you "
                 "are using 'from __future__ import annotations', note that annotations are "
                 "evaluated lazily as strings; make sure all types referenced in annotations "
                 "are importable at module scope, not only inside a local function.")

    params, seen_kw, mutated_seen = [], False, set()
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not seen_kw:
            params.append("*")
            seen_kw = True
        if p.annotation is inspect.Parameter.empty:
            fail(f"Parameter {name} must have a type annotation.")
        ann = _normalize(resolve(p.annotation))
        if ann not in _ARG_TYPES:
            fail(f"Parameter {name} has unsupported type {ann}. The valid types are: "
                 f"{', '.join(sorted(set(_ARG_TYPES.values())))}.")
        schema_type = _ARG_TYPES[ann]
        unknown = mutates_args == "unknown"
        if (unknown and schema_type.startswith("Tensor")) or (
                not unknown and name in mutates_args):
            if not schema_type.startswith("Tensor"):
                fail(f"Parameter {name} is in mutable_args but only Tensors or collections "
                     "of Tensors can be mutated")
            mutated_seen.add(name)
            alias = f"Tensor(a{i}!)"
            schema_type = alias + schema_type[len("Tensor"):]
        default = ""
        if p.default is not inspect.Parameter.empty:
            default = "=" + _default_text(name, p.default, fail)
        params.append(f"{schema_type} {name}{default}")
    if mutates_args != "unknown":
        missing = set(mutates_args) - set(sig.parameters)
        if missing:
            fail(f"{missing} in mutates_args were not found in the custom op's signature. "
                 "mutates_args should contain the names of all args that the custom op "
                 "mutates, or just the string 'unknown' if you don't know.")
    ret = _return_text(resolve(sig.return_annotation), fail)
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


def _return_text(annotation, fail) -> str:
    if annotation is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    if annotation is None or annotation is type(None):
        return "()"
    annotation = _normalize(annotation)
    origin = typing.get_origin(annotation)
    if origin is tuple and typing.get_args(annotation):
        parts = []
        for a in typing.get_args(annotation):
            if _normalize(a) not in _RETURN_TYPES:
                fail(f"Return has unsupported type {annotation}. The valid types are: "
                     f"{_RETURN_TYPES}.")
            parts.append(_RETURN_TYPES[_normalize(a)])
        return f"({', '.join(parts)})"
    if annotation not in _RETURN_TYPES:
        fail(f"Return has unsupported type {annotation}. The valid types are: "
             f"{_RETURN_TYPES}.")
    return _RETURN_TYPES[annotation]


# -- parsing a schema string --------------------------------------------------------------

@dataclass
class Argument:
    """One schema argument: `type` without its alias annotation, `mutable` when `(a!)`."""

    name: str
    type: str
    default: object = _NO_DEFAULT
    kwarg_only: bool = False
    mutable: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


@dataclass
class Schema:
    """A parsed schema: `qualname` (`ns::name`), overload name, arguments, return types."""

    name: str
    overload_name: str
    arguments: list = field(default_factory=list)
    returns: list = field(default_factory=list)
    text: str = ""

    def __str__(self) -> str:
        return self.text


_KNOWN = {"Tensor", "SymInt", "int", "float", "bool", "str", "Scalar", "ScalarType",
          "Device", "Layout", "MemoryFormat", "Generator", "SymFloat", "SymBool", "Any",
          "Dimname", "Storage", "Stream", "complex", "t"}
_UNKNOWN_TYPE = ("\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                 "int, float, bool, Scalar; for a full list, please see "
                 "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
                 "#func :\n{}\n")
_ARG = re.compile(r"^(?P<type>[A-Za-z]\w*)(?P<alias>\([a-z]\w*!?\))?(?P<suffix>(\?|\[\d*\])*)"
                  r"\s+(?P<name>[A-Za-z_]\w*)(\s*=\s*(?P<default>.+))?$")


def _parse_error(expected: str, text: str) -> RuntimeError:
    return RuntimeError(f"expected {expected} here:\n{text}\n")


def _split_top(text: str) -> list[str]:
    """`text` split at commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_default(text: str, type_: str):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith(("'", '"')):
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(t, type_.split("[")[0]) for t in _split_top(text[1:-1])]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # a dtype, layout or memory format named bare (`float32`, `strided`)


def parse_schema(text: str, namespace: str = "") -> Schema:
    """`text` (`[ns::]name[.overload](args) -> returns`; a bare name is put in `namespace`)
    as a `Schema`; a malformed one raises RuntimeError in PyTorch's words."""
    text = text.strip()
    m = re.match(r"^([A-Za-z_][\w:]*(\.[A-Za-z_]\w*)?)?\s*\((.*)\)\s*->\s*(.+)$", text, re.S)
    if m is None:
        if "(" not in text:
            raise _parse_error("'(' but found 'eof'", text)
        if "->" not in text:
            raise _parse_error("'->' but found 'eof'", text)
        raise _parse_error(") but found 'arrow'", text)
    head, args_text, ret_text = m.group(1) or "", m.group(3), m.group(4).strip()
    name, _, overload = head.partition(".")
    if namespace and "::" not in name:
        name = f"{namespace}::{name}"
    full = name + (f".{overload}" if overload else "") + text[text.index("("):]
    schema = Schema(name, overload, text=full)
    kwarg_only = False
    for part in _split_top(args_text):
        if part == "*":
            kwarg_only = True
            continue
        am = _ARG.match(part)
        if am is None:
            raise _parse_error("an argument", text)
        if am.group("type") not in _KNOWN:
            raise RuntimeError(_UNKNOWN_TYPE.format(text))
        type_ = am.group("type") + am.group("suffix")
        default = _NO_DEFAULT
        if am.group("default") is not None:
            default = _parse_default(am.group("default"), type_)
        schema.arguments.append(Argument(am.group("name"), type_, default, kwarg_only,
                                         bool(am.group("alias") and "!" in am.group("alias"))))
    ret_text = ret_text[1:-1] if ret_text.startswith("(") else ret_text
    for part in _split_top(ret_text):
        rtype = re.sub(r"\([a-z]\w*!?\)", "", part.split()[0])
        if re.sub(r"(\?|\[\d*\])+$", "", rtype) not in _KNOWN:
            raise RuntimeError(_UNKNOWN_TYPE.format(text))
        schema.returns.append(rtype)
    return schema


# -- checking a call against a schema -------------------------------------------------------

def _type_name(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _fits(value, type_: str) -> bool:
    if type_.endswith("?"):
        return value is None or _fits(value, type_[:-1])
    if type_.endswith("]"):
        base = type_[:type_.index("[")]
        if base == "int" and not type_.endswith("[]") and isinstance(value, int) and \
                not isinstance(value, bool):
            return True  # (PyTorch broadcasts a single int to an int[N]; not to int[], SymInt[N])
        return isinstance(value, (list, tuple)) and all(_fits(v, base) for v in value)
    if type_ == "Tensor":
        return isinstance(value, Tensor)
    if type_ in ("int", "SymInt"):
        return isinstance(value, int)
    if type_ in ("float", "SymFloat"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_ in ("bool", "SymBool"):
        return isinstance(value, bool)
    if type_ == "str":
        return isinstance(value, str)
    if type_ == "Scalar":
        return isinstance(value, (bool, int, float, complex))
    if type_ == "ScalarType":
        return isinstance(value, _dtype)
    if type_ == "Device":
        return isinstance(value, (_device, str, int))
    return True


_SHOWN = {"SymInt": "int", "SymFloat": "float", "SymBool": "bool", "Scalar": "number",
          "ScalarType": "int", "Layout": "int", "MemoryFormat": "int"}


def _shown(type_: str) -> str:
    """A type as PyTorch's call errors name it (`int[]?` reads Optional[List[int]])."""
    if type_.endswith("?"):
        return f"Optional[{_shown(type_[:-1])}]"
    if type_.endswith("]"):
        return f"List[{_shown(type_[:type_.rindex('[')])}]"
    return _SHOWN.get(type_, type_)


def _broadcast_int(value, type_: str):
    """A single int given for an `int[N]` as the list of N copies PyTorch passes on."""
    m = re.fullmatch(r"int\[(\d+)\]\??", type_)
    if m and isinstance(value, int) and not isinstance(value, bool):
        return [value] * int(m.group(1))
    return value


def bind_arguments(schema: Schema, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """The call's values in schema order: (positional values, keyword-only values), with
    defaults filled in; a wrong call raises RuntimeError in PyTorch's words."""
    qual = f"{schema.name}()"
    decl = f"Declaration: {schema.text}"
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) + len(kwargs) > len(schema.arguments) or len(args) > len(positional):
        raise RuntimeError(f"{qual} expected at most {len(schema.arguments)} argument(s) but "
                           f"received {len(args) + len(kwargs)} argument(s). {decl}")
    pos_out, kw_out, used = [], {}, 0
    for i, a in enumerate(schema.arguments):
        if i < len(args):
            if a.name in kwargs:
                raise RuntimeError(f"Argument '{a.name}' specified both as positional and "
                                   f"keyword argument. Schema: {schema.text}")
            value = args[i]
        elif a.name in kwargs:
            value = kwargs[a.name]
            used += 1
        elif a.has_default:
            value = a.default
        else:
            raise RuntimeError(f"{qual} is missing value for argument '{a.name}'. {decl}")
        if not _fits(value, a.type):
            raise RuntimeError(
                f"{qual} Expected a value of type '{_shown(a.type)}' for argument '{a.name}' "
                f"but instead found type '{_type_name(value)}'.\nPosition: {i}\n"
                f"Value: {value!r}\n{decl}")
        value = _broadcast_int(value, a.type)
        (kw_out.__setitem__(a.name, value) if a.kwarg_only else pos_out.append(value))
    if used < len(kwargs):
        names = {a.name for a in schema.arguments}
        unknown = next(k for k in kwargs if k not in names)
        raise RuntimeError(f"Unknown keyword argument '{unknown}' for operator "
                           f"'{schema.name}'. Schema: {schema.text}")
    return pos_out, kw_out
