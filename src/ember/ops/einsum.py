"""einsum: Einstein summation over any number of operands, as pairwise batched matmuls.

Steps, PyTorch's own (so results carry its strides and backward nodes): parse the equation
(letters, `...`, implicit output, or the sublist form); lay every operand out over one
shared label order, the output labels then the contracted ones ('ii->i' diagonals taken,
size-1 dims for labels it lacks, which also broadcast); then contract two operands at a
time, summing a label once no other operand holds it: a product when nothing is summed,
else one permute-reshape-bmm. Two operands go left to right; three or more follow
`contraction_path`: an exact search over subsets (dynamic programming, 3^n) for up to
`OPTIMAL_MAX` operands, a greedy pairing beyond. Cost = multiply-adds (the product of the
sizes of every label a pairwise contraction touches). `einsum_path` reports the choice.
Everything is composed of differentiable ops, so gradients of any order come free.
"""

from __future__ import annotations

import math
from collections import namedtuple

from .._tensor import Tensor
from ..backends import opt_einsum
from ._arg_parser_text import wrong_type
from ._common import type_name
from .registry import bind
from .views import permute as _V_PERMUTE
from .views import view_p

OPTIMAL_MAX = 8
_ELLIPSIS = 1000  # labels >= this stand for the dims an ellipsis covers (aligned right)

ContractionPath = namedtuple("ContractionPath", ["path", "cost", "naive_cost"])
ContractionPath.__doc__ = """The pairwise order einsum uses, numpy-style: each (i, j) removes
operands i and j from the current list and appends their product. `cost` counts multiply-adds;
`naive_cost` is the left-to-right order's, for comparison."""


# --- parsing -----------------------------------------------------------------------------

def _sublist_equation(args) -> tuple[str, list]:
    """einsum(op0, [0, 1], op1, [1, 2], [0, 2]) as an equation string and operands."""
    def letter(n) -> str:
        # (compared as PyTorch's wrapper compares them, so a str or float subscript fails
        # with the TypeError Python gives that comparison or chr())
        if n is Ellipsis:
            return "..."
        if n >= 0 and n < 26:
            return chr(ord("A") + n)
        if n >= 26 and n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                         "[0, 52)")

    eq = ",".join("".join(letter(n) for n in sub) for sub in args[1::2])
    if len(args) % 2:
        eq += "->" + "".join(letter(n) for n in args[-1])
        return eq, list(args[:-1:2])
    return eq, list(args[::2])


def _parse_args(args) -> tuple[str, list]:
    if len(args) < 2:  # (an equation alone, or an operand without its subscripts)
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        return _sublist_equation(args)
    eq, ops = args[0], list(args[1:])
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):  # the older one-list spelling
        return _parse_args((eq, *ops[0]))
    if not isinstance(eq, str):
        raise wrong_type("einsum", "equation", 1, "str", eq)
    return eq, ops


def _tokens(term: str, offset: int, op_index: int) -> list:
    """A term's subscripts: letters as themselves and '...' as one Ellipsis token."""
    out, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            who = "output" if op_index < 0 else f"operand {op_index}"
            if Ellipsis in out:
                raise RuntimeError(
                    "einsum(): found '.' for output but an ellipsis (...) was already found"
                    if op_index < 0 else
                    f"einsum(): found '.' for {who} for which an ellipsis was already found")
            if term[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {who} that is not part of any "
                                   "ellipsis" + (" (...)" if op_index < 0 else ""))
            out.append(Ellipsis)
            i += 3
            continue
        if not c.isascii() or not c.isalpha():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                "subscripts must be in [a-zA-Z]")
        out.append(c)
        i += 1
    return out


