"""einsum: Einstein summation over any number of operands, as pairwise matmuls in a cheap order.

Steps: parse the equation (letters, `...`, implicit output, or the sublist form);
take diagonals for labels repeated within an operand ('ii->i'); drop size-1 dims that
broadcast; sum labels no one else needs; then contract two operands at a time, each
contraction one permute-reshape-matmul, in the order `contraction_path` picks:
an exact search over subsets (dynamic programming, 3^n) for up to `OPTIMAL_MAX`
operands, a greedy pairing beyond. Cost = multiply-adds (the product of the sizes of
every label a pairwise contraction touches). `einsum_path` reports the choice.
Everything is composed of differentiable ops, so gradients of any order come free.
"""

from __future__ import annotations

import math
from collections import namedtuple

from .._tensor import Tensor
from ._common import type_name

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
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(eq).__name__}")
    return eq, ops


def _tokens(term: str, offset: int, op_index: int) -> list:
    """A term's subscripts: letters as themselves and '...' as one Ellipsis token."""
    out, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or Ellipsis in out:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {op_index} that is not part of any ellipsis")
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


# --- per-operand preparation ----------------------------------------------------------------

def _take_diagonals(t: Tensor, labels: list[int]) -> tuple[Tensor, list[int]]:
    """Collapse each label repeated within one operand onto its diagonal ('ii' -> 'i')."""
    labels = list(labels)
    while len(set(labels)) < len(labels):
        lab = next(lab for lab in labels if labels.count(lab) > 1)
        p = labels.index(lab)
        q = labels.index(lab, p + 1)
        t = t.diagonal(0, p, q)
        labels = [x for k, x in enumerate(labels) if k not in (p, q)] + [lab]
    return t, labels


def _drop_broadcast(t: Tensor, labels: list[int], sizes: dict) -> tuple[Tensor, list[int]]:
    """Squeeze size-1 dims whose label is larger elsewhere: they broadcast, so drop the label."""
    dims = [d for d, lab in enumerate(labels) if t._shape[d] == 1 and sizes[lab] != 1]
    if not dims:
        return t, labels
    return t.squeeze(tuple(dims)), [lab for d, lab in enumerate(labels) if d not in dims]


def _sum_out(t: Tensor, labels: list[int], keep, same_dtype: bool) -> tuple[Tensor, list[int]]:
    dims = [d for d, lab in enumerate(labels) if lab not in keep]
    if not dims:
        return t, labels
    t = t.sum(dims, dtype=t._dtype) if same_dtype else t.sum(dims)
    return t, [lab for lab in labels if lab in keep]


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

def _contract(a: Tensor, la: list[int], b: Tensor, lb: list[int], keep) -> tuple[Tensor, list]:
    """One pairwise contraction as (batch, M, K) @ (batch, K, N)."""
    batch = [lab for lab in la if lab in lb and lab in keep]
    inner = [lab for lab in la if lab in lb and lab not in keep]
    left = [lab for lab in la if lab not in lb]
    right = [lab for lab in lb if lab not in la]
    size = dict(zip(la, a._shape)) | dict(zip(lb, b._shape))
    nb, nm, nk, nn = (math.prod(size[x] for x in g) for g in (batch, left, inner, right))
    pa = a.permute([la.index(x) for x in batch + left + inner])
    pb = b.permute([lb.index(x) for x in batch + inner + right])
    if nb == 1:
        r = pa.reshape(nm, nk) @ pb.reshape(nk, nn)
    else:
        r = pa.reshape(nb, nm, nk) @ pb.reshape(nb, nk, nn)
    labels = batch + left + right
    return r.reshape([size[x] for x in labels]), labels


def _prepare(equation: str, operands: list):
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(t).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    spec = _Spec(equation, operands)
    for t in operands[1:]:
        if t._dtype is not operands[0]._dtype:
            raise RuntimeError(f"expected scalar type {type_name(operands[0]._dtype)} but found "
                               f"{type_name(t._dtype)}")
    tensors, labels = [], []
    for t, lab in zip(operands, spec.inputs):
        t, lab = _take_diagonals(t, lab)
        t, lab = _drop_broadcast(t, lab, spec.sizes)
        tensors.append(t)
        labels.append(lab)
    out = spec.output
    if len(tensors) > 1:
        for i in range(len(tensors)):
            others = set(out).union(*(labels[:i] + labels[i + 1:]))
            tensors[i], labels[i] = _sum_out(tensors[i], labels[i], others, True)
    return tensors, labels, out, spec.sizes


def einsum_path(*args) -> ContractionPath:
    """The contraction order (and its multiply-add cost) einsum uses for these operands.

    Meta tensors are enough: only shapes are read.
    """
    eq, ops = _parse_args(args)
    tensors, labels, out, sizes = _prepare(eq, ops)
    return contraction_path(labels, sizes, out)


def einsum(*args) -> Tensor:
    """Einstein summation: einsum('ij,jk->ik', a, b), '...' batches, 'ii->i' diagonals."""
    eq, ops = _parse_args(args)
    tensors, labels, out, sizes = _prepare(eq, ops)
    if len(tensors) > 1:
        for i, j in contraction_path(labels, sizes, out).path:
            a, la = tensors[i], labels[i]
            b, lb = tensors[j], labels[j]
            tensors = [t for k, t in enumerate(tensors) if k not in (i, j)]
            labels = [x for k, x in enumerate(labels) if k not in (i, j)]
            keep = set(out).union(*labels)
            c, lc = _contract(a, la, b, lb, keep)
            tensors.append(c)
            labels.append(lc)
    t, lab = _sum_out(tensors[0], labels[0], set(out), False)
    order = [lab.index(x) for x in out]
    return t if order == list(range(len(order))) else t.permute(order)


TENSOR_METHODS: dict = {}

__all__ = ["einsum"]
