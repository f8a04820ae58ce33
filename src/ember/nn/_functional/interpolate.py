"""`interpolate` (and the `upsample*` shorthands), computed as PyTorch's CPU kernels do.

Every resized dim is one pass over a list of *taps* per output position: the input
positions it reads and their weights. Floating inputs resample one dim at a time (the
last first). The linear modes add their taps as ATen's kernels do, with fused
multiply-adds (bilinear in one step over its four taps): the same bits as PyTorch. For the
others, where the values are finite a pass is one matrix product with the weights the taps
make (fast forward and backward); where a NaN or inf is present, each output is the sum of
its taps in order, so it reaches only the outputs whose taps read it, as in PyTorch
(gradients from the gathers' VJPs). The taps follow ATen:
- linear modes: two taps, ATen's source index (one fused multiply-add) and lambdas in the
  input's precision;
- bicubic: four taps around the source index, border pixels repeated, Keys' kernel with
  A = -0.75;
- `antialias=True` (bilinear / bicubic / lanczos, 4-D): the filter (triangle, Keys with
  A = -0.5, or the Lanczos-3 windowed sinc) stretched by the downscaling factor over
  every input position it covers, normalised to sum to one (PIL's resampling); lanczos
  runs only antialiased;
- uint8 (bilinear / bicubic / lanczos): the same taps as fixed-point int16 weights, each pass
  rounded and clamped to 0..255 as ATen's uint8 kernels do (the same bits).
Linear-mode and uint8 results match ATen's bits; bicubic and antialiased float sums differ
from them in their last bits (its kernels add the taps in another order).
With native kernels on, float32 / float64 passes (nearest too) run in C
(csrc/resample.c, `_NativePasses`): the bits of the exact tap sums above for any values,
and a scatter-add gradient in a fixed order; this NumPy path stays the reference.
"""

from __future__ import annotations

import math

import numpy as np

import ember as E

from ..._core.dispatch import transform_active
from ..._tensor import Tensor
from ..._user_warnings import warn_at_user
from ...autograd.function import Function
from ...ops._call_plans import Plans
from ...ops._common import type_name
from ...ops._fma import fma
from ...ops.conv import _layout_of, row_major_only
from ...ops.nn_ops import keep_channels_last
from ...ops.one_node import plain_call
from ...ops.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ...ops.registry import shows
from . import _resample_native as _native

_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
          "nearest-exact")
