"""Argument families for the special functions' odd signatures (polygamma, mvlgamma,
round's decimals), statistics (dist, cov, corrcoef) and NumPy-style reduction keywords.
Each family takes (g, op, form, bad) and returns (args, expr, tags), as in catalogue.py."""

from __future__ import annotations

from .catalogue import Op, _dims_arg, call
from .inputs import FLOATS, INTS, Gen, Lit, Tensor


def fam_polygamma(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(dtype=g.dtype(FLOATS + INTS if g.chance(0.85) else None), lo=-2, hi=4)
    n = g.int(0, 3)
    tags = set()
    if bad:
        n, tags = g.pick((-1, "'x'", 1.5)), {"bad", "bad-order"}
    if form == "fn":
        return {"a": a}, f"L.polygamma({n}, a)", tags
    if form == "special":
        return {"a": a}, f"L.special.polygamma({n}, a)", tags
    return {"a": a}, call(form, "polygamma", "a", [str(n)]), tags


def fam_mvlgamma(g: Gen, op: Op, form: str, bad: bool):
    p = g.int(1, 4)
    lo = (p - 1) / 2 + 0.01 if g.chance(0.8) else -1
    a = g.tensor(dtype=g.dtype(FLOATS if g.chance(0.85) else None), lo=lo, hi=lo + 4)
    tags = set() if lo > 0 else {"below-domain"}
    if bad:
        p, tags = g.pick((0, -1)), {"bad", "bad-order"}
    if form == "special":
        return {"a": a}, f"L.special.multigammaln(a, {p})", tags
    return {"a": a}, call(form, "mvlgamma", "a", [f"p={p}" if g.chance(0.5) else str(p)]), tags


def fam_pairwise(g: Gen, op: Op, form: str, bad: bool):
    """kron, dist: two tensors of any shapes / broadcastable shapes."""
    n = op.name
    da = g.dtype(FLOATS + ("int64",) if g.chance(0.85) else None)
    db = da if g.chance(0.8) else g.dtype()
    a = g.tensor(g.shape(max_ndim=3), da)
    tags = set()
    if n == "kron":
        b = g.tensor(g.shape(max_ndim=3), db)
        rest = ["b"]
    else:  # dist
        from .inputs import broadcastable, mismatched
        sb = broadcastable(g, a.shape)
        if bad and (ms := mismatched(g, a.shape)) is not None:
            sb, tags = ms, {"bad", "shape-mismatch"}
        b = g.tensor(sb, db)
        rest = ["b"] + (["p=" + str(g.pick((0, 1, 2, 3, 0.5, "float('inf')")))]
                        if g.chance(0.6) else [])
    if bad and not tags:
        return {"a": a, "b": Lit("x")}, call(form, n, "a", ["b"]), {"bad", "wrong-arg-type"}
    return {"a": a, "b": b}, call(form, n, "a", rest), tags


def fam_cov(g: Gen, op: Op, form: str, bad: bool):
    nd = g.pick((0, 1, 2, 2, 2)) if not bad else 3
    dt = g.dtype(FLOATS + ("int64", "complex64") if g.chance(0.9) else None)
    a = g.tensor(g.shape(ndim=nd), dt)
    tags = {"bad", "too-many-dims"} if bad else set()
    if op.name == "corrcoef":
        return {"a": a}, call(form, "corrcoef", "a", []), tags
    args, rest = {"a": a}, []
    if g.chance(0.4):
        rest.append(f"correction={g.pick((0, 1, 2))}")
    nobs = a.shape[-1] if a.shape else 1
    if g.chance(0.3):
        args["fw"] = Tensor(g.rng.integers(0, 3, size=(nobs,)).astype("int64"), "int64")
        rest.append("fweights=fw")
    if g.chance(0.3):
        args["aw"] = g.tensor((nobs,), g.dtype(("float32", "float64")), lo=0, hi=2)
        rest.append("aweights=aw")
    return args, call(form, "cov", "a", rest), tags


def fam_reduce_np(g: Gen, op: Op, form: str, bad: bool):
    """Reductions called with NumPy's keyword spellings, axis= and keepdims=."""
    a = g.tensor()
    nd = len(a.shape)
    dim, tags = _dims_arg(g, nd, bad, op.opts.get("tuple_dims", True))
    rest = [f"axis={dim!r}"]
    if g.chance(0.6):
        rest.append(f"keepdims={g.chance(0.5)}")
    return {"a": a}, call(form, op.name, "a", rest), tags


def fam_rounding(g: Gen, op: Op, form: str, bad: bool):
    """round(decimals=k)."""
    a = g.tensor(dtype=g.dtype(FLOATS + INTS if g.chance(0.9) else None))
    k = g.int(-2, 3)
    if bad:
        return {"a": a}, call(form, "round", "a", ["decimals='x'"]), {"bad", "wrong-arg-type"}
    return {"a": a}, call(form, "round", "a", [f"decimals={k}"]), set()


MATH_FAMILIES = {
    "polygamma": fam_polygamma,
    "mvlgamma": fam_mvlgamma,
    "pairwise": fam_pairwise,
    "cov": fam_cov,
    "reduce_np": fam_reduce_np,
    "rounding": fam_rounding,
}
