"""The one set of test helpers: run the same computation in ember and torch and compare.

- `to_torch` / `to_ember` convert through NumPy (bfloat16 via its bits).
- `assert_same(e, t)` compares shape, dtype, values (and optionally strides).
- `check_op(fn_e, fn_t, *arrays)` runs an op on seeded inputs in both frameworks,
  compares the outputs, then the gradients of every float input under a random
  cotangent.
- `check_dist(make, attrs, *arrays)` compares a distribution's properties and methods.
- `check_double_backward(cases)` compares a create_graph=True gradient (whether it requires
  grad, its node, the gradient of its square) with torch's.
- `check_grads(fn, *arrays)` compares ember's gradients with central finite
  differences in float64 (for ops with no torch counterpart, and as a second oracle).
- `assert_ulp(actual, expected, ulps, reason)` compares within a number of ulps, for a value
  that depends on the CPU's kernels (tests/README.md says when a comparison may be bitwise).
"""

from __future__ import annotations

import functools
import sys
import warnings
from contextlib import contextmanager

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

DTYPE_PAIRS = [
    (ember.bool, torch.bool), (ember.uint8, torch.uint8), (ember.int8, torch.int8),
    (ember.int16, torch.int16), (ember.int32, torch.int32), (ember.int64, torch.int64),
    (ember.float16, torch.float16), (ember.bfloat16, torch.bfloat16),
    (ember.float32, torch.float32), (ember.float64, torch.float64),
    (ember.complex64, torch.complex64), (ember.complex128, torch.complex128),
]
# (the wide unsigned types only as results, e.g. hash_tensor's uint64: not swept as inputs)
WIDE_UNSIGNED_PAIRS = [(ember.uint16, torch.uint16), (ember.uint32, torch.uint32),
                       (ember.uint64, torch.uint64)]
E2T = {e: t for e, t in DTYPE_PAIRS + WIDE_UNSIGNED_PAIRS}
T2E = {t: e for e, t in DTYPE_PAIRS + WIDE_UNSIGNED_PAIRS}
FLOAT_DTYPES = [ember.float16, ember.bfloat16, ember.float32, ember.float64]

# Tolerances by dtype for value comparisons against torch.
TOL = {
    ember.float16: (1e-3, 1e-3), ember.bfloat16: (1e-2, 1e-2), ember.float32: (1e-5, 1e-6),
    ember.float64: (1e-10, 1e-12), ember.complex64: (1e-5, 1e-6),
    ember.complex128: (1e-10, 1e-12),
}


def to_numpy_t(t: torch.Tensor) -> np.ndarray:
    t = t.detach().resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def to_torch(e: ember.Tensor, requires_grad: bool | None = None) -> torch.Tensor:
    """A torch tensor with ember tensor `e`'s values and dtype (contiguous copy)."""
    a = np.array(e.detach().numpy(), order="C")  # (ascontiguousarray would make 0-d 1-d)
    if e.dtype is ember.bfloat16:
        t = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a.copy())
    if requires_grad if requires_grad is not None else e.requires_grad:
        t.requires_grad_(True)
    return t


def to_ember(t: torch.Tensor, requires_grad: bool | None = None) -> ember.Tensor:
    e = ember.tensor(to_numpy_t(t))
    if requires_grad if requires_grad is not None else t.requires_grad:
        e.requires_grad_(True)
    return e


