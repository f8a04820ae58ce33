"""mx.linalg's inverses and solvers on singular (and NaN) matrices, against MLX 0.32.4.

MLX's CPU kernels give the row-major buffer to LAPACK, so `inv` reports getrf's `info` for
A^T, and `tri_inv`, `solve_triangular` and `solve` (through its LU's U) report trtri's: the
first exactly-zero diagonal element. The outcomes compare as exception type and message;
the non-raising results compare as `tolist()` (exact: pivots and reciprocals of small
integers, or NaN, which `tolist` shows on both sides)."""

import functools
import json
import math
import os

import pytest

import ember.mlx.core as mx
from fresh_process import with_server
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

# MLX's side runs in a forked child with a time limit: a LAPACK failure raised inside MLX's
# CPU stream can leave its evaluation waiting for ever (seen in full runs under load), which
# must not hang the suite. One child computes the cases of this file in turn, printing each
# outcome as it comes (a child per case cost a quarter of a second each); a case that does
# not finish is left to a child of its own (`_mlx_outcome`), and the rest go on in a new one.
_MLX_SIDE = """
import json, os, sys
sys.path.insert(0, {tests!r})
import mlx.core as mx
from mlx_oracle import outcome
show = lambda r: r if isinstance(r, list) else r.tolist()
for expr, setup in {cases!r}:
    print(json.dumps(outcome(expr, mx, setup, show)), flush=True)
os._exit(0)  # (after a failed LU, MLX's CPU stream can keep the interpreter from exiting)
"""


def _mlx_run(cases: list, timeout: int):
    tests = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return with_server("mlx.core").run_code(
        _MLX_SIDE.format(tests=tests, cases=cases), timeout=timeout)


@functools.cache
def _mlx_all() -> dict:
    """MLX's outcome of every case in this file that finished in a shared child."""
    done, todo = {}, list(ALL_CASES)
    while todo:
        # (the whole file's cases take 0.2 s; a child still running at 8 s is the hang)
        got = _mlx_run(todo, timeout=8)
        lines = got.stdout.splitlines()
        done.update((case, tuple(json.loads(line))) for case, line in zip(todo, lines))
        if got.returncode == 0:
            break
        todo = todo[len(lines) + 1:]  # (past the case that did not finish)
    return done


def _mlx_outcome(expr: str, setup: str) -> tuple:
    if (expr, setup) in _mlx_all():
        return _mlx_all()[(expr, setup)]
    got = _mlx_run([(expr, setup)], timeout=15)
    if got.returncode != 0:
        pytest.skip(f"MLX itself did not finish {expr} (exit {got.returncode}): "
                    f"{got.stderr[-200:]}")
    kind, value = json.loads(got.stdout)
    return kind, value

SINGULAR = [
    [[1.0, 2.0], [2.0, 4.0]],
    [[0.0, 1.0], [0.0, 1.0]],           # A's first column is zero, A^T's is not
    [[0.0, 0.0], [1.0, 1.0]],
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
    [[1.0, 2.0, 3.0], [1.0, 0.0, 1.0], [2.0, 4.0, 6.0]],
    [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 2.0]],
    [[0.0, 0.0], [0.0, 0.0]],
]

CALLS = [
    "mx.linalg.inv(m, stream=mx.cpu)",
    "mx.linalg.inv(m.astype(mx.float64), stream=mx.cpu)",
    "mx.linalg.inv(mx.stack([mx.eye(m.shape[0]), m]), stream=mx.cpu)",
    "mx.linalg.tri_inv(m, stream=mx.cpu)",
    "mx.linalg.tri_inv(m, upper=True, stream=mx.cpu)",
    "mx.linalg.solve(m, mx.ones(m.shape[0]), stream=mx.cpu)",
    "mx.linalg.solve(m, mx.eye(m.shape[0]), stream=mx.cpu)",
    "mx.linalg.solve_triangular(m, mx.ones(m.shape[0]), upper=True, stream=mx.cpu)",
    "mx.linalg.solve_triangular(m, mx.ones(m.shape[0]), stream=mx.cpu)",
    "mx.linalg.cholesky_inv(m, stream=mx.cpu)",
]


def _flat(v) -> list:
    return [y for x in v for y in _flat(x)] if isinstance(v, list) else [v]


def _same(expr: str, setup: str) -> None:
    show = lambda r: r if isinstance(r, list) else r.tolist()  # noqa: E731
    ours, theirs = outcome(expr, mx, setup, show), _mlx_outcome(expr, setup)
    assert theirs[0] in ("ok", "RuntimeError", "ValueError"), theirs
    if ours[0] == theirs[0] == "ok":
        # NOTE: signed zeros inside tri_inv's triangle differ (trtri's -0.0 from scaling a
        # zero sum), so values compare as numbers, not as text
        assert len(_flat(ours[1])) == len(_flat(theirs[1])), expr
        for x, y in zip(_flat(ours[1]), _flat(theirs[1])):
            assert x == y or (math.isnan(x) and math.isnan(y)), (expr, ours, theirs)
    else:
        assert ours == theirs, expr


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("matrix", SINGULAR, ids=str)
def test_singular_matrices_fail_as_mlx_does(call, matrix):
    _same(call, f"m = mx.array({matrix})")


