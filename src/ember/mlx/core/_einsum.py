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
    """MLX's `greedy_path`: (path, its cost, its scaling, each step's result letters)."""
    pairs = [(i, j) for i in range(len(inputs)) for j in range(i + 1, len(inputs))]
    path: list = []
    results: list = []
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
            results.append(output)
            cost, scaling = cost + step, max(scaling, width)
            break
        best = found[0]
        for pair in found[1:]:
            if pair.beats(best):
                best = pair
        scaling = max(scaling, best.dims)
        path.append((best.x, best.y))
        results.append(best.new)
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
    return path, cost, scaling, results


def _check_types(name: str, signature: str, subscripts, operands) -> None:
    """MLX's binding: a TypeError for subscripts not a string, `std::bad_cast` for an
    operand not an array; then at least one operand."""
    if not isinstance(subscripts, str) or not all(isinstance(o, array) for o in operands):
        types = ", ".join("mlx.core.array" if isinstance(v, array) else type(v).__name__
                          for v in (subscripts, *operands))
        if isinstance(subscripts, str):
            raise RuntimeError("std::bad_cast")  # (MLX's binding, converting an operand)
        raise TypeError(f"{name}(): incompatible function arguments. The following "
                        f"argument types are supported:\n    1. {signature}\n\n"
                        f"Invoked with types: {types}")
    if not operands:
        raise ValueError(f"[{name}] At least one operand is required.")


def _checked(subscripts: str, operands) -> tuple:
    """(input subscripts, output subscript, the size of each letter), each ellipsis expanded
    to letters, after MLX's checks of the subscripts against the operands' shapes."""
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
    return ins, out, dims


def einsum_path(subscripts: str, *operands) -> tuple:
    """(the contraction path, a report) of `einsum(subscripts, *operands)`: the path a
    list of tuples of operand positions, each step's result appended to the operands."""
    _check_types("einsum_path", "einsum_path(subscripts: str, *operands)", subscripts,
                 operands)
    ins, out, dims = _checked(subscripts, operands)
    largest = max(_size(t, dims) for t in [out, *ins])
    sets, out_set = [set(s) for s in ins], set(out)
    naive_cost, naive_scaling = _cost_and_scaling(sets, out_set, dims)
    if len(sets) <= 2:
        path, cost, scaling = [tuple(range(len(sets)))], naive_cost, naive_scaling
    else:
        path, cost, scaling, _ = _greedy(sets, out_set, dims, naive_cost, largest)
    report = (f"  Complete contraction:  {subscripts}\n"
              f"         Naive scaling:  {naive_scaling}\n"
              f"     Optimized scaling:  {scaling}\n"
              f"      Naive FLOP count:  {naive_cost}\n"
              f"  Optimized FLOP count:  {cost}\n")
    return path, report


def check_einsum(subscripts, operands: tuple) -> tuple:
    """The checks `mx.einsum` makes before computing, in MLX's order and words (the
    binding's argument types, then those of `einsum_path`, named `[einsum]`); returns
    (input subscripts, output subscript, letter sizes), each ellipsis expanded."""
    _check_types("einsum", "einsum(subscripts: str, *operands, stream: StreamOrDevice = "
                 "None) -> array", subscripts, operands)
    try:
        return _checked(subscripts, operands)
    except ValueError as e:
        text = str(e)
        if not text.startswith("[einsum_path]"):
            raise
        raise ValueError("[einsum]" + text.removeprefix("[einsum_path]")) from None


def _plan(ins: list, out: str, dims: dict) -> list:
    """MLX's path as steps (operand positions, result subscript): one step for up to two
    operands, else the greedy pairs, each pair's letters ordered by size (MLX sorts them
    by size alone, leaving ties unordered) and the last step giving `out`."""
    if len(ins) <= 2:
        return [(tuple(range(len(ins))), out)]
    sets = [set(t) for t in ins]
    naive_cost, _ = _cost_and_scaling(sets, set(out), dims)
    largest = max(_size(t, dims) for t in [out, *ins])
    path, _, _, results = _greedy(sets, set(out), dims, naive_cost, largest)
    order = {c: i for i, c in enumerate(dict.fromkeys("".join(ins)))}
    steps = [(p, "".join(sorted(r, key=lambda c: (dims[c], order[c]))))
             for p, r in zip(path, results)]
    steps[-1] = (steps[-1][0], out)
    return steps


def _transpose_to(x, reorder: list):
    """MLX's final transpose: more axes than the array has (an output letter no input
    has) fails with transpose's words."""
    from ember.mlx import core as mx  # (the op namespace imports this module)
    if len(reorder) != x.ndim:
        raise ValueError(f"[transpose] Received {len(reorder)} axes for array with "
                         f"{x.ndim} dimensions.")
    return x if reorder == sorted(reorder) else mx.transpose(x, reorder)


