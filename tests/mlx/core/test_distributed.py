"""`mx.distributed` against what MLX 0.32.4's CPU wheel reports to a plain process: the
backends' availability, a group of one, collectives that return their input (values,
dtypes, gradients), and the errors of point-to-point calls and strict initialisation;
then the collectives across processes started by ember's launcher and by mpiexec."""

import os

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")


def _both(call):
    """`call(m)` on both sides: its result, or the exception's type and message."""
    out = []
    for m in (mx, mlx):
        try:
            out.append(call(m))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            out.append((type(e), str(e)))
    return out


@pytest.mark.parametrize("backend", ["any", "ring", "mpi", "nccl", "jaccl", "bogus"])
def test_availability_matches_the_cpu_wheel(backend):
    ours, theirs = _both(lambda m: m.distributed.is_available(backend))
    assert ours == theirs
    assert mx.distributed.is_available() is mlx.distributed.is_available() is True


def test_init_gives_a_group_of_one():
    for m in (mx, mlx):
        for kwargs in [{}, {"backend": "ring"}, {"backend": "nccl"}]:
            group = m.distributed.init(**kwargs)
            assert (group.rank(), group.size()) == (0, 1)
            assert type(group).__name__ == "Group"
            assert type(group).__module__ == "mlx.core.distributed"


@pytest.mark.parametrize("call", [
    lambda m: m.distributed.init(strict=True),
    lambda m: m.distributed.init(backend="mpi", strict=True),
    lambda m: m.distributed.init(backend="nccl", strict=True),
    lambda m: m.distributed.init(backend="jaccl", strict=True),
    lambda m: m.distributed.init(backend="bogus"),
    lambda m: m.distributed.init().split(0),
    lambda m: m.distributed.Group(),
    lambda m: m.distributed.send(m.ones(2), 0),
    lambda m: m.distributed.recv((2,), m.float32, 0),
    lambda m: m.distributed.recv_like(m.ones(2), 0),
    lambda m: m.distributed.all_sum([1, 2]),
])
def test_errors_match_mlx(call):
    ours, theirs = _both(call)
    assert isinstance(theirs, tuple) and issubclass(theirs[0], Exception)
    assert ours == theirs


def test_strict_ring_init_names_the_missing_environment(monkeypatch):
    monkeypatch.delenv("MLX_RANK", raising=False)
    monkeypatch.delenv("MLX_HOSTFILE", raising=False)
    ours, theirs = _both(lambda m: m.distributed.init(backend="ring", strict=True))
    assert ours == theirs


@pytest.mark.parametrize("name", ["all_sum", "all_max", "all_min", "all_gather",
                                  "sum_scatter"])
def test_collectives_of_a_group_of_one_return_their_input(name):
    x = np.arange(6, dtype=np.int8).reshape(3, 2)
    for value in (x, x.astype(np.float32), np.float32(2.5)):
        ours = getattr(mx.distributed, name)(mx.array(value), group=mx.distributed.init())
        theirs = getattr(mlx.distributed, name)(mlx.array(value), stream=mlx.cpu)
        assert repr(ours) == repr(theirs)
    assert repr(getattr(mx.distributed, name)(3)) == repr(getattr(mlx.distributed, name)(3))

    def grad(m):
        fn = getattr(m.distributed, name)
        return m.grad(lambda v: (fn(v) * m.array([1.0, -2.0])).sum())(m.array([0.5, 1.5]))

    assert repr(grad(mx)) == repr(grad(mlx))


def test_average_gradients_of_a_group_of_one_is_the_identity():
    import ember.mlx.nn as nn

    mlx_nn = pytest.importorskip("mlx.nn")
    tree = {"w": [np.ones((2, 2), np.float32)], "b": np.arange(3, dtype=np.float16)}
    ours = nn.average_gradients({"w": [mx.array(tree["w"][0])], "b": mx.array(tree["b"])},
                                all_reduce_size=0)
    theirs = mlx_nn.average_gradients({"w": [mlx.array(tree["w"][0])],
                                       "b": mlx.array(tree["b"])}, all_reduce_size=0)
    assert repr(ours) == repr(theirs)
    for m, nn_ in ((mx, nn), (mlx, mlx_nn)):
        grads = {"a": m.ones(3)}
        assert nn_.average_gradients(grads) is grads  # the same tree object back


# -- several processes -----------------------------------------------------------------------
# The program below runs on every process of a launch and checks each collective against
# values worked out by hand from the ranks (see its docstring); it prints one line a rank.

PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "mlx_distributed.py")


def _ranks_ok(out, n):
    assert out.returncode == 0, out.stdout + out.stderr
    lines = sorted(line for line in out.stdout.splitlines() if line.endswith(" ok"))
    assert lines == [f"rank {r} of {n} ok" for r in range(n)], out.stdout + out.stderr


def test_collectives_on_three_processes_started_by_embers_launcher():
    pytest.importorskip("mpi4py")
    from distributed.conftest import _launch  # (tests/distributed's way of starting programs)

    _ranks_ok(_launch(PROGRAM, 3, timeout=60), 3)


def test_collectives_on_two_processes_started_by_mpiexec():
    pytest.importorskip("mpi4py")
    from distributed.conftest import _mpiexec

    _ranks_ok(_mpiexec(PROGRAM, 2, timeout=60), 2)
