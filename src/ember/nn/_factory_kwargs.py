"""`torch.nn.factory_kwargs`: the device / dtype / memory_format keywords a module's
constructor passes on to tensor factories, checked and merged."""

from __future__ import annotations

_SIMPLE = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs: dict | None) -> dict:
    """The factory keywords in `kwargs` as one dict: its device / dtype / memory_format,
    merged with an explicit `factory_kwargs` entry (a key given in both is a TypeError, as is
    any other key)."""
    if kwargs is None:
        return {}
    allowed = _SIMPLE | {"factory_kwargs"}
    if not kwargs.keys() <= allowed:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - allowed}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