NAN_AND_REGULAR = [
    "mx.linalg.inv(mx.array([[float('nan'), 1.0], [1.0, 1.0]]), stream=mx.cpu)",
    "mx.linalg.inv(mx.stack([mx.eye(2), mx.array([[float('nan'), 1.0], [1.0, 1.0]])]),"
    " stream=mx.cpu)",
    "mx.linalg.inv(mx.array([[2.0, 0.0], [0.0, 4.0]]), stream=mx.cpu)",
    "mx.linalg.tri_inv(mx.array([[2.0, 0.0], [1.0, 4.0]]), stream=mx.cpu)",
    "mx.linalg.solve(mx.array([[2.0, 1.0], [0.0, 4.0]]), mx.array([1.0, 2.0]), stream=mx.cpu)",
]


@pytest.mark.parametrize("expr", NAN_AND_REGULAR)
def test_nan_and_regular_matrices(expr):
    _same(expr, "")


def test_inverse_inside_vmap_still_inverts():
    # no values to check inside a vmap: the regular batch inverts as it does outside
    a = mx.array([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 1.0], [0.0, 1.0]]])
    got = mx.vmap(lambda m: mx.linalg.inv(m, stream=mx.cpu))(a)
    assert got.tolist() == [[[0.5, 0.0], [0.0, 0.25]], [[1.0, -1.0], [0.0, 1.0]]]


VMAPPED = [
    "mx.linalg.tri_inv(m, stream=mx.cpu)",
    "mx.linalg.tri_inv(m, upper=True, stream=mx.cpu)",
    "mx.linalg.solve_triangular(m, mx.ones(2), upper=True, stream=mx.cpu)",
    "mx.linalg.cholesky_inv(m, stream=mx.cpu)",
    "mx.linalg.inv(m, stream=mx.cpu)",
    "mx.linalg.solve(m, mx.ones(2), stream=mx.cpu)",
    "mx.linalg.lu(m, stream=mx.cpu)",
    "mx.linalg.lu_factor(m, stream=mx.cpu)",
    "mx.linalg.qr(m, stream=mx.cpu)",
    "mx.linalg.cholesky(m, stream=mx.cpu)",
    "mx.linalg.svd(m, compute_uv=False, stream=mx.cpu)",
]
BATCHES = {
    "regular": "[[[2.0, 1.0], [1.0, 3.0]], [[4.0, 1.0], [1.0, 2.0]]]",
    "singular": "[[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]]",
    "zero diagonal": "[[[2.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [1.0, 1.0]]]",
}


@pytest.mark.parametrize("in_axes", [0, 2])
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("call", VMAPPED)
def test_vmapped_over_the_matrix_as_mlx(call, batch, in_axes):
    # MLX 0.32.4 has no vmap rule for QR / LU (solve too), and its Inverse rule drops the
    # triangular flag: tri_inv and what uses it invert the whole matrix under vmap
    _same(*_vmapped(call, batch, in_axes))


def _vmapped(call: str, batch: str, in_axes: int) -> tuple[str, str]:
    setup = (f"b = mx.array({BATCHES[batch]}); b = mx.moveaxis(b, 0, {in_axes});"
             f"fn = lambda m: {call};"
             "flat = lambda r: [flat(x) for x in r] if isinstance(r, (list, tuple)) "
             "else mx.round(r.astype(mx.float32), 4).tolist()")
    return f"flat(mx.vmap(fn, in_axes={in_axes})(b))", setup


# the outer vmapped axis first, then the inner one: MLX's kernel sees the whole stack
NESTED = ("fn(b)", "b = mx.stack([mx.stack([mx.eye(2), mx.array([[0.0, 1.0], [0.0, 1.0]])]),"
          " mx.stack([mx.zeros((2, 2)), mx.eye(2)])]);"
          "fn = mx.vmap(mx.vmap(lambda m: mx.linalg.inv(m, stream=mx.cpu)), in_axes=1)")


def test_nested_vmap_reports_the_first_failing_matrix():
    _same(*NESTED)


ALL_CASES = ([(call, f"m = mx.array({m})") for m in SINGULAR for call in CALLS]
             + [(expr, "") for expr in NAN_AND_REGULAR]
             + [_vmapped(c, b, a) for c in VMAPPED for b in BATCHES for a in (0, 2)]
             + [NESTED])
