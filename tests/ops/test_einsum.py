"""einsum against PyTorch: explicit and implicit outputs, ellipsis broadcasting, repeated
subscripts ('ii->', 'ii->i'), the sublist form, errors, meta tensors, gradients of first and
second order; and the contraction order (`einsum_path`), which must pick the cheaper path.
"""

import numpy as np
import pytest
import torch

import ember
from ember.ops.einsum import OPTIMAL_MAX, contraction_path, einsum_path

from helpers import assert_same, assert_ulp, check_grads, check_op, rand_array

CASES = {
    "matmul": ("ij,jk->ik", [(3, 4), (4, 5)]),
    "matmul_implicit": ("ij,jk", [(3, 4), (4, 5)]),
    "transpose_out": ("ij,jk->ki", [(3, 4), (4, 5)]),
    "trace": ("ii->", [(4, 4)]),
    "trace_implicit": ("ii", [(4, 4)]),
    "diagonal": ("ii->i", [(4, 4)]),
    "batch_diagonal": ("bii->bi", [(2, 3, 3)]),
    "triple_repeat": ("iii->i", [(3, 3, 3)]),
    "sum_all": ("ij->", [(3, 4)]),
    "sum_axis": ("ij->j", [(3, 4)]),
    "permute": ("ijk->kij", [(2, 3, 4)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "outer_implicit_sorted": ("j,i", [(3,), (4,)]),
    "inner": ("i,i->", [(5,), (5,)]),
    "hadamard": ("ij,ij->ij", [(3, 4), (3, 4)]),
    "hadamard_transposed": ("ij,ji->ij", [(3, 4), (4, 3)]),
    "bmm": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    "chain3": ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    "chain4": ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    "star": ("ai,bi,ci,di->abcd", [(2, 3), (2, 3), (3, 3), (2, 3)]),
    "uppercase": ("aB,Bc->ac", [(2, 3), (3, 4)]),
    "upper_before_lower": ("bA,Ab", [(2, 3), (3, 2)]),
    "implicit_upper_lower_order": ("Ab,cA", [(2, 3), (4, 2)]),
    "ellipsis_batch": ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    "ellipsis_broadcast": ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 5)]),
    "ellipsis_middle": ("i...j,j...->i...", [(2, 3, 4), (4, 3)]),
    "ellipsis_summed": ("...ij->ij", [(2, 3, 4)]),
    "ellipsis_empty": ("...i,...i->...", [(3,), (3,)]),
    "ellipsis_dot": ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    "size_one_broadcast": ("i,i->i", [(3,), (1,)]),
    "size_one_matrix": ("ij,jk->ik", [(3, 1), (1, 4)]),
    "spaces": (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    "scalar": ("->", [()]),
    "scalar_times": (",i->i", [(), (3,)]),
    "repeated_and_shared": ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    "unused_label_summed": ("ij,kl->il", [(2, 3), (4, 5)]),
    "zero_size": ("ij,jk->ik", [(2, 0), (0, 3)]),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_einsum_matches_torch(case):
    eq, shapes = CASES[case]
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *arrays,
             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["chain3", "bilinear", "trace", "diagonal", "ellipsis_dot",
                                  "star", "repeated_and_shared"])
def test_einsum_finite_differences(case):
    eq, shapes = CASES[case]
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    check_grads(lambda *x: ember.einsum(eq, *x), *arrays)


def test_operands_as_a_list_and_sublist_form():
    a, b = rand_array((2, 3)), rand_array((3, 4), seed=1)
    check_op(lambda x, y: ember.einsum("ij,jk", [x, y]), lambda x, y: torch.einsum("ij,jk", [x, y]),
             a, b)
    check_op(lambda x, y: ember.einsum(x, [0, 1], y, [1, 2], [2, 0]),
             lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [2, 0]), a, b)
    check_op(lambda x: ember.einsum(x, [Ellipsis, 1], [1]),
             lambda x: torch.einsum(x, [Ellipsis, 1], [1]), rand_array((2, 3, 4)))


DTYPE_EQS = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij->", [(3, 3)]), ("i->i", [(3,)]),
             ("ii", [(3, 3)]), ("i,i->", [(3,), (3,)]), ("ijk,kl->il", [(2, 3, 4), (4, 2)])]


