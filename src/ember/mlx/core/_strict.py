"""Which arguments MLX's bindings take as arrays only.

Most of MLX's functions take `scalar | array` for their operands and convert what they are
given (a list there is refused as `ValueError: Invalid type list received in array
initialization.`, which `_array.as_array` says too). Others are bound with `array`
parameters, and nanobind then accepts an `mx.array` and nothing else: a list, a NumPy
array, a Python number, an object with `__mlx_array__` all end in nanobind's TypeError,
which names the signature (`_binding.bad_call`). ember's functions would take them, so
`strict` puts MLX's check in front of the functions below, measured on mlx 0.32.4 by
calling each with a list where its signature says `array` (`concatenate` and `stack`
take a list or tuple of arrays; `take`'s indices may be an int). A call nanobind cannot bind
at all (an argument missing, one too many, an unknown keyword) gets the same TypeError, where
Python would name the missing parameter. The typed parameters (`int`, `float`, `bool`,
`Sequence[int]` and their unions with None) take what nanobind converts, converted as it
converts them (`_nb_types`: `axis=np.int64(1)` is 1, `axis=1.0` is refused), and a
`stream=` that is no stream or device is refused the same way.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable

from ._array import array
from ._binding import bad_call
from ._device import check_stream, is_stream_or_device
from ._dtypes import Dtype
from ._nb_types import AS_IS, CONVERT, REFUSED, SHAPE, WIDE, as_int
from ._padding import pad_width_binds

_ONE, _TWO, _THREE = (0,), (0, 1), (0, 1, 2)  # the positions that must be arrays
_LIST = "list"  # the first argument: a list (or tuple) of arrays
_TAKE = "take"  # an array, then an array or an int
_PAD = "pad"  # an array, then a pad_width of the binding's types (`_padding.pad_width_binds`)
_UNIQUE = "unique"  # an array, then an int size
_STRIDED = "as_strided"  # an array, then shape, strides and an offset that is no negative
_LINSPACE = "linspace"  # two scalars, then an int32 num, no None (whatever the text says)

_STREAM = "*, stream: StreamOrDevice = None) -> array"
_STREAM_SPELT = ("*, stream: mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
                 "mlx.core.DeviceType | None = None) -> mlx.core.array")
# creation functions whose binding takes the shape as it is and casts it later: a shape of
# other types fails in C++'s cast (`zeros(3.0)`, `ones((2, 2.0))`), not in nanobind
_BAD_CAST = ("zeros", "ones", "full")

# name -> (what must be arrays, the signature after "name(", `{S}` for `_STREAM`)
_SIGNATURES = {
    "sum": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "mean": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "max": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "min": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "prod": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "var": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, ddof: int = 0, {S}'),
    "std": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, ddof: int = 0, {S}'),
    "argmax": (_ONE, 'a: array, /, axis: None | int = None, keepdims: bool = False, {S}'),
    "argmin": (_ONE, 'a: array, /, axis: None | int = None, keepdims: bool = False, {S}'),
    "all": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "any": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "logsumexp": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "softmax": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, *, precise: '
        'bool = False, stream: StreamOrDevice = None) -> array'),
    "cumsum": (_ONE, 'a: array, /, axis: int | None = None, *, reverse: bool = False, '
        'inclusive: bool = True, dtype: Dtype | None = None, stream: '
        'StreamOrDevice = None) -> array'),
    "cumprod": (_ONE, 'a: array, /, axis: int | None = None, *, reverse: bool = False, '
        'inclusive: bool = True, dtype: Dtype | None = None, stream: '
        'StreamOrDevice = None) -> array'),
    "cummax": (_ONE, 'a: array, /, axis: int | None = None, *, reverse: bool = False, '
        'inclusive: bool = True, stream: StreamOrDevice = None) -> array'),
    "cummin": (_ONE, 'a: array, /, axis: int | None = None, *, reverse: bool = False, '
        'inclusive: bool = True, stream: StreamOrDevice = None) -> array'),
    "sort": (_ONE, 'a: array, /, axis: None | int = -1, {S}'),
    "argsort": (_ONE, 'a: array, /, axis: None | int = -1, {S}'),
    "topk": (_ONE, 'a: array, /, k: int, axis: None | int = -1, {S}'),
    "partition": (_ONE, 'a: array, /, kth: int, axis: None | int = -1, {S}'),
    "argpartition": (_ONE, 'a: array, /, kth: int, axis: None | int = -1, {S}'),
    "broadcast_to": ((), 'a: scalar | array, /, shape: Sequence[int], {S}'),
    "reshape": (_ONE, 'a: array, /, shape: Sequence[int], {S}'),
    "transpose": (_ONE, 'a: array, /, axes: Sequence[int] | None = None, {S}'),
    "squeeze": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, {S}'),
    "expand_dims": (_ONE, 'a: array, /, axis: int | Sequence[int], {S}'),
    "flatten": (_ONE, 'a: array, /, start_axis: int = 0, end_axis: int = -1, {S}'),
    "moveaxis": (_ONE, 'a: array, /, source: int, destination: int, {S}'),
    "swapaxes": (_ONE, 'a: array, /, axis1 : int, axis2: int, {S}'),
    "tile": (_ONE, 'a: array, reps: int | Sequence[int], /, {S}'),
    "repeat": (_ONE, 'array: array, repeats: int, axis: int | None = None, {S}'),
    "split": (_ONE, 'a: array, /, indices_or_sections: int | Sequence[int], axis: int = '
        '0, {S}'),
    "pad": (_PAD, 'a: array, pad_width: int | tuple[int] | tuple[int, int] | '
        "list[tuple[int, int]], mode: Literal['constant', 'edge', "
        "'reflect', 'symmetric'] = 'constant', constant_values: scalar | "
        'array = 0, {S}'),
    "take": (_TAKE, 'a: array, /, indices: int | array, axis: int | None = None, {S}'),
    "take_along_axis": (_TWO, 'a: array, /, indices: array, axis: int | None = -1, {S}'),
    "stop_gradient": (_ONE, 'a: array, /, {S}'),
    "zeros_like": (_ONE, 'a: array, /, dtype: Dtype | None = None, {S}'),
    "ones_like": (_ONE, 'a: array, /, dtype: Dtype | None = None, {S}'),
    "full_like": (_ONE, 'a: array, vals: scalar | array, dtype: Dtype | None = None, {S}'),
    "matmul": (_TWO, 'a: array, b: array, /, {S}'),
    "inner": (_TWO, 'a: array, b: array, /, {S}'),
    "outer": (_TWO, 'a: array, b: array, /, {S}'),
    "kron": (_TWO, 'a: array, b: array, {S}'),
    "tensordot": (_TWO, 'a: array, b: array, /, axes: int | list[Sequence[int]] = 2, {S}'),
    "isclose": (_TWO, 'a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, '
        '*, equal_nan: bool = False, stream: StreamOrDevice = None) -> '
        'array'),
    "allclose": (_TWO, 'a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, '
        '*, equal_nan: bool = False, stream: StreamOrDevice = None) -> '
        'array'),
    "clip": (_ONE, 'a: array, /, a_min: scalar | array | None, a_max: scalar | array | '
        'None, {S}'),
    "diag": (_ONE, 'a: array, /, k: int = 0, {S}'),
    "diagonal": (_ONE, 'a: array, offset: int = 0, axis1: int = 0, axis2: int = 1, stream: '
        'StreamOrDevice = None) -> array'),
    "tril": (_ONE, 'x: array, k: int = 0, {S}'),
    "triu": (_ONE, 'x: array, k: int = 0, {S}'),
    "trace": (_ONE, 'a: array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, '
        'dtype: Dtype | None = None, {S}'),
    "roll": (_ONE, 'a: array, shift: int | tuple[int], axis: None | int | tuple[int] = '
        'None, /, {S}'),
    "round": ((), 'a: array, /, decimals: int = 0, stream: StreamOrDevice = None) -> array'),
    "quantize": (_ONE, "w: array, /, group_size: int | None = None, bits: int | None = None, "
        "mode: str = 'affine', *, global_scale: array | None = None, stream: StreamOrDevice "
        "= None) -> tuple[array, array, array]"),
    "dequantize": (_TWO, "w: array, /, scales: array, biases: array | None = None, group_size: "
        "int | None = None, bits: int | None = None, mode: str = 'affine', global_scale: "
        "array | None = None, dtype: Dtype | None = None, {S}"),
    "permute_dims": (_ONE, 'a: array, /, axes: Sequence[int] | None = None, {S}'),
    "slice": (_TWO, 'a: array, start_indices: array, axes: Sequence[int], slice_size: '
        'Sequence[int], {S}'),
    "slice_update": (_THREE, 'a: array, update: array, start_indices: array, axes: '
        'Sequence[int], {S}'),
    "flip": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, {S}'),
    "astype": (_ONE, 'a: array, dtype: Dtype, /, {S}'),
    "trunc": (_ONE, 'a: array, /, {S}'),
    "contiguous": (_ONE, 'a: array, /, allow_col_major: bool = False, {S}'),
    "unflatten": (_ONE, 'a: array, /, axis: int, shape: Sequence[int], {S}'),
    "addmm": (_THREE, 'c: array, a: array, b: array, /, alpha: float = 1.0, beta: float = '
        '1.0,  {S}'),
    "logcumsumexp": (_ONE, 'a: array, /, axis: int | None = None, *, reverse: bool = False, '
        'inclusive: bool = True, stream: StreamOrDevice = None) -> array'),
    "median": (_ONE, 'a: array, /, axis: None | int | Sequence[int] = None, keepdims: '
        'bool = False, {S}'),
    "norm": (_ONE, 'a: array, /, ord: None | int | float | str = None, axis: None | '
        'int | list[int] = None, keepdims: bool = False, {S}'),
    "as_strided": (_STRIDED, 'a: array, /, shape: Sequence[int] | None = None, strides: '
        'Sequence[int] | None = None, offset: int = 0, {S}'),
    "hadamard_transform": (_ONE, 'a: array, scale: float | None = None, stream: StreamOrDevice = '
        'None) -> array'),
    "stack": (_LIST, 'arrays: list[array], axis: int | None = 0, {S}'),
    "concatenate": (_LIST, 'arrays: list[array], axis: int | None = 0, {S}'),
    "unique": (_UNIQUE, 'a: array, /, size: int, return_index: bool = False, return_inverse: '
        'bool = False, return_counts: bool = False, fill_value: scalar | array | None = None, '
        '*, stream: StreamOrDevice = None) -> array | tuple[array, ...]'),
    # (two of the windows' bindings print the stream's type spelt out)
    "hanning": ((), f"M: int, {_STREAM_SPELT}"),
    "hamming": ((), 'M: int, {S}'),
    "blackman": ((), 'M: int, {S}'),
    "bartlett": ((), f"M: int, {_STREAM_SPELT}"),
    "linspace": (_LINSPACE, 'start: scalar, stop: scalar, num: int | None = 50, endpoint: bool = '
        'True, dtype: Dtype | None = float32, stream: StreamOrDevice = None) -> array'),
    "zeros": ((), 'shape: int | Sequence[int], dtype: Dtype | None = float32, {S}'),
    "ones": ((), 'shape: int | Sequence[int], dtype: Dtype | None = float32, {S}'),
    "full": ((), 'shape: int | Sequence[int], vals: scalar | array, dtype: Dtype | None = '
        'None, {S}'),
    "eye": ((), 'n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = float32, {S}'),
    "identity": ((), 'n: int, dtype: Dtype | None = float32, {S}'),
    "tri": ((), 'n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = None, {S}'),
    "conv1d": (_TWO, 'input: array, weight: array, /, stride: int = 1, padding: int = 0, '
        'dilation: int = 1, groups: int = 1, {S}'),
    "conv2d": (_TWO, 'input: array, weight: array, /, stride: int | tuple[int, int] = 1, '
        'padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: '
        'int = 1, {S}'),
    "conv3d": (_TWO, 'input: array, weight: array, /, stride: int | tuple[int, int, int] = '
        '1, padding: int | tuple[int, int, int] = 0, dilation: int | tuple[int, int, int] = '
        '1, groups: int = 1, {S}'),
    "conv_transpose1d": (_TWO, 'input: array, weight: array, /, stride: int = 1, padding: '
        'int = 0, dilation: int = 1, output_padding: int = 0, groups: int = 1, {S}'),
    "conv_transpose2d": (_TWO, 'input: array, weight: array, /, stride: int | tuple[int, '
        'int] = 1, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, '
        'output_padding: int | tuple[int, int] = 0, groups: int = 1, {S}'),
    "conv_transpose3d": (_TWO, 'input: array, weight: array, /, stride: int | tuple[int, '
        'int, int] = 1, padding: int | tuple[int, int, int] = 0, dilation: int | tuple[int, '
        'int, int] = 1, output_padding: int | tuple[int, int, int] = 0, groups: int = 1, {S}'),
    "conv_general": (_TWO, 'input: array, weight: array, /, stride: int | Sequence[int] = 1, '
        'padding: int | Sequence[int] | tuple[Sequence[int], Sequence[int]] = 0, '
        'kernel_dilation: int | Sequence[int] = 1, input_dilation: int | Sequence[int] = 1, '
        'groups: int = 1, flip: bool = False, {S}'),
    "convolve": (_TWO, 'a: array, v: array, /, mode: str = "full", {S}'),
    "put_along_axis": (_THREE, 'a: array, /, indices: array, values: array, axis: int | None = '
        'None, {S}'),
}


def _refused(where, args: tuple, kwargs: dict) -> bool:
    if where == _PAD:
        width = args[1] if len(args) > 1 else kwargs.get("pad_width", 0)
        return not isinstance(args[0], array) or not pad_width_binds(width)
    if where == _LIST:
        first = args[0] if args else None
        return not (isinstance(first, list | tuple) and all(isinstance(a, array)
                                                          for a in first))
    if where == _UNIQUE:
        try:
            operator.index(args[1])  # nanobind's int: anything with __index__
        except TypeError:
            return True
        return not isinstance(args[0], array)
    if where == _STRIDED:  # (the offset binds as C++'s size_t, which takes no negative int)
        offset = as_int(args[3] if len(args) > 3 else kwargs.get("offset", 0))
        return not isinstance(args[0], array) or offset is not None and offset < 0
    if where == _LINSPACE:  # (num binds as a C int: no None, nothing past int32)
        num = as_int(args[2] if len(args) > 2 else kwargs.get("num", 50))
        return num is None or not -(2**31) <= num < 2**31
    if where == _TAKE:
        return not isinstance(args[0], array) or (
            len(args) > 1 and not isinstance(args[1], array | int))
    return any(not isinstance(args[i], array) for i in where if i < len(args))


def _binding_of(signature: str) -> inspect.Signature:
    """The Python signature of a binding's `signature` text, its annotations unevaluated
    (`annotations` is the `__future__` feature imported above)."""
    params = signature.partition("(")[2].rpartition(") ->")[0]
    scope: dict = {"float32": None}  # (a default the text names)
    exec(compile(f"def f({params}): pass", "<binding>", "exec", dont_inherit=True,  # noqa: S102
                 flags=annotations.compiler_flag), scope)
    return inspect.signature(scope["f"])


def _not_dtype(value, optional: bool) -> bool:
    """Whether nanobind refuses `value` for a `Dtype` (or `Dtype | None`) parameter."""
    return not (isinstance(value, Dtype) or optional and value is None)


_OWN = "own"  # a plan: `fn`'s own signature binds the call as written
_REFUSE = "refuse"  # a plan: nanobind refuses the call
_SAME = "same"  # a plan: the call is placed as MLX's names place it already


def _plan(fn: Callable, binding: inspect.Signature, count: int, names: tuple):
    """How a call of `count` positional arguments and keywords `names` binds by MLX's
    parameter names (which ember's may not share): (the positional sources, {keyword:
    source}), a source being an argument's position or a keyword's name; `_OWN` where only
    `fn`'s own signature binds it, `_REFUSE` where neither does, `_SAME` where the call
    is placed as MLX's names place it already.

    NOTE: the text's `/` is not always where the binding puts it (`roll` takes `axis=`
    though its text ends `axis ..., /`), so `fn`'s own signature may still bind the call.
    A plan depends on the call's shape alone, so each is worked out once."""
    slots = tuple(range(count))
    named = {k: k for k in names}
    try:
        bound = binding.bind(*slots, **named, stream=None)
    except TypeError:
        if fn is None:
            return _REFUSE
        try:
            inspect.signature(fn).bind(*slots, **named)
        except TypeError:
            return _REFUSE
        return _OWN
    bound.arguments.pop("stream")
    if bound.args == slots and all(k == v for k, v in bound.kwargs.items()):
        return _SAME
    return bound.args, bound.kwargs


