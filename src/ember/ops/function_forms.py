"""Tensor methods PyTorch also exposes as functions of `torch` (`torch.clamp_min_(x, 0)`,
`torch.detach(x)`, `torch.get_device(x)`): each calls the method, once the argument parser
has checked the call's shape in its words (the positional count first, then that the
first argument is a Tensor)."""

from __future__ import annotations

from .._tensor import Tensor
from ._arg_parser_text import invalid_combination, need_tensor
from ._common import is_scalar

# name -> (positional parameters after `input`, the printed overloads when there are
# several: the parser then lists them instead of naming the argument)
_FORMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "clamp_min_": (("min",), ("(Tensor input, Tensor min)", "(Tensor input, Number min)")),
    "clamp_max_": (("max",), ("(Tensor input, Tensor max)", "(Tensor input, Number max)")),
    "xlogy_": (("other",), ("(Tensor input, Tensor other)", "(Tensor input, Number other)")),
    "deg2rad_": ((), ()),
    "rad2deg_": ((), ()),
    "sinc_": ((), ()),
    "detach": ((), ()),
    "detach_": ((), ()),
    "get_device": ((), ()),
    "is_distributed": ((), ()),
    "resize_as_": (("the_template",), ()),
    "as_strided_": (("size", "stride", "storage_offset"), ()),
}


def _positional_count(name: str, n_params: int, given: int) -> None:
    if given > n_params:
        plural = "argument" if n_params == 1 else "arguments"
        raise TypeError(f"{name}() takes {n_params} positional {plural} but {given} were given")


def _form(name: str, params: tuple[str, ...], overloads: tuple[str, ...]):
    method = getattr(Tensor, name)

    def fn(*args, **kwargs):
        if overloads:
            if not (args and isinstance(args[0], Tensor)) or len(args) > 1 + len(params):
                # (these in-place overloads' notes mark a number as not fitting `Number`)
                raise invalid_combination(name, overloads, args, kwargs, {"Number": ()})
        else:
            _positional_count(name, 1 + len(params), len(args))
            need_tensor(args[0] if args else None, name)
        if overloads and not all(isinstance(v, Tensor) or is_scalar(v)
                                 for v in (*args[1:], *kwargs.values())):
            raise invalid_combination(name, overloads, args, kwargs, {"Number": ()})
        return method(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`torch.{name}(input, ...)`: the same as `input.{name}(...)`."
    return fn


def _is_distributed(self: Tensor) -> bool:
    """A CPU tensor is never spread over processes."""
    return False


TENSOR_METHODS = {"is_distributed": _is_distributed}


def install() -> dict:
    """The function forms, made once the Tensor methods they call are bound."""
    return {name: _form(name, params, overloads)
            for name, (params, overloads) in _FORMS.items()}


__all__: list[str] = []
