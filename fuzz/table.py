"""The catalogue's rows: which ops are fuzzed, through which call forms, with which
argument family. Adding an op is adding a row."""

from __future__ import annotations

from .catalogue import BAD_SHARE, FAMILIES, Case, Op
from .catalogue_indexing import INDEXING_FAMILIES
from .catalogue_math import MATH_FAMILIES
from .catalogue_shapes import SHAPE_FAMILIES
from .inputs import FLOATS, INTS, Gen

FAMILIES = {**FAMILIES, **INDEXING_FAMILIES, **MATH_FAMILIES, **SHAPE_FAMILIES}

FM = ("fn", "method")
FMI = ("fn", "method", "inplace")
FLOAT_ONLY = {"dtypes": FLOATS}
INT_BOOL = {"dtypes": INTS + ("bool",)}


def _unary(names, forms=FMI, **opts):
    return [Op(n, "unary", forms, opts) for n in names]


OPS: list = [
    *_unary(["abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "floor", "ceil",
             "round", "trunc", "sign", "reciprocal", "rsqrt", "exp2", "log2", "log1p",
             "expm1", "erf", "square", "asin", "atan", "sinh", "frac", "sgn"]),
    Op("neg", "unary", ("fn", "method", "inplace", "op:-{a}")),
    Op("bitwise_not", "unary", ("fn", "method", "op:~{a}"), INT_BOOL),
    Op("logical_not", "unary", FM),
    *_unary(["isnan", "isfinite", "isinf", "nan_to_num"], FM),
    *_unary(["relu"], ("fn", "method", "F")),
    *_unary(["gelu", "silu", "elu", "leaky_relu", "softplus", "hardtanh", "mish",
             "logsigmoid", "softsign", "relu6", "hardswish", "hardsigmoid", "selu", "celu"],
            ("F",), **FLOAT_ONLY),
    *[Op(n, "binary", ("fn", "method", "inplace", f"op:{{a}} {sym} {{b}}"), o)
      for n, sym, o in [
          ("add", "+", {"kws": [{}, {"alpha": 2}]}), ("sub", "-", {"kws": [{}, {"alpha": 2}]}),
          ("mul", "*", {}),
          ("div", "/", {"kws": [{}, {}, {"rounding_mode": "floor"},
                                {"rounding_mode": "trunc"}]}),
          ("floor_divide", "//", {}), ("remainder", "%", {}), ("pow", "**", {}),
          ("bitwise_and", "&", {}), ("bitwise_or", "|", {}), ("bitwise_xor", "^", {}),
          ("eq", "==", {"reflect": False}), ("ne", "!=", {"reflect": False}),
          ("lt", "<", {}), ("le", "<=", {}), ("gt", ">", {}), ("ge", ">=", {})]],
    *[Op(n, "binary", FMI) for n in ("fmod", "maximum", "minimum", "fmax", "fmin", "atan2",
                                     "hypot", "logical_and", "logical_or", "logical_xor",
                                     "true_divide")],
    *[Op(n, "reduce", FM, o) for n, o in [
        ("sum", {"dtype_kw": True}), ("mean", {"dtype_kw": True}),
        ("prod", {"tuple_dims": False, "dtype_kw": True}), ("amax", {}), ("amin", {}),
        ("argmax", {"tuple_dims": False}), ("argmin", {"tuple_dims": False}),
        ("std", {"extra": {"correction": (0, 1, 2)}}), ("var", {"extra": {"unbiased": (True,
                                                                                       False)}}),
        ("norm", {"extra": {"p": (1, 2, "'fro'", 3.0)}}),
        ("logsumexp", {"dim_required": True}), ("all", {}), ("any", {}),
        ("max", {"tuple_dims": False}), ("min", {"tuple_dims": False}),
        ("nansum", {}), ("count_nonzero", {"keepdim": False}),
        ("median", {"tuple_dims": False})]],
    *[Op(n, "scan", FM, o) for n, o in [
        ("cumsum", {"dtype_kw": True}), ("cumprod", {"dtype_kw": True}), ("cummax", {}),
        ("cummin", {}), ("logcumsumexp", {})]],
    Op("softmax", "softmax", ("F", "method")), Op("log_softmax", "softmax", ("F", "method")),
    Op("softmin", "softmax", ("F",)),
    *[Op(n, "view", f) for n, f in [
        ("reshape", FM), ("view", ("method",)), ("transpose", FM), ("swapaxes", FM),
        ("permute", FM), ("movedim", FM), ("expand", ("method",)), ("squeeze", FM),
        ("unsqueeze", FM), ("flatten", FM), ("narrow", FM), ("select", FM),
        ("unfold", ("method",)), ("diagonal", FM), ("flip", FM), ("roll", FM), ("t", FM)]],
    *[Op(n, "join", ("fn",)) for n in ("cat", "stack", "hstack", "vstack")],
    *[Op(n, "join", FM) for n in ("split", "chunk", "unbind")],
    Op("getitem", "getitem", ("op",)), Op("setitem", "getitem", ("op",)),
    Op("gather", "gather", FM), Op("index_select", "gather", FM),
    Op("masked_fill", "masked", ("method", "inplace")), Op("where", "masked", ("fn",)),
    Op("masked_select", "masked", FM),
    Op("matmul", "matmul", ("fn", "method", "op:@")), Op("mm", "matmul", FM),
    Op("bmm", "matmul", FM), Op("dot", "matmul", FM), Op("mv", "matmul", FM),
    Op("outer", "matmul", FM), Op("linear", "matmul", ("F",)),
    *[Op(n, "loss", ("F",)) for n in ("mse_loss", "l1_loss", "cross_entropy", "nll_loss",
                                      "binary_cross_entropy",
                                      "binary_cross_entropy_with_logits", "smooth_l1_loss")],
    Op("clamp", "clamp", FMI), Op("clamp_min", "clamp", FMI), Op("clamp_max", "clamp", FMI),
    *[Op(n, "sort", FM) for n in ("sort", "topk", "argsort", "kthvalue")],
    *[Op(n, "convert", ("method",)) for n in ("to", "float", "double", "half", "bfloat16",
                                               "int", "long", "bool", "item", "tolist")],
    Op("tril", "tri", FMI), Op("triu", "tri", FMI),
    # --- special functions and the other top-level functions added later ---------------
    *_unary(["lgamma", "digamma", "i0"]),
    *_unary(["sinc", "signbit", "deg2rad", "rad2deg", "isposinf", "isneginf", "isreal"], FM),
    *_unary([f"special.{n}" for n in (
        "erfcx", "ndtri", "log_ndtr", "ndtr", "i0e", "i1", "i1e", "entr", "expit", "logit",
        "gammaln", "psi", "digamma", "bessel_j0", "bessel_j1", "spherical_bessel_j0",
        "modified_bessel_i0", "modified_bessel_i1", "erf", "erfc", "erfinv", "exp2",
        "expm1", "log1p", "round", "sinc", "i0")], ("fn",)),
    *[Op(n, "binary", FM) for n in ("xlogy", "logaddexp", "logaddexp2", "copysign",
                                    "heaviside")],
    *[Op(n, "binary", FMI) for n in ("igamma", "igammac")],
    *[Op(f"special.{n}", "binary", ("fn",)) for n in ("xlogy", "xlog1py", "zeta",
                                                      "gammainc", "gammaincc")],
    Op("polygamma", "polygamma", ("fn", "method", "inplace", "special")),
    Op("mvlgamma", "mvlgamma", ("fn", "method", "inplace", "special")),
    *[Op(n, "atleast", ("fn",)) for n in ("atleast_1d", "atleast_2d", "atleast_3d")],
    Op("diagflat", "diagflat", FM), Op("kron", "pairwise", FM), Op("dist", "pairwise", FM),
    Op("cov", "cov", FM), Op("corrcoef", "cov", FM),
    Op("cartesian_prod", "cartesian", ("fn",)), Op("block_diag", "block_diag", ("fn",)),
    Op("take_along_dim", "take_along", FM), Op("unravel_index", "unravel", ("fn",)),
    Op("vdot", "matmul", FM), Op("inner", "matmul", FM),
    *[Op(n, "scatter", FMI) for n in ("scatter", "scatter_add", "scatter_reduce",
                                      "index_copy", "index_add", "index_fill")],
    *[Op(n, "view_inplace", ("method",)) for n in ("t_", "transpose_", "swapaxes_",
                                                    "squeeze_", "unsqueeze_",
                                                    "as_strided_")],
    *[Op(n, "reduce_np", FM, o) for n, o in [
        ("sum", {}), ("mean", {}), ("amax", {}), ("amin", {}), ("all", {}), ("any", {}),
        ("std", {}), ("var", {}), ("nansum", {}), ("logsumexp", {}),
        ("argmax", {"tuple_dims": False}), ("max", {"tuple_dims": False}),
        ("prod", {"tuple_dims": False})]],
    Op("getitem_keys", "index_keys", ("op",)), Op("setitem_keys", "index_keys", ("op",)),
    Op("round", "rounding", FMI),
]