_NEEDS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_FILTERED = ("bilinear", "bicubic", "lanczos")  # (the modes antialiasing supports)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial): nearest, nearest-exact, (bi/tri)linear,
    bicubic, lanczos or area; `antialias` low-pass filters bilinear / bicubic / lanczos
    downscaling (lanczos requires it)."""
    key = _plain_key(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                     antialias)
    plan = _plans.get(key) if key is not None else None
    if plan and _native.library() is not None:  # (the checks of a call like this passed)
        return _planned(input, plan)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    out, scales = _output_size(input, nd, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in _FILTERED and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if not 3 <= input.dim() <= 5 or mode not in (*_NEEDS, *_FILTERED, "nearest",
                                                 "nearest-exact", "area") \
            or (mode in ("bicubic", "lanczos") and nd != 2):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: {_MODES} (got {mode})")
    if mode in _NEEDS and nd != _NEEDS[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode] + 2}D input")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, out)
    _check_sizes(tuple(input.shape[2:]), out)
    _check_dtype(input, mode, antialias)
    if input.dtype == E.uint8 and mode in _FILTERED:
        return _resample_uint8(input, out, scales, mode, align_corners, antialias)
    if mode in ("nearest", "nearest-exact"):
        name = f"UpsampleNearest{'Exact' if mode == 'nearest-exact' else ''}{nd}D"
    else:
        name = {"linear": "UpsampleLinear1D", "bilinear": "UpsampleBilinear2D",
                "trilinear": "UpsampleTrilinear3D", "bicubic": "UpsampleBicubic2D",
                "lanczos": "UpsampleLanczos2D"}[mode]
        name += "Aa" if antialias else ""
    # (PyTorch's kernel keeps the sizes and scales it resampled with, not the input)
    shown = {"output_size": out, "self_sym_sizes": tuple(input.shape)}
    if mode not in ("nearest", "nearest-exact"):
        shown["align_corners"] = align_corners
    shown.update(zip(_SCALE_NAMES[nd], scales))
    if key is not None and key not in _plans:
        plan = _plans[key] = _plan(input, out, scales, mode, align_corners, antialias,
                                   name + "Backward0", shown)
        if plan and _native.library() is not None:
            return _planned(input, plan)
    if mode in ("nearest", "nearest-exact"):
        res = _nearest(input, out, scales, mode == "nearest-exact")
    else:
        res = _resample_float(input, out, scales, mode, align_corners, antialias)
    if not _channels_last(res):  # (the native passes' result may be laid out so already)
        res = keep_channels_last(input, res, name + "Backward0")
    return shows(res, name + "Backward0", **shown)


# --- a call's plan -------------------------------------------------------------------------
# A float32 / float64 row-major input whose resized dims the native passes run (plain eager:
# no transform) keeps its checked call's passes, taps and node by what the checks read; a
# call like it takes no check again and computes no taps: `_NativePasses` on the kept taps,
# as `_nearest` and `_resample_float` run it (the same bits, gradient and node).

_plans = Plans()  # key -> (resized dims, taps, linear, node name, shown), or False


def _plain_key(input: Tensor, size, scale_factor, mode: str, align_corners,
               recompute_scale_factor, antialias) -> tuple | None:
    """What a call's checks and taps depend on: the input's shape, dtype and layout and the
    arguments, each of a type whose equal values mean the same call (sizes ints, scale
    factors ints or floats, flags None or bools); None where the call takes every step."""
    if not isinstance(input, Tensor) or input._dtype not in (E.float32, E.float64) or \
            mode.__class__ is not str or not plain_call(input, graph=True):
        return None
    for v, kinds in ((size, (int,)), (scale_factor, (int, float))):
        if v is not None and v.__class__ not in kinds and not (
                v.__class__ is tuple and all(e.__class__ in kinds for e in v)):
            return None
    for f in (align_corners, recompute_scale_factor, antialias):
        if f is not None and f.__class__ is not bool:
            return None
    layout = _layout_of(input)
    return None if layout is None else (input._shape, input._dtype, layout, size, scale_factor,
                                        mode, align_corners, recompute_scale_factor, antialias)


def _plan(input: Tensor, out: tuple, scales: tuple, mode: str, align_corners, antialias,
          node: str, shown: dict):
    """The passes `_nearest` / `_resample_float` give `_NativePasses` for this checked call,
    with its node's name and what it shows; False where they would not run them (a layout
    other than row-major, no dim resized, the area mode)."""
    if mode == "area" or not row_major_only(input):
        return False
    if mode in ("nearest", "nearest-exact"):
        resized = [i for i in range(len(out)) if out[i] != input.shape[2 + i]]
        taps = {}
        for i in resized:
            idx = _nearest_index(input.shape[2 + i], out[i], scales[i], mode == "nearest-exact")
            taps[i] = (idx[:, None], np.ones((out[i], 1)), None)
        linear = False
    else:
        t = np.float64 if input.dtype == E.float64 else np.float32
        resized = [i for i in reversed(range(len(out))) if out[i] != input.shape[2 + i]
                   or (mode == "bicubic" and not antialias)]
        taps = {i: _dim_taps(input.shape[2 + i], out[i], scales[i], mode, align_corners,
                             antialias, t) for i in resized}
        linear = mode in _NEEDS and not antialias
    return bool(resized) and (resized, taps, linear, node, shown)


def _planned(input: Tensor, plan: tuple) -> Tensor:
    resized, taps, linear, node, shown = plan
    if not (input._requires_grad and E.is_grad_enabled()):  # (no node: the passes alone)
        return E.from_numpy(_passes(input.detach().numpy(), False, resized, taps, linear))
    return shows(_NativePasses.apply(input, resized, taps, linear), node, **shown)


# (the names of the per-dim scale factors PyTorch's upsampling nodes show)
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated in PyTorch for `interpolate`, which it calls (warning at the user's line)."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _deprecated(name: str) -> None:
    warn_at_user(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                 "instead.")


# --- arguments ------------------------------------------------------------------------


def _output_size(input: Tensor, nd: int, size, scale_factor, recompute, mode: str):
    """(output sizes, per-dim scale factors or None), checked in PyTorch's order."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, "
                                "int] or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * nd
        scales = [None] * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions,"
                    f" but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * nd
        out = [math.floor(float(spatial[i]) * scales[i]) for i in range(nd)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute or mode == "area":
        scales = [None] * nd
    return tuple(out), tuple(scales)


def _is_integer(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) or \
        isinstance(v, Tensor) and not v.dtype.is_floating_point and v.dim() == 0


def _check_sizes(spatial: tuple, out: tuple) -> None:
    if all(s > 0 for s in spatial) and all(o > 0 for o in out):
        return
    names = "DHW"[3 - len(out):]
    ins = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
    outs = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
    joint = " and " if len(out) == 1 else " "
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins})"
                       f"{joint}output ({outs})")