@pytest.mark.parametrize("eq,shapes", DTYPE_EQS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32, np.int64], ids=str)
def test_einsum_dtypes(dtype, eq, shapes):
    if np.dtype(dtype) == np.int32 and eq == "ijk,kl->il":
        pytest.skip("torch 2.13 raises here for int32 (its inner sum promotes to int64)")
    arrays = [rand_array(s, dtype, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *arrays,
             grad=np.dtype(dtype).kind in "fc")


def test_einsum_float16_accumulates_in_float32():
    a = rand_array((4, 128), np.float32, 0.5, 1.5).astype(np.float16)
    b = rand_array((128, 3), np.float32, 0.5, 1.5, seed=1).astype(np.float16)
    e = ember.einsum("ij,jk->ik", ember.tensor(a), ember.tensor(b))
    assert e.dtype == ember.float16
    assert_ulp(e, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16), 1,
               "the float32 sums come from OpenBLAS, whose kernel depends on the CPU and the "
               "operands' layout; rounding to float16 can show their last bit")


def test_single_operand_results_are_views_as_in_torch():
    x = ember.tensor(rand_array((3, 3)))
    assert ember.einsum("ii->i", x)._base is x
    assert ember.einsum("ij->ji", x)._base is x


# --- the contraction order -----------------------------------------------------------------

def _meta(*shapes):
    return [ember.empty(s, device="meta") for s in shapes]


def test_three_operand_chain_takes_the_cheaper_bracketing():
    # A (512x512), B (512x8), C (8x512). (AB)C costs 512*512*8 + 512*8*512 = 4.2M
    # multiply-adds; A(BC) costs 512*8*512 + 512^3 = 136M. The cheaper one must win.
    a, b, c = _meta((512, 512), (512, 8), (8, 512))
    p = einsum_path("ij,jk,kl->il", a, b, c)
    assert p.path == [(0, 1), (0, 1)]  # contract A with B first
    assert p.cost == 512 * 512 * 8 + 512 * 8 * 512
    a_bc_cost = 512 * 8 * 512 + 512 * 512 * 512
    assert p.cost < a_bc_cost / 30


def test_three_operand_chain_takes_a_bc_when_that_is_cheaper():
    # Mirrored shapes (512x8), (8x512), (512x512): now A(BC) is the cheap order
    # (BC first: 8*512*512, then 512*8*512), and it must be the one chosen.
    a, b, c = _meta((512, 8), (8, 512), (512, 512))
    p = einsum_path("ij,jk,kl->il", a, b, c)
    assert p.path == [(1, 2), (0, 1)]
    assert p.cost == 8 * 512 * 512 + 512 * 8 * 512
    assert p.naive_cost == 512 * 8 * 512 + 512 * 512 * 512  # left to right would be 136M


def test_einsum_runs_the_path_it_reports():
    # The graph records what each product's inputs were.
    a = ember.tensor(rand_array((512, 512), np.float64), requires_grad=True)
    b = ember.tensor(rand_array((512, 8), np.float64, seed=1))
    c = ember.tensor(rand_array((8, 512), np.float64, seed=2))
    out = ember.einsum("ij,jk,kl->il", a, b, c)
    node = out.grad_fn
    while node.name() != "BmmBackward0":
        node = node.next_functions[0][0]
    # The intermediate fed to the last product is AB (4096 elements), not BC (262144).
    shapes = [m[0] for m in node._in_meta if m is not None]
    assert shapes and all(np.prod(s) == 512 * 8 for s in shapes)
    np.testing.assert_allclose(out.detach().numpy(), (a.detach().numpy() @ b.numpy()) @
                               c.numpy(), rtol=1e-10)


def test_optimal_search_beats_left_to_right_on_many_operands():
    shapes = [(64, 2), (2, 64), (64, 2), (2, 64), (64, 64)]
    eq = "ab,bc,cd,de,ef->af"
    p = einsum_path(eq, *_meta(*shapes))
    assert p.cost < p.naive_cost
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *arrays)


def test_greedy_path_beyond_the_exact_search():
    n = OPTIMAL_MAX + 2
    letters = "abcdefghijklmnop"
    eq = ",".join(letters[i] + letters[i + 1] for i in range(n)) + f"->a{letters[n]}"
    shapes = [(3 if i % 2 else 2, 2 if i % 2 else 3) for i in range(n)]
    p = einsum_path(eq, *_meta(*shapes))
    assert len(p.path) == n - 1 and p.cost <= p.naive_cost
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *arrays)


def test_optimal_matches_brute_force_on_random_label_sets():
    # For 4 operands, enumerate every pairwise order and compare the DP's cost with the best.
    rng = np.random.default_rng(0)
    sizes = {c: int(rng.integers(2, 9)) for c in "abcdef"}
    for _ in range(8):
        sets = [set(rng.choice(list("abcdef"), 3, replace=False)) for _ in range(4)]
        out = set(rng.choice(list("abcdef"), 2, replace=False)) & set().union(*sets)
        # einsum sums a label only one operand has before contracting; do the same here.
        sets = [s & out.union(*(t for t in sets if t is not s)) for s in sets]
        best = _brute_force(sets, sizes, out)
        assert contraction_path(sets, sizes, out).cost == best