def select_ops(pattern: str | None) -> list:
    """The rows whose name contains any of the comma-separated `pattern` parts (all if None)."""
    if not pattern:
        return list(OPS)
    parts = [p.strip() for p in pattern.split(",") if p.strip()]
    return [op for op in OPS if any(p == op.name or p in op.name for p in parts)]


def make_case(seed: int, index: int, ops: list | None = None) -> Case:
    """Case `index` of run `seed`: its own generator, so any case rebuilds alone."""
    ops = ops if ops is not None else OPS
    g = Gen(seed, index)
    op = g.pick(ops)
    form = g.pick(op.forms)
    bad = g.chance(BAD_SHARE)
    args, expr, tags = FAMILIES[op.family](g, op, form, bad)
    tags = set(tags)
    if bad:
        tags.add("bad")
    if form == "inplace":
        tags.add("inplace")
    if op.family == "reduce_np":
        tags.add("np-kw")
    for v in args.values():
        if hasattr(v, "layout"):
            shape = v.shape
            if not shape:
                tags.add("0d")
            if 0 in shape:
                tags.add("empty")
            if v.layout:
                tags.add("expanded" if v.layout.startswith(".expand") else "strided")
            tags.add(f"dtype:{v.dtype}")
    name = form[3:] if form.startswith("op:") else form
    return Case(seed, index, op.name, "op" if form.startswith("op") else name, args, expr, tags)