def strict(fn: Callable) -> Callable:
    """`fn`, refusing what MLX's binding of the same name refuses (see the table); a
    function not in the table comes back as it is."""
    entry = _SIGNATURES.get(fn.__name__)
    if entry is None:
        return fn
    return bound_as(fn, entry[0], binding_text(fn.__name__))


def binding_text(name: str) -> str:
    """The signature MLX's TypeError prints for the binding `name` of the table."""
    return f"{name}({_SIGNATURES[name][1].replace('{S}', _STREAM)}"


def _conversion(name: str, param: inspect.Parameter) -> tuple[frozenset, Callable]:
    """(the classes taken as they are, the conversion) of the binding `name`'s typed
    parameter `param`: a shape and `as_strided`'s wide integers by their own rules
    (`_nb_types.SHAPE`, `WIDE`), the rest by their annotation."""
    wide = WIDE.get((name, param.name))
    if wide is not None:
        return frozenset(), wide
    if param.name in ("shape", "slice_size") and param.annotation in SHAPE:
        return frozenset(), SHAPE[param.annotation]
    return AS_IS[param.annotation], CONVERT[param.annotation]


def bound_as(fn: Callable, where, signature: str, fallback: bool = True) -> Callable:
    """`fn` behind the binding `signature` (its text as MLX's TypeError prints it, name
    first): `where` says which arguments must be arrays (`_ONE`, ...; `()`: none checked),
    the typed ones are converted as nanobind converts them, and a `stream` of a wrong type
    is refused; a valid one is checked (`check_stream`) and not passed on. `fallback`: a
    call only `fn`'s own signature binds runs as written (see `_plan`)."""
    name = signature.partition("(")[0]
    binding = _binding_of(signature)
    positional = [p for p in binding.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    least = sum(p.default is p.empty for p in positional)
    names = [p.name for p in positional]
    dtype_at = names.index("dtype") if "dtype" in names else None
    if dtype_at is None and "dtype" in binding.parameters:  # keyword-only
        dtype_at = len(names) + 99
    optional = dtype_at is not None and "None" in str(binding.parameters["dtype"].annotation)

    most = len(positional)
    stream_at = names.index("stream") if "stream" in names else None
    if stream_at is not None:  # (a positional stream is taken off before binding)
        most, names = most - 1, names[:stream_at]
    plans: dict = {}  # (positional count, keyword names) -> `_plan`'s answer
    # the values nanobind converts (`_nb_types`), by position and by keyword
    typed = {p.name: _conversion(name, p) for p in binding.parameters.values()
             if p.annotation in CONVERT}
    typed_at = tuple((i, *typed[n]) for i, n in enumerate(names) if n in typed)

    def rebind(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call's arguments by MLX's parameter names (or refused, as nanobind does)."""
        if where == _LIST and not args:  # nanobind takes the list by position only
            raise bad_call(name, signature, args, kwargs)
        key = (len(args), tuple(kwargs))
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = _plan(fn if fallback else None, binding, *key)
        if plan is _REFUSE:
            raise bad_call(name, signature, args, kwargs)
        if plan is _OWN:
            return args, kwargs, True
        if plan is _SAME:
            return args, kwargs, False

        def take(k):
            return args[k] if k.__class__ is int else kwargs[k]

        return (tuple(take(k) for k in plan[0]), {key: take(k) for key, k in plan[1].items()},
                False)

    def converted(args: tuple, kwargs: dict):
        """The values (placed by MLX's parameter order) as nanobind converts them, or None
        where it refuses one."""
        for i, as_is, convert in typed_at:
            if i < len(args) and args[i].__class__ not in as_is:
                v = convert(args[i])
                if v is REFUSED:
                    return None
                if v is not args[i]:
                    args = (*args[:i], v, *args[i + 1:])
        for k, given in kwargs.items() if kwargs else ():
            t = typed.get(k)
            if t is not None and given.__class__ not in t[0]:
                v = t[1](given)
                if v is REFUSED:
                    return None
                if v is not given:
                    kwargs = {**kwargs, k: v}
        return args, kwargs

    def checked(*args, **kwargs):
        given, named = args, kwargs  # as the call wrote them, for the message
        if stream_at is not None and len(args) > stream_at:
            if "stream" in kwargs or len(args) > stream_at + 1:
                raise bad_call(name, signature, given, named)
            args, kwargs = args[:stream_at], {**kwargs, "stream": args[stream_at]}
        if kwargs and "stream" in kwargs:
            kwargs = dict(kwargs)
            stream = kwargs.pop("stream")
            if stream is not None:
                if not is_stream_or_device(stream):
                    raise bad_call(name, signature, given, named)
                check_stream(stream)
        own = False  # (True: bound by ember's own parameter order, not MLX's)
        if kwargs or not least <= len(args) <= most:  # else binding is trivial
            args, kwargs, own = rebind(args, kwargs)
        if where and args and _refused(where, args, kwargs):
            raise bad_call(name, signature, given, named)
        if typed and not own:
            bound = converted(args, kwargs)
            if bound is None:
                if name in _BAD_CAST:
                    raise RuntimeError("std::bad_cast")
                raise bad_call(name, signature, given, named)
            args, kwargs = bound
        if dtype_at is not None:
            d = args[dtype_at] if dtype_at < len(args) else kwargs.get("dtype")
            if d.__class__ is not Dtype and _not_dtype(d, optional):
                raise bad_call(name, signature, given, named)
        return fn(*args, **kwargs)
    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = fn.__doc__
    checked.binds_stream = True  # (`_lazy` hands it a `stream=` of a wrong type to refuse)
    return checked