def _brute_force(sets, sizes, out):
    if len(sets) == 1:
        return 0
    best = None
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            rest = [s for k, s in enumerate(sets) if k not in (i, j)]
            merged = (sets[i] | sets[j]) & (out | set().union(*rest))
            c = int(np.prod([sizes[x] for x in sets[i] | sets[j]]))
            total = c + _brute_force(rest + [merged], sizes, out)
            best = total if best is None else min(best, total)
    return best


# --- errors, meta, second order ----------------------------------------------------------

ERRORS = {
    "fewer_operands": ("ij,jk", [(2, 3)]),
    "more_operands": ("ij", [(2, 3), (3,)]),
    "too_many_subscripts": ("ijk", [(2, 3)]),
    "ellipsis_too_many": ("ijkl...->", [(2, 3, 4)]),
    "size_mismatch": ("ij,jk->ik", [(2, 3), (4, 5)]),
    "output_not_in_input": ("ij,j->ik", [(2, 3), (3,)]),
    "output_repeated": ("ij->ii", [(2, 3)]),
    "invalid_subscript": ("i1->i", [(2, 3)]),
    "repeated_sizes": ("ii->i", [(2, 3)]),
    "stray_dot": ("i.j", [(3, 3)]),
    "ellipsis_mismatch": ("...ij,...jk", [(2, 2, 2, 3), (4, 3, 5)]),
    "scalar_too_many": ("ij", [()]),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_errors_match_torch(case):
    eq, shapes = ERRORS[case]
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    with pytest.raises(Exception) as t_info:
        torch.einsum(eq, *[torch.tensor(a) for a in arrays])
    with pytest.raises(Exception) as e_info:
        ember.einsum(eq, *[ember.tensor(a) for a in arrays])
    assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value)


def test_dtype_mismatch_raises_like_torch():
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        ember.einsum("ij,j", ember.ones(2, 3), ember.ones(3, dtype=ember.float64))


@pytest.mark.parametrize("case", ["matmul", "bilinear", "ellipsis_broadcast", "trace", "chain4",
                                  "permute", "outer"])
def test_meta_shapes_and_dtypes(case):
    eq, shapes = CASES[case]
    e = ember.einsum(eq, *[ember.empty(s, device="meta", dtype=ember.float64) for s in shapes])
    t = torch.einsum(eq, *[torch.empty(s, device="meta", dtype=torch.float64) for s in shapes])
    assert e.device.type == "meta"
    assert_same(e, t)


@pytest.mark.parametrize("case", ["chain3", "bilinear", "diagonal", "hadamard"])
def test_second_derivatives_match_torch(case):
    eq, shapes = CASES[case]
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    rng = np.random.default_rng(3)
    xs_e = [ember.tensor(a, requires_grad=True) for a in arrays]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t = torch.einsum(eq, *xs_t) ** 2
    v = rng.standard_normal(tuple(out_t.shape))
    g_t = torch.autograd.grad((out_t * torch.tensor(v)).sum(), xs_t, create_graph=True)
    g_e = ember.autograd.grad((ember.einsum(eq, *xs_e) ** 2 * ember.tensor(v)).sum(), xs_e,
                              create_graph=True)
    gg_t = torch.autograd.grad(sum(g.sum() for g in g_t), xs_t)
    gg_e = ember.autograd.grad(sum(g.sum() for g in g_e), xs_e)
    for a, b in zip(list(g_e) + list(gg_e), list(g_t) + list(gg_t)):
        assert_same(a, b, 1e-10, 1e-12)


@pytest.mark.parametrize("args", [
    (), ("i",), ("A",), ("i", []), (3, []), ("i", 3), ("i", [3]), ("i", ("A", "x")),
    (3, "A"), ("i,i", "A", None), ("A", [52]), ("A", [-1]), ("A", [0.5]),
    ("A", ["a"]), ("A", [0], [60]), ("A", "A"), ("A", [0], 3, [0]),
])
def test_argument_errors_as_pytorch_words_them(args):
    """The wrapper's checks: at least two arguments, the sublist form only after a Tensor,
    subscripts in [0, 52) compared as PyTorch compares them, Tensor elements by position."""
    msgs = []
    for L in (torch, ember):
        a = L.arange(3.0)
        real = tuple(a if x == "A" else x for x in args)
        with pytest.raises((TypeError, ValueError)) as info:
            L.einsum(*real)
        msgs.append((type(info.value), str(info.value)))
    assert msgs[1] == msgs[0]


def test_sublist_and_one_list_forms():
    for L in (torch, ember):
        a = L.arange(3.0)
        r = [L.einsum(a, [0], a, [1], [0, 1]), L.einsum("i,j->ij", [a, a]),
             L.einsum(a, [Ellipsis, 0], [0]), L.einsum(a, [0], a, [0])]
        if L is torch:
            want = [t.tolist() for t in r]
        else:
            assert [t.tolist() for t in r] == want