def assert_same(e, t, rtol: float | None = None, atol: float | None = None, *,
                check_dtype: bool = True, check_stride: bool = False, equal_nan: bool = True):
    """ember result `e` equals torch result `t`: type, shape, dtype, values (and strides)."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)), f"expected a sequence, got {type(e).__name__}"
        assert len(e) == len(t), f"length {len(e)} != {len(t)}"
        for a, b in zip(e, t):
            assert_same(a, b, rtol, atol, check_dtype=check_dtype, check_stride=check_stride)
        return
    if not isinstance(t, torch.Tensor):
        if isinstance(e, ember.Tensor):
            e = e.item()
        if isinstance(t, float) and not np.isnan(t):
            assert np.isclose(e, t, rtol=rtol or 1e-6, atol=atol or 1e-9), f"{e} != {t}"
        else:
            assert e == t or (e != e and t != t), f"{e!r} != {t!r}"
        return
    assert isinstance(e, ember.Tensor), f"expected an ember.Tensor, got {type(e).__name__}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    if check_dtype:
        assert E2T[e.dtype] == t.dtype, f"dtype {e.dtype} != {t.dtype}"
    if check_stride:
        assert e.stride() == t.stride(), f"stride {e.stride()} != {t.stride()}"
    if e.device.type == "meta":
        return
    a = e.detach().numpy()
    b = to_numpy_t(t)
    if a.dtype.kind in "fcV" or a.dtype == ml_dtypes.bfloat16:
        r, at = TOL.get(e.dtype, (1e-5, 1e-6))
        rtol = r if rtol is None else rtol
        atol = at if atol is None else atol
        np.testing.assert_allclose(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                                   b.astype(np.complex128 if b.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        np.testing.assert_array_equal(a, b)


def rand_array(shape, dtype=np.float32, low=-2.0, high=2.0, seed=0) -> np.ndarray:
    """Seeded test data of a NumPy dtype (ints in [low, high), bools half true)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def check_op(fn_e, fn_t, *arrays, grad: bool = True, rtol=None, atol=None, grad_rtol=None,
             grad_atol=None, check_stride: bool = False, seed: int = 1):
    """Run `fn_e` on ember tensors and `fn_t` on torch tensors made from `arrays`; compare
    outputs, then the gradients of each float input under one random cotangent."""
    def floaty(a):
        return isinstance(a, np.ndarray) and a.dtype.kind in "fc" or (
            isinstance(a, np.ndarray) and a.dtype == ml_dtypes.bfloat16)

    es, ts = [], []
    for a in arrays:
        if isinstance(a, np.ndarray):
            e = ember.tensor(a)
            t = to_torch(e)
            if grad and floaty(a):
                e.requires_grad_(True)
                t.requires_grad_(True)
            es.append(e)
            ts.append(t)
        else:
            es.append(a)
            ts.append(a)
    out_e = fn_e(*es)
    out_t = fn_t(*ts)
    assert_same(out_e, out_t, rtol, atol, check_stride=check_stride)
    if not grad:
        return out_e, out_t
    outs_e = out_e if isinstance(out_e, (tuple, list)) else (out_e,)
    outs_t = out_t if isinstance(out_t, (tuple, list)) else (out_t,)
    pairs = [(oe, ot) for oe, ot in zip(outs_e, outs_t)
             if isinstance(ot, torch.Tensor) and ot.requires_grad]
    if not pairs:
        return out_e, out_t
    rng = np.random.default_rng(seed)
    loss_e, loss_t = 0, 0
    for oe, ot in pairs:
        cot = rng.standard_normal(tuple(ot.shape))
        ce = ember.tensor(cot).to(oe.dtype)
        ct = to_torch(ce)
        loss_e = loss_e + (oe * ce).sum()
        loss_t = loss_t + (ot * ct).sum()
    if loss_e.dtype.is_complex:
        loss_e, loss_t = loss_e.real, loss_t.real
    loss_t.backward()
    loss_e.backward()
    for e, t in zip(es, ts):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if t.grad is None:
                assert e.grad is None or not e.grad.numpy().any()
                continue
            assert e.grad is not None, "ember produced no gradient where torch did"
            assert_same(e.grad, t.grad, grad_rtol if grad_rtol is not None else rtol,
                        grad_atol if grad_atol is not None else atol)
    return out_e, out_t