def _check_dtype(input: Tensor, mode: str, antialias: bool) -> None:
    """PyTorch's NotImplementedError for the dtypes its kernels lack (named after the
    kernel that refuses it)."""
    name = input.dtype.name
    if name in _FLOATS and not (antialias and name != "float32" and name != "float64"):
        return
    if name == "uint8" and mode in ("nearest", "nearest-exact", *_FILTERED):
        return
    if antialias:
        kernel = "compute_index_ranges_weights"
    elif input.dim() == 4 and mode in ("nearest", "nearest-exact", "bilinear") and \
            input.is_contiguous(memory_format=E.channels_last):
        kernel = f"upsample_{'nearest' if mode != 'bilinear' else 'bilinear'}2d_channels_last"
    else:
        kernel = "compute_indices_weights_" + {"bicubic": "cubic", "nearest-exact": "nearest",
                                               "nearest": "nearest"}.get(mode, "linear")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input.dtype)}\'')


def _source_index(ratio, o: np.ndarray, align_corners: bool, t) -> np.ndarray:
    """ATen's source position of each output `o`: ratio * o, or ratio * (o + 0.5) - 0.5 as
    one fused multiply-add (its kernels are compiled with contraction: rounded once)."""
    if align_corners:
        return ratio * o
    return fma(np.full(o.shape, ratio, t), o + t(0.5), np.full(o.shape, t(-0.5), t)).astype(t)


def _scale(n_in: int, n_out: int, scale, align_corners: bool, t):
    """ATen's source-to-output ratio in precision `t`."""
    if align_corners:
        return t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    return t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)


# --- nearest ----------------------------------------------------------------------------


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    o = np.arange(n_out)
    if not exact:
        if n_out == n_in:
            return o
        if n_out == 2 * n_in:
            return o >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    pos = (o.astype(np.float32) + np.float32(0.5)) * s if exact else o.astype(np.float32) * s
    return np.minimum(np.floor(pos).astype(np.int64), n_in - 1)


