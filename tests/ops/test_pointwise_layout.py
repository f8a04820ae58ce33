"""Pointwise results of operands in different memory layouts are laid out as PyTorch's
TensorIterator lays them out (the first operand with a preference decides), in eager
mode as on meta: binary arithmetic, comparisons and bitwise ops (ops/_common.iter_relayout)."""

import pytest
import torch

import ember

from helpers import assert_same


def _pair(lib, first: str, second: str):
    """Two (2, 3, 4, 5) tensors: channels-last, contiguous, transposed or broadcast."""
    base = lib.arange(120, dtype=lib.float32).reshape(2, 3, 4, 5)
    forms = {
        "cl": lambda: base.contiguous(memory_format=lib.channels_last),
        "c": lambda: base.clone(),
        "t": lambda: base.transpose(2, 3).contiguous().transpose(2, 3),
        "bc": lambda: base[:, :1].contiguous(memory_format=lib.channels_last),
        "sl": lambda: base.contiguous(memory_format=lib.channels_last)[:, 1:3],
    }
    return forms[first](), forms[second]()


OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=2),
    "gt": lambda a, b: a > b,
    "eq": lambda a, b: a == b,
    "and": lambda a, b: (a > 10) & (b > 20),
    "xor_int": lambda a, b: a.int() ^ b.int(),
}


@pytest.mark.parametrize("first,second", [("cl", "c"), ("c", "cl"), ("t", "c"), ("c", "t"),
                                          ("bc", "c"), ("c", "bc"), ("t", "cl"),
                                          ("sl", "c"), ("sl", "t")])
@pytest.mark.parametrize("op", sorted(OPS))
def test_mixed_layouts_follow_tensoriterator(op, first, second):
    fn = OPS[op]
    results = []
    for lib in (torch, ember):
        a, b = _pair(lib, first, second)
        if first == "sl" or second == "sl":
            # (a slice of 2 channels: line the shapes up)
            a, b = (x if x.shape[1] == 2 else x[:, :2] for x in (a, b))
        r = fn(lib, a, b) if op == "sub_alpha" else fn(a, b)
        results.append(r)
    t, e = results
    assert e.stride() == t.stride()
    # integers and exact float32 sums/products of small integers: equal bit for bit
    assert e.tolist() == t.tolist()


def test_channels_last_state_update_stays_channels_last():
    # a cellular-automaton step: state (channels-last) plus a contiguous masked update
    for lib in (torch, ember):
        lib.manual_seed(0)
    x = ember.zeros(2, 16, 6, 6).contiguous(memory_format=ember.channels_last)
    dx = ember.ones(2, 16, 6, 6)
    mask = (ember.arange(72).reshape(2, 1, 6, 6) % 3 == 0).float()
    y = x + dx * mask
    assert y.is_contiguous(memory_format=ember.channels_last)
    assert y.stride() == (576, 1, 96, 16)
    assert y.sum().item() == 16 * 24


