"""The `generator=` argument of the random ops, refused as PyTorch's argument parser refuses
it when it is no Generator (`torch.randn(3, generator=42)`, a seed passed for a generator).

An op with one signature names the argument ("multinomial(): argument 'generator' must be
torch.Generator, not int"); an op with several overloads fits none of them and lists them
all with the types it was given ("randn() received an invalid combination of arguments").
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._arg_parser_text import invalid_combination, tp_name

_FACTORY = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
            "torch.device device = None, bool pin_memory = False, bool requires_grad = False)")
_LIKE = ("torch.memory_format memory_format = None, torch.dtype dtype = None, "
         "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
         "bool requires_grad = False)")


def _with_and_without(head: str, tail: str) -> tuple[str, str]:
    """A factory's two overloads: with a required generator, and without one."""
    return (f"({head}*, torch.Generator generator, {tail}", f"({head}*, {tail}")


_NORMAL_TAIL = "*, torch.Generator generator = None, Tensor out = None"

# PyTorch's overloads of the random ops that have several, in the order its parser lists them
OVERLOADS: dict[str, tuple[str, ...]] = {
    "rand": _with_and_without("tuple of ints size, ", _FACTORY),
    "randn": _with_and_without("tuple of ints size, ", _FACTORY),
    "randperm": _with_and_without("int n, ", _FACTORY),
    "rand_like": _with_and_without("Tensor input, ", _LIKE),
    "randn_like": _with_and_without("Tensor input, ", _LIKE),
    "randint_like": (_with_and_without("Tensor input, int low, int high, ", _LIKE)
                     + _with_and_without("Tensor input, Tensor high, ", _LIKE)
                     + _with_and_without("Tensor input, int high, ", _LIKE)),
    "normal": (f"(Tensor mean, Tensor std, {_NORMAL_TAIL})",
               f"(Tensor mean, float std = 1, {_NORMAL_TAIL})",
               f"(float mean, Tensor std, {_NORMAL_TAIL})",
               "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
               + _FACTORY),
    "bernoulli": ("(Tensor input, *, torch.Generator generator = None, Tensor out = None)",
                  "(Tensor input, float p, *, torch.Generator generator = None)"),
    "random_": ("(*, torch.Generator generator = None)",
                "(int from, int to, *, torch.Generator generator = None)",
                "(int to, *, torch.Generator generator = None)"),
}


# what normal's overloads take for `mean` and `std`: a Tensor or a real number
_MEAN_STD = (Tensor, int, float, np.integer, np.floating, np.bool_)


def _given(kwargs: dict | None) -> dict:
    """The keywords a call passed, as far as ember can tell: those not at their default."""
    return {k: v for k, v in (kwargs or {}).items()
            if v is not None and not (k in ("requires_grad", "pin_memory") and v is False)}


def checked_generator(name: str, generator, args: tuple = (), kwargs: dict | None = None):
    """The Generator `name` draws from (the default one for None); anything else refused in
    PyTorch's words, the call's positional `args` and keyword `kwargs` described as its
    parser describes them."""
    from ..random import Generator, default_generator

    if name == "normal" and not all(isinstance(v, _MEAN_STD) for v in args[:2]):
        raise invalid_combination(name, OVERLOADS[name], tuple(args), _given(kwargs))
    if generator is None:
        return default_generator
    if isinstance(generator, Generator):
        return generator
    sigs = OVERLOADS.get(name)
    if sigs is None or (name == "random_" and len(args) == 2):  # (one overload takes two)
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not "
                        f"{tp_name(generator)}")
    # NOTE: torch lists the keywords in an order that follows the order they were passed in,
    # which a Python function cannot see: ember assumes `size=`, then `generator=`, then the
    # rest in signature order (how calls are usually written).
    given = _given(kwargs)
    ordered = {k: given.pop(k) for k in ("size",) if k in given}
    ordered["generator"] = generator
    raise invalid_combination(name, sigs, tuple(args), {**ordered, **given})