def _nearest(input: Tensor, out: tuple, scales: tuple, exact: bool) -> Tensor:
    """Each resized dim gathered at its nearest indices (in C as a pass of one tap of
    weight 1, exact: the same bits, its gradient summed in output order as the gather's)."""
    resized = [i for i in range(len(out)) if out[i] != input.shape[2 + i]]
    if resized and _native_usable(input):
        taps = {}
        for i in resized:
            idx = _nearest_index(input.shape[2 + i], out[i], scales[i], exact)
            taps[i] = (idx[:, None], np.ones((out[i], 1)), None)
        return _NativePasses.apply(input, resized, taps, False)
    x = input
    for i, n in enumerate(out):
        idx = _nearest_index(input.shape[2 + i], n, scales[i], exact)
        x = x.index_select(2 + i, E.tensor(idx, dtype=E.int64))
    return x


# --- taps -------------------------------------------------------------------------------
# A dim's taps: (first input position of each output, (out, K) weights); output o reads
# positions index[o] + 0 .. K-1 (clamped to the dim, bicubic's border repeat) or, for
# antialiasing, `index[o] + j` for its first `count[o]` taps.


def _linear_taps(n_in: int, n_out: int, scale, align_corners: bool, t):
    """ATen's two taps of linear interpolation: (i0, i1, lambda0, lambda1) in precision t."""
    ratio = _scale(n_in, n_out, scale, align_corners, t)
    o = np.arange(n_out).astype(t)
    if n_out == n_in:
        i0 = np.arange(n_in)
        return i0, i0, np.ones(n_out, t), np.zeros(n_out, t)
    src = _source_index(ratio, o, align_corners, t)
    src = src if align_corners else np.maximum(src, t(0))
    # NOTE: ATen floors the index with `floorf`, so in float32 even for a double input: a
    # double just below an integer rounds up to it first (its lambda then clamps to 0)
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    lam1 = np.clip(src - i0.astype(t), t(0), t(1)).astype(t)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (t(1) - lam1).astype(t), lam1


def _keys_near(v, a, t):
    """Keys' cubic kernel for |v| <= 1 (A = a), in precision t."""
    return ((a + t(2)) * v - (a + t(3))) * v * v + t(1)


def _keys_far(v, a, t):
    """Keys' cubic kernel for 1 < |v| < 2."""
    return ((a * v - t(5) * a) * v + t(8) * a) * v - t(4) * a


def _cubic_weights(x, t, a: float):
    """Keys' cubic-convolution weights of the taps at -1, 0, 1, 2 for offsets x."""
    a = t(a)
    return (_keys_far(x + t(1), a, t), _keys_near(x, a, t), _keys_near(t(1) - x, a, t),
            _keys_far(t(1) - x + t(1), a, t))


def _cubic_taps(n_in: int, n_out: int, scale, align_corners: bool, t):
    """Four taps per output around ATen's cubic source index: (indices, weights)."""
    ratio = _scale(n_in, n_out, scale, align_corners, t)
    o = np.arange(n_out).astype(t)
    src = _source_index(ratio, o, align_corners, t)
    i0 = np.floor(src.astype(np.float32)).astype(np.int64)  # (ATen's floorf, as above)
    lam = np.clip(src - i0.astype(t), t(0), t(1)).astype(t)
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, np.stack(_cubic_weights(lam, t, -0.75), axis=1).astype(t)


def _triangle(x: float) -> float:
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _keys_half(x: float) -> float:
    """Keys' kernel with A = -0.5 (antialiased bicubic's filter)."""
    x = abs(x)
    if x < 1.0:
        return _keys_near(x, -0.5, float)
    return _keys_far(x, -0.5, float) if x < 2.0 else 0.0


def _lanczos3(x: float) -> float:
    """The Lanczos-3 window: sinc(x) * sinc(x / 3) on [-3, 3) (PIL's, as ATen's)."""
    return _sinc(x) * _sinc(x / 3.0) if -3.0 <= x < 3.0 else 0.0


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


# mode -> (filter, its support's width in input positions)
_FILTERS = {"bilinear": (_triangle, 2), "bicubic": (_keys_half, 4), "lanczos": (_lanczos3, 6)}