def _collapse_repeats(x, term: str):
    """A diagonal for each repeated letter ("ii" -> "i"): the repeated letters first, in
    order of first appearance, then the others, as MLX's gather leaves them."""
    from ember.mlx import core as mx
    counts = {c: term.count(c) for c in dict.fromkeys(term)}
    repeated = [c for c, k in counts.items() if k > 1]
    axes = [i for c in repeated for i, t in enumerate(term) if t == c]
    rest = [i for i, t in enumerate(term) if counts[t] == 1]
    x = mx.transpose(x, axes + rest)
    index = []
    for n, c in enumerate(repeated):
        size = x.shape[len(index)]
        idx = mx.reshape(mx.arange(size), (size,) + (1,) * (len(repeated) - 1 - n))
        index += [idx] * counts[c]
    return x[tuple(index)], "".join(repeated) + "".join(term[i] for i in rest)


def _preprocess(terms: list, arrays: list, out: str) -> None:
    """In place: repeated letters collapsed to diagonals, then each letter that only one
    operand has (and the output not) summed away."""
    from ember.mlx import core as mx
    for i, t in enumerate(terms):
        if len(set(t)) < len(t):
            arrays[i], terms[i] = _collapse_repeats(arrays[i], t)
    counts: dict = {}
    for t in [*terms, out]:
        for c in set(t):
            counts[c] = counts.get(c, 0) + 1
    for i, t in enumerate(terms):
        axes = [k for k, c in enumerate(t) if counts[c] == 1]
        if axes:
            arrays[i] = mx.sum(arrays[i], axis=axes)
            terms[i] = "".join(c for c in t if counts[c] > 1)


def _dot(a, b, ta: str, tb: str, out: str):
    """Two operands sharing a summed letter: one batched matmul (so, as in MLX, only
    for inexact types) of (batch, a's kept, summed) by (batch, summed, b's kept)."""
    from ember.mlx import core as mx
    contract = [c for c in ta if c not in out]
    batch = [c for c in ta if c in out and c in tb]
    keep_a = [c for c in ta if c in out and c not in tb]
    keep_b = [c for c in tb if c in out and c not in ta]
    size = {c: max(a.shape[ta.index(c)], b.shape[tb.index(c)]) for c in contract + batch}
    size_a = [size.get(c, d) for c, d in zip(ta, a.shape)]
    size_b = [size.get(c, d) for c, d in zip(tb, b.shape)]
    size.update(zip(ta, size_a))
    size.update(zip(tb, size_b))

    def arrange(x, term: str, shape: list, groups: list):
        x = mx.transpose(mx.broadcast_to(x, shape), [term.index(c) for g in groups for c in g])
        return mx.reshape(x, [size[c] for c in groups[0]]
                          + [math.prod(size[c] for c in g) for g in groups[1:]])

    prod = mx.matmul(arrange(a, ta, size_a, [batch, keep_a, contract]),
                     arrange(b, tb, size_b, [batch, contract, keep_b]))
    letters = batch + keep_a + keep_b
    prod = mx.reshape(prod, [size[c] for c in letters])
    return _transpose_to(prod, [letters.index(c) if c in letters else len(letters)
                                for c in out])


def _naive(terms: list, arrays: list, out: str):
    """Any other step: the operands broadcast over all their letters, multiplied, the
    letters not in `out` summed, the rest put in `out`'s order."""
    from ember.mlx import core as mx
    letters = list(dict.fromkeys("".join(terms)))
    result = None
    for t, x in zip(terms, arrays):
        x = mx.reshape(x, list(x.shape) + [1] * (len(letters) - x.ndim))
        spare = iter(range(len(t), len(letters)))
        perm = [t.index(c) if c in t else next(spare) for c in letters]
        if perm != sorted(perm):
            x = mx.transpose(x, perm)
        result = x if result is None else mx.multiply(result, x)
    summed = [k for k, c in enumerate(letters) if c not in out]
    if summed:
        result = mx.sum(result, axis=summed)
    kept = [c for c in letters if c in out]
    return _transpose_to(result, [kept.index(c) if c in kept else len(kept) for c in out])


def einsum(subscripts, operands: tuple):
    """`mx.einsum` computed as MLX computes it, step by step along its path, so results
    have MLX's dtypes (a summed bool or small integer widens as `sum` widens it) and its
    errors (a contraction of two integer operands is a matmul, which refuses them)."""
    ins, out, dims = check_einsum(subscripts, operands)
    terms, arrays = list(ins), list(operands)
    for positions, result in _plan(ins, out, dims):
        step_terms = [terms[p] for p in positions]
        step_arrays = [arrays[p] for p in positions]
        _preprocess(step_terms, step_arrays, result)
        if len(step_terms) == 2 and set(step_terms[0]) - set(result):
            value = _dot(*step_arrays, *step_terms, result)
        else:
            value = _naive(step_terms, step_arrays, result)
        for p in sorted(positions, reverse=True):
            del terms[p], arrays[p]
        terms.append(result)
        arrays.append(value)
    return arrays[0]
