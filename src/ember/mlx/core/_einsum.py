"""`mx.einsum_path`: the contraction order MLX's `einsum` plans, and its report.

A port of MLX's planner (mlx/einsum.cpp, after NumPy's and opt_einsum's): the subscripts
are parsed (an implicit output is the letters used once, sorted, after any ellipsis),
each ellipsis becomes the last unused letters (a-z, then A-Z), and the operands' shapes
are checked, each check raising MLX's ValueError in MLX's order. Up to two operands make
one step; more are paired greedily, each step taking the pair whose result removes the
most elements (ties: the cheaper one, then the first found), pairs sharing no letter
only when no other is left, and none whose result outgrows the largest operand or whose
cost passes the naive one (then the rest is one naive step). The report has MLX's five
lines; a FLOP count is the product of the sizes of the letters involved, times the terms
less one (at least one), plus one when a letter is summed away.
"""

from __future__ import annotations

import math
import string

from ._array import array


def _shape(shape) -> str:
    """A shape as MLX's messages print it: `(4,5)`."""
    return "(" + ",".join(str(d) for d in shape) + ")"


def _parse(subscripts: str) -> tuple:
    """(input subscripts, output subscript), the output inferred in implicit mode."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->", 1)
    else:
        lhs, rhs, counts = s, "", {}
        for c in s:
            if c == ",":
                continue
            if c == "." and not rhs:
                rhs = "..."
                continue
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(rhs + "".join(c for c, k in counts.items() if k == 1)))
    return lhs.split(","), rhs


def _expand(subscript: str, ndim: int | None, index: int, shape, spare: str,
            longest: list) -> str:
    """`subscript` with its ellipsis replaced by the last letters of `spare` (as many as
    the operand's extra dimensions; for the output, `longest[0]`, the most any had)."""
    before = after = 0
    have = False
    i = 0
    while i < len(subscript):
        c = subscript[i]
        if not (c.isascii() and c.isalpha()):
            if i + 2 >= len(subscript) or subscript[i:i + 3] != "...":
                raise ValueError(f"[einsum_path] Subscripts must be letters, but got '{c}'.")
            if have:
                raise ValueError("[einsum_path] Only one ellipsis per subscript is allowed "
                                 f"but found more in '{subscript}'.")
            have = True
            i += 3
            continue
        if have:
            after += 1
        else:
            before += 1
        i += 1
    if not have:
        return subscript
    if ndim is None:
        length = longest[0]
    else:
        length = ndim - before - after
        if length < 0:
            raise ValueError(
                f"[einsum_path] Operand {index} with shape {_shape(shape)} has insufficient "
                f"dimensions for subscript '{subscript}'. The ellipsis requires at least "
                f"{before + after} dimensions but the operand has {ndim} dimensions.")
        longest[0] = max(longest[0], length)
    return subscript[:before] + spare[len(spare) - length:] + subscript[before + 3:]


def _size(term, dims: dict) -> int:
    return math.prod(dims.get(c, 0) for c in term)  # (an unknown letter counts 0, as in C++)


def _flops(term: set, inner: bool, n_terms: int, dims: dict) -> int:
    return _size(term, dims) * (max(1, n_terms - 1) + inner)


def _cost_and_scaling(inputs: list, output: set, dims: dict) -> tuple:
    letters = set().union(*inputs)
    return _flops(letters, bool(letters - output), len(inputs), dims), len(letters)


class _Pair:
    """A candidate contraction of inputs x < y into the letters `new`."""

    __slots__ = ("removed", "cost", "new", "dims", "x", "y")

    def __init__(self, removed: int, cost: int, new: set, dims: int, x: int, y: int) -> None:
        self.removed, self.cost, self.new, self.dims, self.x, self.y = \
            removed, cost, new, dims, x, y

    def beats(self, other: _Pair) -> bool:
        return self.removed > other.removed or (self.removed == other.removed
                                                and self.cost < other.cost)


def _greedy(inputs: list, output: set, dims: dict, cost_limit: int,
            memory_limit: int) -> tuple:
    """MLX's `greedy_path`: (path, its cost, its scaling)."""
    pairs = [(i, j) for i in range(len(inputs)) for j in range(i + 1, len(inputs))]
    path: list = []
    found: list = []
    cost = scaling = 0

    def consider(p1: int, p2: int) -> None:
        union = inputs[p1] | inputs[p2]
        new = output & union
        for i, s in enumerate(inputs):
            if i != p1 and i != p2:
                new |= s & union
        size = _size(new, dims)
        if size > memory_limit:
            return
        step = _flops(union, len(union) > len(new), 2, dims)
        if cost + step > cost_limit:
            return
        removed = _size(inputs[p1], dims) + _size(inputs[p2], dims) - size
        found.append(_Pair(removed, step, new, len(union), p1, p2))

    for _ in range(len(inputs) - 1):
        for p1, p2 in pairs:
            if inputs[p1] & inputs[p2]:  # outer products only when nothing else is left
                consider(p1, p2)
        if not found:
            for p1, p2 in pairs:
                consider(p1, p2)
        if not found:  # the rest in one naive step
            step, width = _cost_and_scaling(inputs, output, dims)
            path.append(tuple(range(len(inputs))))
            cost, scaling = cost + step, max(scaling, width)
            break
        best = found[0]
        for pair in found[1:]:
            if pair.beats(best):
                best = pair
        scaling = max(scaling, best.dims)
        path.append((best.x, best.y))
        del inputs[best.y], inputs[best.x]
        inputs.append(best.new)
        kept = []
        for pair in found:
            if {pair.x, pair.y} & {best.x, best.y}:
                continue
            pair.x -= (pair.x > best.x) + (pair.x > best.y)
            pair.y -= (pair.y > best.x) + (pair.y > best.y)
            kept.append(pair)
        found = kept
        pairs = [(i, len(inputs) - 1) for i in range(len(inputs) - 1)]
        cost += best.cost
    return path, cost, scaling


def einsum_path(subscripts: str, *operands) -> tuple:
    """(the contraction path, a report) of `einsum(subscripts, *operands)`: the path a
    list of tuples of operand positions, each step's result appended to the operands."""
    if not isinstance(subscripts, str) or not all(isinstance(o, array) for o in operands):
        types = ", ".join("mlx.core.array" if isinstance(v, array) else type(v).__name__
                          for v in (subscripts, *operands))
        if isinstance(subscripts, str):
            raise RuntimeError("std::bad_cast")  # (MLX's binding, converting an operand)
        raise TypeError("einsum_path(): incompatible function arguments. The following "
                        "argument types are supported:\n    1. einsum_path(subscripts: str, "
                        f"*operands)\n\nInvoked with types: {types}")
    if not operands:
        raise ValueError("[einsum_path] At least one operand is required.")
    ins, out = _parse(subscripts)
    if len(operands) != len(ins):
        raise ValueError(f"[einsum_path] Number of operands, {len(operands)}, does not "
                         f"match number of input subscripts, {len(ins)}")
    used = set(subscripts)
    if len(used) > 52:  # (MLX reserves 52 - len(used) letters: a negative size in C++)
        raise ValueError("basic_string::_M_create")
    spare = "".join(c for c in string.ascii_letters if c not in used)  # a-z, then A-Z
    longest = [0]
    ins = [_expand(s, o.ndim, i, o.shape, spare, longest) for i, (s, o) in
           enumerate(zip(ins, operands))]
    out = _expand(out, None, -1, (), spare, longest)
    if len(set(out)) != len(out):
        raise ValueError("[einsum_path] Repeat indices not allowed in output.")
    dims: dict = {}
    for i, (s, o) in enumerate(zip(ins, operands)):
        if len(s) != o.ndim:
            raise ValueError(f"[einsum_path] Invalid number of subscripts {len(s)} for input "
                             f"{i} with {o.ndim} dimensions.")
        local: dict = {}
        for c, d in zip(s, o.shape):
            if local.setdefault(c, d) != d:
                raise ValueError("[einsum_path] Dimensions of repeated subscripts do not "
                                 f"have the same size ({local[c]} != {d}).")
        for j, (c, d) in enumerate(zip(s, o.shape)):
            have = dims.setdefault(c, d)
            if d != 1 and have != 1 and have != d:
                raise ValueError(f"[einsum_path] Cannot broadcast dimension {j} of input {i} "
                                 f"with shape {_shape(o.shape)} to size {have}.")
            dims[c] = max(have, d)
    largest = max(_size(t, dims) for t in [out, *ins])
    sets, out_set = [set(s) for s in ins], set(out)
    naive_cost, naive_scaling = _cost_and_scaling(sets, out_set, dims)
    if len(sets) <= 2:
        path, cost, scaling = [tuple(range(len(sets)))], naive_cost, naive_scaling
    else:
        path, cost, scaling = _greedy(sets, out_set, dims, naive_cost, largest)
    report = (f"  Complete contraction:  {subscripts}\n"
              f"         Naive scaling:  {naive_scaling}\n"
              f"     Optimized scaling:  {scaling}\n"
              f"      Naive FLOP count:  {naive_cost}\n"
              f"  Optimized FLOP count:  {cost}\n")
    return path, report


def check_einsum(subscripts: str, operands: list) -> None:
    """The checks `einsum_path` makes, in MLX's order, as `einsum` words them."""
    try:
        einsum_path(subscripts, *operands)
    except ValueError as e:
        text = str(e)
        if not text.startswith("[einsum_path]"):
            raise
        raise ValueError("[einsum]" + text.removeprefix("[einsum_path]")) from None
