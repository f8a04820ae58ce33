"""The differential fuzzer (`python -m fuzz`) on a bounded, seeded slice: no crash or hang,
and every difference from torch is one listed, with its reason, in
fuzz/KNOWN_DIFFERENCES.toml. The fuzzer's own machinery is checked on hand-made cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from fuzz import known  # noqa: E402
from fuzz.catalogue import Case  # noqa: E402
from fuzz.inputs import Lit, Tensor  # noqa: E402
from fuzz.run import format_report, reproduce, run  # noqa: E402
from fuzz.runner import run_case  # noqa: E402
from fuzz.table import OPS, make_case  # noqa: E402

import ember  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzz_slice_has_only_known_differences(seed):
    res = run(3000, seed)
    assert not res.failures(), format_report(res)
    assert res.counts["equal"] > res.n // 2  # the slice really compares results


def _case(expr: str, **args) -> Case:
    return Case(0, 0, "t", "fn", args, expr, set())


def test_classifies_equal_same_exception_and_different():
    a = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), "float32")
    assert run_case(_case("a.sum(0)", a=a), ember, torch).cls == "equal"
    out = run_case(_case("a.sum(5)", a=a), ember, torch)
    assert (out.cls, out.detail) == ("same-exception", "IndexError")
    # A different dtype is a difference even with equal values.
    expr = "a.sum(0) if L.__name__ == 'ember' else a.sum(0).double()"
    out = run_case(_case(expr, a=a), ember, torch)
    assert out.cls == "different" and "dtype" in out.detail


def test_an_internal_ember_error_is_a_crash():
    a = Tensor(np.zeros(3, np.float32), "float32")
    out = run_case(_case("a.sum() if L.__name__ == 'torch' else {}['missing']", a=a), ember, torch)
    assert out.cls == "crash" and "KeyError" in out.detail


def test_a_call_over_the_time_limit_is_a_hang():
    out = run_case(_case("a if L.__name__ == 'torch' else __import__('time').sleep(5)", a=Lit(1)),
                   ember, torch, timeout=0.2)
    assert out.cls == "hang"


def test_nan_positions_must_match():
    a = Tensor(np.array([1.0, np.nan], np.float64), "float64")
    out = run_case(_case("a if L.__name__ == 'torch' else a.nan_to_num()", a=a), ember, torch)
    assert out.cls == "different" and "NaN" in out.detail


def test_cases_rebuild_alone_from_seed_and_index(capsys):
    first, again = make_case(3, 41), make_case(3, 41)
    assert first.expr == again.expr and first.code() == again.code()
    text = reproduce("3:41")
    assert text.startswith("# case 3:41") and first.code() in text
    # The emitted snippet runs as it stands and prints the result of both libraries.
    case = next(c for c in (make_case(3, i) for i in range(100))
                if run_case(c, ember, torch).cls == "equal")
    exec(compile(case.code(), "<repro>", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ember ") and any(x.startswith("torch ") for x in lines)


def test_every_known_entry_has_a_bucket_and_a_reason():
    entries = known.load()
    assert entries and len({e.id for e in entries}) == len(entries)
    assert all(e.bucket in known.BUCKETS and e.reason for e in entries)


def test_every_catalogue_row_builds_its_cases():
    # Each row's family draws valid arguments for each of its call forms (good and bad).
    for op in OPS:
        forms = {make_case(7, i, [op]).form for i in range(12)}
        assert forms, op.name
    names = {op.name for op in OPS}
    for expected in ("special.zeta", "polygamma", "atleast_2d", "cov", "scatter_reduce",
                     "index_copy", "t_", "as_strided_", "getitem_keys", "unravel_index"):
        assert expected in names
