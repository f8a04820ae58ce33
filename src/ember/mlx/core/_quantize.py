"""MLX's quantization: `quantize`, `dequantize`, `quantized_matmul`, `gather_qmm`, and
`qqmm` / `gather_qqmm` (x quantized too; see the section at the end for what MLX's CPU
build computes of those).

Packed weights are uint32 rows whose bits are one little-endian stream: element `i` of
a row sits at bits `[i * bits, (i + 1) * bits)`. That holds for every width MLX packs,
the powers of two (1, 2, 4, 8 bits, `32 / bits` per word) and the odd ones (3, 5, 6
bits, whose packs of 8, 8 and 4 elements span 3, 5 and 3 bytes).

`quantize` computes in NumPy, operation by operation in MLX's order and float types
(its CPU kernel for "affine", its op graph for the floating-point modes), so packed
words, scales and biases are MLX's bit for bit; it has no derivative, as in MLX. Two
rules of the 0.32.4 wheel differ from the 0.32.2 source and were read off the wheel:
1-bit groups use the plain min-max grid, and "mxfp*" scales round amax / max value up
to a power of two (not to the nearest).
`dequantize` and `quantized_matmul` are composed from `mx` ops, so they get MLX's dtype
rules and ember's derivatives: `quantized_matmul` is differentiable in `x` (and in the
affine scales and biases), as MLX's is.

Modes: "affine" (scale and bias per group, 1-8 bits but 7), and the floating-point
"mxfp4" (e2m1 values, e8m0 power-of-two scales, groups of 32), "mxfp8" (e4m3 values,
e8m0 scales) and "nvfp4" (e2m1 values, e4m3 scales, groups of 16).
"""

from __future__ import annotations

import numpy as np

import ember as E

from ..._core.dispatch import transform_active
from ..._core.primitive import defbatch
from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, array_from_numpy, numpy_of
from ._shapes import broadcast_shapes
from ._structured_mm import gather_batches, index_shape

# mode -> (default group size, default bits)
_MODES = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}
_AFFINE_BITS = (1, 2, 3, 4, 5, 6, 8)

# e2m1 values by their 4-bit code (sign in bit 3)
_FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                 -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], np.float32)


def _fp8_table() -> np.ndarray:
    """e4m3 values by their byte, decoded as MLX's CPU does: the 7 low bits shifted into
    a float16's exponent and mantissa, times 256; 0x7f and 0xff read NaN (the 0.32.4
    wheel's rule: the 0.32.2 source read 480 there)."""
    b = np.arange(256, dtype=np.uint16)
    mag = ((b & 127) << 7).view(np.float16).astype(np.float32) * np.float32(256)
    mag[b & 127 == 127] = np.nan
    return np.where(b & 128, -mag, mag).astype(np.float32)


_FP8 = _fp8_table()


# -- helpers ---------------------------------------------------------------------------------

def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def _shape(s) -> str:
    """A shape as MLX's messages print it: `(8,64)`."""
    return "(" + ",".join(str(d) for d in s) + ")"


def _params(mode: str, group_size: int | None, bits: int | None, tag: str) -> tuple:
    if mode not in _MODES:
        raise ValueError(f"[{tag}] Invalid quantization mode '{mode}'.")
    gs, b = _MODES[mode]
    return (gs if group_size is None else group_size), (b if bits is None else bits)


def _pack_geometry(bits: int) -> tuple:
    """(elements per pack, bytes per pack): a pack is the run of elements whose bits fill
    whole bytes."""
    per = 8 if bits in (3, 5) else 4 if bits == 6 else 32 // bits
    return per, per * bits // 8


def _pack(q: np.ndarray, bits: int) -> np.ndarray:
    """Codes `q` (..., K) packed into uint32 words (..., K * bits / 32), bit stream order."""
    per, nbytes = _pack_geometry(bits)
    q = q.astype(np.uint64).reshape(*q.shape[:-1], -1, per)
    packs = (q << (np.arange(per, dtype=np.uint64) * np.uint64(bits))).sum(-1, dtype=np.uint64)
    shifts = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
    raw = ((packs[..., None] >> shifts) & np.uint64(0xFF)).astype(np.uint8)
    raw = np.ascontiguousarray(raw.reshape(*q.shape[:-2], -1))
    return raw.view("<u4")


def _unpack(w: array, bits: int) -> array:
    """The codes (uint32, (..., K)) held in packed words `w` (uint32, (..., K*bits/32))."""
    per, nbytes = _pack_geometry(bits)
    wide = D.uint64 if nbytes > 4 else D.uint32  # (5-bit packs are 40 bits wide)
    raw = O.right_shift(O.expand_dims(w, -1), array(np.arange(0, 32, 8, dtype=np.uint32)))
    raw = O.bitwise_and(raw, array(0xFF, D.uint32)).astype(wide)
    raw = O.reshape(raw, (*w.shape[:-1], -1, nbytes))
    packs = O.sum(O.left_shift(raw, array(np.arange(0, 8 * nbytes, 8), wide)), -1)
    codes = O.right_shift(O.expand_dims(packs, -1), array(np.arange(0, per * bits, bits), wide))
    codes = O.bitwise_and(codes, array((1 << bits) - 1, wide))
    return O.reshape(codes, (*w.shape[:-1], -1)).astype(D.uint32)