class _Spec:
    """A parsed equation: integer labels per operand, the output labels, and label sizes."""

    def __init__(self, equation: str, operands: list) -> None:
        eq = equation.replace(" ", "")
        lhs, arrow, rhs = eq.partition("->")
        terms = lhs.split(",")
        if len(operands) < len(terms):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                               "equation")
        if len(operands) > len(terms):
            raise RuntimeError("einsum(): more operands were provided than specified in the "
                               "equation")
        offset, toks = 0, []
        for i, t in enumerate(terms):
            toks.append(_tokens(t, offset, i))
            offset += len(t) + 1
        self.n_ell = max((operands[i].ndim - len(tk) + 1 for i, tk in enumerate(toks)
                          if Ellipsis in tk), default=0)
        self.sizes: dict[int, int] = {}
        self.inputs = [self._labels(tk, t, i) for i, (tk, t) in enumerate(zip(toks, operands))]
        self.output = self._output(_tokens(rhs, len(lhs) + 2, -1) if arrow else None, toks)

    def _labels(self, tokens: list, t: Tensor, i: int) -> list[int]:
        n_named = len(tokens) - (1 if Ellipsis in tokens else 0)
        if Ellipsis not in tokens and n_named != t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) does not match "
                f"the number of dimensions ({t.ndim}) for operand {i} and no ellipsis was given")
        if n_named > t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) is more than the "
                f"number of dimensions ({t.ndim}) for operand {i}")
        labels: list[int] = []
        for tok in tokens:
            if tok is Ellipsis:
                k = t.ndim - n_named
                labels.extend(range(_ELLIPSIS + self.n_ell - k, _ELLIPSIS + self.n_ell))
            else:
                labels.append(ord(tok))
        seen: dict[int, int] = {}
        for d, (lab, n) in enumerate(zip(labels, t._shape)):
            if lab in seen and seen[lab] != n:
                raise RuntimeError(f"einsum(): subscript {chr(lab)} is repeated for operand {i} "
                                   f"but the sizes don't match, {n} != {seen[lab]}")
            seen[lab] = n
            self._see(lab, n, i, d)
        return labels

    def _see(self, lab: int, n: int, i: int, d: int) -> None:
        old = self.sizes.get(lab)
        if old is None or old == 1:
            self.sizes[lab] = n
        elif n not in (1, old):
            if lab >= _ELLIPSIS:
                raise RuntimeError(
                    f"einsum(): dimension {d} covered by ellipsis in operand {i}"
                    f"has size {n} which does not broadcast with previously seen ellipsis with "
                    f"size {old} for the respective dimension")
            raise RuntimeError(f"einsum(): subscript {chr(lab)} has size {n} for operand {i} "
                               f"which does not broadcast with previously seen size {old}")

    def _output(self, tokens, input_tokens) -> list[int]:
        ell = list(range(_ELLIPSIS, _ELLIPSIS + self.n_ell))
        if tokens is None:
            counts: dict[str, int] = {}
            for tk in input_tokens:
                for c in tk:
                    if c is not Ellipsis:
                        counts[c] = counts.get(c, 0) + 1
            return ell + sorted(ord(c) for c, k in counts.items() if k == 1)
        out: list[int] = []
        for tok in tokens:
            if tok is Ellipsis:
                out.extend(ell)
                continue
            lab = ord(tok)
            if lab in out:
                raise RuntimeError(
                    f"einsum(): output subscript {tok} appears more than once in the output")
            if lab not in self.sizes:
                raise RuntimeError(f"einsum(): output subscript {tok} does not appear in the "
                                   "equation for any input operand")
            out.append(lab)
        return out


# --- contraction order --------------------------------------------------------------------

def _flops(labels, sizes) -> int:
    return math.prod(sizes[lab] for lab in labels)


def _optimal(sets: list[frozenset], sizes: dict, out: frozenset):
    """Exact cheapest contraction tree by dynamic programming over subsets of operands."""
    n = len(sets)
    full = (1 << n) - 1
    union = [frozenset()] * (1 << n)
    for mask in range(1, 1 << n):
        low = mask & -mask
        union[mask] = union[mask ^ low] | sets[low.bit_length() - 1]
    best: dict[int, tuple[int, object, frozenset]] = {}
    for i in range(n):
        m = 1 << i
        best[m] = (0, i, sets[i] & (out | union[full ^ m]))
    for mask in range(1, full + 1):
        if mask & (mask - 1) == 0:
            continue
        result = union[mask] & (out | union[full ^ mask])
        choice = None
        sub = (mask - 1) & mask
        while sub:
            other = mask ^ sub
            if sub < other:
                ca, ta, ra = best[sub]
                cb, tb, rb = best[other]
                c = ca + cb + _flops(ra | rb, sizes)
                if choice is None or c < choice[0]:
                    choice = (c, (ta, tb), result)
            sub = (sub - 1) & mask
        best[mask] = choice
    return best[full][1], best[full][0]


def _greedy(sets: list[frozenset], sizes: dict, out: frozenset):
    """Repeatedly contract the cheapest pair (preferring pairs that share a label)."""
    nodes = list(range(len(sets)))
    current = list(sets)
    total = 0
    while len(current) > 1:
        choice = None
        for i in range(len(current)):
            for j in range(i + 1, len(current)):
                shared = bool(current[i] & current[j])
                c = _flops(current[i] | current[j], sizes)
                key = (not shared, c)
                if choice is None or key < choice[0]:
                    choice = (key, i, j, c)
        _, i, j, c = choice
        rest = [s for k, s in enumerate(current) if k not in (i, j)]
        needed = out.union(*rest) if rest else out
        merged = (current[i] | current[j]) & needed
        node = (nodes[i], nodes[j])
        total += c
        current = rest + [merged]
        nodes = [x for k, x in enumerate(nodes) if k not in (i, j)] + [node]
    return nodes[0], total


