"""Named-tuple results printing as PyTorch's `torch.return_types.<name>(...)`: the
(values, indices) of max / sort / topk, linalg's factorizations and the like. The
module `ember.return_types` lists every type made here."""

from __future__ import annotations

from collections import namedtuple

from ._common import write_out

RETURN_TYPES: dict[str, type] = {}  # name -> type: the module `ember.return_types`


def return_type(name: str, fields: list[str]) -> type:
    """A named tuple type printing as PyTorch's `torch.return_types.<name>(...)`."""
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        from .. import _names

        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"{_names.prefix}.return_types.{name}(\n{body})"

    from .. import _names

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                               "__module__": f"{_names.prefix}.return_types"})
    RETURN_TYPES[name] = cls
    return cls


def out_type(cls: type) -> type:
    """The type PyTorch returns when a named-tuple result was written into `out=` tensors:
    `<name>_out`, with the same fields."""
    name = cls.__name__ + "_out"
    return RETURN_TYPES.get(name) or return_type(name, list(cls._fields))


def as_namedtuple(result_cls, values, out):
    """A (values, indices)-style result, honouring `out=` (a pair of tensors)."""
    if out is not None:
        return out_type(result_cls)(*write_out(values, out))
    return result_cls(*values)