def numeric_grad(fn, arrays, i: int, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of sum(fn(...) * 1) with respect to arrays[i]."""
    # (C order: the perturbations go through a flat view, which any other layout would copy)
    base = [np.array(a, dtype=np.float64, order="C") for a in arrays]
    g = np.zeros_like(base[i])
    flat = base[i].reshape(-1)
    gflat = g.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        up = float(fn(*[ember.tensor(a) for a in base]).sum().item())
        flat[k] = old - eps
        down = float(fn(*[ember.tensor(a) for a in base]).sum().item())
        flat[k] = old
        gflat[k] = (up - down) / (2 * eps)
    return g


def check_grads(fn, *arrays, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7):
    """ember's gradient of sum(fn(*inputs)) equals finite differences, in float64."""
    ts = [ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    fn(*ts).sum().backward()
    for i, t in enumerate(ts):
        expected = numeric_grad(fn, arrays, i, eps)
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=rtol, atol=atol)


def check_double_backward(cases) -> None:
    """Each case `(label, fn, shape, same_name)`: for x of `shape` (float64, requiring grad),
    the gradient g of `(fn(M, x) * r).sum()` taken with create_graph=True in torch and in
    ember (`M` the module): whether g requires grad, its grad_fn's name (where `same_name`),
    its values, and the gradient of `(g * g).sum()` with respect to x (allow_unused: None in
    both, or the same values), the second order a gradient penalty takes."""
    rs = np.random.RandomState(0)
    for label, fn, shape, same_name in cases:
        a = rs.standard_normal(shape)
        got = []
        for M in (torch, ember):
            x = M.tensor(a, requires_grad=True)
            y = fn(M, x)
            r = M.tensor(np.random.RandomState(1).standard_normal(tuple(y.shape)))
            g, = M.autograd.grad((y * r).sum(), x, create_graph=True)
            name = None if g.grad_fn is None else type(g.grad_fn).__name__
            gg = M.autograd.grad((g * g).sum(), x, allow_unused=True)[0] \
                if g.requires_grad else "none needed"
            got.append((g.requires_grad, name, g.detach().numpy(),
                        gg if gg is None or isinstance(gg, str) else gg.detach().numpy()))
        (t_rg, t_name, t_g, t_gg), (e_rg, e_name, e_g, e_gg) = got
        assert e_rg == t_rg, label
        if same_name:
            assert e_name == t_name, label
        # (first order: the same sums in float64, in another order where a BLAS product runs)
        np.testing.assert_allclose(e_g, t_g, rtol=1e-10, atol=1e-12, err_msg=label)
        if t_gg is None or isinstance(t_gg, str):
            assert e_gg is None if t_gg is None else e_gg == t_gg, label
        else:
            assert isinstance(e_gg, np.ndarray), label
            np.testing.assert_allclose(e_gg, t_gg, rtol=1e-10, atol=1e-12, err_msg=label)


# --- comparisons that depend on the CPU (tests/README.md) ---------------------------------

_ULP_DTYPES = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)

# torch's AVX2 and AVX512 builds of an elementwise kernel fuse the same multiply-adds, on
# Intel and AMD alike (every machine the suite runs on has one of them); its default (scalar)
# build, ATEN_CPU_CAPABILITY=default, rounds twice. A comparison with such a kernel may be
# bitwise when this is True and needs its ulps when it is not.
TORCH_VECTOR_KERNELS = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


@pytest.fixture(params=["avx2", "default"])
def each_kernel_profile(request):
    """Runs a test under each of ember's kernel profiles (`ember.random.set_kernel_profile`)
    where torch runs that build on this CPU (the other is skipped): a module takes it with
    `pytestmark = pytest.mark.usefixtures("each_kernel_profile")` and imports it."""
    from ember.random import get_kernel_profile, set_kernel_profile

    if (request.param == "avx2") != TORCH_VECTOR_KERNELS:
        pytest.skip("torch runs the other build on this CPU")
    before = get_kernel_profile()
    set_kernel_profile(request.param)
    yield
    set_kernel_profile(before)