def _filter_taps(n_in: int, n_out: int, scale, align_corners: bool, mode: str,
                 antialias: bool):
    """The filter's taps as ATen lays them out for antialiasing (and for uint8 bilinear):
    (indices, weights, valid) of shape (out, K), in float64, each row normalised."""
    filt, size = _FILTERS[mode]
    ratio = float(_scale(n_in, n_out, scale, align_corners, np.float64))
    support = size * 0.5 * ratio if antialias and ratio >= 1.0 else size * 0.5
    widest = int(math.ceil(support)) * 2 + 1 if antialias else size
    invscale = 1.0 / ratio if antialias and ratio >= 1.0 else 1.0
    delta = 0.5 if align_corners and not antialias else 0.0
    idx = np.zeros((n_out, widest), np.int64)
    w = np.zeros((n_out, widest))
    counts = np.zeros(n_out, np.int64)  # taps read (a zero weight still reads: NaN * 0)
    for o in range(n_out):
        center = ratio * (o + 0.5 - delta)
        lo = max(int(center - support + 0.5 + delta), 0)
        count = min(max(min(int(center + support + 0.5 + delta), n_in) - lo, 0), widest)
        taps = [filt((j + lo - center + 0.5 - delta) * invscale) for j in range(count)]
        total = 0.0
        for v in taps:
            total += v
        idx[o] = np.minimum(lo + np.arange(widest), n_in - 1)
        w[o, :count] = [v / total for v in taps] if total != 0.0 else taps
        counts[o] = count
    return idx, w, np.arange(widest) < counts[:, None]


def _dim_taps(n_in: int, n_out: int, scale, mode: str, align_corners: bool,
              antialias: bool, t):
    """(indices, weights in precision t, valid mask or None) of one resized dim."""
    if antialias:
        idx, w, valid = _filter_taps(n_in, n_out, scale, align_corners, mode, True)
        return idx, w.astype(t), None if valid.all() else valid
    if mode == "bicubic":
        idx, w = _cubic_taps(n_in, n_out, scale, align_corners, t)
        return idx, w, None
    i0, i1, l0, l1 = _linear_taps(n_in, n_out, scale, align_corners, t)
    return np.stack([i0, i1], 1), np.stack([l0, l1], 1), None


# --- floating resampling ----------------------------------------------------------------


def _resample_float(input: Tensor, out: tuple, scales: tuple, mode: str,
                    align_corners: bool, antialias: bool) -> Tensor:
    """One pass per resized dim, last dim first; half types in float32, rounded once."""
    low = input.dtype in (E.float16, E.bfloat16)
    x = input.float() if low else input
    t = np.float64 if x.dtype == E.float64 else np.float32
    resized = [i for i in reversed(range(len(out))) if out[i] != input.shape[2 + i]
               or (mode == "bicubic" and not antialias)]  # (ATen skips an identity dim)
    taps = {i: _dim_taps(input.shape[2 + i], out[i], scales[i], mode, align_corners,
                         antialias, t) for i in resized}
    linear = mode in _NEEDS and not antialias
    if resized and _native_usable(x):
        x = _NativePasses.apply(x, resized, taps, linear)
        resized = []
    if linear and resized:
        if x.requires_grad and E.is_grad_enabled() and not transform_active() and \
                x.device.type == "cpu":
            x = _LinearPasses.apply(x, resized, taps)
        else:
            x = _linear_exact(x, resized, taps)
    for i in resized if not linear else ():
        idx, w, valid = taps[i]
        if _finite(x):
            x = _taps_product(x, 2 + i, idx, w, valid, own=x is not input)
        else:
            x = _taps_sum(x, 2 + i, idx, w, valid)
    if x is input:
        x = input.clone()
    return x.to(input.dtype) if low else x


def _linear_exact(x: Tensor, resized: list, taps: dict) -> Tensor:
    """The linear modes' values as ATen's kernels round them: bilinear's four taps in one
    step where both dims are resized, else a pass of two taps per resized dim."""
    if len(resized) == 2 and x.dim() == 4:
        return _four_taps(x, taps[0], taps[1])
    for i in resized:
        idx, w, _ = taps[i]
        x = _two_taps(x, 2 + i, idx, w)
    return x