def _tree_to_path(tree, n: int) -> list[tuple[int, int]]:
    ids = list(range(n))
    path: list[tuple[int, int]] = []
    counter = [n]

    def visit(node):
        if isinstance(node, int):
            return node
        a, b = visit(node[0]), visit(node[1])
        i, j = sorted((ids.index(a), ids.index(b)))
        path.append((i, j))
        ids.pop(j)
        ids.pop(i)
        ids.append(counter[0])
        counter[0] += 1
        return ids[-1]

    visit(tree)
    return path


def _path_cost(path, sets: list[frozenset], sizes: dict, out: frozenset) -> int:
    current = list(sets)
    total = 0
    for i, j in path:
        rest = [s for k, s in enumerate(current) if k not in (i, j)]
        total += _flops(current[i] | current[j], sizes)
        current = rest + [(current[i] | current[j]) & out.union(*rest)]
    return total


def contraction_path(label_sets, sizes: dict, out) -> ContractionPath:
    """The pairwise order for operands with these label sets (exact up to OPTIMAL_MAX)."""
    sets = [frozenset(s) for s in label_sets]
    out = frozenset(out)
    n = len(sets)
    naive = [(0, 1)] * (n - 1)
    if n < 2:
        return ContractionPath([], 0, 0)
    tree, cost = (_optimal if n <= OPTIMAL_MAX else _greedy)(sets, sizes, out)
    return ContractionPath(_tree_to_path(tree, n), cost, _path_cost(naive, sets, sizes, out))


# --- the pairwise contraction ---------------------------------------------------------------
# The operands are first laid out as PyTorch lays them out, so results carry its strides (and
# so its contiguity, which `.view` needs): every operand is a view with one dim per label, in
# one shared order (the output labels, then the contracted ones), size 1 where it lacks the
# label. A pair is then multiplied (no label to sum) or contracted as one batched matmul.


def _common_layout(spec, operands: list) -> tuple[list[Tensor], list[int]]:
    """Each operand as a view over the shared label order (diagonals taken, dims of size 1
    inserted for the labels it lacks); also that order."""
    out = spec.output
    rest = sorted({lab for labs in spec.inputs for lab in labs} - set(out),
                  key=lambda lab: (lab < _ELLIPSIS, lab))  # contracted '...' dims first
    order = list(out) + rest
    views = []
    for t, labels in zip(operands, spec.inputs):
        seen: list[int] = []  # the labels of t's dims so far
        for lab in labels:
            if lab in seen:  # a repeated label: its diagonal takes the first one's place
                p = seen.index(lab)
                t = t.diagonal(0, p, len(seen)).movedim(-1, p)
            else:
                seen.append(lab)
        for lab in order:  # a size-1 dim at the end for each label t lacks
            if lab not in seen:
                t = t.unsqueeze(len(seen))
                seen.append(lab)
        views.append(_permute(t, [seen.index(lab) for lab in order]))
    return views, order


def _permute(t: Tensor, dims: list[int]) -> Tensor:
    """`t.permute(dims)` for an order einsum made itself (valid by construction): the view
    bound directly, without the public method's argument parsing and checks."""
    return bind(view_p, t, fn=_V_PERMUTE, dims=tuple(dims))


def _pair(a: Tensor, b: Tensor, summed: list[int]) -> Tensor:
    """a * b summed over `summed` (kept as size-1 dims); both span the same dims. The
    non-summed dims split into shared (batch), a-only and b-only groups for one bmm."""
    if not summed:
        return a * b
    both, only_a, only_b, k = [], [], [], 1
    for d in range(a.ndim):
        na, nb = a._shape[d] != 1, b._shape[d] != 1
        if d in summed:
            if na and nb:
                k *= a._shape[d]
            elif na:
                a = a.sum(d, keepdim=True, dtype=a._dtype)
            elif nb:
                b = b.sum(d, keepdim=True, dtype=b._dtype)
        elif na and nb:
            both.append(d)
        elif na:
            only_a.append(d)
        else:
            only_b.append(d)
    if only_a and only_b and only_b[-1] < only_a[0]:
        # b's own dims all come first in the output: swap, so the bmm writes that order
        a, b, only_a, only_b = b, a, only_b, only_a
    sizes = [a._shape[d] for d in both + only_a] + [1] * len(summed) + [b._shape[d] for d in only_b]
    nb_, nm, nn = (math.prod(a._shape[d] for d in both), math.prod(a._shape[d] for d in only_a),
                   math.prod(b._shape[d] for d in only_b))
    left = _permute(a, both + only_a + summed + only_b).reshape(nb_, nm, k)
    right = _permute(b, both + summed + only_b + only_a).reshape(nb_, k, nn)
    dims = both + only_a + summed + only_b
    back = [dims.index(d) for d in range(a.ndim)]
    return _permute(left.bmm(right).view(sizes), back)