@functools.cache
def torch_sqrt_off(dtype: str) -> float:
    """The fraction of torch's vectorised sqrt results an ulp off IEEE's on this CPU: about
    0.2-0.7% of float32 on an Intel Xeon (Sapphire Rapids), 15% on an AMD EPYC (Zen 5). A
    test comparing an update through a square root bit for bit holds only where it is
    small."""
    x = torch.rand(100_000, generator=torch.Generator().manual_seed(1),
                   dtype=getattr(torch, dtype)) * 10
    return float((x.sqrt().numpy() != np.sqrt(x.numpy())).mean())


def _values(x) -> np.ndarray | None:
    """A tensor's or array's values as an array; None for a Python number or list."""
    if isinstance(x, ember.Tensor):
        return np.asarray(x.detach().numpy())
    if isinstance(x, torch.Tensor):
        return to_numpy_t(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    return None


def ulp_of(x, dtype) -> np.ndarray:
    """The gap between consecutive values of `dtype` in the binade of each |x| (float64);
    subnormals and zero get the smallest subnormal."""
    info = ml_dtypes.finfo(dtype)
    x = np.abs(np.asarray(x, dtype=np.float64))
    _, exp = np.frexp(x)  # x = m * 2**exp with m in [0.5, 1); zero gives exp 0
    exp = np.where(x == 0, info.minexp, np.maximum(exp - 1, info.minexp))
    return np.ldexp(1.0, exp - info.nmant)


def assert_ulp(actual, expected, ulps: float, reason: str, *, scale=None) -> None:
    """`actual` is within `ulps` units in the last place of `expected`, for a result whose last
    bits depend on the CPU (a BLAS product, a vectorised reduction, a transcendental, torch's
    linspace); `reason` names that dependence and is required. Dtypes and shapes must match
    (a Python number takes the other side's dtype); NaN, infinity and the sign of zero must
    agree position by position. The distance is |actual - expected| / ulp(expected); with
    `scale` (broadcast to the shape) it is measured in ulps of max(|expected|, |scale|), for
    a result that cancels (a sum is only as exact as its largest terms). Complex values are
    compared part by part."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("assert_ulp needs a reason: why this comparison cannot be bitwise")
    if not (ulps >= 0 and np.isfinite(ulps)):
        raise ValueError(f"ulps must be a finite number >= 0, got {ulps!r}")
    a, b = _values(actual), _values(expected)
    if a is None and b is None:
        a, b = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    elif a is None:
        a = np.asarray(actual, dtype=b.dtype)
    elif b is None:  # a literal in the test: rounded once to the result's dtype
        b = np.broadcast_to(np.asarray(expected, dtype=a.dtype), a.shape)
    assert a.dtype == b.dtype, f"dtype {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    if a.dtype.kind == "c":
        s = None if scale is None else np.abs(np.asarray(scale))
        for part in ("real", "imag"):
            assert_ulp(getattr(a, part), getattr(b, part), ulps, f"{reason} ({part} part)",
                       scale=s)
        return
    if a.dtype not in _ULP_DTYPES:
        raise TypeError(f"assert_ulp compares floating values, not {a.dtype}: "
                        "compare integers and booleans exactly")
    x, y = a.astype(np.float64), b.astype(np.float64)
    size = np.abs(y)
    if scale is not None:
        scale = np.broadcast_to(np.abs(np.asarray(scale, dtype=np.float64)), a.shape)
        if not np.isfinite(scale).all():
            raise ValueError("scale must be finite")
        size = np.maximum(size, scale)
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore", over="ignore"):
        dist = np.where(finite, np.abs(x - y) / ulp_of(np.where(finite, size, 0), a.dtype),
                        0.0)
    special = ~finite | ((x == 0) & (y == 0))  # must agree exactly, NaN with NaN
    same = (np.isnan(x) & np.isnan(y)) | ((x == y) & (np.signbit(x) == np.signbit(y)))
    dist = np.where(special & ~same, np.inf, dist)
    bad = dist > ulps
    if not bad.any():
        return
    worst = np.unravel_index(int(np.argmax(dist)), dist.shape) if dist.ndim else ()
    raise AssertionError(
        f"{int(bad.sum())} / {bad.size} elements more than {ulps:g} ulps apart "
        f"({a.dtype}); worst {dist[worst]:.3g} ulps at index {tuple(int(i) for i in worst)}: "
        f"actual {a[worst]!r}, expected {b[worst]!r}. Why a tolerance: {reason}")


# --- nn modules ---------------------------------------------------------------------------

def copy_module_state(e_mod, t_mod) -> None:
    """Give ember module `e_mod` the parameters and buffers of torch module `t_mod`."""
    t_state = t_mod.state_dict()
    e_keys = list(e_mod.state_dict().keys())
    assert e_keys == list(t_state.keys()), f"state_dict keys {e_keys} != {list(t_state)}"
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_state.items()})


def check_module(e_mod, t_mod, *arrays, rtol=None, atol=None, grad_rtol=None, grad_atol=None,
                 seed: int = 1, copy: bool = True, wrap=None):
    """Run ember and torch modules on the same inputs (weights copied from torch); compare
    outputs, then input and parameter gradients under one random cotangent. `wrap(module)`
    may adapt the call (e.g. to pass a tuple of states)."""
    if copy:
        copy_module_state(e_mod, t_mod)
    wrap = wrap or (lambda m: m)
    out_e, out_t = check_op(wrap(e_mod), wrap(t_mod), *arrays, rtol=rtol, atol=atol,
                            grad_rtol=grad_rtol, grad_atol=grad_atol, seed=seed)
    t_params = dict(t_mod.named_parameters())
    for name, p in e_mod.named_parameters():
        tp = t_params[name]
        if tp.grad is None:
            assert p.grad is None or not p.grad.numpy().any(), f"{name}: unexpected grad"
            continue
        assert p.grad is not None, f"{name}: ember produced no gradient"
        assert_same(p.grad, tp.grad, grad_rtol if grad_rtol is not None else rtol,
                    grad_atol if grad_atol is not None else atol)
    t_bufs = dict(t_mod.named_buffers())
    for name, b in e_mod.named_buffers():
        assert_same(b, t_bufs[name], rtol, atol)
    return out_e, out_t


# --- one call in both libraries (the fuzzer's reproducers, as tests) ----------------------

def same_error(call) -> type:
    """`call(L)` raises in torch, and ember (`L=ember`) raises the same exception type."""
    try:
        call(torch)
    except Exception as exc:  # noqa: BLE001 - any torch error must be ember's error type too
        expected = type(exc)
    else:
        raise AssertionError("torch did not raise")
    try:
        call(ember)
    except Exception as exc:  # noqa: BLE001
        assert type(exc) is expected, f"ember raised {type(exc).__name__}: {exc}; torch " \
                                      f"raised {expected.__name__}"
        return expected
    raise AssertionError(f"ember returned; torch raised {expected.__name__}")


def same_message(call, kind: type = RuntimeError) -> str:
    """`call(L)` raises `kind` in both libraries with the same message; that message."""
    msgs = []
    for lib in (ember, torch):
        try:
            call(lib)
        except kind as exc:
            msgs.append(str(exc))
        else:
            raise AssertionError(f"{lib.__name__} did not raise {kind.__name__}")
    assert msgs[0] == msgs[1], msgs
    return msgs[0]


def same_messages(calls, kind: type = RuntimeError) -> None:
    """`calls(L)` yields (name, call) pairs; each call raises `kind` in both libraries with
    the same message."""
    for (name, got), (_, want) in zip(calls(ember), calls(torch), strict=True):
        msgs = []
        for call in (got, want):
            with pytest.raises(kind) as info:
                call()
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1], (name, msgs)


def raised(call, *args, quiet: bool = False):
    """`(exception type, message)` of `call(*args)`, or None where it returns: what two
    libraries' refusals are compared by. `quiet`: warnings are not shown."""
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        try:
            call(*args)
        except Exception as exc:  # noqa: BLE001 - the exception itself is what is compared
            return type(exc), str(exc)
    return None


def refusals_unlike_torch(refusals: dict) -> list[str]:
    """The calls of `refusals` (name -> call(L)) that ember refuses otherwise than torch
    (each must be one torch refuses): exception type and message, an "invalid combination"
    message to its first line (ember may list fewer overloads after it)."""
    def refusal(call, L):
        out = raised(call, L, quiet=True)
        if out is not None and "received an invalid combination" in out[1]:
            out = (out[0], out[1].split("\n")[0])
        return out

    wrong = []
    for name, call in refusals.items():
        e, t = refusal(call, ember), refusal(call, torch)
        assert t is not None, f"{name}: torch takes it"
        if e != t:
            wrong.append(f"{name}: torch {t}, ember {e}")
    return wrong


def same_result(call, rtol=None, atol=None):
    """`call(L)` gives the same result (type, shape, dtype, values) in ember and torch."""
    out_e = call(ember)
    assert_same(out_e, call(torch), rtol, atol)
    return out_e


# --- distributions ------------------------------------------------------------------------

def _dist_call(D, L, make, what, params, seed):
    d = make(D, *params)
    if isinstance(what, str):
        r = getattr(d, what)
        return r() if callable(r) else r
    name, *args = what
    L.manual_seed(seed)
    args = [L.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(d, name)(*args)


def check_dist(make, attrs, *arrays, seed: int = 0, **tol):
    """`make(D, *params)` builds a distribution from `D` (ember.distributions or
    torch.distributions); each entry of `attrs` (a property or no-argument method name, or
    `(method, *args)` with NumPy arrays for tensors) is compared with check_op, gradients
    of the float parameters included. Both generators are seeded alike before a call, so
    samples compare as values."""
    for what in attrs:
        check_op(lambda *p, w=what: _dist_call(ember.distributions, ember, make, w, p, seed),
                 lambda *p, w=what: _dist_call(torch.distributions, torch, make, w, p, seed),
                 *arrays, **tol)


# --- data reads ---------------------------------------------------------------------------

@contextmanager
def no_data_reads():
    """Within the block, only `bind`'s eager kernel paths may read a tensor's data: any
    other `_array()`, `item()`,
    `tolist()` or `bool()` raises AssertionError (to show that a rule or a wrapper works
    from metadata alone)."""
    from ember import _tensor
    from ember._core import dispatch
    from ember.ops import registry

    cls = _tensor.Tensor
    saved = {name: getattr(cls, name) for name in ("_array", "item", "tolist", "__bool__")}

    def guard(name):
        real = saved[name]

        def read(self, *args, **kwargs):
            code = sys._getframe(1).f_code  # eager evaluation: bind's kernel paths
            if code.co_filename != dispatch.__file__ and not (
                    code.co_filename == registry.__file__ and code.co_name.startswith("_eval")):
                raise AssertionError(f"Tensor.{name}() read data outside a kernel")
            return real(self, *args, **kwargs)
        return read

    for name in saved:
        setattr(cls, name, guard(name))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(cls, name, fn)


def graph_outline(t, depth: int) -> list:
    """(depth, node name, number of edges) of `t`'s graph, depth first, `depth` levels."""
    out, stack = [], [(t.grad_fn, depth)]
    while stack:
        fn, d = stack.pop()
        if fn is None or d == 0:
            continue
        out.append((d, type(fn).__name__.replace("torch::autograd::", ""),
                    len(fn.next_functions)))
        stack.extend((f, d - 1) for f, _ in reversed(fn.next_functions))
    return out


def gradient_killer(lib):
    """A custom Function of `lib` that passes its input through and whose backward returns
    None: the gradient behind it never arrives (engine and hook tests of that case)."""
    class Kill(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    return Kill