def test_meta_and_eager_agree():
    a = ember.zeros(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
    b = ember.zeros(2, 3, 4, 5)
    am = ember.empty(2, 3, 4, 5, device="meta").contiguous(memory_format=ember.channels_last)
    bm = ember.empty(2, 3, 4, 5, device="meta")
    assert (a * b).stride() == (am * bm).stride() == (60, 1, 15, 3)
    assert (b * a).stride() == (bm * am).stride() == (60, 20, 5, 1)


def test_ternary_and_pointwise_losses_take_the_first_operands_layout():
    # where / clamp / lerp / addcmul and unreduced losses with a channels-last first operand
    # beside a contiguous one: TensorIterator's layout, as the binary ops
    for lib in (ember, torch):
        x = lib.arange(72.).reshape(2, 4, 3, 3).contiguous(memory_format=lib.channels_last)
        c = lib.ones(2, 4, 3, 3)
        F = lib.nn.functional
        got = [lib.where(x > 5, x, c), lib.clamp(x, c, c + 1), lib.lerp(x, c, 0.5),
               lib.addcmul(x, c, c), F.mse_loss(x, c, reduction="none"),
               lib.where(c > 5, x, c), F.mse_loss(c, x, reduction="none")]
        if lib is ember:
            mine = got
    for e, t in zip(mine, got):
        assert e.stride() == t.stride()
        assert_same(e, t)


# --- the layout rule over generated layouts ---------------------------------------------------

def _row_major(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


def _layout(rng, shape, kind):
    """(shape, strides, offset) of a view into a fresh storage, laid out as `kind` says."""
    nd = len(shape)
    if kind == "c" or nd == 0:
        return tuple(shape), tuple(_row_major(shape)), 0
    if kind in ("perm", "slice", "expand"):
        order = list(range(nd))
        rng.shuffle(order)
        big = [shape[d] * (2 if kind == "slice" and d == order[0] else 1) for d in range(nd)]
        dense = _row_major([big[d] for d in order])
        stride = [0] * nd
        for i, d in enumerate(order):
            stride[d] = dense[i] * (2 if kind == "slice" and d == order[0] else 1)
        if kind == "expand":  # (some size-1 dims step 0, as an expanded tensor's do)
            stride = [0 if n == 1 and rng.random() < 0.7 else s for n, s in zip(shape, stride)]
        return tuple(shape), tuple(stride), int(kind == "slice")
    # channels-last (-3d): (N, *S, C) in memory
    stored = _row_major([shape[0], *shape[2:], shape[1]])
    return tuple(shape), (stored[0], stored[-1], *stored[1:-1]), 0


def _make(lib, lay, dtype, unit: bool = False):
    """A view laid out as `lay` of 1, 2, ... (`unit`: of those over n + 1, in (0, 1))."""
    shape, stride, offset = lay
    n = offset + 1 + sum((k - 1) * s for k, s in zip(shape, stride)) if 0 not in shape else 1
    values = lib.arange(1, n + 1, dtype=dtype)
    return (values / (n + 1) if unit else values).as_strided(shape, stride, offset)


def _layouts(seed: int, count: int):
    """`count` triples of layouts: a full-shape one, one of the same or a broadcasting shape,
    and a broadcasting one (permuted, sliced, expanded, channels-last, size-1 and size-0 dims)."""
    import random

    rng = random.Random(seed)
    for _ in range(count):
        nd = rng.choice((0, 1, 2, 3, 4, 4, 5))
        shape = [rng.choice([1, 1, 2, 3, 4]) for _ in range(nd)]
        if nd and rng.random() < 0.05:
            shape[rng.randrange(nd)] = 0

        same = shape if rng.random() < 0.5 else _broadcasting(rng, shape)
        yield (_pick(rng, shape), _pick(rng, same), _pick(rng, _broadcasting(rng, shape)))


def _pick(rng, shape):
    kinds = ["c", "perm", "perm", "slice", "expand"] + (["cl"] if len(shape) in (4, 5) else [])
    return _layout(rng, shape, rng.choice(kinds))


def _broadcasting(rng, shape):
    """A shape that broadcasts to `shape`: a suffix of it, some dims made 1."""
    k = rng.randrange(len(shape) + 1)
    return [1 if rng.random() < 0.3 else n for n in shape[len(shape) - k:]]


def _ops(lib, a, b, c, ai, bi, ap, bp):
    """One call per member of the family whose result's layout TensorIterator (or
    `empty_like`, or cat) decides (`ap`, `bp`: `a`, `b` laid out so, valued in (0, 1))."""
    F = lib.nn.functional
    last = a.dim()
    bb, bbp = lib.broadcast_to(b, a.shape), lib.broadcast_to(bp, a.shape)
    return {
        "exp": lambda: a.exp(), "neg": lambda: -a, "sigmoid": lambda: a.sigmoid(),
        "isnan": lambda: a.isnan(), "bitwise_not": lambda: ~ai, "relu": lambda: F.relu(a),
        "nan_to_num": lambda: a.nan_to_num(), "hardtanh": lambda: F.hardtanh(a),
        "add": lambda: a + b, "radd": lambda: b + a, "mul_number": lambda: a * 2,
        "mul_0d": lambda: a * lib.tensor(2.0), "sub_alpha": lambda: lib.sub(a, b, alpha=2),
        "pow_number": lambda: a ** 2, "rpow": lambda: 2 ** a, "atan2": lambda: lib.atan2(a, b),
        "int_plus_float": lambda: ai + b, "int_times_float": lambda: ai * 1.5,
        "gt": lambda: a > b, "eq_number": lambda: a == 3, "and": lambda: ai & bi,
        "where": lambda: lib.where(c > 2, a, b), "where_number": lambda: lib.where(a > 2, a, 0.0),
        "clamp": lambda: a.clamp(1, 3), "clamp_tensors": lambda: lib.clamp(a, b, c),
        "lerp": lambda: lib.lerp(a, b, 0.5), "addcmul": lambda: lib.addcmul(a, b, c),
        "mse_none": lambda: F.mse_loss(a, lib.broadcast_to(b, a.shape), reduction="none"),
        "float": lambda: ai.float(), "to_double": lambda: a.to(lib.float64),
        "clone": lambda: a.clone(), "empty_like": lambda: lib.empty_like(a),
        "flip": lambda: a.flip(list(range(last))),
        "stack": lambda: lib.stack([a, a]), "stack_last": lambda: lib.stack([a, a], -1),
        "cat": lambda: lib.cat([a, a], max(last - 1, 0)) if last else a.reshape(1),
        "complex": lambda: lib.complex(a, b), "polar": lambda: lib.polar(a, b),
        "abs_complex": lambda: lib.complex(a, b).abs(),
        # composites in ember, one kernel (or another composite) in PyTorch: laid out by the
        # operands PyTorch's kernel sees (integers cast first; ldexp's row-major power)
        "copysign": lambda: lib.copysign(a, b), "copysign_number": lambda: lib.copysign(a, -1.0),
        "copysign_int": lambda: lib.copysign(ai, bi), "sinc": lambda: lib.sinc(a / 8),
        "signbit": lambda: lib.signbit(a), "signbit_int": lambda: lib.signbit(ai),
        "logaddexp": lambda: lib.logaddexp(a / 8, b / 8), "deg2rad": lambda: a.deg2rad(),
        "ldexp": lambda: lib.ldexp(a, b / 8), "ldexp_int": lambda: lib.ldexp(a, bi),
        "isinf": lambda: a.isinf(), "isfinite": lambda: a.isfinite(),
        "isinf_int": lambda: ai.isinf(), "isposinf": lambda: a.isposinf(),
        "frexp": lambda: lib.frexp(a)[0], "frexp_exponent": lambda: lib.frexp(a)[1],
        "isreal": lambda: a.isreal(), "isreal_complex": lambda: lib.complex(a, b).isreal(),
        "angle": lambda: a.angle(), "angle_complex": lambda: lib.complex(a, b).angle(),
        "mvlgamma": lambda: lib.mvlgamma(a + 2, 2), "logsigmoid": lambda: F.logsigmoid(a / 8),
        # composites in ember, one kernel in PyTorch (ndtr: a few, the first with a number)
        "ndtr": lambda: lib.special.ndtr(ap), "hardshrink": lambda: F.hardshrink(a, 3),
        "softshrink": lambda: F.softshrink(a, 3), "rrelu_eval": lambda: F.rrelu(a),
        "prelu": lambda: F.prelu(a, lib.full((1,), 0.25, device=a.device)),
        "clamp_min": lambda: a.clamp_min(3), "clamp_max": lambda: a.clamp_max(3),
        # unreduced losses: one kernel (TensorIterator's, empty_like's of the input or of the
        # target), or PyTorch's composite with its in-place steps
        "huber_none": lambda: F.huber_loss(a, bb, reduction="none"),
        "huber_weight": lambda: F.huber_loss(a, bb, reduction="none", weight=bb),
        "huber_broadcast": lambda: F.huber_loss(a, b, reduction="none"),  # (expanded first)
        "mse_broadcast": lambda: F.mse_loss(a, b, reduction="none"),
        "smooth_l1_broadcast": lambda: F.smooth_l1_loss(a, b, reduction="none"),
        "smooth_l1_none": lambda: F.smooth_l1_loss(a, bb, reduction="none"),
        "soft_margin_none": lambda: F.soft_margin_loss(ap, bbp, reduction="none"),
        "bce_logits_none": lambda: F.binary_cross_entropy_with_logits(ap, bbp, reduction="none"),
        "bce_logits_pos_weight": lambda: F.binary_cross_entropy_with_logits(
            ap, bbp, reduction="none", pos_weight=lib.tensor(2.0)),
        "bce_logits_weight": lambda: F.binary_cross_entropy_with_logits(
            ap, bbp, weight=bbp, reduction="none"),
        "bce_weight": lambda: F.binary_cross_entropy(ap, bbp, weight=bbp, reduction="none"),
        "hinge_none": lambda: F.hinge_embedding_loss(a, bb, reduction="none"),
        "poisson_full_none": lambda: F.poisson_nll_loss(ap, bb, full=True, reduction="none"),
    }


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_result_strides_follow_pytorch_over_generated_layouts():
    # 160 seeded layout triples through every member of the family: shapes and strides
    # exactly PyTorch's. Values too, within 1e-6 relative: exp / sigmoid / atan2 / pow may
    # round differently on another vector path (the rest are exact on small integers)
    layouts = list(_layouts(31, 160))
    diffs = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # (PyTorch's log_sigmoid wakes its pool at each call: ~10 ms)
    try:
        _compare_over(layouts, diffs)
    finally:
        torch.set_num_threads(threads)
    assert not diffs, f"{len(diffs)} differ, the first: {diffs[:3]}"


def _compare_over(layouts, diffs) -> None:
    """Each op of `_ops` on each layout triple, in both libraries: differing shapes or
    strides appended to `diffs`, values compared where they agree."""
    for la, lb, lc in layouts:
        got = {}
        for lib in (torch, ember):
            f32, i32 = lib.float32, lib.int32
            a, b, c = (_make(lib, lay, f32) for lay in (la, lb, lc))
            ai, bi = _make(lib, la, i32), _make(lib, lb, i32)
            ap, bp = _make(lib, la, f32, unit=True), _make(lib, lb, f32, unit=True)
            for name, fn in _ops(lib, a, b, c, ai, bi, ap, bp).items():
                try:
                    r = fn()
                except RuntimeError as e:  # (a broadcast the op refuses: both must refuse)
                    got.setdefault(name, []).append(type(e))
                    continue
                got.setdefault(name, []).append((tuple(r.shape), r.stride(), r))
        for name, (t, e) in got.items():
            if isinstance(t, type) or isinstance(e, type):
                if t is not e:
                    diffs.append((name, la, lb, lc, t, e))
                continue
            if t[:2] != e[:2]:
                diffs.append((name, la, lb, lc, t[:2], e[:2]))
            elif name not in ("empty_like",):
                # (poisson's Stirling term is a difference of logs: 1 ulp of its parts)
                assert_same(e[2], t[2], rtol=1e-6, atol=1e-6 if "poisson" in name else 0)


def _make_meta(lay, dtype, unit=False):
    shape, stride, offset = lay
    return ember.empty(400, dtype=dtype, device="meta").as_strided(shape, stride, offset)


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_meta_strides_are_the_eager_ones_over_generated_layouts():
    # the graph compiler and the MLX face's lazy mode read meta rules: every member of the
    # family (a member laid out its own way too: pow's number, empty_like's, the casts) gives
    # on meta the shape and strides the eager call gives
    diffs = []
    for la, lb, lc in _layouts(31, 160):
        got = {}
        for make in (lambda lay, d, unit=False: _make(ember, lay, d, unit), _make_meta):
            f32, i32 = ember.float32, ember.int32
            a, b, c = (make(lay, f32) for lay in (la, lb, lc))
            ai, bi = make(la, i32), make(lb, i32)
            ap, bp = make(la, f32, True), make(lb, f32, True)
            for name, fn in _ops(ember, a, b, c, ai, bi, ap, bp).items():
                try:
                    r = fn()
                except RuntimeError as e:
                    got.setdefault(name, []).append(type(e))
                    continue
                got.setdefault(name, []).append((tuple(r.shape), r.stride()))
        diffs += [(name, la, lb, lc, e, m) for name, (e, m) in got.items() if e != m]
    assert not diffs, f"{len(diffs)} differ, the first: {diffs[:3]}"


def test_the_reported_layouts():
    # the cases that first showed the difference (size-1 dims, a number operand, a broadcast,
    # channels-last inputs of stack / cat), with PyTorch's strides worked out by hand
    cases = [
        (lambda L: L.ones(4, 1).t() * 2, (1, 1)),  # (a number: no fast setup; ties by size)
        (lambda L: L.ones(1, 4).t() + 1, (1, 4)),
        (lambda L: L.ones(4, 1).t().exp(), (4, 1)),  # (contiguous alone: fast setup)
        (lambda L: L.flip(L.ones(4, 1).t(), [0]), (1, 1)),  # (empty_like's strides)
        (lambda L: L.ones(3, 1).t() + L.ones(1, 1), (1, 1)),
        (lambda L: L.where(L.ones(4, 1).t() > 0, L.ones(4, 1).t(), 0.0), (1, 1)),
        (lambda L: L.ones(3, 0).t() + 1, (1, 0)),  # (a size-0 dim zeroes the strides outside)
        (lambda L: L.stack([L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)] * 2),
         (120, 60, 1, 15, 3)),
        (lambda L: L.stack([L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)] * 2, 1),
         (120, 3, 1, 30, 6)),  # (cat along dim 1 channels-last, viewed with the pair split)
        (lambda L: L.cat([L.ones(2, 3, 4, 5, 6).to(memory_format=L.channels_last_3d)] * 2, 1),
         (720, 1, 180, 36, 6)),
        # (one kernel in PyTorch: the pair of parts laid out as a pointwise result of the
        # arguments, then viewed as complex)
        (lambda L: L.complex(L.ones(4, 3).t(), L.ones(4, 3).t()), (1, 3)),
        (lambda L: L.polar(L.ones(4, 3).t(), L.ones(4, 3)[:, :1].t()), (1, 3)),
        # (the parts fresh and row-major: the stack's layout still the operands')
        (lambda L: L.polar(L.ones(12).as_strided((3, 1, 4, 1), (4, 1, 1, 1)),
                           L.ones(24).as_strided((3, 1, 4, 1), (8, 1, 1, 4), 1)), (4, 1, 1, 4)),
        # (PyTorch: one kernel of the input, ember: several ops ending in a where / cast)
        (lambda L: L.sinc(L.ones(4, 1).t()), (4, 1)),
        (lambda L: L.copysign(L.ones(4, 1).t(), -1.0), (1, 1)),
        (lambda L: L.signbit(L.ones(4, 1).t()), (4, 1)),
        (lambda L: L.ones(4, 1).t().isinf(), (4, 1)),  # (x.abs() == inf in PyTorch)
        (lambda L: L.arange(4).reshape(4, 1).t().isinf(), (1, 1)),  # (zeros_like(x))
        (lambda L: L.deg2rad(L.ones(3).as_strided((1,), (2,), 1)), (2,)),  # (empty_like(x))
        # (PyTorch: empty_like of the input / of the target; ember: a kernel of both)
        (lambda L: L.nn.functional.huber_loss(L.ones(4, 1).t(), L.ones(1, 4),
                                              reduction="none"), (1, 1)),
        (lambda L: L.nn.functional.binary_cross_entropy_with_logits(
            L.ones(1, 4), L.ones(4, 1).t(), reduction="none"), (1, 1)),
        (lambda L: L.nn.functional.prelu(L.ones(4, 1).t(), L.ones(1)), (1, 1)),
        # (the number bound is the kernel's value, not an operand: contiguous alone)
        (lambda L: L.ones(4, 1).t().clamp_min(0), (4, 1)),
        # (rrelu's result is allocated row-major, whatever the input's layout)
        (lambda L: L.nn.functional.rrelu(L.ones(3, 4).t()), (3, 1)),
        (lambda L: L.nn.functional.rrelu(L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)),
         (60, 20, 5, 1)),
        # (ndtr: `x * c` first, a number beside the input, so no fast setup; softshrink,
        # one kernel of the input: its strides, the size-1 dim's 0 too)
        (lambda L: L.special.ndtr(L.ones(4).as_strided((1, 2, 2), (0, 1, 2))), (4, 1, 2)),
        (lambda L: L.nn.functional.softshrink(L.ones(4).as_strided((1, 2, 2), (0, 1, 2))),
         (0, 1, 2)),
        (lambda L: L.nn.functional.hardshrink(L.ones(4).as_strided((2, 1, 2), (2, 1, 1))),
         (2, 2, 1)),
        (lambda L: L.nn.functional.soft_margin_loss(L.ones(4).as_strided((2, 1, 2), (2, 1, 1)),
                                                    L.ones(2, 1, 2), reduction="none"),
         (2, 2, 1)),
    ]
    for fn, want in cases:
        assert fn(torch).stride() == want
        assert fn(ember).stride() == want