class _LinearPasses(Function):
    """The linear modes' exact values (`_linear_exact`, no graph) with the gradient of one
    matrix product per resized dim, transposed (ATen's backward adds each output's
    gradient into its taps in an order of its own too): through the taps' gathers the
    backward took 4x as long. A gradient that is not finite takes the gathers' VJP, so it
    reaches only the inputs its taps read."""

    @staticmethod
    def forward(x, resized, taps):
        with E.no_grad():
            return _linear_exact(x.detach(), resized, taps)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.resized, ctx.taps = inputs
        ctx.shape, ctx.dtype = x.shape, x.dtype

    @staticmethod
    def backward(ctx, g):
        if not _finite(g):  # (linear in x: the VJP at zeros is the VJP; nothing is saved)
            with E.enable_grad():
                x = E.zeros(ctx.shape, dtype=ctx.dtype, requires_grad=True)
                (gx,) = E.autograd.grad(_linear_exact(x, ctx.resized, ctx.taps), x, g)
            return gx, None, None
        for i in reversed(ctx.resized):
            idx, w, valid = ctx.taps[i]
            g = _matrix_pass(g, 2 + i, _taps_matrix(ctx.shape[2 + i], idx, w, valid).T)
        return g, None, None


def _native_usable(x: Tensor) -> bool:
    """Whether the passes can run in C (csrc/resample.c): float32 / float64 values on the
    CPU, readable (no transform), with native kernels on."""
    return x.device.type == "cpu" and x.dtype in (E.float32, E.float64) and \
        not transform_active() and _native.library() is not None


class _NativePasses(Function):
    """The passes in C: the bits of the NumPy path's exact sums (`_linear_exact` for the
    linear modes, `_taps_sum` for the others), whatever the values. The gradient is each
    pass's scatter-add in a fixed order (any thread count, the same bits); with
    `create_graph` it is the reference path's VJP, so it is differentiable again."""

    @staticmethod
    def forward(x, resized, taps, linear):
        return E.from_numpy(_passes(x.detach().numpy(), _channels_last(x), resized, taps,
                                    linear))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.resized, ctx.taps, ctx.linear = inputs
        ctx.shape, ctx.dtype = x.shape, x.dtype

    @staticmethod
    def backward(ctx, g):
        lib = _native.library()
        if E.is_grad_enabled() or lib is None:  # (create_graph: a differentiable VJP)
            with E.enable_grad():
                x = E.zeros(ctx.shape, dtype=ctx.dtype, requires_grad=True)
                y = _linear_exact(x, ctx.resized, ctx.taps) if ctx.linear else \
                    _taps_sums(x, ctx.resized, ctx.taps)
                (gx,) = E.autograd.grad(y, x, g, create_graph=True)
            return gx, None, None, None
        a, at, back = _native.spatial_last(g.detach().numpy(), _channels_last(g))
        for i in reversed(ctx.resized):
            a = _native.resample_pass_backward(lib, a, at + i, ctx.shape[2 + i],
                                               ctx.taps[i])
        return E.from_numpy(a if back is None else a.transpose(back)), None, None, None


def _passes(a: np.ndarray, cl: bool, resized: list, taps: dict, linear: bool) -> np.ndarray:
    """`_NativePasses`'s forward on the input's array (`cl`: laid out channels-last)."""
    lib = _native.library()
    a, at, back = _native.spatial_last(a, cl)
    if linear and len(resized) == 2 and a.ndim == 4:
        a = _native.resample_bilinear(lib, a, taps[0], taps[1], cl)
    else:
        for i in resized:
            a = _native.resample_pass(lib, a, at + i, taps[i], linear)
    return a if back is None else a.transpose(back)