LAYOUT_CASES = [
    ("ij,ij->ij", [(1, 3), (2, 3)]), ("ij,ij->ji", [(2, 3), (2, 3)]), ("i,j->ji", [(2,), (3,)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]), ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("bij,bjk->ibk", [(5, 2, 3), (5, 3, 4)]), ("bij,bjk->ikb", [(5, 2, 3), (5, 3, 4)]),
    ("ijk,jl->lik", [(2, 3, 4), (3, 5)]), ("ir,jr->ijr", [(4, 2), (3, 2)]),
    ("ir,jr,kr->ijk", [(4, 2), (3, 2), (5, 2)]), ("stuv,auvc->astc", [(2, 2, 2, 2), (3, 2, 2, 4)]),
    ("ab,asc,bsd->cd", [(2, 2), (2, 2, 3), (2, 2, 3)]), ("iij->ij", [(3, 3, 4)]),
    ("xyz,xsa,ybst,ztc->abc", [(2, 3, 2), (2, 2, 4), (3, 5, 2, 2), (2, 2, 4)]),
    ("aBij,Bckl->acikjl", [(1, 3, 2, 2), (3, 3, 2, 2)]), ("ij,j->ji", [(3, 4), (4,)]),
    ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]),
]


def _chain(t):
    names, node = [], t.grad_fn
    while node is not None:
        names.append(node.name())
        nxt = [f for f, _ in node.next_functions if f is not None and "AccumulateGrad" not in
               f.name()]
        node = nxt[0] if nxt else None
    return names


@pytest.fixture(params=["planned", "left_to_right"])
def path_mode(request, monkeypatch):
    """Both of PyTorch's routes for three or more operands: a planned path where opt_einsum
    is installed and enabled, left to right otherwise (ember follows the same switch)."""
    planned = request.param == "planned"
    if planned and not torch.backends.opt_einsum.is_available():
        pytest.skip("opt_einsum is not installed: torch contracts left to right here")
    monkeypatch.setattr(ember.backends.opt_einsum, "enabled", planned)
    old = torch.backends.opt_einsum.enabled
    torch.backends.opt_einsum.enabled = planned
    yield planned
    torch.backends.opt_einsum.enabled = old


@pytest.mark.parametrize("eq,shapes", LAYOUT_CASES, ids=str)
def test_result_strides_and_graph_follow_torch(eq, shapes, path_mode):
    """Results carry PyTorch's strides (so `.view` works where it works in torch: operands laid
    out as output labels then contracted ones, pairs as one bmm written in output order) and
    the same chain of backward nodes. Values: float64 products, to a few ulps."""
    arrays = [rand_array(s, np.float64, seed=k) for k, s in enumerate(shapes)]
    e = ember.einsum(eq, *[ember.tensor(a, requires_grad=True) for a in arrays])
    t = torch.einsum(eq, *[torch.tensor(a, requires_grad=True) for a in arrays])
    assert e.stride() == t.stride() and e.shape == t.shape
    assert _chain(e) == _chain(t)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq,message", [
    ("...i...->i", "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    ("i..->i", "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    ("ij->......", "einsum(): found '.' for output but an ellipsis (...) was already found"),
    ("ij->i..", "einsum(): found '.' for output that is not part of any ellipsis (...)"),
])
def test_ellipsis_spelling_errors_word_as_torch(eq, message):
    with pytest.raises(RuntimeError) as te:
        torch.einsum(eq, torch.ones(2, 3))
    assert str(te.value) == message
    with pytest.raises(RuntimeError, match=None) as ee:
        ember.einsum(eq, ember.ones(2, 3))
    assert str(ee.value) == message


def test_repeated_calls_reuse_the_parse_and_still_check():
    # the parse is kept per (equation, shapes): a second call is the same computation, and
    # other shapes under the same equation are parsed (and refused) afresh
    a, b = ember.randn(3, 4, requires_grad=True), ember.randn(4, 5)
    first, second = ember.einsum("ij,jk->ik", a, b), ember.einsum("ij,jk->ik", a, b)
    assert ember.equal(first, second) and first.grad_fn.name() == second.grad_fn.name()
    with pytest.raises(RuntimeError, match="subscript j has size 3"):
        ember.einsum("ij,jk->ik", a, ember.randn(3, 5))
    ta, tb = torch.tensor(a.detach().numpy()), torch.tensor(b.numpy())
    np.testing.assert_allclose(ember.einsum("ij,jk->ik", a, b).detach().numpy(),
                               torch.einsum("ij,jk->ik", ta, tb).numpy(), rtol=1e-6)
