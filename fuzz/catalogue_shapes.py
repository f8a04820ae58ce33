"""Argument families for the shape helpers: atleast_*d, diagflat, kron, block_diag,
cartesian_prod. Each family takes (g, op, form, bad) and returns (args, expr, tags), as in
catalogue.py."""

from __future__ import annotations

from .catalogue import Op, call
from .inputs import Gen, Lit


def fam_atleast(g: Gen, op: Op, form: str, bad: bool):
    k = g.int(1, 3)
    args = {f"t{i}": g.tensor(g.shape(max_ndim=4)) for i in range(k)}
    names = list(args)
    if bad:
        args["t9"] = Lit("x")
        names.append("t9")
        return args, f"L.{op.name}({', '.join(names)})", {"bad", "wrong-arg-type"}
    if k == 1 or g.chance(0.5):
        inner = ", ".join(names) if k > 1 else names[0]
        return args, f"L.{op.name}({inner})", set()
    return args, f"L.{op.name}([{', '.join(names)}])", {"list"}


def fam_diagflat(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(g.shape(max_ndim=3))
    rest = [str(g.int(-2, 2))] if g.chance(0.6) else []
    if bad:
        rest = ["'x'"]
        return {"a": a}, call(form, "diagflat", "a", rest), {"bad", "wrong-arg-type"}
    return {"a": a}, call(form, "diagflat", "a", rest), set()


def fam_cartesian(g: Gen, op: Op, form: str, bad: bool):
    k = g.int(1, 3)
    dt = g.dtype()
    args = {f"t{i}": g.tensor((g.size(),), dt if g.chance(0.8) else g.dtype()) for i in range(k)}
    tags = set()
    if bad:
        args[f"t{k}"] = g.tensor(g.shape(ndim=2), dt)
        tags = {"bad", "too-many-dims"}
    return args, f"L.cartesian_prod({', '.join(args)})", tags


def fam_block_diag(g: Gen, op: Op, form: str, bad: bool):
    k = g.int(0, 3)
    dt = g.dtype()
    args = {f"t{i}": g.tensor(g.shape(max_ndim=2), dt if g.chance(0.7) else g.dtype())
            for i in range(k)}
    tags = set()
    if bad:
        args[f"t{k}"] = g.tensor(g.shape(ndim=3), dt)
        tags = {"bad", "too-many-dims"}
    return args, f"L.block_diag({', '.join(args)})", tags


SHAPE_FAMILIES = {
    "atleast": fam_atleast,
    "diagflat": fam_diagflat,
    "cartesian": fam_cartesian,
    "block_diag": fam_block_diag,
}