def _channels_last(x: Tensor) -> bool:
    """Whether `x` is laid out channels-last (and not also contiguous): then the passes
    run over the (n, *spatial, c) order its memory has."""
    fmt = {4: E.channels_last, 5: E.channels_last_3d}.get(x.dim())
    return fmt is not None and not x.is_contiguous() and x.is_contiguous(memory_format=fmt)


def _taps_sums(x: Tensor, resized: list, taps: dict) -> Tensor:
    for i in resized:
        x = _taps_sum(x, 2 + i, *taps[i])
    return x


def _finite(x: Tensor) -> bool:
    """Whether every value of `x` is finite: then a product with the taps' weight matrix
    gives the tap sums (its other weights are exact zeros; only the order of the additions,
    so the last bits, differ), at BLAS speed forward and backward."""
    if x.device.type != "cpu" or transform_active():  # (values not readable: vmap, jvp)
        return False
    a = x.detach().numpy()
    return bool(np.isfinite(a.min()) and np.isfinite(a.max())) if a.size else True


def _taps_matrix(n_in: int, idx: np.ndarray, w: np.ndarray, valid) -> np.ndarray:
    """The (out, in) weights the taps make."""
    m = np.zeros((idx.shape[0], n_in), w.dtype)
    rows = np.repeat(np.arange(idx.shape[0]), idx.shape[1])
    np.add.at(m, (rows, idx.reshape(-1)), np.where(valid, w, 0).reshape(-1)
              if valid is not None else w.reshape(-1))
    return m


def _matrix_pass(x: Tensor, dim: int, m: np.ndarray, own: bool = True) -> Tensor:
    """x's `dim` times m^T (m: (out, x.shape[dim])), the other dims folded into the rows: a
    copy when `dim` is not last, and a clone when it is and `x` is not `own` (the caller's
    tensor), so nothing of the input is saved, as PyTorch's upsampling saves nothing."""
    moved = x.movedim(dim, -1)
    if dim == x.dim() - 1 and not own:
        moved = moved.clone()  # (a view of the caller's tensor, which the product would save)
    lead = moved.shape[:-1]
    y = moved.reshape(math.prod(lead), m.shape[1]).mm(E.tensor(m.T.copy(), dtype=x.dtype))
    return y.view(*lead, m.shape[0]).movedim(-1, dim)


def _taps_product(x: Tensor, dim: int, idx: np.ndarray, w: np.ndarray, valid,
                  own: bool = True) -> Tensor:
    """The pass as one matrix product with the (out, in) weights the taps make."""
    return _matrix_pass(x, dim, _taps_matrix(x.shape[dim], idx, w, valid), own)


def _two_taps(x: Tensor, dim: int, idx: np.ndarray, w: np.ndarray) -> Tensor:
    """A linear pass as ATen's kernel computes each output, w0 t0 + w1 t1 contracted to
    fma(w0, t0, w1 t1) (one rounding fewer than two products and a sum): the same bits."""
    trail = (1,) * (x.dim() - 1 - dim)
    t0, t1 = (x.index_select(dim, E.tensor(idx[:, k], dtype=E.int64)) for k in (0, 1))
    w0, w1 = (E.tensor(w[:, k], dtype=x.dtype).reshape((-1,) + trail) for k in (0, 1))
    return E.addcmul(t1 * w1, w0, t0)


def _four_taps(x: Tensor, h_taps, w_taps) -> Tensor:
    """Bilinear in one step as ATen's 2-d kernel computes it: the four weights h_i w_j, and
    the taps added fma(w00, t00, w01 t01), then + w10 t10, + w11 t11, each fused (the same
    bits; a pass per dim would round differently)."""
    (hi, hw, _), (wi, ww, _) = h_taps, w_taps
    rows = [x.index_select(2, E.tensor(hi[:, k], dtype=E.int64)) for k in (0, 1)]
    t = [[r.index_select(3, E.tensor(wi[:, k], dtype=E.int64)) for k in (0, 1)] for r in rows]
    w = [[E.tensor(hw[:, a][:, None] * ww[:, b][None, :], dtype=x.dtype) for b in (0, 1)]
         for a in (0, 1)]
    acc = E.addcmul(t[0][1] * w[0][1], w[0][0], t[0][0])
    acc = E.addcmul(acc, w[1][0], t[1][0])
    return E.addcmul(acc, w[1][1], t[1][1])