def _contract_all(views: list[Tensor], n_out: int, path) -> Tensor:
    """Contract the laid-out operands pairwise along `path` (numpy-style pairs; None: left to
    right), summing each label as soon as no other operand holds it."""
    ndim = views[0].ndim
    counts = [sum(v._shape[d] != 1 for v in views) for d in range(ndim)]
    ops = list(views)
    steps = path if path is not None else [(0, 1)] * (len(ops) - 1)
    for i, j in steps:
        a, b = ops[i], ops[j]
        ops = [t for k, t in enumerate(ops) if k not in (i, j)]
        summed, sum_a, sum_b = [], [], []
        for d in range(n_out, ndim):
            if a._shape[d] != 1 and b._shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    summed.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a._shape[d] != 1:
                    sum_a.append(d)
                    counts[d] = 0
                elif b._shape[d] != 1:
                    sum_b.append(d)
                    counts[d] = 0
        if sum_a:
            a = a.sum(sum_a, keepdim=True, dtype=a._dtype)
        if sum_b:
            b = b.sum(sum_b, keepdim=True, dtype=b._dtype)
        if path is None:
            ops.insert(0, _pair(a, b, summed))
        else:
            ops.append(_pair(a, b, summed))
    result = ops[0]
    return result.view(result._shape[:n_out]) if ndim > n_out else result


def _prepare(equation: str, operands: list):
    """Check the operands and parse; also each operand's labels as the path planner sees
    them (a repeated label once, size-1 broadcast dims dropped, labels no one else needs
    summed away). Only shapes are read."""
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(t).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    key = (equation, *(t._shape for t in operands))
    hit = _PREPARED.get(key)
    spec = _Spec(equation, operands) if hit is None else hit[0]
    for t in operands[1:]:
        if t._dtype is not operands[0]._dtype:
            raise RuntimeError(f"expected scalar type {type_name(operands[0]._dtype)} but found "
                               f"{type_name(t._dtype)}")
    if hit is not None:
        return hit
    labels = []
    for t, lab in zip(operands, spec.inputs):
        size = dict(zip(lab, t._shape))
        labels.append([x for x in dict.fromkeys(lab) if not (size[x] == 1 and spec.sizes[x] != 1)])
    if len(labels) > 1:
        out = set(spec.output)
        labels = [[x for x in lab if x in out.union(*(labels[:i] + labels[i + 1:]))]
                  for i, lab in enumerate(labels)]
    if len(_PREPARED) >= 512:
        _PREPARED.clear()
    _PREPARED[key] = spec, labels
    return spec, labels


# equation and operand shapes -> (parsed spec, planner labels): programs repeat an einsum
# with the same shapes every step, and parsing is most of a small one's cost (read only)
_PREPARED: dict = {}


def einsum_path(*args) -> ContractionPath:
    """The contraction order (and its multiply-add cost) einsum uses for these operands.

    Meta tensors are enough: only shapes are read.
    """
    eq, ops = _parse_args(args)
    spec, labels = _prepare(eq, ops)
    return contraction_path(labels, spec.sizes, spec.output)


def einsum(*args) -> Tensor:
    """Einstein summation: einsum('ij,jk->ik', a, b), '...' batches, 'ii->i' diagonals.
    Results have PyTorch's strides (see `_common_layout`)."""
    eq, ops = _parse_args(args)
    spec, labels = _prepare(eq, ops)
    views, _ = _common_layout(spec, ops)
    n_out = len(spec.output)
    if len(views) == 1:
        t = views[0]
        return t if t.ndim == n_out else t.sum(list(range(n_out, t.ndim)))
    # PyTorch contracts two operands left to right, and three or more along a planned path
    # where opt_einsum is installed and enabled (left to right otherwise)
    path = contraction_path(labels, spec.sizes, spec.output).path \
        if len(views) > 2 and opt_einsum.plans() else None
    return _contract_all(views, n_out, path)


TENSOR_METHODS: dict = {}

__all__ = ["einsum"]