# -- fp8 / fp4 encoders (NumPy, MLX's CPU bit tricks) ----------------------------------------

def _to_fp8(x: np.ndarray) -> np.ndarray:
    """float -> e4m3 byte as MLX's CPU `ToFP8`: round to nearest even, saturate to 448 from
    464 up (infinities and NaN included)."""
    f = np.asarray(x, np.float32).view(np.uint32)
    sign = f & np.uint32(0x80000000)
    f = f ^ sign
    denorm = np.uint32(141 << 23)
    low_bits = (f.view(np.float32) + denorm.view(np.float32)).view(np.uint32)
    low = (low_bits - denorm).astype(np.uint8)
    odd = (f >> np.uint32(20)) & np.uint32(1)
    rebias = np.uint32((((7 - 127) << 23) + 0x7FFFF) & 0xFFFFFFFF)  # (wraps, as in C)
    high = ((f + rebias + odd) >> np.uint32(20)).astype(np.uint8)
    out = np.where(f < np.uint32(121 << 23), low, high)
    out = np.where(f >= np.uint32(543 << 21), np.uint8(0x7E), out)
    return out | (sign >> np.uint32(24)).astype(np.uint8)


def _to_fp4(wq: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """The e2m1 code nearest each value (ties to the lower code), as MLX's `argmin` over
    `abs(w - lut)` computed in `wq`'s promoted type."""
    dt = np.result_type(wq.dtype, lut.dtype)
    diff = np.abs(wq[..., None].astype(dt) - lut.astype(dt))
    return np.argmin(diff, -1).astype(np.uint64)


# -- quantize --------------------------------------------------------------------------------

def _affine_quantize(a: np.ndarray, group_size: int, bits: int) -> tuple:
    """MLX's CPU kernel: per group, the edge of larger magnitude is hit exactly (scale is
    edge / round(edge / scale) when that is non-zero), codes round half to even; with one
    bit, scale = max - min and bias = min."""
    g = a.astype(np.float32).reshape(*a.shape[:-1], -1, group_size)
    n_bins = np.float32((1 << bits) - 1)
    nan = np.isnan(g)  # (std::max / std::min skip NaNs after the first element)
    w_max = np.where(nan, -np.inf, g).max(-1).astype(np.float32)
    w_min = np.where(nan, np.inf, g).min(-1).astype(np.float32)
    scale = np.maximum((w_max - w_min) / n_bins, np.float32(1e-7))
    if bits == 1:  # (one bit: the plain min-max grid)
        bias = w_min
    else:
        mask = np.abs(w_min) > np.abs(w_max)
        scale = np.where(mask, scale, -scale)
        edge = np.where(mask, w_min, w_max)
        with np.errstate(divide="ignore", invalid="ignore"):
            q0 = np.rint(edge / scale)
            scale = np.where(q0 != 0, edge / q0, scale).astype(np.float32)
        bias = np.where(q0 != 0, edge, np.float32(0)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        q = np.rint((g - bias[..., None]) / scale[..., None])
        q = np.minimum(np.maximum(q, np.float32(0)), n_bins)
    packed = _pack(np.nan_to_num(q).reshape(a.shape), bits)
    return packed, scale.astype(a.dtype), bias.astype(a.dtype)


def _fp_quantize(a: np.ndarray, group_size: int, bits: int, global_scale) -> tuple:
    """MLX's op graph for the floating-point modes, each op in the type MLX computes it in."""
    t = a.dtype.type
    wq = a.reshape(-1, group_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        scales = (np.abs(wq).max(-1, keepdims=True) / t(6.0 if bits == 4 else 448.0)).astype(t)
        if group_size == 16:  # nvfp4: e4m3 scales, optionally over a global scale
            enc = np.float32(1.0)
            if global_scale is not None:
                enc = np.float32(448.0 * 6.0) / numpy_of(global_scale).astype(np.float32)
            codes = _to_fp8((scales.astype(np.float32) * enc).astype(np.float32))
            wq = (wq / _FP8[codes].astype(t)).astype(t).astype(np.float32) * enc
            scales = codes
        else:  # mx modes: e8m0 scales, amax / max value rounded up to a power of two
            b = scales.astype(np.float32).view(np.uint32)
            expo = ((b >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int32)
            expo = expo + ((b & np.uint32(0x7FFFFF)) != 0) - 127
            expo = np.where(scales == 0, 0, expo)
            wq = (wq / np.power(t(2.0), expo.astype(t)).astype(t)).astype(t)
            scales = (expo + 127).astype(np.uint8)
    if bits == 4:
        packed = _pack(_to_fp4(wq, _FP4.astype(t)), 4)
    else:
        packed = np.ascontiguousarray(_to_fp8(wq)).view("<u4")
    lead = a.shape[:-1]
    return packed.reshape(*lead, -1), scales.reshape(*lead, -1)


def quantize(w, /, group_size: int | None = None, bits: int | None = None,
             mode: str = "affine", *, global_scale=None) -> list:
    """Quantize `w` along its last axis in groups: a list (as MLX's) [packed uint32
    weights, scales, biases] for "affine", [packed weights, uint8 scales] for the
    floating-point modes."""
    w = _arr(w)
    group_size, bits = _params(mode, group_size, bits, "quantize")
    if w.dtype.kind != "f":
        raise ValueError("[quantize] Only real floating types can be quantized "
                         f"but w has type {w.dtype.name}.")
    if w.ndim < 2:
        raise ValueError("[quantize] The matrix to be quantized must have at least 2 "
                         f"dimension but it has only {w.ndim}.")
    if w.shape[-1] % group_size != 0:
        raise ValueError("[quantize] The last dimension of the matrix needs to be divisible "
                         f"by the quantization group size {group_size}. However the "
                         f"provided  matrix has shape {_shape(w.shape)}")
    _check_global_scale("quantize", mode, global_scale)
    a = numpy_of(w)
    if mode == "affine":
        if group_size not in (32, 64, 128):
            raise ValueError(f"[quantize] The requested group size {group_size} is not "
                             "supported. The supported group sizes are 32, 64, and 128.")
        if bits not in _AFFINE_BITS:
            raise ValueError(f"[quantize] The requested number of bits {bits} is not "
                             "supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8.")
        packed, scales, biases = _affine_quantize(a, group_size, bits)
        return [array_from_numpy(packed, D.uint32), array_from_numpy(scales, w.dtype),
                array_from_numpy(biases, w.dtype)]
    _check_fp_params("quantize", mode, group_size, bits)
    packed, scales = _fp_quantize(a, group_size, bits, global_scale)
    return [array_from_numpy(packed, D.uint32), array_from_numpy(scales, D.uint8)]


# -- validation (MLX's checks, in its order) -------------------------------------------------

# what MLX raises where its C++ reads the last dimension of a 0-d array
_OUT_OF_RANGE = "SmallVector out of range."
_SUM_ELEMENTS = 1 << 22  # the most (..., M, N, k) products a 16-bit quantized product holds


def _check_fp_params(tag: str, mode: str, group_size: int, bits: int) -> None:
    want_gs = 16 if mode == "nvfp4" else 32
    want_bits = 8 if mode == "mxfp8" else 4
    if group_size != want_gs:
        raise ValueError(f"[{tag}] {mode} quantization requires group size {want_gs} "
                         f"but got {group_size}.")
    if bits != want_bits:
        raise ValueError(f"[{tag}] {mode} quantization requires bits to be {want_bits} "
                         f"but got {bits}.")


def _check_global_scale(tag: str, mode: str, global_scale) -> None:
    if global_scale is None:
        return
    if mode != "nvfp4":
        raise ValueError(f"[{tag}] Global scale is only supported for 'nvfp4' "
                         "quantization mode.")
    g = _arr(global_scale)
    if g.size != 1:
        raise ValueError(f"[{tag}] Global scale must be a scalar but got shape "
                         f"{_shape(g.shape)}.")
    if g.dtype is not D.float32:
        raise ValueError(f"[{tag}] Global scale must have dtype float32 but got "
                         f"{g.dtype.name}.")


def _mode_and_type(tag: str, scales: array, biases, out_type, mode: str) -> D.Dtype:
    """MLX's `validate_mode_with_type`: the output dtype, after checking the mode, the
    scales' and biases' types and whether biases belong to the mode."""
    _params(mode, None, None, tag)
    if out_type is not None and out_type.kind != "f":
        raise ValueError(f"[{tag}] Only real floating types are supported but "
                         f"output dtype == {out_type.name}.")
    if mode == "affine":
        if biases is None:
            raise ValueError(f"[{tag}] Biases must be provided for affine quantization.")
        dt = D.promote_types(scales.dtype, biases.dtype)
        if dt.kind != "f":
            raise ValueError(f"[{tag}] Only real floating types are supported but "
                             f"scales.dtype() == {scales.dtype.name} and "
                             f"biases.dtype() == {biases.dtype.name}.")
        return out_type or dt
    if scales.dtype is not D.uint8:
        raise ValueError(f"[{tag}] Scale type must be uint8 but received type "
                         f"{scales.dtype.name}.")
    if biases is not None:
        raise ValueError(f"[{tag}] Biases must be null for quantization mode '{mode}'.")
    return out_type or D.bfloat16


def _check_quantized(tag: str, w: array, scales: array, biases, group_size: int,
                     bits: int) -> None:
    if w.dtype is not D.uint32:
        raise ValueError(f"[{tag}] The weight matrix should be uint32 but received "
                         f"{w.dtype.name}")
    if biases is not None and scales.shape != biases.shape:
        raise ValueError(f"[{tag}] Scales and biases should have the same shape. Received "
                         f"scales with shape {_shape(scales.shape)} and biases with "
                         f"{_shape(biases.shape)}")
    # (MLX reads a weight of fewer than 2 dimensions as a batch shape no scales match)
    if w.ndim < 2 or w.shape[:-2] != scales.shape[:w.ndim - 2]:
        raise ValueError(f"[{tag}] Weight and scales should have the same batch shape. "
                         f"Received weight with shape {_shape(w.shape)}, scales with "
                         f"{_shape(scales.shape)}.")
    if scales.ndim == 0:
        raise IndexError(_OUT_OF_RANGE)
    if w.shape[-1] * 32 // bits != scales.shape[-1] * group_size:
        raise ValueError(f"[{tag}] The shapes of the weight and scales are incompatible "
                         f"based on bits and group_size. w.shape() == {_shape(w.shape)} and "
                         f"scales.shape() == {_shape(scales.shape)} with "
                         f"group_size={group_size} and bits={bits}")


def _matmul_dims(tag: str, x: array, w: array, transpose: bool, group_size: int,
                 bits: int) -> int:
    """The output width, after checking `x`'s last axis against the unpacked `w`."""
    if x.ndim == 0:
        raise IndexError(_OUT_OF_RANGE)
    k = w.shape[-1] * 32 // bits
    inner, outer = (k, w.shape[-2]) if transpose else (w.shape[-2], k)
    if inner != x.shape[-1]:
        raise ValueError(f"[{tag}] Last dimension of first input with shape (..., "
                         f"{x.shape[-1]}) does not match the expanded quantized matrix "
                         f"({inner}, {outer}) computed from shape {_shape(w.shape)} with "
                         f"group_size={group_size}, bits={bits} and "
                         f"transpose={str(bool(transpose)).lower()}")
    return outer


# -- dequantize ------------------------------------------------------------------------------

def _affine_dequantize(w: array, scales: array, biases: array, group_size: int,
                       bits: int) -> array:
    """codes * scale + bias per group (a multiply, then an add, as MLX's CPU graph)."""
    codes = _unpack(w, bits)
    codes = O.reshape(codes, (*w.shape[:-1], -1, group_size))
    out = O.add(O.multiply(codes, O.expand_dims(scales, -1)), O.expand_dims(biases, -1))
    return O.reshape(out, (*w.shape[:-1], -1))


def _fp_dequantize(w: array, scales: array, group_size: int, bits: int, out_type: D.Dtype,
                   global_scale) -> array:
    """Table look-up of the e2m1 / e4m3 codes, times the group's decoded scale."""
    codes = _unpack(w, bits)
    table = _FP4 if bits == 4 else _FP8
    vals = O.take(array(table).astype(out_type), codes.astype(D.int32))
    vals = O.reshape(vals, (*w.shape[:-1], -1, group_size))
    if group_size == 16:
        s = O.take(array(_FP8).astype(out_type), scales.astype(D.int32))
        inv = array(1.0, out_type)
        if global_scale is not None:
            inv = O.divide_(_arr(global_scale), array(448.0 * 6.0, out_type))
        s = O.multiply(s, inv)
    else:
        s = O.power(array(2.0, out_type),
                    O.subtract(scales.astype(out_type), array(127, out_type)))
    out = O.multiply(vals, O.expand_dims(s, -1))
    return O.reshape(out, (*w.shape[:-1], -1))


def dequantize(w, /, scales, biases=None, group_size: int | None = None,
               bits: int | None = None, mode: str = "affine", global_scale=None,
               dtype: D.Dtype | None = None) -> array:
    """The float matrix packed in `w`, from its groups' scales (and biases for
    "affine"); in `dtype`, else the scales' and biases' type ("affine") or bfloat16."""
    w, scales = _arr(w), _arr(scales)
    biases = None if biases is None else _arr(biases)
    out_type = _mode_and_type("dequantize", scales, biases, dtype, mode)
    group_size, bits = _params(mode, group_size, bits, "dequantize")
    if bits <= 0:
        raise ValueError(f"[dequantize] Invalid value for bits: {bits}")
    if group_size <= 0:
        raise ValueError(f"[dequantize] Invalid value for group_size: {group_size}")
    if w.dtype is not D.uint32:
        raise ValueError("[dequantize] The matrix should be given as a uint32")
    if w.ndim < 2:
        raise ValueError("[dequantize] The matrix to be dequantized must have at least 2 "
                         f"dimension but it has only {w.ndim}.")
    _check_global_scale("dequantize", mode, global_scale)
    what = "scales and biases" if mode == "affine" else "scales"
    if mode != "affine":
        _check_fp_params("dequantize", mode, group_size, bits)
    others = [scales] if biases is None else [scales, biases]
    if any(o.ndim != w.ndim or o.shape[:-1] != w.shape[:-1] for o in others):
        raise ValueError(f"[dequantize] Shape of {what} does not match the matrix")
    if w.shape[-1] * 32 // bits != scales.shape[-1] * group_size:
        extra = (f" with group_size={group_size} and bits={bits}"
                 if mode == "affine" else "")
        raise ValueError(
            f"[dequantize] Shape of {what} does not match the matrix given the quantization "
            f"parameters. Provided matrix of shape {_shape(w.shape)} and "
            f"{what.replace(' and ', '/')} of shape {_shape(scales.shape)}{extra}.")
    if mode == "affine":
        return _affine_dequantize(w, scales, biases, group_size, bits).astype(out_type)
    return _fp_dequantize(w, scales, group_size, bits, out_type, global_scale)


# -- products --------------------------------------------------------------------------------

def _prepare(tag: str, x: array, w: array, scales: array, biases, transpose: bool,
             group_size, bits, mode: str) -> tuple:
    """Checks shared by the products; (x in the output type, dequantized w, group size, bits)."""
    dt = _mode_and_type(tag, scales, biases, None, mode)
    group_size, bits = _params(mode, group_size, bits, tag)
    _check_quantized(tag, w, scales, biases, group_size, bits)
    _matmul_dims(tag, x, w, transpose, group_size, bits)
    dt = D.promote_types(x.dtype, dt) if mode == "affine" else x.dtype
    if dt.kind != "f":
        raise ValueError(f"[{tag}] Only real floating types are supported but "
                         f"x.dtype() == {x.dtype.name}.")
    if mode == "affine":
        scales, biases = scales.astype(dt), biases.astype(dt)
    return x.astype(dt), scales, biases, group_size, bits, dt


def _product(x: array, w: array, transpose: bool, affine: bool) -> array:
    """`x @ w.T` (`x @ w` without `transpose`) of the dequantized `w`.

    NOTE: in float16 and bfloat16 MLX's CPU kernel keeps each dot product's running sum
    in that type, adding the rounded products one element after another; a float32
    matmul rounded once is off by many units of the 16-bit type. So these types take the
    (..., M, N, K) products and their sequential (cumulative) sum along K, which is MLX's
    result bit for bit. float32 keeps `matmul` (only the last bits differ), and so do the
    floating-point modes, whose 16-bit kernel sums in another, unmatched order."""
    if x.dtype.bits != 16 or not affine:
        return O.matmul(x, O.swapaxes(w, -1, -2) if transpose else w)
    rows = w if transpose else O.swapaxes(w, -1, -2)  # (..., N, K)
    xs, rs = O.expand_dims(x, -2), O.expand_dims(rows, -3)  # (..., M, 1, K), (..., 1, N, K)
    k = x.shape[-1]
    # (K taken in slices that keep the products under _SUM_ELEMENTS, the running sum
    # carried into each slice's cumulative sum as its first term)
    outer = int(np.prod(broadcast_shapes(xs.shape[:-1], rs.shape[:-1]), dtype=np.int64))
    step = max(1, _SUM_ELEMENTS // max(outer, 1))
    out = None
    for s in range(0, k, step):
        products = xs[..., s:s + step] * rs[..., s:s + step]
        if out is not None:
            products = O.concatenate([O.expand_dims(out, -1), products], axis=-1)
        out = O.cumsum(products, axis=-1)[..., -1]
    return O.squeeze(out, -2) if x.ndim == 1 else out


def quantized_matmul(x, w, /, scales, biases=None, transpose: bool = True,
                     group_size: int | None = None, bits: int | None = None,
                     mode: str = "affine") -> array:
    """`x @ dequantize(w).T` (or `x @ dequantize(w)` with `transpose=False`).

    NOTE: MLX's CPU kernel accumulates each dot product element by element; this one
    dequantizes and calls `matmul`, so sums differ from MLX's in the last bits."""
    x, w, scales = _arr(x), _arr(w), _arr(scales)
    biases = None if biases is None else _arr(biases)
    x, scales, biases, gs, bits, dt = _prepare("quantized_matmul", x, w, scales, biases,
                                               transpose, group_size, bits, mode)
    wf = dequantize(w, scales, biases, gs, bits, mode, dtype=dt)
    return _product(x, wf, transpose, mode == "affine")


def gather_qmm(x, w, /, scales, biases=None, lhs_indices=None, rhs_indices=None,
               transpose: bool = True, group_size: int | None = None,
               bits: int | None = None, mode: str = "affine", global_scale=None, *,
               sorted_indices: bool = False) -> array:
    """`quantized_matmul` of `x[lhs_indices]` with `w[rhs_indices]`, the indices running
    over the flattened batch dimensions (a missing index set takes its operand as is)."""
    x, w, scales = _arr(x), _arr(w), _arr(scales)
    biases = None if biases is None else _arr(biases)
    if lhs_indices is None and rhs_indices is None:
        return quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode)
    x, scales, biases, gs, bits, dt = _prepare("gather_qmm", x, w, scales, biases,
                                               transpose, group_size, bits, mode)
    broadcast_shapes(index_shape("[gather_qmm]", lhs_indices, x),
                     index_shape("[gather_qmm]", rhs_indices, w))
    w, scales = gather_batches(w, rhs_indices), gather_batches(scales, rhs_indices)
    biases = None if biases is None else gather_batches(biases, rhs_indices)
    wf = dequantize(w, scales, biases, gs, bits, mode, global_scale, dtype=dt)
    return _product(gather_batches(x, lhs_indices), wf, transpose, mode == "affine")


# -- qqmm: x quantized as well ---------------------------------------------------------------
#
# What MLX 0.32.4's CPU build does (read off the wheel; mlx/backend/cpu/quantized.cpp,
# QQMatmul::eval_cpu, for the order of operations):
# - `qqmm` computes one case only: a packed (uint32) `w` and a single row of x (x of shape
#   (K,), (1, K) or (1, ..., 1, K)). The row is quantized and dequantized in groups of
#   `group_size` (`_fake_quantize`), then multiplied by `w` with the floating-point kernel
#   of `quantized_matmul` (`_qqmv`), in x's dtype. The global scales are checked, then
#   unused.
# - every other `qqmm` (several rows, or a float `w` to be quantized on the fly) raises
#   RuntimeError("[QQMatmul] NYI for the general case"), and `gather_qqmm` always raises
#   RuntimeError("[GatherQQMM] NYI"). MLX raises when the result is evaluated; ember raises
#   the same exception at the call (after the same argument checks).
# - its derivatives: the vjp for x builds a `qqmm` of the packed `w` without scales
#   (ValueError), the one for `w` a float `qqmm` (the NYI above); jvp and vmap raise.

_NYI = "[QQMatmul] NYI for the general case"


def _e8m0(s: np.ndarray) -> np.ndarray:
    """float32 scales to e8m0 codes as 0.32.4's CPU rounds them: 2^ceil(log2 s), clamped to
    [2^-127, 2^127]; zero gives code 0, infinities and NaN code 255."""
    m, e = np.frexp(s)
    with np.errstate(invalid="ignore"):
        n = np.clip(np.where(m == 0.5, e - 1, e), -127, 127) + 127
    n = np.where(s == 0, 0, n)
    return np.where(np.isfinite(s), n, 255).astype(np.uint8)


def _e8m0_value(codes: np.ndarray) -> np.ndarray:
    """e8m0 codes to float32 as MLX's CPU reads them: bfloat16 bits `code << 7` (code 0
    reads bits 0x40, 2^-127; code 255 reads infinity)."""
    bits = np.where(codes == 0, 0x40, codes.astype(np.uint16) << 7).astype(np.uint16)
    return bits.view(D.bfloat16.np).astype(np.float32)


def _fp4_code(v: np.ndarray) -> np.ndarray:
    """float32 to e2m1 codes as MLX's CPU `to_fp4_e2m1`: nearest value, ties to the even
    code; the sign bit copied (so -0.0 is code 8); NaN gives code 7 (6.0)."""
    a = np.abs(v)
    code = ((a > 0.25).astype(np.uint8) + (a >= 0.75) + (a > 1.25) + (a >= 1.75) + (a > 2.5)
            + (a >= 3.5) + (a > 5.0))
    code = code | np.where(np.signbit(v), np.uint8(8), np.uint8(0))
    return np.where(np.isnan(v), np.uint8(7), code)


def _fake_quantize(x: np.ndarray, group_size: int, bits: int) -> np.ndarray:
    """x quantized and dequantized in groups along its last axis, as MLX's CPU
    `fp_quantize_dequantize`: per group, scale = max|x| / 6 (4 bits) or / 448 (8 bits),
    stored as e4m3 (groups of 16) or e8m0; each value divided by it, rounded to e2m1 or
    e4m3 and multiplied back, in float32, then rounded to x's type."""
    g = x.astype(np.float32).reshape(-1, group_size)
    amax = np.where(np.isnan(g), -np.inf, np.abs(g)).max(-1)  # (std::max skips NaN)
    s = (amax / np.float32(6.0 if bits == 4 else 448.0)).astype(np.float32)
    s = (_FP8[_to_fp8(s)] if group_size == 16 else _e8m0_value(_e8m0(s)))[:, None]
    el = np.where(s == 0, np.float32(0), g / s).astype(np.float32)
    q = _FP8[_to_fp8(el)] if bits == 8 else _FP4[_fp4_code(el)]
    return (s * q).astype(np.float32).astype(x.dtype).reshape(x.shape)


def _qqmv(x: np.ndarray, w: np.ndarray, scales: np.ndarray, n: int, group_size: int,
          bits: int) -> np.ndarray:
    """MLX's CPU `fp_qmm_t` for one row `x` (K,) against `n` packed rows: per group, a sum
    of products in x's type, element by element; then the groups' sums times their scales,
    added group by group. The kernel reads `w` and `scales` as raw bytes (e2m1 nibbles or
    e4m3 bytes; e4m3 or e8m0 scales), choosing its layout from `bits` and `group_size`
    alone (8 bits: e4m3 in groups of 32; 4 bits in groups of 32: e8m0 scales; else e4m3
    scales in groups of 16), whatever the mode; so do we."""
    t, k = x.dtype, x.shape[-1]
    gs = 32 if bits == 8 or group_size == 32 else 16
    wb = np.ascontiguousarray(w).view(np.uint8).reshape(-1)
    sb = np.ascontiguousarray(scales).view(np.uint8).reshape(-1)
    need_w, need_s = n * k // (1 if bits == 8 else 2), n * k // gs
    if wb.size < need_w or sb.size < need_s:
        # NOTE: MLX reads past the end of its buffers here and returns whatever it finds.
        raise RuntimeError(f"[QQMatmul] With group_size={group_size} and bits={bits} the CPU "
                           f"kernel reads {need_w} bytes of weights and {need_s} of scales, "
                           f"but w holds {wb.size} and scales {sb.size}.")
    if bits == 8:
        vals = _FP8[wb[:need_w]]
    else:
        b = wb[:need_w]
        vals = _FP4[np.stack([b & 15, b >> 4], -1)]
    vals = vals.reshape(n, k // gs, gs).astype(t)
    codes = sb[:need_s].reshape(n, k // gs)
    scale = (_FP8[codes] if gs == 16 else _e8m0_value(codes)).astype(t)
    xg = x.reshape(k // gs, gs)
    part = np.zeros((n, k // gs), t)
    for i in range(gs):  # (all groups at once: each group's sum is its own)
        part = part + xg[:, i] * vals[:, :, i]
    terms = scale * part
    total = np.zeros(n, t)
    for j in range(k // gs):
        total = total + terms[:, j]
    return total


def _qqmv_array(x: array, w: array, scales: array, group_size: int, bits: int) -> array:
    """The single-row product (x of shape (1, K)), as an array of x's dtype."""
    with np.errstate(all="ignore"):  # (infinities and NaN pass through silently, as in C)
        a = _fake_quantize(numpy_of(x), group_size, bits)
        out = _qqmv(a.reshape(-1), numpy_of(w), numpy_of(scales), w.shape[0], group_size,
                    bits)
    return array_from_numpy(out[None], x.dtype)


class _QQMatmul(E.autograd.Function):
    """The computed case as one op, for its transform rules: MLX's derivatives fail."""

    @staticmethod
    def forward(x, w, scales, dtypes, group_size, bits):
        arrays = [_wrap(t, d) for t, d in zip((x, w, scales), dtypes)]
        return _qqmv_array(*arrays, group_size, bits)._t

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, cotangent):
        if ctx.needs_input_grad[0]:  # (MLX's vjp: qqmm(cotangent, w.T) with no scales)
            raise ValueError("[qqmm] Scales must be provided if second argument is "
                             "quantized.")
        if ctx.needs_input_grad[1]:  # (qqmm(cotangent.T, x.T): a float w)
            raise RuntimeError(_NYI)
        return None, None, None, None, None, None

    @staticmethod
    def jvp(ctx, *tangents):
        raise RuntimeError("QQMM::jvp NYI")


def _no_vmap(args, dims, **params):
    raise ValueError("[Primitive::vmap] Not implemented for QQMatmul.")


defbatch(_QQMatmul._prim, _no_vmap)


def _check_qqmm(x: array, w: array, scales, group_size: int, bits: int, mode: str,
                global_scale_x, global_scale_w) -> None:
    """MLX's `validate_qqmm_inputs`, in its order."""
    if x.ndim > 2 or w.ndim > 2:
        raise ValueError("[qqmm] Only 2D inputs are supported but "
                         f"x.ndim() == {x.ndim} and w.ndim() == {w.ndim}.")
    if w.dtype is D.uint32:
        if scales is None:
            raise ValueError("[qqmm] Scales must be provided if second argument is "
                             "quantized.")
        _check_quantized("qqmm", w, scales, None, group_size, bits)
    elif w.dtype.kind != "f" or w.dtype is D.float64:
        raise ValueError("[qqmm] Only real floating types except float64 are supported but "
                         f"second argument dtype == {w.dtype.name}.")
    if x.dtype.kind != "f" or x.dtype is D.float64:
        raise ValueError("[qqmm] Only real floating types except float64 are supported but "
                         f"first argument dtype == {x.dtype.name}.")
    _check_global_scale("qqmm", mode, global_scale_x)
    _check_global_scale("qqmm", mode, global_scale_w)
    if mode == "nvfp4" and (global_scale_x is None) != (global_scale_w is None):
        raise ValueError("[qqmm] For nvfp4 mode, either both global_scale_x and "
                         "global_scale_w must be provided, or neither.")


def _qqmm_dims(x: array, w: array, scales, group_size: int, bits: int) -> None:
    """MLX's `extract_qqmm_dims`: x's last axis against w's (packed or not)."""
    if x.ndim == 0:
        raise IndexError("SmallVector out of range.")  # (MLX reads x.shape(-1))
    if w.dtype is not D.uint32:
        if x.shape[-1] != w.shape[-1]:
            raise ValueError(f"[qqmm] Last dimension of first input with shape "
                             f"{_shape(x.shape)} must match last dimension of second input "
                             f"with shape {_shape(w.shape)}.")
        return
    _check_quantized("qqmm", w, scales, None, group_size, bits)
    _matmul_dims("qqmm", x, w, True, group_size, bits)


def qqmm(x, w, scales=None, group_size: int | None = None, bits: int | None = None,
         mode: str = "nvfp4", global_scale_x=None, global_scale_w=None) -> array:
    """`x @ w.T` with x quantized on the fly ("nvfp4", "mxfp8"; w packed, or float to be
    quantized too); MLX's CPU build computes it for one row of x and a packed w only (see
    the section comment)."""
    x, w = _arr(x), _arr(w)
    scales = None if scales is None else _arr(scales)
    group_size, bits = _params(mode, group_size, bits, "qqmm")
    x2 = x
    if x.ndim == 1:
        x2 = O.reshape(x, (1, x.shape[0]))
    elif w.ndim == 2 and x.ndim > 2:
        x2 = O.reshape(x, (-1, x.shape[-1]))
    _check_qqmm(x2, w, scales, group_size, bits, mode, global_scale_x, global_scale_w)
    _qqmm_dims(x2, w, scales, group_size, bits)
    if w.dtype is not D.uint32 or x2.shape[0] != 1:
        raise RuntimeError(_NYI)
    tensors = (x2._t, w._t, scales._t)
    if transform_active() or any(t._requires_grad for t in tensors):
        dtypes = (x2.dtype, w.dtype, scales.dtype)
        out = _wrap(_QQMatmul.apply(*tensors, dtypes, group_size, bits), x.dtype)
    else:
        out = _qqmv_array(x2, w, scales, group_size, bits)
    return O.reshape(out, (*x.shape[:-1], w.shape[0]))


def _indices_or_default(tag: str, indices, a: array) -> tuple:
    """MLX's checks of a gather's operand and its indices; the indices' shape."""
    if a.ndim < 2:
        raise ValueError(f"{tag} Input must have at least two dimensions but got input "
                         f"with shape {_shape(a.shape)}.")
    if indices is not None and _arr(indices).dtype.kind not in "iu":
        raise ValueError(f"{tag} Got indices with invalid dtype. Indices must be integral.")
    return a.shape[:-2] if indices is None else _arr(indices).shape


def gather_qqmm(x, w, /, scales=None, lhs_indices=None, rhs_indices=None,
                group_size: int | None = None, bits: int | None = None, mode: str = "nvfp4",
                global_scale_x=None, global_scale_w=None, *,
                sorted_indices: bool = False) -> array:
    """`qqmm` of `x[lhs_indices]` with `w[rhs_indices]` (indices over the flattened batch
    axes): MLX's CPU build checks the arguments, then raises
    RuntimeError("[GatherQQMM] NYI"). Unlike `qqmm`, it checks no dtypes or global
    scales."""
    x, w = _arr(x), _arr(w)
    scales = None if scales is None else _arr(scales)
    group_size, bits = _params(mode, group_size, bits, "gather_qqmm")
    lhs = _indices_or_default("[gather_qqmm]", lhs_indices, x)
    rhs = _indices_or_default("[gather_qqmm]", rhs_indices, w)
    broadcast_shapes(lhs, rhs)
    if w.dtype is D.uint32 and scales is None:
        # NOTE: MLX dereferences the missing scales here (a crash); ember says why.
        raise ValueError("[gather_qqmm] Scales must be provided if second argument is "
                         "quantized.")
    _qqmm_dims(x, w, scales, group_size, bits)
    raise RuntimeError("[GatherQQMM] NYI")


__all__ = ["dequantize", "gather_qmm", "gather_qqmm", "qqmm", "quantize", "quantized_matmul"]