def _taps_sum(x: Tensor, dim: int, idx: np.ndarray, w: np.ndarray, valid) -> Tensor:
    """sum_k w[:, k] * x.index_select(dim, idx[:, k]), the taps added in order; a padding
    tap (not `valid`) adds nothing, not even a NaN times zero. (The dim is moved to the
    front: gathers of whole rows, and their gradients' scatters, are a few wide adds.)"""
    x = x.movedim(dim, 0)
    trail = (1,) * (x.dim() - 1)
    acc = None
    for k in range(idx.shape[1]):
        tap = x.index_select(0, E.tensor(idx[:, k], dtype=E.int64))
        term = tap * E.tensor(w[:, k], dtype=x.dtype).reshape((-1,) + trail)
        if valid is not None and not valid[:, k].all():
            keep = E.tensor(valid[:, k]).reshape((-1,) + trail)
            term = E.where(keep, term, E.zeros((), dtype=x.dtype))
        acc = term if acc is None else acc + term
    return acc.movedim(0, dim)


# --- uint8 ------------------------------------------------------------------------------


def _resample_uint8(input: Tensor, out: tuple, scales: tuple, mode: str,
                    align_corners: bool, antialias: bool) -> Tensor:
    """ATen's uint8 resampling: int16 fixed-point weights, each pass rounded and clamped."""
    a = input.numpy()
    for i in reversed(range(len(out))):
        n_in = a.shape[2 + i]
        if out[i] == n_in:
            continue
        if mode == "bicubic" and not antialias:
            idx, w = _merge_repeats(*_cubic_taps(n_in, out[i], scales[i], align_corners,
                                                 np.float64))
        else:
            idx, w, _ = _filter_taps(n_in, out[i], scales[i], align_corners, mode, antialias)
        a = _fixed_point_pass(a, 2 + i, idx, w)
    res = E.from_numpy(np.ascontiguousarray(a))
    return keep_channels_last(input, res, "")  # (integer: no node to name)


def _merge_repeats(idx: np.ndarray, w: np.ndarray):
    """Taps that read one position (bicubic's repeated border) as one tap: their weights
    summed before the int16 rounding, as ATen's uint8 kernel does."""
    w = w.copy()
    rows = np.arange(len(idx))
    first = np.zeros(len(idx), np.int64)
    for k in range(1, idx.shape[1]):
        same = idx[:, k] == idx[rows, first]
        w[rows[same], first[same]] += w[same, k]
        w[same, k] = 0.0
        first = np.where(same, first, k)
    return idx, w


def _fixed_point_pass(a: np.ndarray, axis: int, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """One dim through int16 weights with ATen's precision: the most fractional bits that
    keep twice the largest weight below 2^15; sums rounded half up, then clamped."""
    top = float(w.max()) if w.size else 0.0
    bits = 0
    for bits in range(22):
        if int(0.5 + top * (1 << (bits + 1))) >= 1 << 15:
            break
    scaled = w * (1 << bits)
    wi = np.where(w < 0, (scaled - 0.5).astype(np.int64), (scaled + 0.5).astype(np.int64))
    src = np.moveaxis(a, axis, -1).astype(np.int64)
    acc = np.full(src.shape[:-1] + (idx.shape[0],), 1 << (bits - 1), np.int64)
    for k in range(idx.shape[1]):
        acc += src[..., idx[:, k]] * wi[:, k]
    return np.moveaxis(np.clip(acc >> bits, 0, 255).astype(np.uint8), -1, axis)
